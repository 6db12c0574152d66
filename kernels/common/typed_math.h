// Element formulas of the routines that take integer and bool tensors (transform_tensor's
// conversions, logic_tensor, arg_reduce_forward), shared by the CPU and CUDA backends so both
// compute the same thing. Host and device. Values are handled in their own type: integers are
// compared and converted as integers (an int64 above 2^24 never goes through float), f16 as its
// float value, bool as a byte where nonzero is true.
#pragma once

#include <cstdint>

#include "activation_math.h"  // JET_HOST_DEVICE
#include "jet/dnn/tensor_ops.h"

namespace jet {

// Float -> integer as ONNX Cast and C: truncation toward zero. NaN and values outside the
// integer's range give its lowest value (what x86's cvttss2si gives) instead of C's undefined
// behaviour, on every backend.
JET_HOST_DEVICE inline int32_t float_to_i32(float v) {
  if (!(v >= -2147483648.f && v < 2147483648.f)) return INT32_MIN;
  return static_cast<int32_t>(v);
}
JET_HOST_DEVICE inline int64_t float_to_i64(float v) {
  if (!(v >= -9223372036854775808.f && v < 9223372036854775808.f)) return INT64_MIN;
  return static_cast<int64_t>(v);
}
// I64 -> I32 keeps the low 32 bits (two's complement wrap, as numpy's astype).
JET_HOST_DEVICE inline int32_t i64_to_i32(int64_t v) {
  const uint32_t low = static_cast<uint32_t>(static_cast<uint64_t>(v));
  return low <= 0x7fffffffu ? static_cast<int32_t>(low)
                            : static_cast<int32_t>(static_cast<int64_t>(low) - 4294967296LL);
}

// A comparison of two values of one type (float for f32 and f16, int32_t, int64_t, uint8_t for
// bool: EQUAL compares truth values). NaN fails every comparison.
template <class T>
JET_HOST_DEVICE inline bool apply_compare(LogicOp op, T a, T b) {
  switch (op) {
    case LogicOp::EQUAL: return a == b;
    case LogicOp::LESS: return a < b;
    case LogicOp::LESS_OR_EQUAL: return a <= b;
    case LogicOp::GREATER: return a > b;
    case LogicOp::GREATER_OR_EQUAL: return a >= b;
    case LogicOp::AND:
    case LogicOp::OR:
    case LogicOp::XOR: break;  // logical ops: apply_logical
  }
  return false;
}
JET_HOST_DEVICE inline bool apply_compare(LogicOp op, uint8_t a, uint8_t b) {
  return apply_compare<bool>(op, a != 0, b != 0);
}

// AND, OR, XOR of two bool bytes (nonzero is true).
JET_HOST_DEVICE inline bool apply_logical(LogicOp op, uint8_t a, uint8_t b) {
  const bool x = a != 0, y = b != 0;
  switch (op) {
    case LogicOp::AND: return x && y;
    case LogicOp::OR: return x || y;
    case LogicOp::XOR: return x != y;
    case LogicOp::EQUAL:
    case LogicOp::LESS:
    case LogicOp::LESS_OR_EQUAL:
    case LogicOp::GREATER:
    case LogicOp::GREATER_OR_EQUAL: break;  // comparisons: apply_compare
  }
  return false;
}

JET_HOST_DEVICE inline bool is_logical(LogicOp op) {
  return op == LogicOp::AND || op == LogicOp::OR || op == LogicOp::XOR;
}

// Whether v replaces `best` (at an earlier index) as the arg-max (max = true) or arg-min: a NaN
// wins over every number (numpy's argmax); ties keep the first index unless `last`.
template <class T>
JET_HOST_DEVICE inline bool arg_better(T v, T best, bool max, bool last) {
  const bool v_nan = v != v, best_nan = best != best;
  if (best_nan) return last && v_nan;
  if (v_nan) return true;
  if (last) return max ? v >= best : v <= best;
  return max ? v > best : v < best;
}

// cumsum_forward's (and scatter's ADD) step: floats add as floats; integers wrap (two's complement, computed unsigned
// so that overflow is defined), as numpy's cumsum of int32 / int64.
JET_HOST_DEVICE inline float typed_add(float a, float b) { return a + b; }
JET_HOST_DEVICE inline int32_t typed_add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
JET_HOST_DEVICE inline int64_t typed_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
// scatter's MUL: the same rules.
JET_HOST_DEVICE inline float typed_mul(float a, float b) { return a * b; }
JET_HOST_DEVICE inline int32_t typed_mul(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}
JET_HOST_DEVICE inline int64_t typed_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

}  // namespace jet
