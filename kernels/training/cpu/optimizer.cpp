// CPU optimizer steps (train_math.h's per-element updates) and the global-norm clip (the sum of
// squares in double).
#include <cmath>

#include "../backend.h"

namespace jet {
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
