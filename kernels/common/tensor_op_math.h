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
  }
  return a;  // not reached: the front end rejects unknown ops
}

}  // namespace jet
