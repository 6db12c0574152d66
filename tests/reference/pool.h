// float64 reference pooling on packed row-major arrays.
#pragma once

#include <cstdint>
#include <vector>

#include "jet/dnn/pool.h"

namespace jet {
namespace ref {

// Output dims (N, C, spatial...) of pooling x (dims x_dims) with `pool`, enumerating the window
// positions from the definition; empty when no window fits.
std::vector<int64_t> pool_output_dims(const PoolDesc& pool, const std::vector<int64_t>& x_dims);

// Pooling of packed x. An output whose window holds no element of x (possible with dilation)
// is NaN. MAX propagates NaN inputs.
std::vector<double> pool_forward(const PoolDesc& pool, const std::vector<int64_t>& x_dims,
                                 const std::vector<double>& x);

}  // namespace ref
}  // namespace jet
