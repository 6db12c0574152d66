// The ONNX importer: an ONNX model (file or bytes) -> the converter's graph IR (ir.h).
//
//   jet::ImportOptions opt;
//   opt.input_shapes["images"] = {1, 3, 224, 224};   // needed for dynamic dims ("N", "height")
//   jet::ir::Graph g;
//   jet::ImportReport report;
//   jet::Status st = jet::import_onnx_file("model.onnx", opt, &g, &report);
//   if (st.code() == jet::StatusCode::NOT_SUPPORTED) {
//     for (const auto& u : report.unsupported) ...     // every unsupported op of the model
//   }
//   // then the passes (passes.h) and the writer (write_model.h)
//
// Parsing goes through the protobuf classes of Debian's libonnx-dev; this header includes none of
// them, so users of the API need no protobuf headers. Built only when ONNX and protobuf are found
// (JET_HAVE_ONNX_IMPORT is defined then); see docs/onnx.md for the op table and opsets.
//
// What the importer does:
//  - opsets 6..21 of the default domain ("" / "ai.onnx"); other versions are an error;
//  - weights from initializers (raw_data or the typed fields; external data files beside the
//    model), from Constant nodes, and graph inputs that are initializers become constants;
//  - dynamic input dims (dim_param or no dim_value) take ImportOptions::input_shapes; without
//    one, the error names every input and its dynamic dims;
//  - shape subgraphs (Shape, Gather, Unsqueeze, Concat, Slice, Cast, Range, ConstantOfShape,
//    arithmetic, ...) whose inputs are all known are evaluated at import time on an importer-side
//    constant table (integers as exact int64), so Reshape and friends see constant inputs;
//  - every other node maps to IR ops through the kernels' shape formulas (ir::Graph builders).
//
// Errors: a malformed model (truncated or garbage bytes, a node reading a tensor nobody produces,
// an attribute of the wrong type, an initializer whose data does not match its dims, ...) gives
// BAD_PARAM (or INVALID_VALUE) naming the problem and the node or tensor. Unsupported ops do not
// stop the walk: every one is collected in ImportReport::unsupported and the result is
// NOT_SUPPORTED with a message listing all of them. On any error *out is left empty: never a
// partial graph. Nothing throws or aborts (exceptions from libonnx are caught at the boundary).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir.h"

namespace jet {

struct ImportOptions {
  // Shapes for graph inputs with dynamic dims (--input-shape NAME=1x3x224x224). A shape must have
  // the input's rank and agree with its static dims; naming an input the model lacks is an error.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Adds one note per ONNX node to the report: what it became (IR ops, folded, removed).
  bool verbose = false;
  // import_onnx_bytes only: the directory external data files are relative to. Empty: a model
  // with external data is an error. import_onnx_file uses the model file's directory.
  std::string external_data_dir;
  // jet-convert --outputs: the graph outputs become these tensors (ONNX value names) instead of
  // the model's, and only the nodes they depend on are imported (so unsupported post-processing
  // behind them does not matter). A name no node, initializer or graph input defines is
  // BAD_PARAM naming it.
  std::vector<std::string> outputs;
};

struct ImportReport {
  int64_t onnx_nodes = 0;
  std::vector<std::string> notes;     // folded, removed, ...
  std::vector<std::string> warnings;  // converted, but likely not what the model meant: a graph
                                      // output whose computed dims differ from its declared shape
  struct Unsupported {
    std::string op_type, node_name, domain;
    int64_t opset = 0;  // the model's opset for the node's domain (0 when it imports none)
    std::string reason;
  };
  std::vector<Unsupported> unsupported;
};

// Imports the model in `path`. *out gets the graph (replaced; empty on error); report may be null.
// The importer's op table (the rows at the end of converter/onnx/ops_*.cpp, joined by op_table.cpp),
// one entry per ONNX op type in its order.
// docs/onnx.md's op table is generated from it (tests/runtime/test_op_tables.cpp).
struct OnnxOpInfo {
  const char* op_type;
  int since;                 // the first opset that has the op
  bool integer_tensors;      // the importer takes computed integer and bool tensors for it
  const char* ir;            // what it becomes; "": the op shares the row of the entry before it
  const char* notes;         // attributes, limits, what is unsupported ("" with ir "")
};
std::vector<OnnxOpInfo> onnx_op_table();
// Checks the ops imported by field name (schema/model.fbs's jet_onnx attributes,
// converter/onnx/ops_by_fields.cpp) against ONNX's op schemas of every opset from the row's on:
// the first opset, one output, every attribute a field, every field an INT or FLOAT attribute or a
// non-variadic input, every other input required. INTERNAL_ERROR names the row and the problem.
Status check_onnx_ops_by_fields();

Status import_onnx_file(const std::string& path, const ImportOptions& options, ir::Graph* out,
                        ImportReport* report);

// The same from the bytes of a serialized ModelProto.
Status import_onnx_bytes(const void* data, size_t size, const ImportOptions& options,
                         ir::Graph* out, ImportReport* report);

}  // namespace jet
