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

// Each .cu file is one CUDA module. JET_CUDA_MODULE(name), written once in a file at namespace
// jet::cuda scope, gives its module an empty kernel and `cudaError_t load_module_<name>()`, which
// loads the module's image now (cudaFuncGetAttributes on that kernel) instead of at the first
// launch of one of its kernels. load_cuda_modules (handle.cu) lists the modules it loads.
#define JET_CUDA_MODULE(name)                                  \
  __global__ void module_anchor_##name() {}                    \
  cudaError_t load_module_##name() {                           \
    cudaFuncAttributes attr;                                   \
    return cudaFuncGetAttributes(&attr, module_anchor_##name); \
  }

}  // namespace cuda
}  // namespace jet
