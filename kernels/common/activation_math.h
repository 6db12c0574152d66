// The activation functions as scalar math, shared by every backend and every epilogue, so the
// definitions live in one place. Usable from host and CUDA device code.
#pragma once

#include <cmath>

#include "jet/dnn/activation.h"

#if defined(__CUDACC__)
#define JET_HOST_DEVICE __host__ __device__
#else
#define JET_HOST_DEVICE
#endif

namespace jet {

// max(x, lo), min(x, hi) and their composition that keep a NaN x, as ONNX and PyTorch do
// (fmaxf/fminf return the other operand for a NaN, which silently turns a fault into a number).
// A NaN fails every comparison, so it falls through to `x`. Written without isnan so the same
// code holds in device code; jet is never built with -ffast-math, which would break it.
JET_HOST_DEVICE inline float max_keep_nan(float x, float lo) { return x < lo ? lo : x; }
JET_HOST_DEVICE inline float min_keep_nan(float x, float hi) { return x > hi ? hi : x; }
JET_HOST_DEVICE inline float clamp_keep_nan(float x, float lo, float hi) {
  return min_keep_nan(max_keep_nan(x, lo), hi);
}

JET_HOST_DEVICE inline float softplus_f(float x) {
  // log(1 + exp(x)) without overflow: for large x it is x, for very negative x it is exp(x).
  return x > 20.f ? x : (x < -20.f ? expf(x) : log1pf(expf(x)));
}

// sin, cos and tan of large arguments take a slow argument reduction through a local array.
// Inlined into every kernel with a fused activation epilogue (conv_direct, winograd) it changed
// their register allocation and gave each a 32-64 byte stack frame; out of line, their registers
// are as without these modes, and only a call for a trig mode uses the stack (-Xptxas -v).
#if defined(__CUDACC__)
#define JET_NOINLINE __noinline__
#else
#define JET_NOINLINE
#endif
JET_HOST_DEVICE JET_NOINLINE inline float trig_f(ActivationMode mode, float x) {
  return mode == ActivationMode::SIN ? sinf(x) : (mode == ActivationMode::COS ? cosf(x) : tanf(x));
}

// NaN in gives NaN out for every mode (the same in ONNX and PyTorch); +-inf follow each formula.
JET_HOST_DEVICE inline float apply_activation(ActivationMode mode, float a, float b, float x) {
  switch (mode) {
    case ActivationMode::IDENTITY: return x;
    case ActivationMode::RELU: return max_keep_nan(x, 0.f);
    case ActivationMode::SIGMOID: return 1.f / (1.f + expf(-x));
    case ActivationMode::TANH: return tanhf(x);
    case ActivationMode::CLIPPED_RELU: return clamp_keep_nan(x, 0.f, a);
    case ActivationMode::LEAKY_RELU: return x >= 0.f ? x : a * x;
    case ActivationMode::ELU: return x >= 0.f ? x : a * expm1f(x);
    case ActivationMode::SWISH: return x / (1.f + expf(-a * x));
    case ActivationMode::HARD_SWISH: return x * clamp_keep_nan(x * (1.f / 6.f) + 0.5f, 0.f, 1.f);
    case ActivationMode::HARD_SIGMOID: return clamp_keep_nan(a * x + b, 0.f, 1.f);
    case ActivationMode::CLIP: return clamp_keep_nan(x, a, b);
    case ActivationMode::SELU: return b * (x > 0.f ? x : a * expm1f(x));
    case ActivationMode::SOFTPLUS: return softplus_f(x);
    case ActivationMode::MISH: return x * tanhf(softplus_f(x));
    case ActivationMode::EXP: return expf(x);
    case ActivationMode::LOG: return logf(x);
    case ActivationMode::SQRT: return sqrtf(x);
    case ActivationMode::RECIPROCAL: return 1.f / x;
    case ActivationMode::ABS: return fabsf(x);
    case ActivationMode::NEG: return -x;
    case ActivationMode::FLOOR: return floorf(x);
    case ActivationMode::CEIL: return ceilf(x);
    // rintf rounds halves to even in the default rounding mode, which jet never changes.
    case ActivationMode::ROUND: return rintf(x);
    case ActivationMode::SIGN: return x > 0.f ? 1.f : (x < 0.f ? -1.f : x);
    case ActivationMode::SIN:
    case ActivationMode::COS:
    case ActivationMode::TAN: return trig_f(mode, x);
    case ActivationMode::ERF: return erff(x);
    case ActivationMode::SOFTSIGN: return x / (1.f + fabsf(x));
    case ActivationMode::GELU: return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
    case ActivationMode::GELU_TANH:
      return 0.5f * x * (1.f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
  }
  return x;
}

JET_HOST_DEVICE inline float apply_activation(const ActivationDesc& d, float x) {
  return apply_activation(d.mode, d.alpha, d.beta, x);
}

}  // namespace jet
