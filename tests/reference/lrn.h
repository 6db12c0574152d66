// float64 reference LRN across channels on packed row-major arrays.
#pragma once

#include <cstdint>
#include <vector>

#include "jet/dnn/norm.h"

namespace jet {
namespace ref {

// x has dims (N, C, spatial...), packed row-major.
std::vector<double> lrn_cross_channel(const LrnDesc& lrn, const std::vector<int64_t>& dims,
                                      const std::vector<double>& x);

}  // namespace ref
}  // namespace jet
