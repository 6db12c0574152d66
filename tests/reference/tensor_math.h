// float64 reference tensor math: broadcasting, add_tensor and op_tensor.
// Naive float64 tensor math, written from the definitions: every output index is mapped to the
// input index by clamping to 0 on the input's size-1 dims.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "jet/dnn/tensor_ops.h"

namespace jet {
namespace ref {

// v (packed row-major with `dims`) broadcast to `to_dims`: ranks are aligned by padding `dims`
// with leading 1s, then every dim of size 1 repeats. Packed row-major with `to_dims`.
inline std::vector<double> broadcast(const std::vector<int64_t>& dims, const std::vector<double>& v,
                                     const std::vector<int64_t>& to_dims) {
  const size_t rank = to_dims.size();
  std::vector<int64_t> aligned(rank - dims.size(), 1);  // leading 1s
  aligned.insert(aligned.end(), dims.begin(), dims.end());
  int64_t total = 1;
  for (int64_t d : to_dims) total *= d;
  std::vector<double> out(static_cast<size_t>(total));
  std::vector<int64_t> idx(rank, 0);
  for (size_t p = 0; p < out.size(); ++p) {
    int64_t src = 0;
    for (size_t i = 0; i < rank; ++i) src = src * aligned[i] + (aligned[i] == 1 ? 0 : idx[i]);
    out[p] = v[static_cast<size_t>(src)];
    for (size_t i = rank; i-- > 0;) {
      if (++idx[i] < to_dims[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

// op(a, b) for one pair of values; MIN and MAX return NaN when either side is NaN.
inline double tensor_op(TensorOp op, double a, double b) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (op) {
    case TensorOp::ADD: return a + b;
    case TensorOp::SUB: return a - b;
    case TensorOp::MUL: return a * b;
    case TensorOp::DIV: return a / b;
    case TensorOp::MIN: return std::isnan(a) || std::isnan(b) ? nan : (a < b ? a : b);
    case TensorOp::MAX: return std::isnan(a) || std::isnan(b) ? nan : (a > b ? a : b);
    case TensorOp::POW: return std::pow(a, b);
    case TensorOp::MOD: return std::fmod(a, b);
    case TensorOp::MOD_FLOOR: {  // Python's %: the remainder takes b's sign (fmod's, moved by b)
      const double r = std::fmod(a, b);
      return r != 0.0 && ((r < 0.0) != (b < 0.0)) ? r + b : r;
    }
  }
  return nan;
}

// op(alpha1 * a, alpha2 * b) with a and b broadcast to c_dims; packed row-major with c_dims.
inline std::vector<double> op_tensor(TensorOp op, double alpha1, const std::vector<int64_t>& a_dims,
                                     const std::vector<double>& a, double alpha2,
                                     const std::vector<int64_t>& b_dims,
                                     const std::vector<double>& b,
                                     const std::vector<int64_t>& c_dims) {
  const std::vector<double> ab = broadcast(a_dims, a, c_dims);
  const std::vector<double> bb = broadcast(b_dims, b, c_dims);
  std::vector<double> c(ab.size());
  for (size_t i = 0; i < c.size(); ++i) c[i] = tensor_op(op, alpha1 * ab[i], alpha2 * bb[i]);
  return c;
}

}  // namespace ref
}  // namespace jet
