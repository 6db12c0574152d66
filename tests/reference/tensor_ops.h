// float64 references for the tensor operations pad, resize and reduce. Tensors are packed
// row-major arrays with their dims given alongside.
#pragma once

#include <cstdint>
#include <vector>

#include "jet/dnn/tensor_ops.h"

namespace jet {
namespace ref {

// ONNX Pad (numpy.pad per axis, then negative pads crop): y dims = x dims + begin + end.
std::vector<double> pad(PadMode mode, const std::vector<double>& x,
                        const std::vector<int64_t>& x_dims, const std::vector<int64_t>& begin,
                        const std::vector<int64_t>& end, double value);

// ONNX Resize (nearest / linear) over dims 2.. of a rank 3..5 tensor; y_dims gives the output
// sizes, resize.scales the scales (0: out / in).
std::vector<double> resize(const ResizeDesc& resize, const std::vector<double>& x,
                           const std::vector<int64_t>& x_dims, const std::vector<int64_t>& y_dims);

// Reduces every dim where y_dims is 1 and x_dims is not.
std::vector<double> reduce(ReduceOp op, const std::vector<double>& x,
                           const std::vector<int64_t>& x_dims, const std::vector<int64_t>& y_dims);

}  // namespace ref
}  // namespace jet
