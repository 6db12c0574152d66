// float64 reference pooling on packed row-major arrays.
// Naive float64 pooling: every output visits every tap of its window and classifies it as inside
// x, inside the padding, or beyond the padding (ceil_mode), straight from the definition.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "jet/dnn/pool.h"

namespace jet {
namespace ref {

// Helpers of the definitions below (ref::detail is shared by every reference header).
namespace detail {

struct Axis {
  int64_t in, window, pad_begin, pad_end, stride, dilation;
};

inline Axis axis_of(const PoolDesc& pool, const std::vector<int64_t>& x_dims, int i) {
  const int64_t in = x_dims[2 + i];
  if (pool.is_global()) return {in, in, 0, 0, 1, 1};
  return {in, pool.window(i), pool.pad_begin(i), pool.pad_end(i), pool.stride(i),
          pool.dilation(i)};
}

// Counts window positions o = 0, 1, ... : floor mode keeps windows that end inside the padded
// input; ceil mode also keeps a partial last window, if it ends less than a stride past the
// padded input and starts inside x or the begin padding.
inline int64_t axis_outputs(const Axis& a, bool ceil_mode) {
  const int64_t extent = (a.window - 1) * a.dilation + 1;
  const int64_t padded_end = a.in + a.pad_end;  // first index past the end padding
  if (a.in + a.pad_begin + a.pad_end < extent) return 0;
  int64_t n = 0;
  for (int64_t o = 0;; ++o) {
    const int64_t start = o * a.stride - a.pad_begin;
    const int64_t last = start + extent - 1;
    const bool keep = ceil_mode ? (last < padded_end + a.stride - 1 && start < a.in)
                                : last < padded_end;
    if (!keep) break;
    ++n;
  }
  return n;
}

}  // namespace detail

// Output dims (N, C, spatial...) of pooling x (dims x_dims) with `pool`, enumerating the window
// positions from the definition; empty when no window fits.
inline std::vector<int64_t> pool_output_dims(const PoolDesc& pool,
                                             const std::vector<int64_t>& x_dims) {
  std::vector<int64_t> out = {x_dims[0], x_dims[1]};
  for (int i = 0; i + 2 < static_cast<int>(x_dims.size()); ++i) {
    const int64_t n = detail::axis_outputs(detail::axis_of(pool, x_dims, i),
                                           pool.ceil_mode() && !pool.is_global());
    if (n < 1) return {};
    out.push_back(n);
  }
  return out;
}

// Pooling of packed x. An output whose window holds no element of x (possible with dilation)
// is NaN. MAX propagates NaN inputs.
inline std::vector<double> pool_forward(const PoolDesc& pool, const std::vector<int64_t>& x_dims,
                                        const std::vector<double>& x) {
  const std::vector<int64_t> y_dims = pool_output_dims(pool, x_dims);
  if (y_dims.empty()) return {};
  const int spatial = static_cast<int>(x_dims.size()) - 2;
  // Pad to 3 spatial axes with trivial ones so that one set of loops serves 1D, 2D and 3D.
  detail::Axis ax[3] = {{1, 1, 0, 0, 1, 1}, {1, 1, 0, 0, 1, 1}, {1, 1, 0, 0, 1, 1}};
  int64_t out[3] = {1, 1, 1};
  for (int i = 0; i < spatial; ++i) {
    ax[3 - spatial + i] = detail::axis_of(pool, x_dims, i);
    out[3 - spatial + i] = y_dims[2 + i];
  }
  const int64_t N = x_dims[0], C = x_dims[1];
  std::vector<double> y;
  y.reserve(static_cast<size_t>(N * C * out[0] * out[1] * out[2]));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t o0 = 0; o0 < out[0]; ++o0)
        for (int64_t o1 = 0; o1 < out[1]; ++o1)
          for (int64_t o2 = 0; o2 < out[2]; ++o2) {
            const int64_t o[3] = {o0, o1, o2};
            double max_v = -std::numeric_limits<double>::infinity();
            double sum = 0;
            int64_t inside = 0, inside_padded = 0;
            bool nan_seen = false;
            for (int64_t k0 = 0; k0 < ax[0].window; ++k0)
              for (int64_t k1 = 0; k1 < ax[1].window; ++k1)
                for (int64_t k2 = 0; k2 < ax[2].window; ++k2) {
                  const int64_t k[3] = {k0, k1, k2};
                  int64_t pos[3];
                  bool in_x = true, in_padded = true;
                  for (int i = 0; i < 3; ++i) {
                    pos[i] = o[i] * ax[i].stride - ax[i].pad_begin + k[i] * ax[i].dilation;
                    in_x = in_x && pos[i] >= 0 && pos[i] < ax[i].in;
                    in_padded = in_padded && pos[i] >= -ax[i].pad_begin &&
                                pos[i] < ax[i].in + ax[i].pad_end;
                  }
                  if (in_padded) ++inside_padded;
                  if (!in_x) continue;
                  ++inside;
                  const double v =
                      x[static_cast<size_t>(((n * C + c) * ax[0].in + pos[0]) * ax[1].in * ax[2].in +
                                            pos[1] * ax[2].in + pos[2])];
                  if (std::isnan(v)) nan_seen = true;
                  if (v > max_v) max_v = v;
                  sum += v;
                }
            double r;
            if (inside == 0 || nan_seen)
              r = std::numeric_limits<double>::quiet_NaN();
            else if (pool.mode() == PoolMode::MAX)
              r = max_v;
            else if (pool.mode() == PoolMode::AVG_INCLUDE_PAD)
              r = sum / static_cast<double>(inside_padded);
            else
              r = sum / static_cast<double>(inside);
            y.push_back(r);
          }
  return y;
}

}  // namespace ref
}  // namespace jet
