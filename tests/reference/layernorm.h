// float64 reference layer normalization.
// float64 reference layer normalization, from the definition (ONNX LayerNormalization): per
// group, mean = sum / count, var = sum (x - mean)^2 / count.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace jet {
namespace ref {

// x: packed row-major with `dims`; groups are the dims from `axis` on (inner elements each);
// scale, bias: inner values each, or empty (1 and 0). Returns
// (x - mean) / sqrt(var + epsilon) * scale[i] + bias[i], packed like x, with mean and the biased
// variance of each group and i the element's index within its group.
inline std::vector<double> layernorm(const std::vector<int64_t>& dims, int axis,
                                     const std::vector<double>& x, const std::vector<double>& scale,
                                     const std::vector<double>& bias, double epsilon) {
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis); d < dims.size(); ++d) inner *= dims[d];
  std::vector<double> y(x.size());
  for (size_t g = 0; g < x.size(); g += static_cast<size_t>(inner)) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < inner; ++i) mean += x[g + i];
    mean /= static_cast<double>(inner);
    for (int64_t i = 0; i < inner; ++i) var += (x[g + i] - mean) * (x[g + i] - mean);
    var /= static_cast<double>(inner);
    for (int64_t i = 0; i < inner; ++i) {
      double v = (x[g + i] - mean) / std::sqrt(var + epsilon);
      if (!scale.empty()) v *= scale[i];
      if (!bias.empty()) v += bias[i];
      y[g + i] = v;
    }
  }
  return y;
}

}  // namespace ref
}  // namespace jet
