// batchnorm_forward_inference: validation and backend dispatch.
#include <cmath>

#include "backend.h"
#include "check.h"

namespace jet {

JET_BACKEND_ENTRIES(batchnorm_forward_inference, float alpha, float beta, const TensorDesc& x_desc,
                    const void* x, const TensorDesc& y_desc, void* y, const float* scale,
                    const float* bias, const float* mean, const float* var, double epsilon);

Status batchnorm_forward_inference(const Handle& handle, float alpha, float beta,
                                   const TensorDesc& x_desc, const void* x,
                                   const TensorDesc& y_desc, void* y, const float* scale,
                                   const float* bias, const float* mean, const float* var,
                                   double epsilon) {
  const char* fn = "batchnorm_forward_inference";
  // !(epsilon > 0) also catches NaN; an infinite epsilon would silently zero the normalized term.
  if (!(epsilon > 0.0) || !std::isfinite(epsilon))
    return make_status(StatusCode::INVALID_VALUE,
                       "%s: epsilon = %g must be finite and > 0", fn, epsilon);
  JET_RETURN_IF_ERROR(check_elementwise_io(fn, Ranks::SPATIAL, x_desc, x, y_desc, y));
  JET_RETURN_IF_ERROR(check_ptr(fn, scale, "scale"));
  JET_RETURN_IF_ERROR(check_ptr(fn, bias, "bias"));
  JET_RETURN_IF_ERROR(check_ptr(fn, mean, "mean"));
  JET_RETURN_IF_ERROR(check_ptr(fn, var, "var"));
  if (handle.backend() == Backend::CPU)
    return cpu::batchnorm_forward_inference(alpha, beta, x_desc, x, y_desc, y, scale, bias, mean,
                                            var, epsilon);
#if defined(JET_HAVE_CUDA)
  return cuda::batchnorm_forward_inference(handle, alpha, beta, x_desc, x, y_desc, y, scale,
                                           bias, mean, var, epsilon);
#else
  return cuda_not_available(fn);
#endif
}

}  // namespace jet
