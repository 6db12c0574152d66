// CUDA batch normalization training forward and backward: one block per channel. Its threads
// stride over N and the spatial dims; the statistics are two-pass (the mean, then the squared
// deviations from it), each a compensated f32 sum per thread combined by a fixed tree
// (block_sum): deterministic, no atomics. Thread 0 writes the per-channel outputs.
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

Walk3 rest_of(const TensorDesc& a, const TensorDesc& b, const TensorDesc& c) {
  Walk3 w;
  for (int i = 0; i < a.rank(); ++i)
    if (i != 1) w.add(a.dim(i), a.stride(i), b.stride(i), c.stride(i));
  return w;
}

int channel_blocks(int64_t c) { return static_cast<int>(c < 65535 ? c : 65535); }

}  // namespace

Status batchnorm_forward_training(const Handle& h, float alpha, float beta,
                                  const TensorDesc& x_desc, const void* x,
                                  const TensorDesc& y_desc, void* y, const float* scale,
                                  const float* bias, double momentum, float* running_mean,
                                  float* running_var, double epsilon, float* save_mean,
                                  float* save_inv_std) {
  const int64_t channels = x_desc.dim(1);
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
                          double epsilon, const float* saved_mean, const float* saved_inv_std) {
  const int64_t channels = x_desc.dim(1);
  bn_backward_kernel<<<channel_blocks(channels), kTrainThreads, 0, h.stream()>>>(
      rest_of(x_desc, dy_desc, dx_desc), channels, x_desc.stride(1), dy_desc.stride(1),
      dx_desc.stride(1), alpha_data, beta_data, alpha_param, beta_param,
      static_cast<const float*>(x), static_cast<const float*>(dy), static_cast<float*>(dx), scale,
      dscale, dbias, static_cast<float>(epsilon), saved_mean, saved_inv_std);
  return launch_status("batchnorm_backward");
}

}  // namespace cuda
}  // namespace jet
