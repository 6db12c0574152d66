// The IR: tensors and graphs, then every op type in schema/op_list.h's order: its builder (the
// attributes checked, the output's shape inferred) followed by its write_params (op_params.h: the
// schema table the writer stores for it), so that one op's converter side is in one place.
#include "ir.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <sstream>
#include <utility>

#include "jet/dnn/conv.h"
#include "jet/dnn/detection.h"
#include "op_params.h"
#include "op_rules.h"

namespace jet {
namespace ir {

namespace {

Status bad(OpType op, const std::string& node, const std::string& what) {
  return Status(StatusCode::BAD_PARAM,
                std::string(op_type_name(op)) + " '" + node + "': " + what);
}

const int64_t* ptr_or_null(const std::vector<int64_t>& v) { return v.empty() ? nullptr : v.data(); }

Status check_len(OpType op, const std::string& node, const std::vector<int64_t>& v, int rank,
                 const char* what) {
  if (!v.empty() && static_cast<int>(v.size()) != rank) {
    return bad(op, node, std::string(what) + " has " + std::to_string(v.size()) +
                             " entries, expected " + std::to_string(rank));
  }
  return Status::success();
}

// The spatial vectors of ConvAttrs or ConvTransposeAttrs: each empty or `sr` entries.
template <typename ConvLikeAttrs>
Status check_conv_lens(OpType op, const std::string& node, const ConvLikeAttrs& a, int sr) {
  Status st = check_len(op, node, a.pad_begin, sr, "pad_begin");
  if (st.ok()) st = check_len(op, node, a.pad_end, sr, "pad_end");
  if (st.ok()) st = check_len(op, node, a.strides, sr, "strides");
  if (st.ok()) st = check_len(op, node, a.dilations, sr, "dilations");
  return st;
}

Status check_dims(const std::string& name, const std::vector<int64_t>& dims) {
  if (dims.empty() || static_cast<int>(dims.size()) > kMaxRank) {
    return Status(StatusCode::BAD_PARAM, "tensor '" + name + "': rank " +
                                             std::to_string(dims.size()) + " not in 1.." +
                                             std::to_string(kMaxRank));
  }
  for (int64_t d : dims) {
    if (d < 1) return Status(StatusCode::BAD_PARAM, "tensor '" + name + "': dims " + dims_text(dims) + " has a dim < 1");
  }
  // The converter's cap on any tensor, inputs, constants and every op's output alike (Pad,
  // Resize, Concat, ...): beyond it no model is real, and byte sizes must not wrap.
  int64_t elements = 1;
  for (int64_t d : dims) {
    if (elements > kMaxTensorElements / d) {
      return Status(StatusCode::BAD_PARAM, "tensor '" + name + "': dims " + dims_text(dims) + " have more than 2^40 elements");
    }
    elements *= d;
  }
  return Status::success();
}

template <typename ConvLikeAttrs>
ConvDesc conv_like_desc(const ConvLikeAttrs& a, int spatial_rank) {
  return ConvDesc::make(spatial_rank, ptr_or_null(a.pad_begin), ptr_or_null(a.pad_end), ptr_or_null(a.strides),
                        ptr_or_null(a.dilations), a.groups);
}

// The schema writers' helpers: an absent vector for an empty one (the runtime's defaults), and a
// fused or standalone activation.
using VecI64 = flatbuffers::Offset<flatbuffers::Vector<int64_t>>;

VecI64 vec_or_null(flatbuffers::FlatBufferBuilder& b, const std::vector<int64_t>& v) {
  return v.empty() ? VecI64() : b.CreateVector(v);
}

flatbuffers::Offset<fb::Activation> write_activation(flatbuffers::FlatBufferBuilder& b, const ActivationDesc& a) {
  return fb::CreateActivation(b, static_cast<int32_t>(a.mode), a.alpha, a.beta);
}

}  // namespace

ConvDesc conv_desc(const ConvAttrs& a, int spatial_rank) { return conv_like_desc(a, spatial_rank); }
ConvDesc conv_desc(const ConvTransposeAttrs& a, int spatial_rank) { return conv_like_desc(a, spatial_rank); }

ResizeDesc resize_desc(const ResizeAttrs& a) {
  ResizeDesc rd;
  rd.mode = a.mode;
  rd.coord = a.coord;
  rd.nearest = a.nearest;
  for (size_t i = 0; i < a.scales.size() && i < 3; ++i) rd.scales[i] = a.scales[i];
  rd.cubic_coeff_a = a.cubic_coeff_a;
  rd.exclude_outside = a.exclude_outside;
  return rd;
}

const char* tensor_kind_name(TensorKind k) {
  switch (k) {
    case TensorKind::INPUT: return "INPUT";
    case TensorKind::OUTPUT: return "OUTPUT";
    case TensorKind::CONSTANT: return "CONSTANT";
    case TensorKind::ACTIVATION: return "ACTIVATION";
  }
  return "?";
}

namespace {

struct OpTraits {
  const char* name;
  bool in_place;
  bool any_dtype;
};
#define JET_IR_OP_TRAITS(ENUM, fn, Attrs, Params, name, in_place, layout, f32_params, dtypes, backward, inputs) \
  {name, in_place, OpDTypes::dtypes == OpDTypes::ANY},
constexpr OpTraits kOpTraits[] = {JET_OPS(JET_IR_OP_TRAITS)};
#undef JET_IR_OP_TRAITS
static_assert(sizeof(kOpTraits) / sizeof(kOpTraits[0]) == static_cast<size_t>(OpType::COUNT),
              "one JET_OPS row (schema/op_list.h) per ir::OpType");

bool known(OpType op) { return static_cast<size_t>(op) < static_cast<size_t>(OpType::COUNT); }

// How many inputs a node of a known op type (check_node and add_op) has: the inputs column of
// op_list.h, a number or an expression of the op's attribute struct `a`.
Status check_input_count(const Node& n) {
  constexpr int ONE_OR_MORE = -1;
  int want_inputs = 1;
  switch (n.op) {
#define JET_IR_OP_INPUTS(ENUM, fn, Attrs, Params, name, in_place, layout, f32_params, dtypes, backward, inputs) \
  case OpType::ENUM: {                                                                                          \
    const Attrs& a = std::get<Attrs>(n.attrs);                                                                  \
    static_cast<void>(a);                                                                                       \
    want_inputs = inputs;                                                                                       \
    break;                                                                                                      \
  }
    JET_OPS(JET_IR_OP_INPUTS)
#undef JET_IR_OP_INPUTS
    case OpType::COUNT: break;  // refused by the callers
  }
  auto fail = [&](const std::string& what) {
    return Status(StatusCode::BAD_PARAM, "node '" + n.name + "': " + what);
  };
  if (want_inputs == ONE_OR_MORE) {
    if (n.inputs.empty()) return fail(std::string(op_type_name(n.op)) + " with no inputs, expected one or more");
  } else if (n.inputs.size() != static_cast<size_t>(want_inputs)) {
    return fail(std::string(op_type_name(n.op)) + " with " + std::to_string(n.inputs.size()) +
                " inputs, expected " + std::to_string(want_inputs));
  }
  return Status::success();
}

}  // namespace

const char* op_type_name(OpType op) { return known(op) ? kOpTraits[static_cast<size_t>(op)].name : "?"; }

bool op_allows_in_place(OpType op) { return known(op) && kOpTraits[static_cast<size_t>(op)].in_place; }

bool op_takes_any_dtype(OpType op) { return known(op) && kOpTraits[static_cast<size_t>(op)].any_dtype; }

int64_t Tensor::elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

int64_t Tensor::span() const {
  if (strides.empty() || strides.size() != dims.size()) return elements();
  int64_t last = 0;
  for (size_t i = 0; i < dims.size(); ++i) last += (dims[i] - 1) * strides[i];
  return last + 1;
}

bool Tensor::is_packed() const {
  if (strides.empty()) return true;
  if (strides.size() != dims.size()) return false;
  const std::vector<int64_t> packed = packed_strides(dims);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] > 1 && strides[i] != packed[i]) return false;  // a size-1 dim's stride is never used
  }
  return true;
}

TensorDesc Tensor::desc() const {
  const int rank = static_cast<int>(dims.size());
  if (strides.empty() || strides.size() != dims.size()) return TensorDesc::packed(dtype, rank, dims.data());
  return TensorDesc::strided(dtype, rank, dims.data(), strides.data());
}

std::vector<int64_t> packed_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

std::vector<int64_t> channels_last_strides(const std::vector<int64_t>& dims) {
  const size_t rank = dims.size();
  if (rank < 3 || rank > 5) return packed_strides(dims);
  std::vector<int64_t> s(rank, 1);
  int64_t step = dims[1];  // C is contiguous
  for (size_t i = rank; i-- > 2;) {
    s[i] = step;
    step *= dims[i];
  }
  s[0] = step;
  return s;
}

int Graph::add_tensor(Tensor t) {
  tensors.push_back(std::move(t));
  return static_cast<int>(tensors.size()) - 1;
}

int Graph::add_node(Node n) {
  nodes.push_back(std::move(n));
  return static_cast<int>(nodes.size()) - 1;
}

Status Graph::add_input(const std::string& name, DType dtype, std::vector<int64_t> dims, int* out) {
  Status st = check_dims(name, dims);
  if (!st.ok()) return st;
  *out = add_tensor(Tensor{name, dtype, std::move(dims), TensorKind::INPUT, {}, {}, {}});
  return Status::success();
}

Status Graph::add_constant(const std::string& name, DType dtype, std::vector<int64_t> dims,
                           int* out) {
  Status st = check_dims(name, dims);
  if (!st.ok()) return st;
  *out = add_tensor(Tensor{name, dtype, std::move(dims), TensorKind::CONSTANT, {}, {}, {}});
  return Status::success();
}

Status Graph::mark_output(int t) {
  if (t < 0 || t >= static_cast<int>(tensors.size())) {
    return Status(StatusCode::BAD_PARAM, "mark_output: tensor index " + std::to_string(t) + " out of range");
  }
  if (tensors[t].kind != TensorKind::ACTIVATION && tensors[t].kind != TensorKind::OUTPUT) {
    return Status(StatusCode::BAD_PARAM, "mark_output: tensor '" + tensors[t].name + "' is " +
                                             tensor_kind_name(tensors[t].kind) +
                                             ", not a node's output");
  }
  tensors[t].kind = TensorKind::OUTPUT;
  return Status::success();
}

Status Graph::check_tensor(const std::string& node, int t, const char* what) const {
  if (t < 0 || t >= static_cast<int>(tensors.size())) {
    return Status(StatusCode::BAD_PARAM, "node '" + node + "': " + what + " tensor index " +
                                             std::to_string(t) + " out of range");
  }
  return Status::success();
}

Status Graph::check_inputs_and_bias(const std::string& node, int x, const char* x_what, int w, const char* w_what,
                                    int bias) const {
  Status st = check_tensor(node, x, x_what);
  if (st.ok()) st = check_tensor(node, w, w_what);
  if (st.ok() && bias >= 0) st = check_tensor(node, bias, "bias");
  return st;
}

Status Graph::finish(Node n, DType dtype, std::vector<int64_t> dims, int* y) {
  Status st = check_dims(n.name, dims);
  if (!st.ok()) return bad(n.op, n.name, "inferred output " + st.message());
  if (!op_takes_any_dtype(n.op)) {
    // Float ops: an integer or bool operand is a model this runtime cannot compute (yet), never
    // something to read as floats.
    for (int t : n.inputs) {
      if (!dtype_is_float(tensors[t].dtype)) {
        return Status(StatusCode::NOT_SUPPORTED, std::string(op_type_name(n.op)) + " '" + n.name + "': input '" +
                                                     tensors[t].name + "' is " + dtype_name(tensors[t].dtype) +
                                                     "; this op computes on f32 and f16 tensors only");
      }
    }
  }
  const int out = add_tensor(Tensor{n.name, dtype, std::move(dims), TensorKind::ACTIVATION, {}, {}, {}});
  n.outputs = {out};
  add_node(std::move(n));
  *y = out;
  return Status::success();
}

Status Graph::conv(const std::string& name, int x, int w, int bias, int residual, ConvAttrs a,
                   int* y) {
  const OpType op = OpType::CONV;
  JET_RETURN_IF_ERROR(check_inputs_and_bias(name, x, "x", w, "w", bias));
  if (residual >= 0) JET_RETURN_IF_ERROR(check_tensor(name, residual, "residual"));
  const Tensor& tx = tensors[x];
  const Tensor& tw = tensors[w];
  const int rank = static_cast<int>(tx.dims.size());
  if (rank < 3 || rank > 5) return bad(op, name, "x has rank " + std::to_string(rank) + ", expected 3..5");
  if (static_cast<int>(tw.dims.size()) != rank) {
    return bad(op, name, "w has dims " + dims_text(tw.dims) + ", rank differs from x " + dims_text(tx.dims));
  }
  if (tw.dtype != tx.dtype) return bad(op, name, "w and x dtypes differ");
  const int sr = rank - 2;
  JET_RETURN_IF_ERROR(check_conv_lens(op, name, a, sr));
  const ConvDesc cd = conv_desc(a, sr);
  Status st = cd.validate();
  if (!st.ok()) return bad(op, name, st.message());
  st = a.act.validate();
  if (!st.ok()) return bad(op, name, st.message());
  const TensorDesc xd = TensorDesc::packed(tx.dtype, rank, tx.dims.data());
  const FilterDesc wd = FilterDesc::make(tw.dtype, FilterLayout::KCRS, rank, tw.dims.data());
  int64_t out[kMaxRank] = {};
  st = conv_output_dims(xd, wd, cd, out);
  if (!st.ok()) {
    return bad(op, name, st.message() + " (x " + dims_text(tx.dims) + ", w " + dims_text(tw.dims) +
                             ", groups " + std::to_string(a.groups) + ")");
  }
  std::vector<int64_t> ydims(out, out + rank);
  const int64_t k = ydims[1];
  if (bias >= 0 && tensors[bias].elements() != k) {
    return bad(op, name, "bias has dims " + dims_text(tensors[bias].dims) + ", expected " +
                             std::to_string(k) + " elements (one per output channel)");
  }
  if (residual >= 0 && tensors[residual].dims != ydims) {
    return bad(op, name, "residual has dims " + dims_text(tensors[residual].dims) +
                             ", expected the output dims " + dims_text(ydims));
  }
  a.has_bias = bias >= 0;
  a.has_residual = residual >= 0;
  Node n{name, op, {x, w}, {}, a};
  if (bias >= 0) n.inputs.push_back(bias);
  if (residual >= 0) n.inputs.push_back(residual);
  return finish(std::move(n), tx.dtype, std::move(ydims), y);
}

flatbuffers::Offset<fb::ConvParams> write_params(flatbuffers::FlatBufferBuilder& b, const ConvAttrs& a,
                                                 const ParamsContext& c) {
  const VecI64 pb = vec_or_null(b, a.pad_begin), pe = vec_or_null(b, a.pad_end);
  const VecI64 st = vec_or_null(b, a.strides), dl = vec_or_null(b, a.dilations);
  const auto act = write_activation(b, a.act);
  return fb::CreateConvParams(b, pb, pe, st, dl, a.groups, act, a.has_bias, a.has_residual, 1.f, 1.f, c.conv_algo,
                              static_cast<fb::ConvPreference>(static_cast<int32_t>(c.conv_preference)),
                              c.workspace_limit);
}

Status Graph::pool(const std::string& name, int x, const PoolAttrs& a, int* y) {
  const OpType op = OpType::POOL;
  JET_RETURN_IF_ERROR(check_tensor(name, x, "x"));
  const Tensor& tx = tensors[x];
  const int rank = static_cast<int>(tx.dims.size());
  if (rank < 3 || rank > 5) return bad(op, name, "x has rank " + std::to_string(rank) + ", expected 3..5");
  const int sr = rank - 2;
  if (static_cast<int>(a.window.size()) != sr) {
    return bad(op, name, "window has " + std::to_string(a.window.size()) + " entries, expected " + std::to_string(sr));
  }
  JET_RETURN_IF_ERROR(check_len(op, name, a.pad_begin, sr, "pad_begin"));
  JET_RETURN_IF_ERROR(check_len(op, name, a.pad_end, sr, "pad_end"));
  JET_RETURN_IF_ERROR(check_len(op, name, a.strides, sr, "strides"));
  const PoolDesc pd = PoolDesc::make(a.mode, sr, a.window.data(), ptr_or_null(a.pad_begin),
                                     ptr_or_null(a.pad_end), ptr_or_null(a.strides), nullptr,
                                     a.ceil_mode);
  Status st = pd.validate();
  if (!st.ok()) return bad(op, name, st.message());
  int64_t out[kMaxRank] = {};
  st = pool_output_dims(TensorDesc::packed(tx.dtype, rank, tx.dims.data()), pd, out);
  if (!st.ok()) return bad(op, name, st.message() + " (x " + dims_text(tx.dims) + ")");
  return finish(Node{name, op, {x}, {}, a}, tx.dtype, std::vector<int64_t>(out, out + rank), y);
}

flatbuffers::Offset<fb::PoolParams> write_params(flatbuffers::FlatBufferBuilder& b, const PoolAttrs& a,
                                                 const ParamsContext&) {
  const VecI64 win = vec_or_null(b, a.window), pb = vec_or_null(b, a.pad_begin);
  const VecI64 pe = vec_or_null(b, a.pad_end), st = vec_or_null(b, a.strides);
  return fb::CreatePoolParams(b, static_cast<int32_t>(a.mode), win, pb, pe, st, a.ceil_mode, false);
}

Status Graph::max_pool(const std::string& name, int x, int64_t window, int64_t stride, int64_t pad,
                       int* y) {
  PoolAttrs a;
  a.mode = PoolMode::MAX;
  a.window = {window, window};
  a.pad_begin = a.pad_end = {pad, pad};
  a.strides = {stride, stride};
  return pool(name, x, a, y);
}

Status Graph::global_avg_pool(const std::string& name, int x, int* y) {
  return global_pool(name, x, PoolMode::AVG_INCLUDE_PAD, y);
}

Status Graph::global_pool(const std::string& name, int x, PoolMode mode, int* y) {
  const OpType op = OpType::GLOBAL_POOL;
  JET_RETURN_IF_ERROR(check_tensor(name, x, "x"));
  const Tensor& tx = tensors[x];
  const int rank = static_cast<int>(tx.dims.size());
  if (rank < 3 || rank > 5) return bad(op, name, "x has rank " + std::to_string(rank) + ", expected 3..5");
  if (!enum_in_range(mode)) {
    return bad(op, name, "unknown pool mode " + std::to_string(static_cast<int>(mode)));
  }
  GlobalPoolAttrs a;
  a.mode = mode;
  int64_t out[kMaxRank] = {};
  Status st = pool_output_dims(TensorDesc::packed(tx.dtype, rank, tx.dims.data()),
                               PoolDesc::global(a.mode, rank - 2), out);
  if (!st.ok()) return bad(op, name, st.message());
  return finish(Node{name, op, {x}, {}, a}, tx.dtype, std::vector<int64_t>(out, out + rank), y);
}

flatbuffers::Offset<fb::PoolParams> write_params(flatbuffers::FlatBufferBuilder& b, const GlobalPoolAttrs& a,
                                                 const ParamsContext&) {
  return fb::CreatePoolParams(b, static_cast<int32_t>(a.mode), 0, 0, 0, 0, false, true);
}

Status Graph::activation(const std::string& name, int x, const ActivationDesc& act, int* y) {
  JET_RETURN_IF_ERROR(check_tensor(name, x, "x"));
  Status st = act.validate();
  if (!st.ok()) return bad(OpType::ACTIVATION, name, st.message());
  const Tensor& tx = tensors[x];
  return finish(Node{name, OpType::ACTIVATION, {x}, {}, ActivationAttrs{act}}, tx.dtype, tx.dims, y);
}

Status Graph::relu(const std::string& name, int x, int* y) {
  return activation(name, x, ActivationDesc::relu(), y);
}

Status Graph::relu6(const std::string& name, int x, int* y) {
  return activation(name, x, ActivationDesc::relu6(), y);
}

flatbuffers::Offset<fb::ActivationParams> write_params(flatbuffers::FlatBufferBuilder& b, const ActivationAttrs& a,
                                                       const ParamsContext&) {
  const auto act = write_activation(b, a.act);
  return fb::CreateActivationParams(b, act);
}

Status Graph::op_tensor(const std::string& name, TensorOp top, int a, int b, int* y) {
  const OpType op = OpType::OP_TENSOR;
  JET_RETURN_IF_ERROR(check_tensor(name, a, "a"));
  JET_RETURN_IF_ERROR(check_tensor(name, b, "b"));
  const Tensor& ta = tensors[a];
  const Tensor& tb = tensors[b];
  if (ta.dtype != tb.dtype) return bad(op, name, "a and b dtypes differ");
  if (ta.dtype == DType::BOOL) {
    return Status(StatusCode::NOT_SUPPORTED, "OpTensor '" + name + "': a and b are bool; it computes on f32, f16, i32 and i64");
  }
  if (ta.dims.size() != tb.dims.size()) {
    return bad(op, name, "a " + dims_text(ta.dims) + " and b " + dims_text(tb.dims) + " differ in rank");
  }
  std::vector<int64_t> out(ta.dims.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t da = ta.dims[i], db = tb.dims[i];
    if (da != db && da != 1 && db != 1) {
      return bad(op, name, "a " + dims_text(ta.dims) + " and b " + dims_text(tb.dims) +
                               " do not broadcast (dim " + std::to_string(i) + ")");
    }
    out[i] = da == 1 ? db : da;
  }
  return finish(Node{name, op, {a, b}, {}, OpTensorAttrs{top}}, ta.dtype, std::move(out), y);
}

Status Graph::add(const std::string& name, int a, int b, int* y) {
  return op_tensor(name, TensorOp::ADD, a, b, y);
}

flatbuffers::Offset<fb::OpTensorParams> write_params(flatbuffers::FlatBufferBuilder& b, const OpTensorAttrs& a,
                                                     const ParamsContext&) {
  return fb::CreateOpTensorParams(b, static_cast<int32_t>(a.op));
}

Status Graph::gemm(const std::string& name, int a, int b, int bias, const GemmAttrs& attrs, int* y) {
  const OpType op = OpType::GEMM;
  JET_RETURN_IF_ERROR(check_inputs_and_bias(name, a, "a", b, "b", bias));
  const Tensor& ta = tensors[a];
  const Tensor& tb = tensors[b];
  const size_t rank = ta.dims.size();
  if ((rank != 2 && rank != 3) || tb.dims.size() != rank) {
    return bad(op, name, "a " + dims_text(ta.dims) + " and b " + dims_text(tb.dims) +
                             " must both have rank 2 or both rank 3");
  }
  if (ta.dtype != tb.dtype) return bad(op, name, "a and b dtypes differ");
  const size_t r = rank - 2;
  const int64_t m = attrs.trans_a ? ta.dims[r + 1] : ta.dims[r];
  const int64_t ka = attrs.trans_a ? ta.dims[r] : ta.dims[r + 1];
  const int64_t kb = attrs.trans_b ? tb.dims[r + 1] : tb.dims[r];
  const int64_t n = attrs.trans_b ? tb.dims[r] : tb.dims[r + 1];
  if (ka != kb) {
    return bad(op, name, "a " + dims_text(ta.dims) + " has K = " + std::to_string(ka) + " but b " +
                             dims_text(tb.dims) + " has K = " + std::to_string(kb));
  }
  std::vector<int64_t> out;
  if (rank == 3) {
    const int64_t ba = ta.dims[0], bb = tb.dims[0];
    if (ba != bb && ba != 1 && bb != 1) return bad(op, name, "batch dims do not broadcast");
    out.push_back(ba == 1 ? bb : ba);
  }
  out.push_back(m);
  out.push_back(n);
  if (bias >= 0) {
    const Tensor& tc = tensors[bias];
    bool okb = tc.dims.size() == rank || tc.dims.size() == 1;
    if (okb && tc.dims.size() == 1) okb = tc.dims[0] == n;
    for (size_t i = 0; okb && tc.dims.size() == rank && i < rank; ++i) {
      okb = tc.dims[i] == 1 || tc.dims[i] == out[i];
    }
    if (!okb) {
      return bad(op, name, "bias " + dims_text(tc.dims) + " does not broadcast to " + dims_text(out));
    }
  }
  GemmAttrs ga = attrs;
  ga.has_bias = bias >= 0;
  Node nd{name, op, {a, b}, {}, ga};
  if (bias >= 0) nd.inputs.push_back(bias);
  return finish(std::move(nd), ta.dtype, std::move(out), y);
}

flatbuffers::Offset<fb::GemmParams> write_params(flatbuffers::FlatBufferBuilder& b, const GemmAttrs& a,
                                                 const ParamsContext&) {
  return fb::CreateGemmParams(b, a.trans_a, a.trans_b, a.has_bias, 1.f, 1.f);
}

Status Graph::softmax(const std::string& name, int x, int axis, int* y) {
  return softmax(name, x, axis, SoftmaxAlgo::ACCURATE, y);
}

Status Graph::softmax(const std::string& name, int x, int axis, SoftmaxAlgo algo, int* y) {
  JET_RETURN_IF_ERROR(check_tensor(name, x, "x"));
  const Tensor& tx = tensors[x];
  if (axis < 0 || axis >= static_cast<int>(tx.dims.size())) {
    return bad(OpType::SOFTMAX, name, "axis " + std::to_string(axis) + " out of range for " + dims_text(tx.dims));
  }
  if (!enum_in_range(algo)) {
    return bad(OpType::SOFTMAX, name, "unknown softmax algorithm " + std::to_string(static_cast<int>(algo)));
  }
  SoftmaxAttrs a;
  a.algo = algo;
  a.axis = axis;
  return finish(Node{name, OpType::SOFTMAX, {x}, {}, a}, tx.dtype, tx.dims, y);
}

flatbuffers::Offset<fb::SoftmaxParams> write_params(flatbuffers::FlatBufferBuilder& b, const SoftmaxAttrs& a,
                                                    const ParamsContext&) {
  return fb::CreateSoftmaxParams(b, static_cast<int32_t>(a.algo), a.axis);
}

Status Graph::concat(const std::string& name, const std::vector<int>& xs, int axis, int* y) {
  const OpType op = OpType::CONCAT;
  if (xs.empty()) return bad(op, name, "no inputs");
  for (int t : xs) JET_RETURN_IF_ERROR(check_tensor(name, t, "input"));
  std::vector<int64_t> out = tensors[xs[0]].dims;
  if (axis < 0 || axis >= static_cast<int>(out.size())) {
    return bad(op, name, "axis " + std::to_string(axis) + " out of range for " + dims_text(out));
  }
  out[axis] = 0;
  for (int t : xs) {
    const Tensor& tt = tensors[t];
    bool same = tt.dims.size() == out.size();
    for (size_t i = 0; same && i < out.size(); ++i) {
      same = static_cast<int>(i) == axis || tt.dims[i] == out[i];
    }
    if (!same) {
      return bad(op, name, "input '" + tt.name + "' " + dims_text(tt.dims) + " differs from '" +
                               tensors[xs[0]].name + "' " + dims_text(tensors[xs[0]].dims) +
                               " outside axis " + std::to_string(axis));
    }
    out[axis] += tt.dims[axis];
  }
  return finish(Node{name, op, xs, {}, ConcatAttrs{axis}}, tensors[xs[0]].dtype, std::move(out), y);
}

flatbuffers::Offset<fb::ConcatParams> write_params(flatbuffers::FlatBufferBuilder& b, const ConcatAttrs& a,
                                                   const ParamsContext&) {
  return fb::CreateConcatParams(b, a.axis);
}

Status Graph::reshape(const std::string& name, int x, std::vector<int64_t> shape, int* y) {
  const OpType op = OpType::RESHAPE;
  JET_RETURN_IF_ERROR(check_tensor(name, x, "x"));
  const Tensor& tx = tensors[x];
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1 && infer < 0) {
      infer = static_cast<int>(i);
    } else if (shape[i] < 1) {
      return bad(op, name, "shape " + dims_text(shape) + " has an invalid entry");
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (tx.elements() % known != 0) {
      return bad(op, name, "cannot reshape " + dims_text(tx.dims) + " to " + dims_text(shape));
    }
    shape[infer] = tx.elements() / known;
  }
  Tensor probe{name, tx.dtype, shape, TensorKind::ACTIVATION, {}, {}, {}};
  if (probe.elements() != tx.elements()) {
    return bad(op, name, "cannot reshape " + dims_text(tx.dims) + " (" + std::to_string(tx.elements()) +
                             " elements) to " + dims_text(shape));
  }
  return finish(Node{name, op, {x}, {}, ReshapeAttrs{shape}}, tx.dtype, shape, y);
}

Status Graph::flatten(const std::string& name, int x, int axis, int* y) {
  JET_RETURN_IF_ERROR(check_tensor(name, x, "x"));
  const Tensor& tx = tensors[x];
  if (axis < 0 || axis > static_cast<int>(tx.dims.size())) {
    return bad(OpType::RESHAPE, name, "flatten axis " + std::to_string(axis) + " out of range for " + dims_text(tx.dims));
  }
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < tx.dims.size(); ++i) (static_cast<int>(i) < axis ? outer : inner) *= tx.dims[i];
  return reshape(name, x, {outer, inner}, y);
}

flatbuffers::Offset<fb::ReshapeParams> write_params(flatbuffers::FlatBufferBuilder& b, const ReshapeAttrs&,
                                                    const ParamsContext&) {
  return fb::CreateReshapeParams(b);  // the output tensor's dims are the shape
}

Status Graph::batchnorm(const std::string& name, int x, int scale, int bias, int mean, int var,
                        double epsilon, int* y) {
  const OpType op = OpType::BATCHNORM;
  JET_RETURN_IF_ERROR(check_tensor(name, x, "x"));
  const int params[4] = {scale, bias, mean, var};
  const char* pnames[4] = {"scale", "bias", "mean", "var"};
  for (int i = 0; i < 4; ++i) JET_RETURN_IF_ERROR(check_tensor(name, params[i], pnames[i]));
  const Tensor& tx = tensors[x];
  if (tx.dims.size() < 3 || tx.dims.size() > 5) return bad(op, name, "x " + dims_text(tx.dims) + " must have rank 3..5");
  if (!(epsilon > 0)) return bad(op, name, "epsilon must be > 0");
  for (int i = 0; i < 4; ++i) {
    if (tensors[params[i]].elements() != tx.dims[1]) {
      return bad(op, name, std::string(pnames[i]) + " has " + std::to_string(tensors[params[i]].elements()) +
                               " elements, expected C = " + std::to_string(tx.dims[1]));
    }
  }
  return finish(Node{name, op, {x, scale, bias, mean, var}, {}, BatchNormAttrs{epsilon}}, tx.dtype, tx.dims, y);
}

flatbuffers::Offset<fb::BatchNormParams> write_params(flatbuffers::FlatBufferBuilder& b, const BatchNormAttrs& a,
                                                      const ParamsContext&) {
  return fb::CreateBatchNormParams(b, a.epsilon);
}

Status Graph::transform(const std::string& name, int x, DType to, int* y) {
  JET_RETURN_IF_ERROR(check_tensor(name, x, "x"));
  const Tensor& tx = tensors[x];
  return finish(Node{name, OpType::TRANSFORM, {x}, {}, TransformAttrs{to}}, to, tx.dims, y);
}

flatbuffers::Offset<fb::TransformParams> write_params(flatbuffers::FlatBufferBuilder& b, const TransformAttrs&,
                                                      const ParamsContext&) {
  return fb::CreateTransformParams(b);  // the output tensor's dtype is `to`
}

Status Graph::slice(const std::string& name, int x, SliceAttrs a, int* y) {
  const OpType op = OpType::SLICE;
  JET_RETURN_IF_ERROR(check_tensor(name, x, "x"));
  const Tensor& tx = tensors[x];
  const size_t rank = tx.dims.size();
  if (a.perm.empty()) {
    for (size_t d = 0; d < rank; ++d) a.perm.push_back(static_cast<int64_t>(d));
  }
  if (a.starts.size() != rank || a.steps.size() != rank || a.sizes.size() != rank || a.perm.size() != rank) {
    return bad(op, name, "starts, steps, sizes and perm need " + std::to_string(rank) + " entries each (x is " +
                             dims_text(tx.dims) + ")");
  }
  std::vector<bool> seen(rank, false);
  for (int64_t p : a.perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[p]) {
      return bad(op, name, "perm " + dims_text(a.perm) + " is not a permutation of 0.." + std::to_string(rank - 1));
    }
    seen[p] = true;
  }
  for (size_t k = 0; k < rank; ++k) {
    const int64_t dim = tx.dims[k], b = a.starts[k], s = a.steps[k], n = a.sizes[k];
    // The last element read, b + (n - 1) * s, must be < dim; written by division (no overflow).
    if (b < 0 || b >= dim || s < 1 || n < 1 || (dim - 1 - b) / s < n - 1) {
      return bad(op, name, "dim " + std::to_string(k) + ": start " + std::to_string(b) + ", step " +
                               std::to_string(s) + ", " + std::to_string(n) + " elements leave x's " +
                               std::to_string(dim) + " (start >= 0, step >= 1, within the dim)");
    }
  }
  std::vector<int64_t> out(rank);
  for (size_t d = 0; d < rank; ++d) out[d] = a.sizes[a.perm[d]];
  return finish(Node{name, op, {x}, {}, std::move(a)}, tx.dtype, std::move(out), y);
}

flatbuffers::Offset<fb::SliceParams> write_params(flatbuffers::FlatBufferBuilder& b, const SliceAttrs& a,
                                                  const ParamsContext&) {
  const VecI64 starts = vec_or_null(b, a.starts), steps = vec_or_null(b, a.steps);
  const VecI64 perm = vec_or_null(b, a.perm);
  return fb::CreateSliceParams(b, starts, steps, perm);
}

Status Graph::pad(const std::string& name, int x, const PadAttrs& a, int* y) {
  const OpType op = OpType::PAD;
  JET_RETURN_IF_ERROR(check_tensor(name, x, "x"));
  const Tensor& tx = tensors[x];
  const size_t rank = tx.dims.size();
  if (a.pad_begin.size() != rank || a.pad_end.size() != rank) {
    return bad(op, name, "pad_begin and pad_end need " + std::to_string(rank) + " entries each");
  }
  if (a.mode != PadMode::CONSTANT && a.mode != PadMode::REFLECT && a.mode != PadMode::EDGE) {
    return bad(op, name, "unknown pad mode " + std::to_string(static_cast<int>(a.mode)));
  }
  const int64_t limit = int64_t(1) << 40;  // no real pad; keeps the sums below from overflowing
  std::vector<int64_t> out(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t b = a.pad_begin[d], e = a.pad_end[d];
    if (b > limit || b < -limit || e > limit || e < -limit) return bad(op, name, "pad out of range");
    if (a.mode == PadMode::REFLECT && (b >= tx.dims[d] || e >= tx.dims[d])) {
      return bad(op, name, "reflect pads " + std::to_string(b) + ", " + std::to_string(e) + " of dim " +
                               std::to_string(d) + " must be < its size " + std::to_string(tx.dims[d]));
    }
    out[d] = tx.dims[d] + b + e;
    if (out[d] < 1) return bad(op, name, "dim " + std::to_string(d) + " would be cropped to " + std::to_string(out[d]));
  }
  return finish(Node{name, op, {x}, {}, a}, tx.dtype, std::move(out), y);
}

flatbuffers::Offset<fb::PadParams> write_params(flatbuffers::FlatBufferBuilder& b, const PadAttrs& a,
                                                const ParamsContext&) {
  const VecI64 pb = vec_or_null(b, a.pad_begin), pe = vec_or_null(b, a.pad_end);
  return fb::CreatePadParams(b, static_cast<int32_t>(a.mode), pb, pe, a.value);
}

Status Graph::resize(const std::string& name, int x, const ResizeAttrs& a, const std::vector<int64_t>& out_dims,
                     int* y) {
  const OpType op = OpType::RESIZE;
  JET_RETURN_IF_ERROR(check_tensor(name, x, "x"));
  const Tensor& tx = tensors[x];
  const size_t rank = tx.dims.size();
  if (rank < 3 || rank > 5) return bad(op, name, "x " + dims_text(tx.dims) + " must have rank 3..5");
  if (out_dims.size() != rank || out_dims[0] != tx.dims[0] || out_dims[1] != tx.dims[1]) {
    return bad(op, name, "output " + dims_text(out_dims) + " must keep x's rank, N and C (x is " + dims_text(tx.dims) + ")");
  }
  if (!enum_in_range(a.mode)) return bad(op, name, "unknown resize mode");
  if (!enum_in_range(a.coord)) {
    return bad(op, name, "unknown coordinate transformation");
  }
  if (!enum_in_range(a.nearest)) return bad(op, name, "unknown nearest mode");
  if (!std::isfinite(a.cubic_coeff_a)) return bad(op, name, "cubic_coeff_a must be finite");
  if (!a.scales.empty() && a.scales.size() != rank - 2) {
    return bad(op, name, "scales has " + std::to_string(a.scales.size()) + " entries, expected " + std::to_string(rank - 2));
  }
  for (float s : a.scales) {
    if (!(s >= 0.f) || !std::isfinite(s)) return bad(op, name, "scales must be finite and >= 0 (0: out / in)");
  }
  return finish(Node{name, op, {x}, {}, a}, tx.dtype, out_dims, y);
}

flatbuffers::Offset<fb::ResizeParams> write_params(flatbuffers::FlatBufferBuilder& b, const ResizeAttrs& a,
                                                   const ParamsContext&) {
  const auto scales = a.scales.empty() ? flatbuffers::Offset<flatbuffers::Vector<float>>() : b.CreateVector(a.scales);
  return fb::CreateResizeParams(b, static_cast<int32_t>(a.mode), static_cast<int32_t>(a.coord),
                                static_cast<int32_t>(a.nearest), scales, a.cubic_coeff_a, a.exclude_outside);
}

Status Graph::conv_transpose(const std::string& name, int x, int w, int bias, ConvTransposeAttrs a,
                             const std::vector<int64_t>& out_spatial, int* y) {
  const OpType op = OpType::CONV_TRANSPOSE;
  JET_RETURN_IF_ERROR(check_inputs_and_bias(name, x, "x", w, "w", bias));
  const Tensor& tx = tensors[x];
  const Tensor& tw = tensors[w];
  const int rank = static_cast<int>(tx.dims.size());
  if (rank < 3 || rank > 5) return bad(op, name, "x " + dims_text(tx.dims) + " must have rank 3..5");
  if (static_cast<int>(tw.dims.size()) != rank) {
    return bad(op, name, "w " + dims_text(tw.dims) + " must have x's rank " + std::to_string(rank));
  }
  if (tw.dtype != tx.dtype) return bad(op, name, "x and w dtypes differ");
  const int sr = rank - 2;
  JET_RETURN_IF_ERROR(check_conv_lens(op, name, a, sr));
  if (static_cast<int>(out_spatial.size()) != sr) {
    return bad(op, name, "the output needs " + std::to_string(sr) + " spatial dims, got " + dims_text(out_spatial));
  }
  // Groups against the channels by division first (a huge groups value must not overflow).
  if (a.groups < 1 || a.groups > tw.dims[0] || tw.dims[0] % a.groups != 0 || tx.dims[1] != tw.dims[0]) {
    return bad(op, name, "x " + dims_text(tx.dims) + " and w " + dims_text(tw.dims) + " do not fit groups " +
                             std::to_string(a.groups) + " (w is C_in x C_out/groups x window, C_in = x's C)");
  }
  std::vector<int64_t> out = {tx.dims[0], tw.dims[1] * a.groups};
  out.insert(out.end(), out_spatial.begin(), out_spatial.end());
  JET_RETURN_IF_ERROR(check_dims(name, out));
  const ConvDesc cd = conv_desc(a, sr);
  Status st = cd.validate();
  if (!st.ok()) return bad(op, name, st.message());
  const FilterDesc fd = FilterDesc::make(tw.dtype, FilterLayout::KCRS, rank, tw.dims.data());
  int64_t back[kMaxRank] = {};
  st = conv_output_dims(TensorDesc::packed(tx.dtype, rank, out.data()), fd, cd, back);
  if (!st.ok()) return bad(op, name, "output " + dims_text(out) + ": " + st.message());
  if (std::vector<int64_t>(back, back + rank) != tx.dims) {
    return bad(op, name, "output " + dims_text(out) + " convolves back to " +
                             dims_text(std::vector<int64_t>(back, back + rank)) + ", not x's " + dims_text(tx.dims) +
                             " (output padding must be < the stride)");
  }
  if (bias >= 0 && tensors[bias].elements() != out[1]) {
    return bad(op, name, "bias has " + std::to_string(tensors[bias].elements()) + " elements, expected C_out = " +
                             std::to_string(out[1]));
  }
  if (bias >= 0 && tensors[bias].dtype != tx.dtype) return bad(op, name, "bias and x dtypes differ");
  a.has_bias = bias >= 0;
  Node nd{name, op, {x, w}, {}, a};
  if (bias >= 0) nd.inputs.push_back(bias);
  return finish(std::move(nd), tx.dtype, std::move(out), y);
}

flatbuffers::Offset<fb::ConvTransposeParams> write_params(flatbuffers::FlatBufferBuilder& b, const ConvTransposeAttrs& a,
                                                          const ParamsContext&) {
  const VecI64 pb = vec_or_null(b, a.pad_begin), pe = vec_or_null(b, a.pad_end);
  const VecI64 st = vec_or_null(b, a.strides), dl = vec_or_null(b, a.dilations);
  return fb::CreateConvTransposeParams(b, pb, pe, st, dl, a.groups, a.has_bias);
}

Status Graph::instancenorm(const std::string& name, int x, int scale, int bias, double epsilon, int* y) {
  const OpType op = OpType::INSTANCENORM;
  JET_RETURN_IF_ERROR(check_tensor(name, x, "x"));
  JET_RETURN_IF_ERROR(check_tensor(name, scale, "scale"));
  JET_RETURN_IF_ERROR(check_tensor(name, bias, "bias"));
  const Tensor& tx = tensors[x];
  if (tx.dims.size() < 3 || tx.dims.size() > 5) return bad(op, name, "x " + dims_text(tx.dims) + " must have rank 3..5");
  if (!(epsilon > 0) || !std::isfinite(epsilon)) return bad(op, name, "epsilon must be finite and > 0");
  const int params[2] = {scale, bias};
  const char* pnames[2] = {"scale", "bias"};
  for (int i = 0; i < 2; ++i) {
    if (tensors[params[i]].elements() != tx.dims[1]) {
      return bad(op, name, std::string(pnames[i]) + " has " + std::to_string(tensors[params[i]].elements()) +
                               " elements, expected C = " + std::to_string(tx.dims[1]));
    }
  }
  return finish(Node{name, op, {x, scale, bias}, {}, InstanceNormAttrs{epsilon}}, tx.dtype, tx.dims, y);
}

flatbuffers::Offset<fb::InstanceNormParams> write_params(flatbuffers::FlatBufferBuilder& b, const InstanceNormAttrs& a,
                                                         const ParamsContext&) {
  return fb::CreateInstanceNormParams(b, a.epsilon);
}

Status Graph::reduce(const std::string& name, int x, ReduceOp rop, const std::vector<int64_t>& axes, int* y) {
  const OpType op = OpType::REDUCE;
  JET_RETURN_IF_ERROR(check_tensor(name, x, "x"));
  const Tensor& tx = tensors[x];
  if (!enum_in_range(rop)) {
    return bad(op, name, "unknown reduce op " + std::to_string(static_cast<int>(rop)));
  }
  std::vector<int64_t> out = tx.dims;
  for (int64_t a : axes) {
    if (a < 0 || a >= static_cast<int64_t>(out.size())) {
      return bad(op, name, "axis " + std::to_string(a) + " out of range for " + dims_text(tx.dims));
    }
    out[a] = 1;
  }
  return finish(Node{name, op, {x}, {}, ReduceAttrs{rop}}, tx.dtype, std::move(out), y);
}

flatbuffers::Offset<fb::ReduceParams> write_params(flatbuffers::FlatBufferBuilder& b, const ReduceAttrs& a,
                                                   const ParamsContext&) {
  return fb::CreateReduceParams(b, static_cast<int32_t>(a.op));
}

namespace {

// numpy's multidirectional broadcasting of two dims lists (ranks aligned by leading 1s); false
// when they do not broadcast.
bool broadcast_dims(const std::vector<int64_t>& a, const std::vector<int64_t>& b, std::vector<int64_t>* out) {
  const size_t rank = std::max(a.size(), b.size());
  out->assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = da == 1 ? db : da;
  }
  return true;
}

}  // namespace

Status Graph::logic(const std::string& name, LogicOp lop, int a, int b, int* y) {
  const OpType op = OpType::LOGIC;
  JET_RETURN_IF_ERROR(check_tensor(name, a, "a"));
  JET_RETURN_IF_ERROR(check_tensor(name, b, "b"));
  if (!enum_in_range(lop)) return bad(op, name, "unknown logic op " + std::to_string(static_cast<int>(lop)));
  const Tensor& ta = tensors[a];
  const Tensor& tb = tensors[b];
  if (ta.dtype != tb.dtype) {
    return bad(op, name, std::string("a is ") + dtype_name(ta.dtype) + " but b is " + dtype_name(tb.dtype));
  }
  const bool logical = lop == LogicOp::AND || lop == LogicOp::OR || lop == LogicOp::XOR;
  if (logical != (ta.dtype == DType::BOOL) && !(lop == LogicOp::EQUAL && ta.dtype == DType::BOOL)) {
    return bad(op, name, std::string(logic_op_name(lop)) + " of " + dtype_name(ta.dtype) + " tensors");
  }
  if (ta.dims.size() > static_cast<size_t>(kMaxRank) || tb.dims.size() > static_cast<size_t>(kMaxRank)) {
    return bad(op, name, "rank above " + std::to_string(kMaxRank));
  }
  std::vector<int64_t> out;
  if (!broadcast_dims(ta.dims, tb.dims, &out)) {
    return bad(op, name, "a " + dims_text(ta.dims) + " and b " + dims_text(tb.dims) + " do not broadcast");
  }
  return finish(Node{name, op, {a, b}, {}, LogicAttrs{lop}}, DType::BOOL, std::move(out), y);
}

flatbuffers::Offset<fb::LogicParams> write_params(flatbuffers::FlatBufferBuilder& b, const LogicAttrs& a,
                                                  const ParamsContext&) {
  return fb::CreateLogicParams(b, static_cast<int32_t>(a.op));
}

Status Graph::where(const std::string& name, int cond, int a, int b, int* y) {
  const OpType op = OpType::WHERE;
  JET_RETURN_IF_ERROR(check_tensor(name, cond, "condition"));
  JET_RETURN_IF_ERROR(check_tensor(name, a, "a"));
  JET_RETURN_IF_ERROR(check_tensor(name, b, "b"));
  const Tensor& tc = tensors[cond];
  const Tensor& ta = tensors[a];
  const Tensor& tb = tensors[b];
  if (tc.dtype != DType::BOOL) return bad(op, name, std::string("condition is ") + dtype_name(tc.dtype) + ", not bool");
  if (ta.dtype != tb.dtype) {
    return bad(op, name, std::string("a is ") + dtype_name(ta.dtype) + " but b is " + dtype_name(tb.dtype));
  }
  std::vector<int64_t> ab, out;
  if (!broadcast_dims(ta.dims, tb.dims, &ab) || !broadcast_dims(tc.dims, ab, &out)) {
    return bad(op, name, "condition " + dims_text(tc.dims) + ", a " + dims_text(ta.dims) + " and b " +
                             dims_text(tb.dims) + " do not broadcast");
  }
  if (out.size() > static_cast<size_t>(kMaxRank)) return bad(op, name, "rank above " + std::to_string(kMaxRank));
  return finish(Node{name, op, {cond, a, b}, {}, WhereAttrs{}}, ta.dtype, std::move(out), y);
}

flatbuffers::Offset<fb::WhereParams> write_params(flatbuffers::FlatBufferBuilder& b, const WhereAttrs&,
                                                  const ParamsContext&) {
  return fb::CreateWhereParams(b);
}

Status Graph::arg_reduce(const std::string& name, int x, ArgReduceOp aop, int axis, bool select_last_index,
                         int* y) {
  const OpType op = OpType::ARG_REDUCE;
  JET_RETURN_IF_ERROR(check_tensor(name, x, "x"));
  const Tensor& tx = tensors[x];
  if (!enum_in_range(aop)) return bad(op, name, "unknown arg-reduce op " + std::to_string(static_cast<int>(aop)));
  if (tx.dtype == DType::BOOL) return bad(op, name, "x is bool");
  if (axis < 0 || axis >= static_cast<int>(tx.dims.size())) {
    return bad(op, name, "axis " + std::to_string(axis) + " out of range for " + dims_text(tx.dims));
  }
  std::vector<int64_t> out = tx.dims;
  out[axis] = 1;
  return finish(Node{name, op, {x}, {}, ArgReduceAttrs{aop, axis, select_last_index}}, DType::I64, std::move(out), y);
}

flatbuffers::Offset<fb::ArgReduceParams> write_params(flatbuffers::FlatBufferBuilder& b, const ArgReduceAttrs& a,
                                                      const ParamsContext&) {
  return fb::CreateArgReduceParams(b, static_cast<int32_t>(a.op), a.axis, a.select_last_index);
}

Status Graph::add_op(const std::string& name, std::vector<int> inputs, NodeAttrs attrs, int* y) {
  Node n{name, static_cast<OpType>(attrs.index()), std::move(inputs), {}, std::move(attrs)};
  std::vector<TensorDesc> in;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const std::string what = "input " + std::to_string(i);
    JET_RETURN_IF_ERROR(check_tensor(name, n.inputs[i], what.c_str()));
    const Tensor& t = tensors[n.inputs[i]];
    if (t.dims.size() > static_cast<size_t>(kMaxRank)) {
      return bad(n.op, name, "input '" + t.name + "' " + dims_text(t.dims) + " has a rank above " + std::to_string(kMaxRank));
    }
    in.push_back(t.desc());
  }
  JET_RETURN_IF_ERROR(check_input_count(n));
  rt::OpOutput out;
  const Status st = std::visit(
      [&](const auto& a) {
        using Attrs = std::decay_t<decltype(a)>;
        static_cast<void>(a);  // read by one branch only: gcc 9 would warn (its bug 81676)
        if constexpr (is_table_struct<Attrs>) {
          return rt::infer_output(a, in.data(), &out);
        } else {
          return Status(StatusCode::BAD_PARAM, "this op has its own builder (converter/ir.h), not add_op");
        }
      },
      n.attrs);
  if (!st.ok()) return Status(st.code(), std::string(op_type_name(n.op)) + " '" + name + "': " + st.message());
  return finish(std::move(n), out.dtype, std::vector<int64_t>(out.dims, out.dims + out.rank), y);
}

Status Graph::scatter(const std::string& name, int x, int indices, int updates, bool nd, ScatterReduction reduction,
                      int axis, int* y) {
  const OpType op = OpType::SCATTER;
  JET_RETURN_IF_ERROR(check_tensor(name, x, "x"));
  JET_RETURN_IF_ERROR(check_tensor(name, indices, "indices"));
  JET_RETURN_IF_ERROR(check_tensor(name, updates, "updates"));
  const Tensor& tx = tensors[x];
  const Tensor& ti = tensors[indices];
  const Tensor& tu = tensors[updates];
  if (!enum_in_range(reduction)) {
    return bad(op, name, "unknown reduction " + std::to_string(static_cast<int>(reduction)));
  }
  if (ti.dtype != DType::I32 && ti.dtype != DType::I64) {
    return bad(op, name, std::string("indices are ") + dtype_name(ti.dtype) + ", expected i32 or i64");
  }
  if (tu.dtype != tx.dtype) {
    return bad(op, name, std::string("updates are ") + dtype_name(tu.dtype) + " but x is " + dtype_name(tx.dtype));
  }
  if (tx.dtype == DType::BOOL && reduction != ScatterReduction::NONE) {
    return bad(op, name, std::string("reduction ") + scatter_reduction_name(reduction) + " of bool tensors");
  }
  const int r = static_cast<int>(tx.dims.size());
  if (!nd) {
    if (axis < 0 || axis >= r) return bad(op, name, "axis " + std::to_string(axis) + " out of range for " + dims_text(tx.dims));
    bool ok = ti.dims == tu.dims && static_cast<int>(ti.dims.size()) == r;
    for (int d = 0; ok && d < r; ++d) ok = d == axis || ti.dims[d] <= tx.dims[d];
    if (!ok) {
      return bad(op, name, "indices " + dims_text(ti.dims) + " and updates " + dims_text(tu.dims) +
                               " must have one shape of x's rank, at most x " + dims_text(tx.dims) + " but at the axis");
    }
  } else {
    const int q = static_cast<int>(ti.dims.size());
    const int64_t k = q > 0 ? ti.dims.back() : 0;
    if (k < 1 || k > r) return bad(op, name, "indices " + dims_text(ti.dims) + " have a last dim outside [1, rank of x]");
    std::vector<int64_t> want(ti.dims.begin(), ti.dims.end() - 1);
    want.insert(want.end(), tx.dims.begin() + k, tx.dims.end());
    if (tu.dims != want) {
      return bad(op, name, "updates " + dims_text(tu.dims) + " should be " + dims_text(want));
    }
  }
  return finish(Node{name, op, {x, indices, updates}, {}, ScatterAttrs{nd, reduction, nd ? 0 : axis}}, tx.dtype, tx.dims,
                y);
}

flatbuffers::Offset<fb::ScatterParams> write_params(flatbuffers::FlatBufferBuilder& b, const ScatterAttrs& a,
                                                    const ParamsContext&) {
  return fb::CreateScatterParams(b, a.nd, static_cast<int32_t>(a.reduction), a.axis);
}

Status Graph::topological_order(std::vector<int>* order) const {
  const int nt = static_cast<int>(tensors.size());
  const int nn = static_cast<int>(nodes.size());
  std::vector<int> producer(nt, -1);
  for (int i = 0; i < nn; ++i) {
    for (int t : nodes[i].outputs) {
      if (t < 0 || t >= nt) return Status(StatusCode::BAD_PARAM, "node '" + nodes[i].name + "': output index out of range");
      if (producer[t] >= 0) {
        return Status(StatusCode::BAD_PARAM, "tensor '" + tensors[t].name + "' is produced by both '" +
                                                 nodes[producer[t]].name + "' and '" + nodes[i].name + "'");
      }
      producer[t] = i;
    }
  }
  std::vector<std::vector<int>> users(nn);
  std::vector<int> indegree(nn, 0);
  for (int i = 0; i < nn; ++i) {
    for (int t : nodes[i].inputs) {
      if (t < 0 || t >= nt) return Status(StatusCode::BAD_PARAM, "node '" + nodes[i].name + "': input index out of range");
      if (producer[t] >= 0) {
        users[producer[t]].push_back(i);
        ++indegree[i];
      }
    }
  }
  *order = dependency_order(users, indegree);
  if (static_cast<int>(order->size()) == nn) return Status::success();
  // Some node is left: walk back through unfinished producers; after nn steps we are on a cycle.
  std::vector<char> done(nn, 0);
  for (int i : *order) done[i] = 1;
  int v = 0;
  while (done[v]) ++v;
  for (int step = 0; step < nn; ++step) {
    for (int t : nodes[v].inputs) {
      const int p = producer[t];
      if (p >= 0 && !done[p]) {
        v = p;
        break;
      }
    }
  }
  order->clear();
  return Status(StatusCode::BAD_PARAM, "graph has a cycle through node '" + nodes[v].name + "'");
}

Status check_node(const Graph& g, int node) {
  if (node < 0 || node >= static_cast<int>(g.nodes.size())) {
    return Status(StatusCode::BAD_PARAM, "node index " + std::to_string(node) + " out of range");
  }
  const Node& n = g.nodes[node];
  auto fail = [&](const std::string& what) {
    return Status(StatusCode::BAD_PARAM, "node '" + n.name + "': " + what);
  };
  const int nt = static_cast<int>(g.tensors.size());
  for (int t : n.inputs) {
    if (t < 0 || t >= nt) return fail("input tensor index " + std::to_string(t) + " out of range");
  }
  for (int t : n.outputs) {
    if (t < 0 || t >= nt) return fail("output tensor index " + std::to_string(t) + " out of range");
  }
  if (n.outputs.size() != 1) return fail(std::to_string(n.outputs.size()) + " outputs, expected 1");
  if (!known(n.op)) return fail("unknown op type " + std::to_string(static_cast<int>(n.op)));
  // The attribute struct of the op (NodeAttrs' alternatives follow OpType), then how many inputs.
  if (n.attrs.index() != static_cast<size_t>(n.op)) {
    return fail(std::string("attributes are not those of a ") + op_type_name(n.op) + " op");
  }
  if (n.op == OpType::TRANSFORM) {
    const TransformAttrs& a = std::get<TransformAttrs>(n.attrs);
    if (a.to != g.tensors[n.outputs[0]].dtype) {
      return fail(std::string("transform to ") + dtype_name(a.to) + " but the output '" +
                  g.tensors[n.outputs[0]].name + "' is " + dtype_name(g.tensors[n.outputs[0]].dtype));
    }
  }
  return check_input_count(n);
}

Status check_graph(const Graph& g, std::vector<int>* order) {
  Status st = g.topological_order(order);
  if (!st.ok()) return st;
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    st = check_node(g, i);
    if (!st.ok()) return st;
  }
  return Status::success();
}

NameSet::NameSet(const Graph& g) {
  for (const Tensor& t : g.tensors) used_.insert(t.name);
  for (const Node& n : g.nodes) used_.insert(n.name);
}

std::string NameSet::fresh(const std::string& base) {
  std::string name = base;
  for (int i = 1; used_.count(name); ++i) name = base + "_" + std::to_string(i);
  used_.insert(name);
  return name;
}

std::vector<int> dependency_order(const std::vector<std::vector<int>>& users, std::vector<int> waiting) {
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < static_cast<int>(waiting.size()); ++i) {
    if (waiting[i] == 0) ready.push(i);
  }
  std::vector<int> order;
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[i]) {
      if (--waiting[u] == 0) ready.push(u);
    }
  }
  return order;
}

}  // namespace ir
}  // namespace jet
