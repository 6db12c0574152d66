// transform_tensor: validation and backend dispatch.
#include "backend.h"
#include "check.h"

namespace jet {

JET_BACKEND_ENTRIES(transform_tensor, float alpha, const TensorDesc& x_desc, const void* x,
                    float beta, const TensorDesc& y_desc, void* y);

Status transform_tensor(const Handle& handle, float alpha, const TensorDesc& x_desc,
                        const void* x, float beta, const TensorDesc& y_desc, void* y) {
  const char* fn = "transform_tensor";
  JET_RETURN_IF_ERROR(in_routine(fn, x_desc.validate_any_dtype("x")));
  JET_RETURN_IF_ERROR(in_routine(fn, y_desc.validate_any_dtype("y")));
  // Dtypes may differ: converting between them is part of this routine's job. Scaling and
  // blending are float operations: an integer or bool side is a plain copy or conversion.
  if ((!dtype_is_float(x_desc.dtype()) || !dtype_is_float(y_desc.dtype())) &&
      (alpha != 1.f || beta != 0.f))
    return make_status(StatusCode::NOT_SUPPORTED,
                       "%s: alpha %g and beta %g from %s to %s; integer and bool tensors are "
                       "copied and converted with alpha 1 and beta 0 only",
                       fn, static_cast<double>(alpha), static_cast<double>(beta),
                       dtype_name(x_desc.dtype()), dtype_name(y_desc.dtype()));
  JET_RETURN_IF_ERROR(check_same_dims(fn, x_desc, "x", y_desc, "y"));
  JET_RETURN_IF_ERROR(check_ptr(fn, x, "x"));
  JET_RETURN_IF_ERROR(check_ptr(fn, y, "y"));
  JET_RETURN_IF_ERROR(check_in_place(fn, x, x_desc, "x", y, y_desc, "y"));
  if (handle.backend() == Backend::CPU)
    return cpu::transform_tensor(alpha, x_desc, x, beta, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::transform_tensor(handle, alpha, x_desc, x, beta, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

}  // namespace jet
