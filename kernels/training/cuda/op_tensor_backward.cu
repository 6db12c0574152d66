// CUDA op_tensor backward: one block per element of the operand's gradient; its threads stride
// over the dims where the operand broadcasts (kernels/training/broadcast_grad.h), summing dc
// times the op's partial derivative (train_math.h) in compensated f32, combined by a fixed tree.
// An operand that does not broadcast (nothing to sum) takes one thread per element instead.
#include "../broadcast_grad.h"
#include "train_common.cuh"

namespace jet {
namespace cuda {
namespace {

__global__ void op_tensor_grad_kernel(Walk3 kept, Walk3 kept_out, Walk3 reduced, OpTensorGrad g,
                                      const float* __restrict__ a, const float* __restrict__ b,
                                      const float* __restrict__ dc, float* dt) {
  __shared__ float smem[kTrainThreads];
  const float scale = g.which == 0 ? g.alpha1 : g.alpha2;
  for (int64_t e = blockIdx.x; e < kept.count; e += gridDim.x) {
    int64_t base[3], out[3];
    kept.offsets(e, base);
    kept_out.offsets(e, out);
    CompensatedSum acc;
    for (int64_t i = threadIdx.x; i < reduced.count; i += blockDim.x) {
      int64_t o[3];
      reduced.offsets(i, o);
      float du, dv;
      op_tensor_partials(g.op, g.alpha1 * a[base[1] + o[1]], g.alpha2 * b[base[2] + o[2]], &du,
                         &dv);
      acc.add(dc[base[0] + o[0]] * (g.which == 0 ? du : dv));
    }
    const float sum = block_sum(acc.value(), smem);
    if (threadIdx.x == 0) blend_store(dt + out[0], g.alpha * scale, sum, g.beta);
  }
}

__global__ void op_tensor_grad_elementwise(Walk3 kept, Walk3 kept_out, OpTensorGrad g,
                                           const float* __restrict__ a,
                                           const float* __restrict__ b,
                                           const float* __restrict__ dc, float* dt) {
  const float scale = g.which == 0 ? g.alpha1 : g.alpha2;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < kept.count;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t o[3], out[3];
    kept.offsets(e, o);
    kept_out.offsets(e, out);
    float du, dv;
    op_tensor_partials(g.op, g.alpha1 * a[o[1]], g.alpha2 * b[o[2]], &du, &dv);
    blend_store(dt + out[0], g.alpha * scale, dc[o[0]] * (g.which == 0 ? du : dv), g.beta);
  }
}

}  // namespace

Status op_tensor_backward(const Handle& h, const OpTensorGrad& g, const TensorDesc& a_desc,
                          const void* a, const TensorDesc& b_desc, const void* b,
                          const TensorDesc& dc_desc, const void* dc, const TensorDesc& dt_desc,
                          void* dt) {
  const BroadcastGradGeom geo = make_broadcast_grad_geom(a_desc, b_desc, dc_desc, dt_desc, g.which);
  Walk3 kept, kept_out, reduced;
  for (int i = 0; i < geo.kept_rank; ++i) {
    kept.add(geo.kept_dims[i], geo.kept_s[0][i], geo.kept_s[1][i], geo.kept_s[2][i]);
    kept_out.add(geo.kept_dims[i], geo.kept_s[3][i]);
  }
  for (int i = 0; i < geo.red_rank; ++i)
    reduced.add(geo.red_dims[i], geo.red_s[0][i], geo.red_s[1][i], geo.red_s[2][i]);
  const float* ap = static_cast<const float*>(a);
  const float* bp = static_cast<const float*>(b);
  const float* dcp = static_cast<const float*>(dc);
  if (reduced.count == 1) {
    op_tensor_grad_elementwise<<<grid_for(kept.count, kTrainThreads, h.sm_count()), kTrainThreads,
                                 0, h.stream()>>>(kept, kept_out, g, ap, bp, dcp,
                                                  static_cast<float*>(dt));
    return launch_status("op_tensor_backward");
  }
  const int blocks = static_cast<int>(kept.count < 65535 ? kept.count : 65535);
  op_tensor_grad_kernel<<<blocks, kTrainThreads, 0, h.stream()>>>(
      kept, kept_out, reduced, g, ap, bp, dcp, static_cast<float*>(dt));
  return launch_status("op_tensor_backward");
}

}  // namespace cuda
}  // namespace jet
