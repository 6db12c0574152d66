// CPU PReLU: one pass over x's index space, the slope read through broadcast strides (0 on the
// dims where it has size 1), so per-channel, scalar and full-shape slopes share one path.
#include "../api/backend.h"
#include "cpu_common.h"

namespace jet {
namespace cpu {

Status prelu_forward(float alpha, const TensorDesc& x_desc, const void* x,
                     const TensorDesc& slope_desc, const void* slope, float beta,
                     const TensorDesc& y_desc, void* y) {
  const DType t = x_desc.dtype();
  int64_t slope_strides[kMaxRank];
  broadcast_strides(slope_desc, slope_strides);
  StridedWalk w(x_desc.rank(), x_desc.dims(), x_desc.strides(), slope_strides, y_desc.strides());
  do {
    const float v = load(t, x, w.off[0]);
    // Written as "not negative" so that a NaN x goes through the slope branch and stays NaN.
    const float r = v >= 0.f ? v : load(t, slope, w.off[1]) * v;
    blend_store(t, y, w.off[2], alpha, r, beta);
  } while (w.next());
  return Status();
}

}  // namespace cpu
}  // namespace jet
