// CUDA layer normalization backward, deterministic (no atomics):
//  - one block per group: the statistics two-pass (compensated f32 per thread, block_sum's fixed
//    tree), saved to `stats` for the parameter gradients, then dx from the group's two sums;
//  - one thread per element of a group for dscale and dbias: a compensated sum over the groups
//    (neighbouring threads read neighbouring elements of one group).
#include "train_common.cuh"

namespace jet {
namespace cuda {
namespace {

// Walk3 tensors: 0 = x, 1 = dy, 2 = dx. `groups` walks the dims before the axis, `inner` those
// from it on.
__global__ void ln_group_kernel(Walk3 groups, Walk3 inner, float alpha, float beta,
                                const float* __restrict__ x, const float* __restrict__ dy,
                                float* dx, const float* __restrict__ scale, float epsilon,
                                float* stats) {
  __shared__ float smem[kTrainThreads];
  const float m = static_cast<float>(inner.count);
  for (int64_t r = blockIdx.x; r < groups.count; r += gridDim.x) {
    int64_t go[3];
    groups.offsets(r, go);
    CompensatedSum s;
    for (int64_t i = threadIdx.x; i < inner.count; i += blockDim.x) {
      int64_t o[3];
      inner.offsets(i, o);
      s.add(x[go[0] + o[0]]);
    }
    const float mean = block_sum(s.value(), smem) / m;
    CompensatedSum q;
    for (int64_t i = threadIdx.x; i < inner.count; i += blockDim.x) {
      int64_t o[3];
      inner.offsets(i, o);
      const float d = x[go[0] + o[0]] - mean;
      q.add(d * d);
    }
    const float inv_std = rsqrtf(block_sum(q.value(), smem) / m + epsilon);
    if (stats && threadIdx.x == 0) {
      stats[2 * r] = mean;
      stats[2 * r + 1] = inv_std;
    }
    if (!dx) continue;
    CompensatedSum gs, gxs;
    for (int64_t i = threadIdx.x; i < inner.count; i += blockDim.x) {
      int64_t o[3];
      inner.offsets(i, o);
      const float g = dy[go[1] + o[1]] * (scale ? scale[i] : 1.f);
      gs.add(g);
      gxs.add(g * (x[go[0] + o[0]] - mean) * inv_std);
    }
    const float sg = block_sum(gs.value(), smem) / m;
    const float sgx = block_sum(gxs.value(), smem) / m;
    for (int64_t i = threadIdx.x; i < inner.count; i += blockDim.x) {
      int64_t o[3];
      inner.offsets(i, o);
      const float g = dy[go[1] + o[1]] * (scale ? scale[i] : 1.f);
      const float xhat = (x[go[0] + o[0]] - mean) * inv_std;
      blend_store(dx + go[2] + o[2], alpha, inv_std * (g - sg - xhat * sgx), beta);
    }
  }
}

__global__ void ln_param_kernel(Walk3 groups, Walk3 inner, float alpha, float beta,
                                const float* __restrict__ x, const float* __restrict__ dy,
                                const float* __restrict__ stats, float* dscale, float* dbias) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < inner.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t o[3];
    inner.offsets(i, o);
    CompensatedSum ss, sb;
    for (int64_t r = 0; r < groups.count; ++r) {
      int64_t go[3];
      groups.offsets(r, go);
      const float d = dy[go[1] + o[1]];
      ss.add(d * (x[go[0] + o[0]] - stats[2 * r]) * stats[2 * r + 1]);
      sb.add(d);
    }
    if (dscale) blend_store(dscale + i, alpha, ss.value(), beta);
    if (dbias) blend_store(dbias + i, alpha, sb.value(), beta);
  }
}

}  // namespace

Status layernorm_backward(const Handle& h, int axis, float alpha_data, float beta_data,
                          float alpha_param, float beta_param, const TensorDesc& x_desc,
                          const void* x, const TensorDesc& dy_desc, const void* dy,
                          const TensorDesc& dx_desc, void* dx, const float* scale, float* dscale,
                          float* dbias, double epsilon, float* stats) {
  const TensorDesc& dxd = dx ? dx_desc : x_desc;
  Walk3 groups, inner;
  for (int i = 0; i < x_desc.rank(); ++i) {
    Walk3& w = i < axis ? groups : inner;
    w.add(x_desc.dim(i), x_desc.stride(i), dy_desc.stride(i), dxd.stride(i));
  }
  const int blocks = static_cast<int>(groups.count < 65535 ? groups.count : 65535);
  ln_group_kernel<<<blocks, kTrainThreads, 0, h.stream()>>>(
      groups, inner, alpha_data, beta_data, static_cast<const float*>(x),
      static_cast<const float*>(dy), static_cast<float*>(dx), scale, static_cast<float>(epsilon),
      stats);
  JET_TRY(launch_status("layernorm_backward"));
  if (!dscale && !dbias) return Status();
  ln_param_kernel<<<grid_for(inner.count, kTrainThreads, h.sm_count()), kTrainThreads, 0,
                    h.stream()>>>(groups, inner, alpha_param, beta_param,
                                  static_cast<const float*>(x), static_cast<const float*>(dy),
                                  stats, dscale, dbias);
  return launch_status("layernorm_backward (parameters)");
}

}  // namespace cuda
}  // namespace jet
