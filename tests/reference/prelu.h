// float64 reference PReLU.
#pragma once

#include <cstdint>
#include <vector>

namespace jet {
namespace ref {

// x: packed row-major with dims x_dims; slope: packed row-major with slope_dims (same rank, each
// dim 1 or equal to x's). Returns x >= 0 ? x : slope * x, packed like x.
std::vector<double> prelu(const std::vector<int64_t>& x_dims, const std::vector<double>& x,
                          const std::vector<int64_t>& slope_dims,
                          const std::vector<double>& slope);

}  // namespace ref
}  // namespace jet
