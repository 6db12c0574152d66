// float64 reference instance normalization.
#pragma once

#include <cstdint>
#include <vector>

namespace jet {
namespace ref {

// x: packed row-major with dims (N, C, spatial...); scale, bias: C values each. Returns
// scale[c] * (x - mean) / sqrt(var + epsilon) + bias[c], packed like x, with mean and the biased
// variance (divided by the count) of each (n, c) plane.
std::vector<double> instancenorm(const std::vector<int64_t>& dims, const std::vector<double>& x,
                                 const std::vector<double>& scale,
                                 const std::vector<double>& bias, double epsilon);

}  // namespace ref
}  // namespace jet
