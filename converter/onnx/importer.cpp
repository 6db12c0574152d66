// Importer helpers shared by the op functions: inputs, outputs, attributes, IR constants, errors.
#include "importer.h"

#include <utility>

namespace jet {
namespace onnx_import {

using AP = onnx::AttributeProto;

std::string Importer::node_label() const { return node->op_type() + " '" + node_name + "'"; }

Status Importer::bad(const std::string& what) const {
  return Status(StatusCode::BAD_PARAM, node_label() + ": " + what);
}

Status Importer::unsupported(const std::string& why) const { return Status(StatusCode::NOT_SUPPORTED, why); }

Status Importer::ir_check(const Status& st) const {
  if (st.ok()) return st;
  return Status(st.code(), node_label() + ": " + st.message());
}

Status Importer::normalize_axis(int64_t axis, int64_t rank, const char* what, int64_t* out) const {
  if (axis < -rank || axis >= rank) {
    return bad(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  *out = axis < 0 ? axis + rank : axis;
  return Status::success();
}

// ---- inputs ---------------------------------------------------------------------------------------

Status Importer::require_input(int i, const char* what) const {
  if (!has_input(i)) return bad(std::string("missing input #") + std::to_string(i) + " (" + what + ")");
  return Status::success();
}

Status Importer::constant_input(int i, const char* what, const Constant** c) const {
  Status st = require_input(i, what);
  if (!st.ok()) return st;
  if (input(i).constant < 0) {
    return unsupported(std::string(what) + " '" + input_name(i) +
                       "' is computed at run time; only a constant (or constant-foldable) " + what +
                       " is supported");
  }
  *c = &constant(i);
  return Status::success();
}

Status Importer::ints_input(int i, const char* what, std::vector<int64_t>* v) const {
  const Constant* c = nullptr;
  Status st = constant_input(i, what, &c);
  if (!st.ok()) return st;
  if (!c->is_int()) {
    return bad(std::string(what) + " '" + input_name(i) + "' has type " + onnx_type_name(c->type) + ", expected an integer type");
  }
  if (c->dims.size() > 1) {
    return bad(std::string(what) + " '" + input_name(i) + "' has dims " + dims_text(c->dims) + ", expected a list");
  }
  *v = c->ints;
  return Status::success();
}

Status Importer::float_scalar_input(int i, const char* what, float* v) const {
  const Constant* c = nullptr;
  Status st = constant_input(i, what, &c);
  if (!st.ok()) return st;
  if (c->elements() != 1) {
    return bad(std::string(what) + " '" + input_name(i) + "' has dims " + dims_text(c->dims) + ", expected one value");
  }
  *v = static_cast<float>(c->value(0));
  return Status::success();
}

std::vector<int64_t> Importer::input_dims(int i) const {
  const Value& v = input(i);
  if (v.constant >= 0) return constants[v.constant].dims;
  std::vector<int64_t> dims = g->tensors[v.tensor].dims;
  for (size_t d = 0; v.pending_pad && d < v.pad_begin.size(); ++d) dims[d + 2] += v.pad_begin[d] + v.pad_end[d];
  return dims;
}

Status Importer::ir_input(int i, DType dtype, int* t) {
  Status st = require_input(i, "tensor");
  if (!st.ok()) return st;
  if (input(i).pending_pad) {
    st = materialize_pad(input_name(i), t);
    if (!st.ok()) return st;
  }
  const Value& v = input(i);
  if (v.constant >= 0) {
    const Constant& c = constants[v.constant];
    if (!c.is_int() && c.elements() > 0) return ir_constant(v.constant, dtype, {}, t);
    if (c.is_int() && !dtype_is_float(dtype) && c.elements() > 0) return ir_int_constant(v.constant, dtype, t);
    if (c.is_int()) {
      // Valid ONNX for many ops (Clip, MaxPool, ... on integers): computed tensors are float only.
      return unsupported("input '" + input_name(i) + "' is an integer tensor (" + onnx_type_name(c.type) +
                         "); only float tensors are computed (integers are folded at import time only)");
    }
    return unsupported("input '" + input_name(i) + "' is an empty tensor (dims " + dims_text(c.dims) + ")");
  }
  if (dtype_is_float(g->tensors[v.tensor].dtype) != dtype_is_float(dtype)) {
    return unsupported("input '" + input_name(i) + "' is " + dtype_name(g->tensors[v.tensor].dtype) + " where " +
                       dtype_name(dtype) + " is computed");
  }
  if (g->tensors[v.tensor].dtype != dtype) {
    return bad("input '" + input_name(i) + "' is " + dtype_name(g->tensors[v.tensor].dtype) + ", expected " +
               dtype_name(dtype) + " (all float inputs of an op share one type)");
  }
  *t = v.tensor;
  return Status::success();
}

Status Importer::materialize_pad(const std::string& name, int* t) {
  Value& v = values.at(name);
  const size_t rank = g->tensors[v.tensor].dims.size();
  ir::PadAttrs a;
  a.pad_begin.assign(rank, 0);
  a.pad_end.assign(rank, 0);
  for (size_t d = 0; d < v.pad_begin.size() && d + 2 < rank; ++d) {
    a.pad_begin[d + 2] = v.pad_begin[d];
    a.pad_end[d + 2] = v.pad_end[d];
  }
  Status st = g->pad(v.pad_node, v.tensor, a, t);
  if (!st.ok()) return st;
  g->tensors[*t].name = name;
  onnx_named_.insert(*t);
  Value out;
  out.tensor = *t;
  v = out;
  return Status::success();
}

Status Importer::ir_input(int i, int* t) {
  Status st = require_input(i, "tensor");
  if (!st.ok()) return st;
  const Value& v = input(i);
  DType dtype = DType::F32;
  if (v.constant >= 0) {
    if (constants[v.constant].type == onnx::TensorProto::FLOAT16) dtype = DType::F16;
  } else if (v.tensor >= 0) {
    dtype = g->tensors[v.tensor].dtype;
  }
  return ir_input(i, dtype, t);
}

Status Importer::ir_input_any(int i, int* t) {
  Status st = require_input(i, "tensor");
  if (!st.ok()) return st;
  const Value& v = input(i);
  if (v.constant >= 0 && constants[v.constant].is_int()) {
    const Constant& c = constants[v.constant];
    DType dt = DType::F32;
    if (!ir_dtype_of(c.type, &dt)) {
      return unsupported("input '" + input_name(i) + "' is an " + onnx_type_name(c.type) +
                         " tensor (integer tensors are INT32, INT64 or BOOL)");
    }
    if (c.elements() == 0) return unsupported("input '" + input_name(i) + "' is an empty tensor");
    return ir_int_constant(v.constant, dt, t);
  }
  return ir_input(i, t);
}

// ---- outputs --------------------------------------------------------------------------------------

Status Importer::set_output(int i, int tensor) {
  if (i >= node->output_size() || node->output(i).empty()) return Status::success();
  const std::string& name = node->output(i);
  Value v;
  v.tensor = tensor;
  values[name] = v;
  // The IR tensor a node creates takes the ONNX value's name (an alias keeps its first name).
  if (static_cast<size_t>(tensor) >= first_new_tensor && onnx_named_.insert(tensor).second) {
    g->tensors[tensor].name = name;
  }
  return Status::success();
}

Status Importer::set_output_constant(int i, Constant c) {
  if (i >= node->output_size() || node->output(i).empty()) return Status::success();
  Value v;
  v.constant = add_constant(node->output(i), std::move(c));
  values[node->output(i)] = v;
  return Status::success();
}

Status Importer::set_output_value(int i, const Value& v) {
  if (i >= node->output_size() || node->output(i).empty()) return Status::success();
  values[node->output(i)] = v;
  return Status::success();
}

Status Importer::folded(Constant c) {
  ++folded_ops[node->op_type()];
  return set_output_constant(0, std::move(c));
}

Status Importer::only_outputs_below(int first) const {
  for (int i = first; i < node->output_size(); ++i) {
    if (output_used(i)) {
      return unsupported("output #" + std::to_string(i) + " '" + node->output(i) + "' is not supported (it is read)");
    }
  }
  return Status::success();
}

// ---- IR -------------------------------------------------------------------------------------------

Status Importer::ir_constant(int index, DType dtype, std::vector<int64_t> dims, int* t) {
  const Constant& c = constants[index];
  if (dims.empty()) dims = c.dims.empty() ? std::vector<int64_t>{1} : c.dims;
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  // Every input that becomes an IR constant takes floats (ONNX's T(float) inputs: weights,
  // biases, slopes, scales): integers there are the model's error, not ours (the importer's
  // fuzzer found an INT32 Conv bias reported as an internal error).
  if (c.is_int()) {
    return bad("constant '" + constant_names[index] + "' holds integers, but this input takes float values");
  }
  // The reverse: float values where the node's other inputs make this one an integer or bool
  // tensor (Add of an INT64 tensor and a FLOAT constant; ONNX wants one type). The importer's
  // fuzzer found it reported as the writer's error.
  if (!dtype_is_float(dtype)) {
    return bad("constant '" + constant_names[index] + "' holds float values, but this input takes " +
               dtype_name(dtype) + " values (the node's inputs must share one type)");
  }
  if (n != c.elements()) {
    return Status(StatusCode::INTERNAL_ERROR, node_label() + ": constant '" + constant_names[index] +
                                                  "' materialized with dims " + dims_text(dims));
  }
  const std::string key = std::to_string(index) + "/" + dtype_name(dtype) + "/" + dims_text(dims);
  auto it = ir_constant_cache_.find(key);
  if (it != ir_constant_cache_.end()) {
    *t = it->second;
    return Status::success();
  }
  Status st = g->add_constant(constant_names[index], dtype, dims, t);
  if (!st.ok()) return bad(st.message());
  g->tensors[*t].data = c.floats;
  ir_constant_cache_[key] = *t;
  return Status::success();
}

Status Importer::ir_int_constant(int index, DType dtype, int* t) {
  const Constant& c = constants[index];
  DType own = DType::F32;
  if (!c.is_int() || !ir_dtype_of(c.type, &own) || own != dtype) {
    return unsupported("constant '" + constant_names[index] + "' is " + onnx_type_name(c.type) + " where " +
                       dtype_name(dtype) + " is computed");
  }
  const std::vector<int64_t> dims = c.dims.empty() ? std::vector<int64_t>{1} : c.dims;
  const std::string key = std::to_string(index) + "/" + dtype_name(dtype) + "/" + dims_text(dims);
  auto it = ir_constant_cache_.find(key);
  if (it != ir_constant_cache_.end()) {
    *t = it->second;
    return Status::success();
  }
  Status st = g->add_constant(constant_names[index], dtype, dims, t);
  if (!st.ok()) return bad(st.message());
  g->tensors[*t].int_data = c.ints;
  if (dtype == DType::BOOL) {
    for (int64_t& b : g->tensors[*t].int_data) b = b != 0 ? 1 : 0;
  }
  ir_constant_cache_[key] = *t;
  return Status::success();
}

Status Importer::ir_constant_values(const std::string& name, DType dtype, std::vector<int64_t> dims,
                                    std::vector<float> data, int* t) {
  Status st = g->add_constant(name, dtype, std::move(dims), t);
  if (!st.ok()) return bad(st.message());
  if (static_cast<int64_t>(data.size()) != g->tensors[*t].elements()) {
    return Status(StatusCode::INTERNAL_ERROR, node_label() + ": constant '" + name + "' has the wrong size");
  }
  g->tensors[*t].data = std::move(data);
  return Status::success();
}

Status Importer::reshape_to(int x, const std::vector<int64_t>& dims, const std::string& suffix, int* y) {
  if (g->tensors[x].dims == dims) {
    *y = x;
    return Status::success();
  }
  return ir_check(g->reshape(ir_name(suffix), x, dims, y));
}

// ---- attributes -----------------------------------------------------------------------------------

const AP* Importer::attr(const char* name) const {
  for (const AP& a : node->attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

namespace {

// The attribute's type; old models leave `type` unset, then the field that is set decides.
int attr_type(const AP& a) {
  if (a.type() != AP::UNDEFINED) return a.type();
  if (a.has_i()) return AP::INT;
  if (a.has_f()) return AP::FLOAT;
  if (a.has_s()) return AP::STRING;
  if (a.has_t()) return AP::TENSOR;
  if (a.has_g()) return AP::GRAPH;
  if (a.ints_size() > 0) return AP::INTS;
  if (a.floats_size() > 0) return AP::FLOATS;
  if (a.strings_size() > 0) return AP::STRINGS;
  return AP::UNDEFINED;
}

std::string attr_type_name(int t) {
  if (onnx::AttributeProto_AttributeType_IsValid(t)) {
    return onnx::AttributeProto_AttributeType_Name(static_cast<onnx::AttributeProto_AttributeType>(t));
  }
  return "type " + std::to_string(t);
}

}  // namespace

Status Importer::attr_typed(const char* name, int want, const AP** out) const {
  *out = attr(name);
  if (!*out) return Status::success();
  const int t = attr_type(**out);
  // An empty INTS/FLOATS list written without a type reads as UNDEFINED: accept it as the list.
  if (t == AP::UNDEFINED && (want == AP::INTS || want == AP::FLOATS || want == AP::STRINGS)) return Status::success();
  if (t != want) {
    return bad("attribute '" + std::string(name) + "' has type " + attr_type_name(t) + ", expected " +
               attr_type_name(want));
  }
  return Status::success();
}

Status Importer::attr_int(const char* name, int64_t def, int64_t* out) const {
  const AP* a = nullptr;
  Status st = attr_typed(name, AP::INT, &a);
  if (!st.ok()) return st;
  *out = a ? a->i() : def;
  return Status::success();
}

Status Importer::attr_float(const char* name, float def, float* out) const {
  const AP* a = nullptr;
  Status st = attr_typed(name, AP::FLOAT, &a);
  if (!st.ok()) return st;
  *out = a ? a->f() : def;
  return Status::success();
}

Status Importer::attr_string(const char* name, const std::string& def, std::string* out) const {
  const AP* a = nullptr;
  Status st = attr_typed(name, AP::STRING, &a);
  if (!st.ok()) return st;
  *out = a ? a->s() : def;
  return Status::success();
}

Status Importer::attr_ints(const char* name, std::vector<int64_t>* out) const {
  const AP* a = nullptr;
  Status st = attr_typed(name, AP::INTS, &a);
  if (!st.ok()) return st;
  out->clear();
  if (a) out->assign(a->ints().begin(), a->ints().end());
  return Status::success();
}

Status Importer::attr_floats(const char* name, std::vector<float>* out) const {
  const AP* a = nullptr;
  Status st = attr_typed(name, AP::FLOATS, &a);
  if (!st.ok()) return st;
  out->clear();
  if (a) out->assign(a->floats().begin(), a->floats().end());
  return Status::success();
}

Status Importer::attr_tensor(const char* name, const onnx::TensorProto** out) const {
  const AP* a = nullptr;
  Status st = attr_typed(name, AP::TENSOR, &a);
  if (!st.ok()) return st;
  *out = a ? &a->t() : nullptr;
  return Status::success();
}

}  // namespace onnx_import
}  // namespace jet
