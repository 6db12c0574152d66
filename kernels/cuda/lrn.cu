// CUDA LRN across channels, with the CPU's arithmetic (f32 sum of squares over the window in
// channel order, then x / powf(k + alpha/n * sum, beta)).
//  - Out of place: one thread per element, threads numbered in y's memory order (consecutive
//    columns in NCHW, consecutive channels in NHWC); the window's up-to-16 loads hit L1/L2.
//  - In place (x == y): a thread per element would overwrite inputs its neighbours still need,
//    so one thread owns each (N, spatial) position and sweeps its channels in order with a ring
//    of the last 16 inputs, reading every input before writing its channel (as the CPU does).
//    Consecutive threads are consecutive positions in x's memory order.
#include <algorithm>

#include "../api/backend.h"
#include "cuda_common.cuh"
#include "../common/small_sort.h"

namespace jet {
namespace cuda {
namespace {

constexpr int kRing = 16;  // >= the largest window (LrnDesc's n <= 16)

struct LrnParams {
  int64_t channels, before, after;
  float k, scale, power;
};

// Dims walked by the threads, slowest first (in y's or x's memory order), with x and y strides.
struct Walk {
  int rank;
  int64_t dims[5];
  int64_t xs[5];
  int64_t ys[5];
  int c_pos;  // position of C in the walk, or -1
  int64_t total;
};

Walk make_walk(const TensorDesc& xd, const TensorDesc& yd, bool with_c, bool by_y) {
  Walk w{};
  int order[5];
  int m = 0;
  for (int i = 0; i < xd.rank(); ++i)
    if (with_c || i != 1) order[m++] = i;
  const TensorDesc& key = by_y ? yd : xd;
  small_stable_sort(order, m, [&](int a, int b) { return key.stride(a) > key.stride(b); });
  w.rank = m;
  w.c_pos = -1;
  w.total = 1;
  for (int j = 0; j < m; ++j) {
    w.dims[j] = xd.dim(order[j]);
    w.xs[j] = xd.stride(order[j]);
    w.ys[j] = yd.stride(order[j]);
    if (order[j] == 1) w.c_pos = j;
    w.total *= w.dims[j];
  }
  return w;
}

template <class T>
__global__ void lrn_elements(Walk w, LrnParams p, int64_t xc, float alpha, const T* __restrict__ x,
                             float beta, T* __restrict__ y) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < w.total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i, xo = 0, yo = 0, c = 0;
    // Unrolled with constant indices: a kernel parameter array indexed dynamically is copied to
    // local memory by every thread.
#pragma unroll
    for (int j = 4; j >= 0; --j) {
      if (j >= w.rank) continue;
      const int64_t q = rest / w.dims[j];
      const int64_t r = rest - q * w.dims[j];
      rest = q;
      if (j == w.c_pos)
        c = r;
      else
        xo += r * w.xs[j];
      yo += r * w.ys[j];
    }
    const int64_t first = max(int64_t(0), c - p.before);
    const int64_t last = min(p.channels - 1, c + p.after);
    float sum_sq = 0.f;
    for (int64_t j = first; j <= last; ++j) {
      const float v = to_f32(x[xo + j * xc]);
      sum_sq += v * v;
    }
    const float v = to_f32(x[xo + c * xc]) / powf(p.k + p.scale * sum_sq, p.power);
    blend_store(y + yo, alpha, v, beta);
  }
}

template <class T>
__global__ void lrn_positions(Walk w, LrnParams p, int64_t xc, int64_t yc, float alpha,
                              const T* x, float beta, T* y) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < w.total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i, xo = 0, yo = 0;
#pragma unroll
    for (int j = 4; j >= 0; --j) {
      if (j >= w.rank) continue;
      const int64_t q = rest / w.dims[j];
      const int64_t r = rest - q * w.dims[j];
      rest = q;
      xo += r * w.xs[j];
      yo += r * w.ys[j];
    }
    float ring[kRing];
    int64_t loaded = 0;  // channels [0, loaded) are in the ring
    for (int64_t c = 0; c < p.channels; ++c) {
      const int64_t last = min(p.channels - 1, c + p.after);
      for (; loaded <= last; ++loaded) ring[loaded % kRing] = to_f32(x[xo + loaded * xc]);
      float sum_sq = 0.f;
      for (int64_t j = max(int64_t(0), c - p.before); j <= last; ++j)
        sum_sq += ring[j % kRing] * ring[j % kRing];
      const float v = ring[c % kRing] / powf(p.k + p.scale * sum_sq, p.power);
      blend_store(y + yo + c * yc, alpha, v, beta);
    }
  }
}

template <class T>
Status run(const Handle& h, const LrnDesc& lrn, float alpha, const TensorDesc& xd, const void* x,
           float beta, const TensorDesc& yd, void* y) {
  LrnParams p;
  p.channels = xd.dim(1);
  p.before = (lrn.n - 1) / 2;
  p.after = lrn.n - 1 - p.before;
  p.k = static_cast<float>(lrn.k);
  p.scale = static_cast<float>(lrn.alpha / static_cast<double>(lrn.n));
  p.power = static_cast<float>(lrn.beta);
  const T* xp = static_cast<const T*>(x);
  T* yp = static_cast<T*>(y);
  const int threads = 256;
  if (x == y) {
    const Walk w = make_walk(xd, yd, false, false);
    lrn_positions<T><<<grid_for(w.total, threads, h.sm_count()), threads, 0, h.stream()>>>(
        w, p, xd.stride(1), yd.stride(1), alpha, xp, beta, yp);
  } else {
    const Walk w = make_walk(xd, yd, true, true);
    lrn_elements<T><<<grid_for(w.total, threads, h.sm_count()), threads, 0, h.stream()>>>(
        w, p, xd.stride(1), alpha, xp, beta, yp);
  }
  return launch_status("lrn_cross_channel_forward");
}

}  // namespace

Status lrn_cross_channel_forward(const Handle& h, const LrnDesc& lrn, float alpha,
                                 const TensorDesc& x_desc, const void* x, float beta,
                                 const TensorDesc& y_desc, void* y) {
  if (x_desc.dtype() == DType::F32) return run<float>(h, lrn, alpha, x_desc, x, beta, y_desc, y);
  return run<__half>(h, lrn, alpha, x_desc, x, beta, y_desc, y);
}

}  // namespace cuda
}  // namespace jet
