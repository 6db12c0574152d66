// What the routines' front ends and their backends share. A routine's front end (its argument
// checks, then the call of a backend) opens kernels/cpu/<op>.cpp, above the CPU backend; the CUDA
// backend is kernels/cuda/<op>.cu. Shared here: the plans a front end resolves for both backends,
// and JET_BACKEND_ENTRIES, with which each front end declares its backend entry points. A front
// end validates every argument, then calls them; a backend may assume valid, mutually consistent
// descriptors and non-null pointers.
#pragma once

#include "../common/scatter_plan.h"
#include "jet/dnn.h"

namespace jet {

// The shared convolution entry: conv_forward is conv_bias_act_forward with no residual, no bias
// and the identity activation, blended with beta * y; z (residual) may be null, bias may be null.
// y = act(alpha1 * conv(x, w) + alpha2 * z + bias) when fused is true, otherwise
// y = alpha1 * conv(x, w) + beta * y (z, bias and act unused).
struct ConvEpilogue {
  bool fused = false;
  float beta = 0.f;     // unfused: y = alpha1 * conv + beta * y
  float alpha2 = 0.f;   // fused: residual scale
  const TensorDesc* z_desc = nullptr;
  const void* z = nullptr;
  const void* bias = nullptr;  // K values in y's dtype (contiguous per the bias desc's stride)
  int64_t bias_stride = 1;     // element stride between channels in the bias tensor
  ActivationDesc act;
};

// image_preprocess, resolved by the front end (kernels/cpu/image_preprocess.cpp) so that both
// backends sample identically. Along x (likewise y), output column x in [pad_x, pad_x + width)
// samples the source at u = x - pad_x: BILINEAR between columns i0 and i0 + 1 with weight
// rem / den on the second, where (2u + 1) * in - resized = i0 * den + rem and den = 2 * resized
// (the half-pixel centre mapping in exact integers; clamped at the edges); NEAREST column
// ((2u + 1) * in) / den. Outside the resized extent the output is pad_out[c].
struct ImageResampleAxis {
  int64_t in = 0;       // source pixels
  int64_t out = 0;      // output pixels
  int64_t resized = 0;  // the image's extent in the output
  int64_t pad = 0;      // first output pixel of the image
};

struct ImageResample {
  ImageResize resize = ImageResize::BILINEAR;
  ImageResampleAxis x, y;
  int64_t row_bytes = 0;
  int pixel_bytes = 0;
  int channels = 0;         // output channels, 1 or 3
  int source_byte[3] = {};  // byte within a source pixel of each output channel
  float scale[3] = {}, offset[3] = {}, pad_out[3] = {};
};

// One source tap along an axis: value = (1 - w) * p[i0] + w * p[i1]; NEAREST: w = 0, i1 = i0.
// Shared by the CPU backend and the CUDA kernel (host and device).
struct ImageTap {
  int64_t i0, i1;
  float w;
};

#if defined(__CUDACC__)
__host__ __device__
#endif
inline ImageTap image_tap(const ImageResampleAxis& a, bool bilinear, int64_t u) {
  const int64_t den = 2 * a.resized;
  ImageTap t{0, 0, 0.f};
  if (!bilinear) {
    t.i0 = (2 * u + 1) * a.in / den;
    if (t.i0 > a.in - 1) t.i0 = a.in - 1;
    t.i1 = t.i0;
    return t;
  }
  const int64_t num = (2 * u + 1) * a.in - a.resized;
  if (num <= 0) return t;  // left of the first pixel centre: clamped
  t.i0 = num / den;
  if (t.i0 >= a.in - 1) {  // right of the last pixel centre: clamped
    t.i0 = t.i1 = a.in - 1;
    return t;
  }
  t.i1 = t.i0 + 1;
  // rem and den are below 2^24, so both are exact floats and the quotient is correctly rounded.
  t.w = static_cast<float>(num - t.i0 * den) / static_cast<float>(den);
  return t;
}

}  // namespace jet

// A routine's two backend entry points, declared from one parameter list by its front end
// (at the top of kernels/cpu/<op>.cpp, the one file that calls them, inside namespace jet), so
// that a new routine names its backends in its own files only:
//   JET_BACKEND_ENTRIES(trilu_forward, bool upper, int64_t k, const TensorDesc& x_desc,
//                       const void* x, const TensorDesc& y_desc, void* y);
// declares cpu::trilu_forward(bool upper, ...) (kernels/cpu/trilu.cpp, host pointers) and
// cuda::trilu_forward(const Handle& handle, bool upper, ...) (kernels/cuda/trilu.cu, built when
// JET_HAVE_CUDA is defined: device pointers, asynchronous on handle.stream()). A backend that
// defines neither, or defines a different parameter list, fails to link. JET_CPU_ENTRY and
// JET_CUDA_ENTRY declare one side alone: a CUDA-only entry (the convolution's tactics and
// timing) or, in the training add-on, entries whose CUDA side takes more (a workspace). Each ends
// in a static_assert so that a use takes a semicolon like any declaration.
#define JET_BACKEND_ENTRIES(name, ...) \
  JET_CPU_ENTRY(name, __VA_ARGS__);    \
  JET_CUDA_ENTRY(name, __VA_ARGS__)
#define JET_CPU_ENTRY(name, ...)  \
  namespace cpu {                 \
  Status name(__VA_ARGS__);       \
  }                               \
  static_assert(true, "")
#define JET_CUDA_ENTRY(name, ...)                 \
  namespace cuda {                                \
  Status name(const Handle& handle, __VA_ARGS__); \
  }                                               \
  static_assert(true, "")
