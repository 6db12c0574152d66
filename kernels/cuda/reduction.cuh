// Reduction building blocks shared by reduce.cu, pool.cu and softmax.cu: a compensated f32 sum,
// NaN-propagating max/min, and the generic strided reduction engine (reduce_strided) that
// reduce_forward and global pooling both run on.
#pragma once

#include <type_traits>

#include "../api/backend.h"
#include "cuda_common.cuh"

namespace jet {
namespace cuda {

// Kahan-Babuska (Neumaier) summation in f32. A thread's running sum over thousands of terms
// would otherwise drift by ~n * 2^-24 relative; the compensation keeps it at ~2^-24, and the
// cross-thread combination is a pairwise tree, so long reductions stay well within 1e-5.
// nvcc does not reassociate floating point without --use_fast_math, so the compensation survives.
struct CompensatedSum {
  float sum = 0.f;
  float comp = 0.f;

  __device__ __forceinline__ void add(float v) {
    const float t = sum + v;
    // The low-order bits lost in t, taken from whichever operand is smaller in magnitude.
    if (fabsf(sum) >= fabsf(v))
      comp += (sum - t) + v;
    else
      comp += (v - t) + sum;
    sum = t;
  }
  // inf/NaN terms: sum is then inf or NaN and comp may be NaN (inf - inf); the plain sum is the
  // right answer (as a plain f32 or f64 sum would give).
  __device__ __forceinline__ float value() const { return isfinite(sum) ? sum + comp : sum; }
};

// max/min that propagate NaN from either operand (as PyTorch and the CPU backend do).
__device__ __forceinline__ float nan_max(float a, float b) { return (a > b || a != a) ? a : b; }
__device__ __forceinline__ float nan_min(float a, float b) { return (a < b || a != a) ? a : b; }

// V consecutive elements of x as floats (V > 1: one 16-byte load, p 16-byte aligned).
template <class T, int V>
__device__ __forceinline__ void load_channels(const T* p, float* out) {
  if constexpr (V == 1) {
    out[0] = to_f32(*p);
  } else if constexpr (std::is_same<T, float>::value) {
    static_assert(V == 4, "f32: 4 channels a load");
    const float4 q = *reinterpret_cast<const float4*>(p);
    out[0] = q.x;
    out[1] = q.y;
    out[2] = q.z;
    out[3] = q.w;
  } else {
    static_assert(V == 8, "f16: 8 channels a load");
    const uint4 q = *reinterpret_cast<const uint4*>(p);
    const uint32_t words[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&words[j]));
      out[2 * j] = f.x;
      out[2 * j + 1] = f.y;
    }
  }
}

// y = alpha * reduce_op(x) + beta * y with cudnnReduceTensor's shape rule (every dim where y is 1
// and x is not is reduced; the others match). Any strides. Launches on h's stream; errors name
// `routine`. Used by reduce_forward and by global pooling (a reduction over the spatial dims).
Status reduce_strided(const Handle& h, ReduceOp op, float alpha, const TensorDesc& x_desc,
                      const void* x, float beta, const TensorDesc& y_desc, void* y,
                      const char* routine);

}  // namespace cuda
}  // namespace jet
