// prelu_backward: validation and backend dispatch; below, the CPU backend.
//
// CPU PReLU backward. dslope first (it reads dy, which dx may overwrite): for each slope element
// a double sum over the dims where the slope broadcasts; then dx in one pass over x's index
// space, the slope read through broadcast strides.

#include "../api/train_check.h"
#include "../../cpu/cpu_common.h"
#include "../backend.h"

namespace jet {

JET_BACKEND_ENTRIES(prelu_backward, float alpha, const TensorDesc& x_desc, const void* x,
                    const TensorDesc& slope_desc, const void* slope, const TensorDesc& dy_desc,
                    const void* dy, float beta, const TensorDesc& dx_desc, void* dx,
                    float alpha_param, float beta_param, const TensorDesc& dslope_desc,
                    void* dslope);

Status prelu_backward(const Handle& handle, float alpha, const TensorDesc& x_desc, const void* x,
                      const TensorDesc& slope_desc, const void* slope,
                      const TensorDesc& dy_desc, const void* dy, float beta,
                      const TensorDesc& dx_desc, void* dx, float alpha_param, float beta_param,
                      const TensorDesc& dslope_desc, void* dslope) {
  const char* fn = "prelu_backward";
  JET_TRY(check_train_tensor(fn, Ranks::ANY, x_desc, x, "x"));
  JET_TRY(check_train_tensor(fn, Ranks::ANY, slope_desc, slope, "slope"));
  JET_TRY(check_broadcast(fn, slope_desc, "slope", x_desc, "x"));
  JET_TRY(check_train_tensor(fn, Ranks::ANY, dy_desc, dy, "dy"));
  JET_TRY(check_dims_as(fn, dy_desc, "dy", x_desc, "x"));
  if (!dx && !dslope)
    return make_status(StatusCode::BAD_PARAM, "%s: dx and dslope are both null", fn);
  if (dx) {
    JET_TRY(check_train_tensor(fn, Ranks::ANY, dx_desc, dx, "dx"));
    JET_TRY(check_dims_as(fn, dx_desc, "dx", x_desc, "x"));
    JET_TRY(check_in_place(fn, dy, dy_desc, "dy", dx, dx_desc, "dx"));
    JET_TRY(check_in_place(fn, x, x_desc, "x", dx, dx_desc, "dx"));
  }
  if (dslope) {
    JET_TRY(check_train_tensor(fn, Ranks::ANY, dslope_desc, dslope, "dslope"));
    JET_TRY(check_dims_as(fn, dslope_desc, "dslope", slope_desc, "slope"));
    // dslope is summed from all of x and dy before dx is written: they must not share memory.
    if (dslope == dy || dslope == x || dslope == dx)
      return make_status(StatusCode::BAD_PARAM,
                         "%s: dslope must not be the same buffer as x, dy or dx", fn);
  }
  if (handle.backend() == Backend::CPU)
    return cpu::prelu_backward(alpha, x_desc, x, slope_desc, slope, dy_desc, dy, beta, dx_desc,
                               dx, alpha_param, beta_param, dslope_desc, dslope);
#if defined(JET_HAVE_CUDA)
  return cuda::prelu_backward(handle, alpha, x_desc, x, slope_desc, slope, dy_desc, dy, beta,
                              dx_desc, dx, alpha_param, beta_param, dslope_desc, dslope);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {

Status prelu_backward(float alpha, const TensorDesc& x_desc, const void* x,
                      const TensorDesc& slope_desc, const void* slope, const TensorDesc& dy_desc,
                      const void* dy, float beta, const TensorDesc& dx_desc, void* dx,
                      float alpha_param, float beta_param, const TensorDesc& dslope_desc,
                      void* dslope) {
  const float* xp = static_cast<const float*>(x);
  const float* sp = static_cast<const float*>(slope);
  const float* dyp = static_cast<const float*>(dy);
  if (dslope) {
    // kept: the slope's own dims (x, dy, dslope strides); reduced: where it broadcasts (x, dy).
    int64_t kd[kMaxRank], ks[3][kMaxRank], rd[kMaxRank], rs[2][kMaxRank];
    int kr = 0, rr = 0;
    for (int i = 0; i < x_desc.rank(); ++i) {
      if (slope_desc.dim(i) == x_desc.dim(i)) {
        kd[kr] = x_desc.dim(i);
        ks[0][kr] = x_desc.stride(i);
        ks[1][kr] = dy_desc.stride(i);
        ks[2][kr++] = dslope_desc.stride(i);
      } else {
        rd[rr] = x_desc.dim(i);
        rs[0][rr] = x_desc.stride(i);
        rs[1][rr++] = dy_desc.stride(i);
      }
    }
    StridedWalk k(kr, kd, ks[0], ks[1], ks[2]);
    do {
      double acc = 0.0;
      StridedWalk r(rr, rd, rs[0], rs[1]);
      do {
        const float v = xp[k.off[0] + r.off[0]];
        acc += v > 0.f ? 0.0 : static_cast<double>(v) * dyp[k.off[1] + r.off[1]];
      } while (r.next());
      blend_store(DType::F32, dslope, k.off[2], alpha_param, static_cast<float>(acc), beta_param);
    } while (k.next());
  }
  if (dx) {
    int64_t slope_strides[kMaxRank];
    broadcast_strides(slope_desc, slope_strides);
    StridedWalk w(x_desc.rank(), x_desc.dims(), x_desc.strides(), slope_strides, dy_desc.strides());
    StridedWalk o(x_desc.rank(), x_desc.dims(), dx_desc.strides());
    do {
      const float g = dyp[w.off[2]] * (xp[w.off[0]] > 0.f ? 1.f : sp[w.off[1]]);
      blend_store(DType::F32, dx, o.off[0], alpha, g, beta);
      o.next();
    } while (w.next());
  }
  return Status();
}

}  // namespace cpu

}  // namespace jet
