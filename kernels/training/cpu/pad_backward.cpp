// CPU pad backward: each dx element gathers from the dy positions that read it
// (kernels/training/pad_grad.h, shared with CUDA).
#include "../../cpu/cpu_common.h"
#include "../backend.h"

namespace jet {
namespace cpu {

Status pad_backward(const PadGradGeom& g, float alpha, const void* dy, float beta,
                    const TensorDesc& dx_desc, void* dx) {
  const float* dyp = static_cast<const float*>(dy);
  StridedWalk w(dx_desc.rank(), dx_desc.dims(), dx_desc.strides());
  do {
    blend_store(DType::F32, dx, w.off[0], alpha, pad_grad_at(g, dyp, w.idx), beta);
  } while (w.next());
  return Status();
}

}  // namespace cpu
}  // namespace jet
