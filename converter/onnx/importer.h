// Internals of the ONNX importer (onnx_import.h): the importer's state while it walks a graph,
// the constant table, attribute and input helpers, and the op table.
//
// model.cpp      ModelProto -> opset, constants (initializers, external data), graph inputs, the
//                walk over the nodes (unsupported ops collected), graph outputs, clean-up.
// constants.cpp  TensorProto decoding and the arithmetic of the constant table (broadcasting,
//                element-wise ops, casts) used by constant folding.
// ops_shape.cpp  ops evaluated on constants at import time (Shape, Gather, Slice, Range, ...) and
//                pure relabellings (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout), and
//                Slice, Transpose, Split and Gather of computed tensors (SLICE nodes).
// ops_nn.cpp     ops that become IR nodes (Conv, ConvTranspose, pools, activations, element-wise,
//                Gemm, MatMul, Softmax, BatchNormalization, InstanceNormalization, LRN, Concat,
//                Cast, Pad, Resize, Upsample, reductions).
// ops_by_fields.cpp  the ops imported by field name, with no function of their own: the tables of
//                schema/model.fbs with a `jet_onnx` attribute, read through ONNX's op schemas.
// Each ops_*.cpp file ends with its op rows (one per ONNX op type: the function that imports it,
// and its docs/onnx.md row); op_table.cpp joins them into the op table.
//
// An op function reads its node through the Importer (inputs, attributes), and either defines all
// of the node's used outputs (IR tensors or constants) and returns success, returns NOT_SUPPORTED
// with the reason (the walk records it and goes on), or returns an error naming the problem (the
// import stops). Functions never leave a half-built node behind on NOT_SUPPORTED: they check
// everything they can before calling a builder.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ir.h"
#include "onnx_import.h"

namespace jet {
namespace onnx_import {

// Names of onnx::TensorProto::DataType values, "type 42" for unknown ones.
std::string onnx_type_name(int32_t type);
bool is_float_type(int32_t type);  // FLOAT, FLOAT16, BFLOAT16, DOUBLE
bool is_int_type(int32_t type);    // the signed and unsigned integers and BOOL
// The IR dtype of the ONNX element types the runtime computes on: FLOAT, FLOAT16, INT32, INT64,
// BOOL. False for the rest.
bool ir_dtype_of(int32_t onnx_type, DType* out);
// The ONNX element type of an IR dtype.
int32_t onnx_type_of(DType t);

// A tensor whose values the importer knows: weights and the results of folded shape arithmetic.
// Integer types (and BOOL) keep exact int64 values in `ints`; float types keep float32 values in
// `floats` (DOUBLE constants are rounded to float32: the IR stores weights as float32 anyway).
struct Constant {
  int32_t type = onnx::TensorProto::FLOAT;  // the ONNX element type
  std::vector<int64_t> dims;                // rank 0 is a scalar
  std::vector<float> floats;
  std::vector<int64_t> ints;

  bool is_int() const { return is_int_type(type); }
  int64_t elements() const;
  double value(int64_t i) const { return is_int() ? static_cast<double>(ints[i]) : floats[i]; }
};

// Product of dims, INVALID_VALUE for a negative dim or more than 2^40 elements (no real tensor).
Status checked_elements(const std::vector<int64_t>& dims, const std::string& what, int64_t* n);


// A TensorProto -> Constant. External data is read relative to `external_dir` (empty: error).
// `what` names the tensor in errors ("initializer 'conv1.weight'").
Status decode_tensor(const onnx::TensorProto& t, const std::string& what,
                     const std::string& external_dir, Constant* out);

// Constant arithmetic for folding. All return BAD_PARAM naming `what` on a shape or type mismatch.
// Multidirectional (numpy) broadcasting of two shapes.
bool broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                      std::vector<int64_t>* out);
// MOD: the result has the divisor's sign (ONNX Mod, fmod = 0); FMOD: the dividend's (C's fmod).
enum class BinaryOp { ADD, SUB, MUL, DIV, MAX, MIN, EQUAL, LESS, GREATER, POW, MOD, FMOD };
Status fold_binary(BinaryOp op, const Constant& a, const Constant& b, const std::string& what,
                   Constant* out);
// Values converted to ONNX element type `to` (float -> int truncates toward zero, as C and
// ONNX Runtime do; to BOOL is != 0).
Status cast_constant(const Constant& c, int32_t to, const std::string& what, Constant* out);
// Element i of `c` broadcast to dims `to` (same rank as c after left-padding c with 1s).
Constant expand_constant(const Constant& c, const std::vector<int64_t>& to);
// Transposed by `perm` (a permutation of c's rank).
Constant transpose_constant(const Constant& c, const std::vector<int64_t>& perm);
// Reduction over `axes` (normalized, sorted, unique), accumulated in double (exact int64 for
// integer types; MEAN of integers truncates).
enum class ReduceKind { SUM, MEAN, MAX, MIN, PROD };
Status reduce_constant(const Constant& c, const std::vector<int64_t>& axes, bool keepdims, ReduceKind kind,
                       Constant* out);

// What a graph value is while the importer walks the graph.
struct Value {
  int tensor = -1;    // IR tensor: a graph input or a node's output
  int constant = -1;  // index in Importer::constants
  bool poisoned = false;  // produced by an unsupported node: its readers are skipped
  // A zero constant Pad waiting to be folded into the Conv that reads it: `tensor` is the
  // unpadded input, pads per spatial dim.
  bool pending_pad = false;
  std::string pad_node;
  std::vector<int64_t> pad_begin, pad_end;
};

class Importer {
 public:
  Importer(const ImportOptions& options, ir::Graph* graph, ImportReport* report)
      : options(options), g(graph), report(report) {}

  const ImportOptions& options;
  ir::Graph* g;
  ImportReport* report;
  int64_t opset = 0;  // of the default domain
  std::string external_dir;
  std::vector<Constant> constants;
  std::vector<std::string> constant_names;  // the ONNX value each constant was defined as
  int add_constant(const std::string& name, Constant c) {
    constant_names.push_back(name);
    constants.push_back(std::move(c));
    return static_cast<int>(constants.size()) - 1;
  }
  std::map<std::string, Value> values;     // by ONNX value name
  std::set<std::string> used;              // names read by some node or listed as graph outputs
  std::map<std::string, int> folded_ops;   // op type -> nodes evaluated at import time
  std::map<std::string, int> removed_ops;  // op type -> nodes removed (Identity, Dropout, ...)

  // The node being imported.
  const onnx::NodeProto* node = nullptr;
  std::string node_name;  // the ONNX name, or "<op_type>_<index>" when it has none
  // IR tensors from this index on were created for the current node: set_output names them after
  // the ONNX values they hold (older tensors, e.g. an input passed through, keep their names).
  size_t first_new_tensor = 0;

  // ---- inputs -----------------------------------------------------------------------------------
  int input_count() const { return node->input_size(); }
  bool has_input(int i) const { return i < node->input_size() && !node->input(i).empty(); }
  const std::string& input_name(int i) const { return node->input(i); }
  // Precondition: has_input(i) (the walk checked that every named input exists).
  const Value& input(int i) const { return values.at(node->input(i)); }
  bool is_constant(int i) const { return has_input(i) && input(i).constant >= 0; }
  const Constant& constant(int i) const { return constants[input(i).constant]; }
  // BAD_PARAM when input i is absent; NOT_SUPPORTED when it is computed at run time.
  Status require_input(int i, const char* what) const;
  Status constant_input(int i, const char* what, const Constant** c) const;
  // A constant integer input as a list (a scalar is one element).
  Status ints_input(int i, const char* what, std::vector<int64_t>* v) const;
  // A constant scalar (or one-element) input as a float.
  Status float_scalar_input(int i, const char* what, float* v) const;
  // Dims of input i (IR tensor or constant).
  std::vector<int64_t> input_dims(int i) const;
  // The IR tensor of input i. Constants are materialized as IR constants of dtype `dtype` (rank
  // 0 becomes {1}); an IR tensor must already have `dtype` (BAD_PARAM otherwise). A pending Pad
  // read by anything but a Conv becomes a PAD node here (materialize_pad).
  Status ir_input(int i, DType dtype, int* t);
  // Turns the pending zero Pad held by value `name` into a PAD node (named after the Pad node, its
  // output named `name`); the value then holds that node's output, in *t.
  Status materialize_pad(const std::string& name, int* t);
  // The IR tensor of input i in its own dtype: a constant of type FLOAT16 becomes F16, other
  // float constants F32.
  Status ir_input(int i, int* t);
  // The IR tensor of input i in its own dtype, integer and bool constants included (INT32, INT64,
  // BOOL become I32, I64, BOOL IR constants; other integer types are NOT_SUPPORTED).
  Status ir_input_any(int i, int* t);
  // An IR constant holding integer constant `index` (its ONNX type must be `dtype`'s), cached.
  Status ir_int_constant(int index, DType dtype, int* t);

  // ---- outputs ----------------------------------------------------------------------------------
  int output_count() const { return node->output_size(); }
  bool output_used(int i) const {
    return i < node->output_size() && !node->output(i).empty() && used.count(node->output(i)) > 0;
  }
  // Defines output i (ignored when the node has no output i or its name is empty).
  Status set_output(int i, int tensor);
  Status set_output_constant(int i, Constant c);
  Status set_output_value(int i, const Value& v);
  // Shorthand for op functions that fold: set output 0 and count the node as folded.
  Status folded(Constant c);
  // NOT_SUPPORTED unless outputs from `first` on are all unused.
  Status only_outputs_below(int first) const;

  // ---- IR ---------------------------------------------------------------------------------------
  // An IR constant holding float constant `index` with `dtype` and `dims` (same element count;
  // empty dims means the constant's own, rank 0 as {1}). Cached: one IR tensor per combination.
  Status ir_constant(int index, DType dtype, std::vector<int64_t> dims, int* t);
  // A new IR constant from values (not cached).
  Status ir_constant_values(const std::string& name, DType dtype, std::vector<int64_t> dims,
                            std::vector<float> data, int* t);
  // Names for the IR nodes of the current ONNX node: the node's name, then "<name>/<suffix>".
  std::string ir_name(const std::string& suffix = "") const {
    return suffix.empty() ? node_name : node_name + "/" + suffix;
  }
  // An IR reshape of tensor x to dims (a RESHAPE node), or x itself when the dims already match.
  Status reshape_to(int x, const std::vector<int64_t>& dims, const std::string& suffix, int* y);
  // Wraps an IR builder's error: the builder already names its op and node.
  Status ir_check(const Status& st) const;

  // ---- attributes -------------------------------------------------------------------------------
  // Each getter returns BAD_PARAM when the attribute exists with another type. Models written by
  // old exporters leave `type` unset; the type is then inferred from the field that is set.
  const onnx::AttributeProto* attr(const char* name) const;
  bool has_attr(const char* name) const { return attr(name) != nullptr; }
  Status attr_int(const char* name, int64_t def, int64_t* out) const;
  Status attr_float(const char* name, float def, float* out) const;
  Status attr_string(const char* name, const std::string& def, std::string* out) const;
  Status attr_ints(const char* name, std::vector<int64_t>* out) const;  // absent: empty
  Status attr_floats(const char* name, std::vector<float>* out) const;  // absent: empty
  Status attr_tensor(const char* name, const onnx::TensorProto** out) const;  // absent: null

  // ---- reporting --------------------------------------------------------------------------------
  std::string node_label() const;  // "Conv 'conv1'"
  Status bad(const std::string& what) const;          // BAD_PARAM "Conv 'conv1': what"
  Status unsupported(const std::string& why) const;   // NOT_SUPPORTED why
  // Normalizes axis into [0, rank) (ONNX allows [-rank, rank)); BAD_PARAM naming `what`.
  Status normalize_axis(int64_t axis, int64_t rank, const char* what, int64_t* out) const;
  void note(const std::string& text) { report->notes.push_back(text); }

 private:
  Status attr_typed(const char* name, int want, const onnx::AttributeProto** out) const;
  std::map<std::string, int> ir_constant_cache_;
  std::set<int> onnx_named_;  // IR tensors already renamed after the ONNX value they hold
};

using OpImportFn = Status (*)(Importer& im);

// One ONNX op type's row of the op table (op_table.cpp says what the columns mean).
struct OpEntry {
  const char* op_type;
  int64_t since;  // the first opset of the default domain that has the op
  OpImportFn fn;
  bool ints;          // the importer takes computed integer and bool tensors
  const char* ir;     // docs/onnx.md: what it becomes; "": the op joins the row above
  const char* notes;  // docs/onnx.md: attributes, limits, what is unsupported
};

// The rows of the ONNX ops one ops_*.cpp file imports, defined at its end beside the functions;
// op_table.cpp joins the files' lists into the op table.
struct OpList {
  const OpEntry* rows;
  size_t count;
};
extern const OpList kNnOps, kShapeOps, kIndexOps, kDetectionOps;
// The ops imported by field name: the tables of schema/model.fbs with a jet_onnx attribute
// (ops_by_fields.cpp).
extern const OpList kByFieldsOps;

// The op table (op_table.cpp). Null when the op type has no entry.
const OpEntry* find_op(const std::string& op_type);
// True for the op types whose importers take computed integer and bool tensors (op_table.cpp).
bool op_takes_integer_tensors(const std::string& op_type);

// The op functions, Status import_<op>(Importer& im), one per ONNX op or per family sharing one
// mapping, live in ops_*.cpp, each named by its row in that file's list (nothing else calls them).
// An activation without attributes (Relu, Exp, Sqrt, ...) needs no function of its own: its row,
// {"Exp", 1, import_activation<ActivationMode::EXP>, false, IR, notes} in ops_nn.cpp, imports it.
// Constant inputs are folded.
Status import_activation_mode(Importer& im, ActivationMode mode);
template <ActivationMode M>
Status import_activation(Importer& im) {
  return import_activation_mode(im, M);
}

}  // namespace onnx_import
}  // namespace jet
