// The filter-gradient geometry shared by the CPU and CUDA conv_backward_filter and bias gradient
// (host and device code). 1D and 2D problems are stored as 3 spatial dims with leading trivial
// ones (in = out = window = 1, pad 0, stride 1, dilation 1); strides in elements, so every
// layout is expressible.
#pragma once

#include "../common/activation_math.h"  // JET_HOST_DEVICE
#include "jet/dnn/conv.h"

namespace jet {

struct ConvGradGeom {
  int64_t n = 1, groups = 1, cg = 1, kg = 1;  // batch, groups, C / groups, K / groups
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, win[3] = {1, 1, 1};
  int64_t pad[3] = {0, 0, 0}, stride[3] = {1, 1, 1}, dil[3] = {1, 1, 1};
  bool flip = false;                      // CONVOLUTION mode: tap t reads input tap win - 1 - t
  int64_t xs_n = 0, xs_c = 0, xs[3] = {0, 0, 0};
  int64_t ys_n = 0, ys_c = 0, ys[3] = {0, 0, 0};
  int64_t ws_k = 0, ws_c = 0, ws[3] = {0, 0, 0};  // dw strides (from the filter layout)
  int64_t taps = 1;                       // win[0] * win[1] * win[2]
  int64_t positions = 1;                  // out[0] * out[1] * out[2]

  // C / groups * taps: the length of one filter's row in dw (its own memory order).
  JET_HOST_DEVICE int64_t row() const { return cg * taps; }
};

inline ConvGradGeom make_conv_grad_geom(const TensorDesc& x_desc, const TensorDesc& dy_desc,
                                        const ConvDesc& conv, const FilterDesc& w_desc) {
  ConvGradGeom g;
  g.n = x_desc.dim(0);
  g.groups = conv.groups();
  g.cg = w_desc.c();
  g.kg = w_desc.k() / conv.groups();
  g.xs_n = x_desc.stride(0);
  g.xs_c = x_desc.stride(1);
  g.ys_n = dy_desc.stride(0);
  g.ys_c = dy_desc.stride(1);
  const TensorDesc wt = w_desc.as_tensor();
  g.ws_k = wt.stride(0);
  g.ws_c = wt.stride(1);
  const int spatial = conv.spatial_rank();
  for (int i = 0; i < spatial; ++i) {
    const int d = 3 - spatial + i;
    g.in[d] = x_desc.dim(2 + i);
    g.out[d] = dy_desc.dim(2 + i);
    g.win[d] = w_desc.spatial(i);
    g.pad[d] = conv.pad_begin(i);
    g.stride[d] = conv.stride(i);
    g.dil[d] = conv.dilation(i);
    g.xs[d] = x_desc.stride(2 + i);
    g.ys[d] = dy_desc.stride(2 + i);
    g.ws[d] = wt.stride(2 + i);
  }
  g.flip = conv.mode() == ConvMode::CONVOLUTION;
  g.taps = g.win[0] * g.win[1] * g.win[2];
  g.positions = g.out[0] * g.out[1] * g.out[2];
  return g;
}

// A filter element: channel c within its group and tap (t0, t1, t2), from its index j in
// [0, row()) in (c, t0, t1, t2) row-major order; offset() is its dw offset within filter k's row.
struct FilterTap {
  int64_t c, t[3];
};

JET_HOST_DEVICE inline FilterTap filter_tap(const ConvGradGeom& g, int64_t j) {
  FilterTap f;
  f.t[2] = j % g.win[2];
  j /= g.win[2];
  f.t[1] = j % g.win[1];
  j /= g.win[1];
  f.t[0] = j % g.win[0];
  f.c = j / g.win[0];
  return f;
}

JET_HOST_DEVICE inline int64_t filter_offset(const ConvGradGeom& g, const FilterTap& f) {
  return f.c * g.ws_c + f.t[0] * g.ws[0] + f.t[1] * g.ws[1] + f.t[2] * g.ws[2];
}

// x's offset read by filter tap f at output position o of image n (group's first channel
// `c_first` added by the caller), or -1 when the tap lands in the padding.
JET_HOST_DEVICE inline int64_t conv_grad_x_offset(const ConvGradGeom& g, const FilterTap& f,
                                                  int64_t n, const int64_t* o) {
  int64_t off = n * g.xs_n + f.c * g.xs_c;
  for (int d = 0; d < 3; ++d) {
    const int64_t t = g.flip ? g.win[d] - 1 - f.t[d] : f.t[d];
    const int64_t i = o[d] * g.stride[d] - g.pad[d] + t * g.dil[d];
    if (i < 0 || i >= g.in[d]) return -1;
    off += i * g.xs[d];
  }
  return off;
}

// Output position index p in [0, positions) as (o0, o1, o2).
JET_HOST_DEVICE inline void conv_grad_position(const ConvGradGeom& g, int64_t p, int64_t* o) {
  o[2] = p % g.out[2];
  p /= g.out[2];
  o[1] = p % g.out[1];
  o[0] = p / g.out[1];
}

}  // namespace jet
