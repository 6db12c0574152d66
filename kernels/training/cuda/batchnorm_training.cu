// CUDA batch normalization training forward and backward. The statistics are two-pass (the mean,
// then the squared deviations from it), each a compensated f32 sum per thread combined by a fixed
// tree (block_sum): deterministic, no atomics. Two paths:
//  - one block per channel (bn_forward_kernel, bn_backward_kernel; no workspace): its threads
//    stride over N and the spatial dims, thread 0 writes the per-channel outputs. Enough blocks
//    when there are many channels, or when the caller passes no workspace;
//  - P blocks per channel (bn_chunks > 1, with the workspace): each block sums a fixed chunk of
//    the channel into its slot of the workspace, and the next kernel's blocks each add the P
//    partial sums in slot order (every block of a channel gets the same bits) before their own
//    pass over the chunk. Forward: sums of x, sums of squared deviations, normalize (3
//    kernels); backward: the same two for the statistics when none are saved, sums of dy and
//    dy * xhat, dx (2 kernels more). Chunk 0's thread 0 writes the per-channel outputs.
#include "train_common.cuh"

namespace jet {
namespace cuda {
namespace {

// Walk3 tensors: 0 = x, 1 = y (forward) or dy (backward), 2 = dx (backward).
__device__ void channel_stats(const Walk3& r, const float* x, float* smem, float* mean,
                              float* var) {
  CompensatedSum s;
  for (int64_t i = threadIdx.x; i < r.count; i += blockDim.x) {
    int64_t o[3];
    r.offsets(i, o);
    s.add(x[o[0]]);
  }
  const float m = block_sum(s.value(), smem) / static_cast<float>(r.count);
  CompensatedSum q;
  for (int64_t i = threadIdx.x; i < r.count; i += blockDim.x) {
    int64_t o[3];
    r.offsets(i, o);
    const float d = x[o[0]] - m;
    q.add(d * d);
  }
  *mean = m;
  *var = block_sum(q.value(), smem) / static_cast<float>(r.count);
}

__global__ void bn_forward_kernel(Walk3 r, int64_t channels, int64_t xs_c, int64_t ys_c,
                                  float alpha, float beta, const float* x, float* y,
                                  const float* scale, const float* bias, float momentum,
                                  float* running_mean, float* running_var, float epsilon,
                                  float* save_mean, float* save_inv_std) {
  __shared__ float smem[kTrainThreads];
  for (int64_t c = blockIdx.x; c < channels; c += gridDim.x) {
    const float* xc = x + c * xs_c;
    float* yc = y + c * ys_c;
    float mean, var;
    channel_stats(r, xc, smem, &mean, &var);
    const float inv_std = rsqrtf(var + epsilon);
    const float a = scale[c] * inv_std, b = bias[c] - mean * a;
    for (int64_t i = threadIdx.x; i < r.count; i += blockDim.x) {
      int64_t o[3];
      r.offsets(i, o);
      blend_store(yc + o[1], alpha, a * xc[o[0]] + b, beta);
    }
    if (threadIdx.x == 0) {
      if (running_mean) {
        const float unbiased =
            var * static_cast<float>(r.count) / static_cast<float>(r.count - 1);
        running_mean[c] = (1.f - momentum) * running_mean[c] + momentum * mean;
        running_var[c] = (1.f - momentum) * running_var[c] + momentum * unbiased;
      }
      if (save_mean) {
        save_mean[c] = mean;
        save_inv_std[c] = inv_std;
      }
    }
  }
}

__global__ void bn_backward_kernel(Walk3 r, int64_t channels, int64_t xs_c, int64_t dys_c,
                                   int64_t dxs_c, float alpha_data, float beta_data,
                                   float alpha_param, float beta_param, const float* x,
                                   const float* dy, float* dx, const float* scale, float* dscale,
                                   float* dbias, float epsilon, const float* saved_mean,
                                   const float* saved_inv_std) {
  __shared__ float smem[kTrainThreads];
  const float m = static_cast<float>(r.count);
  for (int64_t c = blockIdx.x; c < channels; c += gridDim.x) {
    const float* xc = x + c * xs_c;
    const float* dyc = dy + c * dys_c;
    float* dxc = dx + c * dxs_c;
    float mean, inv_std;
    if (saved_mean) {
      mean = saved_mean[c];
      inv_std = saved_inv_std[c];
    } else {
      float var;
      channel_stats(r, xc, smem, &mean, &var);
      inv_std = rsqrtf(var + epsilon);
    }
    CompensatedSum gs, gxs;
    for (int64_t i = threadIdx.x; i < r.count; i += blockDim.x) {
      int64_t o[3];
      r.offsets(i, o);
      const float d = dyc[o[1]];
      gs.add(d);
      gxs.add(d * (xc[o[0]] - mean) * inv_std);
    }
    const float g = block_sum(gs.value(), smem);
    const float gx = block_sum(gxs.value(), smem);
    const float k = scale[c] * inv_std;
    for (int64_t i = threadIdx.x; i < r.count; i += blockDim.x) {
      int64_t o[3];
      r.offsets(i, o);
      const float xhat = (xc[o[0]] - mean) * inv_std;
      blend_store(dxc + o[2], alpha_data, k * (dyc[o[1]] - g / m - xhat * gx / m), beta_data);
    }
    if (threadIdx.x == 0 && dscale) {
      blend_store(dscale + c, alpha_param, gx, beta_param);
      blend_store(dbias + c, alpha_param, g, beta_param);
    }
  }
}

// ---- P blocks per channel ------------------------------------------------------------------
// Grid: x = the P chunks of a channel, y = channels (strided past 65535). The workspace holds
// four arrays of channels x P floats: 0 and 1 the partial sums of x and of (x - mean)^2, 2 and 3
// those of dy and dy * xhat.
struct Chunks {
  int64_t channels = 0, parts = 1, len = 0;  // len: elements per chunk (the last may be short)
};

__device__ __forceinline__ void chunk_range(const Chunks& k, const Walk3& r, int64_t* begin,
                                            int64_t* end) {
  *begin = blockIdx.x * k.len;
  *end = min(r.count, *begin + k.len);
}

// The channel's total of its P partial sums, added in slot order (the same bits in every block).
__device__ __forceinline__ float total_of(const float* partial, int64_t c, int64_t parts) {
  CompensatedSum s;
  for (int64_t b = 0; b < parts; ++b) s.add(partial[c * parts + b]);
  return s.value();
}

// Slot (c, chunk) of `out` gets the chunk's sum of f(x) (or of f(x, dy)).
template <class F>
__device__ void chunk_sum(const Walk3& r, const Chunks& k, int64_t c, float* smem, float* out,
                          F f) {
  int64_t begin, end;
  chunk_range(k, r, &begin, &end);
  CompensatedSum s;
#pragma unroll 4
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    int64_t o[3];
    r.offsets(i, o);
    s.add(f(o));
  }
  const float t = block_sum(s.value(), smem);
  if (threadIdx.x == 0) out[c * k.parts + blockIdx.x] = t;
}

// Pass 1 of the statistics: partial sums of x.
__global__ void bn_sum_kernel(Walk3 r, Chunks k, int64_t xs_c, const float* x, float* ws) {
  __shared__ float smem[kTrainThreads];
  for (int64_t c = blockIdx.y; c < k.channels; c += gridDim.y) {
    const float* xc = x + c * xs_c;
    chunk_sum(r, k, c, smem, ws, [&](const int64_t* o) { return xc[o[0]]; });
  }
}

__device__ __forceinline__ float mean_of(const Walk3& r, const Chunks& k, const float* ws,
                                         int64_t c) {
  return total_of(ws, c, k.parts) / static_cast<float>(r.count);
}

// Pass 2: partial sums of the squared deviations from the mean.
__global__ void bn_sqdev_kernel(Walk3 r, Chunks k, int64_t xs_c, const float* x, float* ws) {
  __shared__ float smem[kTrainThreads];
  for (int64_t c = blockIdx.y; c < k.channels; c += gridDim.y) {
    const float* xc = x + c * xs_c;
    const float m = mean_of(r, k, ws, c);
    chunk_sum(r, k, c, smem, ws + k.channels * k.parts, [&](const int64_t* o) {
      const float d = xc[o[0]] - m;
      return d * d;
    });
  }
}

__device__ __forceinline__ float var_of(const Walk3& r, const Chunks& k, const float* ws,
                                        int64_t c) {
  return total_of(ws + k.channels * k.parts, c, k.parts) / static_cast<float>(r.count);
}

__global__ void bn_normalize_kernel(Walk3 r, Chunks k, int64_t xs_c, int64_t ys_c, float alpha,
                                    float beta, const float* x, float* y, const float* scale,
                                    const float* bias, float momentum, float* running_mean,
                                    float* running_var, float epsilon, float* save_mean,
                                    float* save_inv_std, const float* ws) {
  for (int64_t c = blockIdx.y; c < k.channels; c += gridDim.y) {
    const float* xc = x + c * xs_c;
    float* yc = y + c * ys_c;
    const float mean = mean_of(r, k, ws, c), var = var_of(r, k, ws, c);
    const float inv_std = rsqrtf(var + epsilon);
    const float a = scale[c] * inv_std, b = bias[c] - mean * a;
    int64_t begin, end;
    chunk_range(k, r, &begin, &end);
#pragma unroll 4
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      int64_t o[3];
      r.offsets(i, o);
      blend_store(yc + o[1], alpha, a * xc[o[0]] + b, beta);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      if (running_mean) {
        const float unbiased =
            var * static_cast<float>(r.count) / static_cast<float>(r.count - 1);
        running_mean[c] = (1.f - momentum) * running_mean[c] + momentum * mean;
        running_var[c] = (1.f - momentum) * running_var[c] + momentum * unbiased;
      }
      if (save_mean) {
        save_mean[c] = mean;
        save_inv_std[c] = inv_std;
      }
    }
  }
}

// The backward's mean and inv_std: saved, or from the statistics' partial sums.
__device__ __forceinline__ void bwd_stats(const Walk3& r, const Chunks& k, const float* ws,
                                          int64_t c, const float* saved_mean,
                                          const float* saved_inv_std, float epsilon,
                                          float* mean, float* inv_std) {
  if (saved_mean) {
    *mean = saved_mean[c];
    *inv_std = saved_inv_std[c];
  } else {
    *mean = mean_of(r, k, ws, c);
    *inv_std = rsqrtf(var_of(r, k, ws, c) + epsilon);
  }
}

// Partial sums of dy and dy * xhat (arrays 2 and 3).
__global__ void bn_grad_sums_kernel(Walk3 r, Chunks k, int64_t xs_c, int64_t dys_c,
                                    const float* x, const float* dy, float epsilon,
                                    const float* saved_mean, const float* saved_inv_std,
                                    float* ws) {
  __shared__ float smem[kTrainThreads];
  const int64_t n = k.channels * k.parts;
  for (int64_t c = blockIdx.y; c < k.channels; c += gridDim.y) {
    const float* xc = x + c * xs_c;
    const float* dyc = dy + c * dys_c;
    float mean, inv_std;
    bwd_stats(r, k, ws, c, saved_mean, saved_inv_std, epsilon, &mean, &inv_std);
    int64_t begin, end;
    chunk_range(k, r, &begin, &end);
    CompensatedSum gs, gxs;
#pragma unroll 4
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      int64_t o[3];
      r.offsets(i, o);
      const float d = dyc[o[1]];
      gs.add(d);
      gxs.add(d * (xc[o[0]] - mean) * inv_std);
    }
    const float g = block_sum(gs.value(), smem);
    const float gx = block_sum(gxs.value(), smem);
    if (threadIdx.x == 0) {
      ws[2 * n + c * k.parts + blockIdx.x] = g;
      ws[3 * n + c * k.parts + blockIdx.x] = gx;
    }
  }
}

__global__ void bn_dx_kernel(Walk3 r, Chunks k, int64_t xs_c, int64_t dys_c, int64_t dxs_c,
                             float alpha_data, float beta_data, float alpha_param,
                             float beta_param, const float* x, const float* dy, float* dx,
                             const float* scale, float* dscale, float* dbias, float epsilon,
                             const float* saved_mean, const float* saved_inv_std,
                             const float* ws) {
  const int64_t n = k.channels * k.parts;
  const float m = static_cast<float>(r.count);
  for (int64_t c = blockIdx.y; c < k.channels; c += gridDim.y) {
    const float* xc = x + c * xs_c;
    const float* dyc = dy + c * dys_c;
    float* dxc = dx + c * dxs_c;
    float mean, inv_std;
    bwd_stats(r, k, ws, c, saved_mean, saved_inv_std, epsilon, &mean, &inv_std);
    const float g = total_of(ws + 2 * n, c, k.parts), gx = total_of(ws + 3 * n, c, k.parts);
    const float kk = scale[c] * inv_std;
    int64_t begin, end;
    chunk_range(k, r, &begin, &end);
#pragma unroll 4
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      int64_t o[3];
      r.offsets(i, o);
      const float xhat = (xc[o[0]] - mean) * inv_std;
      blend_store(dxc + o[2], alpha_data, kk * (dyc[o[1]] - g / m - xhat * gx / m), beta_data);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0 && dscale) {
      blend_store(dscale + c, alpha_param, gx, beta_param);
      blend_store(dbias + c, alpha_param, g, beta_param);
    }
  }
}

Walk3 rest_of(const TensorDesc& a, const TensorDesc& b, const TensorDesc& c) {
  Walk3 w;
  for (int i = 0; i < a.rank(); ++i)
    if (i != 1) w.add(a.dim(i), a.stride(i), b.stride(i), c.stride(i));
  return w;
}

int channel_blocks(int64_t c) { return static_cast<int>(c < 65535 ? c : 65535); }

Chunks chunks_of(const Handle& h, const TensorDesc& x_desc) {
  Chunks k;
  k.channels = x_desc.dim(1);
  const int64_t count = x_desc.elements() / k.channels;
  k.parts = chunks_per_channel(h, k.channels, count);
  k.len = (count + k.parts - 1) / k.parts;
  return k;
}

dim3 chunk_grid(const Chunks& k) {
  return dim3(static_cast<unsigned>(k.parts), static_cast<unsigned>(channel_blocks(k.channels)));
}

}  // namespace

size_t batchnorm_training_workspace_size(const Handle& h, const TensorDesc& x_desc) {
  const Chunks k = chunks_of(h, x_desc);
  return k.parts > 1 ? static_cast<size_t>(4 * k.channels * k.parts) * sizeof(float) : 0;
}

Status batchnorm_forward_training(const Handle& h, float alpha, float beta,
                                  const TensorDesc& x_desc, const void* x,
                                  const TensorDesc& y_desc, void* y, const float* scale,
                                  const float* bias, double momentum, float* running_mean,
                                  float* running_var, double epsilon, float* save_mean,
                                  float* save_inv_std, void* workspace) {
  const int64_t channels = x_desc.dim(1);
  if (workspace) {
    const Chunks k = chunks_of(h, x_desc);
    float* ws = static_cast<float*>(workspace);
    const float* xf = static_cast<const float*>(x);
    const Walk3 r = rest_of(x_desc, y_desc, y_desc);
    bn_sum_kernel<<<chunk_grid(k), kTrainThreads, 0, h.stream()>>>(r, k, x_desc.stride(1), xf,
                                                                    ws);
    bn_sqdev_kernel<<<chunk_grid(k), kTrainThreads, 0, h.stream()>>>(r, k, x_desc.stride(1), xf,
                                                                      ws);
    bn_normalize_kernel<<<chunk_grid(k), kTrainThreads, 0, h.stream()>>>(
        r, k, x_desc.stride(1), y_desc.stride(1), alpha, beta, xf, static_cast<float*>(y), scale,
        bias, static_cast<float>(momentum), running_mean, running_var,
        static_cast<float>(epsilon), save_mean, save_inv_std, ws);
    return launch_status("batchnorm_forward_training");
  }
  bn_forward_kernel<<<channel_blocks(channels), kTrainThreads, 0, h.stream()>>>(
      rest_of(x_desc, y_desc, y_desc), channels, x_desc.stride(1), y_desc.stride(1), alpha, beta,
      static_cast<const float*>(x), static_cast<float*>(y), scale, bias,
      static_cast<float>(momentum), running_mean, running_var, static_cast<float>(epsilon),
      save_mean, save_inv_std);
  return launch_status("batchnorm_forward_training");
}

Status batchnorm_backward(const Handle& h, float alpha_data, float beta_data, float alpha_param,
                          float beta_param, const TensorDesc& x_desc, const void* x,
                          const TensorDesc& dy_desc, const void* dy, const TensorDesc& dx_desc,
                          void* dx, const float* scale, float* dscale, float* dbias,
                          double epsilon, const float* saved_mean, const float* saved_inv_std,
                          void* workspace) {
  const int64_t channels = x_desc.dim(1);
  if (workspace) {
    const Chunks k = chunks_of(h, x_desc);
    float* ws = static_cast<float*>(workspace);
    const float* xf = static_cast<const float*>(x);
    const float* dyf = static_cast<const float*>(dy);
    const Walk3 r = rest_of(x_desc, dy_desc, dx_desc);
    const float eps = static_cast<float>(epsilon);
    if (!saved_mean) {
      bn_sum_kernel<<<chunk_grid(k), kTrainThreads, 0, h.stream()>>>(r, k, x_desc.stride(1), xf,
                                                                      ws);
      bn_sqdev_kernel<<<chunk_grid(k), kTrainThreads, 0, h.stream()>>>(r, k, x_desc.stride(1),
                                                                        xf, ws);
    }
    bn_grad_sums_kernel<<<chunk_grid(k), kTrainThreads, 0, h.stream()>>>(
        r, k, x_desc.stride(1), dy_desc.stride(1), xf, dyf, eps, saved_mean, saved_inv_std, ws);
    bn_dx_kernel<<<chunk_grid(k), kTrainThreads, 0, h.stream()>>>(
        r, k, x_desc.stride(1), dy_desc.stride(1), dx_desc.stride(1), alpha_data, beta_data,
        alpha_param, beta_param, xf, dyf, static_cast<float*>(dx), scale, dscale, dbias, eps,
        saved_mean, saved_inv_std, ws);
    return launch_status("batchnorm_backward");
  }
  bn_backward_kernel<<<channel_blocks(channels), kTrainThreads, 0, h.stream()>>>(
      rest_of(x_desc, dy_desc, dx_desc), channels, x_desc.stride(1), dy_desc.stride(1),
      dx_desc.stride(1), alpha_data, beta_data, alpha_param, beta_param,
      static_cast<const float*>(x), static_cast<const float*>(dy), static_cast<float*>(dx), scale,
      dscale, dbias, static_cast<float>(epsilon), saved_mean, saved_inv_std);
  return launch_status("batchnorm_backward");
}

}  // namespace cuda
}  // namespace jet
