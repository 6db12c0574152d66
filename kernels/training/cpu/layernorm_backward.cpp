// layernorm_backward and its workspace query: validation and backend dispatch; below, the CPU
// backend.
//
// CPU layer normalization backward: per group, the statistics (group_mean_var, double) and then
// dx from the group's two sums; the parameter gradients per element of a group, summed over the
// groups in double from the statistics each group left in `stats`.

#include <cmath>

#include "../api/train_check.h"
#include "../../cpu/cpu_common.h"
#include "../backend.h"

namespace jet {

// stats: 2 doubles per group (mean, inv_std), written for the parameter gradients; null when
// neither dscale nor dbias is asked for.
JET_CPU_ENTRY(layernorm_backward, int axis, float alpha_data, float beta_data, float alpha_param,
              float beta_param, const TensorDesc& x_desc, const void* x, const TensorDesc& dy_desc,
              const void* dy, const TensorDesc& dx_desc, void* dx, const float* scale,
              float* dscale, float* dbias, double epsilon, double* stats);
// stats: 2 floats per group (mean, inv_std), as the CPU's.
JET_CUDA_ENTRY(layernorm_backward, int axis, float alpha_data, float beta_data, float alpha_param,
               float beta_param, const TensorDesc& x_desc, const void* x, const TensorDesc& dy_desc,
               const void* dy, const TensorDesc& dx_desc, void* dx, const float* scale,
               float* dscale, float* dbias, double epsilon, float* stats);

namespace {

// The number of groups: the product of x's dims before `axis`.
int64_t group_count(const TensorDesc& x_desc, int axis) {
  int64_t groups = 1;
  for (int i = 0; i < axis; ++i) groups *= x_desc.dim(i);
  return groups;
}

}  // namespace

size_t layernorm_backward_workspace_size(const TensorDesc& x_desc, int axis) {
  if (axis < 0 || axis >= x_desc.rank()) return 0;
  // Two doubles per group (the CPU's; CUDA keeps two floats in the same space).
  return static_cast<size_t>(group_count(x_desc, axis)) * 2 * sizeof(double);
}

Status layernorm_backward(const Handle& handle, int axis, float alpha_data, float beta_data,
                          float alpha_param, float beta_param, const TensorDesc& x_desc,
                          const void* x, const TensorDesc& dy_desc, const void* dy,
                          const TensorDesc& dx_desc, void* dx, const float* scale, float* dscale,
                          float* dbias, double epsilon, void* workspace, size_t workspace_bytes) {
  const char* fn = "layernorm_backward";
  JET_TRY(check_train_tensor(fn, Ranks::ANY, x_desc, x, "x"));
  JET_TRY(check_train_tensor(fn, Ranks::ANY, dy_desc, dy, "dy"));
  JET_TRY(check_dims_as(fn, dy_desc, "dy", x_desc, "x"));
  if (axis < 0 || axis >= x_desc.rank())
    return make_status(StatusCode::BAD_PARAM, "%s: axis %d is outside x's rank %d", fn, axis,
                       x_desc.rank());
  if (!std::isfinite(epsilon) || !(epsilon > 0.0))
    return make_status(StatusCode::INVALID_VALUE, "%s: epsilon = %g must be finite and > 0", fn,
                       epsilon);
  if (!dx && !dscale && !dbias)
    return make_status(StatusCode::BAD_PARAM, "%s: dx, dscale and dbias are all null", fn);
  if (dx) {
    JET_TRY(check_train_tensor(fn, Ranks::ANY, dx_desc, dx, "dx"));
    JET_TRY(check_dims_as(fn, dx_desc, "dx", x_desc, "x"));
    // dx is written in a last pass over each group, after its sums: not in place.
    if (dx == dy || dx == x)
      return make_status(StatusCode::BAD_PARAM, "%s: dx must not be the same buffer as %s", fn,
                         dx == dy ? "dy" : "x");
  }
  const size_t needed = dscale || dbias ? layernorm_backward_workspace_size(x_desc, axis) : 0;
  if (needed && (!workspace || workspace_bytes < needed))
    return make_status(StatusCode::BAD_PARAM,
                       "%s: the parameter gradients need %zu bytes of workspace, got %zu%s", fn,
                       needed, workspace_bytes, workspace ? "" : " (a null pointer)");
  if (handle.backend() == Backend::CPU)
    return cpu::layernorm_backward(axis, alpha_data, beta_data, alpha_param, beta_param, x_desc, x,
                                   dy_desc, dy, dx_desc, dx, scale, dscale, dbias, epsilon,
                                   needed ? static_cast<double*>(workspace) : nullptr);
#if defined(JET_HAVE_CUDA)
  return cuda::layernorm_backward(handle, axis, alpha_data, beta_data, alpha_param, beta_param,
                                  x_desc, x, dy_desc, dy, dx_desc, dx, scale, dscale, dbias,
                                  epsilon, needed ? static_cast<float*>(workspace) : nullptr);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {

Status layernorm_backward(int axis, float alpha_data, float beta_data, float alpha_param,
                          float beta_param, const TensorDesc& x_desc, const void* x,
                          const TensorDesc& dy_desc, const void* dy, const TensorDesc& dx_desc,
                          void* dx, const float* scale, float* dscale, float* dbias, double epsilon,
                          double* stats) {
  const float* xp = static_cast<const float*>(x);
  const float* dyp = static_cast<const float*>(dy);
  const int inner_rank = x_desc.rank() - axis;
  const int64_t* dims = x_desc.dims() + axis;
  const int64_t* xs = x_desc.strides() + axis;
  const int64_t* dys = dy_desc.strides() + axis;
  const int64_t* dxs = (dx ? dx_desc : x_desc).strides() + axis;
  double m = 1.0;
  for (int i = 0; i < inner_rank; ++i) m *= static_cast<double>(dims[i]);
  StridedWalk groups(axis, x_desc.dims(), x_desc.strides(), dy_desc.strides(),
                     (dx ? dx_desc : x_desc).strides());
  int64_t r = 0;
  do {
    const int64_t xo = groups.off[0], dyo = groups.off[1], dxo = groups.off[2];
    double mean = 0.0, var = 0.0;
    group_mean_var(DType::F32, x, xo, inner_rank, dims, xs, &mean, &var);
    const double inv_std = 1.0 / std::sqrt(var + epsilon);
    if (stats) {
      stats[2 * r] = mean;
      stats[2 * r + 1] = inv_std;
    }
    if (dx) {
      double sg = 0.0, sgx = 0.0;
      StridedWalk w(inner_rank, dims, xs, dys);
      int64_t i = 0;
      do {
        const double g = dyp[dyo + w.off[1]] * (scale ? static_cast<double>(scale[i]) : 1.0);
        sg += g;
        sgx += g * (xp[xo + w.off[0]] - mean) * inv_std;
        ++i;
      } while (w.next());
      StridedWalk w2(inner_rank, dims, xs, dys, dxs);
      i = 0;
      do {
        const double g = dyp[dyo + w2.off[1]] * (scale ? static_cast<double>(scale[i]) : 1.0);
        const double xhat = (xp[xo + w2.off[0]] - mean) * inv_std;
        const double v = inv_std * (g - sg / m - xhat * sgx / m);
        blend_store(DType::F32, dx, dxo + w2.off[2], alpha_data, static_cast<float>(v), beta_data);
        ++i;
      } while (w2.next());
    }
    ++r;
  } while (groups.next());
  if (!dscale && !dbias) return Status();
  StridedWalk w(inner_rank, dims, xs, dys);
  int64_t i = 0;
  do {
    double ss = 0.0, sb = 0.0;
    StridedWalk gw(axis, x_desc.dims(), x_desc.strides(), dy_desc.strides());
    int64_t g = 0;
    do {
      const double d = dyp[gw.off[1] + w.off[1]];
      ss += d * (xp[gw.off[0] + w.off[0]] - stats[2 * g]) * stats[2 * g + 1];
      sb += d;
      ++g;
    } while (gw.next());
    if (dscale) blend_store(DType::F32, dscale, i, alpha_param, static_cast<float>(ss), beta_param);
    if (dbias) blend_store(DType::F32, dbias, i, alpha_param, static_cast<float>(sb), beta_param);
    ++i;
  } while (w.next());
  return Status();
}

}  // namespace cpu

}  // namespace jet
