// float64 reference convolution backward data (the transposed convolution).
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
std::vector<double> conv_backward_data(const std::vector<double>& dy,
                                       const std::vector<int64_t>& dy_dims,
                                       const std::vector<double>& w,
                                       const std::vector<int64_t>& w_dims,
                                       const std::vector<int64_t>& dx_dims, const ConvParams& p);

}  // namespace ref
}  // namespace jet
