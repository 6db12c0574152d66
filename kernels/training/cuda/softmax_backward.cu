// CUDA softmax backward: one block per softmax group (INSTANCE: C and the spatial dims of one N;
// CHANNEL: the C values at one (N, spatial) position). The block's threads stride over the group
// for the sum (sum(dy * y), or sum(dy) for LOG; compensated f32 per thread, then a fixed tree),
// then write dx. Every element is read and written by one thread after the sum is known, so dx
// may overwrite dy or y (same layout).
#include "train_common.cuh"

namespace jet {
namespace cuda {
namespace {

__global__ void softmax_backward_kernel(Walk3 outer, Walk3 group, bool log, float alpha,
                                        float beta, const float* y, const float* dy, float* dx) {
  __shared__ float smem[kTrainThreads];
  for (int64_t gi = blockIdx.x; gi < outer.count; gi += gridDim.x) {
    int64_t base[3];
    outer.offsets(gi, base);
    CompensatedSum acc;
    for (int64_t i = threadIdx.x; i < group.count; i += blockDim.x) {
      int64_t o[3];
      group.offsets(i, o);
      const float d = dy[base[1] + o[1]];
      acc.add(log ? d : d * y[base[0] + o[0]]);
    }
    const float sum = block_sum(acc.value(), smem);
    for (int64_t i = threadIdx.x; i < group.count; i += blockDim.x) {
      int64_t o[3];
      group.offsets(i, o);
      const float yv = y[base[0] + o[0]], d = dy[base[1] + o[1]];
      const float v = log ? d - expf(yv) * sum : yv * (d - sum);
      blend_store(dx + base[2] + o[2], alpha, v, beta);
    }
  }
}

}  // namespace

Status softmax_backward(const Handle& h, SoftmaxAlgo algo, SoftmaxMode mode, float alpha,
                        const TensorDesc& y_desc, const void* y, const TensorDesc& dy_desc,
                        const void* dy, float beta, const TensorDesc& dx_desc, void* dx) {
  Walk3 outer, group;
  outer.add(y_desc.dim(0), y_desc.stride(0), dy_desc.stride(0), dx_desc.stride(0));
  for (int i = 1; i < y_desc.rank(); ++i) {
    Walk3& w = (mode == SoftmaxMode::CHANNEL && i >= 2) ? outer : group;
    w.add(y_desc.dim(i), y_desc.stride(i), dy_desc.stride(i), dx_desc.stride(i));
  }
  const int64_t blocks = outer.count < 65535 ? outer.count : 65535;
  softmax_backward_kernel<<<static_cast<int>(blocks), kTrainThreads, 0, h.stream()>>>(
      outer, group, algo == SoftmaxAlgo::LOG, alpha, beta, static_cast<const float*>(y),
      static_cast<const float*>(dy), static_cast<float*>(dx));
  return launch_status("softmax_backward");
}

}  // namespace cuda
}  // namespace jet
