// CUDA pad backward: one thread per dx element gathers from the dy positions that read it
// (kernels/training/pad_grad.h, the CPU's code). No atomics: deterministic.
#include "train_common.cuh"

namespace jet {
namespace cuda {
namespace {

__global__ void pad_backward_kernel(PadGradGeom g, int64_t total, float alpha, float beta,
                                    const float* __restrict__ dy, float* dx) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t idx[kMaxRank], off = 0, r = e;
    for (int d = g.rank - 1; d >= 0; --d) {
      idx[d] = r % g.n[d];
      r /= g.n[d];
      off += idx[d] * g.dxs[d];
    }
    blend_store(dx + off, alpha, pad_grad_at(g, dy, idx), beta);
  }
}

}  // namespace

Status pad_backward(const Handle& h, const PadGradGeom& g, float alpha, const void* dy,
                    float beta, const TensorDesc& dx_desc, void* dx) {
  const int64_t total = dx_desc.elements();
  pad_backward_kernel<<<grid_for(total, kTrainThreads, h.sm_count()), kTrainThreads, 0,
                        h.stream()>>>(g, total, alpha, beta, static_cast<const float*>(dy),
                                      static_cast<float*>(dx));
  return launch_status("pad_backward");
}

}  // namespace cuda
}  // namespace jet
