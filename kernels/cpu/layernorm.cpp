// layernorm_forward: validation and backend dispatch; below, the CPU backend.
//
// CPU layer normalization: per group (the dims from `axis` on), the mean and biased variance
// (group_mean_var: two sweeps), then a sweep writing the outputs; all in double, f16 storage
// widened on load. A group is fully read before any of
// it is written, which makes x == y (same layout) safe. No allocation.

#include <cmath>

#include "../api/backend.h"
#include "../api/check.h"
#include "cpu_common.h"

namespace jet {

JET_BACKEND_ENTRIES(layernorm_forward, int axis, float alpha, float beta, const TensorDesc& x_desc,
                    const void* x, const TensorDesc& y_desc, void* y, const float* scale,
                    const float* bias, double epsilon);

Status layernorm_forward(const Handle& handle, int axis, float alpha, float beta,
                         const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc, void* y,
                         const float* scale, const float* bias, double epsilon) {
  const char* fn = "layernorm_forward";
  if (!(epsilon > 0.0) || !std::isfinite(epsilon))
    return make_status(StatusCode::INVALID_VALUE, "%s: epsilon = %g must be finite and > 0", fn,
                       epsilon);
  // Each group is read in full before any of it is written, and groups do not overlap: x == y
  // with one layout is safe (check_elementwise_io rejects two layouts on one buffer).
  JET_RETURN_IF_ERROR(check_elementwise_io(fn, Ranks::ANY, x_desc, x, y_desc, y));
  if (axis < 0 || axis >= x_desc.rank())
    return make_status(StatusCode::BAD_PARAM, "%s: axis %d is outside x's rank %d", fn, axis,
                       x_desc.rank());
  if (handle.backend() == Backend::CPU)
    return cpu::layernorm_forward(axis, alpha, beta, x_desc, x, y_desc, y, scale, bias, epsilon);
#if defined(JET_HAVE_CUDA)
  return cuda::layernorm_forward(handle, axis, alpha, beta, x_desc, x, y_desc, y, scale, bias,
                                 epsilon);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {

Status layernorm_forward(int axis, float alpha, float beta, const TensorDesc& x_desc, const void* x,
                         const TensorDesc& y_desc, void* y, const float* scale, const float* bias,
                         double epsilon) {
  const DType t = x_desc.dtype();
  const int inner_rank = x_desc.rank() - axis;
  const int64_t* dims = x_desc.dims() + axis;
  const int64_t* xs = x_desc.strides() + axis;
  const int64_t* ys = y_desc.strides() + axis;
  StridedWalk groups(axis, x_desc.dims(), x_desc.strides(), y_desc.strides());
  do {
    const int64_t xo = groups.off[0], yo = groups.off[1];
    double mean = 0.0, var = 0.0;
    group_mean_var(t, x, xo, inner_rank, dims, xs, &mean, &var);
    const double inv_std = 1.0 / std::sqrt(var + epsilon);
    StridedWalk w(inner_rank, dims, xs, ys);
    int64_t i = 0;
    do {
      double v = (load(t, x, xo + w.off[0]) - mean) * inv_std;
      if (scale) v *= scale[i];
      if (bias) v += bias[i];
      blend_store(t, y, yo + w.off[1], alpha, static_cast<float>(v), beta);
      ++i;
    } while (w.next());
  } while (groups.next());
  return Status();
}

}  // namespace cpu

}  // namespace jet
