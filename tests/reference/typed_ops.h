// Exact references of the routines that take integer and bool tensors: logic_tensor,
// where_forward, arg_reduce_forward and transform_tensor's conversions. Values are doubles (exact
// for the integers the tests use, |v| < 2^53); results are what the output dtype holds.
#pragma once

#include <cstdint>
#include <vector>

#include "jet/dnn/tensor_ops.h"

namespace jet {
namespace ref {

// op(a, b) as 0 or 1, a and b broadcast to c_dims (packed row-major).
std::vector<double> logic(LogicOp op, const std::vector<int64_t>& a_dims, const std::vector<double>& a,
                          const std::vector<int64_t>& b_dims, const std::vector<double>& b,
                          const std::vector<int64_t>& c_dims);

// cond != 0 ? a : b, all broadcast to y_dims.
std::vector<double> where(const std::vector<int64_t>& cond_dims, const std::vector<double>& cond,
                          const std::vector<int64_t>& a_dims, const std::vector<double>& a,
                          const std::vector<int64_t>& b_dims, const std::vector<double>& b,
                          const std::vector<int64_t>& y_dims);

// The index along `axis` of the largest (ARGMAX) or smallest element of each row; NaN wins, ties
// go to the first index (the last with select_last_index). x's dims with 1 at `axis`.
std::vector<double> arg_reduce(ArgReduceOp op, int axis, bool select_last_index,
                               const std::vector<int64_t>& x_dims, const std::vector<double>& x);

// v (a value of dtype `from`) as dtype `to` holds it: float -> integer truncates (NaN and out of
// range: the integer's lowest value), -> bool is != 0, i64 -> i32 wraps, -> f16 rounds to half.
double cast(DType from, DType to, double v);

// x gathered along `axis` at `indices` (packed, any dims; negative from the end): x's dims before
// axis, indices' dims, x's dims after axis. An index outside [-n, n) gives `invalid`.
std::vector<double> gather(int axis, const std::vector<int64_t>& x_dims, const std::vector<double>& x,
                           const std::vector<double>& indices, double invalid);

// op_tensor on integers (the values small enough that no op overflows): DIV truncates, MOD has
// a's sign, MOD_FLOOR b's, a zero divisor gives 0, POW with a negative exponent truncates
// 1 / a^-b (0 for a = 0); a and b broadcast to c_dims.
std::vector<double> int_tensor_op(TensorOp op, const std::vector<int64_t>& a_dims, const std::vector<double>& a,
                                  const std::vector<int64_t>& b_dims, const std::vector<double>& b,
                                  const std::vector<int64_t>& c_dims);

}  // namespace ref
}  // namespace jet
