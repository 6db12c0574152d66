// Typed element access of the CPU routines that take every dtype (transform's conversions,
// logic_tensor, where_forward, arg_reduce_forward): each value in its own type, converted by
// the shared formulas of kernels/common/typed_math.h.
#pragma once

#include <cstdint>
#include <type_traits>

#include "../common/typed_math.h"
#include "jet/dnn.h"

namespace jet {
namespace cpu {

// The value a routine computes with: f16 as float, everything else as stored.
inline float value_of(half v) { return static_cast<float>(v); }
inline float value_of(float v) { return v; }
inline int32_t value_of(int32_t v) { return v; }
inline int64_t value_of(int64_t v) { return v; }
inline uint8_t value_of(uint8_t v) { return v; }

// One element converted from From to To as transform_tensor (ONNX Cast) converts.
template <class To, class From>
To convert_value(From v) {
  if constexpr (std::is_same<From, uint8_t>::value) {  // bool: 0 or 1
    return convert_value<To, int32_t>(v != 0 ? 1 : 0);
  } else if constexpr (std::is_same<To, uint8_t>::value) {
    return value_of(v) != 0 ? 1 : 0;  // NaN != 0: true
  } else if constexpr (std::is_same<To, From>::value) {
    return v;
  } else if constexpr (std::is_same<To, half>::value) {
    return half(static_cast<float>(value_of(v)));
  } else if constexpr (std::is_same<To, float>::value) {
    return static_cast<float>(value_of(v));
  } else if constexpr (std::is_same<From, float>::value || std::is_same<From, half>::value) {
    if constexpr (std::is_same<To, int32_t>::value) return float_to_i32(value_of(v));
    else return float_to_i64(value_of(v));
  } else if constexpr (std::is_same<To, int32_t>::value) {  // from int64
    return i64_to_i32(v);
  } else {  // int32 -> int64
    return static_cast<int64_t>(v);
  }
}

// Calls f(T{}) with T the storage type of dtype t (half for F16, uint8_t for BOOL).
template <class F>
void with_storage_type(DType t, F&& f) {
  switch (t) {
    case DType::F32: f(float{}); return;
    case DType::F16: f(half{}); return;
    case DType::I32: f(int32_t{}); return;
    case DType::I64: f(int64_t{}); return;
    case DType::BOOL: f(uint8_t{}); return;
  }
}

}  // namespace cpu
}  // namespace jet
