// Activation functions, standalone and as the epilogue of fused convolution / GEMM.
#pragma once

#include "jet/dnn/tensor.h"

namespace jet {

// Every activation mode, declared once: X(ENUM, value, "name") /* its formula */. The enum, its
// EnumCount and activation_mode_name are generated from this list; the formula itself lives in
// kernels/common/activation_math.h (every backend and every fused epilogue), and -Wswitch asks for
// it there, in the training add-on's derivative and in the float64 test reference.
// Values are stable: they are written into model files (append only).
// clang-format off
#define JET_ACTIVATION_MODES(X)                                                                       \
  X(IDENTITY,     0,  "identity")      /* x */                                                        \
  X(RELU,         1,  "relu")          /* max(x, 0) */                                                \
  X(SIGMOID,      2,  "sigmoid")       /* 1 / (1 + exp(-x)) */                                        \
  X(TANH,         3,  "tanh")          /* tanh(x) */                                                  \
  X(CLIPPED_RELU, 4,  "clipped_relu")  /* min(max(x, 0), alpha)            relu6: alpha = 6 */        \
  X(LEAKY_RELU,   5,  "leaky_relu")    /* x >= 0 ? x : alpha * x */                                   \
  X(ELU,          6,  "elu")           /* x >= 0 ? x : alpha * (exp(x) - 1) */                        \
  X(SWISH,        7,  "swish")         /* x * sigmoid(alpha * x)           silu: alpha = 1 */         \
  X(HARD_SWISH,   8,  "hard_swish")    /* x * clamp(x / 6 + 1/2, 0, 1) */                             \
  X(HARD_SIGMOID, 9,  "hard_sigmoid")  /* clamp(alpha * x + beta, 0, 1)    ONNX: 0.2, 0.5 */          \
  X(CLIP,         10, "clip")          /* clamp(x, alpha, beta)            ONNX Clip(min, max) */     \
  X(SELU,         11, "selu")          /* beta * (x > 0 ? x : alpha * (exp(x) - 1)) */                \
  X(SOFTPLUS,     12, "softplus")      /* log(1 + exp(x)) */                                          \
  X(MISH,         13, "mish")          /* x * tanh(softplus(x)) */                                    \
  X(EXP,          14, "exp")           /* exp(x) */                                                   \
  X(LOG,          15, "log")           /* log(x)                           NaN below 0 */             \
  X(SQRT,         16, "sqrt")          /* sqrt(x)                          NaN below 0 */             \
  X(RECIPROCAL,   17, "reciprocal")    /* 1 / x */                                                    \
  X(ABS,          18, "abs")           /* |x| */                                                      \
  X(NEG,          19, "neg")           /* -x */                                                       \
  X(FLOOR,        20, "floor")         /* floor(x) */                                                 \
  X(CEIL,         21, "ceil")          /* ceil(x) */                                                  \
  X(ROUND,        22, "round")         /* x to the nearest integer, halves to even (ONNX Round) */    \
  X(SIGN,         23, "sign")          /* -1, 0 or 1 (0 keeps its sign) */                            \
  X(SIN,          24, "sin")           /* sin(x) */                                                   \
  X(COS,          25, "cos")           /* cos(x) */                                                   \
  X(TAN,          26, "tan")           /* tan(x) */                                                   \
  X(ERF,          27, "erf")           /* erf(x) */                                                   \
  X(SOFTSIGN,     28, "softsign")      /* x / (1 + |x|) */                                            \
  X(GELU,         29, "gelu")          /* x / 2 * (1 + erf(x / sqrt(2))) */                           \
  X(GELU_TANH,    30, "gelu_tanh")     /* x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) */
// clang-format on

#define JET_ACTIVATION_ENUM_VALUE(e, v, name) e = v,
enum class ActivationMode : int32_t { JET_ACTIVATION_MODES(JET_ACTIVATION_ENUM_VALUE) };
#undef JET_ACTIVATION_ENUM_VALUE

namespace detail {
// The values are 0, 1, 2, ... in the list's order (EnumCount and the range checks rely on it).
#define JET_ACTIVATION_VALUE(e, v, name) v,
constexpr int32_t kActivationValues[] = {JET_ACTIVATION_MODES(JET_ACTIVATION_VALUE)};
#undef JET_ACTIVATION_VALUE
constexpr bool activation_values_dense() {
  for (int32_t i = 0; i < static_cast<int32_t>(sizeof(kActivationValues) / sizeof(int32_t)); ++i)
    if (kActivationValues[i] != i) return false;
  return true;
}
static_assert(activation_values_dense(), "JET_ACTIVATION_MODES: values must be 0, 1, 2, ... in order");
}  // namespace detail

template <>
struct EnumCount<ActivationMode> {
  static constexpr int32_t value =
      static_cast<int32_t>(sizeof(detail::kActivationValues) / sizeof(int32_t));
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
  // A mode without parameters (EXP, LOG, ..., GELU).
  static ActivationDesc of(ActivationMode m) { return {m, 0.f, 0.f}; }

  // BAD_PARAM for an unknown mode, INVALID_VALUE for parameters out of range
  // (CLIPPED_RELU needs alpha > 0, CLIP needs alpha <= beta, all parameters finite).
  Status validate() const;
};

// y = alpha * act(x) + beta * y. x and y have the same dims and dtype, any strides
// (rank 1..8). In-place (x == y with the same layout) is allowed.
// docs/ops.md routines: | `activation_forward` | identity, relu, sigmoid, tanh, clipped relu
//   (relu6), leaky relu, elu, swish/silu, hard-swish, hard-sigmoid, clip, selu, softplus, mish,
//   exp, log, sqrt, reciprocal, abs, neg, floor, ceil, round (halves to even), sign, sin, cos, tan,
//   erf, softsign, gelu, gelu (tanh approximation); in place | yes | yes | yes | yes | yes | -- |
//   Relu, Sigmoid, Tanh, LeakyRelu, Elu, Selu, HardSigmoid, Softplus, Clip, HardSwish (14+), Mish
//   (18+), Exp, Log, Sqrt, Reciprocal, Abs, Neg, Floor, Ceil, Round, Sign, Sin, Cos, Tan, Erf,
//   Softsign, Gelu (20+); Mul(x, Sigmoid(x)) as swish |
Status activation_forward(const Handle& handle, const ActivationDesc& act, float alpha,
                          const TensorDesc& x_desc, const void* x, float beta,
                          const TensorDesc& y_desc, void* y);

}  // namespace jet
