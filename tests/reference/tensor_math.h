// float64 reference tensor math: broadcasting, add_tensor and op_tensor.
#pragma once

#include <cstdint>
#include <vector>

#include "jet/dnn/tensor_ops.h"

namespace jet {
namespace ref {

// v (packed row-major with `dims`) broadcast to `to_dims`: ranks are aligned by padding `dims`
// with leading 1s, then every dim of size 1 repeats. Packed row-major with `to_dims`.
std::vector<double> broadcast(const std::vector<int64_t>& dims, const std::vector<double>& v,
                              const std::vector<int64_t>& to_dims);

// op(a, b) for one pair of values; MIN and MAX return NaN when either side is NaN.
double tensor_op(TensorOp op, double a, double b);

// op(alpha1 * a, alpha2 * b) with a and b broadcast to c_dims; packed row-major with c_dims.
std::vector<double> op_tensor(TensorOp op, double alpha1, const std::vector<int64_t>& a_dims,
                              const std::vector<double>& a, double alpha2,
                              const std::vector<int64_t>& b_dims, const std::vector<double>& b,
                              const std::vector<int64_t>& c_dims);

}  // namespace ref
}  // namespace jet
