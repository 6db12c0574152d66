// float64 reference convolution (forward) and its fused bias / residual / activation epilogue.
// Naive float64 convolution written from the definition:
//   y[n, k, o] = sum over c in k's group, tap t of x[n, c, o * stride - pad_begin + t * dilation]
//                * w[k, c, flip ? window - 1 - t : t],
// x reading 0 outside its extent. Independent of the backends' geometry code.
#pragma once

#include <cstdint>
#include <vector>

#include "jet/dnn/activation.h"
#include "activation.h"

namespace jet {
namespace ref {

struct ConvParams {
  // One entry per spatial dim.
  std::vector<int64_t> pad_begin, pad_end, stride, dilation;
  int64_t groups = 1;
  bool flip = false;  // ConvMode::CONVOLUTION: the filter is flipped in every spatial dim
};

// Helpers of the definitions below (ref::detail: shared by every reference header, so one name
// is one helper: conv_backward_data.h uses conv.h's).
namespace detail {

// Advances a multi-index over `extent` (row-major); false after the last one.
inline bool next_index(std::vector<int64_t>& idx, const std::vector<int64_t>& extent) {
  for (int i = static_cast<int>(idx.size()) - 1; i >= 0; --i) {
    if (++idx[i] < extent[i]) return true;
    idx[i] = 0;
  }
  return false;
}

inline int64_t product(const std::vector<int64_t>& v, size_t from) {
  int64_t p = 1;
  for (size_t i = from; i < v.size(); ++i) p *= v[i];
  return p;
}

}  // namespace detail

// [N, K, out...] with out = floor((in + pads - dilation * (window - 1) - 1) / stride) + 1.
inline std::vector<int64_t> conv_output_dims(const std::vector<int64_t>& x_dims,
                                             const std::vector<int64_t>& w_dims,
                                             const ConvParams& p) {
  std::vector<int64_t> y = {x_dims[0], w_dims[0]};
  for (size_t i = 2; i < x_dims.size(); ++i) {
    const size_t s = i - 2;
    const int64_t span = p.dilation[s] * (w_dims[i] - 1) + 1;
    y.push_back((x_dims[i] + p.pad_begin[s] + p.pad_end[s] - span) / p.stride[s] + 1);
  }
  return y;
}

// x: packed [N, C, spatial...]; w: packed [K, C / groups, window...] (logical order, whatever
// the filter layout in memory). Returns y packed [N, K, out...].
inline std::vector<double> conv_forward(const std::vector<double>& x,
                                        const std::vector<int64_t>& x_dims,
                                        const std::vector<double>& w,
                                        const std::vector<int64_t>& w_dims, const ConvParams& p) {
  const std::vector<int64_t> y_dims = conv_output_dims(x_dims, w_dims, p);
  const size_t spatial = x_dims.size() - 2;
  const int64_t batch = x_dims[0], channels = x_dims[1], filters = w_dims[0];
  const int64_t group_channels = w_dims[1];
  const int64_t group_filters = filters / p.groups;
  const std::vector<int64_t> in(x_dims.begin() + 2, x_dims.end());
  const std::vector<int64_t> out(y_dims.begin() + 2, y_dims.end());
  const std::vector<int64_t> window(w_dims.begin() + 2, w_dims.end());
  const int64_t in_size = detail::product(in, 0), out_size = detail::product(out, 0);
  const int64_t window_size = detail::product(window, 0);

  std::vector<double> y(static_cast<size_t>(batch * filters * out_size), 0.0);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t k = 0; k < filters; ++k) {
      const int64_t group = k / group_filters;
      std::vector<int64_t> o(spatial, 0), t(spatial, 0);
      int64_t o_flat = 0;
      do {
        double sum = 0.0;
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
              sum += x[static_cast<size_t>((n * channels + c) * in_size + x_flat)] *
                     w[static_cast<size_t>((k * group_channels + cg) * window_size + w_flat)];
          } while (detail::next_index(t, window));
        }
        y[static_cast<size_t>((n * filters + k) * out_size + o_flat)] = sum;
        ++o_flat;
      } while (detail::next_index(o, out));
    }
  }
  return y;
}

// act(alpha1 * conv + alpha2 * z + bias[k]) for packed [N, K, ...] tensors; an empty z or bias
// means none.
inline std::vector<double> conv_bias_act(const std::vector<double>& conv,
                                         const std::vector<int64_t>& y_dims, double alpha1,
                                         const std::vector<double>& z, double alpha2,
                                         const std::vector<double>& bias, const ActivationDesc& act) {
  const int64_t filters = y_dims[1];
  const int64_t per_channel = detail::product(y_dims, 2);
  std::vector<double> y(conv.size());
  for (size_t i = 0; i < conv.size(); ++i) {
    const int64_t k = (static_cast<int64_t>(i) / per_channel) % filters;
    double v = alpha1 * conv[i];
    if (!z.empty()) v += alpha2 * z[i];
    if (!bias.empty()) v += bias[static_cast<size_t>(k)];
    y[i] = activation(act, v);
  }
  return y;
}

}  // namespace ref
}  // namespace jet
