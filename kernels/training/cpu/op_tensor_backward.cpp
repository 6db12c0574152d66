// op_tensor_backward and reduce_backward: validation and backend dispatch; below, the CPU backend.
//
// CPU op_tensor backward: for each element of the operand's gradient, a double sum over the dims
// where the operand broadcasts (kernels/training/broadcast_grad.h) of dc times the op's partial
// derivative (train_math.h, shared with CUDA).

#include "../api/train_check.h"
#include "../../cpu/cpu_common.h"
#include "../backend.h"
#include "../broadcast_grad.h"

namespace jet {

JET_BACKEND_ENTRIES(op_tensor_backward, const OpTensorGrad& g, const TensorDesc& a_desc,
                    const void* a, const TensorDesc& b_desc, const void* b,
                    const TensorDesc& dc_desc, const void* dc, const TensorDesc& dt_desc, void* dt);

Status op_tensor_backward(const Handle& handle, TensorOp op, float alpha1,
                          const TensorDesc& a_desc, const void* a, float alpha2,
                          const TensorDesc& b_desc, const void* b, const TensorDesc& dc_desc,
                          const void* dc, float alpha, float beta, const TensorDesc& da_desc,
                          void* da, const TensorDesc& db_desc, void* db) {
  const char* fn = "op_tensor_backward";
  const int op_value = static_cast<int>(op);
  if (!enum_in_range<TensorOp>(op_value))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown tensor op %d", fn, op_value);
  JET_TRY(check_train_tensor(fn, Ranks::ANY, dc_desc, dc, "dc"));
  JET_TRY(check_train_tensor(fn, Ranks::ANY, a_desc, a, "a"));
  JET_TRY(check_train_tensor(fn, Ranks::ANY, b_desc, b, "b"));
  const int rank = dc_desc.rank();
  const TensorDesc aa = align_rank(a_desc, rank), ba = align_rank(b_desc, rank);
  JET_TRY(check_broadcast(fn, aa, "a", dc_desc, "dc"));
  JET_TRY(check_broadcast(fn, ba, "b", dc_desc, "dc"));
  if (!da && !db) return make_status(StatusCode::BAD_PARAM, "%s: da and db are both null", fn);
  void* grads[2] = {da, db};
  const TensorDesc* grad_descs[2] = {&da_desc, &db_desc};
  const TensorDesc* operands[2] = {&a_desc, &b_desc};
  const char* names[2] = {"da", "db"};
  for (int t = 0; t < 2; ++t) {
    if (!grads[t]) continue;
    JET_TRY(check_train_tensor(fn, Ranks::ANY, *grad_descs[t], grads[t], names[t]));
    JET_TRY(check_dims_as(fn, *grad_descs[t], names[t], *operands[t], t ? "b" : "a"));
    // Each gradient element is summed from dc, a and b before it is written.
    if (grads[t] == dc || grads[t] == a || grads[t] == b || grads[t] == grads[1 - t])
      return make_status(StatusCode::BAD_PARAM,
                         "%s: %s must not be the same buffer as a, b, dc or the other gradient",
                         fn, names[t]);
  }
  for (int t = 0; t < 2; ++t) {
    if (!grads[t]) continue;
    const OpTensorGrad g{op, alpha1, alpha2, alpha, beta, t};
    const TensorDesc dt = align_rank(*grad_descs[t], rank);
    void* out = grads[t];
    if (handle.backend() == Backend::CPU) {
      JET_TRY(cpu::op_tensor_backward(g, aa, a, ba, b, dc_desc, dc, dt, out));
    } else {
#if defined(JET_HAVE_CUDA)
      JET_TRY(cuda::op_tensor_backward(handle, g, aa, a, ba, b, dc_desc, dc, dt, out));
#else
      return cuda_not_available(fn);
#endif
    }
  }
  return Status();
}

Status reduce_backward(const Handle& handle, ReduceOp op, float alpha, const TensorDesc& dy_desc,
                       const void* dy, float beta, const TensorDesc& dx_desc, void* dx) {
  const char* fn = "reduce_backward";
  if (op != ReduceOp::SUM && op != ReduceOp::MEAN)
    return make_status(StatusCode::NOT_SUPPORTED,
                       "%s: only SUM and MEAN have a backward so far (op %d)", fn,
                       static_cast<int>(op));
  JET_TRY(check_train_tensor(fn, Ranks::ANY, dy_desc, dy, "dy"));
  JET_TRY(check_train_tensor(fn, Ranks::ANY, dx_desc, dx, "dx"));
  JET_TRY(check_broadcast(fn, dy_desc, "dy", dx_desc, "dx"));
  if (dx == dy)
    return make_status(StatusCode::BAD_PARAM, "%s: dx must not be the same buffer as dy", fn);
  const double reduced = static_cast<double>(dx_desc.elements() / dy_desc.elements());
  const float scale = op == ReduceOp::MEAN ? static_cast<float>(1.0 / reduced) : 1.f;
  return in_routine(fn, add_tensor(handle, alpha * scale, dy_desc, dy, beta, dx_desc, dx));
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

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
