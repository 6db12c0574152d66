// float64 reference layer normalization.
#pragma once

#include <cstdint>
#include <vector>

namespace jet {
namespace ref {

// x: packed row-major with `dims`; groups are the dims from `axis` on (inner elements each);
// scale, bias: inner values each, or empty (1 and 0). Returns
// (x - mean) / sqrt(var + epsilon) * scale[i] + bias[i], packed like x, with mean and the biased
// variance of each group and i the element's index within its group.
std::vector<double> layernorm(const std::vector<int64_t>& dims, int axis, const std::vector<double>& x,
                              const std::vector<double>& scale, const std::vector<double>& bias,
                              double epsilon);

}  // namespace ref
}  // namespace jet
