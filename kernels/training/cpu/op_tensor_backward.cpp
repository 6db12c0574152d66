// CPU op_tensor backward: for each element of the operand's gradient, a double sum over the dims
// where the operand broadcasts (kernels/training/broadcast_grad.h) of dc times the op's partial
// derivative (train_math.h, shared with CUDA).
#include "../../cpu/cpu_common.h"
#include "../backend.h"
#include "../broadcast_grad.h"

namespace jet {
namespace cpu {

Status op_tensor_backward(const OpTensorGrad& g, const TensorDesc& a_desc, const void* a,
                          const TensorDesc& b_desc, const void* b, const TensorDesc& dc_desc,
                          const void* dc, const TensorDesc& dt_desc, void* dt) {
  const BroadcastGradGeom geo = make_broadcast_grad_geom(a_desc, b_desc, dc_desc, dt_desc, g.which);
  const float* ap = static_cast<const float*>(a);
  const float* bp = static_cast<const float*>(b);
  const float* dcp = static_cast<const float*>(dc);
  const float scale = g.which == 0 ? g.alpha1 : g.alpha2;
  StridedWalk kept(geo.kept_rank, geo.kept_dims, geo.kept_s[0], geo.kept_s[1], geo.kept_s[2]);
  StridedWalk out(geo.kept_rank, geo.kept_dims, geo.kept_s[3]);
  do {
    double acc = 0.0;
    StridedWalk r(geo.red_rank, geo.red_dims, geo.red_s[0], geo.red_s[1], geo.red_s[2]);
    do {
      float du, dv;
      op_tensor_partials(g.op, g.alpha1 * ap[kept.off[1] + r.off[1]],
                         g.alpha2 * bp[kept.off[2] + r.off[2]], &du, &dv);
      acc += static_cast<double>(dcp[kept.off[0] + r.off[0]]) * (g.which == 0 ? du : dv);
    } while (r.next());
    blend_store(DType::F32, dt, out.off[0], g.alpha * scale, static_cast<float>(acc), g.beta);
    out.next();
  } while (kept.next());
  return Status();
}

}  // namespace cpu
}  // namespace jet
