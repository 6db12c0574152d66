// lrn_cross_channel_backward: validation and backend dispatch.
#include "train_check.h"

namespace jet {

JET_BACKEND_ENTRIES(lrn_cross_channel_backward, const LrnDesc& lrn, float alpha,
                    const TensorDesc& x_desc, const void* x, const TensorDesc& dy_desc,
                    const void* dy, float beta, const TensorDesc& dx_desc, void* dx);

LrnGradParams lrn_grad_params(const LrnDesc& lrn, int64_t channels) {
  LrnGradParams p;
  p.channels = channels;
  p.before = (lrn.n - 1) / 2;
  p.after = lrn.n - 1 - p.before;
  p.k = static_cast<float>(lrn.k);
  p.scale = static_cast<float>(lrn.alpha / static_cast<double>(lrn.n));
  p.power = static_cast<float>(lrn.beta);
  return p;
}

Status lrn_cross_channel_backward(const Handle& handle, const LrnDesc& lrn, float alpha,
                                  const TensorDesc& x_desc, const void* x,
                                  const TensorDesc& dy_desc, const void* dy, float beta,
                                  const TensorDesc& dx_desc, void* dx) {
  const char* fn = "lrn_cross_channel_backward";
  JET_TRY(in_routine(fn, lrn.validate()));
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, x_desc, x, "x"));
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, dy_desc, dy, "dy"));
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, dx_desc, dx, "dx"));
  JET_TRY(check_dims_as(fn, dy_desc, "dy", x_desc, "x"));
  JET_TRY(check_dims_as(fn, dx_desc, "dx", x_desc, "x"));
  // Each dx element reads x and dy across its channel window: not in place.
  if (dx == dy || dx == x)
    return make_status(StatusCode::BAD_PARAM, "%s: dx must not be the same buffer as %s", fn,
                       dx == dy ? "dy" : "x");
  if (handle.backend() == Backend::CPU)
    return cpu::lrn_cross_channel_backward(lrn, alpha, x_desc, x, dy_desc, dy, beta, dx_desc, dx);
#if defined(JET_HAVE_CUDA)
  return cuda::lrn_cross_channel_backward(handle, lrn, alpha, x_desc, x, dy_desc, dy, beta,
                                          dx_desc, dx);
#else
  return cuda_not_available(fn);
#endif
}

}  // namespace jet
