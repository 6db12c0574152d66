// softmax_forward: validation and backend dispatch.
#include "backend.h"
#include "check.h"

namespace jet {

Status softmax_forward(const Handle& handle, SoftmaxAlgo algo, SoftmaxMode mode, float alpha,
                       const TensorDesc& x_desc, const void* x, float beta,
                       const TensorDesc& y_desc, void* y) {
  const char* fn = "softmax_forward";
  const int a = static_cast<int>(algo);
  if (a < 0 || a > static_cast<int>(SoftmaxAlgo::LOG))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown algorithm %d", fn, a);
  const int m = static_cast<int>(mode);
  if (m < 0 || m > static_cast<int>(SoftmaxMode::CHANNEL))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown mode %d", fn, m);
  JET_TRY(in_routine(fn, x_desc.validate_spatial("x")));
  JET_TRY(in_routine(fn, y_desc.validate_spatial("y")));
  JET_TRY(check_same_dims(fn, x_desc, "x", y_desc, "y"));
  JET_TRY(check_same_dtype(fn, x_desc, "x", y_desc, "y"));
  JET_TRY(check_ptr(fn, x, "x"));
  JET_TRY(check_ptr(fn, y, "y"));
  JET_TRY(check_in_place(fn, x, x_desc, "x", y, y_desc, "y"));
  if (handle.backend() == Backend::CPU)
    return cpu::softmax_forward(algo, mode, alpha, x_desc, x, beta, y_desc, y);
  return cuda_not_available(fn);
}

}  // namespace jet
