// cumsum_forward: validation and backend dispatch.
#include "backend.h"
#include "check.h"

namespace jet {

JET_BACKEND_ENTRIES(cumsum_forward, int axis, bool exclusive, bool reverse,
                    const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc, void* y);

Status cumsum_forward(const Handle& handle, int axis, bool exclusive, bool reverse, const TensorDesc& x_desc,
                      const void* x, const TensorDesc& y_desc, void* y) {
  const char* fn = "cumsum_forward";
  JET_RETURN_IF_ERROR(in_routine(fn, x_desc.validate_any_dtype("x")));
  JET_RETURN_IF_ERROR(in_routine(fn, y_desc.validate_any_dtype("y")));
  JET_RETURN_IF_ERROR(check_same_dtype(fn, x_desc, "x", y_desc, "y"));
  if (x_desc.dtype() == DType::BOOL)
    return make_status(StatusCode::BAD_PARAM, "%s: x is bool; it takes f32, f16, i32 or i64", fn);
  if (axis < 0 || axis >= x_desc.rank())
    return make_status(StatusCode::BAD_PARAM, "%s: axis %d is outside [0, %d)", fn, axis, x_desc.rank());
  if (!x_desc.same_dims(y_desc))
    return make_status(StatusCode::BAD_PARAM, "%s: x has dims %s but y %s", fn,
                       dims_text(x_desc.rank(), x_desc.dims()).c_str(), dims_text(y_desc.rank(), y_desc.dims()).c_str());
  JET_RETURN_IF_ERROR(check_ptr(fn, x, "x"));
  JET_RETURN_IF_ERROR(check_ptr(fn, y, "y"));
  if (x == y) return make_status(StatusCode::BAD_PARAM, "%s: x and y are the same buffer", fn);
  if (handle.backend() == Backend::CPU) return cpu::cumsum_forward(axis, exclusive, reverse, x_desc, x, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::cumsum_forward(handle, axis, exclusive, reverse, x_desc, x, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

}  // namespace jet
