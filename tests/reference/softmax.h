// float64 reference softmax on packed row-major arrays.
#pragma once

#include <cstdint>
#include <vector>

#include "jet/dnn/softmax.h"

namespace jet {
namespace ref {

// x has dims (N, C, spatial...), packed row-major.
std::vector<double> softmax_forward(SoftmaxAlgo algo, SoftmaxMode mode,
                                    const std::vector<int64_t>& dims,
                                    const std::vector<double>& x);

}  // namespace ref
}  // namespace jet
