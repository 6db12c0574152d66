#include "reference/index_ops.h"

#include <cstddef>

namespace jet {
namespace ref {
namespace {

// Row-major coordinates of flat index i in dims.
std::vector<int64_t> coords(int64_t i, const std::vector<int64_t>& dims) {
  std::vector<int64_t> c(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    c[d] = i % dims[d];
    i /= dims[d];
  }
  return c;
}

int64_t flat(const std::vector<int64_t>& c, const std::vector<int64_t>& dims) {
  int64_t f = 0;
  for (size_t d = 0; d < dims.size(); ++d) f = f * dims[d] + c[d];
  return f;
}

}  // namespace

std::vector<double> gather_elements(int axis, const std::vector<int64_t>& x_dims, const std::vector<double>& x,
                                    const std::vector<int64_t>& indices_dims, const std::vector<double>& indices,
                                    double invalid) {
  std::vector<double> y(indices.size());
  const int64_t n = x_dims[static_cast<size_t>(axis)];
  for (size_t i = 0; i < indices.size(); ++i) {
    std::vector<int64_t> c = coords(static_cast<int64_t>(i), indices_dims);
    int64_t k = static_cast<int64_t>(indices[i]);
    if (k < -n || k >= n) {
      y[i] = invalid;
      continue;
    }
    c[static_cast<size_t>(axis)] = k < 0 ? k + n : k;
    y[i] = x[static_cast<size_t>(flat(c, x_dims))];
  }
  return y;
}

std::vector<double> trilu(bool upper, int64_t k, const std::vector<int64_t>& dims, const std::vector<double>& x) {
  std::vector<double> y(x.size());
  const int64_t rows = dims[dims.size() - 2], cols = dims[dims.size() - 1];
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t col = static_cast<int64_t>(i) % cols, row = (static_cast<int64_t>(i) / cols) % rows;
    const bool keep = upper ? col - row >= k : col - row <= k;
    y[i] = keep ? x[i] : 0.0;
  }
  return y;
}

std::vector<double> cumsum(int axis, bool exclusive, bool reverse, const std::vector<int64_t>& dims,
                           const std::vector<double>& x) {
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

}  // namespace ref
}  // namespace jet
