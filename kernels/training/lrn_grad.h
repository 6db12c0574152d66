// The gradient of LRN across channels at one x element, shared by the CPU and CUDA backward
// routines (host and device code). With d_i = k + alpha / n * sum_{j in W(i)} x_j^2 and
// y_i = x_i * d_i^-beta (window W(i) = [i - floor((n-1)/2), i + ceil((n-1)/2)] within [0, C)):
//   dx_j = dy_j * d_j^-beta - 2 alpha beta / n * x_j * sum_{i : j in W(i)} dy_i x_i d_i^(-beta-1)
// where j in W(i) means i in [j - ceil((n-1)/2), j + floor((n-1)/2)]. Each d_i is recomputed
// from x (no saved scale tensor), so the backward needs only x and dy.
#pragma once

#include "../common/activation_math.h"  // JET_HOST_DEVICE, <cmath>

namespace jet {

struct LrnGradParams {
  int64_t channels, before, after;  // window [c - before, c + after]
  float k, scale, power;            // scale = alpha / n, power = beta
};

// d at channel c: x_at(ch) reads x at channel ch of the current position.
template <class XAt>
JET_HOST_DEVICE inline float lrn_denominator(const LrnGradParams& p, const XAt& x_at, int64_t c) {
  const int64_t lo = c - p.before < 0 ? 0 : c - p.before;
  const int64_t hi = c + p.after >= p.channels ? p.channels - 1 : c + p.after;
  float sum = 0.f;
  for (int64_t j = lo; j <= hi; ++j) {
    const float v = x_at(j);
    sum += v * v;
  }
  return p.k + p.scale * sum;
}

template <class XAt, class DyAt>
JET_HOST_DEVICE inline float lrn_grad_at(const LrnGradParams& p, const XAt& x_at,
                                         const DyAt& dy_at, int64_t j) {
  const float dj = lrn_denominator(p, x_at, j);
  float acc = 0.f;
  const int64_t lo = j - p.after < 0 ? 0 : j - p.after;
  const int64_t hi = j + p.before >= p.channels ? p.channels - 1 : j + p.before;
  for (int64_t i = lo; i <= hi; ++i) {
    const float di = lrn_denominator(p, x_at, i);
    acc += dy_at(i) * x_at(i) * powf(di, -p.power - 1.f);
  }
  return dy_at(j) * powf(dj, -p.power) - 2.f * p.scale * p.power * x_at(j) * acc;
}

}  // namespace jet
