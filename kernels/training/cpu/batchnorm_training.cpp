// batchnorm_forward_training and batchnorm_backward: validation and backend dispatch; below, the
// CPU backend.
//
// CPU batch normalization training forward and backward: per channel, two-pass statistics in
// double (the mean, then the squared deviations from it), then the output pass.

#include <cmath>

#include "../api/train_check.h"
#include "../../cpu/cpu_common.h"
#include "../backend.h"

namespace jet {

JET_CPU_ENTRY(batchnorm_forward_training, float alpha, float beta, const TensorDesc& x_desc,
              const void* x, const TensorDesc& y_desc, void* y, const float* scale,
              const float* bias, double momentum, float* running_mean, float* running_var,
              double epsilon, float* save_mean, float* save_inv_std);
JET_CUDA_ENTRY(batchnorm_forward_training, float alpha, float beta, const TensorDesc& x_desc,
               const void* x, const TensorDesc& y_desc, void* y, const float* scale,
               const float* bias, double momentum, float* running_mean, float* running_var,
               double epsilon, float* save_mean, float* save_inv_std, void* workspace);
JET_CPU_ENTRY(batchnorm_backward, float alpha_data, float beta_data, float alpha_param,
              float beta_param, const TensorDesc& x_desc, const void* x, const TensorDesc& dy_desc,
              const void* dy, const TensorDesc& dx_desc, void* dx, const float* scale,
              float* dscale, float* dbias, double epsilon, const float* saved_mean,
              const float* saved_inv_std);
JET_CUDA_ENTRY(batchnorm_backward, float alpha_data, float beta_data, float alpha_param,
               float beta_param, const TensorDesc& x_desc, const void* x, const TensorDesc& dy_desc,
               const void* dy, const TensorDesc& dx_desc, void* dx, const float* scale,
               float* dscale, float* dbias, double epsilon, const float* saved_mean,
               const float* saved_inv_std, void* workspace);
// The batch-norm kernels' workspace for x (0: one block per channel fills the GPU);
// workspace null: one block per channel, else it holds that many bytes (P blocks per channel).
namespace cuda {
size_t batchnorm_training_workspace_size(const Handle& h, const TensorDesc& x_desc);
}  // namespace cuda

namespace {

// Elements per channel: N times the spatial extent.
int64_t per_channel(const TensorDesc& d) { return d.elements() / d.dim(1); }

Status check_epsilon(const char* fn, double epsilon) {
  if (std::isfinite(epsilon) && epsilon > 0.0) return Status();
  return make_status(StatusCode::INVALID_VALUE, "%s: epsilon = %g must be finite and > 0", fn,
                     epsilon);
}

// Two optional pointers that go together: both or neither.
Status check_pair(const char* fn, const void* a, const char* an, const void* b, const char* bn) {
  if ((a == nullptr) == (b == nullptr)) return Status();
  return make_status(StatusCode::BAD_PARAM, "%s: %s is %s but %s is %s; pass both or neither",
                     fn, an, a ? "set" : "null", bn, b ? "set" : "null");
}

// The workspace the backend uses (null: none, one block per channel): BAD_PARAM when the
// caller passes one smaller than the query's size.
Status workspace_for(const char* fn, const Handle& handle, const TensorDesc& x_desc,
                     void* workspace, size_t workspace_bytes, void** use) {
  size_t need = 0;
  if (workspace || workspace_bytes != 0)
    JET_TRY(batchnorm_training_workspace_size(handle, x_desc, &need));
  return optional_workspace(fn, need, workspace, workspace_bytes, use);
}

}  // namespace

Status batchnorm_training_workspace_size(const Handle& handle, const TensorDesc& x_desc,
                                         size_t* bytes) {
  const char* fn = "batchnorm_training_workspace_size";
  JET_TRY(check_ptr(fn, bytes, "bytes"));
  *bytes = 0;
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, x_desc, &x_desc, "x"));
  if (handle.backend() == Backend::CPU) return Status();
#if defined(JET_HAVE_CUDA)
  *bytes = cuda::batchnorm_training_workspace_size(handle, x_desc);
  return Status();
#else
  return cuda_not_available(fn);
#endif
}

Status batchnorm_forward_training(const Handle& handle, float alpha, float beta,
                                  const TensorDesc& x_desc, const void* x,
                                  const TensorDesc& y_desc, void* y, const float* scale,
                                  const float* bias, double momentum, float* running_mean,
                                  float* running_var, double epsilon, float* save_mean,
                                  float* save_inv_std) {
  return batchnorm_forward_training(handle, alpha, beta, x_desc, x, y_desc, y, scale, bias,
                                    momentum, running_mean, running_var, epsilon, save_mean,
                                    save_inv_std, nullptr, 0);
}

Status batchnorm_forward_training(const Handle& handle, float alpha, float beta,
                                  const TensorDesc& x_desc, const void* x,
                                  const TensorDesc& y_desc, void* y, const float* scale,
                                  const float* bias, double momentum, float* running_mean,
                                  float* running_var, double epsilon, float* save_mean,
                                  float* save_inv_std, void* workspace, size_t workspace_bytes) {
  const char* fn = "batchnorm_forward_training";
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, x_desc, x, "x"));
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, y_desc, y, "y"));
  JET_TRY(check_dims_as(fn, y_desc, "y", x_desc, "x"));
  // Each element is read, then written by the same thread once the statistics are known.
  JET_TRY(check_in_place(fn, x, x_desc, "x", y, y_desc, "y"));
  JET_TRY(check_ptr(fn, scale, "scale"));
  JET_TRY(check_ptr(fn, bias, "bias"));
  JET_TRY(check_pair(fn, running_mean, "running_mean", running_var, "running_var"));
  JET_TRY(check_pair(fn, save_mean, "save_mean", save_inv_std, "save_inv_std"));
  JET_TRY(check_epsilon(fn, epsilon));
  if (!(momentum >= 0.0 && momentum <= 1.0))
    return make_status(StatusCode::INVALID_VALUE, "%s: momentum = %g must be in [0, 1]", fn,
                       momentum);
  if (running_var && per_channel(x_desc) < 2)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: x (dims %s) has one value per channel; the running variance's "
                       "unbiased estimate needs at least two",
                       fn, dims_string(x_desc.rank(), x_desc.dims()).c_str());
  void* ws = nullptr;
  JET_TRY(workspace_for(fn, handle, x_desc, workspace, workspace_bytes, &ws));
  if (handle.backend() == Backend::CPU)
    return cpu::batchnorm_forward_training(alpha, beta, x_desc, x, y_desc, y, scale, bias,
                                           momentum, running_mean, running_var, epsilon,
                                           save_mean, save_inv_std);
#if defined(JET_HAVE_CUDA)
  return cuda::batchnorm_forward_training(handle, alpha, beta, x_desc, x, y_desc, y, scale, bias,
                                          momentum, running_mean, running_var, epsilon,
                                          save_mean, save_inv_std, ws);
#else
  return cuda_not_available(fn);
#endif
}

Status batchnorm_backward(const Handle& handle, float alpha_data, float beta_data,
                          float alpha_param, float beta_param, const TensorDesc& x_desc,
                          const void* x, const TensorDesc& dy_desc, const void* dy,
                          const TensorDesc& dx_desc, void* dx, const float* scale, float* dscale,
                          float* dbias, double epsilon, const float* saved_mean,
                          const float* saved_inv_std) {
  return batchnorm_backward(handle, alpha_data, beta_data, alpha_param, beta_param, x_desc, x,
                            dy_desc, dy, dx_desc, dx, scale, dscale, dbias, epsilon, saved_mean,
                            saved_inv_std, nullptr, 0);
}

Status batchnorm_backward(const Handle& handle, float alpha_data, float beta_data,
                          float alpha_param, float beta_param, const TensorDesc& x_desc,
                          const void* x, const TensorDesc& dy_desc, const void* dy,
                          const TensorDesc& dx_desc, void* dx, const float* scale, float* dscale,
                          float* dbias, double epsilon, const float* saved_mean,
                          const float* saved_inv_std, void* workspace, size_t workspace_bytes) {
  const char* fn = "batchnorm_backward";
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, x_desc, x, "x"));
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, dy_desc, dy, "dy"));
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, dx_desc, dx, "dx"));
  JET_TRY(check_dims_as(fn, dy_desc, "dy", x_desc, "x"));
  JET_TRY(check_dims_as(fn, dx_desc, "dx", x_desc, "x"));
  // dx is written in a second pass over x and dy (after the per-channel sums): not in place.
  if (dx == dy || dx == x)
    return make_status(StatusCode::BAD_PARAM, "%s: dx must not be the same buffer as %s", fn,
                       dx == dy ? "dy" : "x");
  JET_TRY(check_ptr(fn, scale, "scale"));
  JET_TRY(check_pair(fn, dscale, "dscale", dbias, "dbias"));
  JET_TRY(check_pair(fn, saved_mean, "saved_mean", saved_inv_std, "saved_inv_std"));
  if (!saved_mean) JET_TRY(check_epsilon(fn, epsilon));
  void* ws = nullptr;
  JET_TRY(workspace_for(fn, handle, x_desc, workspace, workspace_bytes, &ws));
  if (handle.backend() == Backend::CPU)
    return cpu::batchnorm_backward(alpha_data, beta_data, alpha_param, beta_param, x_desc, x,
                                   dy_desc, dy, dx_desc, dx, scale, dscale, dbias, epsilon,
                                   saved_mean, saved_inv_std);
#if defined(JET_HAVE_CUDA)
  return cuda::batchnorm_backward(handle, alpha_data, beta_data, alpha_param, beta_param, x_desc,
                                  x, dy_desc, dy, dx_desc, dx, scale, dscale, dbias, epsilon,
                                  saved_mean, saved_inv_std, ws);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

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
