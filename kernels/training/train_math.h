// Per-element formulas of the losses and optimizer steps, shared by the CPU and CUDA backends
// (host and device code), so the two compute the same expressions.
#pragma once

#include "../common/activation_math.h"  // JET_HOST_DEVICE, <cmath>
#include "jet/dnn/training.h"

namespace jet {

// MSE and BCE-with-logits: the term of one element and its derivative (before the 1 / count).
JET_HOST_DEVICE inline float mse_term(float x, float t) {
  const float d = x - t;
  return d * d;
}
JET_HOST_DEVICE inline float mse_grad(float x, float t) { return 2.f * (x - t); }

// max(x, 0) - x t + log1p(exp(-|x|)): never exp of a large positive number.
JET_HOST_DEVICE inline float bce_term(float x, float t) {
  return (x > 0.f ? x : 0.f) - x * t + log1pf(expf(-fabsf(x)));
}
JET_HOST_DEVICE inline float bce_grad(float x, float t) { return 1.f / (1.f + expf(-x)) - t; }

// d op(u, v) / du and / dv for op_tensor's ops; MAX / MIN as torch.maximum / minimum's backward
// (half to each on a tie; a NaN fails every comparison, so both sides get all of dc); POW and
// MOD as torch.pow / torch.fmod's.
JET_HOST_DEVICE inline void op_tensor_partials(TensorOp op, float u, float v, float* du,
                                               float* dv) {
  switch (op) {
    case TensorOp::ADD: *du = 1.f; *dv = 1.f; return;
    case TensorOp::SUB: *du = 1.f; *dv = -1.f; return;
    case TensorOp::MUL: *du = v; *dv = u; return;
    case TensorOp::DIV: *du = 1.f / v; *dv = -u / (v * v); return;
    case TensorOp::MAX:
      *du = u == v ? 0.5f : (u < v ? 0.f : 1.f);
      *dv = u == v ? 0.5f : (u > v ? 0.f : 1.f);
      return;
    case TensorOp::MIN:
      *du = u == v ? 0.5f : (u > v ? 0.f : 1.f);
      *dv = u == v ? 0.5f : (u < v ? 0.f : 1.f);
      return;
    case TensorOp::POW:
      // PyTorch's pow backward: d/du = v u^(v-1), 0 where v == 0 (not 0 * inf at u == 0);
      // d/dv = u^v log(u), 0 where u == 0 and v >= 0 (not 0 * -inf); NaN for u < 0 (log).
      *du = v == 0.f ? 0.f : v * powf(u, v - 1.f);
      *dv = u == 0.f && v >= 0.f ? 0.f : powf(u, v) * logf(u);
      return;
    case TensorOp::MOD:
      // fmod(u, v) = u - trunc(u / v) v: PyTorch's fmod backward (1, -trunc(u / v)).
      *du = 1.f;
      *dv = -truncf(u / v);
      return;
    case TensorOp::MOD_FLOOR:
      // u - floor(u / v) v: (1, -floor(u / v)), as torch.remainder's backward.
      *du = 1.f;
      *dv = -floorf(u / v);
      return;
  }
  *du = *dv = 0.f;
}

// The Adam step's per-call constants, computed once on the host in double.
struct AdamScalars {
  float lr, beta1, beta2, eps, weight_decay;
  bool decoupled;
  float step_size;  // lr / (1 - beta1^t)
  float bc2_sqrt;   // sqrt(1 - beta2^t)
};

// torch.optim.Adam / AdamW (single-tensor, foreach=False) for one element.
JET_HOST_DEVICE inline void adam_update(const AdamScalars& a, float* p, float grad, float* m,
                                        float* v) {
  float g = grad;
  if (a.decoupled)
    *p *= 1.f - a.lr * a.weight_decay;
  else if (a.weight_decay != 0.f)
    g += a.weight_decay * *p;
  *m += (1.f - a.beta1) * (g - *m);  // exp_avg.lerp_(grad, 1 - beta1)
  *v = *v * a.beta2 + (1.f - a.beta2) * g * g;
  const float denom = sqrtf(*v) / a.bc2_sqrt + a.eps;
  *p -= a.step_size * (*m / denom);
}

// torch.optim.SGD for one element (buf may be null when momentum == 0).
JET_HOST_DEVICE inline void sgd_update(const SgdDesc& s, float* p, float grad, float* buf) {
  float g = grad;
  if (s.weight_decay != 0.f) g += s.weight_decay * *p;
  if (s.momentum != 0.f) {
    *buf = *buf * s.momentum + (1.f - s.dampening) * g;
    g = s.nesterov ? g + s.momentum * *buf : *buf;
  }
  *p -= s.lr * g;
}

// torch.nn.utils.clip_grad_norm_'s factor: clamp(max_norm / (total + 1e-6), max = 1); a NaN
// total gives NaN (the comparison fails), which then spreads to every gradient, as in PyTorch.
JET_HOST_DEVICE inline float clip_coefficient(float max_norm, float total) {
  const float c = max_norm / (total + 1e-6f);
  return c > 1.f ? 1.f : c;
}

}  // namespace jet
