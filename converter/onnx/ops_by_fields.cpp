// ONNX ops imported by field name, with no code of their own: the ops whose schema table in
// schema/model.fbs carries `jet_onnx: "OnnxOp, since"`, because the table's fields are exactly the
// op's attributes and constant inputs, named as ONNX names them (Trilu's upper and k, CumSum's
// axis, exclusive and reverse). The build writes their rows and one field reader per table
// (jet/schema/onnx_by_fields_generated.h, from schema/op_list.cmake); this file reads a node so:
//   - ONNX's own op schema (its registry in libonnx, at the model's opset) says what each field is:
//     an attribute (absent: the schema's default, else the table's), or an input (it must be a
//     constant holding one value; an absent optional input leaves the table's default);
//   - a field named `axis` may be negative, counted from the end of input 0's dims, as ONNX does;
//   - the op's other inputs, each required, are the IR node's inputs in order; its one output is the
//     node's output;
//   - an attribute that is not a field is unsupported, naming it (never ignored);
//   - the op's output rule (runtime/ops.cpp infer_output, run by Graph::add_op) checks the rest,
//     as it does for every op, naming the problem.
// An op that needs more (an attribute renamed or converted, two outputs, a computed input as a
// parameter) has a function of its own in an ops_*.cpp file instead. test_onnx_import.cpp checks
// every row against ONNX's schemas (check_onnx_ops_by_fields).
#include <onnx/defs/schema.h>

#include <algorithm>
#include <limits>
#include <set>

#include "importer.h"

namespace jet {
namespace onnx_import {

namespace {

// ONNX's schema of the op at `opset` (the latest version up to it), null when the op has none.
const onnx::OpSchema* onnx_schema(const char* op_type, int64_t opset) {
  const int64_t clamped = std::min<int64_t>(std::max<int64_t>(opset, 0), std::numeric_limits<int>::max());
  return onnx::OpSchemaRegistry::Schema(op_type, static_cast<int>(clamped), "");
}

// Index of ONNX input `name` in the op's schema, -1 when it has none of that name.
int schema_input(const onnx::OpSchema& schema, const std::string& name) {
  const auto& inputs = schema.inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].GetName() == name) return static_cast<int>(i);
  }
  return -1;
}

// A row's field list ("upper, k") as names.
std::vector<std::string> field_names(const std::string& fields) {
  std::vector<std::string> names;
  for (size_t at = 0; at < fields.size();) {
    const size_t end = std::min(fields.find(", ", at), fields.size());
    names.push_back(fields.substr(at, end - at));
    at = end + 2;
  }
  return names;
}

bool has_name(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

// Reads one node's fields for read_fields (below): read(name, &field) once per field of the table.
class FieldReader {
 public:
  FieldReader(Importer& im, const onnx::OpSchema& schema, const char* table)
      : im_(im), schema_(schema), table_(table) {}

  Status operator()(const char* name, bool* v) {
    int64_t i = *v ? 1 : 0;
    Status st = read_int(name, &i);
    *v = i != 0;
    return st;
  }
  Status operator()(const char* name, int32_t* v) {
    int64_t i = *v;
    Status st = read_int(name, &i);
    if (st.ok() && (i < std::numeric_limits<int32_t>::min() || i > std::numeric_limits<int32_t>::max())) {
      return im_.bad(std::string(name) + " " + std::to_string(i) + " is out of the range of a 32-bit integer");
    }
    *v = static_cast<int32_t>(i);
    return st;
  }
  Status operator()(const char* name, int64_t* v) { return read_int(name, v); }
  Status operator()(const char* name, float* v) { return read_float(name, v); }
  Status operator()(const char* name, double* v) {
    float f = static_cast<float>(*v);
    Status st = read_float(name, &f);
    if (st.ok()) *v = f;
    return st;
  }

  // After read_fields: the node's attributes that no field took.
  Status check_attributes_taken() const {
    for (const auto& a : im_.node->attribute()) {
      if (!attributes_taken_.count(a.name())) {
        return im_.unsupported("attribute '" + a.name() + "' is not supported (" + table_ + " has no field of that name)");
      }
    }
    return Status::success();
  }

 private:
  // The schema's attribute `name`, null when it has none.
  const onnx::OpSchema::Attribute* schema_attribute(const char* name) const {
    auto it = schema_.attributes().find(name);
    return it == schema_.attributes().end() ? nullptr : &it->second;
  }
  Status not_in_schema(const char* name) const {
    return Status(StatusCode::INTERNAL_ERROR, im_.node_label() + ": " + table_ + "'s field " + name +
                                                  " is neither an attribute nor an input of ONNX " +
                                                  schema_.Name() + " at opset " + std::to_string(im_.opset));
  }
  Status wrong_type(const char* name, const char* type) const {
    return Status(StatusCode::INTERNAL_ERROR, im_.node_label() + ": " + table_ + "'s field " + name +
                                                  " reads " + type + ", ONNX's attribute '" + name + "' is not one");
  }
  // Input `index` (a field): absent and optional: false (keep the table's default).
  Status field_input(int index, const char* name, bool* present) {
    *present = im_.has_input(index);
    if (*present) return Status::success();
    if (schema_.inputs()[index].GetOption() != onnx::OpSchema::Optional) return im_.require_input(index, name);
    return Status::success();
  }

  Status read_int(const char* name, int64_t* v) {
    Status st;
    if (const onnx::OpSchema::Attribute* a = schema_attribute(name)) {
      attributes_taken_.insert(name);
      if (a->type != onnx::AttributeProto::INT) return wrong_type(name, "an INT");
      if (im_.has_attr(name)) {
        st = im_.attr_int(name, 0, v);
      } else if (a->required) {
        return im_.bad("attribute '" + std::string(name) + "' is missing");
      } else if (a->default_value.has_i()) {
        *v = a->default_value.i();
      }
    } else {
      const int index = schema_input(schema_, name);
      if (index < 0) return not_in_schema(name);
      bool present = false;
      st = field_input(index, name, &present);
      if (st.ok() && present) {
        std::vector<int64_t> values;
        st = im_.ints_input(index, name, &values);
        if (st.ok() && values.size() != 1) {
          return im_.bad(std::string(name) + " has " + std::to_string(values.size()) + " elements, expected one");
        }
        if (st.ok()) *v = values[0];
      }
    }
    if (st.ok() && std::string(name) == "axis") {
      st = im_.normalize_axis(*v, static_cast<int64_t>(im_.input_dims(0).size()), "axis", v);
    }
    return st;
  }

  Status read_float(const char* name, float* v) {
    if (const onnx::OpSchema::Attribute* a = schema_attribute(name)) {
      attributes_taken_.insert(name);
      if (a->type != onnx::AttributeProto::FLOAT) return wrong_type(name, "a FLOAT");
      if (im_.has_attr(name)) return im_.attr_float(name, 0.f, v);
      if (a->required) return im_.bad("attribute '" + std::string(name) + "' is missing");
      if (a->default_value.has_f()) *v = a->default_value.f();
      return Status::success();
    }
    const int index = schema_input(schema_, name);
    if (index < 0) return not_in_schema(name);
    bool present = false;
    Status st = field_input(index, name, &present);
    if (st.ok() && present) st = im_.float_scalar_input(index, name, v);
    return st;
  }

  Importer& im_;
  const onnx::OpSchema& schema_;
  std::string table_;
  std::set<std::string> attributes_taken_;
};

}  // namespace onnx_import
}  // namespace jet

// The rows and read_fields(FieldReader&, fb::<Table>T*), one per table with jet_onnx.
#include "jet/schema/onnx_by_fields_generated.h"

namespace jet {
namespace onnx_import {

namespace {

// Imports a node of the ONNX op whose fields are those of Params, `table` in model.fbs, listed in
// `fields` ("upper, k"; see the top of the file).
template <class Params>
Status import_by_fields(Importer& im, const char* table, const std::string& fields) {
  const onnx::OpSchema* schema = onnx_schema(im.node->op_type().c_str(), im.opset);
  if (!schema) return im.unsupported("ONNX has no schema of this op at opset " + std::to_string(im.opset));
  const auto& schema_inputs = schema->inputs();
  if (im.input_count() > static_cast<int>(schema_inputs.size())) {
    return im.bad("has " + std::to_string(im.input_count()) + " inputs, ONNX's " + schema->Name() + " takes at most " +
                  std::to_string(schema_inputs.size()));
  }
  // The inputs that are not fields are the node's tensors; they must be there before the fields
  // are read (an axis is counted against input 0's dims).
  const std::vector<std::string> names = field_names(fields);
  std::vector<bool> is_field(schema_inputs.size());
  Status st;
  for (size_t i = 0; i < schema_inputs.size() && st.ok(); ++i) {
    const std::string& name = schema_inputs[i].GetName();
    is_field[i] = has_name(names, name);
    if (!is_field[i]) st = im.require_input(static_cast<int>(i), name.c_str());
  }
  FieldReader read(im, *schema, table);
  Params params;
  if (st.ok()) st = read_fields(read, &params);
  if (st.ok()) st = read.check_attributes_taken();
  if (st.ok()) st = im.only_outputs_below(1);
  std::vector<int> inputs;
  for (size_t i = 0; i < schema_inputs.size() && st.ok(); ++i) {
    if (is_field[i]) continue;
    int t = -1;
    st = im.ir_input_any(static_cast<int>(i), &t);
    inputs.push_back(t);
  }
  if (!st.ok()) return st;
  int y = -1;
  st = im.ir_check(im.g->add_op(im.ir_name(), inputs, params, &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

// import_<Table>(Importer&), the op function of each row.
#define JET_BY_FIELDS_FN(onnx_op, since, IR, Table, ints, fields, notes) \
  Status import_##Table(Importer& im) { return import_by_fields<fb::Table##T>(im, #Table, fields); }
JET_ONNX_BY_FIELDS(JET_BY_FIELDS_FN)
#undef JET_BY_FIELDS_FN

}  // namespace

// The rows, in union OpParams' order.
#define JET_BY_FIELDS_ROW(onnx_op, since, IR, Table, ints, fields, notes) {onnx_op, since, import_##Table, ints, #IR, notes},
const OpEntry kByFieldsOpRows[] = {JET_ONNX_BY_FIELDS(JET_BY_FIELDS_ROW)};
#undef JET_BY_FIELDS_ROW
const OpList kByFieldsOps = {kByFieldsOpRows, std::size(kByFieldsOpRows)};

namespace {

// One row against every version of its op's ONNX schema from `since` on.
Status check_row(const char* op_type, int since, const char* table, const std::string& fields) {
  const std::string row = std::string(op_type) + " (" + table + "): ";
  auto fail = [&](const std::string& what) { return Status(StatusCode::INTERNAL_ERROR, row + what); };
  const onnx::OpSchema* first = onnx_schema(op_type, since);
  if (!first || first->SinceVersion() != since || onnx_schema(op_type, since - 1)) {
    return fail("ONNX's first opset of the op is not " + std::to_string(since));
  }
  const std::vector<std::string> names = field_names(fields);
  const int last_opset = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("").second;
  const onnx::OpSchema* seen = nullptr;
  for (int opset = since; opset <= last_opset; ++opset) {
    const onnx::OpSchema* schema = onnx_schema(op_type, opset);
    if (schema == seen) continue;
    seen = schema;
    const std::string at = " at opset " + std::to_string(schema->SinceVersion());
    if (schema->outputs().size() != 1) return fail("the op has " + std::to_string(schema->outputs().size()) + " outputs" + at);
    for (const auto& a : schema->attributes()) {
      if (!has_name(names, a.first)) {
        return fail("attribute '" + a.first + "' is not a field" + at);
      }
    }
    for (const std::string& name : names) {
      const auto a = schema->attributes().find(name);
      const int input = schema_input(*schema, name);
      if (a != schema->attributes().end()) {
        if (a->second.type != onnx::AttributeProto::INT && a->second.type != onnx::AttributeProto::FLOAT) {
          return fail("attribute '" + name + "' is neither an INT nor a FLOAT" + at);
        }
      } else if (input < 0) {
        return fail("field " + name + " is neither an attribute nor an input" + at);
      } else if (schema->inputs()[input].GetOption() == onnx::OpSchema::Variadic) {
        return fail("input '" + name + "' is variadic" + at);
      }
    }
    for (const auto& input : schema->inputs()) {
      if (!has_name(names, input.GetName()) && input.GetOption() != onnx::OpSchema::Single) {
        return fail("input '" + input.GetName() + "' is a tensor input that is not required" + at);
      }
    }
  }
  return Status::success();
}

}  // namespace

}  // namespace onnx_import

Status check_onnx_ops_by_fields() {
#define JET_BY_FIELDS_CHECK(onnx_op, since, IR, Table, ints, fields, notes) \
  if (st.ok()) st = onnx_import::check_row(onnx_op, since, #Table, fields);
  Status st;
  JET_ONNX_BY_FIELDS(JET_BY_FIELDS_CHECK)
#undef JET_BY_FIELDS_CHECK
  return st;
}

}  // namespace jet
