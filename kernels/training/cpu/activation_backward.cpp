// activation_backward: validation and backend dispatch; below, the CPU backend.
//
// CPU activation backward: one pass over the elements, dx = alpha * dy * act'(x) + beta * dx.

#include "../api/train_check.h"
#include "../../cpu/cpu_common.h"
#include "../activation_grad.h"
#include "../backend.h"

namespace jet {

JET_BACKEND_ENTRIES(activation_backward, const ActivationDesc& act, float alpha,
                    const TensorDesc& x_desc, const void* x, const TensorDesc& dy_desc,
                    const void* dy, float beta, const TensorDesc& dx_desc, void* dx);

Status activation_backward(const Handle& handle, const ActivationDesc& act, float alpha,
                           const TensorDesc& x_desc, const void* x, const TensorDesc& dy_desc,
                           const void* dy, float beta, const TensorDesc& dx_desc, void* dx) {
  const char* fn = "activation_backward";
  JET_TRY(in_routine(fn, act.validate()));
  JET_TRY(check_train_tensor(fn, Ranks::ANY, x_desc, x, "x"));
  JET_TRY(check_train_tensor(fn, Ranks::ANY, dy_desc, dy, "dy"));
  JET_TRY(check_train_tensor(fn, Ranks::ANY, dx_desc, dx, "dx"));
  JET_TRY(check_dims_as(fn, dy_desc, "dy", x_desc, "x"));
  JET_TRY(check_dims_as(fn, dx_desc, "dx", x_desc, "x"));
  // Element by element: dx may overwrite dy or x when it has the same layout.
  JET_TRY(check_in_place(fn, dy, dy_desc, "dy", dx, dx_desc, "dx"));
  JET_TRY(check_in_place(fn, x, x_desc, "x", dx, dx_desc, "dx"));
  if (handle.backend() == Backend::CPU)
    return cpu::activation_backward(act, alpha, x_desc, x, dy_desc, dy, beta, dx_desc, dx);
#if defined(JET_HAVE_CUDA)
  return cuda::activation_backward(handle, act, alpha, x_desc, x, dy_desc, dy, beta, dx_desc, dx);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {

Status activation_backward(const ActivationDesc& act, float alpha, const TensorDesc& x_desc,
                           const void* x, const TensorDesc& dy_desc, const void* dy, float beta,
                           const TensorDesc& dx_desc, void* dx) {
  const float* xp = static_cast<const float*>(x);
  const float* dyp = static_cast<const float*>(dy);
  StridedWalk w(x_desc.rank(), x_desc.dims(), x_desc.strides(), dy_desc.strides(),
                dx_desc.strides());
  do {
    const float g = dyp[w.off[1]] * activation_derivative(act, xp[w.off[0]]);
    blend_store(DType::F32, dx, w.off[2], alpha, g, beta);
  } while (w.next());
  return Status();
}

}  // namespace cpu

}  // namespace jet
