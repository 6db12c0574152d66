// softmax_backward: validation and backend dispatch; below, the CPU backend.
//
// CPU softmax backward. The tensor splits into the forward's groups (INSTANCE: C and the spatial
// dims per N; CHANNEL: C at each N and spatial position); per group one pass takes the sum
// (sum(dy * y), or sum(dy) for LOG) in double, a second writes dx. Only the sum is kept between
// the passes, so dx may overwrite dy or y (same layout).

#include <cmath>

#include "../api/train_check.h"
#include "../../cpu/cpu_common.h"
#include "../backend.h"

namespace jet {

JET_BACKEND_ENTRIES(softmax_backward, SoftmaxAlgo algo, SoftmaxMode mode, float alpha,
                    const TensorDesc& y_desc, const void* y, const TensorDesc& dy_desc,
                    const void* dy, float beta, const TensorDesc& dx_desc, void* dx);

Status softmax_backward(const Handle& handle, SoftmaxAlgo algo, SoftmaxMode mode, float alpha,
                        const TensorDesc& y_desc, const void* y, const TensorDesc& dy_desc,
                        const void* dy, float beta, const TensorDesc& dx_desc, void* dx) {
  const char* fn = "softmax_backward";
  const int a = static_cast<int>(algo);
  if (a < 0 || a > static_cast<int>(SoftmaxAlgo::LOG))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown algorithm %d", fn, a);
  const int m = static_cast<int>(mode);
  if (m < 0 || m > static_cast<int>(SoftmaxMode::CHANNEL))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown mode %d", fn, m);
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, y_desc, y, "y"));
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, dy_desc, dy, "dy"));
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, dx_desc, dx, "dx"));
  JET_TRY(check_dims_as(fn, dy_desc, "dy", y_desc, "y"));
  JET_TRY(check_dims_as(fn, dx_desc, "dx", y_desc, "y"));
  // Each group's sum is taken before any of its dx is written, and dx[i] reads only y[i] and
  // dy[i] after that: dx may overwrite dy or y when it has the same layout.
  JET_TRY(check_in_place(fn, dy, dy_desc, "dy", dx, dx_desc, "dx"));
  JET_TRY(check_in_place(fn, y, y_desc, "y", dx, dx_desc, "dx"));
  if (handle.backend() == Backend::CPU)
    return cpu::softmax_backward(algo, mode, alpha, y_desc, y, dy_desc, dy, beta, dx_desc, dx);
#if defined(JET_HAVE_CUDA)
  return cuda::softmax_backward(handle, algo, mode, alpha, y_desc, y, dy_desc, dy, beta, dx_desc,
                                dx);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

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
