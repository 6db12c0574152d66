// CPU softmax backward. The tensor splits into the forward's groups (INSTANCE: C and the spatial
// dims per N; CHANNEL: C at each N and spatial position); per group one pass takes the sum
// (sum(dy * y), or sum(dy) for LOG) in double, a second writes dx. Only the sum is kept between
// the passes, so dx may overwrite dy or y (same layout).
#include <cmath>

#include "../../cpu/cpu_common.h"
#include "../backend.h"

namespace jet {
namespace cpu {

namespace {

// Dims with the strides of y, dy and dx.
struct Dims3 {
  int rank = 0;
  int64_t dims[kMaxRank];
  int64_t s[3][kMaxRank];

  void add(const TensorDesc& y, const TensorDesc& dy, const TensorDesc& dx, int i) {
    dims[rank] = y.dim(i);
    s[0][rank] = y.stride(i);
    s[1][rank] = dy.stride(i);
    s[2][rank] = dx.stride(i);
    ++rank;
  }
};

}  // namespace

Status softmax_backward(SoftmaxAlgo algo, SoftmaxMode mode, float alpha, const TensorDesc& y_desc,
                        const void* y, const TensorDesc& dy_desc, const void* dy, float beta,
                        const TensorDesc& dx_desc, void* dx) {
  const float* yp = static_cast<const float*>(y);
  const float* dyp = static_cast<const float*>(dy);
  Dims3 group, outer;
  outer.add(y_desc, dy_desc, dx_desc, 0);
  for (int i = 1; i < y_desc.rank(); ++i) {
    if (mode == SoftmaxMode::CHANNEL && i >= 2)
      outer.add(y_desc, dy_desc, dx_desc, i);
    else
      group.add(y_desc, dy_desc, dx_desc, i);
  }
  const bool log = algo == SoftmaxAlgo::LOG;
  StridedWalk o(outer.rank, outer.dims, outer.s[0], outer.s[1], outer.s[2]);
  do {
    double sum = 0.0;
    {
      StridedWalk g(group.rank, group.dims, group.s[0], group.s[1]);
      do {
        const double d = dyp[o.off[1] + g.off[1]];
        sum += log ? d : d * yp[o.off[0] + g.off[0]];
      } while (g.next());
    }
    StridedWalk g(group.rank, group.dims, group.s[0], group.s[1], group.s[2]);
    do {
      const double yv = yp[o.off[0] + g.off[0]], d = dyp[o.off[1] + g.off[1]];
      const double v = log ? d - std::exp(yv) * sum : yv * (d - sum);
      blend_store(DType::F32, dx, o.off[2] + g.off[2], alpha, static_cast<float>(v), beta);
    } while (g.next());
  } while (o.next());
  return Status();
}

}  // namespace cpu
}  // namespace jet
