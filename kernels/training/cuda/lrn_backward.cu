// CUDA LRN backward: one thread per dx element (kernels/training/lrn_grad.h, the CPU's code);
// consecutive threads take consecutive positions of one channel.
#include "train_common.cuh"

namespace jet {
namespace cuda {
namespace {

__global__ void lrn_backward_kernel(Walk3 pos, LrnGradParams p, int64_t xs_c, int64_t dys_c,
                                    int64_t dxs_c, float alpha, float beta,
                                    const float* __restrict__ x, const float* __restrict__ dy,
                                    float* dx) {
  const int64_t total = pos.count * p.channels;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = e / pos.count;
    int64_t o[3];
    pos.offsets(e - c * pos.count, o);
    const float* xb = x + o[0];
    const float* dyb = dy + o[1];
    const auto x_at = [&](int64_t ch) { return xb[ch * xs_c]; };
    const auto dy_at = [&](int64_t ch) { return dyb[ch * dys_c]; };
    blend_store(dx + o[2] + c * dxs_c, alpha, lrn_grad_at(p, x_at, dy_at, c), beta);
  }
}

}  // namespace

Status lrn_cross_channel_backward(const Handle& h, const LrnDesc& lrn, float alpha,
                                  const TensorDesc& x_desc, const void* x,
                                  const TensorDesc& dy_desc, const void* dy, float beta,
                                  const TensorDesc& dx_desc, void* dx) {
  Walk3 pos;
  for (int i = 0; i < x_desc.rank(); ++i)
    if (i != 1) pos.add(x_desc.dim(i), x_desc.stride(i), dy_desc.stride(i), dx_desc.stride(i));
  const int64_t total = pos.count * x_desc.dim(1);
  lrn_backward_kernel<<<grid_for(total, kTrainThreads, h.sm_count()), kTrainThreads, 0,
                        h.stream()>>>(pos, lrn_grad_params(lrn, x_desc.dim(1)), x_desc.stride(1),
                                      dy_desc.stride(1), dx_desc.stride(1), alpha, beta,
                                      static_cast<const float*>(x), static_cast<const float*>(dy),
                                      static_cast<float*>(dx));
  return launch_status("lrn_cross_channel_backward");
}

}  // namespace cuda
}  // namespace jet
