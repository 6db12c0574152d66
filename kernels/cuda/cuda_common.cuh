// Helpers for the CUDA backend: element access for f32/f16 storage, strided index math, launch
// configuration and error reporting. Device code only uses CUDA 11.4-era features.
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

// Maps a row-major linear index over dims to element offsets of up to two tensors. Passed to
// kernels by value. 32-bit math when every index fits, which is the common case.
struct StridedIndex {
  int rank;
  int64_t dims[kMaxRank];
  int64_t strides[2][kMaxRank];

  __device__ __forceinline__ void offsets(int64_t linear, int64_t* off0, int64_t* off1) const {
    int64_t o0 = 0, o1 = 0;
    for (int i = rank - 1; i >= 0; --i) {
      const int64_t d = dims[i];
      const int64_t q = linear / d;
      const int64_t r = linear - q * d;
      o0 += r * strides[0][i];
      o1 += r * strides[1][i];
      linear = q;
    }
    *off0 = o0;
    *off1 = o1;
  }
};

// Merges adjacent dims that are contiguous in both tensors, drops size-1 dims: fewer divisions in
// the kernels. Both descs must have the same dims.
StridedIndex make_strided_index(const TensorDesc& a, const TensorDesc& b);

// True when a and b have the same dims and strides and cover their span densely, so the
// elementwise map can run over a flat array.
bool same_dense_layout(const TensorDesc& a, const TensorDesc& b);

// Grid size for a grid-stride loop over n items with `threads` per block.
int grid_for(int64_t n, int threads, int sm_count);

// EXECUTION_FAILED naming the routine if the last launch failed, else success.
Status launch_status(const char* routine);

}  // namespace cuda
}  // namespace jet
