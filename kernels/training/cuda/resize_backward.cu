// CUDA resize backward: one thread per dx element (kernels/training/resize_grad.h, the CPU's
// code; coordinates in double as the forward). No atomics: deterministic.
#include "train_common.cuh"

namespace jet {
namespace cuda {
namespace {

__global__ void resize_backward_kernel(ResizeGradGeom g, int64_t total, float alpha, float beta,
                                       const float* __restrict__ dy, float* dx) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t r = e, p[3];
    p[2] = r % g.ax[2].in;
    r /= g.ax[2].in;
    p[1] = r % g.ax[1].in;
    r /= g.ax[1].in;
    p[0] = r % g.ax[0].in;
    r /= g.ax[0].in;
    const int64_t c = r % g.c, n = r / g.c;
    blend_store(dx + n * g.dxs_n + c * g.dxs_c + p[0] * g.dxs[0] + p[1] * g.dxs[1] +
                    p[2] * g.dxs[2],
                alpha, resize_grad_at(g, dy, n, c, p), beta);
  }
}

}  // namespace

Status resize_backward(const Handle& h, const ResizeGradGeom& g, float alpha, const void* dy,
                       float beta, void* dx) {
  const int64_t total = g.n * g.c * g.ax[0].in * g.ax[1].in * g.ax[2].in;
  resize_backward_kernel<<<grid_for(total, kTrainThreads, h.sm_count()), kTrainThreads, 0,
                           h.stream()>>>(g, total, alpha, beta, static_cast<const float*>(dy),
                                         static_cast<float*>(dx));
  return launch_status("resize_backward");
}

}  // namespace cuda
}  // namespace jet
