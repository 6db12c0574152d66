// CPU losses: sums in double; the workspace the front end checks is not needed here.
#include <cmath>
#include <limits>

#include "../../cpu/cpu_common.h"
#include "../backend.h"
#include "../train_math.h"

namespace jet {
namespace cpu {

Status softmax_cross_entropy_loss(const TensorDesc& logits_desc, const void* logits,
                                  const int32_t* labels, float* loss, float alpha, float beta,
                                  const TensorDesc& dlogits_desc, void* dlogits) {
  const float* x = static_cast<const float*>(logits);
  const int64_t n = logits_desc.dim(0), c = logits_desc.dim(1);
  const int64_t xs_n = logits_desc.stride(0), xs_c = logits_desc.stride(1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const float* row = x + i * xs_n;
    double max_v = row[0];
    for (int64_t j = 1; j < c; ++j) max_v = std::max(max_v, static_cast<double>(row[j * xs_c]));
    double sum = 0.0;
    for (int64_t j = 0; j < c; ++j) sum += std::exp(row[j * xs_c] - max_v);
    const double lse = max_v + std::log(sum);
    const int32_t label = labels[i];
    const bool valid = label >= 0 && label < c;
    total += valid ? lse - row[label * xs_c] : nan;
    if (dlogits) {
      for (int64_t j = 0; j < c; ++j) {
        const double p = std::exp(row[j * xs_c] - lse);
        const double g = valid ? (p - (j == label ? 1.0 : 0.0)) / static_cast<double>(n) : nan;
        blend_store(DType::F32, dlogits, i * dlogits_desc.stride(0) + j * dlogits_desc.stride(1),
                    alpha, static_cast<float>(g), beta);
      }
    }
  }
  if (loss) *loss = static_cast<float>(total / static_cast<double>(n));
  return Status();
}

Status elementwise_loss(LossKind kind, const TensorDesc& x_desc, const void* x,
                        const TensorDesc& target_desc, const void* target, float* loss,
                        float alpha, float beta, const TensorDesc& dx_desc, void* dx) {
  const float* xp = static_cast<const float*>(x);
  const float* tp = static_cast<const float*>(target);
  const int64_t count = x_desc.elements();
  const float inv = static_cast<float>(1.0 / static_cast<double>(count));
  double total = 0.0;
  StridedWalk w(x_desc.rank(), x_desc.dims(), x_desc.strides(), target_desc.strides(),
                dx ? dx_desc.strides() : x_desc.strides());
  do {
    const float xv = xp[w.off[0]], tv = tp[w.off[1]];
    if (kind == LossKind::MSE) {
      total += mse_term(xv, tv);
      if (dx) blend_store(DType::F32, dx, w.off[2], alpha, mse_grad(xv, tv) * inv, beta);
    } else {
      total += bce_term(xv, tv);
      if (dx) blend_store(DType::F32, dx, w.off[2], alpha, bce_grad(xv, tv) * inv, beta);
    }
  } while (w.next());
  if (loss) *loss = static_cast<float>(total / static_cast<double>(count));
  return Status();
}

}  // namespace cpu
}  // namespace jet
