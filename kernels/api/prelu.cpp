// prelu_forward: validation and backend dispatch.
#include "backend.h"
#include "check.h"

namespace jet {

Status prelu_forward(const Handle& handle, float alpha, const TensorDesc& x_desc, const void* x,
                     const TensorDesc& slope_desc, const void* slope, float beta,
                     const TensorDesc& y_desc, void* y) {
  const char* fn = "prelu_forward";
  JET_TRY(in_routine(fn, x_desc.validate("x")));
  JET_TRY(in_routine(fn, slope_desc.validate("slope")));
  JET_TRY(in_routine(fn, y_desc.validate("y")));
  JET_TRY(check_same_dims(fn, x_desc, "x", y_desc, "y"));
  JET_TRY(check_broadcast(fn, slope_desc, "slope", x_desc, "x"));
  JET_TRY(check_same_dtype(fn, x_desc, "x", y_desc, "y"));
  JET_TRY(check_same_dtype(fn, slope_desc, "slope", x_desc, "x"));
  JET_TRY(check_ptr(fn, x, "x"));
  JET_TRY(check_ptr(fn, slope, "slope"));
  JET_TRY(check_ptr(fn, y, "y"));
  JET_TRY(check_in_place(fn, x, x_desc, "x", y, y_desc, "y"));
  if (handle.backend() == Backend::CPU)
    return cpu::prelu_forward(alpha, x_desc, x, slope_desc, slope, beta, y_desc, y);
  return cuda_not_available(fn);
}

}  // namespace jet
