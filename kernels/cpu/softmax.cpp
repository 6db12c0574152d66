// softmax_forward: validation and backend dispatch; below, the CPU backend.
//
// CPU softmax: the tensor splits into independent groups (INSTANCE: all of C and the spatial
// dims for each N; CHANNEL: the C values at each N and spatial position). Each group takes three
// passes over x: the max, the sum of exponentials (in double), then the outputs. Nothing is kept
// between passes but two scalars, so x == y (same layout) works in place.

#include <algorithm>
#include <cmath>

#include "../api/backend.h"
#include "../api/check.h"
#include "cpu_common.h"
#include "../common/small_sort.h"

namespace jet {

JET_BACKEND_ENTRIES(softmax_forward, SoftmaxAlgo algo, SoftmaxMode mode, float alpha,
                    const TensorDesc& x_desc, const void* x, float beta, const TensorDesc& y_desc,
                    void* y);

Status softmax_forward(const Handle& handle, SoftmaxAlgo algo, SoftmaxMode mode, float alpha,
                       const TensorDesc& x_desc, const void* x, float beta,
                       const TensorDesc& y_desc, void* y) {
  const char* fn = "softmax_forward";
  const int a = static_cast<int>(algo);
  if (!enum_in_range<SoftmaxAlgo>(a))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown algorithm %d", fn, a);
  const int m = static_cast<int>(mode);
  if (!enum_in_range<SoftmaxMode>(m))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown mode %d", fn, m);
  JET_RETURN_IF_ERROR(check_elementwise_io(fn, Ranks::SPATIAL, x_desc, x, y_desc, y));
  if (handle.backend() == Backend::CPU)
    return cpu::softmax_forward(algo, mode, alpha, x_desc, x, beta, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::softmax_forward(handle, algo, mode, alpha, x_desc, x, beta, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {

namespace {

// The dims of one group and of the positions that enumerate the groups, each with x's and y's
// strides.
struct Dims {
  int rank = 0;
  int64_t dims[kMaxRank];
  int64_t x_strides[kMaxRank];
  int64_t y_strides[kMaxRank];

  void add(const TensorDesc& x_desc, const TensorDesc& y_desc, int i) {
    dims[rank] = x_desc.dim(i);
    x_strides[rank] = x_desc.stride(i);
    y_strides[rank] = y_desc.stride(i);
    ++rank;
  }
};

void softmax_group(SoftmaxAlgo algo, DType t, float alpha, float beta, const Dims& g,
                   const void* x, int64_t x_base, void* y, int64_t y_base) {
  float max_v = 0.f;  // FAST: no max subtraction
  if (algo != SoftmaxAlgo::FAST) {
    StridedWalk w(g.rank, g.dims, g.x_strides);
    max_v = load(t, x, x_base + w.off[0]);
    do {
      max_v = std::max(max_v, load(t, x, x_base + w.off[0]));
    } while (w.next());
  }
  double sum = 0.0;
  {
    StridedWalk w(g.rank, g.dims, g.x_strides);
    do {
      sum += std::exp(load(t, x, x_base + w.off[0]) - max_v);
    } while (w.next());
  }
  StridedWalk w(g.rank, g.dims, g.x_strides, g.y_strides);
  if (algo == SoftmaxAlgo::LOG) {
    const double log_sum = std::log(sum);
    do {
      const double v = static_cast<double>(load(t, x, x_base + w.off[0])) - max_v - log_sum;
      blend_store(t, y, y_base + w.off[1], alpha, static_cast<float>(v), beta);
    } while (w.next());
  } else {
    const double inv_sum = 1.0 / sum;
    do {
      const float e = std::exp(load(t, x, x_base + w.off[0]) - max_v);
      blend_store(t, y, y_base + w.off[1], alpha, static_cast<float>(e * inv_sum), beta);
    } while (w.next());
  }
}

}  // namespace

Status softmax_forward(SoftmaxAlgo algo, SoftmaxMode mode, float alpha, const TensorDesc& x_desc,
                       const void* x, float beta, const TensorDesc& y_desc, void* y) {
  const DType t = x_desc.dtype();
  Dims group, outer;
  outer.add(x_desc, y_desc, 0);
  if (mode == SoftmaxMode::CHANNEL) {
    group.add(x_desc, y_desc, 1);
    for (int i = 2; i < x_desc.rank(); ++i) outer.add(x_desc, y_desc, i);
  } else {
    // Walk the group in x's memory order (dims by decreasing stride); the order only changes
    // the rounding of the sum.
    int order[kMaxRank];
    int n = 0;
    for (int i = 1; i < x_desc.rank(); ++i) order[n++] = i;
    small_stable_sort(order, n,
                     [&](int a, int b) { return x_desc.stride(a) > x_desc.stride(b); });
    for (int j = 0; j < n; ++j) group.add(x_desc, y_desc, order[j]);
  }
  StridedWalk w(outer.rank, outer.dims, outer.x_strides, outer.y_strides);
  do {
    softmax_group(algo, t, alpha, beta, group, x, w.off[0], y, w.off[1]);
  } while (w.next());
  return Status();
}

}  // namespace cpu

}  // namespace jet
