// float64 reference PReLU.
// Naive float64 PReLU, written from the definition: the slope element for an x index is found by
// clamping the index to 0 on the slope's size-1 dims.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace jet {
namespace ref {

// x: packed row-major with dims x_dims; slope: packed row-major with slope_dims (same rank, each
// dim 1 or equal to x's). Returns x >= 0 ? x : slope * x, packed like x.
inline std::vector<double> prelu(const std::vector<int64_t>& x_dims, const std::vector<double>& x,
                                 const std::vector<int64_t>& slope_dims,
                                 const std::vector<double>& slope) {
  const size_t rank = x_dims.size();
  std::vector<int64_t> idx(rank, 0);
  std::vector<double> y(x.size());
  for (size_t p = 0; p < x.size(); ++p) {
    int64_t s = 0;  // packed index into slope
    for (size_t i = 0; i < rank; ++i) s = s * slope_dims[i] + (slope_dims[i] == 1 ? 0 : idx[i]);
    y[p] = x[p] >= 0 ? x[p] : slope[static_cast<size_t>(s)] * x[p];
    for (size_t i = rank; i-- > 0;) {
      if (++idx[i] < x_dims[i]) break;
      idx[i] = 0;
    }
  }
  return y;
}

}  // namespace ref
}  // namespace jet
