// float64 reference GEMM.
// Naive float64 GEMM: y[b, i, j] = sum_k op(a)[b, i, k] * op(b)[b, k, j] + bias[b, i, j].
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace jet {
namespace ref {

// Helpers of the definitions below (ref::detail is shared by every reference header).
namespace detail {

// Element (batch, row, col) of a packed rank-2/3 tensor, with batch broadcast.
inline double at(const std::vector<double>& t, const std::vector<int64_t>& dims, int64_t batch,
                 int64_t row, int64_t col) {
  const size_t r = dims.size();
  const int64_t rows = dims[r - 2], cols = dims[r - 1];
  const int64_t b = (r == 3 && dims[0] > 1) ? batch : 0;
  return t[static_cast<size_t>((b * rows + row) * cols + col)];
}

}  // namespace detail

// op(a) @ op(b) + bias, batched. Dims are rank 2 ([rows, cols]) or rank 3 ([batch, rows, cols]);
// a batch of 1 broadcasts; op() transposes the last two dims when its flag is set. bias (packed,
// bias_dims each 1 or y's) broadcasts over y; empty means none. Returns y packed with y_dims.
inline std::vector<double> gemm(const std::vector<double>& a, const std::vector<int64_t>& a_dims,
                                bool trans_a, const std::vector<double>& b,
                                const std::vector<int64_t>& b_dims, bool trans_b,
                                const std::vector<double>& bias,
                                const std::vector<int64_t>& bias_dims,
                                const std::vector<int64_t>& y_dims) {
  const size_t r = y_dims.size();
  const int64_t batch = r == 3 ? y_dims[0] : 1;
  const int64_t m = y_dims[r - 2], n = y_dims[r - 1];
  const int64_t k = trans_a ? a_dims[r - 2] : a_dims[r - 1];
  std::vector<double> y(static_cast<size_t>(batch * m * n));
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t p = 0; p < k; ++p) {
          const double av =
              trans_a ? detail::at(a, a_dims, bi, p, i) : detail::at(a, a_dims, bi, i, p);
          const double bv =
              trans_b ? detail::at(b, b_dims, bi, j, p) : detail::at(b, b_dims, bi, p, j);
          sum += av * bv;
        }
        if (!bias.empty()) {
          // Broadcast: index 0 along every bias dim of size 1.
          const int64_t bb = (r == 3 && bias_dims[0] > 1) ? bi : 0;
          const int64_t bm = bias_dims[r - 2] > 1 ? i : 0;
          const int64_t bn = bias_dims[r - 1] > 1 ? j : 0;
          sum += bias[static_cast<size_t>((bb * bias_dims[r - 2] + bm) * bias_dims[r - 1] + bn)];
        }
        y[static_cast<size_t>((bi * m + i) * n + j)] = sum;
      }
  return y;
}

}  // namespace ref
}  // namespace jet
