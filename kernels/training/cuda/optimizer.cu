// CUDA optimizer steps: one grid-stride kernel each over train_math.h's per-element updates.
// Global-norm clip without a host synchronization: per-chunk sums of squares into the workspace
// (one launch per gradient tensor), one block adds them in a fixed tree and stores the norm and
// the coefficient in the workspace, then one scaling launch per tensor reads the coefficient.
#include "train_common.cuh"

namespace jet {
namespace cuda {
namespace {

__global__ void sgd_kernel(SgdDesc s, int64_t count, float* p, const float* g, float* buf) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    sgd_update(s, p + i, g[i], buf ? buf + i : nullptr);
}

__global__ void adam_kernel(AdamScalars a, int64_t count, float* p, const float* g, float* m,
                            float* v) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    adam_update(a, p + i, g[i], m + i, v + i);
}

__global__ void sum_squares_kernel(const float* g, int64_t count, float* partials) {
  __shared__ float smem[kTrainThreads];
  const int64_t first = blockIdx.x * kLossChunk;
  const int64_t last = first + kLossChunk < count ? first + kLossChunk : count;
  CompensatedSum s;
  for (int64_t i = first + threadIdx.x; i < last; i += blockDim.x) s.add(g[i] * g[i]);
  const float sum = block_sum(s.value(), smem);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// norm_coef[0] = the total norm, norm_coef[1] = the clip coefficient.
__global__ void clip_finish_kernel(const float* partials, int64_t parts, float max_norm,
                                   float* norm_coef, float* total_norm) {
  __shared__ float smem[kTrainThreads];
  CompensatedSum s;
  for (int64_t i = threadIdx.x; i < parts; i += blockDim.x) s.add(partials[i]);
  const float total = sqrtf(block_sum(s.value(), smem));
  if (threadIdx.x == 0) {
    norm_coef[0] = total;
    norm_coef[1] = clip_coefficient(max_norm, total);
    if (total_norm) *total_norm = total;
  }
}

__global__ void scale_kernel(float* g, int64_t count, const float* norm_coef) {
  const float coef = norm_coef[1];
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    g[i] *= coef;
}

}  // namespace

Status sgd_step(const Handle& h, const SgdDesc& sgd, int64_t count, float* param,
                const float* grad, float* momentum_buf) {
  sgd_kernel<<<grid_for(count, kTrainThreads, h.sm_count()), kTrainThreads, 0, h.stream()>>>(
      sgd, count, param, grad, momentum_buf);
  return launch_status("sgd_step");
}

Status adam_step(const Handle& h, const AdamDesc& adam, int64_t step, int64_t count,
                 float* param, const float* grad, float* m, float* v) {
  adam_kernel<<<grid_for(count, kTrainThreads, h.sm_count()), kTrainThreads, 0, h.stream()>>>(
      adam_scalars(adam, step), count, param, grad, m, v);
  return launch_status("adam_step");
}

Status clip_grad_norm(const Handle& h, int tensors, float* const* grads, const int64_t* counts,
                      float max_norm, float* workspace, float* total_norm) {
  float* norm_coef = workspace;
  float* partials = workspace + 2;
  int64_t parts = 0;
  for (int t = 0; t < tensors; ++t) {
    const int64_t n = chunks(counts[t], kLossChunk);
    sum_squares_kernel<<<static_cast<int>(n), kTrainThreads, 0, h.stream()>>>(grads[t], counts[t],
                                                                               partials + parts);
    JET_TRY(launch_status("clip_grad_norm (sum of squares)"));
    parts += n;
  }
  clip_finish_kernel<<<1, kTrainThreads, 0, h.stream()>>>(partials, parts, max_norm, norm_coef,
                                                          total_norm);
  JET_TRY(launch_status("clip_grad_norm (norm)"));
  for (int t = 0; t < tensors; ++t) {
    scale_kernel<<<grid_for(counts[t], kTrainThreads, h.sm_count()), kTrainThreads, 0,
                   h.stream()>>>(grads[t], counts[t], norm_coef);
    JET_TRY(launch_status("clip_grad_norm (scaling)"));
  }
  return Status();
}

}  // namespace cuda
}  // namespace jet
