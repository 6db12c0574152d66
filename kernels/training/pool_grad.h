// The pooling gradient of one dx element, shared by the CPU and CUDA pool_backward (host and
// device code). The geometry is the forward's (kernels/cpu/pool.cpp): along each axis, output o's
// window has taps k = 0 .. window-1 at input o * stride - pad_begin + k * dilation, those inside
// x count; AVG_INCLUDE_PAD divides by the taps inside the padded input, AVG_EXCLUDE_PAD by those
// inside x. 1D and 2D problems are stored as 3 axes with leading trivial ones.
#pragma once

#include "../common/activation_math.h"  // JET_HOST_DEVICE
#include "jet/dnn/pool.h"

namespace jet {

struct PoolGradAxis {
  int64_t in = 1, out = 1, window = 1, pad_begin = 0, pad_end = 0, stride = 1, dilation = 1;
};

struct PoolGradGeom {
  PoolMode mode = PoolMode::MAX;
  int64_t n = 1, c = 1;
  PoolGradAxis ax[3];
  int64_t xs_n = 0, xs_c = 0, xs[3] = {0, 0, 0};
  int64_t dys_n = 0, dys_c = 0, dys[3] = {0, 0, 0};
  int64_t dxs_n = 0, dxs_c = 0, dxs[3] = {0, 0, 0};
};

// Built from validated descriptors (x and dx share dims; dy is pool_output_dims(x)).
inline PoolGradGeom make_pool_grad_geom(const PoolDesc& pool, const TensorDesc& x_desc,
                                        const TensorDesc& dy_desc, const TensorDesc& dx_desc) {
  PoolGradGeom g;
  g.mode = pool.mode();
  g.n = x_desc.dim(0);
  g.c = x_desc.dim(1);
  g.xs_n = x_desc.stride(0);
  g.xs_c = x_desc.stride(1);
  g.dys_n = dy_desc.stride(0);
  g.dys_c = dy_desc.stride(1);
  g.dxs_n = dx_desc.stride(0);
  g.dxs_c = dx_desc.stride(1);
  const int spatial = x_desc.rank() - 2;
  for (int i = 0; i < spatial; ++i) {
    const int d = 3 - spatial + i;
    PoolGradAxis& a = g.ax[d];
    a.in = x_desc.dim(2 + i);
    a.out = dy_desc.dim(2 + i);
    if (pool.is_global()) {
      a.window = a.in;
    } else {
      a.window = pool.window(i);
      a.pad_begin = pool.pad_begin(i);
      a.pad_end = pool.pad_end(i);
      a.stride = pool.stride(i);
      a.dilation = pool.dilation(i);
    }
    g.xs[d] = x_desc.stride(2 + i);
    g.dys[d] = dy_desc.stride(2 + i);
    g.dxs[d] = dx_desc.stride(2 + i);
  }
  return g;
}

// Output o's taps along one axis: those at start + k * dilation for k in [k_begin, k_end) are
// inside x; `padded` of them lie inside [-pad_begin, in + pad_end) (AVG_INCLUDE_PAD's divisor).
struct PoolGradTaps {
  int64_t start, k_begin, k_end, padded;
};

JET_HOST_DEVICE inline int64_t pool_floor_div(int64_t a, int64_t b) {  // b > 0
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

JET_HOST_DEVICE inline PoolGradTaps pool_grad_taps(const PoolGradAxis& a, int64_t o) {
  PoolGradTaps t;
  t.start = o * a.stride - a.pad_begin;
  t.k_begin = t.start >= 0 ? 0 : (-t.start + a.dilation - 1) / a.dilation;
  const int64_t last = pool_floor_div(a.in - 1 - t.start, a.dilation) + 1;
  t.k_end = a.window < last ? a.window : last;
  if (t.k_end < t.k_begin) t.k_end = t.k_begin;
  const int64_t padded = pool_floor_div(a.in + a.pad_end - 1 - t.start, a.dilation) + 1;
  t.padded = a.window < padded ? a.window : padded;
  return t;
}

// Whether x element (p0, p1, p2) of image n, channel c is output o's argmax: the first maximum
// in window order, or the window's last NaN (the forward's `v > max || isnan(v)` update, as
// PyTorch's max pooling picks its index); all -inf: the first tap.
JET_HOST_DEVICE inline bool pool_is_argmax(const PoolGradGeom& g, const float* x, int64_t xbase,
                                           const PoolGradTaps* t, const int64_t* p) {
  float best = -INFINITY;
  int64_t arg[3] = {t[0].k_begin, t[1].k_begin, t[2].k_begin};
  for (int64_t k0 = t[0].k_begin; k0 < t[0].k_end; ++k0) {
    const int64_t i0 = t[0].start + k0 * g.ax[0].dilation;
    for (int64_t k1 = t[1].k_begin; k1 < t[1].k_end; ++k1) {
      const int64_t i1 = t[1].start + k1 * g.ax[1].dilation;
      for (int64_t k2 = t[2].k_begin; k2 < t[2].k_end; ++k2) {
        const int64_t i2 = t[2].start + k2 * g.ax[2].dilation;
        const float v = x[xbase + i0 * g.xs[0] + i1 * g.xs[1] + i2 * g.xs[2]];
        if (v > best || v != v) {
          best = v;
          arg[0] = k0;
          arg[1] = k1;
          arg[2] = k2;
        }
      }
    }
  }
  return t[0].start + arg[0] * g.ax[0].dilation == p[0] &&
         t[1].start + arg[1] * g.ax[1].dilation == p[1] &&
         t[2].start + arg[2] * g.ax[2].dilation == p[2];
}

// d<dy, pool(x)>/dx at x element (n, c, p): the sum over the windows containing it, in window
// order (deterministic), in f32.
JET_HOST_DEVICE inline float pool_grad_at(const PoolGradGeom& g, const float* x, const float* dy,
                                          int64_t n, int64_t c, const int64_t* p) {
  const int64_t xbase = n * g.xs_n + c * g.xs_c;
  const int64_t dybase = n * g.dys_n + c * g.dys_c;
  float acc = 0.f;
  // Along each axis, output o holds p at tap k when p + pad_begin - k * dilation == o * stride;
  // that quantity only decreases with k, hence the breaks.
  for (int64_t k0 = 0; k0 < g.ax[0].window; ++k0) {
    const int64_t q0 = p[0] + g.ax[0].pad_begin - k0 * g.ax[0].dilation;
    if (q0 < 0) break;
    const int64_t o0 = q0 / g.ax[0].stride;
    if (o0 * g.ax[0].stride != q0 || o0 >= g.ax[0].out) continue;
    for (int64_t k1 = 0; k1 < g.ax[1].window; ++k1) {
      const int64_t q1 = p[1] + g.ax[1].pad_begin - k1 * g.ax[1].dilation;
      if (q1 < 0) break;
      const int64_t o1 = q1 / g.ax[1].stride;
      if (o1 * g.ax[1].stride != q1 || o1 >= g.ax[1].out) continue;
      for (int64_t k2 = 0; k2 < g.ax[2].window; ++k2) {
        const int64_t q2 = p[2] + g.ax[2].pad_begin - k2 * g.ax[2].dilation;
        if (q2 < 0) break;
        const int64_t o2 = q2 / g.ax[2].stride;
        if (o2 * g.ax[2].stride != q2 || o2 >= g.ax[2].out) continue;
        const PoolGradTaps t[3] = {pool_grad_taps(g.ax[0], o0), pool_grad_taps(g.ax[1], o1),
                                   pool_grad_taps(g.ax[2], o2)};
        const float d = dy[dybase + o0 * g.dys[0] + o1 * g.dys[1] + o2 * g.dys[2]];
        if (g.mode == PoolMode::MAX) {
          if (pool_is_argmax(g, x, xbase, t, p)) acc += d;
        } else {
          int64_t divisor = 1;
          for (int i = 0; i < 3; ++i)
            divisor *= g.mode == PoolMode::AVG_INCLUDE_PAD ? t[i].padded
                                                           : t[i].k_end - t[i].k_begin;
          acc += d / static_cast<float>(divisor);
        }
      }
    }
  }
  return acc;
}

}  // namespace jet
