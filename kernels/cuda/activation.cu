// CUDA activation: a flat, vector-friendly loop when x and y share a dense layout, otherwise a
// strided loop over the logical index.
#include "../api/backend.h"
#include "../common/activation_math.h"
#include "cuda_common.cuh"

namespace jet {
namespace cuda {
namespace {

template <class T>
__global__ void activation_dense(ActivationDesc act, float alpha, const T* x, float beta, T* y,
                                 int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    blend_store(y + i, alpha, apply_activation(act, to_f32(x[i])), beta);
}

template <class T>
__global__ void activation_strided(ActivationDesc act, float alpha, const T* x, float beta, T* y,
                                   StridedIndex idx, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t xo, yo;
    idx.offsets(i, &xo, &yo);
    blend_store(y + yo, alpha, apply_activation(act, to_f32(x[xo])), beta);
  }
}

template <class T>
Status run(const Handle& h, const ActivationDesc& act, float alpha, const TensorDesc& xd,
           const void* x, float beta, const TensorDesc& yd, void* y) {
  const int64_t n = xd.elements();
  const int threads = 256;
  const int grid = grid_for(n, threads, h.sm_count());
  if (same_dense_layout(xd, yd))
    activation_dense<T><<<grid, threads, 0, h.stream()>>>(act, alpha, static_cast<const T*>(x),
                                                          beta, static_cast<T*>(y), n);
  else
    activation_strided<T><<<grid, threads, 0, h.stream()>>>(
        act, alpha, static_cast<const T*>(x), beta, static_cast<T*>(y),
        make_strided_index(xd, yd), n);
  return launch_status("activation_forward");
}

}  // namespace

Status activation_forward(const Handle& h, const ActivationDesc& act, float alpha,
                          const TensorDesc& x_desc, const void* x, float beta,
                          const TensorDesc& y_desc, void* y) {
  if (x_desc.dtype() == DType::F32) return run<float>(h, act, alpha, x_desc, x, beta, y_desc, y);
  return run<__half>(h, act, alpha, x_desc, x, beta, y_desc, y);
}

}  // namespace cuda
}  // namespace jet
