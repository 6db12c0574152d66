// resize_forward's CUBIC taps, shared by the CPU and CUDA backends (host and device): ONNX's cubic
// kernel (Keys, coefficient a) at the unclamped source coordinate c.
#pragma once

#include <cmath>
#include <cstdint>

#include "activation_math.h"  // JET_HOST_DEVICE

namespace jet {

struct CubicTaps {
  int64_t idx[4];  // clamped to [0, in - 1]: an outside tap reads the edge
  float w[4];
};

// The four taps of coordinate c on an axis of `in` elements: floor'(c) - 1 .. floor'(c) + 2 with
// floor'(c) = ceil(c) - 1 (the ratio c - floor'(c) is in (0, 1], ONNX's reference), weights
// computed in double. exclude_outside: outside taps weigh 0 and the rest are divided by their
// sum (all outside: every weight 0).
JET_HOST_DEVICE inline CubicTaps cubic_taps(double c, int64_t in, double a, bool exclude_outside) {
  const double hi = static_cast<double>(in) + 2.0;
  c = c < -3.0 ? -3.0 : (c > hi ? hi : c);  // beyond, every tap is outside anyway
  const double i0 = ceil(c) - 1.0;
  const double r = c - i0;
  const double r0 = r + 1.0, r2 = 1.0 - r, r3 = 2.0 - r;
  double w[4];
  w[0] = ((a * r0 - 5.0 * a) * r0 + 8.0 * a) * r0 - 4.0 * a;
  w[1] = ((a + 2.0) * r - (a + 3.0)) * r * r + 1.0;
  w[2] = ((a + 2.0) * r2 - (a + 3.0)) * r2 * r2 + 1.0;
  w[3] = ((a * r3 - 5.0 * a) * r3 + 8.0 * a) * r3 - 4.0 * a;
  const int64_t base = static_cast<int64_t>(i0) - 1;
  double sum = 0.0;
  CubicTaps t;
  for (int j = 0; j < 4; ++j) {
    const int64_t i = base + j;
    const bool outside = i < 0 || i >= in;
    if (exclude_outside && outside) w[j] = 0.0;
    sum += w[j];
    t.idx[j] = i < 0 ? 0 : (i >= in ? in - 1 : i);
  }
  for (int j = 0; j < 4; ++j) {
    const double v = exclude_outside ? (sum != 0.0 ? w[j] / sum : 0.0) : w[j];
    t.w[j] = static_cast<float>(v);
  }
  return t;
}

}  // namespace jet
