// prelu_forward: validation and backend dispatch; below, the CPU backend.
//
// CPU PReLU: one pass over x's index space, the slope read through broadcast strides (0 on the
// dims where it has size 1), so per-channel, scalar and full-shape slopes share one path.

#include "../api/backend.h"
#include "../api/check.h"
#include "cpu_common.h"

namespace jet {

JET_BACKEND_ENTRIES(prelu_forward, float alpha, const TensorDesc& x_desc, const void* x,
                    const TensorDesc& slope_desc, const void* slope, float beta,
                    const TensorDesc& y_desc, void* y);

Status prelu_forward(const Handle& handle, float alpha, const TensorDesc& x_desc, const void* x,
                     const TensorDesc& slope_desc, const void* slope, float beta,
                     const TensorDesc& y_desc, void* y) {
  const char* fn = "prelu_forward";
  JET_RETURN_IF_ERROR(check_elementwise_io(fn, Ranks::ANY, x_desc, x, y_desc, y));
  JET_RETURN_IF_ERROR(in_routine(fn, slope_desc.validate("slope")));
  JET_RETURN_IF_ERROR(check_broadcast(fn, slope_desc, "slope", x_desc, "x"));
  JET_RETURN_IF_ERROR(check_same_dtype(fn, slope_desc, "slope", x_desc, "x"));
  JET_RETURN_IF_ERROR(check_ptr(fn, slope, "slope"));
  if (handle.backend() == Backend::CPU)
    return cpu::prelu_forward(alpha, x_desc, x, slope_desc, slope, beta, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::prelu_forward(handle, alpha, x_desc, x, slope_desc, slope, beta, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

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
