// Activation functions, standalone and as the epilogue of fused convolution / GEMM.
#pragma once

#include "jet/dnn/tensor.h"

namespace jet {

// Values are stable: they are written into model files.
enum class ActivationMode : int32_t {
  IDENTITY = 0,      // x
  RELU = 1,          // max(x, 0)
  SIGMOID = 2,       // 1 / (1 + exp(-x))
  TANH = 3,          // tanh(x)
  CLIPPED_RELU = 4,  // min(max(x, 0), alpha)            relu6: alpha = 6
  LEAKY_RELU = 5,    // x >= 0 ? x : alpha * x
  ELU = 6,           // x >= 0 ? x : alpha * (exp(x) - 1)
  SWISH = 7,         // x * sigmoid(alpha * x)           silu: alpha = 1
  HARD_SWISH = 8,    // x * clamp(x / 6 + 1/2, 0, 1)
  HARD_SIGMOID = 9,  // clamp(alpha * x + beta, 0, 1)    ONNX defaults alpha = 0.2, beta = 0.5
  CLIP = 10,         // clamp(x, alpha, beta)            ONNX Clip(min = alpha, max = beta)
  SELU = 11,         // beta * (x > 0 ? x : alpha * (exp(x) - 1))
  SOFTPLUS = 12,     // log(1 + exp(x))
  MISH = 13,         // x * tanh(softplus(x))
};
template <>
struct EnumCount<ActivationMode> {
  static constexpr int32_t value = static_cast<int32_t>(ActivationMode::MISH) + 1;
};

const char* activation_mode_name(ActivationMode m);

// An activation with its (mode-specific) parameters, see ActivationMode.
struct ActivationDesc {
  ActivationMode mode = ActivationMode::IDENTITY;
  float alpha = 0.0f;
  float beta = 0.0f;

  static ActivationDesc identity() { return {ActivationMode::IDENTITY, 0.f, 0.f}; }
  static ActivationDesc relu() { return {ActivationMode::RELU, 0.f, 0.f}; }
  static ActivationDesc relu6() { return {ActivationMode::CLIPPED_RELU, 6.f, 0.f}; }
  static ActivationDesc sigmoid() { return {ActivationMode::SIGMOID, 0.f, 0.f}; }
  static ActivationDesc tanh() { return {ActivationMode::TANH, 0.f, 0.f}; }
  static ActivationDesc leaky_relu(float slope) { return {ActivationMode::LEAKY_RELU, slope, 0.f}; }
  static ActivationDesc elu(float a = 1.f) { return {ActivationMode::ELU, a, 0.f}; }
  static ActivationDesc silu() { return {ActivationMode::SWISH, 1.f, 0.f}; }
  static ActivationDesc hard_swish() { return {ActivationMode::HARD_SWISH, 0.f, 0.f}; }
  static ActivationDesc hard_sigmoid(float a = 0.2f, float b = 0.5f) { return {ActivationMode::HARD_SIGMOID, a, b}; }
  static ActivationDesc clip(float lo, float hi) { return {ActivationMode::CLIP, lo, hi}; }
  static ActivationDesc selu(float a = 1.67326319217681884765625f, float g = 1.05070102214813232421875f) {
    return {ActivationMode::SELU, a, g};
  }
  static ActivationDesc softplus() { return {ActivationMode::SOFTPLUS, 0.f, 0.f}; }
  static ActivationDesc mish() { return {ActivationMode::MISH, 0.f, 0.f}; }

  // BAD_PARAM for an unknown mode, INVALID_VALUE for parameters out of range
  // (CLIPPED_RELU needs alpha > 0, CLIP needs alpha <= beta, all parameters finite).
  Status validate() const;
};

// y = alpha * act(x) + beta * y. x and y have the same dims and dtype, any strides
// (rank 1..8). In-place (x == y with the same layout) is allowed.
Status activation_forward(const Handle& handle, const ActivationDesc& act, float alpha,
                          const TensorDesc& x_desc, const void* x, float beta,
                          const TensorDesc& y_desc, void* y);

}  // namespace jet
