// Normalization: LRN across channels, batch normalization for inference, instance
// normalization, PReLU.
#pragma once

#include "jet/dnn/tensor.h"

namespace jet {

// Local response normalization across channels, cuDNN's definition:
// y = x / (k + alpha / n * sum_{c' in window(c)} x[c']^2)^beta, with the window
// [c - floor((n-1)/2), c + ceil((n-1)/2)] clipped to [0, C). ONNX LRN is the same formula.
struct LrnDesc {
  int64_t n = 5;  // window size, 1..16 (cuDNN's limits)
  double alpha = 1e-4;
  double beta = 0.75;  // >= 0.01
  double k = 2.0;      // >= 1e-5
  // INVALID_VALUE with the limit that was broken.
  Status validate() const;
};

// y = alpha * lrn(x) + beta * y. x, y: rank 3..5, same dims and dtype, any strides; in place
// (x == y with the same layout) is allowed.
// docs/ops.md routines: | `lrn_cross_channel_forward` | n 1..16 (odd and even); in place | yes |
//   yes | yes | yes | yes | -- | LRN |
Status lrn_cross_channel_forward(const Handle& handle, const LrnDesc& lrn, float alpha,
                                 const TensorDesc& x_desc, const void* x, float beta,
                                 const TensorDesc& y_desc, void* y);

// Batch normalization for inference, per channel:
// y = alpha * (scale[c] * (x - mean[c]) / sqrt(var[c] + epsilon) + bias[c]) + beta * y.
// x, y: rank 3..5, same dims and dtype. scale, bias, mean and var are C floats each (f32 also
// for f16 tensors, as in cuDNN), in the handle's memory space. epsilon must be >= 1e-5 in cuDNN;
// we accept any epsilon > 0 (ONNX models use smaller ones).
// docs/ops.md routines: | `batchnorm_forward_inference` | per channel, f32 parameters; in place |
//   yes | yes | yes | yes | yes | -- | BatchNormalization (when not folded into a Conv / Gemm) |
Status batchnorm_forward_inference(const Handle& handle, float alpha, float beta,
                                   const TensorDesc& x_desc, const void* x,
                                   const TensorDesc& y_desc, void* y, const float* scale,
                                   const float* bias, const float* mean, const float* var,
                                   double epsilon);

// Instance normalization (ONNX InstanceNormalization), per (n, c) over the spatial dims:
// y = alpha * (scale[c] * (x - mean[n, c]) / sqrt(var[n, c] + epsilon) + bias[c]) + beta * y,
// with mean and the biased variance (divided by the element count, as ONNX) of x[n, c, ...].
// x, y: rank 3..5, same dims and dtype (f32 or f16), any strides. scale and bias are C floats
// each (f32 also for f16 tensors, as batchnorm_forward_inference), in the handle's memory space.
// The statistics are accumulated in f32 or better by a two-pass method (mean first, then the
// squared deviations from it), so a large mean next to a small spread loses no accuracy.
// epsilon must be finite and > 0 (INVALID_VALUE otherwise). In place (x == y with the same
// layout) is allowed.
// docs/ops.md routines: | `instancenorm_forward` | per (n, c) over the spatial dims, biased
//   variance (ONNX InstanceNormalization), f32 scale/bias; two-pass statistics in f32 or better; in
//   place | yes | yes | yes | yes | yes | -- | InstanceNormalization |
Status instancenorm_forward(const Handle& handle, float alpha, float beta,
                            const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
                            void* y, const float* scale, const float* bias, double epsilon);

// Layer normalization (ONNX LayerNormalization): the dims of x from `axis` on form one group of
// `inner` elements (their product), the dims before it index the groups:
// y = alpha * ((x - mean) / sqrt(var + epsilon) * scale[i] + bias[i]) + beta * y, with i the
// element's row-major index within its group, mean and the biased variance of the group.
// x, y: rank 1..8, same dims and dtype (f32 or f16), any strides; 0 <= axis < rank. scale and
// bias: `inner` floats each (f32 also for f16 tensors, as instancenorm_forward), in the handle's
// memory space, or null (1 and 0). Statistics in f32 or better, two-pass as instancenorm_forward.
// epsilon must be finite and > 0 (INVALID_VALUE otherwise). In place (x == y, one layout) is
// allowed.
// docs/ops.md routines: | `layernorm_forward` | over the dims from `axis` on (rank 1..8), biased
//   variance (ONNX LayerNormalization), optional f32 scale/bias per element of the group; one fused
//   kernel, two-pass statistics in f32 or better; in place | yes | yes | yes | yes | yes | -- |
//   LayerNormalization (17+); the decomposed ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div(/Mul/Add)
//   form; GroupNormalization (18+) |
Status layernorm_forward(const Handle& handle, int axis, float alpha, float beta,
                         const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc, void* y,
                         const float* scale, const float* bias, double epsilon);

// PReLU: y = alpha * (x >= 0 ? x : slope * x) + beta * y, with slope broadcast to x
// (slope has x's rank and dtype, each dim 1 or equal to x's: per channel is 1, C, 1, 1).
// Rank 1..8.
// docs/ops.md routines: | `prelu_forward` | slope broadcast (scalar, per channel, full); rank 1..8;
//   in place | yes | yes | yes | yes | yes | -- | -- (PRelu is imported as op_tensor, exactly) |
Status prelu_forward(const Handle& handle, float alpha, const TensorDesc& x_desc, const void* x,
                     const TensorDesc& slope_desc, const void* slope, float beta,
                     const TensorDesc& y_desc, void* y);

}  // namespace jet
