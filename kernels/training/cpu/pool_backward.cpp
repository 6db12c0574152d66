// pool_backward: validation and backend dispatch; below, the CPU backend.
//
// CPU pooling backward: every dx element gathers its gradient from the windows that contain it
// (kernels/training/pool_grad.h, shared with CUDA); MAX recomputes each window's argmax from x.

#include <algorithm>

#include "../api/train_check.h"
#include "../../cpu/cpu_common.h"
#include "../backend.h"
#include "../pool_grad.h"

namespace jet {

JET_BACKEND_ENTRIES(pool_backward, const PoolDesc& pool, float alpha, const TensorDesc& x_desc,
                    const void* x, const TensorDesc& dy_desc, const void* dy, float beta,
                    const TensorDesc& dx_desc, void* dx);

Status pool_backward(const Handle& handle, const PoolDesc& pool, float alpha,
                     const TensorDesc& x_desc, const void* x, const TensorDesc& dy_desc,
                     const void* dy, float beta, const TensorDesc& dx_desc, void* dx) {
  const char* fn = "pool_backward";
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, x_desc, x, "x"));
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, dy_desc, dy, "dy"));
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, dx_desc, dx, "dx"));
  int64_t out_dims[5];
  JET_TRY(in_routine(fn, pool_output_dims(x_desc, pool, out_dims)));
  if (dy_desc.rank() != x_desc.rank() ||
      !std::equal(out_dims, out_dims + x_desc.rank(), dy_desc.dims()))
    return make_status(StatusCode::BAD_PARAM, "%s: dy has dims %s but pooling x gives %s", fn,
                       dims_string(dy_desc.rank(), dy_desc.dims()).c_str(),
                       dims_string(x_desc.rank(), out_dims).c_str());
  JET_TRY(check_dims_as(fn, dx_desc, "dx", x_desc, "x"));
  // As pool_forward: with dilation, a window whose taps all miss x has no defined value (and
  // its dy would go nowhere).
  if (!pool.is_global()) {
    for (int i = 0; i < pool.spatial_rank(); ++i) {
      const int64_t dil = pool.dilation(i);
      if (dil == 1) continue;
      for (int64_t o = 0; o < out_dims[2 + i]; ++o) {
        const int64_t start = o * pool.stride(i) - pool.pad_begin(i);
        const int64_t k = start >= 0 ? 0 : (-start + dil - 1) / dil;
        if (k >= pool.window(i) || start + k * dil >= x_desc.dim(2 + i))
          return make_status(StatusCode::BAD_PARAM,
                             "%s: along spatial dim %d, output %lld's window has no tap inside "
                             "x's extent %lld",
                             fn, i, static_cast<long long>(o),
                             static_cast<long long>(x_desc.dim(2 + i)));
      }
    }
  }
  // dx gathers from dy (and x) around each element: it must not overwrite them.
  if (dx == dy || dx == x)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: dx is the same buffer as %s; pooling backward cannot run in place", fn,
                       dx == dy ? "dy" : "x");
  if (handle.backend() == Backend::CPU)
    return cpu::pool_backward(pool, alpha, x_desc, x, dy_desc, dy, beta, dx_desc, dx);
#if defined(JET_HAVE_CUDA)
  return cuda::pool_backward(handle, pool, alpha, x_desc, x, dy_desc, dy, beta, dx_desc, dx);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {

Status pool_backward(const PoolDesc& pool, float alpha, const TensorDesc& x_desc, const void* x,
                     const TensorDesc& dy_desc, const void* dy, float beta,
                     const TensorDesc& dx_desc, void* dx) {
  const PoolGradGeom g = make_pool_grad_geom(pool, x_desc, dy_desc, dx_desc);
  const float* xp = static_cast<const float*>(x);
  const float* dyp = static_cast<const float*>(dy);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t p0 = 0; p0 < g.ax[0].in; ++p0)
        for (int64_t p1 = 0; p1 < g.ax[1].in; ++p1)
          for (int64_t p2 = 0; p2 < g.ax[2].in; ++p2) {
            const int64_t p[3] = {p0, p1, p2};
            const float v = pool_grad_at(g, xp, dyp, n, c, p);
            const int64_t off = n * g.dxs_n + c * g.dxs_c + p0 * g.dxs[0] + p1 * g.dxs[1] +
                                p2 * g.dxs[2];
            blend_store(DType::F32, dx, off, alpha, v, beta);
          }
  return Status();
}

}  // namespace cpu

}  // namespace jet
