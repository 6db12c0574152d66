// prelu_forward: validation and backend dispatch.
#include "backend.h"
#include "check.h"

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

}  // namespace jet
