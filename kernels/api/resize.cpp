// resize_forward: validation and backend dispatch.
#include <cmath>

#include "backend.h"
#include "check.h"

namespace jet {

JET_BACKEND_ENTRIES(resize_forward, const ResizeDesc& resize, float alpha, const TensorDesc& x_desc,
                    const void* x, float beta, const TensorDesc& y_desc, void* y);

Status resize_forward(const Handle& handle, const ResizeDesc& resize, float alpha,
                      const TensorDesc& x_desc, const void* x, float beta,
                      const TensorDesc& y_desc, void* y) {
  const char* fn = "resize_forward";
  const int mode = static_cast<int>(resize.mode);
  if (!enum_in_range<ResizeMode>(mode))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown resize mode %d", fn, mode);
  const int coord = static_cast<int>(resize.coord);
  if (!enum_in_range<ResizeCoord>(coord))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown coordinate transformation mode %d", fn,
                       coord);
  const int nearest = static_cast<int>(resize.nearest);
  if (!enum_in_range<ResizeNearest>(nearest))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown nearest rounding mode %d", fn, nearest);
  if (resize.mode == ResizeMode::CUBIC && !std::isfinite(resize.cubic_coeff_a))
    return make_status(StatusCode::INVALID_VALUE, "%s: cubic_coeff_a = %g must be finite", fn,
                       static_cast<double>(resize.cubic_coeff_a));
  JET_RETURN_IF_ERROR(check_reshaping_io(fn, Ranks::SPATIAL, x_desc, x, y_desc, y));
  if (x_desc.dim(0) != y_desc.dim(0) || x_desc.dim(1) != y_desc.dim(1))
    return make_status(StatusCode::BAD_PARAM,
                       "%s: x has dims %s but y has dims %s; resize keeps N and C", fn,
                       dims_text(x_desc.rank(), x_desc.dims()).c_str(),
                       dims_text(y_desc.rank(), y_desc.dims()).c_str());
  // Only the scales of the spatial dims are used; the rest are ignored.
  for (int i = 0; i < x_desc.spatial_rank(); ++i) {
    if (!std::isfinite(resize.scales[i]) || resize.scales[i] < 0.f)
      return make_status(StatusCode::INVALID_VALUE,
                         "%s: scales[%d] = %g must be finite and >= 0 (0 means out / in)", fn, i,
                         static_cast<double>(resize.scales[i]));
  }
  if (handle.backend() == Backend::CPU)
    return cpu::resize_forward(resize, alpha, x_desc, x, beta, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::resize_forward(handle, resize, alpha, x_desc, x, beta, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

}  // namespace jet
