// CPU batch normalization training forward and backward: per channel, two-pass statistics in
// double (the mean, then the squared deviations from it), then the output pass.
#include <cmath>

#include "../../cpu/cpu_common.h"
#include "../backend.h"

namespace jet {
namespace cpu {

namespace {

// The dims other than C with the strides of up to three tensors.
struct Rest {
  int rank = 0;
  int64_t dims[kMaxRank];
  int64_t s[3][kMaxRank];
  int64_t count = 1;

  Rest(const TensorDesc& a, const TensorDesc& b, const TensorDesc& c) {
    for (int i = 0; i < a.rank(); ++i) {
      if (i == 1) continue;
      dims[rank] = a.dim(i);
      s[0][rank] = a.stride(i);
      s[1][rank] = b.stride(i);
      s[2][rank] = c.stride(i);
      count *= a.dim(i);
      ++rank;
    }
  }
  StridedWalk walk() const { return StridedWalk(rank, dims, s[0], s[1], s[2]); }
};

// Mean and biased variance of x's channel at offset base (walk tensor 0 is x).
void channel_stats(const Rest& r, const float* x, int64_t base, double* mean, double* var) {
  double sum = 0.0;
  StridedWalk w = r.walk();
  do {
    sum += x[base + w.off[0]];
  } while (w.next());
  const double m = sum / static_cast<double>(r.count);
  double sq = 0.0;
  StridedWalk w2 = r.walk();
  do {
    const double d = x[base + w2.off[0]] - m;
    sq += d * d;
  } while (w2.next());
  *mean = m;
  *var = sq / static_cast<double>(r.count);
}

}  // namespace

Status batchnorm_forward_training(float alpha, float beta, const TensorDesc& x_desc,
                                  const void* x, const TensorDesc& y_desc, void* y,
                                  const float* scale, const float* bias, double momentum,
                                  float* running_mean, float* running_var, double epsilon,
                                  float* save_mean, float* save_inv_std) {
  const float* xp = static_cast<const float*>(x);
  const Rest r(x_desc, y_desc, y_desc);
  for (int64_t c = 0; c < x_desc.dim(1); ++c) {
    double mean, var;
    channel_stats(r, xp, c * x_desc.stride(1), &mean, &var);
    const double inv_std = 1.0 / std::sqrt(var + epsilon);
    const float a = static_cast<float>(scale[c] * inv_std);
    const float b = static_cast<float>(bias[c] - mean * scale[c] * inv_std);
    StridedWalk w = r.walk();
    do {
      blend_store(DType::F32, y, c * y_desc.stride(1) + w.off[1], alpha,
                  a * xp[c * x_desc.stride(1) + w.off[0]] + b, beta);
    } while (w.next());
    if (running_mean) {
      const double unbiased = var * static_cast<double>(r.count) / static_cast<double>(r.count - 1);
      running_mean[c] = static_cast<float>((1.0 - momentum) * running_mean[c] + momentum * mean);
      running_var[c] = static_cast<float>((1.0 - momentum) * running_var[c] + momentum * unbiased);
    }
    if (save_mean) {
      save_mean[c] = static_cast<float>(mean);
      save_inv_std[c] = static_cast<float>(inv_std);
    }
  }
  return Status();
}

Status batchnorm_backward(float alpha_data, float beta_data, float alpha_param, float beta_param,
                          const TensorDesc& x_desc, const void* x, const TensorDesc& dy_desc,
                          const void* dy, const TensorDesc& dx_desc, void* dx,
                          const float* scale, float* dscale, float* dbias, double epsilon,
                          const float* saved_mean, const float* saved_inv_std) {
  const float* xp = static_cast<const float*>(x);
  const float* dyp = static_cast<const float*>(dy);
  const Rest r(x_desc, dy_desc, dx_desc);
  const double m = static_cast<double>(r.count);
  for (int64_t c = 0; c < x_desc.dim(1); ++c) {
    const int64_t xb = c * x_desc.stride(1), dyb = c * dy_desc.stride(1),
                  dxb = c * dx_desc.stride(1);
    double mean, inv_std;
    if (saved_mean) {
      mean = saved_mean[c];
      inv_std = saved_inv_std[c];
    } else {
      double var;
      channel_stats(r, xp, xb, &mean, &var);
      inv_std = 1.0 / std::sqrt(var + epsilon);
    }
    double g = 0.0, gx = 0.0;
    StridedWalk w = r.walk();
    do {
      const double d = dyp[dyb + w.off[1]];
      g += d;
      gx += d * (xp[xb + w.off[0]] - mean) * inv_std;
    } while (w.next());
    const double k = scale[c] * inv_std;
    StridedWalk w2 = r.walk();
    do {
      const double xhat = (xp[xb + w2.off[0]] - mean) * inv_std;
      const double v = k * (dyp[dyb + w2.off[1]] - g / m - xhat * gx / m);
      blend_store(DType::F32, dx, dxb + w2.off[2], alpha_data, static_cast<float>(v), beta_data);
    } while (w2.next());
    if (dscale) {
      blend_store(DType::F32, dscale, c, alpha_param, static_cast<float>(gx), beta_param);
      blend_store(DType::F32, dbias, c, alpha_param, static_cast<float>(g), beta_param);
    }
  }
  return Status();
}

}  // namespace cpu
}  // namespace jet
