// The backward rules, one per runtime op function (schema/op_list.h's `fn`), and their table.
// Conventions: backward.h. Every rule is a few kernel calls of jet/dnn/training.h with the
// descriptors the op's prepare function built (ops.h / ops.cpp), so the backward sees exactly
// the views the forward used.
#include "backward.h"

#include <algorithm>
#include <string>

#include "jet/dnn/training.h"
#include "op_list.h"

namespace jet {
namespace rt {

namespace {

Status not_supported(const std::string& m) { return Status(StatusCode::NOT_SUPPORTED, m); }

// What the rules read of the forward (backward.h ReadsFn).
uint32_t reads_x(const PreparedOp&) { return 1u; }
uint32_t reads_x_w(const PreparedOp&) { return 3u; }  // x, and the filter / scale (constants, mostly)
uint32_t reads_a_b(const PreparedOp&) { return 3u; }
uint32_t reads_y(const PreparedOp&) { return kReadsOutput; }

bool wants(uint32_t grad_inputs, int k) { return k >= 0 && (grad_inputs >> k) & 1u; }

constexpr uint32_t bit(int k) { return k >= 0 ? 1u << k : 0u; }

// ---------------------------------------------------------------------------------------------
// Conv: y = act(alpha1 * conv(x, w) + alpha2 * z + bias). The activation's backward turns dy
// into d(pre-activation) in place, with dbias in the same pass (conv_backward_bias_activation;
// conv_backward_bias without an activation), then: dx by conv_backward_data, dw by
// conv_backward_filter, dz = alpha2 * dpre.

uint32_t params_conv(const PreparedOp& op) {
  return bit(1) | bit(op.data.as<ConvPrepared>().bias_input);
}

// The filter gradient's algorithm: the first of WINOGRAD (2D 3x3 stride-1 layers: 2.25 times
// fewer multiplications) and GEMM (the explicit lowering, then the tuned gemm_forward) that takes
// the problem and whose workspace fits the trainer's limit, else IMPLICIT_GEMM (no workspace).
// (The forward's tuned tactic is no filter-gradient tactic: 0, the heuristic's split.)
void choose_filter_algo(const Handle& h, const TensorDesc& x, const TensorDesc& dy, const ConvDesc& conv,
                        const FilterDesc& filter, size_t limit, ConvBwdFilterAlgo* algo, size_t* bytes) {
  *algo = ConvBwdFilterAlgo::IMPLICIT_GEMM;
  *bytes = 0;
  for (ConvBwdFilterAlgo a : {ConvBwdFilterAlgo::WINOGRAD, ConvBwdFilterAlgo::GEMM}) {
    size_t need = 0;
    const Status st = conv_backward_filter_workspace_size(h, x, dy, conv.with_tactic(0), filter, a, &need);
    if (st.ok() && need <= limit) {
      *algo = a;
      *bytes = need;
      return;
    }
  }
}

// plan->algo: the filter gradient's ConvBwdFilterAlgo (low 16 bits) and the data gradient's
// ConvBwdDataAlgo (high bits); the two run one after the other and share the workspace.
Status plan_conv(const Handle& h, const PreparedOp& op, uint32_t grad_inputs, BackwardPlan* plan) {
  const ConvPrepared& c = op.data.as<ConvPrepared>();
  ConvBwdFilterAlgo filter = ConvBwdFilterAlgo::IMPLICIT_GEMM;
  ConvBwdDataAlgo data = ConvBwdDataAlgo::GATHER;
  size_t ws_filter = 0, ws_data = 0;
  if (wants(grad_inputs, 0)) {
    // The data gradient as forward convolutions (the forward's tuned engines; one per output
    // phase when strided) wherever its workspace fits: the gather reads every filter tap per dx
    // element with no reuse.
    size_t bytes = 0;
    const Status st = conv_backward_data_workspace_size(h, c.filter, op.out_desc, c.conv, op.in_descs[0],
                                                        ConvBwdDataAlgo::TRANSPOSED_FORWARD, &bytes);
    if (st.ok() && bytes <= plan->workspace_limit) {
      data = ConvBwdDataAlgo::TRANSPOSED_FORWARD;
      ws_data = bytes;
    }
  }
  if (wants(grad_inputs, 1))
    choose_filter_algo(h, op.in_descs[0], op.out_desc, c.conv, c.filter, plan->workspace_limit, &filter, &ws_filter);
  // The bias gradient (several blocks per channel on CUDA where the channels are few) runs
  // before them in the same workspace.
  size_t ws_bias = 0;
  if (c.bias_input >= 0 && wants(grad_inputs, c.bias_input)) {
    JET_RETURN_IF_ERROR(conv_backward_bias_workspace_size(h, op.out_desc, &ws_bias));
  }
  plan->algo = static_cast<int32_t>(filter) | (static_cast<int32_t>(data) << 16);
  plan->workspace_bytes = std::max({ws_filter, ws_data, ws_bias});
  return Status();
}

Status run_conv(const BackwardArgs& a) {
  const ConvPrepared& c = a.op.data.as<ConvPrepared>();
  const TensorDesc& yd = a.op.out_desc;
  const bool bias = c.bias_input >= 0 && a.din[c.bias_input];
  if (c.act.mode != ActivationMode::IDENTITY) {
    // ReLU's derivative from its output (y > 0 exactly where the pre-activation is): the forward
    // keeps no pre-activation for it (conv_needs_pre_activation). With a bias gradient, both in
    // one pass over dy.
    const void* x = c.act.mode == ActivationMode::RELU ? a.out : a.pre;
    if (bias) {
      JET_RETURN_IF_ERROR(conv_backward_bias_activation(a.handle, c.act, yd, x, yd, a.dy, yd, a.dy, 1.f,
                                                        a.din_beta[c.bias_input], c.bias_view, a.din[c.bias_input],
                                                        a.workspace, a.workspace_bytes));
    } else {
      JET_RETURN_IF_ERROR(activation_backward(a.handle, c.act, 1.f, yd, x, yd, a.dy, 0.f, yd, a.dy));
    }
  } else if (bias) {
    JET_RETURN_IF_ERROR(conv_backward_bias(a.handle, 1.f, yd, a.dy, a.din_beta[c.bias_input], c.bias_view,
                                           a.din[c.bias_input], a.workspace, a.workspace_bytes));
  }
  if (a.din[0]) {
    JET_RETURN_IF_ERROR(conv_backward_data(a.handle, c.alpha1, c.filter, a.in[1], yd, a.dy, c.conv,
                                           static_cast<ConvBwdDataAlgo>(a.plan.algo >> 16), a.workspace,
                                           a.workspace_bytes, a.din_beta[0], a.op.in_descs[0], a.din[0]));
  }
  if (a.din[1]) {
    JET_RETURN_IF_ERROR(conv_backward_filter(a.handle, c.alpha1, a.op.in_descs[0], a.in[0], yd, a.dy,
                                             c.conv.with_tactic(0),
                                             static_cast<ConvBwdFilterAlgo>(a.plan.algo & 0xffff), a.workspace,
                                             a.workspace_bytes, a.din_beta[1], c.filter, a.din[1]));
  }
  if (c.residual_input >= 0 && a.din[c.residual_input]) {
    const int r = c.residual_input;
    JET_RETURN_IF_ERROR(transform_tensor(a.handle, c.alpha2, yd, a.dy, a.din_beta[r], a.op.in_descs[r], a.din[r]));
  }
  return Status();
}

// x and the filter; with a fused ReLU also the output, its derivative's source (run_conv).
uint32_t reads_conv(const PreparedOp& op) {
  return 3u | (op.data.as<ConvPrepared>().act.mode == ActivationMode::RELU ? kReadsOutput : 0u);
}

constexpr BackwardRule backward_conv{run_conv, plan_conv, params_conv, reads_conv, nullptr};

// ---------------------------------------------------------------------------------------------
// Pool (windowed and global): pool_backward, MAX recomputing the argmax from x.

Status run_pool(const BackwardArgs& a) {
  return pool_backward(a.handle, a.op.data.as<PoolDesc>(), 1.f, a.op.in_descs[0], a.in[0], a.op.out_desc, a.dy,
                       a.din_beta[0], a.op.in_descs[0], a.din[0]);
}

constexpr BackwardRule backward_pool{run_pool, nullptr, nullptr, reads_x, nullptr};

// ---------------------------------------------------------------------------------------------
// Activation: activation_backward from the forward input.

Status run_activation(const BackwardArgs& a) {
  return activation_backward(a.handle, a.op.data.as<ActivationDesc>(), 1.f, a.op.in_descs[0], a.in[0],
                             a.op.out_desc, a.dy, a.din_beta[0], a.op.in_descs[0], a.din[0]);
}

constexpr BackwardRule backward_activation{run_activation, nullptr, nullptr, reads_x, nullptr};

// ---------------------------------------------------------------------------------------------
// OpTensor: op_tensor_backward. One call when both gradients blend alike and are distinct
// buffers, else one call per gradient (a + a, or a second reader's accumulation).

Status run_op_tensor(const BackwardArgs& a) {
  const TensorOp op = a.op.data.as<TensorOp>();
  const TensorDesc* d = a.op.in_descs.data();
  const TensorDesc none;
  if (a.din[0] && a.din[1] && a.din[0] != a.din[1] && a.din_beta[0] == a.din_beta[1]) {
    return op_tensor_backward(a.handle, op, 1.f, d[0], a.in[0], 1.f, d[1], a.in[1], a.op.out_desc, a.dy, 1.f,
                              a.din_beta[0], d[0], a.din[0], d[1], a.din[1]);
  }
  for (int k = 0; k < 2; ++k) {
    if (!a.din[k]) continue;
    JET_RETURN_IF_ERROR(op_tensor_backward(a.handle, op, 1.f, d[0], a.in[0], 1.f, d[1], a.in[1], a.op.out_desc, a.dy,
                                           1.f, a.din_beta[k], k == 0 ? d[0] : none, k == 0 ? a.din[0] : nullptr,
                                           k == 1 ? d[1] : none, k == 1 ? a.din[1] : nullptr));
  }
  return Status();
}

uint32_t params_op_tensor(const PreparedOp&) { return 0; }  // constants here are usually normalization

constexpr BackwardRule backward_op_tensor{run_op_tensor, nullptr, params_op_tensor, reads_a_b, nullptr};

// ---------------------------------------------------------------------------------------------
// Gemm: gemm_backward (y = alpha * (op(a) @ op(b) + bias)).

uint32_t params_gemm(const PreparedOp& op) { return bit(1) | bit(op.data.as<GemmPrepared>().bias_input); }

Status plan_gemm(const Handle&, const PreparedOp& op, uint32_t, BackwardPlan* plan) {
  plan->workspace_bytes = 0;
  const TensorDesc* d = op.in_descs.data();
  if (d[0].rank() == 3 && d[0].dim(0) != d[1].dim(0)) {
    return not_supported("a batched Gemm whose batch of 1 broadcasts has no backward yet");
  }
  return Status();
}

Status run_gemm(const BackwardArgs& a) {
  const GemmPrepared& g = a.op.data.as<GemmPrepared>();
  const TensorDesc* d = a.op.in_descs.data();
  const TensorDesc none;
  const int nb = g.bias_input;
  void* dbias = nb >= 0 ? a.din[nb] : nullptr;
  // One call when every requested gradient blends alike, else one per gradient.
  float beta = -1.f;
  bool alike = true;
  for (int k = 0; k < static_cast<int>(a.op.inputs.size()); ++k) {
    if (!a.din[k]) continue;
    if (beta >= 0.f && beta != a.din_beta[k]) alike = false;
    beta = a.din_beta[k];
  }
  if (alike && a.din[0] != a.din[1]) {
    return gemm_backward(a.handle, g.gemm, g.alpha, d[0], a.in[0], d[1], a.in[1], a.op.out_desc, a.dy, beta,
                         a.din[0] ? d[0] : none, a.din[0], a.din[1] ? d[1] : none, a.din[1],
                         dbias ? g.bias_view : none, dbias);
  }
  for (int k = 0; k < static_cast<int>(a.op.inputs.size()); ++k) {
    if (!a.din[k]) continue;
    JET_RETURN_IF_ERROR(gemm_backward(a.handle, g.gemm, g.alpha, d[0], a.in[0], d[1], a.in[1], a.op.out_desc, a.dy,
                                      a.din_beta[k], k == 0 ? d[0] : none, k == 0 ? a.din[0] : nullptr,
                                      k == 1 ? d[1] : none, k == 1 ? a.din[1] : nullptr,
                                      k == nb ? g.bias_view : none, k == nb ? dbias : nullptr));
  }
  return Status();
}

constexpr BackwardRule backward_gemm{run_gemm, plan_gemm, params_gemm, reads_a_b, nullptr};

// ---------------------------------------------------------------------------------------------
// Softmax: softmax_backward from the forward output, over the views the forward used.

Status run_softmax(const BackwardArgs& a) {
  const SoftmaxPrepared& s = a.op.data.as<SoftmaxPrepared>();
  return softmax_backward(a.handle, s.algo, s.mode, 1.f, s.y_view, a.out, s.y_view, a.dy, a.din_beta[0], s.x_view,
                          a.din[0]);
}

constexpr BackwardRule backward_softmax{run_softmax, nullptr, nullptr, reads_y, nullptr};

// ---------------------------------------------------------------------------------------------
// Concat: each input's gradient is its sub-region of dy.

Status run_concat(const BackwardArgs& a) {
  const int axis = a.op.data.as<int>();
  const TensorDesc& yd = a.op.out_desc;
  int64_t begin = 0;
  for (size_t k = 0; k < a.op.inputs.size(); ++k) {
    const TensorDesc& xd = a.op.in_descs[k];
    if (a.din[k]) {
      const TensorDesc view = TensorDesc::strided(yd.dtype(), yd.rank(), xd.dims(), yd.strides());
      const void* src = static_cast<const uint8_t*>(a.dy) +
                        static_cast<size_t>(begin * yd.stride(axis)) * dtype_size(yd.dtype());
      JET_RETURN_IF_ERROR(transform_tensor(a.handle, 1.f, view, src, a.din_beta[k], xd, a.din[k]));
    }
    begin += xd.dim(axis);
  }
  return Status();
}

constexpr BackwardRule backward_concat{run_concat, nullptr, nullptr, nullptr, nullptr};

// ---------------------------------------------------------------------------------------------
// Reshape: the same elements in the same order.

Status run_reshape(const BackwardArgs& a) {
  const ReshapePrepared& r = a.op.data.as<ReshapePrepared>();
  return transform_tensor(a.handle, 1.f, r.y_view, a.dy, a.din_beta[0], r.x_view, a.din[0]);
}

constexpr BackwardRule backward_reshape{run_reshape, nullptr, nullptr, nullptr, nullptr};

// ---------------------------------------------------------------------------------------------
// BatchNorm in training mode (the trainer's forward uses the batch's statistics):
// batchnorm_backward with the saved mean and inverse deviation. Inputs 3 and 4 (running mean and
// variance) are statistics, not parameters. The kernel writes dx and both parameter gradients
// or neither: what is not asked for goes to the workspace.

uint32_t params_batchnorm(const PreparedOp&) { return bit(1) | bit(2); }

Status plan_batchnorm(const Handle& h, const PreparedOp& op, uint32_t grad_inputs, BackwardPlan* plan) {
  const int64_t channels = op.in_descs[0].dim(1);
  plan->workspace_bytes = 0;
  if (!wants(grad_inputs, 0)) plan->workspace_bytes += (op.in_descs[0].span_bytes() + 255) / 256 * 256;
  if (wants(grad_inputs, 1) != wants(grad_inputs, 2)) plan->workspace_bytes += (static_cast<size_t>(channels) * 4 + 255) / 256 * 256;
  // Then the kernel's own (several blocks per channel where the channels are too few).
  size_t kernel = 0;
  JET_RETURN_IF_ERROR(batchnorm_training_workspace_size(h, op.in_descs[0], &kernel));
  plan->workspace_bytes += kernel;
  return Status();
}

Status run_batchnorm(const BackwardArgs& a) {
  const double eps = a.op.data.as<double>();
  uint8_t* scratch = static_cast<uint8_t*>(a.workspace);
  void* dx = a.din[0];
  float beta_x = a.din_beta[0];
  if (!dx) {
    dx = scratch;
    beta_x = 0.f;
    scratch += (a.op.in_descs[0].span_bytes() + 255) / 256 * 256;
  }
  float* dscale = static_cast<float*>(a.din[1]);
  float* dbias = static_cast<float*>(a.din[2]);
  if ((dscale != nullptr) != (dbias != nullptr)) {
    if (!dscale) dscale = reinterpret_cast<float*>(scratch);
    if (!dbias) dbias = reinterpret_cast<float*>(scratch);
    scratch += (static_cast<size_t>(a.op.in_descs[0].dim(1)) * 4 + 255) / 256 * 256;
  }
  size_t kernel = 0;
  JET_RETURN_IF_ERROR(batchnorm_training_workspace_size(a.handle, a.op.in_descs[0], &kernel));
  const float beta_p = a.din[1] ? a.din_beta[1] : (a.din[2] ? a.din_beta[2] : 0.f);
  return batchnorm_backward(a.handle, 1.f, beta_x, 1.f, beta_p, a.op.in_descs[0], a.in[0], a.op.out_desc, a.dy,
                            a.op.in_descs[0], dx, static_cast<const float*>(a.in[1]), dscale, dbias, eps,
                            a.saved_mean, a.saved_inv_std, kernel ? scratch : nullptr, kernel);
}

constexpr BackwardRule backward_batchnorm{run_batchnorm, plan_batchnorm, params_batchnorm, reads_x_w, nullptr};

// ---------------------------------------------------------------------------------------------
// Transform (a layout change; f32 only in training): the inverse copy.

Status run_transform(const BackwardArgs& a) {
  return transform_tensor(a.handle, 1.f, a.op.out_desc, a.dy, a.din_beta[0], a.op.in_descs[0], a.din[0]);
}

constexpr BackwardRule backward_transform{run_transform, nullptr, nullptr, nullptr, nullptr};

// ---------------------------------------------------------------------------------------------
// Pad, Resize, LRN, Reduce: their kernels' backward routines.

Status run_pad(const BackwardArgs& a) {
  const PadPrepared& p = a.op.data.as<PadPrepared>();
  return pad_backward(a.handle, p.mode, p.pad_begin, p.pad_end, 1.f, a.op.out_desc, a.dy, a.din_beta[0],
                      a.op.in_descs[0], a.din[0]);
}

constexpr BackwardRule backward_pad{run_pad, nullptr, nullptr, nullptr, nullptr};

Status run_resize(const BackwardArgs& a) {
  return resize_backward(a.handle, a.op.data.as<ResizeDesc>(), 1.f, a.op.out_desc, a.dy, a.din_beta[0],
                         a.op.in_descs[0], a.din[0]);
}

constexpr BackwardRule backward_resize{run_resize, nullptr, nullptr, nullptr, nullptr};

Status run_lrn(const BackwardArgs& a) {
  return lrn_cross_channel_backward(a.handle, a.op.data.as<LrnDesc>(), 1.f, a.op.in_descs[0], a.in[0],
                                    a.op.out_desc, a.dy, a.din_beta[0], a.op.in_descs[0], a.din[0]);
}

constexpr BackwardRule backward_lrn{run_lrn, nullptr, nullptr, reads_x, nullptr};

Status plan_reduce(const Handle&, const PreparedOp& op, uint32_t, BackwardPlan* plan) {
  plan->workspace_bytes = 0;
  const ReduceOp r = op.data.as<ReduceOp>();
  if (r != ReduceOp::SUM && r != ReduceOp::MEAN) return not_supported("only Reduce SUM and MEAN have a backward");
  return Status();
}

Status run_reduce(const BackwardArgs& a) {
  return reduce_backward(a.handle, a.op.data.as<ReduceOp>(), 1.f, a.op.out_desc, a.dy, a.din_beta[0],
                         a.op.in_descs[0], a.din[0]);
}

constexpr BackwardRule backward_reduce{run_reduce, plan_reduce, nullptr, nullptr, nullptr};

// ---------------------------------------------------------------------------------------------
// Slice (a strided view of x, any steps and permutation): dy goes back into the same view of dx;
// the rest of dx is 0 (cleared first when the gradient is not accumulated).

Status run_slice(const BackwardArgs& a) {
  const SlicePrepared& sl = a.op.data.as<SlicePrepared>();
  const TensorDesc& xd = a.op.in_descs[0];
  float beta = a.din_beta[0];
  if (beta == 0.f) {
    // dx = 0: the zero scalar broadcast over x's dims (0 * stale values could be NaN).
    int64_t ones[kMaxRank];
    for (int d = 0; d < xd.rank(); ++d) ones[d] = 1;
    const TensorDesc zero = TensorDesc::packed(DType::F32, xd.rank(), ones);
    JET_RETURN_IF_ERROR(add_tensor(a.handle, 1.f, zero, a.zero, 0.f, xd, a.din[0]));
    beta = 1.f;
  }
  void* view = static_cast<uint8_t*>(a.din[0]) + sl.offset_bytes;
  return transform_tensor(a.handle, 1.f, a.op.out_desc, a.dy, beta, sl.view, view);
}

constexpr BackwardRule backward_slice{run_slice, nullptr, nullptr, nullptr, nullptr};

// ---------------------------------------------------------------------------------------------
// ConvTranspose: y = conv_backward_data(w, x) (+ bias), the adjoint of a convolution, so
// dx = conv_forward(dy, w), dw = conv_backward_filter with dy in the convolution input's place
// and x in its output's, dbias = conv_backward_bias(dy).

uint32_t params_conv_transpose(const PreparedOp& op) {
  return bit(1) | bit(op.data.as<ConvTransposePrepared>().bias_input);
}

// plan->algo: the forward algorithm of dx (low 16 bits) and the filter gradient's (high bits).
Status plan_conv_transpose(const Handle& h, const PreparedOp& op, uint32_t grad_inputs, BackwardPlan* plan) {
  const ConvTransposePrepared& c = op.data.as<ConvTransposePrepared>();
  const TensorDesc& xd = op.in_descs[0];
  const TensorDesc& yd = op.out_desc;
  ConvAlgo fwd = ConvAlgo::DIRECT;
  size_t ws_fwd = 0, ws_filter = 0;
  if (wants(grad_inputs, 0)) {
    JET_RETURN_IF_ERROR(choose_conv_forward_algo(h, yd, c.filter, c.conv, xd, ConvPreference::SPECIFY_WORKSPACE_LIMIT,
                                                 plan->workspace_limit, &fwd));
    JET_RETURN_IF_ERROR(conv_forward_workspace_size(h, yd, c.filter, c.conv, xd, fwd, &ws_fwd));
  }
  ConvBwdFilterAlgo filter = ConvBwdFilterAlgo::IMPLICIT_GEMM;
  if (wants(grad_inputs, 1)) choose_filter_algo(h, yd, xd, c.conv, c.filter, plan->workspace_limit, &filter, &ws_filter);
  size_t ws_bias = 0;
  if (c.bias_input >= 0 && wants(grad_inputs, c.bias_input)) {
    JET_RETURN_IF_ERROR(conv_backward_bias_workspace_size(h, yd, &ws_bias));
  }
  plan->algo = static_cast<int32_t>(fwd) | (static_cast<int32_t>(filter) << 16);
  plan->workspace_bytes = std::max({ws_fwd, ws_filter, ws_bias});
  return Status();
}

Status run_conv_transpose(const BackwardArgs& a) {
  const ConvTransposePrepared& c = a.op.data.as<ConvTransposePrepared>();
  const TensorDesc& xd = a.op.in_descs[0];
  const TensorDesc& yd = a.op.out_desc;
  if (a.din[0]) {
    JET_RETURN_IF_ERROR(conv_forward(a.handle, 1.f, yd, a.dy, c.filter, a.in[1], c.conv,
                                     static_cast<ConvAlgo>(a.plan.algo & 0xffff), a.workspace, a.workspace_bytes,
                                     a.din_beta[0], xd, a.din[0]));
  }
  if (a.din[1]) {
    JET_RETURN_IF_ERROR(conv_backward_filter(a.handle, 1.f, yd, a.dy, xd, a.in[0], c.conv.with_tactic(0),
                                             static_cast<ConvBwdFilterAlgo>(a.plan.algo >> 16), a.workspace,
                                             a.workspace_bytes, a.din_beta[1], c.filter, a.din[1]));
  }
  if (c.bias_input >= 0 && a.din[c.bias_input]) {
    JET_RETURN_IF_ERROR(conv_backward_bias(a.handle, 1.f, yd, a.dy, a.din_beta[c.bias_input], c.bias_view,
                                           a.din[c.bias_input], a.workspace, a.workspace_bytes));
  }
  return Status();
}

constexpr BackwardRule backward_conv_transpose{run_conv_transpose, plan_conv_transpose, params_conv_transpose,
                                               reads_x_w, nullptr};

// ---------------------------------------------------------------------------------------------
// InstanceNorm: batch norm's backward with batch statistics over the view [1, N * C, spatial]
// (each (n, c) is a channel of M = spatial values; the statistics are recomputed from x), with
// scale broadcast to N * C values; the per-(n, c) parameter gradients are then summed over n.
// Needs x's N and C to merge into one dim (NCHW-like strides).

uint32_t params_instancenorm(const PreparedOp&) { return bit(1) | bit(2); }

struct InstanceNormViews {
  TensorDesc x, y;            // [1, N * C, spatial] over x and y (dy, dx: the same strides)
  TensorDesc nc, c;           // [N, C] packed, [1, C] packed
  size_t nc_bytes = 0;        // N * C floats, 256-aligned
};

bool instancenorm_views(const PreparedOp& op, InstanceNormViews* v) {
  const TensorDesc* src[2] = {&op.in_descs[0], &op.out_desc};
  TensorDesc* dst[2] = {&v->x, &v->y};
  for (int k = 0; k < 2; ++k) {
    const TensorDesc& d = *src[k];
    if (d.dim(0) > 1 && d.stride(0) != d.dim(1) * d.stride(1)) return false;
    int64_t dims[kMaxRank], strides[kMaxRank];
    dims[0] = 1;
    strides[0] = d.dim(0) * d.dim(1) * d.stride(1);
    dims[1] = d.dim(0) * d.dim(1);
    strides[1] = d.stride(1);
    for (int i = 2; i < d.rank(); ++i) dims[i] = d.dim(i), strides[i] = d.stride(i);
    *dst[k] = TensorDesc::strided(DType::F32, d.rank(), dims, strides);
  }
  const int64_t nc[2] = {op.in_descs[0].dim(0), op.in_descs[0].dim(1)};
  const int64_t c[2] = {1, op.in_descs[0].dim(1)};
  v->nc = TensorDesc::packed(DType::F32, 2, nc);
  v->c = TensorDesc::packed(DType::F32, 2, c);
  v->nc_bytes = (static_cast<size_t>(nc[0] * nc[1]) * 4 + 255) / 256 * 256;
  return true;
}

Status plan_instancenorm(const Handle& h, const PreparedOp& op, uint32_t grad_inputs, BackwardPlan* plan) {
  InstanceNormViews v;
  if (!instancenorm_views(op, &v)) {
    return not_supported("InstanceNorm's backward needs x's N and C dims to merge (an NCHW-like layout)");
  }
  // The scale broadcast to N * C, the per-(n, c) gradients of scale and bias, dx when x needs none.
  plan->workspace_bytes = 3 * v.nc_bytes;
  if (!wants(grad_inputs, 0)) plan->workspace_bytes += (op.in_descs[0].span_bytes() + 255) / 256 * 256;
  // Then batchnorm_backward's own.
  size_t kernel = 0;
  JET_RETURN_IF_ERROR(batchnorm_training_workspace_size(h, v.x, &kernel));
  plan->workspace_bytes += kernel;
  return Status();
}

Status run_instancenorm(const BackwardArgs& a) {
  InstanceNormViews v;
  instancenorm_views(a.op, &v);  // checked by the plan
  uint8_t* ws = static_cast<uint8_t*>(a.workspace);
  float* scale_nc = reinterpret_cast<float*>(ws);
  float* dscale_nc = reinterpret_cast<float*>(ws + v.nc_bytes);
  float* dbias_nc = reinterpret_cast<float*>(ws + 2 * v.nc_bytes);
  void* dx = a.din[0] ? a.din[0] : ws + 3 * v.nc_bytes;
  const float beta_x = a.din[0] ? a.din_beta[0] : 0.f;
  uint8_t* kernel_ws = ws + 3 * v.nc_bytes + (a.din[0] ? 0 : (a.op.in_descs[0].span_bytes() + 255) / 256 * 256);
  size_t kernel = 0;
  JET_RETURN_IF_ERROR(batchnorm_training_workspace_size(a.handle, v.x, &kernel));
  JET_RETURN_IF_ERROR(add_tensor(a.handle, 1.f, v.c, a.in[1], 0.f, v.nc, scale_nc));
  JET_RETURN_IF_ERROR(batchnorm_backward(a.handle, 1.f, beta_x, 1.f, 0.f, v.x, a.in[0], v.y, a.dy, v.x, dx,
                                         scale_nc, dscale_nc, dbias_nc, a.op.data.as<double>(), nullptr, nullptr,
                                         kernel ? kernel_ws : nullptr, kernel));
  if (a.din[1]) {
    JET_RETURN_IF_ERROR(reduce_forward(a.handle, ReduceOp::SUM, 1.f, v.nc, dscale_nc, a.din_beta[1], v.c, a.din[1]));
  }
  if (a.din[2]) {
    JET_RETURN_IF_ERROR(reduce_forward(a.handle, ReduceOp::SUM, 1.f, v.nc, dbias_nc, a.din_beta[2], v.c, a.din[2]));
  }
  return Status();
}

constexpr BackwardRule backward_instancenorm{run_instancenorm, plan_instancenorm, params_instancenorm, reads_x_w,
                                             nullptr};

// ---------------------------------------------------------------------------------------------
// LayerNorm: layernorm_backward (statistics recomputed from x); scale and bias are parameters.
// One call when dscale and dbias blend alike, else one per parameter gradient.

// The op's parameters (its table's struct) and the positions of scale and bias among its inputs
// (-1 when absent).
struct LayerNormInputs {
  const fb::LayerNormParamsT& params;
  int scale_input, bias_input;
};
LayerNormInputs layernorm_inputs(const PreparedOp& op) {
  const fb::LayerNormParamsT& p = op.data.as<fb::LayerNormParamsT>();
  return {p, p.has_scale ? 1 : -1, p.has_bias ? (p.has_scale ? 2 : 1) : -1};
}

uint32_t params_layernorm(const PreparedOp& op) {
  const LayerNormInputs l = layernorm_inputs(op);
  return bit(l.scale_input) | bit(l.bias_input);
}

Status plan_layernorm(const Handle&, const PreparedOp& op, uint32_t grad_inputs, BackwardPlan* plan) {
  const LayerNormInputs l = layernorm_inputs(op);
  plan->workspace_bytes = wants(grad_inputs, l.scale_input) || wants(grad_inputs, l.bias_input)
                              ? layernorm_backward_workspace_size(op.in_descs[0], l.params.axis)
                              : 0;
  return Status();
}

Status run_layernorm(const BackwardArgs& a) {
  const LayerNormInputs l = layernorm_inputs(a.op);
  const TensorDesc& xd = a.op.in_descs[0];
  const float* scale = l.scale_input < 0 ? nullptr : static_cast<const float*>(a.in[l.scale_input]);
  float* dscale = l.scale_input < 0 ? nullptr : static_cast<float*>(a.din[l.scale_input]);
  float* dbias = l.bias_input < 0 ? nullptr : static_cast<float*>(a.din[l.bias_input]);
  const float beta_s = dscale ? a.din_beta[l.scale_input] : 0.f, beta_b = dbias ? a.din_beta[l.bias_input] : 0.f;
  auto call = [&](void* dx, float* ds, float* db, float beta_p) {
    return layernorm_backward(a.handle, l.params.axis, 1.f, a.din_beta[0], 1.f, beta_p, xd, a.in[0], a.op.out_desc,
                              a.dy, xd, dx, scale, ds, db, l.params.epsilon, a.workspace, a.workspace_bytes);
  };
  if (!dscale || !dbias || beta_s == beta_b) return call(a.din[0], dscale, dbias, dscale ? beta_s : beta_b);
  JET_RETURN_IF_ERROR(call(a.din[0], dscale, nullptr, beta_s));
  return call(nullptr, nullptr, dbias, beta_b);
}

constexpr BackwardRule backward_layernorm{run_layernorm, plan_layernorm, params_layernorm, reads_x_w, nullptr};

// ---------------------------------------------------------------------------------------------
// The table: one row per schema union member, as ops.cpp's op table.

constexpr size_t kNumOpParams = static_cast<size_t>(fb::OpParams::MAX);

struct BackwardTable {
  BackwardRule rows[kNumOpParams];
  bool filled[kNumOpParams];
};

constexpr BackwardTable make_backward_table() {
  BackwardTable t{};
// The backward column of op_list.h: RULE takes the backward_<fn> defined above (a compile error
// without it); the others a rule without run, the reason the trainer gives when it refuses.
#define JET_BACKWARD_RULE(fn, name) backward_##fn
#define JET_BACKWARD_NOT_YET(fn, name) BackwardRule{nullptr, nullptr, nullptr, nullptr, name " has no backward rule yet"}
#define JET_BACKWARD_NO_GRADIENT(fn, name) \
  BackwardRule{nullptr, nullptr, nullptr, nullptr, name " has an integer or bool result and no gradient"}
#define JET_BACKWARD_ROW(ENUM, fn, Attrs, Params, name, in_place, layout, f32_params, dtypes, backward, inputs) \
  t.rows[static_cast<size_t>(fb::OpParams::Params) - 1] = JET_BACKWARD_##backward(fn, name);                    \
  t.filled[static_cast<size_t>(fb::OpParams::Params) - 1] = true;
  JET_OPS(JET_BACKWARD_ROW)
#undef JET_BACKWARD_ROW
#undef JET_BACKWARD_RULE
#undef JET_BACKWARD_NOT_YET
#undef JET_BACKWARD_NO_GRADIENT
  return t;
}

constexpr BackwardTable kBackwardTable = make_backward_table();

constexpr bool every_op_has_its_row() {
  for (size_t i = 0; i < kNumOpParams; ++i) {
    if (!kBackwardTable.filled[i]) return false;
    // A rule runs, or says why it does not: never both, never neither.
    if (!kBackwardTable.rows[i].run == !kBackwardTable.rows[i].why_not) return false;
  }
  return true;
}
static_assert(every_op_has_its_row(),
              "every op type needs its backward: a RULE in op_list.h's backward column has its backward_<fn> "
              "in runtime/training/backward.cpp with run set and no why_not");

}  // namespace

const BackwardRule& backward_rule(const PreparedOp& op) {
  return kBackwardTable.rows[static_cast<size_t>(op.type->params) - 1];
}

bool conv_needs_pre_activation(const PreparedOp& op) {
  if (!is_op(op, fb::OpParams::ConvParams)) return false;
  const ActivationMode m = op.data.as<ConvPrepared>().act.mode;
  // ReLU's backward reads the output instead (run_conv), so its forward stays fused: no separate
  // activation pass and no pre-activation buffer.
  return m != ActivationMode::IDENTITY && m != ActivationMode::RELU;
}

}  // namespace rt
}  // namespace jet
