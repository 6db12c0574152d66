// The derivatives of the activation functions, next to their definitions in
// kernels/common/activation_math.h (same parameters, same helpers), shared by the CPU and CUDA
// backward routines. Each is d act(x) / dx as a function of the forward input x.
#pragma once

#include "../common/activation_math.h"

namespace jet {

JET_HOST_DEVICE inline float sigmoid_f(float x) { return 1.f / (1.f + expf(-x)); }

// NaN in gives NaN out for every mode (a NaN fails every comparison below, and the smooth
// formulas propagate it). At kinks: PyTorch's choices, listed in jet/dnn/training.h.
JET_HOST_DEVICE inline float activation_derivative(ActivationMode mode, float a, float b, float x) {
  if (x != x) return x;
  switch (mode) {
    case ActivationMode::IDENTITY: return 1.f;
    case ActivationMode::RELU: return x > 0.f ? 1.f : 0.f;
    case ActivationMode::SIGMOID: {
      const float s = sigmoid_f(x);
      return s * (1.f - s);
    }
    case ActivationMode::TANH: {
      const float t = tanhf(x);
      return 1.f - t * t;
    }
    case ActivationMode::CLIPPED_RELU: return (x > 0.f && x < a) ? 1.f : 0.f;
    case ActivationMode::LEAKY_RELU: return x > 0.f ? 1.f : a;
    case ActivationMode::ELU: return x > 0.f ? 1.f : a * expf(x);
    case ActivationMode::SWISH: {
      const float s = sigmoid_f(a * x);
      return s + a * x * s * (1.f - s);
    }
    case ActivationMode::HARD_SWISH:
      return x < -3.f ? 0.f : (x > 3.f ? 1.f : x * (1.f / 3.f) + 0.5f);
    case ActivationMode::HARD_SIGMOID: {
      const float t = a * x + b;
      return (t > 0.f && t < 1.f) ? a : 0.f;
    }
    case ActivationMode::CLIP: return (x >= a && x <= b) ? 1.f : 0.f;
    case ActivationMode::SELU: return b * (x > 0.f ? 1.f : a * expf(x));
    case ActivationMode::SOFTPLUS: return sigmoid_f(x);
    case ActivationMode::MISH: {
      const float t = tanhf(softplus_f(x));
      return t + x * sigmoid_f(x) * (1.f - t * t);
    }
    case ActivationMode::EXP: return expf(x);
    case ActivationMode::LOG: return 1.f / x;
    case ActivationMode::SQRT: return 0.5f / sqrtf(x);
    case ActivationMode::RECIPROCAL: return -1.f / (x * x);
    case ActivationMode::ABS: return x > 0.f ? 1.f : (x < 0.f ? -1.f : 0.f);
    case ActivationMode::NEG: return -1.f;
    case ActivationMode::FLOOR:
    case ActivationMode::CEIL:
    case ActivationMode::ROUND:
    case ActivationMode::SIGN: return 0.f;  // piecewise constant (PyTorch: 0 everywhere)
    case ActivationMode::SIN: return cosf(x);
    case ActivationMode::COS: return -sinf(x);
    case ActivationMode::TAN: {
      const float t = tanf(x);
      return 1.f + t * t;
    }
    case ActivationMode::ERF: return 1.1283791670955126f * expf(-x * x);  // 2 / sqrt(pi)
    case ActivationMode::SOFTSIGN: {
      const float d = 1.f + fabsf(x);
      return 1.f / (d * d);
    }
    case ActivationMode::GELU:  // Phi(x) + x * phi(x)
      return 0.5f * (1.f + erff(x * 0.70710678118654752f)) +
             x * 0.39894228040143268f * expf(-0.5f * x * x);
    case ActivationMode::GELU_TANH: {
      const float k = 0.79788456080286536f;
      const float t = tanhf(k * (x + 0.044715f * x * x * x));
      return 0.5f * (1.f + t) + 0.5f * x * (1.f - t * t) * k * (1.f + 3.f * 0.044715f * x * x);
    }
  }
  return 1.f;
}

JET_HOST_DEVICE inline float activation_derivative(const ActivationDesc& d, float x) {
  return activation_derivative(d.mode, d.alpha, d.beta, x);
}

}  // namespace jet
