// resize_backward: validation (resize_forward's rules, with x = dx and y = dy) and dispatch.
//
// CPU resize backward: each dx element from kernels/training/resize_grad.h (shared with CUDA).

#include <cmath>

#include "../api/train_check.h"
#include "../../cpu/cpu_common.h"
#include "../backend.h"

namespace jet {

JET_BACKEND_ENTRIES(resize_backward, const ResizeGradGeom& g, float alpha, const void* dy,
                    float beta, void* dx);

Status resize_backward(const Handle& handle, const ResizeDesc& resize, float alpha,
                       const TensorDesc& dy_desc, const void* dy, float beta,
                       const TensorDesc& dx_desc, void* dx) {
  const char* fn = "resize_backward";
  const int mode = static_cast<int>(resize.mode);
  if (mode < static_cast<int>(ResizeMode::NEAREST) || mode > static_cast<int>(ResizeMode::LINEAR))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown resize mode %d", fn, mode);
  const int coord = static_cast<int>(resize.coord);
  if (coord < static_cast<int>(ResizeCoord::HALF_PIXEL) ||
      coord > static_cast<int>(ResizeCoord::TF_HALF_PIXEL_FOR_NN))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown coordinate transformation mode %d", fn,
                       coord);
  const int nearest = static_cast<int>(resize.nearest);
  if (nearest < static_cast<int>(ResizeNearest::ROUND_PREFER_FLOOR) ||
      nearest > static_cast<int>(ResizeNearest::CEIL))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown nearest rounding mode %d", fn, nearest);
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, dy_desc, dy, "dy"));
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, dx_desc, dx, "dx"));
  if (dx_desc.rank() != dy_desc.rank() || dx_desc.dim(0) != dy_desc.dim(0) ||
      dx_desc.dim(1) != dy_desc.dim(1))
    return make_status(StatusCode::BAD_PARAM,
                       "%s: dx has dims %s but dy has dims %s; resize keeps the rank, N and C", fn,
                       dims_string(dx_desc.rank(), dx_desc.dims()).c_str(),
                       dims_string(dy_desc.rank(), dy_desc.dims()).c_str());
  for (int i = 0; i < dx_desc.spatial_rank(); ++i) {
    if (!std::isfinite(resize.scales[i]) || resize.scales[i] < 0.f)
      return make_status(StatusCode::INVALID_VALUE,
                         "%s: scales[%d] = %g must be finite and >= 0 (0 means out / in)", fn, i,
                         static_cast<double>(resize.scales[i]));
  }
  if (dx == dy)
    return make_status(StatusCode::BAD_PARAM, "%s: dx must not be the same buffer as dy", fn);
  const ResizeGradGeom g = make_resize_grad_geom(resize, dy_desc, dx_desc);
  if (handle.backend() == Backend::CPU) return cpu::resize_backward(g, alpha, dy, beta, dx);
#if defined(JET_HAVE_CUDA)
  return cuda::resize_backward(handle, g, alpha, dy, beta, dx);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {

Status resize_backward(const ResizeGradGeom& g, float alpha, const void* dy, float beta,
                       void* dx) {
  const float* dyp = static_cast<const float*>(dy);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t p0 = 0; p0 < g.ax[0].in; ++p0)
        for (int64_t p1 = 0; p1 < g.ax[1].in; ++p1)
          for (int64_t p2 = 0; p2 < g.ax[2].in; ++p2) {
            const int64_t p[3] = {p0, p1, p2};
            blend_store(DType::F32, dx,
                        n * g.dxs_n + c * g.dxs_c + p0 * g.dxs[0] + p1 * g.dxs[1] + p2 * g.dxs[2],
                        alpha, resize_grad_at(g, dyp, n, c, p), beta);
          }
  return Status();
}

}  // namespace cpu

}  // namespace jet
