// CUDA losses, deterministic:
//  - cross-entropy: one block per kLossRowChunk rows (one), taking them one after another
//    (block-wide max, then a compensated sum of exponentials per row); thread 0 adds the rows'
//    losses in order into the block's partial;
//  - MSE, BCE: one block per kLossChunk elements, a compensated sum per thread and a fixed tree;
// then one block adds the partials in a fixed tree and writes the mean.
#include "../train_math.h"
#include "train_common.cuh"

namespace jet {
namespace cuda {
namespace {

// The max of every thread's v over the block (NaN-propagating), returned to all threads.
__device__ float block_max(float v, float* smem) {
  smem[threadIdx.x] = v;
  __syncthreads();
  for (int width = kTrainThreads / 2; width > 0; width /= 2) {
    if (static_cast<int>(threadIdx.x) < width)
      smem[threadIdx.x] = nan_max(smem[threadIdx.x], smem[threadIdx.x + width]);
    __syncthreads();
  }
  const float r = smem[0];
  __syncthreads();
  return r;
}

__global__ void cross_entropy_kernel(int64_t n, int64_t c, int64_t xs_n, int64_t xs_c,
                                     int64_t ds_n, int64_t ds_c, const float* x,
                                     const int32_t* labels, float* partials, float alpha,
                                     float beta, float* dx) {
  __shared__ float smem[kTrainThreads];
  const int64_t first = blockIdx.x * kLossRowChunk;
  const int64_t last = first + kLossRowChunk < n ? first + kLossRowChunk : n;
  const float nan = __int_as_float(0x7fc00000);
  float block_loss = 0.f;
  for (int64_t i = first; i < last; ++i) {
    const float* row = x + i * xs_n;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < c; j += blockDim.x) m = nan_max(m, row[j * xs_c]);
    m = block_max(m, smem);
    CompensatedSum s;
    for (int64_t j = threadIdx.x; j < c; j += blockDim.x) s.add(expf(row[j * xs_c] - m));
    const float lse = m + logf(block_sum(s.value(), smem));
    const int32_t label = labels[i];
    const bool valid = label >= 0 && label < c;
    if (threadIdx.x == 0) block_loss += valid ? lse - row[label * xs_c] : nan;
    if (dx) {
      const float inv_n = 1.f / static_cast<float>(n);
      for (int64_t j = threadIdx.x; j < c; j += blockDim.x) {
        const float p = expf(row[j * xs_c] - lse);
        const float g = valid ? (p - (j == label ? 1.f : 0.f)) * inv_n : nan;
        blend_store(dx + i * ds_n + j * ds_c, alpha, g, beta);
      }
    }
  }
  if (partials && threadIdx.x == 0) partials[blockIdx.x] = block_loss;
}

__global__ void elementwise_loss_kernel(Walk3 w, bool mse, const float* x, const float* t,
                                        float* partials, float alpha, float beta, float* dx) {
  __shared__ float smem[kTrainThreads];
  const int64_t first = blockIdx.x * kLossChunk;
  const int64_t last = first + kLossChunk < w.count ? first + kLossChunk : w.count;
  const float inv = 1.f / static_cast<float>(w.count);
  CompensatedSum s;
  for (int64_t i = first + threadIdx.x; i < last; i += blockDim.x) {
    int64_t o[3];
    w.offsets(i, o);
    const float xv = x[o[0]], tv = t[o[1]];
    s.add(mse ? mse_term(xv, tv) : bce_term(xv, tv));
    if (dx) blend_store(dx + o[2], alpha, (mse ? mse_grad(xv, tv) : bce_grad(xv, tv)) * inv, beta);
  }
  if (partials) {
    const float sum = block_sum(s.value(), smem);
    if (threadIdx.x == 0) partials[blockIdx.x] = sum;
  }
}

// *out = (sum of the partials) / count, by one block.
__global__ void mean_kernel(const float* partials, int64_t parts, int64_t count, float* out) {
  __shared__ float smem[kTrainThreads];
  CompensatedSum s;
  for (int64_t i = threadIdx.x; i < parts; i += blockDim.x) s.add(partials[i]);
  const float sum = block_sum(s.value(), smem);
  if (threadIdx.x == 0) *out = sum / static_cast<float>(count);
}

}  // namespace

Status softmax_cross_entropy_loss(const Handle& h, const TensorDesc& logits_desc,
                                  const void* logits, const int32_t* labels, float* partials,
                                  float* loss, float alpha, float beta,
                                  const TensorDesc& dlogits_desc, void* dlogits) {
  const int64_t n = logits_desc.dim(0), parts = chunks(n, kLossRowChunk);
  const bool grad = dlogits != nullptr;
  cross_entropy_kernel<<<static_cast<int>(parts), kTrainThreads, 0, h.stream()>>>(
      n, logits_desc.dim(1), logits_desc.stride(0), logits_desc.stride(1),
      grad ? dlogits_desc.stride(0) : 0, grad ? dlogits_desc.stride(1) : 0,
      static_cast<const float*>(logits), labels, loss ? partials : nullptr, alpha, beta,
      static_cast<float*>(dlogits));
  JET_TRY(launch_status("softmax_cross_entropy_loss"));
  if (!loss) return Status();
  mean_kernel<<<1, kTrainThreads, 0, h.stream()>>>(partials, parts, n, loss);
  return launch_status("softmax_cross_entropy_loss (mean)");
}

Status elementwise_loss(const Handle& h, cpu::LossKind kind, const TensorDesc& x_desc,
                        const void* x, const TensorDesc& target_desc, const void* target,
                        float* partials, float* loss, float alpha, float beta,
                        const TensorDesc& dx_desc, void* dx) {
  Walk3 w;
  for (int i = 0; i < x_desc.rank(); ++i)
    w.add(x_desc.dim(i), x_desc.stride(i), target_desc.stride(i), dx ? dx_desc.stride(i) : 0);
  const int64_t parts = chunks(w.count, kLossChunk);
  const char* fn = kind == cpu::LossKind::MSE ? "mse_loss" : "bce_with_logits_loss";
  elementwise_loss_kernel<<<static_cast<int>(parts), kTrainThreads, 0, h.stream()>>>(
      w, kind == cpu::LossKind::MSE, static_cast<const float*>(x),
      static_cast<const float*>(target), loss ? partials : nullptr, alpha, beta,
      static_cast<float*>(dx));
  JET_TRY(launch_status(fn));
  if (!loss) return Status();
  mean_kernel<<<1, kTrainThreads, 0, h.stream()>>>(partials, parts, w.count, loss);
  return launch_status(fn);
}

}  // namespace cuda
}  // namespace jet
