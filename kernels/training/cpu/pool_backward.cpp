// CPU pooling backward: every dx element gathers its gradient from the windows that contain it
// (kernels/training/pool_grad.h, shared with CUDA); MAX recomputes each window's argmax from x.
#include "../../cpu/cpu_common.h"
#include "../backend.h"
#include "../pool_grad.h"

namespace jet {
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
