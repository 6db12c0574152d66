// instancenorm_forward: validation and backend dispatch.
#include <cmath>

#include "backend.h"
#include "check.h"

namespace jet {

JET_BACKEND_ENTRIES(instancenorm_forward, float alpha, float beta, const TensorDesc& x_desc,
                    const void* x, const TensorDesc& y_desc, void* y, const float* scale,
                    const float* bias, double epsilon);

Status instancenorm_forward(const Handle& handle, float alpha, float beta,
                            const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
                            void* y, const float* scale, const float* bias, double epsilon) {
  const char* fn = "instancenorm_forward";
  // !(epsilon > 0) also catches NaN; an infinite epsilon would silently zero the normalized term.
  if (!(epsilon > 0.0) || !std::isfinite(epsilon))
    return make_status(StatusCode::INVALID_VALUE, "%s: epsilon = %g must be finite and > 0", fn,
                       epsilon);
  // Each (n, c) plane is read in full before any of it is written, and planes do not overlap:
  // x == y with one layout is safe (check_elementwise_io rejects two layouts on one buffer).
  JET_RETURN_IF_ERROR(check_elementwise_io(fn, Ranks::SPATIAL, x_desc, x, y_desc, y));
  JET_RETURN_IF_ERROR(check_ptr(fn, scale, "scale"));
  JET_RETURN_IF_ERROR(check_ptr(fn, bias, "bias"));
  if (handle.backend() == Backend::CPU)
    return cpu::instancenorm_forward(alpha, beta, x_desc, x, y_desc, y, scale, bias, epsilon);
#if defined(JET_HAVE_CUDA)
  return cuda::instancenorm_forward(handle, alpha, beta, x_desc, x, y_desc, y, scale, bias,
                                    epsilon);
#else
  return cuda_not_available(fn);
#endif
}

}  // namespace jet
