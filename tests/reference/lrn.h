// float64 reference LRN across channels on packed row-major arrays.
// Naive float64 LRN from cuDNN's definition:
// y = x / (k + alpha / n * sum_{c' in window(c)} x[c']^2)^beta,
// window(c) = [c - floor((n-1)/2), c + ceil((n-1)/2)] clipped to [0, C).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "jet/dnn/norm.h"

namespace jet {
namespace ref {

// x has dims (N, C, spatial...), packed row-major.
inline std::vector<double> lrn_cross_channel(const LrnDesc& lrn, const std::vector<int64_t>& dims,
                                             const std::vector<double>& x) {
  int64_t spatial = 1;
  for (size_t i = 2; i < dims.size(); ++i) spatial *= dims[i];
  const int64_t N = dims[0], C = dims[1];
  const int64_t lo_half = (lrn.n - 1) / 2;                   // floor((n-1)/2)
  const int64_t hi_half = static_cast<int64_t>(std::ceil((lrn.n - 1) / 2.0));
  std::vector<double> y(x.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t s = 0; s < spatial; ++s) {
        double sum = 0;
        for (int64_t j = c - lo_half; j <= c + hi_half; ++j) {
          if (j < 0 || j >= C) continue;
          const double v = x[static_cast<size_t>((n * C + j) * spatial + s)];
          sum += v * v;
        }
        const size_t i = static_cast<size_t>((n * C + c) * spatial + s);
        y[i] = x[i] / std::pow(lrn.k + lrn.alpha / static_cast<double>(lrn.n) * sum, lrn.beta);
      }
  return y;
}

}  // namespace ref
}  // namespace jet
