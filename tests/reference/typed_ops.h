// Exact references of the routines that take integer and bool tensors: logic_tensor,
// where_forward, arg_reduce_forward and transform_tensor's conversions. Values are doubles (exact
// for the integers the tests use, |v| < 2^53); results are what the output dtype holds.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "jet/dnn/tensor_ops.h"
#include "jet/dnn/common.h"
#include "reference/tensor_math.h"

namespace jet {
namespace ref {

// op(a, b) as 0 or 1, a and b broadcast to c_dims (packed row-major).
inline std::vector<double> logic(LogicOp op, const std::vector<int64_t>& a_dims,
                                 const std::vector<double>& a, const std::vector<int64_t>& b_dims,
                                 const std::vector<double>& b, const std::vector<int64_t>& c_dims) {
  const std::vector<double> ab = broadcast(a_dims, a, c_dims), bb = broadcast(b_dims, b, c_dims);
  std::vector<double> out(ab.size());
  for (size_t i = 0; i < ab.size(); ++i) {
    const double x = ab[i], y = bb[i];
    bool r = false;
    switch (op) {
      case LogicOp::EQUAL: r = x == y; break;
      case LogicOp::LESS: r = x < y; break;
      case LogicOp::LESS_OR_EQUAL: r = x <= y; break;
      case LogicOp::GREATER: r = x > y; break;
      case LogicOp::GREATER_OR_EQUAL: r = x >= y; break;
      case LogicOp::AND: r = x != 0 && y != 0; break;
      case LogicOp::OR: r = x != 0 || y != 0; break;
      case LogicOp::XOR: r = (x != 0) != (y != 0); break;
    }
    out[i] = r ? 1.0 : 0.0;
  }
  return out;
}

// cond != 0 ? a : b, all broadcast to y_dims.
inline std::vector<double> where(const std::vector<int64_t>& cond_dims,
                                 const std::vector<double>& cond,
                                 const std::vector<int64_t>& a_dims, const std::vector<double>& a,
                                 const std::vector<int64_t>& b_dims, const std::vector<double>& b,
                                 const std::vector<int64_t>& y_dims) {
  const std::vector<double> cb = broadcast(cond_dims, cond, y_dims), ab = broadcast(a_dims, a, y_dims),
                            bb = broadcast(b_dims, b, y_dims);
  std::vector<double> out(cb.size());
  for (size_t i = 0; i < cb.size(); ++i) out[i] = cb[i] != 0 ? ab[i] : bb[i];
  return out;
}

// The index along `axis` of the largest (ARGMAX) or smallest element of each row; NaN wins, ties
// go to the first index (the last with select_last_index). x's dims with 1 at `axis`.
inline std::vector<double> arg_reduce(ArgReduceOp op, int axis, bool select_last_index,
                                      const std::vector<int64_t>& x_dims,
                                      const std::vector<double>& x) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x_dims[d];
  for (size_t d = axis + 1; d < x_dims.size(); ++d) inner *= x_dims[d];
  const int64_t n = x_dims[axis];
  std::vector<double> out(static_cast<size_t>(outer * inner));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < inner; ++k) {
      // The first (last) NaN if any; else the first (last) index of the extreme value.
      int64_t found = -1;
      for (int64_t i = 0; i < n; ++i) {
        if (std::isnan(x[(o * n + i) * inner + k]) && (found < 0 || select_last_index)) found = i;
      }
      if (found < 0) {
        double best = x[(o * n) * inner + k];
        for (int64_t i = 1; i < n; ++i) {
          const double v = x[(o * n + i) * inner + k];
          if (op == ArgReduceOp::ARGMAX ? v > best : v < best) best = v;
        }
        for (int64_t i = 0; i < n; ++i) {
          if (x[(o * n + i) * inner + k] == best && (found < 0 || select_last_index)) found = i;
        }
      }
      out[o * inner + k] = static_cast<double>(found);
    }
  }
  return out;
}

// v (a value of dtype `from`) as dtype `to` holds it: float -> integer truncates (NaN and out of
// range: the integer's lowest value), -> bool is != 0, i64 -> i32 wraps, -> f16 rounds to half.
inline double cast(DType from, DType to, double v) {
  if (from == DType::BOOL) v = v != 0 ? 1.0 : 0.0;
  switch (to) {
    case DType::F32: return static_cast<float>(v);
    case DType::F16: return static_cast<float>(half(static_cast<float>(v)));
    case DType::BOOL: return v != 0 ? 1.0 : 0.0;  // NaN != 0
    case DType::I32:
      if (from == DType::I64) {  // wraps modulo 2^32
        const double m = std::fmod(v, 4294967296.0);
        const double u = m < 0 ? m + 4294967296.0 : m;
        return u >= 2147483648.0 ? u - 4294967296.0 : u;
      }
      if (std::isnan(v) || v < -2147483648.0 || v >= 2147483648.0) return -2147483648.0;
      return std::trunc(v);
    case DType::I64:
      if (std::isnan(v) || v < -9223372036854775808.0 || v >= 9223372036854775808.0) return -9223372036854775808.0;
      return std::trunc(v);
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// x gathered along `axis` at `indices` (packed, any dims; negative from the end): x's dims before
// axis, indices' dims, x's dims after axis. An index outside [-n, n) gives `invalid`.
inline std::vector<double> gather(int axis, const std::vector<int64_t>& x_dims,
                                  const std::vector<double>& x, const std::vector<double>& indices,
                                  double invalid) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x_dims[d];
  for (size_t d = axis + 1; d < x_dims.size(); ++d) inner *= x_dims[d];
  const int64_t n = x_dims[axis];
  std::vector<double> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (double iv : indices) {
      int64_t i = static_cast<int64_t>(iv);
      const bool in = i >= -n && i < n;
      if (i < 0) i += n;
      for (int64_t k = 0; k < inner; ++k) out.push_back(in ? x[(o * n + i) * inner + k] : invalid);
    }
  }
  return out;
}

// op_tensor on integers (the values small enough that no op overflows): DIV truncates, MOD has
// a's sign, MOD_FLOOR b's, a zero divisor gives 0, POW with a negative exponent truncates
// 1 / a^-b (0 for a = 0); a and b broadcast to c_dims.
inline std::vector<double> int_tensor_op(TensorOp op, const std::vector<int64_t>& a_dims,
                                         const std::vector<double>& a,
                                         const std::vector<int64_t>& b_dims,
                                         const std::vector<double>& b,
                                         const std::vector<int64_t>& c_dims) {
  const std::vector<double> ab = broadcast(a_dims, a, c_dims), bb = broadcast(b_dims, b, c_dims);
  std::vector<double> out(ab.size());
  for (size_t i = 0; i < ab.size(); ++i) {
    const double x = ab[i], y = bb[i];
    double r = 0.0;
    switch (op) {
      case TensorOp::ADD: r = x + y; break;
      case TensorOp::SUB: r = x - y; break;
      case TensorOp::MUL: r = x * y; break;
      case TensorOp::DIV: r = y == 0.0 ? 0.0 : std::trunc(x / y); break;
      case TensorOp::MIN: r = std::min(x, y); break;
      case TensorOp::MAX: r = std::max(x, y); break;
      case TensorOp::POW:
        if (y >= 0.0) r = std::pow(x, y);
        else r = x == 0.0 ? 0.0 : std::trunc(1.0 / std::pow(x, -y));
        break;
      case TensorOp::MOD: r = y == 0.0 ? 0.0 : x - std::trunc(x / y) * y; break;
      case TensorOp::MOD_FLOOR: r = y == 0.0 ? 0.0 : x - std::floor(x / y) * y; break;
    }
    out[i] = r == 0.0 ? 0.0 : r;  // no -0
  }
  return out;
}

}  // namespace ref
}  // namespace jet
