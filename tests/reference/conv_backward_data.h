// float64 reference convolution backward data (the transposed convolution).
// Naive float64 convolution backward data as a scatter, written from the forward definition
//   y[n, k, o] = sum over c in k's group, tap t of x[n, c, o * stride - pad_begin + t * dilation]
//                * w[k, c, flip ? window - 1 - t : t]:
// each term's dy[n, k, o] * w[k, c, f] is added into dx[n, c, o * stride - pad_begin + t *
// dilation] when that position lies inside dx.
#pragma once

#include <cstdint>
#include <vector>

#include "conv.h"

namespace jet {
namespace ref {

// dy: packed [N, K, out...]; w: packed [K, C / groups, window...] (logical order); dx_dims:
// [N, C, in...], the forward convolution's x. Returns dx packed [N, C, in...]: the transpose of
// conv_forward(x, w, p) applied to dy, computed as a scatter (every dy element times every
// filter tap added into the dx element that tap read in the forward pass), so it shares no
// index arithmetic with the backends' gathers.
inline std::vector<double> conv_backward_data(const std::vector<double>& dy,
                                              const std::vector<int64_t>& dy_dims,
                                              const std::vector<double>& w,
                                              const std::vector<int64_t>& w_dims,
                                              const std::vector<int64_t>& dx_dims,
                                              const ConvParams& p) {
  const size_t spatial = dx_dims.size() - 2;
  const int64_t batch = dx_dims[0], channels = dx_dims[1], filters = w_dims[0];
  const int64_t group_channels = w_dims[1];
  const int64_t group_filters = filters / p.groups;
  const std::vector<int64_t> in(dx_dims.begin() + 2, dx_dims.end());
  const std::vector<int64_t> out(dy_dims.begin() + 2, dy_dims.end());
  const std::vector<int64_t> window(w_dims.begin() + 2, w_dims.end());
  const int64_t in_size = detail::product(in, 0), out_size = detail::product(out, 0);
  const int64_t window_size = detail::product(window, 0);

  std::vector<double> dx(static_cast<size_t>(batch * channels * in_size), 0.0);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t k = 0; k < filters; ++k) {
      const int64_t group = k / group_filters;
      std::vector<int64_t> o(spatial, 0), t(spatial, 0);
      int64_t o_flat = 0;
      do {
        const double g = dy[static_cast<size_t>((n * filters + k) * out_size + o_flat)];
        for (int64_t cg = 0; cg < group_channels; ++cg) {
          const int64_t c = group * group_channels + cg;
          do {  // over the window; t is back at all zeros when this loop ends
            int64_t x_flat = 0, w_flat = 0;
            bool inside = true;
            for (size_t d = 0; d < spatial; ++d) {
              const int64_t i = o[d] * p.stride[d] - p.pad_begin[d] + t[d] * p.dilation[d];
              if (i < 0 || i >= in[d]) inside = false;
              x_flat = x_flat * in[d] + i;
              const int64_t f = p.flip ? window[d] - 1 - t[d] : t[d];
              w_flat = w_flat * window[d] + f;
            }
            if (inside)
              dx[static_cast<size_t>((n * channels + c) * in_size + x_flat)] +=
                  g * w[static_cast<size_t>((k * group_channels + cg) * window_size + w_flat)];
          } while (detail::next_index(t, window));
        }
        ++o_flat;
      } while (detail::next_index(o, out));
    }
  }
  return dx;
}

}  // namespace ref
}  // namespace jet
