// float64 reference batch normalization (inference).
// Naive float64 batch normalization, written from the definition.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace jet {
namespace ref {

// x: packed row-major with dims (N, C, spatial...); scale, bias, mean, var: C values each.
// Returns scale[c] * (x - mean[c]) / sqrt(var[c] + epsilon) + bias[c], packed like x.
inline std::vector<double> batchnorm_inference(const std::vector<int64_t>& dims,
                                               const std::vector<double>& x,
                                               const std::vector<double>& scale,
                                               const std::vector<double>& bias,
                                               const std::vector<double>& mean,
                                               const std::vector<double>& var, double epsilon) {
  const int64_t n = dims[0], channels = dims[1];
  int64_t plane = 1;  // elements per (n, c): the product of the spatial dims
  for (size_t i = 2; i < dims.size(); ++i) plane *= dims[i];
  std::vector<double> y(x.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t p = 0; p < plane; ++p) {
        const size_t i = static_cast<size_t>((b * channels + c) * plane + p);
        y[i] = scale[c] * (x[i] - mean[c]) / std::sqrt(var[c] + epsilon) + bias[c];
      }
  return y;
}

}  // namespace ref
}  // namespace jet
