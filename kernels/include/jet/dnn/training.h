// The training add-on (issue 15): backward routines, losses and optimizer steps. Built only with
// the CMake option JET_BUILD_TRAINING (off by default, so the inference library stays as it is);
// without it these routines are not in libjet_kernels and this header is not installed.
// Not included by jet/dnn.h: include this header yourself.
//
// The conventions are the forward routines': descriptors, alpha/beta blending of the written
// gradient (dx = alpha * grad + beta * dx; with beta == 0, dx is not read), workspace queries,
// algorithm choice, a Status naming the problem, no allocation. Two more rules:
//  - f32 only for now: f16 tensors give NOT_SUPPORTED.
//  - Deterministic: every routine gives bit-identical results run after run on one device (each
//    output element is computed by one thread, or by a fixed-shape reduction tree; no atomics).
#pragma once

#include <cstddef>
#include <cstdint>

#include "jet/dnn/activation.h"
#include "jet/dnn/conv.h"
#include "jet/dnn/gemm.h"
#include "jet/dnn/norm.h"
#include "jet/dnn/pool.h"
#include "jet/dnn/softmax.h"
#include "jet/dnn/tensor.h"
#include "jet/dnn/tensor_ops.h"

namespace jet {

// ---- Activations ------------------------------------------------------------------------------
// dx = alpha * dy * act'(x) + beta * dx, from the forward input x (every mode's derivative is a
// function of x). x, dy, dx: same dims, f32, any strides (rank 1..8); dx may alias dy with the
// same layout. At the kinks the derivative is PyTorch's: RELU, LEAKY_RELU, ELU, SELU take the
// negative side's slope at 0; CLIPPED_RELU (hardtanh) passes the gradient only strictly inside
// (0, alpha); CLIP (clamp) inclusively in [alpha, beta]; HARD_SWISH is x / 3 + 1/2 on [-3, 3];
// HARD_SIGMOID passes alpha strictly inside (0, 1). A NaN in x or dy gives a NaN in dx.
// docs/ops.md training: | `activation_backward` | every activation mode, from the forward input x |
//   yes | yes | PyTorch's derivative at kinks (listed in the header; floor, ceil, round, sign: 0
//   everywhere; abs: 0 at 0); NaN in x or dy gives NaN; dx may alias dy |
Status activation_backward(const Handle& handle, const ActivationDesc& act, float alpha,
                           const TensorDesc& x_desc, const void* x, const TensorDesc& dy_desc,
                           const void* dy, float beta, const TensorDesc& dx_desc, void* dx);

// PReLU (prelu_forward: y = x >= 0 ? x : slope * x, slope broadcast to x), both gradients, each
// optional (null: not computed):
//   dx     = alpha * dy * (x > 0 ? 1 : slope) + beta * dx                   (x's dims)
//   dslope = alpha_param * sum over slope's broadcast dims of dy * (x > 0 ? 0 : x)
//            + beta_param * dslope                                            (slope's dims)
// (PyTorch's derivative at 0.) f32, any strides, rank 1..8; dx may alias dy (same layout).
// docs/ops.md training: | `prelu_backward` | dx and dslope (scalar, per-channel or full slope),
//   each optional | yes | yes | PyTorch's derivative at 0; dslope sums over the slope's broadcast
//   dims; dx may alias dy |
Status prelu_backward(const Handle& handle, float alpha, const TensorDesc& x_desc, const void* x,
                      const TensorDesc& slope_desc, const void* slope,
                      const TensorDesc& dy_desc, const void* dy, float beta,
                      const TensorDesc& dx_desc, void* dx, float alpha_param, float beta_param,
                      const TensorDesc& dslope_desc, void* dslope);

// ---- Softmax ----------------------------------------------------------------------------------
// dx = alpha * softmax'(dy) + beta * dx from the forward OUTPUT y, as cudnnSoftmaxBackward:
//   FAST, ACCURATE: dx = y * (dy - sum(dy * y))          (sum over the softmax group)
//   LOG:            dx = dy - exp(y) * sum(dy)
// y, dy, dx: rank 3..5, same dims, f32, any strides; dx may alias dy with the same layout.
// Sums accumulate in double on the CPU, in compensated f32 on CUDA.
// docs/ops.md training: | `softmax_backward` | FAST/ACCURATE and LOG x INSTANCE/CHANNEL, from the
//   forward output y | yes | yes | cudnnSoftmaxBackward's formulas; dx may alias dy |
Status softmax_backward(const Handle& handle, SoftmaxAlgo algo, SoftmaxMode mode, float alpha,
                        const TensorDesc& y_desc, const void* y, const TensorDesc& dy_desc,
                        const void* dy, float beta, const TensorDesc& dx_desc, void* dx);

// ---- Pooling ----------------------------------------------------------------------------------
// dx = alpha * pool'(dy) + beta * dx. x is the forward input, dy has pool_output_dims(x) dims;
// x, dy, dx f32, any strides, dx != dy. The same descriptors pool_forward accepts (padding,
// dilation, ceil_mode, global).
//  - MAX recomputes each window's argmax from x (no saved indices, so nothing to keep between
//    forward and backward but x): the gradient goes to the first maximum in window order (D, H,
//    W), or to the first NaN when the window holds one (the element the forward propagated).
//  - AVG_INCLUDE_PAD / AVG_EXCLUDE_PAD spread dy / divisor over the window's taps inside x, with
//    the forward's divisor.
// Each dx element gathers from the windows that contain it (no scatter, no atomics).
// docs/ops.md training: | `pool_backward` | max, avg incl. pad, avg excl. pad; 1D/2D/3D, pads,
//   stride, dilation, ceil mode, global | yes | yes | max **recomputes** the argmax from x (no
//   saved indices): first maximum in window order, or the window's last NaN (PyTorch's rule); each
//   dx element gathers from its windows (CUDA, 2D max pooling without dilation, windows up to 8: a
//   block finds the argmax of each window reaching its 32 x 32 tile of dx once, in shared memory,
//   then gathers; the sums are the CPU's bit for bit) |
Status pool_backward(const Handle& handle, const PoolDesc& pool, float alpha,
                     const TensorDesc& x_desc, const void* x, const TensorDesc& dy_desc,
                     const void* dy, float beta, const TensorDesc& dx_desc, void* dx);

// ---- Convolution ------------------------------------------------------------------------------
// Bias gradient: db[k] = alpha * sum over n and the spatial dims of dy[n, k, ...] + beta * db[k].
// dy: rank 3..5; db: dims 1, K, 1... (any strides); f32. Sums in double (CPU) / compensated f32
// in a fixed-order tree (CUDA).
// docs/ops.md training: | `conv_backward_bias` | db[k] = sum of dy over N and the spatial dims |
//   yes | yes | optional workspace (`conv_backward_bias_workspace_size`): CUDA then sums each
//   channel with several blocks where the channels alone leave SMs idle (fixed chunks, partial sums
//   added in a fixed order: deterministic), else one block per channel |
Status conv_backward_bias(const Handle& handle, float alpha, const TensorDesc& dy_desc,
                          const void* dy, float beta, const TensorDesc& db_desc, void* db);

// Bytes of workspace conv_backward_bias can use for dy: with it, CUDA sums each channel with
// several blocks where the channels alone are too few to fill the GPU (fixed chunks, partial
// sums added in a fixed order: still deterministic). 0 on the CPU and where one block per
// channel suffices. dy: rank 3..5, f32.
Status conv_backward_bias_workspace_size(const Handle& handle, const TensorDesc& dy_desc,
                                         size_t* bytes);
// conv_backward_bias with that workspace: null with workspace_bytes 0 is the routine above;
// otherwise it must hold conv_backward_bias_workspace_size's bytes (BAD_PARAM if fewer).
Status conv_backward_bias(const Handle& handle, float alpha, const TensorDesc& dy_desc,
                          const void* dy, float beta, const TensorDesc& db_desc, void* db,
                          void* workspace, size_t workspace_bytes);

// The activation's backward and the bias gradient of a convolution with a fused bias and
// activation (y = act(conv + bias)) in one pass over dy, as cuDNN's dReLU + dBias fusion:
//   dpre[n, k, ...] = dy[n, k, ...] * act'(x[n, k, ...])
//   db[k]           = alpha * sum over n and the spatial dims of dpre[n, k, ...] + beta * db[k]
// x is the activation's forward input (for RELU its output gives the same derivative), with
// activation_backward's derivatives (NaN in x or dy gives NaN in dpre and db). x, dy, dpre:
// rank 3..5, same dims, f32, any strides; dpre may alias dy or x with the same layout. db as
// conv_backward_bias, summed the same ways (double on the CPU, compensated f32 in a fixed order
// on CUDA); the workspace is conv_backward_bias's (null with 0 bytes: none).
// docs/ops.md training: | `conv_backward_bias_activation` | dpre = dy * act'(x) and db = sum of
//   dpre over N and the spatial dims, one pass | yes | yes | every activation mode
//   (activation_backward's derivatives); the CPU composes activation_backward and
//   conv_backward_bias; CUDA reads dy and x once (16-byte accesses where the innermost dim is
//   contiguous), with conv_backward_bias's workspace and fixed-order sums |
Status conv_backward_bias_activation(const Handle& handle, const ActivationDesc& act,
                                     const TensorDesc& x_desc, const void* x,
                                     const TensorDesc& dy_desc, const void* dy,
                                     const TensorDesc& dpre_desc, void* dpre, float alpha,
                                     float beta, const TensorDesc& db_desc, void* db,
                                     void* workspace, size_t workspace_bytes);

// Values are stable (they may be written to plans).
enum class ConvBwdFilterAlgo : int32_t {
  // Implicit GEMM: each dw element is a dot product over N x output positions whose x operand is
  // addressed on the fly; no workspace.
  IMPLICIT_GEMM = 0,
  // Explicit lowering: x is unfolded (im2col) and dy packed into the workspace, then one batched
  // gemm_forward over the groups computes dw_g = dy_g @ col_g^T, accumulating in plain f32 over
  // N x output positions (IMPLICIT_GEMM's sums are compensated on CUDA, double on the CPU).
  // Ungrouped problems may split that sum into chunks (one batched gemm_forward of the chunks'
  // partial dw into the workspace, then reduce_forward): the ConvDesc's tactic t >= 1 asks for t
  // chunks (t must divide N x output positions; NOT_SUPPORTED otherwise or with groups), tactic 0
  // lets the backend choose (CUDA: enough chunks to fill the GPU when dw alone has few 64 x 64
  // tiles; the CPU: none). IMPLICIT_GEMM ignores the tactic.
  GEMM = 1,
  // Winograd F(3x3, 2x2) for 2D 3x3 filters with stride 1, no dilation and one group
  // (NOT_SUPPORTED otherwise): x's 4 x 4 windows and dy's 2 x 2 tiles are transformed into 16
  // planes in the workspace, 16 products of K x C summed over N x tiles (one batched
  // gemm_forward: 2.25 times fewer multiplications than GEMM's), then each 4 x 4 transformed to
  // dw's 3 x 3. Plain f32 sums, as GEMM. Where the ConvDesc's math is ALLOW_APPROXIMATE,
  // F(3x3, 4x4) instead (as cuDNN's winograd_nonfused filter gradient): 6 x 6 windows, 4 x 4
  // tiles, 36 planes, 4 times fewer multiplications, with transforms whose coefficients (up to
  // 64 and 1/36) cost accuracy like the forward's F(4x4). The tiles may be split in chunks (partial products,
  // then reduce_forward): tactic t >= 1 asks for t chunks (NOT_SUPPORTED if more than the
  // tiles), tactic 0 lets the backend choose (CUDA: enough to fill the GPU; the CPU: none).
  WINOGRAD = 2,
  COUNT = 3,
};

const char* conv_bwd_filter_algo_name(ConvBwdFilterAlgo a);

// Bytes of workspace `algo` needs: 0 for IMPLICIT_GEMM; for GEMM 4 * N * out * (C * taps + K),
// with out the output positions per image and taps the filter's window size (f32): x unfolded
// and dy packed; plus 4 * chunks * K * C * taps for the partial dw when the sum is split. For
// WINOGRAD 4 * planes * (tiles * (C + K) + K * C * chunks) (plus 4 * planes * K * C when split),
// tiles being N * ceil(out_h / m) * ceil(out_w / m) rounded up to a multiple of the chunks, with
// m = 2 and 16 planes, or m = 4 and 36 planes under ConvMath::ALLOW_APPROXIMATE.
Status conv_backward_filter_workspace_size(const Handle& handle, const TensorDesc& x_desc,
                                           const TensorDesc& dy_desc, const ConvDesc& conv,
                                           const FilterDesc& dw_desc, ConvBwdFilterAlgo algo,
                                           size_t* bytes);

// The filter gradient of conv_forward, as cudnnConvolutionBackwardFilter:
//   dw[k, c, t] = alpha * sum over n and output positions o of
//                 dy[n, k, o] * x[n, group(k) * C/groups + c, o * stride - pad_begin + t * dilation]
//                 (t flipped in CONVOLUTION mode; taps in the padding contribute 0) + beta * dw.
// x: N, C, spatial; dy: conv_output_dims(x, dw, conv); dw: either filter layout. f32, any
// strides, any groups, dilation and padding the forward accepts. Deterministic.
// docs/ops.md training: | `conv_backward_filter` | dw, 1D/2D/3D, groups, depthwise, dilation,
//   stride, asymmetric pads, both modes, KCRS/KRSC, any x/dy strides | yes | yes | algorithms below
//   |
Status conv_backward_filter(const Handle& handle, float alpha, const TensorDesc& x_desc,
                            const void* x, const TensorDesc& dy_desc, const void* dy,
                            const ConvDesc& conv, ConvBwdFilterAlgo algo, void* workspace,
                            size_t workspace_bytes, float beta, const FilterDesc& dw_desc,
                            void* dw);

// The data gradient with an algorithm choice (conv_backward_data in jet/dnn/conv.h is GATHER).
// Values are stable (they may be written to plans).
enum class ConvBwdDataAlgo : int32_t {
  // conv_backward_data: one thread per dx element gathers over the taps and filters that reach
  // it; no workspace, every problem.
  GATHER = 0,
  // dx as forward convolutions (the forward's tuned engines). Stride 1: dx is the convolution of
  // dy with the filter transposed (K and C swapped within each group) and flipped, with pads
  // dilation * (window - 1) - pad. Stride s > 1: dx splits by output phase (i mod s per spatial
  // dim, so prod(s) phases); each phase is a stride-1 convolution of a window of dy with the
  // sub-filter of the taps that reach it (transposed and flipped likewise), written into the
  // strided view of dx that holds the phase; a phase no tap reaches gets alpha * 0 + beta * dx
  // (with beta = 0, one pass zeroes dx first). The sub-filters go into the workspace
  // (transform_tensor), then conv_forward runs per phase with the algorithm
  // choose_conv_forward_algo prefers (PREFER_FASTEST) and its workspace (the phases share it).
  // Any pads, dilation, groups, layouts and dtypes conv_backward_data takes; NOT_SUPPORTED when
  // the strides give more than 64 phases.
  TRANSPOSED_FORWARD = 1,
  COUNT = 2,
};

const char* conv_bwd_data_algo_name(ConvBwdDataAlgo a);

// Bytes of workspace `algo` needs for this problem (0 for GATHER); NOT_SUPPORTED when the
// algorithm cannot run it.
Status conv_backward_data_workspace_size(const Handle& handle, const FilterDesc& w_desc,
                                         const TensorDesc& dy_desc, const ConvDesc& conv,
                                         const TensorDesc& dx_desc, ConvBwdDataAlgo algo,
                                         size_t* bytes);

// conv_backward_data (jet/dnn/conv.h: the same descriptors, dtypes and formula) with `algo` and
// its workspace. Deterministic (conv_forward uses no atomics either).
Status conv_backward_data(const Handle& handle, float alpha, const FilterDesc& w_desc,
                          const void* w, const TensorDesc& dy_desc, const void* dy,
                          const ConvDesc& conv, ConvBwdDataAlgo algo, void* workspace,
                          size_t workspace_bytes, float beta, const TensorDesc& dx_desc, void* dx);

// ---- GEMM / fully connected --------------------------------------------------------------------
// The gradients of y = op(a) @ op(b) + bias (gemm_forward with the same GemmDesc), each
// optional (null: not computed):
//   da    = alpha * (dy @ op(b)^T, transposed back when trans_a) + beta * da   (a's dims)
//   db    = alpha * (op(a)^T @ dy, transposed back when trans_b) + beta * db   (b's dims)
//   dbias = alpha * (dy summed over the dims where bias is 1) + beta * dbias   (bias's dims)
// Composed from gemm_forward and reduce_forward, so it runs on both backends with their
// accuracy. f32; rank 2 or 3; a batch of 1 that broadcasts in the forward is NOT_SUPPORTED here
// (its gradient sums over the batch; call per batch entry and accumulate with beta = 1).
// docs/ops.md training: | `gemm_backward` | da, db, dbias of `gemm_forward` (transposes, rank 2/3)
//   | yes | yes | composed from `gemm_forward` and `reduce_forward`; a broadcast batch-1 operand is
//   NOT_SUPPORTED |
Status gemm_backward(const Handle& handle, const GemmDesc& gemm, float alpha,
                     const TensorDesc& a_desc, const void* a, const TensorDesc& b_desc,
                     const void* b, const TensorDesc& dy_desc, const void* dy, float beta,
                     const TensorDesc& da_desc, void* da, const TensorDesc& db_desc, void* db,
                     const TensorDesc& dbias_desc, void* dbias);

// ---- LRN ----------------------------------------------------------------------------------------
// dx = alpha * lrn'(dy) + beta * dx for lrn_cross_channel_forward (cuDNN's definition), from the
// forward input x (each window's denominator is recomputed, no saved scale):
//   dx_j = dy_j d_j^-beta - 2 (alpha/n) beta x_j sum over the windows i containing j of
//          dy_i x_i d_i^(-beta-1),  d_i = k + alpha/n * sum of x^2 over i's window.
// x, dy, dx: rank 3..5, same dims, f32, any strides; dx != dy, dx != x.
// docs/ops.md training: | `lrn_cross_channel_backward` | cuDNN's LRN across channels, from the
//   forward input x | yes | yes | window denominators recomputed from x (no saved scale tensor);
//   one thread per dx element |
Status lrn_cross_channel_backward(const Handle& handle, const LrnDesc& lrn, float alpha,
                                  const TensorDesc& x_desc, const void* x,
                                  const TensorDesc& dy_desc, const void* dy, float beta,
                                  const TensorDesc& dx_desc, void* dx);

// ---- Tensor ops -------------------------------------------------------------------------------
// The gradients of op_tensor (c = op(u, v) with u = alpha1 * a, v = alpha2 * b, a and b
// broadcast to c), each optional (null: not computed):
//   da = alpha * alpha1 * sum over a's broadcast dims of dc * d op / du + beta * da
//   db = alpha * alpha2 * sum over b's broadcast dims of dc * d op / dv + beta * db
// ADD (1, 1), SUB (1, -1), MUL (v, u), DIV (1/v, -u/v^2); MAX and MIN pass dc to the chosen
// operand and half to each on a tie (PyTorch's torch.maximum / minimum rule; a NaN operand gets
// the whole of dc on both sides); POW (v u^(v-1), u^v log u) with torch.pow's zeros (0 for du
// where v == 0, for dv where u == 0 and v >= 0; dv is NaN for u < 0); MOD, C's fmod
// (1, -trunc(u / v)) as torch.fmod. a, b and their gradients may have lower ranks (leading 1s, as
// the forward); f32, any strides; da and db must not alias a, b, dc or each other.
// docs/ops.md training: | `op_tensor_backward` | da, db of op_tensor (add, sub, mul, div, min, max,
//   pow, mod) with broadcasting both ways and lower-rank operands | yes | yes | sums over each
//   operand's broadcast dims; min/max: PyTorch's tie rule (half each); pow: torch.pow's (du 0 where
//   the exponent is 0, dv 0 where the base is 0 and the exponent >= 0, dv NaN for a negative base);
//   mod (C's fmod): torch.fmod's (1, -trunc(u / v)) |
Status op_tensor_backward(const Handle& handle, TensorOp op, float alpha1,
                          const TensorDesc& a_desc, const void* a, float alpha2,
                          const TensorDesc& b_desc, const void* b, const TensorDesc& dc_desc,
                          const void* dc, float alpha, float beta, const TensorDesc& da_desc,
                          void* da, const TensorDesc& db_desc, void* db);

// The gradient of reduce_forward for SUM and MEAN: dx = alpha * dy broadcast over the reduced
// dims (divided by the reduced count for MEAN) + beta * dx. MAX and MIN give NOT_SUPPORTED.
// Composed from add_tensor (both backends). x's dims come from dx_desc; f32.
// docs/ops.md training: | `reduce_backward` | SUM and MEAN: dy broadcast back over the reduced dims
//   | yes | yes | composed from `add_tensor`; MAX/MIN are NOT_SUPPORTED |
Status reduce_backward(const Handle& handle, ReduceOp op, float alpha, const TensorDesc& dy_desc,
                       const void* dy, float beta, const TensorDesc& dx_desc, void* dx);

// The gradient of pad_forward: dx = alpha * (sum of dy over the outputs that read each x
// element) + beta * dx: the interior for CONSTANT, plus the mirrored (REFLECT) or repeated
// (EDGE) padding; negative pads (crops) give 0 to the cropped elements. The forward's
// descriptors and pads (x = dx, y = dy); f32, any strides, dx != dy.
// docs/ops.md training: | `pad_backward` | constant, reflect, edge; negative pads (crops) | yes |
//   yes | each dx element gathers dy from the interior position and the padding that mirrors or
//   repeats it |
Status pad_backward(const Handle& handle, PadMode mode, const int64_t* pad_begin,
                    const int64_t* pad_end, float alpha, const TensorDesc& dy_desc,
                    const void* dy, float beta, const TensorDesc& dx_desc, void* dx);

// The gradient of resize_forward (same ResizeDesc; x = dx, y = dy): each dx element gathers dy
// over the outputs that sample it, weighted by the forward's tap weights (NEAREST: 1; LINEAR:
// the bi/trilinear weights), every coordinate and rounding mode. f32, rank 3..5, any strides,
// dx != dy. Straightforward: each dx element scans the output positions along each axis.
// docs/ops.md training: | `resize_backward` | nearest (every rounding) and linear, every coordinate
//   mode, given scales | yes | yes | each dx element scans the outputs along each axis for those
//   that sample it (coordinates in double, as the forward); straightforward, not fast |
Status resize_backward(const Handle& handle, const ResizeDesc& resize, float alpha,
                       const TensorDesc& dy_desc, const void* dy, float beta,
                       const TensorDesc& dx_desc, void* dx);

// ---- Batch normalization (training) -----------------------------------------------------------
// Training forward, per channel c over N and the spatial dims (M elements):
//   mean = sum(x) / M, var = sum((x - mean)^2) / M (biased: what normalizes),
//   y = alpha * (scale[c] * (x - mean) * inv_std + bias[c]) + beta * y, inv_std = 1/sqrt(var+eps)
//   running_mean = (1 - momentum) * running_mean + momentum * mean
//   running_var  = (1 - momentum) * running_var  + momentum * var * M / (M - 1)   (unbiased)
// as cudnnBatchNormalizationForwardTraining with exponentialAverageFactor = momentum (PyTorch's
// momentum, default 0.1). running_mean/var may both be null (not updated); save_mean and
// save_inv_std (C floats each) may both be null, else they get mean and inv_std for the
// backward. x, y: rank 3..5, same dims, f32, any strides. Parameters are C floats in the
// handle's memory space. epsilon > 0, momentum in [0, 1]; M >= 2 when running_var is updated.
// docs/ops.md training: | `batchnorm_forward_training` | batch statistics (biased variance
//   normalizes), running mean/var update with momentum (unbiased variance, cuDNN / PyTorch), saved
//   mean and 1/std | yes | yes | two-pass statistics; M >= 2 values per channel when the running
//   variance is updated; optional workspace (`batchnorm_training_workspace_size`, shared with the
//   backward): CUDA then runs several blocks per channel where the channels alone leave SMs idle
//   (fixed chunks, partial sums added in a fixed order by the next kernel: deterministic), else one
//   block per channel |
Status batchnorm_forward_training(const Handle& handle, float alpha, float beta,
                                  const TensorDesc& x_desc, const void* x,
                                  const TensorDesc& y_desc, void* y, const float* scale,
                                  const float* bias, double momentum, float* running_mean,
                                  float* running_var, double epsilon, float* save_mean,
                                  float* save_inv_std);

// Backward of batchnorm_forward_training (batch statistics), as cudnnBatchNormalizationBackward:
//   xhat = (x - mean) * inv_std, g = sum(dy), gx = sum(dy * xhat)   (per channel)
//   dx     = alpha_data * scale * inv_std * (dy - g / M - xhat * gx / M) + beta_data * dx
//   dscale = alpha_param * gx + beta_param * dscale
//   dbias  = alpha_param * g  + beta_param * dbias
// saved_mean/saved_inv_std from the forward, or both null to recompute them from x. dscale and
// dbias may both be null (frozen parameters). x, dy, dx: same dims, f32, any strides, dx != dy.
// docs/ops.md training: | `batchnorm_backward` | dx, dscale, dbias with saved or recomputed
//   statistics | yes | yes | dscale/dbias optional (frozen parameters); the same optional workspace
//   |
Status batchnorm_backward(const Handle& handle, float alpha_data, float beta_data,
                          float alpha_param, float beta_param, const TensorDesc& x_desc,
                          const void* x, const TensorDesc& dy_desc, const void* dy,
                          const TensorDesc& dx_desc, void* dx, const float* scale, float* dscale,
                          float* dbias, double epsilon, const float* saved_mean,
                          const float* saved_inv_std);

// Bytes of workspace the batch-norm training routines can use for x (as
// cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize; one size serves the forward and the
// backward): with it, CUDA runs several blocks per channel where the channels alone are too few
// to fill the GPU (a fixed chunk of the channel each, partial sums in the workspace added in a
// fixed order by the next kernel: still deterministic, no atomics). 0 on the CPU and where one
// block per channel suffices. x: rank 3..5, f32 (the descriptor is validated).
Status batchnorm_training_workspace_size(const Handle& handle, const TensorDesc& x_desc,
                                         size_t* bytes);

// batchnorm_forward_training and batchnorm_backward with that workspace: workspace null with
// workspace_bytes 0 is the routines above (one block per channel on CUDA); otherwise it must
// hold batchnorm_training_workspace_size's bytes (BAD_PARAM if fewer). Same results but for
// the order of the f32 sums.
Status batchnorm_forward_training(const Handle& handle, float alpha, float beta,
                                  const TensorDesc& x_desc, const void* x,
                                  const TensorDesc& y_desc, void* y, const float* scale,
                                  const float* bias, double momentum, float* running_mean,
                                  float* running_var, double epsilon, float* save_mean,
                                  float* save_inv_std, void* workspace, size_t workspace_bytes);
Status batchnorm_backward(const Handle& handle, float alpha_data, float beta_data,
                          float alpha_param, float beta_param, const TensorDesc& x_desc,
                          const void* x, const TensorDesc& dy_desc, const void* dy,
                          const TensorDesc& dx_desc, void* dx, const float* scale, float* dscale,
                          float* dbias, double epsilon, const float* saved_mean,
                          const float* saved_inv_std, void* workspace, size_t workspace_bytes);

// ---- Layer normalization ----------------------------------------------------------------------
// Backward of layernorm_forward (the same axis: x's dims from `axis` on form a group of M
// elements, i an element's row-major index within its group; the statistics are recomputed from
// x, two-pass):
//   xhat = (x - mean) * inv_std, g_i = dy_i * scale[i] (dy_i without scale)
//   dx        = alpha_data * inv_std * (g - sum(g) / M - xhat * sum(g * xhat) / M) + beta_data * dx
//   dscale[i] = alpha_param * sum over the groups of dy_i * xhat_i + beta_param * dscale[i]
//   dbias[i]  = alpha_param * sum over the groups of dy_i + beta_param * dbias[i]
// dx, dscale and dbias are each optional (null: not computed; at least one). The parameter
// gradients need a workspace of layernorm_backward_workspace_size bytes (each group's mean and
// inv_std; none without dscale and dbias). x, dy, dx: same dims, f32, any strides, rank 1..8,
// 0 <= axis < rank; dx != dy, dx != x. scale, dscale, dbias: M f32 values in the handle's memory.
// Sums in double (CPU) / compensated f32 in fixed trees (CUDA): deterministic.
size_t layernorm_backward_workspace_size(const TensorDesc& x_desc, int axis);
// docs/ops.md training: | `layernorm_backward` | dx, dscale, dbias of `layernorm_forward` (any
//   axis, rank 1..8, any strides, with or without scale), each optional | yes | yes | statistics
//   recomputed from x (two-pass); the parameter gradients read each group's mean and 1/std from a
//   workspace (`layernorm_backward_workspace_size`: 16 bytes a group); CUDA: one block per group
//   for dx, one thread per group element for dscale/dbias |
Status layernorm_backward(const Handle& handle, int axis, float alpha_data, float beta_data,
                          float alpha_param, float beta_param, const TensorDesc& x_desc,
                          const void* x, const TensorDesc& dy_desc, const void* dy,
                          const TensorDesc& dx_desc, void* dx, const float* scale, float* dscale,
                          float* dbias, double epsilon, void* workspace, size_t workspace_bytes);

// ---- Losses -----------------------------------------------------------------------------------
// Every loss writes one f32 scalar, the mean over the samples (or elements), to *loss (handle
// memory; null: not computed), and optionally the gradient of that mean:
// dx = alpha * dloss/dx + beta * dx (null: not computed; one of the two must be asked for).
// The mean is reduced through a workspace of per-chunk partial sums whose shape depends only on
// the count, so results are deterministic; the workspace queries give its size.

size_t softmax_cross_entropy_workspace_size(int64_t rows);
size_t elementwise_loss_workspace_size(int64_t elements);  // mse_loss, bce_with_logits_loss

// Softmax cross-entropy, fused and stable: logits [N, C] (rank 2, any strides), labels N int32
// class indices (handle memory). loss = mean_n (logsumexp(logits[n]) - logits[n, label[n]]),
// dlogits = (softmax(logits) - onehot(label)) / N. A label outside [0, C) makes that sample's
// loss and gradient row NaN (a bad label must not pass as a number).
// docs/ops.md training: | `softmax_cross_entropy_loss` | fused log-softmax + NLL over [N, C] logits
//   with int32 labels: mean loss and d/dlogits | yes | yes | stable (max subtracted); a label
//   outside [0, C) gives a NaN loss and NaN gradient row |
Status softmax_cross_entropy_loss(const Handle& handle, const TensorDesc& logits_desc,
                                  const void* logits, const int32_t* labels, void* workspace,
                                  size_t workspace_bytes, float* loss, float alpha, float beta,
                                  const TensorDesc& dlogits_desc, void* dlogits);

// Mean squared error: loss = mean((x - target)^2), dx = 2 (x - target) / count.
// x, target, dx: same dims (rank 1..8), f32, any strides.
// docs/ops.md training: | `mse_loss`, `bce_with_logits_loss` | mean loss and gradient, any rank and
//   strides | yes | yes | BCE as PyTorch's BCEWithLogitsLoss: max(x,0) - x t + log1p(exp(-abs(x)))
//   |
Status mse_loss(const Handle& handle, const TensorDesc& x_desc, const void* x,
                const TensorDesc& target_desc, const void* target, void* workspace,
                size_t workspace_bytes, float* loss, float alpha, float beta,
                const TensorDesc& dx_desc, void* dx);

// Binary cross-entropy with logits (PyTorch BCEWithLogitsLoss, mean):
// loss = mean(max(x, 0) - x * t + log1p(exp(-|x|))), dx = (sigmoid(x) - t) / count.
Status bce_with_logits_loss(const Handle& handle, const TensorDesc& x_desc, const void* x,
                            const TensorDesc& target_desc, const void* target, void* workspace,
                            size_t workspace_bytes, float* loss, float alpha, float beta,
                            const TensorDesc& dx_desc, void* dx);

// ---- Optimizers -------------------------------------------------------------------------------
// Fused element-wise parameter updates over `count` contiguous f32 values (param, grad and the
// state buffers in handle memory; state zero-initialized by the caller before the first step).
// One kernel per call, PyTorch's formulas (torch.optim, foreach=False).

// SGD: g = grad + weight_decay * p; with momentum != 0: buf = momentum * buf + (1 - dampening)
// * g (PyTorch's first step sets buf = g: the same when buf starts at 0 and dampening is 0),
// g = nesterov ? g + momentum * buf : buf; p -= lr * g. momentum_buf may be null when
// momentum == 0.
struct SgdDesc {
  float lr = 0.01f;
  float momentum = 0.f;
  float dampening = 0.f;
  float weight_decay = 0.f;
  bool nesterov = false;
  Status validate() const;  // INVALID_VALUE for non-finite or negative values, nesterov rules
};
// docs/ops.md training: | `sgd_step` | SGD with momentum, dampening, Nesterov, weight decay
//   (torch.optim.SGD) | yes | yes | one fused kernel; momentum buffer zero-initialized by the
//   caller |
Status sgd_step(const Handle& handle, const SgdDesc& sgd, int64_t count, float* param,
                const float* grad, float* momentum_buf);

// Adam and AdamW: with t the 1-based step number,
//   Adam:  g = grad + weight_decay * p;      AdamW: p *= 1 - lr * weight_decay, g = grad
//   m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
//   p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
struct AdamDesc {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.f;
  bool decoupled_weight_decay = false;  // true: AdamW
  Status validate() const;
};
// docs/ops.md training: | `adam_step` | Adam, AdamW (`decoupled_weight_decay`), bias-corrected
//   (torch.optim.Adam/AdamW) | yes | yes | one fused kernel; step is 1-based |
Status adam_step(const Handle& handle, const AdamDesc& adam, int64_t step, int64_t count,
                 float* param, const float* grad, float* m, float* v);

// Gradient clipping by global norm (torch.nn.utils.clip_grad_norm_): over `tensors` gradient
// arrays (grads[i] with counts[i] f32 values, handle memory; the two arrays themselves are host
// memory), total = sqrt(sum of squares); every gradient is scaled by min(1, max_norm /
// (total + 1e-6)) in place, and *total_norm (handle memory; may be null) gets total. No host
// synchronization: the scale is read on the device. A NaN in a gradient makes total and every
// gradient NaN; an infinity makes total inf and the scale 0 (PyTorch with
// error_if_nonfinite=False).
size_t clip_grad_norm_workspace_size(int tensors, const int64_t* counts);
// docs/ops.md training: | `clip_grad_norm` | global L2 norm over a list of gradients, scaled by
//   min(1, max_norm / (norm + 1e-6)) | yes | yes | no host synchronization (the coefficient stays
//   on the device); NaN gradients give a NaN norm and NaN gradients, as PyTorch |
Status clip_grad_norm(const Handle& handle, int tensors, float* const* grads,
                      const int64_t* counts, float max_norm, void* workspace,
                      size_t workspace_bytes, float* total_norm);

}  // namespace jet
