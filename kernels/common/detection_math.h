// Formulas of topk_forward and nms_forward shared by the CPU and CUDA backends (host and device).
#pragma once

#include <cstdint>

#include "activation_math.h"  // JET_HOST_DEVICE

namespace jet {

// TopK's order: whether (v, i) goes before (u, j) (largest: larger first; NaN above every number;
// equal values and two NaNs: the lower index first).
template <class T>
JET_HOST_DEVICE inline bool topk_before(T v, int64_t i, T u, int64_t j, bool largest) {
  const bool vn = v != v, un = u != u;
  if (vn || un) {
    if (vn && un) return i < j;
    return largest ? vn : un;  // NaN is the largest value
  }
  if (v == u) return i < j;
  return largest ? v > u : v < u;
}

// NMS: whether box a suppresses box b (4 floats each, in the given format): IoU > threshold.
// Boxes with no area, or no overlap, never suppress (ONNX Runtime's SuppressByIOU).
JET_HOST_DEVICE inline bool nms_suppresses(const float* a, const float* b, bool center, float iou_threshold) {
  float ax0, ay0, ax1, ay1, bx0, by0, bx1, by1;
  if (center) {
    ax0 = a[0] - a[2] * 0.5f; ax1 = a[0] + a[2] * 0.5f; ay0 = a[1] - a[3] * 0.5f; ay1 = a[1] + a[3] * 0.5f;
    bx0 = b[0] - b[2] * 0.5f; bx1 = b[0] + b[2] * 0.5f; by0 = b[1] - b[3] * 0.5f; by1 = b[1] + b[3] * 0.5f;
  } else {  // [y1, x1, y2, x2], corners in any order
    ay0 = a[0] < a[2] ? a[0] : a[2]; ay1 = a[0] < a[2] ? a[2] : a[0];
    ax0 = a[1] < a[3] ? a[1] : a[3]; ax1 = a[1] < a[3] ? a[3] : a[1];
    by0 = b[0] < b[2] ? b[0] : b[2]; by1 = b[0] < b[2] ? b[2] : b[0];
    bx0 = b[1] < b[3] ? b[1] : b[3]; bx1 = b[1] < b[3] ? b[3] : b[1];
  }
  const float ix0 = ax0 > bx0 ? ax0 : bx0, ix1 = ax1 < bx1 ? ax1 : bx1;
  const float iy0 = ay0 > by0 ? ay0 : by0, iy1 = ay1 < by1 ? ay1 : by1;
  if (!(ix1 > ix0) || !(iy1 > iy0)) return false;
  const float inter = (ix1 - ix0) * (iy1 - iy0);
  const float area_a = (ax1 - ax0) * (ay1 - ay0), area_b = (bx1 - bx0) * (by1 - by0);
  if (!(area_a > 0.f) || !(area_b > 0.f)) return false;
  const float uni = area_a + area_b - inter;
  if (!(uni > 0.f)) return false;
  return inter / uni > iou_threshold;
}

}  // namespace jet
