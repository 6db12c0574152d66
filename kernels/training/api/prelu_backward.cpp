// prelu_backward: validation and backend dispatch.
#include "train_check.h"

namespace jet {

JET_BACKEND_ENTRIES(prelu_backward, float alpha, const TensorDesc& x_desc, const void* x,
                    const TensorDesc& slope_desc, const void* slope, const TensorDesc& dy_desc,
                    const void* dy, float beta, const TensorDesc& dx_desc, void* dx,
                    float alpha_param, float beta_param, const TensorDesc& dslope_desc,
                    void* dslope);

Status prelu_backward(const Handle& handle, float alpha, const TensorDesc& x_desc, const void* x,
                      const TensorDesc& slope_desc, const void* slope,
                      const TensorDesc& dy_desc, const void* dy, float beta,
                      const TensorDesc& dx_desc, void* dx, float alpha_param, float beta_param,
                      const TensorDesc& dslope_desc, void* dslope) {
  const char* fn = "prelu_backward";
  JET_TRY(check_train_tensor(fn, Ranks::ANY, x_desc, x, "x"));
  JET_TRY(check_train_tensor(fn, Ranks::ANY, slope_desc, slope, "slope"));
  JET_TRY(check_broadcast(fn, slope_desc, "slope", x_desc, "x"));
  JET_TRY(check_train_tensor(fn, Ranks::ANY, dy_desc, dy, "dy"));
  JET_TRY(check_dims_as(fn, dy_desc, "dy", x_desc, "x"));
  if (!dx && !dslope)
    return make_status(StatusCode::BAD_PARAM, "%s: dx and dslope are both null", fn);
  if (dx) {
    JET_TRY(check_train_tensor(fn, Ranks::ANY, dx_desc, dx, "dx"));
    JET_TRY(check_dims_as(fn, dx_desc, "dx", x_desc, "x"));
    JET_TRY(check_in_place(fn, dy, dy_desc, "dy", dx, dx_desc, "dx"));
    JET_TRY(check_in_place(fn, x, x_desc, "x", dx, dx_desc, "dx"));
  }
  if (dslope) {
    JET_TRY(check_train_tensor(fn, Ranks::ANY, dslope_desc, dslope, "dslope"));
    JET_TRY(check_dims_as(fn, dslope_desc, "dslope", slope_desc, "slope"));
    // dslope is summed from all of x and dy before dx is written: they must not share memory.
    if (dslope == dy || dslope == x || dslope == dx)
      return make_status(StatusCode::BAD_PARAM,
                         "%s: dslope must not be the same buffer as x, dy or dx", fn);
  }
  if (handle.backend() == Backend::CPU)
    return cpu::prelu_backward(alpha, x_desc, x, slope_desc, slope, dy_desc, dy, beta, dx_desc,
                               dx, alpha_param, beta_param, dslope_desc, dslope);
#if defined(JET_HAVE_CUDA)
  return cuda::prelu_backward(handle, alpha, x_desc, x, slope_desc, slope, dy_desc, dy, beta,
                              dx_desc, dx, alpha_param, beta_param, dslope_desc, dslope);
#else
  return cuda_not_available(fn);
#endif
}

}  // namespace jet
