// lrn_cross_channel_backward: validation and backend dispatch; below, the CPU backend.
//
// CPU LRN backward: each dx element from kernels/training/lrn_grad.h (shared with CUDA).

#include "../api/train_check.h"
#include "../../cpu/cpu_common.h"
#include "../backend.h"

namespace jet {

JET_BACKEND_ENTRIES(lrn_cross_channel_backward, const LrnDesc& lrn, float alpha,
                    const TensorDesc& x_desc, const void* x, const TensorDesc& dy_desc,
                    const void* dy, float beta, const TensorDesc& dx_desc, void* dx);

LrnGradParams lrn_grad_params(const LrnDesc& lrn, int64_t channels) {
  LrnGradParams p;
  p.channels = channels;
  p.before = (lrn.n - 1) / 2;
  p.after = lrn.n - 1 - p.before;
  p.k = static_cast<float>(lrn.k);
  p.scale = static_cast<float>(lrn.alpha / static_cast<double>(lrn.n));
  p.power = static_cast<float>(lrn.beta);
  return p;
}

Status lrn_cross_channel_backward(const Handle& handle, const LrnDesc& lrn, float alpha,
                                  const TensorDesc& x_desc, const void* x,
                                  const TensorDesc& dy_desc, const void* dy, float beta,
                                  const TensorDesc& dx_desc, void* dx) {
  const char* fn = "lrn_cross_channel_backward";
  JET_TRY(in_routine(fn, lrn.validate()));
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, x_desc, x, "x"));
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, dy_desc, dy, "dy"));
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, dx_desc, dx, "dx"));
  JET_TRY(check_dims_as(fn, dy_desc, "dy", x_desc, "x"));
  JET_TRY(check_dims_as(fn, dx_desc, "dx", x_desc, "x"));
  // Each dx element reads x and dy across its channel window: not in place.
  if (dx == dy || dx == x)
    return make_status(StatusCode::BAD_PARAM, "%s: dx must not be the same buffer as %s", fn,
                       dx == dy ? "dy" : "x");
  if (handle.backend() == Backend::CPU)
    return cpu::lrn_cross_channel_backward(lrn, alpha, x_desc, x, dy_desc, dy, beta, dx_desc, dx);
#if defined(JET_HAVE_CUDA)
  return cuda::lrn_cross_channel_backward(handle, lrn, alpha, x_desc, x, dy_desc, dy, beta,
                                          dx_desc, dx);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {

Status lrn_cross_channel_backward(const LrnDesc& lrn, float alpha, const TensorDesc& x_desc,
                                  const void* x, const TensorDesc& dy_desc, const void* dy,
                                  float beta, const TensorDesc& dx_desc, void* dx) {
  const LrnGradParams p = lrn_grad_params(lrn, x_desc.dim(1));
  const float* xp = static_cast<const float*>(x);
  const float* dyp = static_cast<const float*>(dy);
  const int64_t xs_c = x_desc.stride(1), dys_c = dy_desc.stride(1), dxs_c = dx_desc.stride(1);
  // Every position (N and the spatial dims), then the channels there.
  int64_t dims[kMaxRank], s[3][kMaxRank];
  int rank = 0;
  for (int i = 0; i < x_desc.rank(); ++i) {
    if (i == 1) continue;
    dims[rank] = x_desc.dim(i);
    s[0][rank] = x_desc.stride(i);
    s[1][rank] = dy_desc.stride(i);
    s[2][rank++] = dx_desc.stride(i);
  }
  StridedWalk w(rank, dims, s[0], s[1], s[2]);
  do {
    const float* xb = xp + w.off[0];
    const float* dyb = dyp + w.off[1];
    const auto x_at = [&](int64_t c) { return xb[c * xs_c]; };
    const auto dy_at = [&](int64_t c) { return dyb[c * dys_c]; };
    for (int64_t c = 0; c < p.channels; ++c)
      blend_store(DType::F32, dx, w.off[2] + c * dxs_c, alpha, lrn_grad_at(p, x_at, dy_at, c),
                  beta);
  } while (w.next());
  return Status();
}

}  // namespace cpu

}  // namespace jet
