// float64 reference convolution (forward) and its fused bias / residual / activation epilogue.
#pragma once

#include <cstdint>
#include <vector>

#include "jet/dnn/activation.h"

namespace jet {
namespace ref {

struct ConvParams {
  // One entry per spatial dim.
  std::vector<int64_t> pad_begin, pad_end, stride, dilation;
  int64_t groups = 1;
  bool flip = false;  // ConvMode::CONVOLUTION: the filter is flipped in every spatial dim
};

// [N, K, out...] with out = floor((in + pads - dilation * (window - 1) - 1) / stride) + 1.
std::vector<int64_t> conv_output_dims(const std::vector<int64_t>& x_dims,
                                      const std::vector<int64_t>& w_dims, const ConvParams& p);

// x: packed [N, C, spatial...]; w: packed [K, C / groups, window...] (logical order, whatever
// the filter layout in memory). Returns y packed [N, K, out...].
std::vector<double> conv_forward(const std::vector<double>& x, const std::vector<int64_t>& x_dims,
                                 const std::vector<double>& w, const std::vector<int64_t>& w_dims,
                                 const ConvParams& p);

// act(alpha1 * conv + alpha2 * z + bias[k]) for packed [N, K, ...] tensors; an empty z or bias
// means none.
std::vector<double> conv_bias_act(const std::vector<double>& conv,
                                  const std::vector<int64_t>& y_dims, double alpha1,
                                  const std::vector<double>& z, double alpha2,
                                  const std::vector<double>& bias, const ActivationDesc& act);

}  // namespace ref
}  // namespace jet
