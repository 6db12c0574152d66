// CPU activation backward: one pass over the elements, dx = alpha * dy * act'(x) + beta * dx.
#include "../../cpu/cpu_common.h"
#include "../activation_grad.h"
#include "../backend.h"

namespace jet {
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
