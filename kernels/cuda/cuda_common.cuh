// Helpers for the CUDA backend: element access for f32/f16 storage, launch configuration and
// error reporting. Strided element-wise loops live in elementwise.cuh. Device code only uses CUDA 11.4-era features.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "../api/check.h"

namespace jet {
namespace cuda {

// Storage <-> f32 math.
__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }
template <class T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_f32<__half>(float v) { return __float2half_rn(v); }

// y = alpha * v + beta * y, not reading y when beta == 0 (NaNs in y must not leak).
template <class T>
__device__ __forceinline__ void blend_store(T* y, float alpha, float v, float beta) {
  float r = alpha * v;
  if (beta != 0.f) r += beta * to_f32(*y);
  *y = from_f32<T>(r);
}

// Grid size for a grid-stride loop over n items with `threads` per block.
int grid_for(int64_t n, int threads, int sm_count);

// EXECUTION_FAILED naming the routine if the last launch failed, else success.
Status launch_status(const char* routine);

}  // namespace cuda
}  // namespace jet
