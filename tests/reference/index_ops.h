// Float64 references of the index and data-movement routines on computed tensors:
// gather_elements_forward, trilu_forward, cumsum_forward. Values are doubles (exact for the
// integers the tests use); tensors are packed row-major.
#pragma once

#include <cstdint>
#include <vector>

namespace jet {
namespace ref {

// y (the indices' dims) = x at the index along `axis` (negative from the end), x's own coordinate
// elsewhere. An index outside [-n, n) gives `invalid`.
std::vector<double> gather_elements(int axis, const std::vector<int64_t>& x_dims, const std::vector<double>& x,
                                    const std::vector<int64_t>& indices_dims, const std::vector<double>& indices,
                                    double invalid);

// x with the elements outside the upper (col - row >= k) or lower (col - row <= k) triangle of
// each matrix (last two dims) set to 0.
std::vector<double> trilu(bool upper, int64_t k, const std::vector<int64_t>& dims, const std::vector<double>& x);

// The running sum along `axis` (exclusive: without the element itself; reverse: from the end),
// in double.
std::vector<double> cumsum(int axis, bool exclusive, bool reverse, const std::vector<int64_t>& dims,
                           const std::vector<double>& x);

// 0 none, 1 add, 2 mul, 3 max, 4 min (jet::ScatterReduction's values): b applied to a, NaN wins
// max and min.
double scatter_combine(int reduction, double a, double b);

// x with updates applied in row-major order of updates (ScatterElements along `axis`); an index
// outside [-n, n) makes the line along the axis it was meant for `invalid`.
std::vector<double> scatter_elements(int reduction, int axis, const std::vector<int64_t>& x_dims,
                                     const std::vector<double>& x, const std::vector<int64_t>& indices_dims,
                                     const std::vector<double>& indices, const std::vector<double>& updates,
                                     double invalid);

// x with the slices of updates applied tuple by tuple (ScatterND: indices' last dim k); any index
// out of range makes the whole result `invalid`.
std::vector<double> scatter_nd(int reduction, const std::vector<int64_t>& x_dims, const std::vector<double>& x,
                               const std::vector<int64_t>& indices_dims, const std::vector<double>& indices,
                               const std::vector<double>& updates, double invalid);

}  // namespace ref
}  // namespace jet
