// The geometry of a gradient that sums over an operand's broadcast dims (op_tensor_backward),
// shared by the CPU and CUDA backends: c's dims split into "kept" (the operand has them) and
// "reduced" (the operand is 1 there, c is not). Strides of dc, a and b (0 where a or b
// broadcasts) on both, and of the operand's gradient on the kept dims.
#pragma once

#include "jet/dnn/tensor.h"

namespace jet {

struct BroadcastGradGeom {
  int kept_rank = 0, red_rank = 0;
  int64_t kept_dims[kMaxRank] = {}, red_dims[kMaxRank] = {};
  int64_t kept_s[4][kMaxRank] = {};  // dc, a, b, dt
  int64_t red_s[3][kMaxRank] = {};   // dc, a, b
};

// a, b, dt rank-aligned with dc; `which` picks the operand (0: a, 1: b) whose gradient dt is.
inline BroadcastGradGeom make_broadcast_grad_geom(const TensorDesc& a, const TensorDesc& b,
                                                  const TensorDesc& dc, const TensorDesc& dt,
                                                  int which) {
  BroadcastGradGeom g;
  const TensorDesc& t = which == 0 ? a : b;
  for (int i = 0; i < dc.rank(); ++i) {
    const int64_t as = a.dim(i) == 1 ? 0 : a.stride(i), bs = b.dim(i) == 1 ? 0 : b.stride(i);
    if (t.dim(i) == dc.dim(i)) {
      const int k = g.kept_rank++;
      g.kept_dims[k] = dc.dim(i);
      g.kept_s[0][k] = dc.stride(i);
      g.kept_s[1][k] = as;
      g.kept_s[2][k] = bs;
      g.kept_s[3][k] = dt.stride(i);
    } else {
      const int r = g.red_rank++;
      g.red_dims[r] = dc.dim(i);
      g.red_s[0][r] = dc.stride(i);
      g.red_s[1][r] = as;
      g.red_s[2][r] = bs;
    }
  }
  return g;
}

}  // namespace jet
