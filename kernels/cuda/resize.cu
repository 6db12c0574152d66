// CUDA resize_forward: NEAREST, (bi/tri)LINEAR and CUBIC, ONNX Resize semantics, the CPU's
// arithmetic.
//
// Source coordinates are mapped in double, as on the CPU: NEAREST's rounding ties (o / 2 = 1.5
// exactly) and floor() must be decided on the exact value of the formula, and an f32 version of
// (o + 0.5) / scale - 0.5 can land on the other side of an integer or of a .5 tie. Double math
// is slow on Jetson, so it is kept off the per-element path:
//  - tiled kernel: the y dim with the smallest stride (W in NCHW, C in NHWC) runs across the
//    32 lanes of a warp, the other dims are rows. A lane's own tap along that dim is computed
//    once per thread; the taps of the other axes are the same for the whole warp (one double
//    computation per 32 outputs). Stores coalesce across the warp.
//  - flat kernel (that dim shorter than 16, where a 32-lane tile would idle): one thread per
//    element computing every tap.
// LINEAR blends the outer axes' rows, then along the last axis, dropping zero-weight taps, in
// the CPU's order (kernels/cpu/resize.cpp), so inf/NaN in an unused tap never leaks.
#include <algorithm>

#include "../api/backend.h"
#include "cuda_common.cuh"
#include "../common/resize_math.h"
#include "../common/small_sort.h"

namespace jet {
namespace cuda {
namespace {

struct ResizeParams {
  int spatial;
  bool linear;
  bool cubic;
  bool exclude_outside;  // cubic only
  double cubic_a;
  ResizeCoord coord;
  ResizeNearest nearest;
  int64_t in[3], out[3];
  double scale[3];  // out / in unless the caller gave one
  int64_t xs_n, xs_c, xs[3];
  // y's dims in memory order (slowest first): extent, y stride, role (0 = N, 1 = C, 2 + k =
  // spatial axis k).
  int rank;
  int64_t walk_dims[5];
  int64_t walk_ys[5];
  int role[5];
  int64_t lane_extent, lane_ys;  // the last walk dim's, for the tiled kernel
  int lane_role;
};

// One axis' sampling: NEAREST reads i0; LINEAR (1 - w) * x[i0] + w * x[i1].
struct Tap {
  int64_t i0, i1;
  float w;
};

__device__ double source_coordinate(const ResizeParams& p, int k, int64_t o) {
  const double od = static_cast<double>(o);
  switch (p.coord) {
    case ResizeCoord::HALF_PIXEL: return (od + 0.5) / p.scale[k] - 0.5;
    case ResizeCoord::ALIGN_CORNERS: {
      // ONNX divides by the unrounded resized length in * scale (= out without given scales).
      const double resized = static_cast<double>(p.in[k]) * p.scale[k];
      return resized <= 1.0 ? 0.0 : od * static_cast<double>(p.in[k] - 1) / (resized - 1.0);
    }
    case ResizeCoord::ASYMMETRIC: return od / p.scale[k];
    case ResizeCoord::PYTORCH_HALF_PIXEL: return p.out[k] > 1 ? (od + 0.5) / p.scale[k] - 0.5 : 0.0;
    case ResizeCoord::TF_HALF_PIXEL_FOR_NN: return (od + 0.5) / p.scale[k];
  }
  return 0.0;
}

__device__ Tap tap_of(const ResizeParams& p, int k, int64_t o) {
  // Clamping the coordinate first gives the same index as clamping the rounded index, and keeps
  // the integer conversion in range (see the CPU backend).
  double c = source_coordinate(p, k, o);
  const double hi = static_cast<double>(p.in[k] - 1);
  c = c < 0.0 ? 0.0 : (c > hi ? hi : c);
  const double f = floor(c);
  Tap t;
  t.i0 = static_cast<int64_t>(f);
  if (p.linear) {
    t.i1 = t.i0 + 1 < p.in[k] ? t.i0 + 1 : t.i0;
    t.w = static_cast<float>(c - f);
    return t;
  }
  const double frac = c - f;
  switch (p.nearest) {
    case ResizeNearest::ROUND_PREFER_FLOOR: t.i0 += frac > 0.5 ? 1 : 0; break;
    case ResizeNearest::ROUND_PREFER_CEIL: t.i0 += frac >= 0.5 ? 1 : 0; break;
    case ResizeNearest::FLOOR: break;
    case ResizeNearest::CEIL: t.i0 += frac > 0.0 ? 1 : 0; break;
  }
  if (t.i0 >= p.in[k]) t.i0 = p.in[k] - 1;
  t.i1 = t.i0;
  t.w = 0.f;
  return t;
}

// The output value at x base offset `xb` (N and C applied) from the taps of every axis.
template <class T>
__device__ __forceinline__ float sample(const ResizeParams& p, const T* x, int64_t xb,
                                        const Tap* taps) {
  const int last = p.spatial - 1;
  if (!p.linear) {
    int64_t off = xb;
    for (int k = 0; k < p.spatial; ++k) off += taps[k].i0 * p.xs[k];
    return to_f32(x[off]);
  }
  // Outer axes: up to 4 weighted source rows, zero-weight corners dropped.
  int64_t row_off[4];
  float row_w[4];
  int rows = 1;
  row_off[0] = xb;
  row_w[0] = 1.f;
  for (int k = 0; k < last; ++k) {
    const Tap t = taps[k];
    int64_t new_off[4];
    float new_w[4];
    int next = 0;
    for (int r = 0; r < rows; ++r) {
      if (t.w != 1.f) {
        new_off[next] = row_off[r] + t.i0 * p.xs[k];
        new_w[next++] = row_w[r] * (1.f - t.w);
      }
      if (t.w != 0.f) {
        new_off[next] = row_off[r] + t.i1 * p.xs[k];
        new_w[next++] = row_w[r] * t.w;
      }
    }
    rows = next;
    for (int r = 0; r < rows; ++r) {
      row_off[r] = new_off[r];
      row_w[r] = new_w[r];
    }
  }
  const Tap t = taps[last];
  float v = 0.f;
  for (int r = 0; r < rows; ++r) {
    float along_row = to_f32(x[row_off[r] + t.i0 * p.xs[last]]);
    if (t.w != 0.f) along_row = (1.f - t.w) * along_row + t.w * to_f32(x[row_off[r] + t.i1 * p.xs[last]]);
    v += row_w[r] * along_row;
  }
  return v;
}

// Decodes `index` over walk dims [0, dims) into offsets and per-role indices.
__device__ __forceinline__ void decode(const ResizeParams& p, int dims, int64_t index,
                                       int64_t* yo, int64_t* xb, int64_t* o) {
  // Unrolled with constant indices: a kernel parameter array indexed dynamically is copied to
  // local memory by every thread.
#pragma unroll
  for (int j = 4; j >= 0; --j) {
    if (j >= dims) continue;
    const int64_t q = index / p.walk_dims[j];
    const int64_t r = index - q * p.walk_dims[j];
    index = q;
    *yo += r * p.walk_ys[j];
    const int role = p.role[j];
    if (role == 0) *xb += r * p.xs_n;
    else if (role == 1) *xb += r * p.xs_c;
    else if (role == 2) o[0] = r;
    else if (role == 3) o[1] = r;
    else o[2] = r;
  }
}

template <class T>
__global__ void resize_tiled(ResizeParams p, int64_t rows, float alpha, const T* __restrict__ x,
                             float beta, T* __restrict__ y) {
  const int64_t l = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int lane_dim = p.rank - 1;
  if (l >= p.lane_extent) return;  // no barriers below
  const int lane_role = p.lane_role;
  const int lane_axis = lane_role - 2;  // < 0 when the lane dim is N or C
  Tap lane_tap{0, 0, 0.f};
  if (lane_axis >= 0) lane_tap = tap_of(p, lane_axis, l);
  for (int64_t row = blockIdx.y * static_cast<int64_t>(blockDim.y) + threadIdx.y; row < rows;
       row += static_cast<int64_t>(gridDim.y) * blockDim.y) {
    int64_t yo = l * p.lane_ys, xb = 0, o[3] = {0, 0, 0};
    if (lane_role == 0) xb += l * p.xs_n;
    else if (lane_role == 1) xb += l * p.xs_c;
    decode(p, lane_dim, row, &yo, &xb, o);
    Tap taps[3];
#pragma unroll
    for (int k = 0; k < 3; ++k)
      if (k < p.spatial) taps[k] = k == lane_axis ? lane_tap : tap_of(p, k, o[k]);
    blend_store(y + yo, alpha, sample(p, x, xb, taps), beta);
  }
}

template <class T>
__global__ void resize_flat(ResizeParams p, int64_t total, float alpha, const T* __restrict__ x,
                            float beta, T* __restrict__ y) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t yo = 0, xb = 0, o[3] = {0, 0, 0};
    decode(p, p.rank, i, &yo, &xb, o);
    Tap taps[3];
#pragma unroll
    for (int k = 0; k < 3; ++k)
      if (k < p.spatial) taps[k] = tap_of(p, k, o[k]);
    blend_store(y + yo, alpha, sample(p, x, xb, taps), beta);
  }
}

// CUBIC: one thread per element, 4 taps per spatial axis (cubic_taps, shared with the CPU),
// summed in the CPU's order (axis 0's tap slowest), zero weights skipped.
template <class T>
__global__ void resize_cubic(ResizeParams p, int64_t total, float alpha, const T* __restrict__ x,
                             float beta, T* __restrict__ y) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t yo = 0, xb = 0, o[3] = {0, 0, 0};
    decode(p, p.rank, i, &yo, &xb, o);
    CubicTaps taps[3];
#pragma unroll
    for (int k = 0; k < 3; ++k) {
      if (k >= p.spatial) continue;
      const double c = p.coord == ResizeCoord::PYTORCH_HALF_PIXEL && p.out[k] == 1 ? -0.5 : source_coordinate(p, k, o[k]);
      taps[k] = cubic_taps(c, p.in[k], p.cubic_a, p.exclude_outside);
    }
    int combos = 1;
    for (int k = 0; k < p.spatial; ++k) combos *= 4;
    float v = 0.f;
    for (int m = 0; m < combos; ++m) {
      int64_t off = xb;
      float wt = 1.f;
      int rest = m;
#pragma unroll
      for (int k = 2; k >= 0; --k) {
        if (k >= p.spatial) continue;
        const int j = rest % 4;
        rest /= 4;
        off += taps[k].idx[j] * p.xs[k];
        wt *= taps[k].w[j];
      }
      if (wt != 0.f) v += wt * to_f32(x[off]);
    }
    blend_store(y + yo, alpha, v, beta);
  }
}

template <class T>
Status run(const Handle& h, const ResizeDesc& r, float alpha, const TensorDesc& xd, const void* x,
           float beta, const TensorDesc& yd, void* y) {
  ResizeParams p{};
  p.spatial = xd.rank() - 2;
  p.linear = r.mode == ResizeMode::LINEAR;
  p.cubic = r.mode == ResizeMode::CUBIC;
  p.exclude_outside = r.exclude_outside;
  p.cubic_a = static_cast<double>(r.cubic_coeff_a);
  p.coord = r.coord;
  p.nearest = r.nearest;
  p.xs_n = xd.stride(0);
  p.xs_c = xd.stride(1);
  for (int k = 0; k < p.spatial; ++k) {
    p.in[k] = xd.dim(2 + k);
    p.out[k] = yd.dim(2 + k);
    p.scale[k] = r.scales[k] > 0.f ? static_cast<double>(r.scales[k])
                                   : static_cast<double>(p.out[k]) / static_cast<double>(p.in[k]);
    p.xs[k] = xd.stride(2 + k);
  }
  // Walk y in memory order; size-1 dims go first (they do not matter, and the lane dim must be
  // a real one).
  p.rank = yd.rank();
  int order[5];
  for (int i = 0; i < p.rank; ++i) order[i] = i;
  small_stable_sort(order, p.rank, [&](int a, int b) {
    const bool a1 = yd.dim(a) == 1, b1 = yd.dim(b) == 1;
    if (a1 != b1) return a1;
    return yd.stride(a) > yd.stride(b);
  });
  for (int j = 0; j < p.rank; ++j) {
    p.walk_dims[j] = yd.dim(order[j]);
    p.walk_ys[j] = yd.stride(order[j]);
    p.role[j] = order[j];
  }
  p.lane_extent = p.walk_dims[p.rank - 1];
  p.lane_ys = p.walk_ys[p.rank - 1];
  p.lane_role = p.role[p.rank - 1];
  const T* xp = static_cast<const T*>(x);
  T* yp = static_cast<T*>(y);
  const int64_t total = yd.elements();
  const int64_t lane_extent = p.lane_extent;
  if (p.cubic) {
    const int threads = 256;
    resize_cubic<T><<<grid_for(total, threads, h.sm_count()), threads, 0, h.stream()>>>(
        p, total, alpha, xp, beta, yp);
  } else if (lane_extent >= 16) {
    const dim3 block(32, 8);
    const int64_t rows = total / lane_extent;
    const int64_t gx = (lane_extent + 31) / 32;
    // Enough row blocks to fill the GPU; the loop strides over the rest.
    const int64_t want = static_cast<int64_t>(h.sm_count() > 0 ? h.sm_count() : 16) * 64 / gx + 1;
    int64_t gy = (rows + 7) / 8;
    gy = std::min<int64_t>(std::min<int64_t>(gy, want), 65535);
    if (gx > 0x7fffffff)
      return make_status(StatusCode::NOT_SUPPORTED, "resize_forward: y dim of %lld is too long",
                         static_cast<long long>(lane_extent));
    resize_tiled<T><<<dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy)), block, 0,
                      h.stream()>>>(p, rows, alpha, xp, beta, yp);
  } else {
    const int threads = 256;
    resize_flat<T><<<grid_for(total, threads, h.sm_count()), threads, 0, h.stream()>>>(
        p, total, alpha, xp, beta, yp);
  }
  return launch_status("resize_forward");
}

}  // namespace

Status resize_forward(const Handle& h, const ResizeDesc& resize, float alpha,
                      const TensorDesc& x_desc, const void* x, float beta,
                      const TensorDesc& y_desc, void* y) {
  if (x_desc.dtype() == DType::F32) return run<float>(h, resize, alpha, x_desc, x, beta, y_desc, y);
  return run<__half>(h, resize, alpha, x_desc, x, beta, y_desc, y);
}

}  // namespace cuda
}  // namespace jet
