// What every CUDA convolution algorithm shares: the problem geometry, normalized to 3 spatial
// dims, and the epilogue applied while an output element is written (alpha/beta blend, or the
// fused bias + residual + activation). Each algorithm lives in its own file
// (conv_direct.cu with its depthwise kernels, conv_gemm.cu, conv_winograd.cu); conv.cu holds the
// backend entry points, workspace sizes and the heuristic.
#pragma once

#include <cstdint>

#include "../api/backend.h"
#include "../common/activation_math.h"
#include "cuda_common.cuh"

namespace jet {
namespace cuda {

// A convolution problem with 1-3 spatial dims stored as 3: 1D and 2D problems get leading
// spatial dims of size 1 (in = out = window = 1, pad 0, stride 1, dilation 1). Strides are in
// elements, so any layout is expressible. Passed to kernels by value.
struct ConvGeom {
  int spatial_rank;     // the problem's real spatial rank, 1..3
  int64_t n, c, k;      // batch, input channels, output channels (all groups)
  int64_t groups, cg, kg;  // groups, C / groups, K / groups
  int64_t in[3], out[3], win[3];
  int64_t pad[3], stride[3], dil[3];  // pad = pad_begin (pad_end only shapes `out`)
  bool flip;            // ConvMode::CONVOLUTION: tap t reads filter element win - 1 - t
  int64_t xs_n, xs_c, xs[3];  // x strides
  int64_t ys_n, ys_c, ys[3];  // y strides
  int64_t ws_k, ws_c, ws[3];  // filter strides (from the filter layout)
  int tactic;           // ConvDesc::tactic(): 0 = the heuristic's configuration
  bool approximate;     // ConvDesc::math() is ALLOW_APPROXIMATE: tactic 0 may take such tactics
};

ConvGeom make_conv_geom(const TensorDesc& x_desc, const FilterDesc& w_desc, const ConvDesc& conv,
                        const TensorDesc& y_desc);

// The epilogue as kernels see it.
//   unfused: y = alpha1 * acc + beta * y                      (y not read when beta == 0)
//   fused:   y = act(alpha1 * acc + alpha2 * z + bias[k])     (z, bias optional; y not read)
struct ConvOut {
  bool fused;
  float alpha1, beta, alpha2;
  const void* z;  // residual, same dtype as y, or null
  int64_t zs_n, zs_c, zs[3];
  const void* bias;  // K values in y's dtype, or null
  int64_t bias_stride;
  ActivationDesc act;
};

ConvOut make_conv_out(float alpha1, const ConvEpilogue& e, const ConvGeom& g);

// Writes one output element y[n, k, o0, o1, o2] from its accumulator. T is the storage type of
// y, z and bias (float or __half).
template <class T>
__device__ __forceinline__ void conv_store(const ConvGeom& g, const ConvOut& e, T* y, int64_t n,
                                           int64_t k, int64_t o0, int64_t o1, int64_t o2,
                                           float acc) {
  const int64_t yo = n * g.ys_n + k * g.ys_c + o0 * g.ys[0] + o1 * g.ys[1] + o2 * g.ys[2];
  float v = e.alpha1 * acc;
  if (e.fused) {
    if (e.z) {
      const T* z = static_cast<const T*>(e.z);
      v += e.alpha2 * to_f32(z[n * e.zs_n + k * e.zs_c + o0 * e.zs[0] + o1 * e.zs[1] +
                               o2 * e.zs[2]]);
    }
    if (e.bias) v += to_f32(static_cast<const T*>(e.bias)[k * e.bias_stride]);
    y[yo] = from_f32<T>(apply_activation(e.act, v));
  } else {
    if (e.beta != 0.f) v += e.beta * to_f32(y[yo]);
    y[yo] = from_f32<T>(v);
  }
}

// conv_store of 4 outputs y[n, k, o0, o1, o2 .. o2 + 3] of float storage, with one 16-byte access
// to y (and z) each, where conv_store4_applies: the same arithmetic as conv_store, element by
// element, so the same bits.
__device__ __forceinline__ void conv_store4(const ConvGeom& g, const ConvOut& e, float* y, int64_t n,
                                            int64_t k, int64_t o0, int64_t o1, int64_t o2,
                                            const float (&acc)[4]) {
  const int64_t yo = n * g.ys_n + k * g.ys_c + o0 * g.ys[0] + o1 * g.ys[1] + o2 * g.ys[2];
  float v[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) v[j] = e.alpha1 * acc[j];
  if (e.fused) {
    if (e.z) {
      const float4 z = *reinterpret_cast<const float4*>(
          static_cast<const float*>(e.z) + n * e.zs_n + k * e.zs_c + o0 * e.zs[0] + o1 * e.zs[1] + o2 * e.zs[2]);
      v[0] += e.alpha2 * z.x;
      v[1] += e.alpha2 * z.y;
      v[2] += e.alpha2 * z.z;
      v[3] += e.alpha2 * z.w;
    }
    if (e.bias) {
      const float b = static_cast<const float*>(e.bias)[k * e.bias_stride];
#pragma unroll
      for (int j = 0; j < 4; ++j) v[j] += b;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = apply_activation(e.act, v[j]);
  } else if (e.beta != 0.f) {
    const float4 old = *reinterpret_cast<const float4*>(y + yo);
    v[0] += e.beta * old.x;
    v[1] += e.beta * old.y;
    v[2] += e.beta * old.z;
    v[3] += e.beta * old.w;
  }
  *reinterpret_cast<float4*>(y + yo) = make_float4(v[0], v[1], v[2], v[3]);
}

// Whether conv_store4 may write runs of 4 outputs that start at an innermost index multiple of
// 4: y (and a fused residual z) contiguous along the innermost spatial dim, every other stride a
// multiple of 4 and the bases 16-byte aligned. Float storage only (the caller's T).
inline bool conv_store4_applies(const ConvGeom& g, const ConvOut& e, const void* y) {
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  bool ok = aligned(y) && g.ys[2] == 1 && g.ys[1] % 4 == 0 && g.ys[0] % 4 == 0 && g.ys_n % 4 == 0 &&
            g.ys_c % 4 == 0;
  if (ok && e.fused && e.z)
    ok = aligned(e.z) && e.zs[2] == 1 && e.zs[1] % 4 == 0 && e.zs[0] % 4 == 0 && e.zs_n % 4 == 0 &&
         e.zs_c % 4 == 0;
  return ok;
}

}  // namespace cuda
}  // namespace jet
