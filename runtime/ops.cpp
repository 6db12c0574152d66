// The op types: for each, prepare_<op> (validate the parameters, re-run shape inference and
// compare with the stored output, build the descriptors once) and execute_<op> (one kernel call).
// An op whose IR attributes are its schema table's struct (schema/op_list.h) has its shape
// inference as one output rule, infer_output (schema/op_rules.h), which the converter runs too,
// and usually its kernel call as one kernel rule, run_kernel, which the tests' reference executor
// runs too; its prepare is prepare_by_rule, its execute execute_by_rule. The op table at the
// bottom is generated from op_list.h.
#include "ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "loader.h"
#include "op_list.h"
#include "op_rules.h"

namespace jet {
namespace rt {

namespace {

Status bad(const std::string& m) { return Status(StatusCode::BAD_PARAM, m); }

std::string dims_text(const TensorDesc& d) { return jet::dims_text(d.rank(), d.dims()); }

const TensorRecord& input(const PrepareArgs& a, const PreparedOp& p, size_t k) {
  return a.tensors[p.inputs[k]];
}
const std::string& input_name(const PrepareArgs& a, const PreparedOp& p, size_t k) {
  return a.infos[p.inputs[k]].name;
}
const TensorRecord& output(const PrepareArgs& a, const PreparedOp& p) { return a.tensors[p.output]; }

Status expect_inputs(const PreparedOp& p, size_t n, const char* which) {
  if (p.inputs.size() == n) return Status();
  return bad("has " + std::to_string(p.inputs.size()) + " inputs, expected " + std::to_string(n) +
             " (" + which + ")");
}

Status expect_rank(const TensorDesc& d, const std::string& name, int lo, int hi) {
  if (d.rank() >= lo && d.rank() <= hi) return Status();
  return bad("'" + name + "' has rank " + std::to_string(d.rank()) + ", expected " +
             std::to_string(lo) + ".." + std::to_string(hi));
}

Status expect_dtype(const TensorDesc& d, const std::string& name, DType want, const char* why) {
  if (d.dtype() == want) return Status();
  return bad("'" + name + "' is " + dtype_name(d.dtype()) + ", expected " + dtype_name(want) + " (" +
             why + ")");
}

// The re-inferred output dims against the stored output tensor.
Status expect_output_dims(const PrepareArgs& a, const PreparedOp& p, const int64_t* dims, int rank) {
  const TensorDesc& y = output(a, p).desc;
  bool same = y.rank() == rank;
  for (int i = 0; same && i < rank; ++i) same = y.dim(i) == dims[i];
  if (same) return Status();
  return bad("output '" + a.infos[p.output].name + "' has dims " + dims_text(y) +
             " but the op's inputs and parameters give " + jet::dims_text(rank, dims));
}

// An op's output rule (op_rules.h, shared with the converter) run on its inputs and held against
// the stored output.
template <typename Params>
Status check_by_rule(const PrepareArgs& a, const PreparedOp& p, const Params& params, size_t n_inputs,
                     const char* which) {
  JET_RETURN_IF_ERROR(expect_inputs(p, n_inputs, which));
  std::vector<TensorDesc> in;
  for (size_t k = 0; k < n_inputs; ++k) in.push_back(input(a, p, k).desc);
  OpOutput want;
  JET_RETURN_IF_ERROR(infer_output(params, in.data(), &want));
  JET_RETURN_IF_ERROR(expect_dtype(output(a, p).desc, a.infos[p.output].name, want.dtype,
                                   "what the op's inputs and parameters give"));
  return expect_output_dims(a, p, want.dims, want.rank);
}

// prepare_<fn> of an op whose IR attributes are its schema table's struct (op_list.h): the table
// unpacked into the op's prepared data (execute_<fn> reads it there), then check_by_rule.
template <typename Table>
Status prepare_by_rule(const PrepareArgs& a, PreparedOp* p, const Table& table, size_t n_inputs, const char* which) {
  using Params = typename Table::NativeTableType;
  Params& params = p->data.emplace<Params>();
  table.UnPackTo(&params);
  return check_by_rule(a, *p, params, n_inputs, which);
}

// execute_<fn> of an op with a kernel rule (op_rules.h): the table's struct, unpacked at prepare,
// and the op's tensors handed to run_kernel, which the tests' reference executor runs too.
template <typename Params>
Status execute_by_rule(const Handle& h, const PreparedOp& p, const void* const* in, void* out, void*, size_t) {
  return run_kernel(h, p.data.as<Params>(), KernelCall{p.in_descs.data(), in, p.out_desc, out});
}

// x (input 0) is N, C and 1 to 3 spatial dims.
Status expect_spatial_x(const PrepareArgs& a, const PreparedOp& p) {
  return expect_rank(input(a, p, 0).desc, input_name(a, p, 0), 3, 5);
}

// The output keeps x's (input 0's) dtype.
Status expect_same_dtype(const PrepareArgs& a, const PreparedOp& p, const char* why) {
  return expect_dtype(output(a, p).desc, a.infos[p.output].name, input(a, p, 0).desc.dtype(), why);
}

// The output keeps x's dtype and dims (activations, softmax, normalizations).
Status expect_output_like_x(const PrepareArgs& a, const PreparedOp& p, const char* dtype_why) {
  JET_RETURN_IF_ERROR(expect_same_dtype(a, p, dtype_why));
  const TensorDesc& x = input(a, p, 0).desc;
  return expect_output_dims(a, p, x.dims(), x.rank());
}

// Inputs [first, end) of a normalization are per-channel parameters: f32, x's C values, packed.
Status expect_channel_params(const PrepareArgs& a, const PreparedOp& p, size_t first, const char* dtype_why) {
  const int64_t channels = input(a, p, 0).desc.dim(1);
  for (size_t k = first; k < p.inputs.size(); ++k) {
    const TensorDesc& t = input(a, p, k).desc;
    const std::string& name = input_name(a, p, k);
    JET_RETURN_IF_ERROR(expect_dtype(t, name, DType::F32, dtype_why));
    if (t.elements() != channels || !t.is_packed()) {
      return bad("parameter '" + name + "' has dims " + dims_text(t) + ", expected " + std::to_string(channels) +
                 " packed elements (one per channel)");
    }
  }
  return Status();
}

Status read_epsilon(double eps, double* out) {
  if (!(eps > 0) || !std::isfinite(eps)) return bad("epsilon " + std::to_string(eps) + " must be finite and > 0");
  *out = eps;
  return Status();
}

// A spatial parameter vector: absent/empty means `fill` everywhere, otherwise exactly sr entries.
Status read_spatial(const flatbuffers::Vector<int64_t>* v, int sr, const char* what, int64_t fill,
                    int64_t* out) {
  for (int i = 0; i < 3; ++i) out[i] = fill;
  if (!v || v->size() == 0) return Status();
  if (v->size() != static_cast<flatbuffers::uoffset_t>(sr)) {
    return bad(std::string(what) + " has " + std::to_string(v->size()) + " entries, expected " +
               std::to_string(sr) + " (one per spatial dim)");
  }
  for (int i = 0; i < sr; ++i) out[i] = read_i64(v, static_cast<flatbuffers::uoffset_t>(i));
  return Status();
}

// The convolution geometry of ConvParams or ConvTransposeParams (the same fields).
template <typename ConvLikeParams>
Status read_conv_desc(const ConvLikeParams& cp, int sr, ConvDesc* out) {
  int64_t pad_begin[3], pad_end[3], strides[3], dilations[3];
  JET_RETURN_IF_ERROR(read_spatial(cp.pad_begin(), sr, "pad_begin", 0, pad_begin));
  JET_RETURN_IF_ERROR(read_spatial(cp.pad_end(), sr, "pad_end", 0, pad_end));
  JET_RETURN_IF_ERROR(read_spatial(cp.strides(), sr, "strides", 1, strides));
  JET_RETURN_IF_ERROR(read_spatial(cp.dilations(), sr, "dilations", 1, dilations));
  *out = ConvDesc::make(sr, pad_begin, pad_end, strides, dilations, cp.groups());
  return out->validate();
}

// A convolution's bias (input k): `channels` packed values of the output's dtype, seen by
// add_tensor as [1, channels, 1, ...] at the output's rank.
Status prepare_channel_bias(const PrepareArgs& a, const PreparedOp& p, size_t k, int64_t channels,
                            TensorDesc* view) {
  const TensorDesc& y = output(a, p).desc;
  const TensorDesc& b = input(a, p, k).desc;
  const std::string& bn = input_name(a, p, k);
  if (b.elements() != channels || !b.is_packed()) {
    return bad("bias '" + bn + "' has dims " + dims_text(b) + ", expected " + std::to_string(channels) +
               " packed elements (one per output channel)");
  }
  JET_RETURN_IF_ERROR(expect_dtype(b, bn, y.dtype(), "the bias has the output's dtype"));
  int64_t bdims[5] = {1, channels, 1, 1, 1};
  *view = TensorDesc::packed(b.dtype(), y.rank(), bdims);
  return Status();
}

// Absent means identity, as the schema says.
Status read_activation(const fb::Activation* a, ActivationDesc* out) {
  *out = ActivationDesc::identity();
  if (a) {
    out->mode = static_cast<ActivationMode>(a->mode());
    out->alpha = a->alpha();
    out->beta = a->beta();
  }
  return out->validate();
}

Status expect_finite(float v, const char* what) {
  if (std::isfinite(v)) return Status();
  return bad(std::string(what) + " is not finite");
}

int64_t product(const int64_t* d, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; ++i) p *= d[i];
  return p;
}

// The dims [from, to) of d as one dim: their product, with the stride of the innermost dim of
// size > 1. False when those dims do not nest contiguously (then no single stride describes them).
bool merge_dims(const TensorDesc& d, int from, int to, int64_t* dim, int64_t* stride) {
  *dim = 1;
  *stride = 1;
  int64_t next_stride = -1;  // what the next outer dim's stride must be
  for (int i = to - 1; i >= from; --i) {
    if (d.dim(i) == 1) continue;
    if (next_stride < 0) {
      *stride = d.stride(i);
    } else if (d.stride(i) != next_stride) {
      return false;
    }
    next_stride = d.stride(i) * d.dim(i);
    *dim *= d.dim(i);
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Conv: conv_bias_act_forward. inputs: x, w[, bias][, residual].

Status prepare_conv(const PrepareArgs& a, PreparedOp* p, OpInfo* info) {
  const fb::ConvParams& cp = *a.op.params_as_ConvParams();
  const size_t n = 2 + (cp.has_bias() ? 1 : 0) + (cp.has_residual() ? 1 : 0);
  JET_RETURN_IF_ERROR(expect_inputs(*p, n, "x, w[, bias][, residual] as has_bias/has_residual say"));
  const TensorDesc& x = input(a, *p, 0).desc;
  const TensorDesc& w = input(a, *p, 1).desc;
  const TensorDesc& y = output(a, *p).desc;
  JET_RETURN_IF_ERROR(expect_spatial_x(a, *p));
  if (w.rank() != x.rank()) {
    return bad("filter '" + input_name(a, *p, 1) + "' has dims " + dims_text(w) + ", rank differs from x " +
               dims_text(x));
  }
  if (!w.is_packed()) return bad("filter '" + input_name(a, *p, 1) + "' must be packed (K, C, spatial)");
  JET_RETURN_IF_ERROR(expect_dtype(w, input_name(a, *p, 1), x.dtype(), "the filter has x's dtype"));
  JET_RETURN_IF_ERROR(expect_dtype(y, a.infos[p->output].name, x.dtype(), "the output has x's dtype"));
  ConvPrepared& c = p->data.emplace<ConvPrepared>();
  JET_RETURN_IF_ERROR(read_conv_desc(cp, x.rank() - 2, &c.conv));
  c.conv = c.conv.with_math(a.conv_math);
  JET_RETURN_IF_ERROR(read_activation(cp.activation(), &c.act));
  JET_RETURN_IF_ERROR(expect_finite(cp.alpha1(), "alpha1"));
  JET_RETURN_IF_ERROR(expect_finite(cp.alpha2(), "alpha2"));
  c.alpha1 = cp.alpha1();
  c.alpha2 = cp.alpha2();
  // Groups against the channels by division, before any formula multiplies them.
  const int64_t groups = c.conv.groups();
  if (groups > x.dim(1) || x.dim(1) % groups != 0 || x.dim(1) / groups != w.dim(1) || w.dim(0) % groups != 0) {
    return bad("groups " + std::to_string(groups) + " do not fit x's " + std::to_string(x.dim(1)) +
               " channels and the filter " + dims_text(w) + " (C = groups x filter C, K a multiple of groups)");
  }
  // The CUDA backend runs channels-last convolutions on its tensor cores with KRSC filters
  // (channels fastest, like the activations). The file stores KCRS; when x is channels-last, the
  // window has more than one tap (1x1 filters are both) and this op alone reads the constant
  // filter, the upload stores it KRSC (place_weights), as TensorRT reformats weights at build.
  const bool channels_last = x.dim(1) > 1 && x.stride(1) == 1;
  const bool krsc = a.handle.backend() == Backend::CUDA && channels_last &&
                    product(w.dims(), 2, w.rank()) > 1 && input(a, *p, 1).constant &&
                    a.sole_user[p->inputs[1]] == a.step;
  c.filter = FilterDesc::make(w.dtype(), krsc ? FilterLayout::KRSC : FilterLayout::KCRS, w.rank(),
                              w.dims());
  c.filter_krsc = krsc;
  JET_RETURN_IF_ERROR(c.filter.validate("w"));
  int64_t out[kMaxRank] = {};
  JET_RETURN_IF_ERROR(conv_output_dims(x, c.filter, c.conv, out));
  JET_RETURN_IF_ERROR(expect_output_dims(a, *p, out, x.rank()));
  const int64_t k = out[1];
  size_t next = 2;
  if (cp.has_bias()) {
    c.bias_input = static_cast<int>(next++);
    JET_RETURN_IF_ERROR(prepare_channel_bias(a, *p, static_cast<size_t>(c.bias_input), k, &c.bias_view));
  }
  if (cp.has_residual()) {
    c.residual_input = static_cast<int>(next++);
    const TensorDesc& z = input(a, *p, c.residual_input).desc;
    const std::string& zn = input_name(a, *p, c.residual_input);
    if (!z.same_dims(y)) {
      return bad("residual '" + zn + "' has dims " + dims_text(z) + ", expected the output's " + dims_text(y));
    }
    JET_RETURN_IF_ERROR(expect_dtype(z, zn, y.dtype(), "the residual has the output's dtype"));
  }

  // The algorithm: the stored one (with its tactic when it was tuned on this device) when this
  // backend runs it within the fallback's workspace limit, else the backend's heuristic choice
  // under the fallback preference (tactic 0). LoadOptions::tune replaces the choice later.
  const int stored = static_cast<int>(cp.algo());
  if (stored < -1 || stored >= static_cast<int>(ConvAlgo::COUNT)) {
    return bad("unknown convolution algorithm " + std::to_string(stored));
  }
  const int32_t stored_tactic = cp.tactic();
  if (stored_tactic < 0) return bad("tactic " + std::to_string(stored_tactic) + " must be >= 0 (0: the heuristic's)");
  const int fallback = static_cast<int>(cp.fallback());
  if (!enum_in_range<ConvPreference>(fallback)) {
    return bad("unknown convolution algorithm preference " + std::to_string(fallback));
  }
  const ConvPreference pref = static_cast<ConvPreference>(fallback);
  size_t limit = std::numeric_limits<size_t>::max();
  if (pref == ConvPreference::NO_WORKSPACE) limit = 0;
  if (pref == ConvPreference::SPECIFY_WORKSPACE_LIMIT) limit = static_cast<size_t>(cp.workspace_limit());
  c.preference = pref;
  c.workspace_limit = limit;
  bool chosen = false;
  size_t ws = 0;
  if (stored >= 0 && a.stored_choices != StoredChoices::MISMATCH) {
    const ConvAlgo algo = static_cast<ConvAlgo>(stored);
    const ConvDesc conv = c.conv.with_tactic(a.stored_choices == StoredChoices::MATCH ? stored_tactic : 0);
    const Status st = conv_forward_workspace_size(a.handle, x, c.filter, conv, y, algo, &ws);
    if (st.ok() && ws <= limit) {
      c.algo = algo;
      c.conv = conv;
      chosen = true;
    } else if (a.stored_choices == StoredChoices::MATCH) {
      p->refused_choice = std::string(conv_algo_name(algo)) + "#" + std::to_string(stored_tactic) + ": " +
                          (st.ok() ? "needs " + std::to_string(ws) + " bytes of workspace, over the limit " +
                                         std::to_string(limit)
                                   : st.message());
    }
  }
  if (!chosen) {
    Status st = choose_conv_forward_algo(a.handle, x, c.filter, c.conv, y, pref, limit, &c.algo);
    if (!st.ok()) return Status(st.code(), "no convolution algorithm for this backend: " + st.message());
    JET_RETURN_IF_ERROR(conv_forward_workspace_size(a.handle, x, c.filter, c.conv, y, c.algo, &ws));
  }
  p->workspace_bytes = ws;
  info->algo = conv_algo_name(c.algo);
  info->tactic = c.conv.tactic();
  info->workspace_bytes = ws;
  // Multiply-adds: every output element sums C/groups * filter-spatial products.
  info->flops = 2.0 * static_cast<double>(product(out, 0, x.rank())) *
                static_cast<double>(product(w.dims(), 1, w.rank()));
  return Status();
}

Status execute_conv(const Handle& h, const PreparedOp& p, const void* const* in, void* out,
                    void* workspace, size_t workspace_bytes) {
  const ConvPrepared& c = p.data.as<ConvPrepared>();
  const void* bias = c.bias_input >= 0 ? in[c.bias_input] : nullptr;
  const void* z = c.residual_input >= 0 ? in[c.residual_input] : nullptr;
  const TensorDesc& z_desc = c.residual_input >= 0 ? p.in_descs[c.residual_input] : p.out_desc;
  return conv_bias_act_forward(h, c.alpha1, p.in_descs[0], in[0], c.filter, in[1], c.conv, c.algo,
                               workspace, workspace_bytes, c.alpha2, z_desc, z, c.bias_view, bias,
                               c.act, p.out_desc, out);
}

// ---------------------------------------------------------------------------------------------
// Pool: pool_forward (windowed or global). inputs: x.

Status prepare_pool(const PrepareArgs& a, PreparedOp* p, OpInfo* info) {
  PoolDesc& pool = p->data.emplace<PoolDesc>();
  const fb::PoolParams& pp = *a.op.params_as_PoolParams();
  JET_RETURN_IF_ERROR(expect_inputs(*p, 1, "x"));
  const TensorDesc& x = input(a, *p, 0).desc;
  JET_RETURN_IF_ERROR(expect_spatial_x(a, *p));
  JET_RETURN_IF_ERROR(expect_same_dtype(a, *p, "pooling keeps the dtype"));
  const int mode = pp.mode();
  if (!enum_in_range<PoolMode>(mode)) {
    return bad("unknown pooling mode " + std::to_string(mode));
  }
  const int sr = x.rank() - 2;
  if (pp.global()) {
    pool = PoolDesc::global(static_cast<PoolMode>(mode), sr);
  } else {
    if (!pp.window() || pp.window()->size() != static_cast<flatbuffers::uoffset_t>(sr)) {
      return bad("window has " + std::to_string(pp.window() ? pp.window()->size() : 0) +
                 " entries, expected " + std::to_string(sr) + " (one per spatial dim)");
    }
    int64_t window[3], pad_begin[3], pad_end[3], strides[3];
    JET_RETURN_IF_ERROR(read_spatial(pp.window(), sr, "window", 1, window));
    JET_RETURN_IF_ERROR(read_spatial(pp.pad_begin(), sr, "pad_begin", 0, pad_begin));
    JET_RETURN_IF_ERROR(read_spatial(pp.pad_end(), sr, "pad_end", 0, pad_end));
    JET_RETURN_IF_ERROR(read_spatial(pp.strides(), sr, "strides", 1, strides));
    pool = PoolDesc::make(static_cast<PoolMode>(mode), sr, window, pad_begin, pad_end, strides,
                             nullptr, pp.ceil_mode());
  }
  JET_RETURN_IF_ERROR(pool.validate());
  int64_t out[kMaxRank] = {};
  JET_RETURN_IF_ERROR(pool_output_dims(x, pool, out));
  // One operation per window element read: what bounds the cost (a large window over a large
  // input is slow however small the output).
  double window_elements = 1;
  for (int d = 0; d < sr; ++d) window_elements *= static_cast<double>(pp.global() ? x.dims()[2 + d] : pool.window(d));
  info->flops = static_cast<double>(product(out, 0, x.rank())) * window_elements;
  return expect_output_dims(a, *p, out, x.rank());
}

Status execute_pool(const Handle& h, const PreparedOp& p, const void* const* in, void* out, void*,
                    size_t) {
  return pool_forward(h, p.data.as<PoolDesc>(), 1.f, p.in_descs[0], in[0], 0.f, p.out_desc, out);
}

// ---------------------------------------------------------------------------------------------
// Activation: activation_forward. inputs: x. In place allowed.

Status prepare_activation(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  p->data.emplace<ActivationDesc>();
  const fb::ActivationParams& ap = *a.op.params_as_ActivationParams();
  JET_RETURN_IF_ERROR(expect_inputs(*p, 1, "x"));
  JET_RETURN_IF_ERROR(read_activation(ap.activation(), &p->data.as<ActivationDesc>()));
  return expect_output_like_x(a, *p, "activations keep the dtype");
}

Status execute_activation(const Handle& h, const PreparedOp& p, const void* const* in, void* out,
                          void*, size_t) {
  return activation_forward(h, p.data.as<ActivationDesc>(), 1.f, p.in_descs[0], in[0], 0.f, p.out_desc, out);
}

// ---------------------------------------------------------------------------------------------
// OpTensor: op_tensor (add, mul, ...). inputs: a, b, broadcast to the output. In place allowed.

Status prepare_op_tensor(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  p->data.emplace<TensorOp>();
  const fb::OpTensorParams& op = *a.op.params_as_OpTensorParams();
  JET_RETURN_IF_ERROR(expect_inputs(*p, 2, "a, b"));
  const int top = op.op();
  if (!enum_in_range<TensorOp>(top)) return bad("unknown tensor op " + std::to_string(top));
  p->data.as<TensorOp>() = static_cast<TensorOp>(top);
  const TensorDesc& ta = input(a, *p, 0).desc;
  const TensorDesc& tb = input(a, *p, 1).desc;
  JET_RETURN_IF_ERROR(expect_dtype(tb, input_name(a, *p, 1), ta.dtype(), "a and b share a dtype"));
  JET_RETURN_IF_ERROR(expect_dtype(output(a, *p).desc, a.infos[p->output].name, ta.dtype(), "the output has a's dtype"));
  if (ta.dtype() == DType::BOOL) return bad("a '" + input_name(a, *p, 0) + "' is bool; op_tensor takes f32, f16, i32, i64");
  if (ta.rank() != tb.rank()) {
    return bad("a " + dims_text(ta) + " and b " + dims_text(tb) + " differ in rank");
  }
  int64_t out[kMaxRank];
  for (int i = 0; i < ta.rank(); ++i) {
    const int64_t da = ta.dim(i), db = tb.dim(i);
    if (da != db && da != 1 && db != 1) {
      return bad("a " + dims_text(ta) + " and b " + dims_text(tb) + " do not broadcast (dim " +
                 std::to_string(i) + ")");
    }
    out[i] = da == 1 ? db : da;
  }
  return expect_output_dims(a, *p, out, ta.rank());
}

Status execute_op_tensor(const Handle& h, const PreparedOp& p, const void* const* in, void* out,
                         void*, size_t) {
  return op_tensor(h, p.data.as<TensorOp>(), 1.f, p.in_descs[0], in[0], 1.f, p.in_descs[1], in[1], 0.f,
                   p.out_desc, out);
}

// ---------------------------------------------------------------------------------------------
// Gemm: gemm_forward. inputs: a, b[, bias]. y = alpha * op(a) @ op(b) + beta * bias.

Status prepare_gemm(const PrepareArgs& a, PreparedOp* p, OpInfo* info) {
  const fb::GemmParams& gp = *a.op.params_as_GemmParams();
  JET_RETURN_IF_ERROR(expect_inputs(*p, gp.has_bias() ? 3 : 2, "a, b[, bias] as has_bias says"));
  const TensorDesc& ta = input(a, *p, 0).desc;
  const TensorDesc& tb = input(a, *p, 1).desc;
  const TensorDesc& ty = output(a, *p).desc;
  const int rank = ta.rank();
  if ((rank != 2 && rank != 3) || tb.rank() != rank) {
    return bad("a " + dims_text(ta) + " and b " + dims_text(tb) + " must both have rank 2 or both rank 3");
  }
  JET_RETURN_IF_ERROR(expect_dtype(tb, input_name(a, *p, 1), ta.dtype(), "a and b share a dtype"));
  JET_RETURN_IF_ERROR(expect_dtype(ty, a.infos[p->output].name, ta.dtype(), "the output has a's dtype"));
  JET_RETURN_IF_ERROR(expect_finite(gp.alpha(), "alpha"));
  JET_RETURN_IF_ERROR(expect_finite(gp.beta(), "beta"));
  GemmPrepared& g = p->data.emplace<GemmPrepared>();
  g.gemm.trans_a = gp.trans_a();
  g.gemm.trans_b = gp.trans_b();
  g.alpha = gp.alpha();
  const int r = rank - 2;
  const int64_t m = g.gemm.trans_a ? ta.dim(r + 1) : ta.dim(r);
  const int64_t ka = g.gemm.trans_a ? ta.dim(r) : ta.dim(r + 1);
  const int64_t kb = g.gemm.trans_b ? tb.dim(r + 1) : tb.dim(r);
  const int64_t nn = g.gemm.trans_b ? tb.dim(r) : tb.dim(r + 1);
  if (ka != kb) {
    return bad("a " + dims_text(ta) + " has K = " + std::to_string(ka) + " but b " + dims_text(tb) +
               " has K = " + std::to_string(kb));
  }
  int64_t out[3];
  int k = 0;
  if (rank == 3) {
    const int64_t ba = ta.dim(0), bb = tb.dim(0);
    if (ba != bb && ba != 1 && bb != 1) return bad("batch dims of a and b do not broadcast");
    out[k++] = ba == 1 ? bb : ba;
  }
  out[k++] = m;
  out[k++] = nn;
  JET_RETURN_IF_ERROR(expect_output_dims(a, *p, out, rank));
  if (gp.has_bias()) {
    // The kernel computes alpha * (a @ b + bias): a bias scaled by beta needs beta == alpha (the
    // converter folds other scales into the bias).
    if (gp.beta() != gp.alpha()) {
      return Status(StatusCode::NOT_SUPPORTED,
                    "a Gemm bias scaled by beta " + std::to_string(gp.beta()) + " != alpha " +
                        std::to_string(gp.alpha()) + " is not supported (fold beta / alpha into the bias)");
    }
    g.bias_input = 2;
    const TensorDesc& tc = input(a, *p, 2).desc;
    const std::string& cn = input_name(a, *p, 2);
    JET_RETURN_IF_ERROR(expect_dtype(tc, cn, ta.dtype(), "the bias has a's dtype"));
    if (tc.rank() == rank) {
      for (int i = 0; i < rank; ++i) {
        if (tc.dim(i) != 1 && tc.dim(i) != out[i]) {
          return bad("bias '" + cn + "' " + dims_text(tc) + " does not broadcast to " + jet::dims_text(rank, out));
        }
      }
      g.bias_view = tc;
    } else if (tc.rank() == 1 && tc.dim(0) == nn) {
      int64_t bdims[3] = {1, 1, 1};
      int64_t bstrides[3] = {nn, nn, tc.stride(0)};
      bdims[rank - 1] = nn;
      g.bias_view = TensorDesc::strided(tc.dtype(), rank, bdims, bstrides + (3 - rank));
    } else {
      return bad("bias '" + cn + "' " + dims_text(tc) + " does not broadcast to " + jet::dims_text(rank, out));
    }
  }
  info->flops = 2.0 * static_cast<double>(product(out, 0, rank)) * static_cast<double>(ka);
  return Status();
}

Status execute_gemm(const Handle& h, const PreparedOp& p, const void* const* in, void* out, void*,
                    size_t) {
  const GemmPrepared& g = p.data.as<GemmPrepared>();
  const void* bias = g.bias_input >= 0 ? in[g.bias_input] : nullptr;
  return gemm_forward(h, g.gemm, g.alpha, p.in_descs[0], in[0], p.in_descs[1], in[1], g.bias_view,
                      bias, 0.f, p.out_desc, out);
}

// ---------------------------------------------------------------------------------------------
// Softmax: softmax_forward in CHANNEL mode over a (outer, axis, inner) view. In place allowed.

Status prepare_softmax(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  const fb::SoftmaxParams& sp = *a.op.params_as_SoftmaxParams();
  JET_RETURN_IF_ERROR(expect_inputs(*p, 1, "x"));
  const int algo = sp.algo();
  if (!enum_in_range<SoftmaxAlgo>(algo)) return bad("unknown softmax algorithm " + std::to_string(algo));
  const TensorDesc& x = input(a, *p, 0).desc;
  const TensorDesc& y = output(a, *p).desc;
  JET_RETURN_IF_ERROR(expect_output_like_x(a, *p, "softmax keeps the dtype"));
  const int axis = sp.axis();
  if (axis < 0 || axis >= x.rank()) {
    return bad("axis " + std::to_string(axis) + " out of range for " + dims_text(x));
  }
  SoftmaxPrepared& s = p->data.emplace<SoftmaxPrepared>();
  s.algo = static_cast<SoftmaxAlgo>(algo);
  s.mode = SoftmaxMode::CHANNEL;
  if (axis == 1 && x.rank() >= 3 && x.rank() <= 5) {
    s.x_view = x;  // N, C, spatial as is, any strides
    s.y_view = y;
    return Status();
  }
  // Any other axis: the CHANNEL mode over (outer, axis, inner), when the dims merge.
  const TensorDesc* src[2] = {&x, &y};
  TensorDesc* dst[2] = {&s.x_view, &s.y_view};
  for (int k = 0; k < 2; ++k) {
    int64_t dims[3], strides[3];
    const bool ok = merge_dims(*src[k], 0, axis, &dims[0], &strides[0]) &&
                    merge_dims(*src[k], axis + 1, src[k]->rank(), &dims[2], &strides[2]);
    if (!ok) {
      return Status(StatusCode::NOT_SUPPORTED,
                    std::string("softmax over axis ") + std::to_string(axis) + " of a tensor with strides " +
                        jet::dims_text(src[k]->rank(), src[k]->strides()) +
                        " (the dims around the axis must nest contiguously)");
    }
    dims[1] = src[k]->dim(axis);
    strides[1] = src[k]->stride(axis);
    if (dims[0] == 1) strides[0] = strides[1] * dims[1];  // any valid stride for a size-1 dim
    *dst[k] = TensorDesc::strided(src[k]->dtype(), 3, dims, strides);
    JET_RETURN_IF_ERROR(dst[k]->validate(k == 0 ? "softmax x view" : "softmax y view"));
  }
  return Status();
}

Status execute_softmax(const Handle& h, const PreparedOp& p, const void* const* in, void* out,
                       void*, size_t) {
  const SoftmaxPrepared& s = p.data.as<SoftmaxPrepared>();
  return softmax_forward(h, s.algo, s.mode, 1.f, s.x_view, in[0], 0.f, s.y_view, out);
}

// ---------------------------------------------------------------------------------------------
// Concat: concat_forward. inputs: x0, x1, ... (any dtypes; each is converted into y's).

Status prepare_concat(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  p->data.emplace<int>();
  const fb::ConcatParams& cp = *a.op.params_as_ConcatParams();
  if (p->inputs.empty()) return bad("has no inputs");
  const TensorDesc& y = output(a, *p).desc;
  const int axis = cp.axis();
  if (axis < 0 || axis >= y.rank()) return bad("axis " + std::to_string(axis) + " out of range for " + dims_text(y));
  int64_t sum = 0;
  for (size_t k = 0; k < p->inputs.size(); ++k) {
    const TensorDesc& x = input(a, *p, k).desc;
    bool same = x.rank() == y.rank();
    for (int i = 0; same && i < y.rank(); ++i) same = i == axis || x.dim(i) == y.dim(i);
    if (!same) {
      return bad("input '" + input_name(a, *p, k) + "' " + dims_text(x) + " differs from the output " +
                 dims_text(y) + " outside axis " + std::to_string(axis));
    }
    if (x.dim(axis) > y.dim(axis) - sum) {  // sum stays <= y's dim: no overflow
      return bad("the inputs' extents along axis " + std::to_string(axis) + " exceed the output's " +
                 std::to_string(y.dim(axis)));
    }
    sum += x.dim(axis);
  }
  if (sum != y.dim(axis)) {
    return bad("the inputs' extents along axis " + std::to_string(axis) + " sum to " + std::to_string(sum) +
               ", but the output has " + std::to_string(y.dim(axis)));
  }
  p->data.as<int>() = axis;
  return Status();
}

Status execute_concat(const Handle& h, const PreparedOp& p, const void* const* in, void* out,
                      void*, size_t) {
  return concat_forward(h, p.data.as<int>(), static_cast<int>(p.in_descs.size()), p.in_descs.data(),
                        in, 1.f, 0.f, p.out_desc, out);
}

// ---------------------------------------------------------------------------------------------
// Reshape: same bytes, new dims; a copy unless the output took over the input's region.

Status prepare_reshape(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  JET_RETURN_IF_ERROR(expect_inputs(*p, 1, "x"));
  const TensorDesc& x = input(a, *p, 0).desc;
  const TensorDesc& y = output(a, *p).desc;
  JET_RETURN_IF_ERROR(expect_dtype(y, a.infos[p->output].name, x.dtype(), "reshape keeps the dtype"));
  if (!x.is_packed() || !y.is_packed()) return bad("reshape input and output must be packed");
  if (x.elements() != y.elements()) {
    return bad("cannot reshape " + dims_text(x) + " (" + std::to_string(x.elements()) + " elements) to " +
               dims_text(y) + " (" + std::to_string(y.elements()) + ")");
  }
  const int64_t n = x.elements();
  ReshapePrepared& r = p->data.emplace<ReshapePrepared>();
  r.x_view = TensorDesc::packed(x.dtype(), 1, &n);
  r.y_view = TensorDesc::packed(y.dtype(), 1, &n);
  return Status();
}

Status execute_reshape(const Handle& h, const PreparedOp& p, const void* const* in, void* out,
                       void*, size_t) {
  if (in[0] == out) return Status();  // in place: the bytes are already there
  return transform_tensor(h, 1.f, p.data.as<ReshapePrepared>().x_view, in[0], 0.f, p.data.as<ReshapePrepared>().y_view, out);
}

// ---------------------------------------------------------------------------------------------
// BatchNorm: batchnorm_forward_inference. inputs: x, scale, bias, mean, var (C floats each).

Status prepare_batchnorm(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  p->data.emplace<double>();
  const fb::BatchNormParams& bp = *a.op.params_as_BatchNormParams();
  JET_RETURN_IF_ERROR(expect_inputs(*p, 5, "x, scale, bias, mean, var"));
  JET_RETURN_IF_ERROR(expect_spatial_x(a, *p));
  JET_RETURN_IF_ERROR(expect_output_like_x(a, *p, "batchnorm keeps the dtype"));
  JET_RETURN_IF_ERROR(expect_channel_params(a, *p, 1, "batchnorm parameters are f32"));
  return read_epsilon(bp.epsilon(), &p->data.as<double>());
}

Status execute_batchnorm(const Handle& h, const PreparedOp& p, const void* const* in, void* out,
                         void*, size_t) {
  return batchnorm_forward_inference(h, 1.f, 0.f, p.in_descs[0], in[0], p.out_desc, out,
                                     static_cast<const float*>(in[1]), static_cast<const float*>(in[2]),
                                     static_cast<const float*>(in[3]), static_cast<const float*>(in[4]),
                                     p.data.as<double>());
}

// ---------------------------------------------------------------------------------------------
// Transform: transform_tensor (dtype and layout conversion, the output tensor says to what).

Status prepare_transform(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  JET_RETURN_IF_ERROR(expect_inputs(*p, 1, "x"));
  const TensorDesc& x = input(a, *p, 0).desc;
  return expect_output_dims(a, *p, x.dims(), x.rank());
}

Status execute_transform(const Handle& h, const PreparedOp& p, const void* const* in, void* out,
                         void*, size_t) {
  return transform_tensor(h, 1.f, p.in_descs[0], in[0], 0.f, p.out_desc, out);
}

// ---------------------------------------------------------------------------------------------
// Shared by the ops below: a vector of exactly `n` entries.

Status read_exact(const flatbuffers::Vector<int64_t>* v, int n, const char* what, int64_t* out) {
  const int have = v ? static_cast<int>(v->size()) : 0;
  if (have != n) {
    return bad(std::string(what) + " has " + std::to_string(have) + " entries, expected " + std::to_string(n));
  }
  for (int i = 0; i < n; ++i) out[i] = read_i64(v, static_cast<flatbuffers::uoffset_t>(i));
  return Status();
}

// ---------------------------------------------------------------------------------------------
// Slice: transform_tensor from a strided view of x (slice, transpose, split). inputs: x.

Status prepare_slice(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  SlicePrepared& sl = p->data.emplace<SlicePrepared>();
  const fb::SliceParams& sp = *a.op.params_as_SliceParams();
  JET_RETURN_IF_ERROR(expect_inputs(*p, 1, "x"));
  JET_RETURN_IF_ERROR(expect_same_dtype(a, *p, "slice keeps the dtype"));
  const TensorDesc& x = input(a, *p, 0).desc;
  const TensorDesc& y = output(a, *p).desc;
  const int rank = x.rank();
  if (y.rank() != rank) return bad("output " + dims_text(y) + " must have x's rank " + std::to_string(rank));
  int64_t starts[kMaxRank], steps[kMaxRank], perm[kMaxRank];
  JET_RETURN_IF_ERROR(read_exact(sp.starts(), rank, "starts", starts));
  JET_RETURN_IF_ERROR(read_exact(sp.steps(), rank, "steps", steps));
  JET_RETURN_IF_ERROR(read_exact(sp.perm(), rank, "perm", perm));
  bool seen[kMaxRank] = {};
  for (int d = 0; d < rank; ++d) {
    if (perm[d] < 0 || perm[d] >= rank || seen[perm[d]]) return bad("perm is not a permutation of x's dims");
    seen[perm[d]] = true;
  }
  int64_t dims[kMaxRank], strides[kMaxRank];
  int64_t offset = 0;
  for (int d = 0; d < rank; ++d) {
    const int k = static_cast<int>(perm[d]);
    const int64_t dim = x.dim(k), b = starts[k], s = steps[k], n = y.dim(d);
    // The last element read, b + (n - 1) * s, must be inside x's dim; by division (no overflow).
    if (b < 0 || b >= dim || s < 1 || (dim - 1 - b) / s < n - 1) {
      return bad("output dim " + std::to_string(d) + " reads x dim " + std::to_string(k) + " from " +
                 std::to_string(b) + " in steps of " + std::to_string(s) + " for " + std::to_string(n) +
                 " elements, outside x " + dims_text(x));
    }
    dims[d] = n;
    // n == 1 never moves along the dim, so any step works; x's stride avoids a huge product.
    strides[d] = n == 1 ? x.stride(k) : x.stride(k) * s;  // < x's span: fits
    offset += b * x.stride(k);
  }
  sl.view = TensorDesc::strided(x.dtype(), rank, dims, strides);
  JET_RETURN_IF_ERROR(sl.view.validate_any_dtype("slice view of x"));
  sl.offset_bytes = static_cast<size_t>(offset) * dtype_size(x.dtype());
  return Status();
}

Status execute_slice(const Handle& h, const PreparedOp& p, const void* const* in, void* out, void*,
                     size_t) {
  const void* base = static_cast<const uint8_t*>(in[0]) + p.data.as<SlicePrepared>().offset_bytes;
  return transform_tensor(h, 1.f, p.data.as<SlicePrepared>().view, base, 0.f, p.out_desc, out);
}

// ---------------------------------------------------------------------------------------------
// Pad: pad_forward (constant, reflect, edge; negative pads crop). inputs: x.

Status prepare_pad(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  const fb::PadParams& pp = *a.op.params_as_PadParams();
  JET_RETURN_IF_ERROR(expect_inputs(*p, 1, "x"));
  JET_RETURN_IF_ERROR(expect_same_dtype(a, *p, "pad keeps the dtype"));
  const TensorDesc& x = input(a, *p, 0).desc;
  PadPrepared& pd = p->data.emplace<PadPrepared>();
  const int mode = pp.mode();
  if (!enum_in_range<PadMode>(mode)) return bad("unknown pad mode " + std::to_string(mode));
  pd.mode = static_cast<PadMode>(mode);
  pd.value = pp.value();
  JET_RETURN_IF_ERROR(read_exact(pp.pad_begin(), x.rank(), "pad_begin", pd.pad_begin));
  JET_RETURN_IF_ERROR(read_exact(pp.pad_end(), x.rank(), "pad_end", pd.pad_end));
  const int64_t limit = int64_t(1) << 40;  // far above any real pad; the sums below cannot overflow
  int64_t out[kMaxRank];
  for (int d = 0; d < x.rank(); ++d) {
    const int64_t b = pd.pad_begin[d], e = pd.pad_end[d];
    if (b > limit || b < -limit || e > limit || e < -limit) return bad("pad of dim " + std::to_string(d) + " out of range");
    if (pd.mode == PadMode::REFLECT && (b >= x.dim(d) || e >= x.dim(d))) {
      return bad("reflect pads of dim " + std::to_string(d) + " must be < its size " + std::to_string(x.dim(d)));
    }
    out[d] = x.dim(d) + b + e;
  }
  return expect_output_dims(a, *p, out, x.rank());
}

Status execute_pad(const Handle& h, const PreparedOp& p, const void* const* in, void* out, void*,
                   size_t) {
  const PadPrepared& pd = p.data.as<PadPrepared>();
  return pad_forward(h, pd.mode, pd.pad_begin, pd.pad_end, pd.value, 1.f, p.in_descs[0], in[0], 0.f,
                     p.out_desc, out);
}

// ---------------------------------------------------------------------------------------------
// Resize: resize_forward of the spatial dims (nearest, linear, cubic). inputs: x.

Status prepare_resize(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  ResizeDesc& r = p->data.emplace<ResizeDesc>();
  const fb::ResizeParams& rp = *a.op.params_as_ResizeParams();
  JET_RETURN_IF_ERROR(expect_inputs(*p, 1, "x"));
  JET_RETURN_IF_ERROR(expect_same_dtype(a, *p, "resize keeps the dtype"));
  const TensorDesc& x = input(a, *p, 0).desc;
  const TensorDesc& y = output(a, *p).desc;
  JET_RETURN_IF_ERROR(expect_spatial_x(a, *p));
  if (y.rank() != x.rank() || y.dim(0) != x.dim(0) || y.dim(1) != x.dim(1)) {
    return bad("output " + dims_text(y) + " must keep x's rank, N and C (x is " + dims_text(x) + ")");
  }
  if (!enum_in_range<ResizeMode>(rp.mode())) return bad("unknown resize mode");
  if (!enum_in_range<ResizeCoord>(rp.coord())) {
    return bad("unknown coordinate transformation mode");
  }
  if (!enum_in_range<ResizeNearest>(rp.nearest())) return bad("unknown nearest mode");
  r.mode = static_cast<ResizeMode>(rp.mode());
  r.coord = static_cast<ResizeCoord>(rp.coord());
  r.nearest = static_cast<ResizeNearest>(rp.nearest());
  r.cubic_coeff_a = rp.cubic_coeff_a();
  r.exclude_outside = rp.exclude_outside();
  if (!std::isfinite(r.cubic_coeff_a)) return bad("cubic_coeff_a must be finite");
  const int sr = x.rank() - 2;
  const auto* scales = rp.scales();
  if (scales && scales->size() != 0) {
    if (scales->size() != static_cast<flatbuffers::uoffset_t>(sr)) {
      return bad("scales has " + std::to_string(scales->size()) + " entries, expected " + std::to_string(sr));
    }
    for (int i = 0; i < sr; ++i) {
      const float s = scales->Get(static_cast<flatbuffers::uoffset_t>(i));
      if (!(s >= 0.f) || !std::isfinite(s)) return bad("scales must be finite and >= 0");
      r.scales[i] = s;
    }
  }
  return Status();
}

Status execute_resize(const Handle& h, const PreparedOp& p, const void* const* in, void* out, void*,
                      size_t) {
  return resize_forward(h, p.data.as<ResizeDesc>(), 1.f, p.in_descs[0], in[0], 0.f, p.out_desc, out);
}

// ---------------------------------------------------------------------------------------------
// ConvTranspose: conv_backward_data, then the bias by add_tensor. inputs: x, w[, bias].

Status prepare_conv_transpose(const PrepareArgs& a, PreparedOp* p, OpInfo* info) {
  const fb::ConvTransposeParams& cp = *a.op.params_as_ConvTransposeParams();
  JET_RETURN_IF_ERROR(expect_inputs(*p, cp.has_bias() ? 3 : 2, "x, w[, bias] as has_bias says"));
  const TensorDesc& x = input(a, *p, 0).desc;
  const TensorDesc& w = input(a, *p, 1).desc;
  const TensorDesc& y = output(a, *p).desc;
  JET_RETURN_IF_ERROR(expect_spatial_x(a, *p));
  if (w.rank() != x.rank() || y.rank() != x.rank()) {
    return bad("x " + dims_text(x) + ", filter " + dims_text(w) + " and output " + dims_text(y) + " differ in rank");
  }
  if (!w.is_packed()) return bad("filter '" + input_name(a, *p, 1) + "' must be packed (C_in, C_out/groups, spatial)");
  JET_RETURN_IF_ERROR(expect_dtype(w, input_name(a, *p, 1), x.dtype(), "the filter has x's dtype"));
  JET_RETURN_IF_ERROR(expect_same_dtype(a, *p, "the output has x's dtype"));
  ConvTransposePrepared& c = p->data.emplace<ConvTransposePrepared>();
  JET_RETURN_IF_ERROR(read_conv_desc(cp, x.rank() - 2, &c.conv));
  const int64_t groups = c.conv.groups();
  // By division before any formula multiplies: x's C is the filter's K, the output's C is
  // groups x the filter's C.
  if (groups > w.dim(0) || w.dim(0) % groups != 0 || x.dim(1) != w.dim(0) || y.dim(1) % groups != 0 ||
      y.dim(1) / groups != w.dim(1)) {
    return bad("groups " + std::to_string(groups) + " do not fit x " + dims_text(x) + ", filter " + dims_text(w) +
               " and output " + dims_text(y));
  }
  c.filter = FilterDesc::make(w.dtype(), FilterLayout::KCRS, w.rank(), w.dims());
  JET_RETURN_IF_ERROR(c.filter.validate("w"));
  int64_t back[kMaxRank] = {};
  JET_RETURN_IF_ERROR(conv_output_dims(y, c.filter, c.conv, back));
  bool same = true;
  for (int i = 0; i < x.rank(); ++i) same = same && back[i] == x.dim(i);
  if (!same) {
    return bad("output " + dims_text(y) + " convolves back to " + jet::dims_text(x.rank(), back) + ", not x's " +
               dims_text(x));
  }
  if (cp.has_bias()) {
    c.bias_input = 2;
    JET_RETURN_IF_ERROR(prepare_channel_bias(a, *p, 2, y.dim(1), &c.bias_view));
  }
  // Multiply-adds: every input element meets every tap of its group's filters.
  info->flops = 2.0 * static_cast<double>(x.elements()) * static_cast<double>(product(w.dims(), 1, w.rank()));
  return Status();
}

Status execute_conv_transpose(const Handle& h, const PreparedOp& p, const void* const* in, void* out,
                              void*, size_t) {
  const ConvTransposePrepared& c = p.data.as<ConvTransposePrepared>();
  Status st = conv_backward_data(h, 1.f, c.filter, in[1], p.in_descs[0], in[0], c.conv, 0.f, p.out_desc, out);
  if (!st.ok() || c.bias_input < 0) return st;
  return add_tensor(h, 1.f, c.bias_view, in[c.bias_input], 1.f, p.out_desc, out);
}

// ---------------------------------------------------------------------------------------------
// InstanceNorm: instancenorm_forward. inputs: x, scale, bias (C f32 values each). In place allowed.

Status prepare_instancenorm(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  p->data.emplace<double>();
  const fb::InstanceNormParams& ip = *a.op.params_as_InstanceNormParams();
  JET_RETURN_IF_ERROR(expect_inputs(*p, 3, "x, scale, bias"));
  JET_RETURN_IF_ERROR(expect_spatial_x(a, *p));
  JET_RETURN_IF_ERROR(expect_output_like_x(a, *p, "instancenorm keeps the dtype"));
  JET_RETURN_IF_ERROR(expect_channel_params(a, *p, 1, "instancenorm parameters are f32"));
  return read_epsilon(ip.epsilon(), &p->data.as<double>());
}

Status execute_instancenorm(const Handle& h, const PreparedOp& p, const void* const* in, void* out,
                            void*, size_t) {
  return instancenorm_forward(h, 1.f, 0.f, p.in_descs[0], in[0], p.out_desc, out,
                              static_cast<const float*>(in[1]), static_cast<const float*>(in[2]), p.data.as<double>());
}

// ---------------------------------------------------------------------------------------------
// LayerNorm: layernorm_forward over x's dims from `axis` on. inputs: x[, scale][, bias] (f32, one
// packed value per element of a group). In place allowed.

}  // namespace

// The output rule (op_rules.h): outside the file-local namespace, the converter runs it too.
Status infer_output(const fb::LayerNormParamsT& params, const TensorDesc* in, OpOutput* out) {
  const TensorDesc& x = in[0];
  if (params.axis < 0 || params.axis >= x.rank()) {
    return bad("axis " + std::to_string(params.axis) + " is outside x's rank " + std::to_string(x.rank()));
  }
  if (!(params.epsilon > 0) || !std::isfinite(params.epsilon)) {
    return bad("epsilon " + std::to_string(params.epsilon) + " must be finite and > 0");
  }
  const int64_t inner = product(x.dims(), params.axis, x.rank());
  const char* names[2] = {"scale", "bias"};
  const bool present[2] = {params.has_scale, params.has_bias};
  for (int i = 0, k = 1; i < 2; ++i) {
    if (!present[i]) continue;
    const TensorDesc& t = in[k++];
    if (t.dtype() != DType::F32) return bad(std::string(names[i]) + " is " + dtype_name(t.dtype()) + ", expected f32");
    if (t.elements() != inner || !t.is_packed()) {
      return bad(std::string(names[i]) + " has dims " + dims_text(t) + ", expected " + std::to_string(inner) +
                 " packed elements (one per element of a normalized group: x's dims from axis " +
                 std::to_string(params.axis) + " on)");
    }
  }
  *out = OpOutput{x.dtype(), x.rank(), {}};
  for (int d = 0; d < x.rank(); ++d) out->dims[d] = x.dim(d);
  return Status();
}

// The kernel rule (op_rules.h).
Status run_kernel(const Handle& h, const fb::LayerNormParamsT& l, const KernelCall& c) {
  const float* scale = l.has_scale ? static_cast<const float*>(c.inputs[1]) : nullptr;
  const float* bias = l.has_bias ? static_cast<const float*>(c.inputs[l.has_scale ? 2 : 1]) : nullptr;
  return layernorm_forward(h, l.axis, 1.f, 0.f, c.input_descs[0], c.inputs[0], c.output_desc, c.output, scale, bias,
                           l.epsilon);
}

namespace {

Status prepare_layernorm(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  const fb::LayerNormParams& lp = *a.op.params_as_LayerNormParams();
  return prepare_by_rule(a, p, lp, 1 + size_t(lp.has_scale()) + size_t(lp.has_bias()), "x[, scale][, bias]");
}

constexpr ExecuteFn execute_layernorm = execute_by_rule<fb::LayerNormParamsT>;

// ---------------------------------------------------------------------------------------------
// LRN: lrn_cross_channel_forward. inputs: x. In place allowed.

LrnDesc lrn_desc(const fb::LrnParamsT& params) {
  LrnDesc d;
  d.n = params.size;
  d.alpha = params.alpha;
  d.beta = params.beta;
  d.k = params.k;
  return d;
}

}  // namespace

// The output rule (op_rules.h): outside the file-local namespace, the converter runs it too.
Status infer_output(const fb::LrnParamsT& params, const TensorDesc* in, OpOutput* out) {
  const TensorDesc& x = in[0];
  if (x.rank() < 3 || x.rank() > 5) return bad("x " + dims_text(x) + " must have rank 3..5");
  if (!std::isfinite(params.alpha) || !std::isfinite(params.beta) || !std::isfinite(params.k)) {
    return bad("LRN alpha, beta and k must be finite");
  }
  JET_RETURN_IF_ERROR(lrn_desc(params).validate());
  *out = OpOutput{x.dtype(), x.rank(), {}};
  for (int d = 0; d < x.rank(); ++d) out->dims[d] = x.dim(d);
  return Status();
}

namespace {

// The kernel's descriptor is the op's prepared data (the trainer's backward rule reads it too).
Status prepare_lrn(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  fb::LrnParamsT params;
  a.op.params_as_LrnParams()->UnPackTo(&params);
  JET_RETURN_IF_ERROR(check_by_rule(a, *p, params, 1, "x"));
  p->data.emplace<LrnDesc>() = lrn_desc(params);
  return Status();
}

Status execute_lrn(const Handle& h, const PreparedOp& p, const void* const* in, void* out, void*,
                   size_t) {
  return lrn_cross_channel_forward(h, p.data.as<LrnDesc>(), 1.f, p.in_descs[0], in[0], 0.f, p.out_desc, out);
}

// ---------------------------------------------------------------------------------------------
// Reduce: reduce_forward over the dims where the output is 1 and x is not. inputs: x.

Status prepare_reduce(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  p->data.emplace<ReduceOp>();
  const fb::ReduceParams& rp = *a.op.params_as_ReduceParams();
  JET_RETURN_IF_ERROR(expect_inputs(*p, 1, "x"));
  JET_RETURN_IF_ERROR(expect_same_dtype(a, *p, "reduce keeps the dtype"));
  const TensorDesc& x = input(a, *p, 0).desc;
  const TensorDesc& y = output(a, *p).desc;
  if (!enum_in_range<ReduceOp>(rp.op())) return bad("unknown reduce op " + std::to_string(rp.op()));
  p->data.as<ReduceOp>() = static_cast<ReduceOp>(rp.op());
  bool ok = y.rank() == x.rank();
  for (int d = 0; ok && d < x.rank(); ++d) ok = y.dim(d) == x.dim(d) || y.dim(d) == 1;
  if (!ok) return bad("output " + dims_text(y) + " must be x's " + dims_text(x) + " with reduced dims set to 1");
  return Status();
}

Status execute_reduce(const Handle& h, const PreparedOp& p, const void* const* in, void* out, void*,
                      size_t) {
  return reduce_forward(h, p.data.as<ReduceOp>(), 1.f, p.in_descs[0], in[0], 0.f, p.out_desc, out);
}

// ---------------------------------------------------------------------------------------------
// Shared by Logic and Where: numpy broadcasting of `count` descriptors (ranks aligned by leading
// 1s) into out / *rank.

Status broadcast_inputs(const PrepareArgs& a, const PreparedOp& p, int64_t* out, int* rank) {
  *rank = 0;
  for (size_t k = 0; k < p.inputs.size(); ++k) *rank = std::max(*rank, input(a, p, k).desc.rank());
  for (int i = 0; i < *rank; ++i) out[i] = 1;
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    const TensorDesc& t = input(a, p, k).desc;
    const int shift = *rank - t.rank();
    for (int i = 0; i < t.rank(); ++i) {
      const int64_t d = t.dim(i);
      int64_t& o = out[shift + i];
      if (d != o && d != 1 && o != 1) {
        return bad("input '" + input_name(a, p, k) + "' " + dims_text(t) + " does not broadcast with the others");
      }
      if (o == 1) o = d;
    }
  }
  return Status();
}

// ---------------------------------------------------------------------------------------------
// Logic: logic_tensor (comparisons, And, Or, Xor). inputs: a, b (one dtype), broadcast; a bool
// output.

Status prepare_logic(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  p->data.emplace<LogicOp>();
  const fb::LogicParams& lp = *a.op.params_as_LogicParams();
  JET_RETURN_IF_ERROR(expect_inputs(*p, 2, "a, b"));
  if (!enum_in_range<LogicOp>(lp.op())) return bad("unknown logic op " + std::to_string(lp.op()));
  const LogicOp op = static_cast<LogicOp>(lp.op());
  p->data.as<LogicOp>() = op;
  const TensorDesc& ta = input(a, *p, 0).desc;
  JET_RETURN_IF_ERROR(expect_dtype(input(a, *p, 1).desc, input_name(a, *p, 1), ta.dtype(), "a and b share a dtype"));
  JET_RETURN_IF_ERROR(expect_dtype(output(a, *p).desc, a.infos[p->output].name, DType::BOOL, "the result is bool"));
  const bool logical = op == LogicOp::AND || op == LogicOp::OR || op == LogicOp::XOR;
  if (logical != (ta.dtype() == DType::BOOL) && !(op == LogicOp::EQUAL && ta.dtype() == DType::BOOL)) {
    return bad(std::string(logic_op_name(op)) + " of " + dtype_name(ta.dtype()) + " tensors");
  }
  int64_t out[kMaxRank];
  int rank = 0;
  JET_RETURN_IF_ERROR(broadcast_inputs(a, *p, out, &rank));
  return expect_output_dims(a, *p, out, rank);
}

Status execute_logic(const Handle& h, const PreparedOp& p, const void* const* in, void* out, void*, size_t) {
  return logic_tensor(h, p.data.as<LogicOp>(), p.in_descs[0], in[0], p.in_descs[1], in[1], p.out_desc, out);
}

// ---------------------------------------------------------------------------------------------
// Where: where_forward. inputs: condition (bool), a, b (the output's dtype), broadcast.

Status prepare_where(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  JET_RETURN_IF_ERROR(expect_inputs(*p, 3, "condition, a, b"));
  JET_RETURN_IF_ERROR(expect_dtype(input(a, *p, 0).desc, input_name(a, *p, 0), DType::BOOL, "the condition is bool"));
  const DType t = output(a, *p).desc.dtype();
  JET_RETURN_IF_ERROR(expect_dtype(input(a, *p, 1).desc, input_name(a, *p, 1), t, "a has the output's dtype"));
  JET_RETURN_IF_ERROR(expect_dtype(input(a, *p, 2).desc, input_name(a, *p, 2), t, "b has the output's dtype"));
  int64_t out[kMaxRank];
  int rank = 0;
  JET_RETURN_IF_ERROR(broadcast_inputs(a, *p, out, &rank));
  return expect_output_dims(a, *p, out, rank);
}

Status execute_where(const Handle& h, const PreparedOp& p, const void* const* in, void* out, void*, size_t) {
  return where_forward(h, p.in_descs[0], in[0], p.in_descs[1], in[1], p.in_descs[2], in[2], p.out_desc, out);
}

// ---------------------------------------------------------------------------------------------
// ArgReduce: arg_reduce_forward (ArgMax, ArgMin). inputs: x; an i64 output, 1 at `axis`.

struct ArgReducePrepared {
  ArgReduceOp op = ArgReduceOp::ARGMAX;
  int axis = 0;
  bool select_last_index = false;
};

Status prepare_arg_reduce(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  ArgReducePrepared& r = p->data.emplace<ArgReducePrepared>();
  const fb::ArgReduceParams& ap = *a.op.params_as_ArgReduceParams();
  JET_RETURN_IF_ERROR(expect_inputs(*p, 1, "x"));
  if (!enum_in_range<ArgReduceOp>(ap.op())) return bad("unknown arg-reduce op " + std::to_string(ap.op()));
  const TensorDesc& x = input(a, *p, 0).desc;
  if (x.dtype() == DType::BOOL) return bad("'" + input_name(a, *p, 0) + "' is bool");
  JET_RETURN_IF_ERROR(expect_dtype(output(a, *p).desc, a.infos[p->output].name, DType::I64, "the indices are i64"));
  if (ap.axis() < 0 || ap.axis() >= x.rank()) {
    return bad("axis " + std::to_string(ap.axis()) + " out of range for " + dims_text(x));
  }
  r.op = static_cast<ArgReduceOp>(ap.op());
  r.axis = ap.axis();
  r.select_last_index = ap.select_last_index();
  int64_t out[kMaxRank];
  for (int i = 0; i < x.rank(); ++i) out[i] = i == r.axis ? 1 : x.dim(i);
  return expect_output_dims(a, *p, out, x.rank());
}

Status execute_arg_reduce(const Handle& h, const PreparedOp& p, const void* const* in, void* out, void*, size_t) {
  const ArgReducePrepared& r = p.data.as<ArgReducePrepared>();
  return arg_reduce_forward(h, r.op, r.axis, r.select_last_index, p.in_descs[0], in[0], p.out_desc, out);
}

// ---------------------------------------------------------------------------------------------
// Gather: gather_forward. inputs: x (any dtype), indices (i32 / i64); the output is x's dims
// before axis, the indices', x's after axis.

}  // namespace

// The output rule (op_rules.h): outside the file-local namespace, the converter runs it too.
Status infer_output(const fb::GatherParamsT& params, const TensorDesc* in, OpOutput* out) {
  const TensorDesc& x = in[0];
  const TensorDesc& idx = in[1];
  const int axis = params.axis;
  if (idx.dtype() != DType::I32 && idx.dtype() != DType::I64) {
    return bad(std::string("indices are ") + dtype_name(idx.dtype()) + ", expected i32 or i64");
  }
  if (axis < 0 || axis >= x.rank()) return bad("axis " + std::to_string(axis) + " out of range for " + dims_text(x));
  const int rank = x.rank() - 1 + idx.rank();
  if (rank > kMaxRank) return bad("the output's rank " + std::to_string(rank) + " is above " + std::to_string(kMaxRank));
  *out = OpOutput{x.dtype(), rank, {}};
  for (int d = 0; d < rank; ++d) {
    out->dims[d] = d < axis ? x.dim(d) : d < axis + idx.rank() ? idx.dim(d - axis) : x.dim(d - idx.rank() + 1);
  }
  return Status();
}

// The kernel rule (op_rules.h).
Status run_kernel(const Handle& h, const fb::GatherParamsT& g, const KernelCall& c) {
  return gather_forward(h, g.axis, c.input_descs[0], c.inputs[0], c.input_descs[1], c.inputs[1], c.output_desc,
                        c.output);
}

namespace {

Status prepare_gather(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  return prepare_by_rule(a, p, *a.op.params_as_GatherParams(), 2, "x, indices");
}

constexpr ExecuteFn execute_gather = execute_by_rule<fb::GatherParamsT>;

// ---------------------------------------------------------------------------------------------
// TopK: topk_forward, one of its two outputs (values or indices). inputs: x (f32, f16, i32, i64).

}  // namespace

// The output rule (op_rules.h): outside the file-local namespace, the converter runs it too.
Status infer_output(const fb::TopKParamsT& params, const TensorDesc* in, OpOutput* out) {
  const TensorDesc& x = in[0];
  if (x.dtype() == DType::BOOL) return Status(StatusCode::NOT_SUPPORTED, "x is bool; TopK takes f32, f16, i32, i64");
  if (params.axis < 0 || params.axis >= x.rank()) {
    return bad("axis " + std::to_string(params.axis) + " out of range for " + dims_text(x));
  }
  if (params.k < 1 || params.k > x.dim(params.axis)) {
    return bad("k = " + std::to_string(params.k) + " outside [1, " + std::to_string(x.dim(params.axis)) + "]");
  }
  *out = OpOutput{params.indices ? DType::I64 : x.dtype(), x.rank(), {}};
  for (int d = 0; d < x.rank(); ++d) out->dims[d] = d == params.axis ? params.k : x.dim(d);
  return Status();
}

// The kernel rule (op_rules.h).
Status run_kernel(const Handle& h, const fb::TopKParamsT& t, const KernelCall& c) {
  return topk_forward(h, t.axis, t.k, t.largest, c.input_descs[0], c.inputs[0], c.output_desc,
                      t.indices ? nullptr : c.output, c.output_desc, t.indices ? c.output : nullptr);
}

namespace {

Status prepare_topk(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  return prepare_by_rule(a, p, *a.op.params_as_TopKParams(), 1, "x");
}

constexpr ExecuteFn execute_topk = execute_by_rule<fb::TopKParamsT>;

// ---------------------------------------------------------------------------------------------
// NonMaxSuppression: nms_forward. inputs: boxes [B, N, 4], scores [B, C, N]; the output is i64
// [B * C * min(max_output_boxes_per_class, N), 3], padded with rows of -1.

NmsDesc nms_desc(const fb::NmsParamsT& params) {
  NmsDesc d;
  d.center_point_box = params.center_point_box;
  d.max_output_boxes_per_class = params.max_output_boxes_per_class;
  d.iou_threshold = params.iou_threshold;
  d.has_score_threshold = params.has_score_threshold;
  d.score_threshold = params.score_threshold;
  return d;
}

}  // namespace

// The output rule (op_rules.h): outside the file-local namespace, the converter runs it too.
Status infer_output(const fb::NmsParamsT& params, const TensorDesc* in, OpOutput* out) {
  const TensorDesc& boxes = in[0];
  const TensorDesc& scores = in[1];
  if (!dtype_is_float(boxes.dtype()) || scores.dtype() != boxes.dtype()) {
    return Status(StatusCode::NOT_SUPPORTED, "boxes and scores must share a float dtype");
  }
  if (boxes.rank() != 3 || boxes.dim(2) != 4 || scores.rank() != 3 || scores.dim(0) != boxes.dim(0) ||
      scores.dim(2) != boxes.dim(1)) {
    return bad("boxes " + dims_text(boxes) + " and scores " + dims_text(scores) + " are not [B, N, 4] and [B, C, N]");
  }
  if (params.max_output_boxes_per_class < 1) return bad("max_output_boxes_per_class must be >= 1");
  JET_RETURN_IF_ERROR(expect_finite(params.iou_threshold, "iou_threshold"));
  if (std::isnan(params.score_threshold)) return bad("score_threshold is NaN");
  *out = OpOutput{DType::I64, 2, {nms_max_rows(nms_desc(params), boxes.dim(0), scores.dim(1), boxes.dim(1)), 3}};
  return Status();
}

namespace {

// The kernel's descriptor is the op's prepared data; the workspace is sized once here.
Status prepare_nms(const PrepareArgs& a, PreparedOp* p, OpInfo* info) {
  fb::NmsParamsT params;
  a.op.params_as_NmsParams()->UnPackTo(&params);
  JET_RETURN_IF_ERROR(check_by_rule(a, *p, params, 2, "boxes, scores"));
  const NmsDesc& d = p->data.emplace<NmsDesc>() = nms_desc(params);
  size_t ws = 0;
  JET_RETURN_IF_ERROR(nms_workspace_size(a.handle, d, input(a, *p, 0).desc, input(a, *p, 1).desc, &ws));
  p->workspace_bytes = ws;
  info->workspace_bytes = ws;
  return Status();
}

Status execute_nms(const Handle& h, const PreparedOp& p, const void* const* in, void* out, void* workspace,
                   size_t workspace_bytes) {
  return nms_forward(h, p.data.as<NmsDesc>(), p.in_descs[0], in[0], p.in_descs[1], in[1], workspace,
                     workspace_bytes, p.out_desc, out);
}

// ---------------------------------------------------------------------------------------------
// GatherElements: gather_elements_forward. inputs: x (any dtype), indices (i32 / i64, x's rank,
// each dim at most x's); the output has the indices' dims.

}  // namespace

// The output rule (op_rules.h): outside the file-local namespace, the converter runs it too.
Status infer_output(const fb::GatherElementsParamsT& params, const TensorDesc* in, OpOutput* out) {
  const TensorDesc& x = in[0];
  const TensorDesc& idx = in[1];
  if (idx.dtype() != DType::I32 && idx.dtype() != DType::I64) {
    return bad(std::string("indices are ") + dtype_name(idx.dtype()) + ", expected i32 or i64");
  }
  if (params.axis < 0 || params.axis >= x.rank()) {
    return bad("axis " + std::to_string(params.axis) + " out of range for " + dims_text(x));
  }
  if (idx.rank() != x.rank()) return bad("indices " + dims_text(idx) + " and x " + dims_text(x) + " differ in rank");
  for (int d = 0; d < x.rank(); ++d) {
    if (d != params.axis && idx.dim(d) > x.dim(d)) {
      return bad("indices " + dims_text(idx) + " are larger than x " + dims_text(x) + " at dim " + std::to_string(d));
    }
  }
  *out = OpOutput{x.dtype(), idx.rank(), {}};
  for (int d = 0; d < idx.rank(); ++d) out->dims[d] = idx.dim(d);
  return Status();
}

// The kernel rule (op_rules.h).
Status run_kernel(const Handle& h, const fb::GatherElementsParamsT& g, const KernelCall& c) {
  return gather_elements_forward(h, g.axis, c.input_descs[0], c.inputs[0], c.input_descs[1], c.inputs[1],
                                 c.output_desc, c.output);
}

namespace {

Status prepare_gather_elements(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  return prepare_by_rule(a, p, *a.op.params_as_GatherElementsParams(), 2, "x, indices");
}

constexpr ExecuteFn execute_gather_elements = execute_by_rule<fb::GatherElementsParamsT>;

// ---------------------------------------------------------------------------------------------
// Trilu: trilu_forward. inputs: x (any dtype, rank >= 2); the output has x's dims.

}  // namespace

// The output rule (op_rules.h): outside the file-local namespace, the converter runs it too.
Status infer_output(const fb::TriluParamsT&, const TensorDesc* in, OpOutput* out) {
  const TensorDesc& x = in[0];
  if (x.rank() < 2) return bad("x " + dims_text(x) + " has a rank below 2");
  *out = OpOutput{x.dtype(), x.rank(), {}};
  for (int d = 0; d < x.rank(); ++d) out->dims[d] = x.dim(d);
  return Status();
}

// The kernel rule (op_rules.h).
Status run_kernel(const Handle& h, const fb::TriluParamsT& t, const KernelCall& c) {
  return trilu_forward(h, t.upper, t.k, c.input_descs[0], c.inputs[0], c.output_desc, c.output);
}

namespace {

Status prepare_trilu(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  return prepare_by_rule(a, p, *a.op.params_as_TriluParams(), 1, "x");
}

constexpr ExecuteFn execute_trilu = execute_by_rule<fb::TriluParamsT>;

// ---------------------------------------------------------------------------------------------
// CumSum: cumsum_forward. inputs: x (f32, f16, i32, i64); the output has x's dims.

}  // namespace

// The output rule (op_rules.h): outside the file-local namespace, the converter runs it too.
Status infer_output(const fb::CumSumParamsT& params, const TensorDesc* in, OpOutput* out) {
  const TensorDesc& x = in[0];
  if (x.dtype() == DType::BOOL) return bad("x is bool");
  if (params.axis < 0 || params.axis >= x.rank()) {
    return bad("axis " + std::to_string(params.axis) + " out of range for " + dims_text(x));
  }
  *out = OpOutput{x.dtype(), x.rank(), {}};
  for (int d = 0; d < x.rank(); ++d) out->dims[d] = x.dim(d);
  return Status();
}

// The kernel rule (op_rules.h).
Status run_kernel(const Handle& h, const fb::CumSumParamsT& s, const KernelCall& c) {
  return cumsum_forward(h, s.axis, s.exclusive, s.reverse, c.input_descs[0], c.inputs[0], c.output_desc, c.output);
}

namespace {

Status prepare_cumsum(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  return prepare_by_rule(a, p, *a.op.params_as_CumSumParams(), 1, "x");
}

constexpr ExecuteFn execute_cumsum = execute_by_rule<fb::CumSumParamsT>;

// ---------------------------------------------------------------------------------------------
// Scatter: scatter_elements_forward / scatter_nd_forward. inputs: x (any dtype), indices (i32 /
// i64), updates (x's dtype); the output has x's dims. The kernels' front ends check the shapes
// again at every call; prepare checks them once at load, with the tensors' names.

struct ScatterPrepared {
  bool nd = false;
  ScatterReduction reduction = ScatterReduction::NONE;
  int axis = 0;
};

Status prepare_scatter(const PrepareArgs& a, PreparedOp* p, OpInfo*) {
  ScatterPrepared& r = p->data.emplace<ScatterPrepared>();
  const fb::ScatterParams& sp = *a.op.params_as_ScatterParams();
  JET_RETURN_IF_ERROR(expect_inputs(*p, 3, "x, indices, updates"));
  JET_RETURN_IF_ERROR(expect_same_dtype(a, *p, "scatter keeps x's dtype"));
  if (!enum_in_range<ScatterReduction>(sp.reduction())) return bad("unknown reduction " + std::to_string(sp.reduction()));
  const TensorDesc& x = input(a, *p, 0).desc;
  const TensorDesc& idx = input(a, *p, 1).desc;
  const TensorDesc& upd = input(a, *p, 2).desc;
  if (idx.dtype() != DType::I32 && idx.dtype() != DType::I64) {
    return bad("indices '" + input_name(a, *p, 1) + "' are " + dtype_name(idx.dtype()) + ", expected i32 or i64");
  }
  if (upd.dtype() != x.dtype()) return bad("updates '" + input_name(a, *p, 2) + "' are not of x's dtype");
  r.nd = sp.nd();
  r.reduction = static_cast<ScatterReduction>(sp.reduction());
  r.axis = sp.axis();
  if (x.dtype() == DType::BOOL && r.reduction != ScatterReduction::NONE) return bad("a reduction of bool tensors");
  if (!r.nd) {
    if (r.axis < 0 || r.axis >= x.rank()) return bad("axis " + std::to_string(r.axis) + " out of range for " + dims_text(x));
    bool ok = idx.rank() == x.rank() && idx.same_dims(upd);
    for (int d = 0; ok && d < x.rank(); ++d) ok = d == r.axis || idx.dim(d) <= x.dim(d);
    if (!ok) return bad("indices " + dims_text(idx) + " and updates " + dims_text(upd) + " do not fit x " + dims_text(x));
  } else {
    const int64_t k = idx.dim(idx.rank() - 1);
    bool ok = k >= 1 && k <= x.rank() && upd.rank() == idx.rank() - 1 + x.rank() - static_cast<int>(k);
    for (int d = 0; ok && d < upd.rank(); ++d) {
      ok = upd.dim(d) == (d < idx.rank() - 1 ? idx.dim(d) : x.dim(static_cast<int>(k) + d - (idx.rank() - 1)));
    }
    if (!ok) return bad("indices " + dims_text(idx) + " and updates " + dims_text(upd) + " do not fit x " + dims_text(x));
  }
  return expect_output_dims(a, *p, x.dims(), x.rank());
}

Status execute_scatter(const Handle& h, const PreparedOp& p, const void* const* in, void* out, void*, size_t) {
  const ScatterPrepared& r = p.data.as<ScatterPrepared>();
  if (r.nd) {
    return scatter_nd_forward(h, r.reduction, p.in_descs[0], in[0], p.in_descs[1], in[1], p.in_descs[2], in[2],
                              p.out_desc, out);
  }
  return scatter_elements_forward(h, r.reduction, r.axis, p.in_descs[0], in[0], p.in_descs[1], in[1], p.in_descs[2],
                                  in[2], p.out_desc, out);
}

// ---------------------------------------------------------------------------------------------
// The table: one row per schema union member (row i is OpParams i + 1), generated from
// schema/op_list.h. IR ops that share a member (POOL and GLOBAL_POOL) must agree on its row.

constexpr size_t kNumOpParams = static_cast<size_t>(fb::OpParams::MAX);

struct OpTable {
  OpEntry rows[kNumOpParams];
  bool consistent = true;  // the lines of one union member name the same functions, in_place, dtypes
};

constexpr OpTable make_op_table() {
  OpTable t{};
#define JET_RT_OP_ROW(ENUM, fn, Attrs, Params, name, in_place, layout, f32_params, dtypes, backward, inputs) \
  {                                                                                                          \
    OpEntry& r = t.rows[static_cast<size_t>(fb::OpParams::Params) - 1];                                      \
    if (!r.prepare) {                                                                                        \
      r = OpEntry{fb::OpParams::Params, name, in_place,                                                      \
                  OpDTypes::dtypes == OpDTypes::ANY, prepare_##fn, execute_##fn};                            \
    } else if (r.prepare != prepare_##fn || r.execute != execute_##fn ||                                     \
               r.allows_in_place != in_place ||                                                              \
               r.takes_any_dtype != (OpDTypes::dtypes == OpDTypes::ANY)) {                                   \
      t.consistent = false;                                                                                  \
    }                                                                                                        \
  }
  JET_OPS(JET_RT_OP_ROW)
#undef JET_RT_OP_ROW
  return t;
}

constexpr OpTable kOpTable = make_op_table();

constexpr bool every_member_has_its_row() {
  for (size_t i = 0; i < kNumOpParams; ++i) {
    if (!kOpTable.rows[i].prepare || static_cast<size_t>(kOpTable.rows[i].params) != i + 1) return false;
  }
  return true;
}
static_assert(every_member_has_its_row(),
              "every member of the schema's OpParams union needs its JET_OPS row (jet_op in model.fbs)");
static_assert(kOpTable.consistent,
              "JET_OPS rows that share a schema member must name the same fn, in_place and dtypes");

}  // namespace

const OpEntry* find_op_entry(fb::OpParams params) {
  const size_t i = static_cast<size_t>(params);
  if (i < 1 || i > kNumOpParams) return nullptr;
  return &kOpTable.rows[i - 1];
}

Status prepare_ops(const fb::Model& model, Engine::Impl* impl) {
  // Which op is a tensor's only reader (a constant buffer shared by two tensors counts as read
  // by several: reordering it for one would change it for the other).
  std::vector<int> sole_user(impl->tensors.size(), -1), readers(impl->tensors.size(), 0);
  std::vector<int> buffer_tensors;
  for (const TensorRecord& r : impl->tensors) {
    if (!r.constant) continue;
    if (static_cast<size_t>(r.buffer) >= buffer_tensors.size()) buffer_tensors.resize(r.buffer + 1, 0);
    ++buffer_tensors[r.buffer];
  }
  for (size_t s = 0; s < impl->ops.size(); ++s)
    for (int t : impl->ops[s].inputs) {
      if (readers[t]++ == 0) sole_user[t] = static_cast<int>(s);
    }
  for (size_t t = 0; t < impl->tensors.size(); ++t) {
    const TensorRecord& r = impl->tensors[t];
    if (readers[t] != 1 || (r.constant && buffer_tensors[r.buffer] != 1)) sole_user[t] = -1;
  }
  for (size_t s = 0; s < impl->ops.size(); ++s) {
    PreparedOp& p = impl->ops[s];
    for (int t : p.inputs) p.in_descs.push_back(impl->tensors[t].desc);
    p.out_desc = impl->tensors[p.output].desc;
    const PrepareArgs args{*model.ops()->Get(static_cast<flatbuffers::uoffset_t>(s)), impl->tensors,
                           impl->tensor_infos, impl->handle, sole_user, static_cast<int>(s),
                           impl->stored_choices,
                           impl->options.approximate_convolutions ? ConvMath::ALLOW_APPROXIMATE : ConvMath::EXACT};
    if (!p.type->takes_any_dtype) {
      for (size_t k = 0; k <= p.in_descs.size(); ++k) {
        const int t = k < p.in_descs.size() ? p.inputs[k] : p.output;
        const DType dt = impl->tensors[t].desc.dtype();
        if (!dtype_is_float(dt)) {
          return Status(StatusCode::BAD_PARAM, op_label(*impl, static_cast<int>(s)) + ": '" +
                                                   impl->tensor_infos[t].name + "' is " + dtype_name(dt) + "; " +
                                                   p.type->name + " computes on f32 and f16 tensors only");
        }
      }
    }
    const Status st = p.type->prepare(args, &p, &impl->op_infos[s]);
    if (!st.ok()) return Status(st.code(), op_label(*impl, static_cast<int>(s)) + ": " + st.message());
    if (is_op(p, fb::OpParams::ConvParams) && p.data.as<ConvPrepared>().filter_krsc) impl->tensors[p.inputs[1]].filter_krsc = true;
  }
  // One note for every refused stored choice, naming the first.
  int refused = 0;
  std::string first;
  for (size_t s = 0; s < impl->ops.size(); ++s) {
    if (impl->ops[s].refused_choice.empty()) continue;
    if (refused++ == 0) first = op_label(*impl, static_cast<int>(s)) + " " + impl->ops[s].refused_choice;
  }
  if (refused > 0) {
    impl->summary.notes.push_back("this backend refused the stored tuned choice of " + std::to_string(refused) +
                                  " convolution(s) (first: " + first + "); they use the heuristic's choice");
  }
  return Status();
}

}  // namespace rt
}  // namespace jet
