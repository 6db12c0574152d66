// CPU resize backward: each dx element from kernels/training/resize_grad.h (shared with CUDA).
#include "../../cpu/cpu_common.h"
#include "../backend.h"

namespace jet {
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
