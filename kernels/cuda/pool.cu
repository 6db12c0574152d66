// CUDA pooling.
//  - Global pooling (and a window that is exactly the whole input) is a reduction over the
//    spatial dims: it runs on the strided reduction engine (reduction.cuh), which gives each
//    (n, c) a block-wide reduction in NCHW and spreads threads across channels in NHWC.
//  - Everything else: one thread per output element, the threads numbered in y's memory order.
//    In NCHW consecutive threads are consecutive output columns; in NHWC they are consecutive
//    channels, so the window's loads coalesce across the warp. Channels-last x and y with
//    C % V == 0 (V = 8 halves or 4 floats, 16 bytes): a thread takes V consecutive channels with
//    16-byte loads, so the index arithmetic is paid once per V outputs (at batch 32 the ResNet
//    stem pool took 141 us element by element). The taps of each axis are found
//    as on the CPU (the contiguous range of tap indices inside x), so the divisor rules of
//    AVG_INCLUDE_PAD / AVG_EXCLUDE_PAD and ceil_mode match the CPU exactly.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "reduction.cuh"
#include "../common/small_sort.h"

namespace jet {
namespace cuda {
namespace {

// One spatial axis as applied to x; unused axes of 1D/2D pooling are trivial (in = window = 1).
struct Axis {
  int64_t in, window, pad_begin, pad_end, stride, dilation, x_stride;
};

struct PoolPlan {
  int rank;
  // y's dims in memory order (slowest first): extent, y stride and role (0 = N, 1 = C,
  // 2 + i = spatial axis i).
  int64_t walk_dims[5];
  int64_t walk_ys[5];
  int role[5];
  int64_t xs_n, xs_c;
  Axis axes[3];
  int64_t total;
};

template <class I>
__device__ __forceinline__ I floor_div(I a, I b) {  // b > 0
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// Taps of output o along axis a: tap k reads input start + k * dilation; those inside x are
// k in [k_begin, k_end). inside_padded counts the taps inside the padded input (the divisor of
// AVG_INCLUDE_PAD). Same arithmetic as kernels/cpu/pool.cpp.
// I is the index type: int32_t when every offset and window coordinate fits (fewer registers
// and native divisions), else int64_t.
template <class I>
struct Taps {
  I start, k_begin, k_end, inside_padded;
};

template <class I>
__device__ __forceinline__ Taps<I> taps_of(const Axis& a, I o) {
  const I window = static_cast<I>(a.window), in = static_cast<I>(a.in);
  const I dilation = static_cast<I>(a.dilation), pad_end = static_cast<I>(a.pad_end);
  Taps<I> t;
  t.start = o * static_cast<I>(a.stride) - static_cast<I>(a.pad_begin);
  if (dilation == 1) {  // the common case, without divisions
    t.k_begin = t.start >= 0 ? 0 : -t.start;
    t.k_end = min(window, in - t.start);
    if (t.k_end < t.k_begin) t.k_end = t.k_begin;
    t.inside_padded = min(window, in + pad_end - t.start);
    return t;
  }
  t.k_begin = t.start >= 0 ? 0 : (-t.start + dilation - 1) / dilation;
  t.k_end = min(window, floor_div<I>(in - 1 - t.start, dilation) + 1);
  if (t.k_end < t.k_begin) t.k_end = t.k_begin;
  t.inside_padded = min(window, floor_div<I>(in + pad_end - 1 - t.start, dilation) + 1);
  return t;
}

// V > 1: the plan's innermost walk dim is the channel in chunks of V (see run()).
template <class T, PoolMode MODE, class I, int V>
__global__ void pool_kernel(PoolPlan p, float alpha, const T* __restrict__ x, float beta,
                            T* __restrict__ y) {
  const I total = static_cast<I>(p.total);
  for (I i = blockIdx.x * static_cast<I>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<I>(gridDim.x) * blockDim.x) {
    I rest = i, yo = 0, xo = 0, o[3] = {0, 0, 0};
    // Unrolled with constant indices: a kernel parameter array indexed dynamically is copied to
    // local memory by every thread.
#pragma unroll
    for (int j = 4; j >= 0; --j) {
      if (j >= p.rank) continue;
      const I d = static_cast<I>(p.walk_dims[j]);
      const I q = rest / d;
      const I r = rest - q * d;
      rest = q;
      yo += r * static_cast<I>(p.walk_ys[j]);
      const int role = p.role[j];
      if (role == 0) xo += r * static_cast<I>(p.xs_n);
      else if (role == 1) xo += r * static_cast<I>(p.xs_c);
      else if (role == 2) o[0] = r;
      else if (role == 3) o[1] = r;
      else o[2] = r;
    }
    const Taps<I> t0 = taps_of<I>(p.axes[0], o[0]);
    const Taps<I> t1 = taps_of<I>(p.axes[1], o[1]);
    const Taps<I> t2 = taps_of<I>(p.axes[2], o[2]);
    const I dil0 = static_cast<I>(p.axes[0].dilation), xs0 = static_cast<I>(p.axes[0].x_stride);
    const I dil1 = static_cast<I>(p.axes[1].dilation), xs1 = static_cast<I>(p.axes[1].x_stride);
    const I dil2 = static_cast<I>(p.axes[2].dilation), xs2 = static_cast<I>(p.axes[2].x_stride);
    float max_v[V];
    CompensatedSum sum[V];  // long windows keep f32 accuracy, as the CPU's double sum does
#pragma unroll
    for (int q = 0; q < V; ++q) max_v[q] = -INFINITY;
    // Only taps inside x are visited, so every offset formed is one of x's (no I overflow).
    for (I k0 = t0.k_begin; k0 < t0.k_end; ++k0) {
      const I off0 = xo + (t0.start + k0 * dil0) * xs0;
      for (I k1 = t1.k_begin; k1 < t1.k_end; ++k1) {
        const I off1 = off0 + (t1.start + k1 * dil1) * xs1;
        for (I k2 = t2.k_begin; k2 < t2.k_end; ++k2) {
          float v[V];
          load_channels<T, V>(x + off1 + (t2.start + k2 * dil2) * xs2, v);
#pragma unroll
          for (int q = 0; q < V; ++q) {
            if (MODE == PoolMode::MAX)
              max_v[q] = nan_max(max_v[q], v[q]);  // NaN propagates, as in PyTorch
            else
              sum[q].add(v[q]);
          }
        }
      }
    }
    // int64: the product of three per-axis counts may overflow I.
    const int64_t divisor =
        MODE == PoolMode::AVG_INCLUDE_PAD
            ? static_cast<int64_t>(t0.inside_padded) * t1.inside_padded * t2.inside_padded
            : static_cast<int64_t>(t0.k_end - t0.k_begin) * (t1.k_end - t1.k_begin) *
                  (t2.k_end - t2.k_begin);
#pragma unroll
    for (int q = 0; q < V; ++q) {
      const float result = MODE == PoolMode::MAX ? max_v[q]
                                                 : sum[q].value() / static_cast<float>(divisor);
      blend_store(y + yo + q, alpha, result, beta);
    }
  }
}

// True when every output's window is the whole of x: global pooling, or a window equal to the
// input extent with no begin padding (pad_end cannot add taps then, and y is 1 per axis).
bool whole_input_window(const PoolDesc& pool, const TensorDesc& x_desc, const TensorDesc& y_desc) {
  if (pool.is_global()) return true;
  for (int i = 0; i < pool.spatial_rank(); ++i) {
    const int64_t in = x_desc.dim(2 + i);
    if (y_desc.dim(2 + i) != 1 || pool.pad_begin(i) != 0 || pool.window(i) != in ||
        (in > 1 && pool.dilation(i) != 1))
      return false;
  }
  return true;
}

template <class T, class I, int V>
Status launch(const Handle& h, PoolMode mode, const PoolPlan& p, float alpha, const void* x,
              float beta, void* y) {
  const int threads = 256;
  const int grid = grid_for(p.total, threads, h.sm_count());
  const T* xp = static_cast<const T*>(x);
  T* yp = static_cast<T*>(y);
  switch (mode) {
    case PoolMode::MAX:
      pool_kernel<T, PoolMode::MAX, I, V><<<grid, threads, 0, h.stream()>>>(p, alpha, xp, beta, yp);
      break;
    case PoolMode::AVG_INCLUDE_PAD:
      pool_kernel<T, PoolMode::AVG_INCLUDE_PAD, I, V><<<grid, threads, 0, h.stream()>>>(p, alpha, xp, beta, yp);
      break;
    case PoolMode::AVG_EXCLUDE_PAD:
      pool_kernel<T, PoolMode::AVG_EXCLUDE_PAD, I, V><<<grid, threads, 0, h.stream()>>>(p, alpha, xp, beta, yp);
      break;
  }
  return launch_status("pool_forward");
}

// Channels-last x and y whose channels can be read and written V at a time: channel stride 1
// (the innermost dim of y's walk), C % V == 0, every other stride of a dim longer than 1 a
// multiple of V, both pointers 16-byte aligned.
bool channel_vectors(const PoolPlan& p, const TensorDesc& xd, const TensorDesc& yd,
                     const void* x, const void* y, int v) {
  if (p.role[p.rank - 1] != 1 || xd.stride(1) != 1 || yd.stride(1) != 1 || xd.dim(1) % v != 0)
    return false;
  if (reinterpret_cast<uintptr_t>(x) % 16 != 0 || reinterpret_cast<uintptr_t>(y) % 16 != 0)
    return false;
  for (int i = 0; i < xd.rank(); ++i)
    if (i != 1 && ((xd.dim(i) > 1 && xd.stride(i) % v != 0) ||
                   (yd.dim(i) > 1 && yd.stride(i) % v != 0)))
      return false;
  return true;
}

template <class T>
Status run(const Handle& h, const PoolDesc& pool, float alpha, const TensorDesc& xd,
           const void* x, float beta, const TensorDesc& yd, void* y) {
  PoolPlan p{};
  p.rank = yd.rank();
  int order[5];
  for (int i = 0; i < p.rank; ++i) order[i] = i;
  small_stable_sort(order, p.rank, [&](int a, int b) { return yd.stride(a) > yd.stride(b); });
  for (int j = 0; j < p.rank; ++j) {
    p.walk_dims[j] = yd.dim(order[j]);
    p.walk_ys[j] = yd.stride(order[j]);
    p.role[j] = order[j];
  }
  p.xs_n = xd.stride(0);
  p.xs_c = xd.stride(1);
  for (int i = 0; i < 3; ++i) {
    Axis& a = p.axes[i];
    if (i < pool.spatial_rank())
      a = {xd.dim(2 + i), pool.window(i), pool.pad_begin(i), pool.pad_end(i), pool.stride(i),
           pool.dilation(i), xd.stride(2 + i)};
    else
      a = {1, 1, 0, 0, 1, 1, 0};
  }
  p.total = yd.elements();
  // 32-bit index math when every quantity the kernel forms stays below 2^31: element offsets
  // (spans), output counts, and per axis the padded extent and dilated window (tap positions).
  const int64_t limit = int64_t(1) << 31;
  bool small = p.total < limit / 2 && xd.span() < limit && yd.span() < limit;
  for (const Axis& a : p.axes)
    small = small && (a.window - 1) * a.dilation + a.in + a.pad_begin + a.pad_end < limit / 4 &&
            a.stride * a.in < limit / 4 && a.dilation < limit / 4;
  constexpr int V = std::is_same<T, __half>::value ? 8 : 4;
  if (channel_vectors(p, xd, yd, x, y, V)) {  // the channel walk in chunks of V
    p.walk_dims[p.rank - 1] /= V;
    p.walk_ys[p.rank - 1] = V;
    p.xs_c *= V;
    p.total /= V;
    if (small) return launch<T, int32_t, V>(h, pool.mode(), p, alpha, x, beta, y);
    return launch<T, int64_t, V>(h, pool.mode(), p, alpha, x, beta, y);
  }
  if (small) return launch<T, int32_t, 1>(h, pool.mode(), p, alpha, x, beta, y);
  return launch<T, int64_t, 1>(h, pool.mode(), p, alpha, x, beta, y);
}

}  // namespace

Status pool_forward(const Handle& h, const PoolDesc& pool, float alpha, const TensorDesc& x_desc,
                    const void* x, float beta, const TensorDesc& y_desc, void* y) {
  if (whole_input_window(pool, x_desc, y_desc)) {
    // Without padding in the window both averages divide by the extent: a MEAN reduction.
    const ReduceOp op = pool.mode() == PoolMode::MAX ? ReduceOp::MAX : ReduceOp::MEAN;
    return reduce_strided(h, op, alpha, x_desc, x, beta, y_desc, y, "pool_forward");
  }
  if (x_desc.dtype() == DType::F32) return run<float>(h, pool, alpha, x_desc, x, beta, y_desc, y);
  return run<__half>(h, pool, alpha, x_desc, x, beta, y_desc, y);
}

JET_CUDA_MODULE(pool)

}  // namespace cuda
}  // namespace jet
