// The resize_forward gradient of one dx element, shared by the CPU and CUDA resize_backward
// (host and device code). Each output index o along an axis samples the input through ONNX's
// coordinate mapping, computed in double exactly as kernels/cpu/resize.cpp does (so rounding
// ties fall the same way): NEAREST reads one index, LINEAR reads i0 with weight 1 - w and i1 with
// weight w. The axes are separable, so
//   dx[i] = sum over o0 of w0(o0, i0) * sum over o1 of w1(o1, i1) * sum over o2 of ... dy[o],
// where w_d(o, i) is the weight output o gives input i along axis d (0 for most o).
#pragma once

#include <cmath>

#include "../common/activation_math.h"  // JET_HOST_DEVICE
#include "jet/dnn/tensor_ops.h"

namespace jet {

struct ResizeGradAxis {
  int64_t in = 1, out = 1;
  double scale = 1.0;  // out / in unless the caller gave one
};

struct ResizeGradGeom {
  ResizeMode mode = ResizeMode::NEAREST;
  ResizeCoord coord = ResizeCoord::HALF_PIXEL;
  ResizeNearest nearest = ResizeNearest::ROUND_PREFER_FLOOR;
  int64_t n = 1, c = 1;
  ResizeGradAxis ax[3];  // 1D/2D problems: leading trivial axes
  int64_t dys_n = 0, dys_c = 0, dys[3] = {0, 0, 0};
  int64_t dxs_n = 0, dxs_c = 0, dxs[3] = {0, 0, 0};
};

JET_HOST_DEVICE inline double resize_source(ResizeCoord coord, const ResizeGradAxis& a, int64_t o) {
  const double od = static_cast<double>(o);
  double c = 0.0;
  switch (coord) {
    case ResizeCoord::HALF_PIXEL: c = (od + 0.5) / a.scale - 0.5; break;
    case ResizeCoord::ALIGN_CORNERS: {
      const double resized = static_cast<double>(a.in) * a.scale;
      c = resized <= 1.0 ? 0.0 : od * static_cast<double>(a.in - 1) / (resized - 1.0);
      break;
    }
    case ResizeCoord::ASYMMETRIC: c = od / a.scale; break;
    case ResizeCoord::PYTORCH_HALF_PIXEL: c = a.out > 1 ? (od + 0.5) / a.scale - 0.5 : 0.0; break;
    case ResizeCoord::TF_HALF_PIXEL_FOR_NN: c = (od + 0.5) / a.scale; break;
  }
  const double hi = static_cast<double>(a.in - 1);
  return c < 0.0 ? 0.0 : (c > hi ? hi : c);  // clamped, as the forward
}

// The weight output o gives input i along axis a.
JET_HOST_DEVICE inline float resize_weight(const ResizeGradGeom& g, const ResizeGradAxis& a,
                                           int64_t o, int64_t i) {
  const double c = resize_source(g.coord, a, o);
  const double f = floor(c);
  int64_t i0 = static_cast<int64_t>(f);
  if (g.mode == ResizeMode::NEAREST) {
    const double frac = c - f;
    switch (g.nearest) {
      case ResizeNearest::ROUND_PREFER_FLOOR: i0 += frac > 0.5 ? 1 : 0; break;
      case ResizeNearest::ROUND_PREFER_CEIL: i0 += frac >= 0.5 ? 1 : 0; break;
      case ResizeNearest::FLOOR: break;
      case ResizeNearest::CEIL: i0 += frac > 0.0 ? 1 : 0; break;
    }
    if (i0 > a.in - 1) i0 = a.in - 1;
    return i0 == i ? 1.f : 0.f;
  }
  const int64_t i1 = i0 + 1 < a.in ? i0 + 1 : i0;
  const float w = static_cast<float>(c - static_cast<double>(i0));
  return (i0 == i ? 1.f - w : 0.f) + (i1 == i ? w : 0.f);
}

// d<dy, resize(x)>/dx at x element (n, c, p).
JET_HOST_DEVICE inline float resize_grad_at(const ResizeGradGeom& g, const float* dy, int64_t n,
                                            int64_t c, const int64_t* p) {
  const float* base = dy + n * g.dys_n + c * g.dys_c;
  float acc = 0.f;
  for (int64_t o0 = 0; o0 < g.ax[0].out; ++o0) {
    const float w0 = resize_weight(g, g.ax[0], o0, p[0]);
    if (w0 == 0.f) continue;
    for (int64_t o1 = 0; o1 < g.ax[1].out; ++o1) {
      const float w1 = resize_weight(g, g.ax[1], o1, p[1]);
      if (w1 == 0.f) continue;
      float row = 0.f;
      for (int64_t o2 = 0; o2 < g.ax[2].out; ++o2) {
        const float w2 = resize_weight(g, g.ax[2], o2, p[2]);
        if (w2 != 0.f) row += w2 * base[o0 * g.dys[0] + o1 * g.dys[1] + o2 * g.dys[2]];
      }
      acc += w0 * w1 * row;
    }
  }
  return acc;
}

inline ResizeGradGeom make_resize_grad_geom(const ResizeDesc& r, const TensorDesc& dy_desc,
                                            const TensorDesc& dx_desc) {
  ResizeGradGeom g;
  g.mode = r.mode;
  g.coord = r.coord;
  g.nearest = r.nearest;
  g.n = dx_desc.dim(0);
  g.c = dx_desc.dim(1);
  g.dys_n = dy_desc.stride(0);
  g.dys_c = dy_desc.stride(1);
  g.dxs_n = dx_desc.stride(0);
  g.dxs_c = dx_desc.stride(1);
  const int spatial = dx_desc.rank() - 2;
  for (int k = 0; k < spatial; ++k) {
    const int d = 3 - spatial + k;
    ResizeGradAxis& a = g.ax[d];
    a.in = dx_desc.dim(2 + k);
    a.out = dy_desc.dim(2 + k);
    a.scale = r.scales[k] > 0.f ? static_cast<double>(r.scales[k])
                                : static_cast<double>(a.out) / static_cast<double>(a.in);
    g.dys[d] = dy_desc.stride(2 + k);
    g.dxs[d] = dx_desc.stride(2 + k);
  }
  return g;
}

}  // namespace jet
