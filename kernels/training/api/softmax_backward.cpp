// softmax_backward: validation and backend dispatch.
#include "train_check.h"

namespace jet {

JET_BACKEND_ENTRIES(softmax_backward, SoftmaxAlgo algo, SoftmaxMode mode, float alpha,
                    const TensorDesc& y_desc, const void* y, const TensorDesc& dy_desc,
                    const void* dy, float beta, const TensorDesc& dx_desc, void* dx);

Status softmax_backward(const Handle& handle, SoftmaxAlgo algo, SoftmaxMode mode, float alpha,
                        const TensorDesc& y_desc, const void* y, const TensorDesc& dy_desc,
                        const void* dy, float beta, const TensorDesc& dx_desc, void* dx) {
  const char* fn = "softmax_backward";
  const int a = static_cast<int>(algo);
  if (a < 0 || a > static_cast<int>(SoftmaxAlgo::LOG))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown algorithm %d", fn, a);
  const int m = static_cast<int>(mode);
  if (m < 0 || m > static_cast<int>(SoftmaxMode::CHANNEL))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown mode %d", fn, m);
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, y_desc, y, "y"));
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, dy_desc, dy, "dy"));
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, dx_desc, dx, "dx"));
  JET_TRY(check_dims_as(fn, dy_desc, "dy", y_desc, "y"));
  JET_TRY(check_dims_as(fn, dx_desc, "dx", y_desc, "y"));
  // Each group's sum is taken before any of its dx is written, and dx[i] reads only y[i] and
  // dy[i] after that: dx may overwrite dy or y when it has the same layout.
  JET_TRY(check_in_place(fn, dy, dy_desc, "dy", dx, dx_desc, "dx"));
  JET_TRY(check_in_place(fn, y, y_desc, "y", dx, dx_desc, "dx"));
  if (handle.backend() == Backend::CPU)
    return cpu::softmax_backward(algo, mode, alpha, y_desc, y, dy_desc, dy, beta, dx_desc, dx);
#if defined(JET_HAVE_CUDA)
  return cuda::softmax_backward(handle, algo, mode, alpha, y_desc, y, dy_desc, dy, beta, dx_desc,
                                dx);
#else
  return cuda_not_available(fn);
#endif
}

}  // namespace jet
