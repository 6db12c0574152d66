// Float64 references of the index and data-movement routines on computed tensors:
// gather_elements_forward, trilu_forward, cumsum_forward. Values are doubles (exact for the
// integers the tests use); tensors are packed row-major.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace jet {
namespace ref {

// Helpers of the definitions below (ref::detail is shared by every reference header).
namespace detail {

// Row-major coordinates of flat index i in dims.
inline std::vector<int64_t> coords(int64_t i, const std::vector<int64_t>& dims) {
  std::vector<int64_t> c(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    c[d] = i % dims[d];
    i /= dims[d];
  }
  return c;
}

inline int64_t flat(const std::vector<int64_t>& c, const std::vector<int64_t>& dims) {
  int64_t f = 0;
  for (size_t d = 0; d < dims.size(); ++d) f = f * dims[d] + c[d];
  return f;
}

}  // namespace detail

// y (the indices' dims) = x at the index along `axis` (negative from the end), x's own coordinate
// elsewhere. An index outside [-n, n) gives `invalid`.
inline std::vector<double> gather_elements(int axis, const std::vector<int64_t>& x_dims,
                                           const std::vector<double>& x,
                                           const std::vector<int64_t>& indices_dims,
                                           const std::vector<double>& indices, double invalid) {
  std::vector<double> y(indices.size());
  const int64_t n = x_dims[static_cast<size_t>(axis)];
  for (size_t i = 0; i < indices.size(); ++i) {
    std::vector<int64_t> c = detail::coords(static_cast<int64_t>(i), indices_dims);
    int64_t k = static_cast<int64_t>(indices[i]);
    if (k < -n || k >= n) {
      y[i] = invalid;
      continue;
    }
    c[static_cast<size_t>(axis)] = k < 0 ? k + n : k;
    y[i] = x[static_cast<size_t>(detail::flat(c, x_dims))];
  }
  return y;
}

// x with the elements outside the upper (col - row >= k) or lower (col - row <= k) triangle of
// each matrix (last two dims) set to 0.
inline std::vector<double> trilu(bool upper, int64_t k, const std::vector<int64_t>& dims,
                                 const std::vector<double>& x) {
  std::vector<double> y(x.size());
  const int64_t rows = dims[dims.size() - 2], cols = dims[dims.size() - 1];
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t col = static_cast<int64_t>(i) % cols, row = (static_cast<int64_t>(i) / cols) % rows;
    const bool keep = upper ? col - row >= k : col - row <= k;
    y[i] = keep ? x[i] : 0.0;
  }
  return y;
}

// The running sum along `axis` (exclusive: without the element itself; reverse: from the end),
// in double.
inline std::vector<double> cumsum(int axis, bool exclusive, bool reverse,
                                  const std::vector<int64_t>& dims, const std::vector<double>& x) {
  std::vector<double> y(x.size());
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < dims.size(); ++d) inner *= dims[d];
  const int64_t n = dims[static_cast<size_t>(axis)];
  const int64_t outer = static_cast<int64_t>(x.size()) / (n * inner);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      double sum = 0.0;
      for (int64_t j = 0; j < n; ++j) {
        const int64_t i = reverse ? n - 1 - j : j;
        const size_t at = static_cast<size_t>((o * n + i) * inner + in);
        if (!exclusive) sum += x[at];
        y[at] = sum;
        if (exclusive) sum += x[at];
      }
    }
  }
  return y;
}

// 0 none, 1 add, 2 mul, 3 max, 4 min (jet::ScatterReduction's values): b applied to a, NaN wins
// max and min.
inline double scatter_combine(int reduction, double a, double b) {
  switch (reduction) {
    case 1: return a + b;
    case 2: return a * b;
    case 3: return (std::isnan(a) || a > b) ? a : b;
    case 4: return (std::isnan(a) || a < b) ? a : b;
    default: return b;
  }
}

// x with updates applied in row-major order of updates (ScatterElements along `axis`); an index
// outside [-n, n) makes the line along the axis it was meant for `invalid`.
inline std::vector<double> scatter_elements(int reduction, int axis,
                                            const std::vector<int64_t>& x_dims,
                                            const std::vector<double>& x,
                                            const std::vector<int64_t>& indices_dims,
                                            const std::vector<double>& indices,
                                            const std::vector<double>& updates, double invalid) {
  std::vector<double> y = x;
  const size_t a = static_cast<size_t>(axis);
  const int64_t n = x_dims[a];
  std::vector<std::vector<int64_t>> bad_lines;  // coordinates (axis set to 0) of poisoned lines
  for (size_t i = 0; i < indices.size(); ++i) {
    std::vector<int64_t> c = detail::coords(static_cast<int64_t>(i), indices_dims);
    const int64_t k = static_cast<int64_t>(indices[i]);
    if (k < -n || k >= n) {
      c[a] = 0;
      bad_lines.push_back(c);
      continue;
    }
    c[a] = k < 0 ? k + n : k;
    double& e = y[static_cast<size_t>(detail::flat(c, x_dims))];
    e = scatter_combine(reduction, e, updates[i]);
  }
  for (std::vector<int64_t> c : bad_lines) {
    for (int64_t j = 0; j < n; ++j) {
      c[a] = j;
      y[static_cast<size_t>(detail::flat(c, x_dims))] = invalid;
    }
  }
  return y;
}

// x with the slices of updates applied tuple by tuple (ScatterND: indices' last dim k); any index
// out of range makes the whole result `invalid`.
inline std::vector<double> scatter_nd(int reduction, const std::vector<int64_t>& x_dims,
                                      const std::vector<double>& x,
                                      const std::vector<int64_t>& indices_dims,
                                      const std::vector<double>& indices,
                                      const std::vector<double>& updates, double invalid) {
  std::vector<double> y = x;
  const size_t k = static_cast<size_t>(indices_dims.back());
  int64_t slice = 1;
  for (size_t d = k; d < x_dims.size(); ++d) slice *= x_dims[d];
  const size_t tuples = indices.size() / k;
  for (size_t t = 0; t < tuples; ++t) {
    std::vector<int64_t> c(x_dims.size(), 0);
    for (size_t m = 0; m < k; ++m) {
      const int64_t n = x_dims[m];
      const int64_t i = static_cast<int64_t>(indices[t * k + m]);
      if (i < -n || i >= n) return std::vector<double>(x.size(), invalid);
      c[m] = i < 0 ? i + n : i;
    }
    const int64_t base = detail::flat(c, x_dims);
    for (int64_t s = 0; s < slice; ++s) {
      double& e = y[static_cast<size_t>(base + s)];
      e = scatter_combine(reduction, e, updates[t * static_cast<size_t>(slice) + static_cast<size_t>(s)]);
    }
  }
  return y;
}

}  // namespace ref
}  // namespace jet
