// CUDA pooling backward: one thread per dx element gathers from the windows that contain it
// (kernels/training/pool_grad.h, the CPU's code); MAX recomputes each window's argmax from x.
// No atomics, no zero-fill: deterministic, and beta == 0 does not read dx.
#include "../pool_grad.h"
#include "train_common.cuh"

namespace jet {
namespace cuda {
namespace {

__global__ void pool_backward_kernel(PoolGradGeom g, float alpha, float beta,
                                     const float* __restrict__ x, const float* __restrict__ dy,
                                     float* dx, int64_t total) {
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t r = idx, p[3];
    p[2] = r % g.ax[2].in;
    r /= g.ax[2].in;
    p[1] = r % g.ax[1].in;
    r /= g.ax[1].in;
    p[0] = r % g.ax[0].in;
    r /= g.ax[0].in;
    const int64_t c = r % g.c, n = r / g.c;
    const float v = pool_grad_at(g, x, dy, n, c, p);
    blend_store(dx + n * g.dxs_n + c * g.dxs_c + p[0] * g.dxs[0] + p[1] * g.dxs[1] +
                    p[2] * g.dxs[2],
                alpha, v, beta);
  }
}

}  // namespace

Status pool_backward(const Handle& h, const PoolDesc& pool, float alpha, const TensorDesc& x_desc,
                     const void* x, const TensorDesc& dy_desc, const void* dy, float beta,
                     const TensorDesc& dx_desc, void* dx) {
  const PoolGradGeom g = make_pool_grad_geom(pool, x_desc, dy_desc, dx_desc);
  const int64_t total = g.n * g.c * g.ax[0].in * g.ax[1].in * g.ax[2].in;
  pool_backward_kernel<<<grid_for(total, kTrainThreads, h.sm_count()), kTrainThreads, 0,
                         h.stream()>>>(g, alpha, beta, static_cast<const float*>(x),
                                       static_cast<const float*>(dy), static_cast<float*>(dx),
                                       total);
  return launch_status("pool_backward");
}

}  // namespace cuda
}  // namespace jet
