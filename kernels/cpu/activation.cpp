// CPU activation: one pass over the elements in x's index order.
#include "../api/backend.h"
#include "../common/activation_math.h"
#include "cpu_common.h"

namespace jet {
namespace cpu {

Status activation_forward(const ActivationDesc& act, float alpha, const TensorDesc& x_desc,
                          const void* x, float beta, const TensorDesc& y_desc, void* y) {
  const DType t = x_desc.dtype();
  StridedWalk w(x_desc.rank(), x_desc.dims(), x_desc.strides(), y_desc.strides());
  do {
    const float v = apply_activation(act, load(t, x, w.off[0]));
    blend_store(t, y, w.off[1], alpha, v, beta);
  } while (w.next());
  return Status();
}

}  // namespace cpu
}  // namespace jet
