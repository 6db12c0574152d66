// layernorm_forward: validation and backend dispatch.
#include <cmath>

#include "backend.h"
#include "check.h"

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

}  // namespace jet
