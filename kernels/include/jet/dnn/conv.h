// Convolution forward: descriptors, algorithms, workspace queries, algorithm selection, and the
// fused convolution + bias + residual + activation routine; convolution backward data (the
// transposed convolution).
#pragma once

#include <cstddef>

#include "jet/dnn/activation.h"
#include "jet/dnn/tensor.h"

namespace jet {

enum class ConvMode : int32_t {
  CROSS_CORRELATION = 0,  // what deep-learning frameworks call convolution
  CONVOLUTION = 1,        // the filter is flipped in every spatial dim
};

// Accumulation precision. F32: accumulate in f32 (f16 storage included). F16: the backend may
// accumulate in half; backends are free to use more precision (the CPU backend always uses f32).
enum class ComputeType : int32_t { F32 = 0, F16 = 1 };

// Which tactics the heuristic and find_conv_forward_algo may take, as cudnnSetConvolutionMathType
// says which math cuDNN may use. EXACT (the default): those within the 1e-5 this library holds
// f32 to. ALLOW_APPROXIMATE: also the ones conv_forward_tactic_is_approximate names (WINOGRAD's
// F(4x4, 3x3): ~2e-5 of the output's magnitude in f32, growing with the depth), as cuDNN's
// default math allows its F(4x4) winograd_nonfused in f32, which PyTorch's cudnn.benchmark picks
// for training: tactic 0 of WINOGRAD then runs F(4x4). A tactic named explicitly runs whatever
// the math. The CPU backend has no approximate algorithm: there it changes nothing.
enum class ConvMath : int32_t { EXACT = 0, ALLOW_APPROXIMATE = 1, COUNT = 2 };

class ConvDesc {
 public:
  ConvDesc() = default;
  // spatial_rank 1..3. pad_begin/pad_end/stride/dilation have spatial_rank entries (nullptr means
  // pad 0, stride 1, dilation 1). Asymmetric padding (pad_begin != pad_end) is allowed, as ONNX
  // needs; groups must divide C and K (groups == C == K is depthwise).
  static ConvDesc make(int spatial_rank, const int64_t* pad_begin, const int64_t* pad_end,
                       const int64_t* stride, const int64_t* dilation, int64_t groups = 1,
                       ConvMode mode = ConvMode::CROSS_CORRELATION,
                       ComputeType compute = ComputeType::F32);
  // The common 2D case with symmetric padding.
  static ConvDesc conv2d(int64_t pad_h, int64_t pad_w, int64_t stride_h = 1, int64_t stride_w = 1,
                         int64_t dil_h = 1, int64_t dil_w = 1, int64_t groups = 1,
                         ConvMode mode = ConvMode::CROSS_CORRELATION,
                         ComputeType compute = ComputeType::F32);

  // A kernel configuration within the algorithm (tile shape, split-K factor), like TensorRT's
  // tactics: 0, the default, lets the backend choose by its heuristic; 1 ..
  // conv_forward_tactic_count() pick one, and find_conv_forward_algo measures them. A tactic
  // that does not apply to the problem gives NOT_SUPPORTED, never a different kernel.
  ConvDesc with_tactic(int32_t tactic) const {
    ConvDesc c = *this;
    c.tactic_ = tactic;
    return c;
  }
  int32_t tactic() const { return tactic_; }

  ConvDesc with_math(ConvMath math) const {
    ConvDesc c = *this;
    c.math_ = math;
    return c;
  }
  ConvMath math() const { return math_; }

  // BAD_PARAM unless spatial_rank in 1..3, pads >= 0, strides >= 1, dilations >= 1, groups >= 1,
  // pads, strides and dilations <= 2^31 (so offset arithmetic cannot overflow), tactic >= 0,
  // a ConvMath value.
  Status validate() const;

  int spatial_rank() const { return spatial_rank_; }
  int64_t pad_begin(int i) const { return pad_begin_[i]; }
  int64_t pad_end(int i) const { return pad_end_[i]; }
  int64_t stride(int i) const { return stride_[i]; }
  int64_t dilation(int i) const { return dilation_[i]; }
  int64_t groups() const { return groups_; }
  ConvMode mode() const { return mode_; }
  ComputeType compute_type() const { return compute_; }

 private:
  int spatial_rank_ = 0;
  int64_t pad_begin_[3] = {};
  int64_t pad_end_[3] = {};
  int64_t stride_[3] = {1, 1, 1};
  int64_t dilation_[3] = {1, 1, 1};
  int64_t groups_ = 1;
  ConvMode mode_ = ConvMode::CROSS_CORRELATION;
  ComputeType compute_ = ComputeType::F32;
  int32_t tactic_ = 0;
  ConvMath math_ = ConvMath::EXACT;
};

// Output dims of a convolution: out_dims gets x's rank entries (N, K, spatial...).
// out = floor((in + pad_begin + pad_end - dilation * (kernel - 1) - 1) / stride) + 1.
// BAD_PARAM when the descriptors disagree (rank, C vs groups * filter C, K % groups) or the
// output would be empty.
Status conv_output_dims(const TensorDesc& x_desc, const FilterDesc& w_desc,
                        const ConvDesc& conv, int64_t* out_dims);

// Values are stable: they are written into model files.
enum class ConvAlgo : int32_t {
  DIRECT = 0,                 // straightforward loops over the output, no workspace
  IMPLICIT_GEMM = 1,          // GEMM whose lowered-input tiles are built on the fly; no workspace
  IMPLICIT_PRECOMP_GEMM = 2,  // implicit GEMM with precomputed input offsets in workspace
  GEMM = 3,                   // explicit im2col into workspace, then a tiled GEMM
  WINOGRAD = 4,               // Winograd transform for 3x3 stride-1 filters, with workspace
  FFT = 5,                    // reserved
  COUNT = 6,
};

const char* conv_algo_name(ConvAlgo a);

enum class ConvPreference : int32_t {
  PREFER_FASTEST = 0,           // the fastest algorithm, whatever its workspace
  NO_WORKSPACE = 1,             // the fastest algorithm that needs no workspace
  SPECIFY_WORKSPACE_LIMIT = 2,  // the fastest algorithm within workspace_limit bytes
};
template <>
struct EnumCount<ConvPreference> {
  static constexpr int32_t value = static_cast<int32_t>(ConvPreference::SPECIFY_WORKSPACE_LIMIT) + 1;
};

// Bytes of workspace `algo` needs for this problem. NOT_SUPPORTED when this backend lacks the
// algorithm or the algorithm does not apply to the problem (e.g. WINOGRAD with a 5x5 filter); the
// message says which.
Status conv_forward_workspace_size(const Handle& handle, const TensorDesc& x_desc,
                                   const FilterDesc& w_desc, const ConvDesc& conv,
                                   const TensorDesc& y_desc, ConvAlgo algo, size_t* bytes);

// Picks an algorithm by the backend's heuristic (no timing). workspace_limit is read only for
// SPECIFY_WORKSPACE_LIMIT. Never returns an algorithm that conv_forward would reject.
Status choose_conv_forward_algo(const Handle& handle, const TensorDesc& x_desc,
                                const FilterDesc& w_desc, const ConvDesc& conv,
                                const TensorDesc& y_desc, ConvPreference preference,
                                size_t workspace_limit, ConvAlgo* algo);

// How many tactics `algo` has for this problem on this backend: *count gets 0 when the
// algorithm has only the heuristic's configuration (tactic 0), else n (tactics 1..n; some may
// still be NOT_SUPPORTED for the problem, e.g. a split-K factor on an algorithm with no
// workspace). NOT_SUPPORTED when the algorithm does not apply at all.
Status conv_forward_tactic_count(const Handle& handle, const TensorDesc& x_desc,
                                 const FilterDesc& w_desc, const ConvDesc& conv,
                                 const TensorDesc& y_desc, ConvAlgo algo, int* count);

// Whether a tactic trades f32 accuracy for speed: WINOGRAD's 3, 4 and 6, F(4x4, 3x3), whose f32
// error reaches ~2e-5 of the output's magnitude at 20-60 channels and grows with the depth, where
// the other algorithms and tactics stay within the 1e-5 this library holds f32 to. Like a TF32
// math mode, they are opt-in: find_conv_forward_algo (and so tuning) leaves them out for f32
// storage and the heuristic never picks them unless the descriptor's ConvMath is
// ALLOW_APPROXIMATE; a caller who accepts the error may also name the tactic
// (ConvDesc::with_tactic). For f16 storage their error is far below f16's own and they are kept.
bool conv_forward_tactic_is_approximate(ConvAlgo algo, int32_t tactic);

// One measured algorithm and tactic, as find_conv_forward_algo returns them.
struct ConvAlgoPerf {
  ConvAlgo algo = ConvAlgo::DIRECT;
  int32_t tactic = 0;          // 0: the heuristic's configuration (conv.tactic() is ignored)
  Status status;               // SUCCESS, or why the algorithm could not run (e.g. workspace)
  float time_ms = -1.f;        // median of the timed runs; -1 when it did not run
  size_t workspace_bytes = 0;  // what the algorithm needs for this problem
};

// Times every algorithm of the backend on the caller's buffers, like
// cudnnFindConvolutionForwardAlgorithmEx, and every tactic of each (tactic 0, the heuristic's
// choice, included; for f32 not the approximate ones, conv_forward_tactic_is_approximate,
// unless conv.math() allows them): y is overwritten (alpha = 1, beta = 0), the workspace bounds which can run.
// Writes up to max_results entries to results, fastest first; algorithms that could not run
// come last (one entry each; tactics that do not apply are left out); *returned gets the count. Synchronizes the handle's
// stream (it measures time): call it ahead of inference, never inside it.
Status find_conv_forward_algo(const Handle& handle, const TensorDesc& x_desc, const void* x,
                              const FilterDesc& w_desc, const void* w, const ConvDesc& conv,
                              const TensorDesc& y_desc, void* y, void* workspace,
                              size_t workspace_bytes, int max_results, int* returned,
                              ConvAlgoPerf* results);

// y = alpha * conv(x, w) + beta * y.
// x: N, C, spatial (rank 3..5); w: K, C/groups, spatial; y: N, K, out spatial as
// conv_output_dims gives. All three share one dtype. The workspace must hold at least
// conv_forward_workspace_size(algo) bytes (it may be null when that is 0).
// docs/ops.md routines: | `conv_forward` | 1D/2D/3D, groups, depthwise, dilation, stride,
//   asymmetric pads, convolution and cross-correlation, KCRS/KRSC filters | see algorithms | see
//   algorithms | see algorithms | see algorithms | yes | -- | Conv |
Status conv_forward(const Handle& handle, float alpha, const TensorDesc& x_desc, const void* x,
                    const FilterDesc& w_desc, const void* w, const ConvDesc& conv, ConvAlgo algo,
                    void* workspace, size_t workspace_bytes, float beta,
                    const TensorDesc& y_desc, void* y);

// y = act(alpha1 * conv(x, w) + alpha2 * z + bias), as cudnnConvolutionBiasActivationForward.
// z (the residual) has y's dims and may alias y (then with y's layout); z == nullptr means no
// residual (alpha2 ignored). Convolutions never run in place: x must not be y.
// bias has dims 1, K, 1... (one value per output channel) in y's dtype; nullptr means no bias.
// docs/ops.md routines: | `conv_bias_act_forward` | `act(alpha1*conv + alpha2*z + bias)`, every
//   activation, z may alias y | see algorithms | see algorithms | see algorithms | see algorithms |
//   yes | -- | Conv with fused BatchNormalization, bias / residual Add and activation |
Status conv_bias_act_forward(const Handle& handle, float alpha1, const TensorDesc& x_desc,
                             const void* x, const FilterDesc& w_desc, const void* w,
                             const ConvDesc& conv, ConvAlgo algo, void* workspace,
                             size_t workspace_bytes, float alpha2, const TensorDesc& z_desc,
                             const void* z, const TensorDesc& bias_desc, const void* bias,
                             const ActivationDesc& act, const TensorDesc& y_desc, void* y);

// ---- Backward data: the transposed convolution -------------------------------------------------
//
// The data gradient of conv_forward, as cudnnConvolutionBackwardData; it is also the forward pass
// of a transposed convolution (ONNX ConvTranspose, PyTorch ConvTranspose1d/2d/3d):
//   dx = alpha * conv_t(dy, w) + beta * dx, where conv_t(dy, w)[n, c, i] sums
//   dy[n, k, o] * w[k, c - group * C/groups, t] over the filters k of c's group and every tap t
//   and dy position o with o * stride - pad_begin + t * dilation == i (per spatial dim; the tap
//   is flipped in CONVOLUTION mode). Positions no tap reaches get alpha * 0 + beta * dx.
// The descriptors are those of the forward convolution that maps dx to dy: dx_desc plays x
// (N, C, spatial), w_desc the filter (K, C / groups, window), dy_desc plays y (N, K, spatial), and
// dy's dims must be conv_output_dims(dx_desc, w_desc, conv). ONNX ConvTranspose weights
// (C_in, C_out / group, kernel...) are this filter as they stand, with K = C_in. Since the output
// size rounds down, several dx sizes give one dy size: the caller picks dx's (ONNX output_shape,
// or conv_transpose_output_dims with output_padding). dx, dy and w share one dtype (f32 or f16
// storage, f32 accumulation); any strides and either filter layout. Deterministic (each dx
// element is gathered by one thread, no atomics), needs no workspace, and never runs in place
// (dx != dy).
// docs/ops.md routines: | `conv_backward_data` | dx = conv^T(dy, w), cudnnConvolutionBackwardData,
//   also ONNX ConvTranspose's forward: 1D/2D/3D, groups, depthwise, dilation, stride, asymmetric
//   pads, both modes, KCRS/KRSC filters; dx's size picked by the caller
//   (`conv_transpose_output_dims` with output_padding < stride, or ONNX output_shape); direct
//   gather per dx element (deterministic, no workspace) | yes | yes | yes | yes | yes
//   (ConvTranspose) | data | ConvTranspose |
Status conv_backward_data(const Handle& handle, float alpha, const FilterDesc& w_desc,
                          const void* w, const TensorDesc& dy_desc, const void* dy,
                          const ConvDesc& conv, float beta, const TensorDesc& dx_desc, void* dx);

// The dx dims of a transposed convolution (ONNX ConvTranspose's output shape without
// output_shape): dx_dims gets dy's rank entries N, w's C * groups, then per spatial dim
//   (dy - 1) * stride - pad_begin - pad_end + dilation * (window - 1) + 1 + output_padding.
// output_padding has spatial_rank entries (nullptr means 0), each in [0, stride): with a larger
// one the convolution of dx would be longer than dy (ONNX and PyTorch also accept values below
// the dilation; conv_backward_data cannot express those). BAD_PARAM when the descriptors disagree
// (dy's channels are not w's K, ranks), output_padding is out of range, or dx would be empty.
Status conv_transpose_output_dims(const TensorDesc& dy_desc, const FilterDesc& w_desc,
                                  const ConvDesc& conv, const int64_t* output_padding,
                                  int64_t* dx_dims);

}  // namespace jet
