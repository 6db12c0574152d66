// The converter's graph IR: tensors, nodes with one small typed attribute struct per op, builder
// helpers that run shape inference as nodes are added, and a topological order.
//
// Plain structs and vectors. Tensors and nodes are referred to by their index in the graph.
// The builders never abort: an inconsistent shape returns BAD_PARAM naming the node and the
// problem, and leaves the graph unchanged. Shape formulas for convolution and pooling come from
// the kernel library (jet::conv_output_dims, jet::pool_output_dims) so they live in one place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "jet/dnn/activation.h"
#include "jet/dnn/common.h"
#include "jet/dnn/conv.h"
#include "jet/dnn/norm.h"
#include "jet/dnn/pool.h"
#include "jet/dnn/softmax.h"
#include "jet/dnn/tensor_ops.h"
#include "jet/schema/model_generated.h"
#include "op_list.h"

namespace jet {
namespace ir {

// The most elements any IR tensor may have (inputs, constants, every op's output): far above any
// real model, low enough that byte sizes and the planner's sums cannot wrap. Graph's builders
// refuse a tensor beyond it, naming the node.
constexpr int64_t kMaxTensorElements = int64_t(1) << 40;

enum class TensorKind {
  INPUT,       // fed by the caller; lives in the arena
  OUTPUT,      // a graph output (produced by a node); lives in the arena until the end
  CONSTANT,    // weights: stored in the model, not in the activation arena
  ACTIVATION,  // an intermediate value produced by one node
};

const char* tensor_kind_name(TensorKind k);

struct Tensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> dims;
  TensorKind kind = TensorKind::ACTIVATION;
  // Element strides; empty = packed row-major in dims order. Layout passes set channels-last
  // strides on activations; constants and graph inputs/outputs stay packed.
  std::vector<int64_t> strides;
  // CONSTANT of dtype F32 or F16: the values in float32 (the writer converts them to `dtype`);
  // empty otherwise.
  std::vector<float> data;
  // CONSTANT of dtype I32, I64 or BOOL: the exact values (the writer narrows them to `dtype`;
  // BOOL holds 0 or 1); empty otherwise.
  std::vector<int64_t> int_data;

  int64_t elements() const;
  // Elements a buffer for this tensor must hold: 1 + the largest element offset under `strides`
  // (= elements() when packed, more when the strides leave gaps).
  int64_t span() const;
  // The bytes the tensor's elements span; what the memory planner reserves.
  size_t bytes() const { return static_cast<size_t>(span()) * dtype_size(dtype); }
  // True when `strides` is empty or addresses every element as the packed row-major strides of
  // `dims` do (strides of size-1 dims are ignored: they never move the address).
  bool is_packed() const;
  // The kernel-library descriptor: dims and strides (packed when `strides` is empty). Not
  // validated; call TensorDesc::validate before trusting hand-made strides.
  TensorDesc desc() const;
};

// Packed row-major strides of `dims` (the last dim contiguous).
std::vector<int64_t> packed_strides(const std::vector<int64_t>& dims);
// Channels-last strides of N, C, spatial dims (rank 3..5): C contiguous, then the spatial dims
// from last to first, then N. Other ranks: the packed strides.
std::vector<int64_t> channels_last_strides(const std::vector<int64_t>& dims);

// The op types, in schema/op_list.h's order (that list is the one declaration of an op type; the
// attribute structs below and NodeAttrs follow it). COUNT is the number of op types.
enum class OpType {
#define JET_IR_OP_ENUM(ENUM, fn, Attrs, Params, name, in_place, layout, f32_params, dtypes, backward, inputs) ENUM,
  JET_OPS(JET_IR_OP_ENUM)
#undef JET_IR_OP_ENUM
  COUNT
};

const char* op_type_name(OpType op);

// CONV: conv_bias_act_forward. inputs: x, w[, bias][, residual]
struct ConvAttrs {
  // spatial-rank entries each; empty means pad 0, stride 1, dilation 1.
  std::vector<int64_t> pad_begin, pad_end, strides, dilations;
  int64_t groups = 1;
  ActivationDesc act = ActivationDesc::identity();  // fused epilogue
  bool has_bias = false;                            // inputs[2] is the bias
  bool has_residual = false;                        // the last input is the residual z
};

// POOL: pool_forward. inputs: x
struct PoolAttrs {
  PoolMode mode = PoolMode::MAX;
  std::vector<int64_t> window, pad_begin, pad_end, strides;  // spatial-rank entries
  bool ceil_mode = false;
};

// GLOBAL_POOL: pool_forward with PoolDesc::global. inputs: x
struct GlobalPoolAttrs {
  PoolMode mode = PoolMode::AVG_INCLUDE_PAD;
};

// ACTIVATION: activation_forward. inputs: x
struct ActivationAttrs {
  ActivationDesc act;
};

// OP_TENSOR: op_tensor (Add, Mul, ...). inputs: a, b (broadcast to the output)
struct OpTensorAttrs {
  TensorOp op = TensorOp::ADD;
};

// GEMM: gemm_forward. inputs: a, b[, bias]
struct GemmAttrs {
  bool trans_a = false;
  bool trans_b = false;
  bool has_bias = false;  // inputs[2] is the bias
};

// SOFTMAX: softmax_forward. inputs: x
struct SoftmaxAttrs {
  SoftmaxAlgo algo = SoftmaxAlgo::ACCURATE;
  int axis = 1;
};

// CONCAT: concat_forward. inputs: x0, x1, ...
struct ConcatAttrs {
  int axis = 1;
};

// RESHAPE: Flatten / Reshape, same bytes, new dims. inputs: x
struct ReshapeAttrs {
  std::vector<int64_t> shape;  // the output dims (already resolved)
};

// BATCHNORM: batchnorm_forward_inference. inputs: x, scale, bias, mean, var
struct BatchNormAttrs {
  double epsilon = 1e-5;
};

// TRANSFORM: transform_tensor (dtype conversion). inputs: x
struct TransformAttrs {
  DType to = DType::F32;
};

// SLICE: transform_tensor from a strided view of x (slice, transpose, split). inputs: x.
// y = x read along a strided view: y dim d walks x dim perm[d] from starts[perm[d]] in steps of
// steps[perm[d]], sizes[perm[d]] elements. Each vector has x's rank entries; starts >= 0,
// steps >= 1 (a negative step is not expressible as a TensorDesc stride), and the view stays in x.
// Slice is perm = identity; Transpose is starts 0, steps 1, sizes = x's dims; Split is one SLICE
// per output.
struct SliceAttrs {
  std::vector<int64_t> starts, steps, sizes, perm;
};

// PAD: pad_forward (constant, reflect, edge; negative pads crop). inputs: x
struct PadAttrs {
  PadMode mode = PadMode::CONSTANT;
  std::vector<int64_t> pad_begin, pad_end;  // x's rank entries; negative entries crop
  float value = 0.f;                        // CONSTANT's fill
};

// RESIZE: resize_forward (nearest, linear) of the spatial dims. inputs: x
struct ResizeAttrs {
  ResizeMode mode = ResizeMode::NEAREST;
  ResizeCoord coord = ResizeCoord::HALF_PIXEL;
  ResizeNearest nearest = ResizeNearest::ROUND_PREFER_FLOOR;
  // Spatial-rank entries (or empty): the scale the coordinate mapping uses; 0 means out / in.
  std::vector<float> scales;
  float cubic_coeff_a = -0.75f;  // CUBIC only
  bool exclude_outside = false;  // CUBIC only
};

// CONV_TRANSPOSE: conv_backward_data [+ add_tensor bias]. inputs: x, w[, bias].
// ONNX ConvTranspose. The conv fields describe the forward convolution that maps y back to x
// (what conv_backward_data takes); w is C_in x C_out/groups x window. The output's spatial dims
// are given to the builder (output_padding / output_shape pick among the sizes that convolve to
// x's), and the forward convolution of y must give exactly x's dims.
struct ConvTransposeAttrs {
  std::vector<int64_t> pad_begin, pad_end, strides, dilations;  // spatial-rank entries or empty
  int64_t groups = 1;
  bool has_bias = false;  // inputs[2] is the bias (C_out values)
};

// INSTANCENORM: instancenorm_forward. inputs: x, scale, bias
struct InstanceNormAttrs {
  double epsilon = 1e-5;
};

// LRN: lrn_cross_channel_forward. inputs: x
struct LrnAttrs {
  LrnDesc lrn;
};

// REDUCE: reduce_forward over the dims where y is 1 and x is not. inputs: x
struct ReduceAttrs {
  ReduceOp op = ReduceOp::SUM;
};

// LOGIC: logic_tensor (Equal, Less, ..., And, Or, Xor). inputs: a, b (one dtype, broadcast to
// the output); the output is BOOL.
struct LogicAttrs {
  LogicOp op = LogicOp::EQUAL;
};

// WHERE: where_forward. inputs: condition (BOOL), a, b (the output's dtype), broadcast.
struct WhereAttrs {};

// ARG_REDUCE: arg_reduce_forward (ArgMax, ArgMin). inputs: x. The output is I64 with x's dims
// but 1 at `axis`.
struct ArgReduceAttrs {
  ArgReduceOp op = ArgReduceOp::ARGMAX;
  int axis = 0;
  bool select_last_index = false;
};

// NMS: nms_forward (ONNX NonMaxSuppression). inputs: boxes [B, N, 4], scores [B, C, N] (F32 /
// F16). The output is I64 [B * C * min(max_output_boxes_per_class, N), 3]: the selected rows,
// then rows of -1 (docs/onnx.md).
struct NmsAttrs {
  bool center_point_box = false;
  int64_t max_output_boxes_per_class = 1;
  float iou_threshold = 0.f;
  bool has_score_threshold = false;
  float score_threshold = 0.f;
};

// An op whose IR attributes are exactly its schema table's fields has no struct here: its
// attributes are the table's object-API struct fb::<Params>T (generated by flatc
// --gen-object-api; model.fbs documents the fields), op_list.h's Attrs column names it, the writer
// stores it with the generated Pack, and Graph::add_op builds its nodes with the op's output rule
// (schema/op_rules.h, defined in runtime/ops.cpp).

// SCATTER: scatter_elements_forward (nd false) or scatter_nd_forward (nd true). inputs: x (any
// dtype), indices (I32 or I64), updates (x's dtype). The output has x's dims.
struct ScatterAttrs {
  bool nd = false;
  ScatterReduction reduction = ScatterReduction::NONE;
  int axis = 0;
};

// True for the op types whose kernels take integer and bool tensors (dtypes ANY in
// schema/op_list.h); every other op computes on F32 / F16 only, and the builders refuse other
// dtypes for it (NOT_SUPPORTED naming the tensor).
bool op_takes_any_dtype(OpType op);

// The kernel descriptors that CONV, CONV_TRANSPOSE and RESIZE attributes describe (empty spatial
// vectors: the kernels' defaults), for the graph builder and the executors that run a graph by
// direct kernel calls.
ConvDesc conv_desc(const ConvAttrs& a, int spatial_rank);
ConvDesc conv_desc(const ConvTransposeAttrs& a, int spatial_rank);
ResizeDesc resize_desc(const ResizeAttrs& a);

// One attribute struct per op type: the alternative's index is the op type (check_node checks
// Node::op against it).
namespace detail {
template <typename Ignored, typename... Attrs>
struct VariantOf {
  using type = std::variant<Attrs...>;
};
// The index of the first alternative of V that is T.
template <typename T, typename V>
struct FirstIndexOf;
template <typename T, typename... Ts>
struct FirstIndexOf<T, std::variant<Ts...>> {
  static constexpr size_t value = [] {
    constexpr bool same[] = {std::is_same<T, Ts>::value...};
    size_t i = 0;
    while (i < sizeof...(Ts) && !same[i]) ++i;
    return i;
  }();
};
}  // namespace detail
#define JET_IR_OP_ATTRS(ENUM, fn, Attrs, Params, name, in_place, layout, f32_params, dtypes, backward, inputs) , Attrs
using NodeAttrs = detail::VariantOf<void JET_OPS(JET_IR_OP_ATTRS)>::type;
#undef JET_IR_OP_ATTRS
#define JET_IR_OP_CHECK(ENUM, fn, Attrs, Params, name, in_place, layout, f32_params, dtypes, backward, inputs) \
  static_assert(detail::FirstIndexOf<Attrs, NodeAttrs>::value == static_cast<size_t>(OpType::ENUM),            \
                #Attrs " must be the attribute struct of " #ENUM " alone");
JET_OPS(JET_IR_OP_CHECK)
#undef JET_IR_OP_CHECK

struct Node {
  std::string name;
  OpType op = OpType::ACTIVATION;
  std::vector<int> inputs;   // tensor indices
  std::vector<int> outputs;  // tensor indices
  NodeAttrs attrs;
};

// True for ops whose output may share its buffer with an input that dies at the op: elementwise
// ops whose kernels allow x == y and reshape (a view); the in_place column of schema/op_list.h.
bool op_allows_in_place(OpType op);

class Graph {
 public:
  std::vector<Tensor> tensors;
  std::vector<Node> nodes;

  // Raw construction, no checks or shape inference (for importers and tests). Return the index.
  int add_tensor(Tensor t);
  int add_node(Node n);

  // Graph inputs and constants. BAD_PARAM for empty dims or a dim < 1.
  Status add_input(const std::string& name, DType dtype, std::vector<int64_t> dims, int* out);
  Status add_constant(const std::string& name, DType dtype, std::vector<int64_t> dims, int* out);
  // Marks a produced tensor as a graph output.
  Status mark_output(int tensor);

  // Builders: each adds one node and its output tensor (named after the node) and writes the
  // output's index to *y. bias / residual: -1 for none (the flags in attrs are set from them).
  Status conv(const std::string& name, int x, int w, int bias, int residual, ConvAttrs attrs,
              int* y);
  Status pool(const std::string& name, int x, const PoolAttrs& attrs, int* y);
  Status max_pool(const std::string& name, int x, int64_t window, int64_t stride, int64_t pad,
                  int* y);
  Status global_avg_pool(const std::string& name, int x, int* y);
  // Global pooling with any mode (GlobalMaxPool: PoolMode::MAX); global_avg_pool is
  // global_pool(AVG_INCLUDE_PAD).
  Status global_pool(const std::string& name, int x, PoolMode mode, int* y);
  Status activation(const std::string& name, int x, const ActivationDesc& act, int* y);
  Status relu(const std::string& name, int x, int* y);
  Status relu6(const std::string& name, int x, int* y);
  Status op_tensor(const std::string& name, TensorOp op, int a, int b, int* y);
  Status add(const std::string& name, int a, int b, int* y);
  Status gemm(const std::string& name, int a, int b, int bias, const GemmAttrs& attrs, int* y);
  Status softmax(const std::string& name, int x, int axis, int* y);
  // softmax with a chosen algorithm (LogSoftmax: SoftmaxAlgo::LOG); the overload above is ACCURATE.
  Status softmax(const std::string& name, int x, int axis, SoftmaxAlgo algo, int* y);
  Status concat(const std::string& name, const std::vector<int>& xs, int axis, int* y);
  // shape may hold one -1 (inferred); the element count must be preserved.
  Status reshape(const std::string& name, int x, std::vector<int64_t> shape, int* y);
  // ONNX Flatten: {prod(dims[0, axis)), prod(dims[axis, rank))}.
  Status flatten(const std::string& name, int x, int axis, int* y);
  Status batchnorm(const std::string& name, int x, int scale, int bias, int mean, int var,
                   double epsilon, int* y);
  Status transform(const std::string& name, int x, DType to, int* y);
  // See SliceAttrs. An empty perm is the identity.
  Status slice(const std::string& name, int x, SliceAttrs attrs, int* y);
  Status pad(const std::string& name, int x, const PadAttrs& attrs, int* y);
  // out_dims: the full output dims (N and C as x's; only the spatial dims may change).
  Status resize(const std::string& name, int x, const ResizeAttrs& attrs,
                const std::vector<int64_t>& out_dims, int* y);
  // out_spatial: the output's spatial dims (see ConvTransposeAttrs). bias: -1 for none.
  Status conv_transpose(const std::string& name, int x, int w, int bias, ConvTransposeAttrs attrs,
                        const std::vector<int64_t>& out_spatial, int* y);
  Status instancenorm(const std::string& name, int x, int scale, int bias, double epsilon, int* y);
  Status lrn(const std::string& name, int x, const LrnDesc& lrn, int* y);
  // Reduces the listed axes (each in [0, rank), any order) to size 1; the rank is kept.
  Status reduce(const std::string& name, int x, ReduceOp op, const std::vector<int64_t>& axes, int* y);
  // c = op(a, b) as BOOL, a and b of one dtype broadcast to each other (numpy rules: the shorter
  // rank padded with leading 1s).
  Status logic(const std::string& name, LogicOp op, int a, int b, int* y);
  // y = cond ? a : b; cond BOOL, a and b of one dtype, all three broadcast together.
  Status where(const std::string& name, int cond, int a, int b, int* y);
  // The I64 index of the extreme element along `axis` (in [0, rank)); the rank is kept.
  Status arg_reduce(const std::string& name, int x, ArgReduceOp op, int axis, bool select_last_index, int* y);
  // NonMaxSuppression of boxes [B, N, 4] and scores [B, C, N] (one float dtype): I64 [B * C *
  // min(max_output_boxes_per_class, N), 3], padded with rows of -1.
  Status nms(const std::string& name, int boxes, int scores, const NmsAttrs& a, int* y);
  // The builder of the ops whose attributes are their schema table's struct (fb::<Params>T, see
  // above): checks the input indices and count (op_list.h's inputs column), infers the output's
  // dtype and dims with the op's output rule (schema/op_rules.h: the runtime's, which its loader
  // checks the file with) and adds the node. The op type is the one whose attributes `attrs`
  // holds. BAD_PARAM naming the node for an op with its own builder above, or for inputs the
  // rule refuses.
  Status add_op(const std::string& name, std::vector<int> inputs, NodeAttrs attrs, int* y);
  // x with `updates` scattered at `indices`: along `axis` (ScatterElements: indices and updates of
  // one shape, x's rank, each dim at most x's but at the axis) or, with nd, as index tuples of
  // length k = indices' last dim (ScatterND: updates' dims are indices' but the last, then x's from
  // k on). The result has x's dims and dtype.
  Status scatter(const std::string& name, int x, int indices, int updates, bool nd, ScatterReduction reduction,
                 int axis, int* y);

  // Kahn's algorithm over the node dependencies (a node depends on the producers of its inputs);
  // among ready nodes the lowest index goes first, so a graph built in execution order keeps it.
  // BAD_PARAM for a cycle (naming a node on it), a tensor with two producers, or a bad index.
  Status topological_order(std::vector<int>* order) const;

 private:
  Status check_tensor(const std::string& node, int t, const char* what) const;
  // check_tensor of a node's data and weight inputs and its optional bias (-1: none).
  Status check_inputs_and_bias(const std::string& node, int x, const char* x_what, int w, const char* w_what,
                               int bias) const;
  Status finish(Node n, DType dtype, std::vector<int64_t> dims, int* y);
};

// Structural checks of one node for code that consumes graphs built by hand (passes, the writer):
// a known op type, attributes of the op's type, the op's input count (the inputs column of
// schema/op_list.h), exactly one output, every index in range, and a TRANSFORM's `to` equal to
// its output's dtype.
// BAD_PARAM naming the node otherwise. Shapes are the builders' business and not rechecked.
Status check_node(const Graph& g, int node);

// Kahn's algorithm over n items: users[i] lists the items that need item i first, waiting[i]
// counts the items item i needs. Among ready items the lowest index goes first. The result is
// shorter than n when the dependencies have a cycle. (Graph::topological_order and the ONNX
// importer's node order share it.)
std::vector<int> dependency_order(const std::vector<std::vector<int>>& users, std::vector<int> waiting);

// topological_order (into *order) plus check_node for every node.
Status check_graph(const Graph& g, std::vector<int>* order);

// The names a graph's tensors and nodes use; fresh() hands out unused ones for what passes add
// ("w.bnfold", then "w.bnfold_1", ...).
class NameSet {
 public:
  explicit NameSet(const Graph& g);
  std::string fresh(const std::string& base);

 private:
  std::set<std::string> used_;
};

}  // namespace ir
}  // namespace jet
