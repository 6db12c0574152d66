// The op table: one row per ONNX op type (default domain), kept beside its importer at the end of
// the ops_*.cpp file that imports it (kNnOps, kShapeOps, kIndexOps, kByFieldsOps, kDetectionOps,
// importer.h); this file joins those lists, in that order, into the lookup table, the list of op
// types that take integer tensors and docs/onnx.md's op table. Adding an op is its function and
// one row in the same ops_*.cpp file (a row naming a function the file does not define fails to
// compile), or nothing here for an op imported by field name (ops_by_fields.cpp: its rows are
// generated from schema/model.fbs's jet_onnx attributes).
//
// A row {"Name", since, fn, ints, "IR", "notes"}:
//   fn     Status fn(Importer& im); an activation without attributes is
//          import_activation<ActivationMode::MODE> (importer.h; constant inputs fold through the
//          same formula)
//   since  the first opset that has the op; version-specific behaviour (attributes that became
//          inputs, changed defaults) is handled inside the functions by Importer::opset
//   ints   the importer takes computed integer and bool tensors (IR ops TRANSFORM, SLICE, CONCAT,
//          RESHAPE, LOGIC, WHERE, ARG_REDUCE, ..., or relabellings); a node of any other op type
//          reading one is unsupported (model.cpp's walk), never computed as floats
//   IR, notes  the op's row of docs/onnx.md's op table (what it becomes; attributes, limits, what
//          is unsupported), which tests/runtime/test_op_tables.cpp generates from the rows
//          (JET_UPDATE_DOCS=1 rewrites it). IR "" (and notes "") puts the op in the doc row of
//          the row above: related ops share one row, so a file's rows are in the doc's order.
#include "importer.h"

namespace jet {
namespace onnx_import {

namespace {

// The files' lists, in docs/onnx.md's order.
const OpList* const kLists[] = {&kNnOps, &kShapeOps, &kIndexOps, &kByFieldsOps, &kDetectionOps};

}  // namespace

const OpEntry* find_op(const std::string& op_type) {
  for (const OpList* list : kLists) {
    for (size_t i = 0; i < list->count; ++i) {
      if (op_type == list->rows[i].op_type) return &list->rows[i];
    }
  }
  return nullptr;
}

bool op_takes_integer_tensors(const std::string& op_type) {
  const OpEntry* e = find_op(op_type);
  return e && e->ints;
}

}  // namespace onnx_import

std::vector<OnnxOpInfo> onnx_op_table() {
  std::vector<OnnxOpInfo> table;
  for (const onnx_import::OpList* list : onnx_import::kLists) {
    for (size_t i = 0; i < list->count; ++i) {
      const onnx_import::OpEntry& e = list->rows[i];
      table.push_back({e.op_type, static_cast<int>(e.since), e.ints, e.ir, e.notes});
    }
  }
  return table;
}

}  // namespace jet
