// The optimizer steps and the global-norm clip: descriptor validation, workspace query and
// backend dispatch.
//
// CPU optimizer steps (train_math.h's per-element updates) and the global-norm clip (the sum of
// squares in double).

#include <cmath>

#include "../api/train_check.h"
#include "../backend.h"

namespace jet {

JET_BACKEND_ENTRIES(sgd_step, const SgdDesc& sgd, int64_t count, float* param, const float* grad,
                    float* momentum_buf);
JET_BACKEND_ENTRIES(adam_step, const AdamDesc& adam, int64_t step, int64_t count, float* param,
                    const float* grad, float* m, float* v);
JET_CPU_ENTRY(clip_grad_norm, int tensors, float* const* grads, const int64_t* counts,
              float max_norm, float* total_norm);
JET_CUDA_ENTRY(clip_grad_norm, int tensors, float* const* grads, const int64_t* counts,
               float max_norm, float* partials, float* total_norm);

namespace {

bool finite_nonneg(float v) { return std::isfinite(v) && v >= 0.f; }

Status check_count(const char* fn, int64_t count) {
  if (count >= 1) return Status();
  return make_status(StatusCode::BAD_PARAM, "%s: count = %lld must be >= 1", fn,
                     static_cast<long long>(count));
}

}  // namespace

Status SgdDesc::validate() const {
  if (!finite_nonneg(lr) || !finite_nonneg(momentum) || !finite_nonneg(weight_decay) ||
      !(dampening >= 0.f && dampening <= 1.f))
    return make_status(StatusCode::INVALID_VALUE,
                       "sgd: lr = %g, momentum = %g, weight_decay = %g must be finite and >= 0, "
                       "dampening = %g in [0, 1]",
                       static_cast<double>(lr), static_cast<double>(momentum),
                       static_cast<double>(weight_decay), static_cast<double>(dampening));
  if (nesterov && (momentum <= 0.f || dampening != 0.f))
    return make_status(StatusCode::INVALID_VALUE,
                       "sgd: Nesterov momentum needs momentum > 0 and dampening 0 (got %g, %g)",
                       static_cast<double>(momentum), static_cast<double>(dampening));
  return Status();
}

Status AdamDesc::validate() const {
  if (!finite_nonneg(lr) || !finite_nonneg(eps) || !finite_nonneg(weight_decay) ||
      !(beta1 >= 0.f && beta1 < 1.f) || !(beta2 >= 0.f && beta2 < 1.f))
    return make_status(StatusCode::INVALID_VALUE,
                       "adam: lr = %g, eps = %g, weight_decay = %g must be finite and >= 0, "
                       "beta1 = %g and beta2 = %g in [0, 1)",
                       static_cast<double>(lr), static_cast<double>(eps),
                       static_cast<double>(weight_decay), static_cast<double>(beta1),
                       static_cast<double>(beta2));
  return Status();
}

AdamScalars adam_scalars(const AdamDesc& adam, int64_t step) {
  const double t = static_cast<double>(step);
  AdamScalars a;
  a.lr = adam.lr;
  a.beta1 = adam.beta1;
  a.beta2 = adam.beta2;
  a.eps = adam.eps;
  a.weight_decay = adam.weight_decay;
  a.decoupled = adam.decoupled_weight_decay;
  a.step_size = static_cast<float>(adam.lr / (1.0 - std::pow(static_cast<double>(adam.beta1), t)));
  a.bc2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(static_cast<double>(adam.beta2), t)));
  return a;
}

Status sgd_step(const Handle& handle, const SgdDesc& sgd, int64_t count, float* param,
                const float* grad, float* momentum_buf) {
  const char* fn = "sgd_step";
  JET_TRY(in_routine(fn, sgd.validate()));
  JET_TRY(check_count(fn, count));
  JET_TRY(check_ptr(fn, param, "param"));
  JET_TRY(check_ptr(fn, grad, "grad"));
  if (sgd.momentum != 0.f) JET_TRY(check_ptr(fn, momentum_buf, "momentum_buf"));
  if (handle.backend() == Backend::CPU) return cpu::sgd_step(sgd, count, param, grad, momentum_buf);
#if defined(JET_HAVE_CUDA)
  return cuda::sgd_step(handle, sgd, count, param, grad, momentum_buf);
#else
  return cuda_not_available(fn);
#endif
}

Status adam_step(const Handle& handle, const AdamDesc& adam, int64_t step, int64_t count,
                 float* param, const float* grad, float* m, float* v) {
  const char* fn = adam.decoupled_weight_decay ? "adam_step (AdamW)" : "adam_step";
  JET_TRY(in_routine(fn, adam.validate()));
  JET_TRY(check_count(fn, count));
  if (step < 1)
    return make_status(StatusCode::BAD_PARAM, "%s: step = %lld must be >= 1 (1-based)", fn,
                       static_cast<long long>(step));
  JET_TRY(check_ptr(fn, param, "param"));
  JET_TRY(check_ptr(fn, grad, "grad"));
  JET_TRY(check_ptr(fn, m, "m"));
  JET_TRY(check_ptr(fn, v, "v"));
  if (handle.backend() == Backend::CPU) return cpu::adam_step(adam, step, count, param, grad, m, v);
#if defined(JET_HAVE_CUDA)
  return cuda::adam_step(handle, adam, step, count, param, grad, m, v);
#else
  return cuda_not_available(fn);
#endif
}

size_t clip_grad_norm_workspace_size(int tensors, const int64_t* counts) {
  if (tensors < 1 || !counts) return 0;
  int64_t parts = 2;  // the total norm and the clip coefficient
  for (int i = 0; i < tensors; ++i) parts += counts[i] > 0 ? chunks(counts[i], kLossChunk) : 0;
  return static_cast<size_t>(parts) * sizeof(float);
}

Status clip_grad_norm(const Handle& handle, int tensors, float* const* grads,
                      const int64_t* counts, float max_norm, void* workspace,
                      size_t workspace_bytes, float* total_norm) {
  const char* fn = "clip_grad_norm";
  if (tensors < 1)
    return make_status(StatusCode::BAD_PARAM, "%s: tensors = %d must be >= 1", fn, tensors);
  JET_TRY(check_ptr(fn, grads, "grads"));
  JET_TRY(check_ptr(fn, counts, "counts"));
  for (int i = 0; i < tensors; ++i) {
    if (!grads[i] || counts[i] < 1)
      return make_status(StatusCode::BAD_PARAM,
                         "%s: gradient %d is %s with count %lld (non-null and >= 1 required)", fn,
                         i, grads[i] ? "set" : "null", static_cast<long long>(counts[i]));
  }
  if (!(std::isfinite(max_norm) && max_norm > 0.f))
    return make_status(StatusCode::INVALID_VALUE, "%s: max_norm = %g must be finite and > 0", fn,
                       static_cast<double>(max_norm));
  const size_t needed = clip_grad_norm_workspace_size(tensors, counts);
  if (workspace_bytes < needed || !workspace)
    return make_status(StatusCode::BAD_PARAM, "%s: needs %zu bytes of workspace, got %zu%s", fn,
                       needed, workspace_bytes, workspace ? "" : " (a null pointer)");
  if (handle.backend() == Backend::CPU)
    return cpu::clip_grad_norm(tensors, grads, counts, max_norm, total_norm);
#if defined(JET_HAVE_CUDA)
  return cuda::clip_grad_norm(handle, tensors, grads, counts, max_norm,
                              static_cast<float*>(workspace), total_norm);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {

Status sgd_step(const SgdDesc& sgd, int64_t count, float* param, const float* grad,
                float* momentum_buf) {
  for (int64_t i = 0; i < count; ++i)
    sgd_update(sgd, param + i, grad[i], momentum_buf ? momentum_buf + i : nullptr);
  return Status();
}

Status adam_step(const AdamDesc& adam, int64_t step, int64_t count, float* param,
                 const float* grad, float* m, float* v) {
  const AdamScalars a = adam_scalars(adam, step);
  for (int64_t i = 0; i < count; ++i) adam_update(a, param + i, grad[i], m + i, v + i);
  return Status();
}

Status clip_grad_norm(int tensors, float* const* grads, const int64_t* counts, float max_norm,
                      float* total_norm) {
  double sq = 0.0;
  for (int t = 0; t < tensors; ++t)
    for (int64_t i = 0; i < counts[t]; ++i) sq += static_cast<double>(grads[t][i]) * grads[t][i];
  const float total = static_cast<float>(std::sqrt(sq));
  const float coef = clip_coefficient(max_norm, total);
  for (int t = 0; t < tensors; ++t)
    for (int64_t i = 0; i < counts[t]; ++i) grads[t][i] *= coef;
  if (total_norm) *total_norm = total;
  return Status();
}

}  // namespace cpu

}  // namespace jet
