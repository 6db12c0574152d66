// float64 reference batch normalization (inference).
#pragma once

#include <cstdint>
#include <vector>

namespace jet {
namespace ref {

// x: packed row-major with dims (N, C, spatial...); scale, bias, mean, var: C values each.
// Returns scale[c] * (x - mean[c]) / sqrt(var[c] + epsilon) + bias[c], packed like x.
std::vector<double> batchnorm_inference(const std::vector<int64_t>& dims,
                                        const std::vector<double>& x,
                                        const std::vector<double>& scale,
                                        const std::vector<double>& bias,
                                        const std::vector<double>& mean,
                                        const std::vector<double>& var, double epsilon);

}  // namespace ref
}  // namespace jet
