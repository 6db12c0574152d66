// float64 reference instance normalization.
// Naive float64 instance normalization, written from the definition (ONNX
// InstanceNormalization): per (n, c) plane, mean = sum / count, var = sum (x - mean)^2 / count.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace jet {
namespace ref {

// x: packed row-major with dims (N, C, spatial...); scale, bias: C values each. Returns
// scale[c] * (x - mean) / sqrt(var + epsilon) + bias[c], packed like x, with mean and the biased
// variance (divided by the count) of each (n, c) plane.
inline std::vector<double> instancenorm(const std::vector<int64_t>& dims,
                                        const std::vector<double>& x,
                                        const std::vector<double>& scale,
                                        const std::vector<double>& bias, double epsilon) {
  const int64_t n = dims[0], channels = dims[1];
  int64_t plane = 1;  // elements per (n, c): the product of the spatial dims
  for (size_t i = 2; i < dims.size(); ++i) plane *= dims[i];
  std::vector<double> y(x.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t c = 0; c < channels; ++c) {
      const size_t base = static_cast<size_t>((b * channels + c) * plane);
      double sum = 0.0;
      for (int64_t p = 0; p < plane; ++p) sum += x[base + static_cast<size_t>(p)];
      const double mean = sum / static_cast<double>(plane);
      double squares = 0.0;
      for (int64_t p = 0; p < plane; ++p) {
        const double d = x[base + static_cast<size_t>(p)] - mean;
        squares += d * d;
      }
      const double var = squares / static_cast<double>(plane);
      for (int64_t p = 0; p < plane; ++p) {
        const size_t i = base + static_cast<size_t>(p);
        y[i] = scale[c] * (x[i] - mean) / std::sqrt(var + epsilon) + bias[c];
      }
    }
  return y;
}

}  // namespace ref
}  // namespace jet
