// op_tensor's binary ops as scalar math, shared by the CPU and CUDA backends (and the converter's
// constant folding through the CPU backend), so each formula is written once. Host and device.
#pragma once

#include <cmath>

#include "activation_math.h"  // JET_HOST_DEVICE
#include "jet/dnn/tensor_ops.h"

namespace jet {

// MIN and MAX propagate a NaN from either side (std::fmin/fmax would not): a NaN a is returned,
// and a NaN b fails the comparison so b is returned. POW and MOD follow C's powf and fmodf
// (as ONNX Runtime and numpy: pow(NaN, 0) = pow(1, NaN) = 1; fmod by 0 is NaN).
JET_HOST_DEVICE inline float apply_tensor_op(TensorOp op, float a, float b) {
  switch (op) {
    case TensorOp::ADD: return a + b;
    case TensorOp::SUB: return a - b;
    case TensorOp::MUL: return a * b;
    case TensorOp::DIV: return a / b;
    case TensorOp::MIN: return a != a ? a : (a < b ? a : b);
    case TensorOp::MAX: return a != a ? a : (a > b ? a : b);
    case TensorOp::POW: return powf(a, b);
    case TensorOp::MOD: return fmodf(a, b);
    case TensorOp::MOD_FLOOR: {
      const float r = fmodf(a, b);
      return r != 0.f && ((r < 0.f) != (b < 0.f)) ? r + b : r;
    }
  }
  return a;  // not reached: the front end rejects unknown ops
}

// op_tensor on int32_t / int64_t (U is the unsigned type of T's width): exact in T, ADD / SUB /
// MUL / POW wrap around through U (no signed overflow), a zero divisor gives 0, the lowest value
// divided by -1 wraps to itself (its remainder is 0). POW with a negative exponent truncates
// 1 / a^-b: 1 for a = 1, +-1 for a = -1 (the exponent's parity), 0 otherwise (a = 0 too).
template <class T, class U>
JET_HOST_DEVICE inline T apply_int_tensor_op(TensorOp op, T a, T b) {
  const U ua = static_cast<U>(a), ub = static_cast<U>(b);
  switch (op) {
    case TensorOp::ADD: return static_cast<T>(ua + ub);
    case TensorOp::SUB: return static_cast<T>(ua - ub);
    case TensorOp::MUL: return static_cast<T>(ua * ub);
    case TensorOp::DIV:
      if (b == 0) return 0;
      if (b == -1) return static_cast<T>(static_cast<U>(0) - ua);  // wraps the lowest value
      return a / b;
    case TensorOp::MIN: return a < b ? a : b;
    case TensorOp::MAX: return a > b ? a : b;
    case TensorOp::POW: {
      if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
      U r = 1, base = ua;
      for (T e = b; e > 0; e >>= 1) {
        if (e & 1) r *= base;
        base *= base;
      }
      return static_cast<T>(r);
    }
    case TensorOp::MOD:
    case TensorOp::MOD_FLOOR: {
      if (b == 0 || b == -1) return 0;  // x % -1 is 0; lowest % -1 would trap
      const T r = a % b;
      return op == TensorOp::MOD_FLOOR && r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
    }
  }
  return a;  // not reached: the front end rejects unknown ops
}

}  // namespace jet
