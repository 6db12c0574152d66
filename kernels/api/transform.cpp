// transform_tensor: validation and backend dispatch.
#include "backend.h"
#include "check.h"

namespace jet {

Status transform_tensor(const Handle& handle, float alpha, const TensorDesc& x_desc,
                        const void* x, float beta, const TensorDesc& y_desc, void* y) {
  const char* fn = "transform_tensor";
  JET_RETURN_IF_ERROR(in_routine(fn, x_desc.validate("x")));
  JET_RETURN_IF_ERROR(in_routine(fn, y_desc.validate("y")));
  // Dtypes may differ: converting between f32 and f16 is part of this routine's job.
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
