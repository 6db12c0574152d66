// layernorm_backward and its workspace query: validation and backend dispatch.
#include <cmath>

#include "train_check.h"

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

}  // namespace jet
