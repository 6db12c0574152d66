// float64 reference GEMM.
#pragma once

#include <cstdint>
#include <vector>

namespace jet {
namespace ref {

// op(a) @ op(b) + bias, batched. Dims are rank 2 ([rows, cols]) or rank 3 ([batch, rows, cols]);
// a batch of 1 broadcasts; op() transposes the last two dims when its flag is set. bias (packed,
// bias_dims each 1 or y's) broadcasts over y; empty means none. Returns y packed with y_dims.
std::vector<double> gemm(const std::vector<double>& a, const std::vector<int64_t>& a_dims,
                         bool trans_a, const std::vector<double>& b,
                         const std::vector<int64_t>& b_dims, bool trans_b,
                         const std::vector<double>& bias, const std::vector<int64_t>& bias_dims,
                         const std::vector<int64_t>& y_dims);

}  // namespace ref
}  // namespace jet
