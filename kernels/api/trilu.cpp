// trilu_forward: validation and backend dispatch.
#include "backend.h"
#include "check.h"

namespace jet {

JET_BACKEND_ENTRIES(trilu_forward, bool upper, int64_t k, const TensorDesc& x_desc, const void* x,
                    const TensorDesc& y_desc, void* y);

Status trilu_forward(const Handle& handle, bool upper, int64_t k, const TensorDesc& x_desc, const void* x,
                     const TensorDesc& y_desc, void* y) {
  const char* fn = "trilu_forward";
  JET_RETURN_IF_ERROR(in_routine(fn, x_desc.validate_any_dtype("x")));
  JET_RETURN_IF_ERROR(in_routine(fn, y_desc.validate_any_dtype("y")));
  JET_RETURN_IF_ERROR(check_same_dtype(fn, x_desc, "x", y_desc, "y"));
  if (x_desc.rank() < 2)
    return make_status(StatusCode::BAD_PARAM, "%s: x has rank %d; it needs at least 2 (matrices)", fn,
                       x_desc.rank());
  if (!x_desc.same_dims(y_desc))
    return make_status(StatusCode::BAD_PARAM, "%s: x has dims %s but y %s", fn,
                       dims_text(x_desc.rank(), x_desc.dims()).c_str(), dims_text(y_desc.rank(), y_desc.dims()).c_str());
  JET_RETURN_IF_ERROR(check_ptr(fn, x, "x"));
  JET_RETURN_IF_ERROR(check_ptr(fn, y, "y"));
  if (x == y) return make_status(StatusCode::BAD_PARAM, "%s: x and y are the same buffer", fn);
  // Beyond +-(rows + cols) every k keeps all or nothing: clamp so that col - row - k cannot overflow.
  const int64_t lim = x_desc.dim(x_desc.rank() - 2) + x_desc.dim(x_desc.rank() - 1) + 1;
  const int64_t kc = k < -lim ? -lim : k > lim ? lim : k;
  if (handle.backend() == Backend::CPU) return cpu::trilu_forward(upper, kc, x_desc, x, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::trilu_forward(handle, upper, kc, x_desc, x, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

}  // namespace jet
