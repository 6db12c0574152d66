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
// I is the index type: int64_t, or int on CUDA where every index fits (32-bit division is several
// times cheaper there).
template <class I>
struct PoolGradTaps {
  I start, k_begin, k_end, padded;
};

template <class I>
JET_HOST_DEVICE inline I pool_floor_div(I a, I b) {  // b > 0
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

template <class I>
JET_HOST_DEVICE inline PoolGradTaps<I> pool_grad_taps(const PoolGradAxis& a, I o) {
  const I dilation = static_cast<I>(a.dilation), window = static_cast<I>(a.window);
  PoolGradTaps<I> t;
  t.start = o * static_cast<I>(a.stride) - static_cast<I>(a.pad_begin);
  I last, padded;
  if (dilation == 1) {  // the usual case, without divisions
    t.k_begin = t.start >= 0 ? 0 : -t.start;
    last = static_cast<I>(a.in) - t.start;
    padded = static_cast<I>(a.in + a.pad_end) - t.start;
  } else {
    t.k_begin = t.start >= 0 ? 0 : (-t.start + dilation - 1) / dilation;
    last = pool_floor_div<I>(static_cast<I>(a.in) - 1 - t.start, dilation) + 1;
    padded = pool_floor_div<I>(static_cast<I>(a.in + a.pad_end) - 1 - t.start, dilation) + 1;
  }
  t.k_end = window < last ? window : last;
  if (t.k_end < t.k_begin) t.k_end = t.k_begin;
  t.padded = window < padded ? window : padded;
  return t;
}

// Whether x element (p0, p1, p2) of image n, channel c is output o's argmax: the first maximum
// in window order, or the window's last NaN (the forward's `v > max || isnan(v)` update, as
// PyTorch's max pooling picks its index); all -inf: the first tap.
template <class I>
JET_HOST_DEVICE inline bool pool_is_argmax(const PoolGradGeom& g, const float* x, I xbase,
                                           const PoolGradTaps<I>* t, const I* p) {
  const I d0 = static_cast<I>(g.ax[0].dilation), d1 = static_cast<I>(g.ax[1].dilation),
          d2 = static_cast<I>(g.ax[2].dilation);
  const I s0 = static_cast<I>(g.xs[0]), s1 = static_cast<I>(g.xs[1]), s2 = static_cast<I>(g.xs[2]);
  float best = -INFINITY;
  I arg[3] = {t[0].k_begin, t[1].k_begin, t[2].k_begin};
  for (I k0 = t[0].k_begin; k0 < t[0].k_end; ++k0) {
    const I i0 = t[0].start + k0 * d0;
    for (I k1 = t[1].k_begin; k1 < t[1].k_end; ++k1) {
      const I i1 = t[1].start + k1 * d1;
      for (I k2 = t[2].k_begin; k2 < t[2].k_end; ++k2) {
        const I i2 = t[2].start + k2 * d2;
        const float v = x[xbase + i0 * s0 + i1 * s1 + i2 * s2];
        if (v > best || v != v) {
          best = v;
          arg[0] = k0;
          arg[1] = k1;
          arg[2] = k2;
        }
      }
    }
  }
  return t[0].start + arg[0] * d0 == p[0] && t[1].start + arg[1] * d1 == p[1] &&
         t[2].start + arg[2] * d2 == p[2];
}

// The outputs along one axis whose window holds input position p: o in [lo, hi], those with
// (p + pad_begin - o * stride) a multiple of dilation (tap k = that / dilation < window).
template <class I>
struct PoolGradOutputs {
  I lo, hi;
};

// n / d for n >= 0: strides 1 and 2 (nearly every pooling) without a division instruction.
template <class I>
JET_HOST_DEVICE inline I pool_stride_div(I n, I d) {
  return d == 1 ? n : d == 2 ? n >> 1 : n / d;
}

template <class I>
JET_HOST_DEVICE inline PoolGradOutputs<I> pool_grad_outputs(const PoolGradAxis& a, I p) {
  const I stride = static_cast<I>(a.stride);
  const I q = p + static_cast<I>(a.pad_begin);  // >= 0
  const I reach = static_cast<I>((a.window - 1) * a.dilation);
  PoolGradOutputs<I> r;
  r.lo = q - reach <= 0 ? 0 : pool_stride_div<I>(q - reach + stride - 1, stride);
  r.hi = pool_stride_div<I>(q, stride);
  if (r.hi > static_cast<I>(a.out) - 1) r.hi = static_cast<I>(a.out) - 1;
  return r;
}

// d<dy, pool(x)>/dx at x element (n, c, p): the sum over the windows containing it, in window
// order (tap k ascending, so output o descending; deterministic), in f32. Only the outputs whose
// window can hold p are visited: at most ceil(window * dilation / stride) per axis.
template <class I>
JET_HOST_DEVICE inline float pool_grad_at(const PoolGradGeom& g, const float* x, const float* dy,
                                          I n, I c, const I* p) {
  const I xbase = n * static_cast<I>(g.xs_n) + c * static_cast<I>(g.xs_c);
  const I dybase = n * static_cast<I>(g.dys_n) + c * static_cast<I>(g.dys_c);
  const PoolGradOutputs<I> r0 = pool_grad_outputs<I>(g.ax[0], p[0]);
  const PoolGradOutputs<I> r1 = pool_grad_outputs<I>(g.ax[1], p[1]);
  const PoolGradOutputs<I> r2 = pool_grad_outputs<I>(g.ax[2], p[2]);
  const I st0 = static_cast<I>(g.ax[0].stride), st1 = static_cast<I>(g.ax[1].stride),
          st2 = static_cast<I>(g.ax[2].stride);
  const I q0 = p[0] + static_cast<I>(g.ax[0].pad_begin), q1 = p[1] + static_cast<I>(g.ax[1].pad_begin),
          q2 = p[2] + static_cast<I>(g.ax[2].pad_begin);
  float acc = 0.f;
  const I di0 = static_cast<I>(g.ax[0].dilation), di1 = static_cast<I>(g.ax[1].dilation),
          di2 = static_cast<I>(g.ax[2].dilation);
  for (I o0 = r0.hi; o0 >= r0.lo; --o0) {
    if (di0 != 1 && (q0 - o0 * st0) % di0 != 0) continue;
    for (I o1 = r1.hi; o1 >= r1.lo; --o1) {
      if (di1 != 1 && (q1 - o1 * st1) % di1 != 0) continue;
      for (I o2 = r2.hi; o2 >= r2.lo; --o2) {
        if (di2 != 1 && (q2 - o2 * st2) % di2 != 0) continue;
        const PoolGradTaps<I> t[3] = {pool_grad_taps<I>(g.ax[0], o0), pool_grad_taps<I>(g.ax[1], o1),
                                      pool_grad_taps<I>(g.ax[2], o2)};
        const float d = dy[dybase + o0 * static_cast<I>(g.dys[0]) + o1 * static_cast<I>(g.dys[1]) +
                           o2 * static_cast<I>(g.dys[2])];
        if (g.mode == PoolMode::MAX) {
          if (pool_is_argmax<I>(g, x, xbase, t, p)) acc += d;
        } else {
          I divisor = 1;
          for (int i = 0; i < 3; ++i)
            divisor *= g.mode == PoolMode::AVG_INCLUDE_PAD ? t[i].padded : t[i].k_end - t[i].k_begin;
          acc += d / static_cast<float>(divisor);
        }
      }
    }
  }
  return acc;
}

}  // namespace jet
