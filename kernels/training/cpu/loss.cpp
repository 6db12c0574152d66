// The losses: workspace queries, validation and backend dispatch.
//
// CPU losses: sums in double; the workspace the front end checks is not needed here.

#include <cmath>
#include <limits>

#include "../api/train_check.h"
#include "../../cpu/cpu_common.h"
#include "../backend.h"
#include "../train_math.h"

namespace jet {

JET_CPU_ENTRY(softmax_cross_entropy_loss, const TensorDesc& logits_desc, const void* logits,
              const int32_t* labels, float* loss, float alpha, float beta,
              const TensorDesc& dlogits_desc, void* dlogits);
JET_CUDA_ENTRY(softmax_cross_entropy_loss, const TensorDesc& logits_desc, const void* logits,
               const int32_t* labels, float* partials, float* loss, float alpha, float beta,
               const TensorDesc& dlogits_desc, void* dlogits);
JET_CPU_ENTRY(elementwise_loss, LossKind kind, const TensorDesc& x_desc, const void* x,
              const TensorDesc& target_desc, const void* target, float* loss, float alpha,
              float beta, const TensorDesc& dx_desc, void* dx);
JET_CUDA_ENTRY(elementwise_loss, cpu::LossKind kind, const TensorDesc& x_desc, const void* x,
               const TensorDesc& target_desc, const void* target, float* partials, float* loss,
               float alpha, float beta, const TensorDesc& dx_desc, void* dx);

size_t softmax_cross_entropy_workspace_size(int64_t rows) {
  return rows > 0 ? static_cast<size_t>(chunks(rows, kLossRowChunk)) * sizeof(float) : 0;
}

size_t elementwise_loss_workspace_size(int64_t elements) {
  return elements > 0 ? static_cast<size_t>(chunks(elements, kLossChunk)) * sizeof(float) : 0;
}

namespace {

// What every loss checks of its outputs: something to compute, the workspace when the loss is
// asked for, dx's descriptor when the gradient is.
Status check_loss_outputs(const char* fn, const float* loss, void* workspace,
                          size_t workspace_bytes, size_t needed, const TensorDesc& dx_desc,
                          const void* dx, const TensorDesc& x_desc, const char* x_name,
                          const char* dx_name) {
  if (!loss && !dx)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: loss and %s are both null; ask for at least one", fn, dx_name);
  if (loss && (workspace_bytes < needed || !workspace))
    return make_status(StatusCode::BAD_PARAM,
                       "%s: the loss needs %zu bytes of workspace, got %zu%s", fn, needed,
                       workspace_bytes, workspace ? "" : " (a null pointer)");
  if (dx) {
    JET_TRY(check_train_tensor(fn, Ranks::ANY, dx_desc, dx, dx_name));
    JET_TRY(check_dims_as(fn, dx_desc, dx_name, x_desc, x_name));
  }
  return Status();
}

Status elementwise_loss(const char* fn, cpu::LossKind kind, const Handle& handle,
                        const TensorDesc& x_desc, const void* x, const TensorDesc& target_desc,
                        const void* target, void* workspace, size_t workspace_bytes, float* loss,
                        float alpha, float beta, const TensorDesc& dx_desc, void* dx) {
  JET_TRY(check_train_tensor(fn, Ranks::ANY, x_desc, x, "x"));
  JET_TRY(check_train_tensor(fn, Ranks::ANY, target_desc, target, "target"));
  JET_TRY(check_dims_as(fn, target_desc, "target", x_desc, "x"));
  JET_TRY(check_loss_outputs(fn, loss, workspace, workspace_bytes,
                             elementwise_loss_workspace_size(x_desc.elements()), dx_desc, dx,
                             x_desc, "x", "dx"));
  if (dx) {
    JET_TRY(check_in_place(fn, x, x_desc, "x", dx, dx_desc, "dx"));
    JET_TRY(check_in_place(fn, target, target_desc, "target", dx, dx_desc, "dx"));
  }
  if (handle.backend() == Backend::CPU)
    return cpu::elementwise_loss(kind, x_desc, x, target_desc, target, loss, alpha, beta, dx_desc,
                                 dx);
#if defined(JET_HAVE_CUDA)
  return cuda::elementwise_loss(handle, kind, x_desc, x, target_desc, target,
                                static_cast<float*>(workspace), loss, alpha, beta, dx_desc, dx);
#else
  return cuda_not_available(fn);
#endif
}

}  // namespace

Status softmax_cross_entropy_loss(const Handle& handle, const TensorDesc& logits_desc,
                                  const void* logits, const int32_t* labels, void* workspace,
                                  size_t workspace_bytes, float* loss, float alpha, float beta,
                                  const TensorDesc& dlogits_desc, void* dlogits) {
  const char* fn = "softmax_cross_entropy_loss";
  JET_TRY(check_train_tensor(fn, Ranks::ANY, logits_desc, logits, "logits"));
  if (logits_desc.rank() != 2)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: logits has dims %s; it must be rank 2 (N samples x C classes)", fn,
                       dims_string(logits_desc.rank(), logits_desc.dims()).c_str());
  JET_TRY(check_ptr(fn, labels, "labels"));
  JET_TRY(check_loss_outputs(fn, loss, workspace, workspace_bytes,
                             softmax_cross_entropy_workspace_size(logits_desc.dim(0)),
                             dlogits_desc, dlogits, logits_desc, "logits", "dlogits"));
  // A row's gradient is written after its statistics, by the threads that read it.
  if (dlogits) JET_TRY(check_in_place(fn, logits, logits_desc, "logits", dlogits, dlogits_desc,
                                      "dlogits"));
  if (handle.backend() == Backend::CPU)
    return cpu::softmax_cross_entropy_loss(logits_desc, logits, labels, loss, alpha, beta,
                                           dlogits_desc, dlogits);
#if defined(JET_HAVE_CUDA)
  return cuda::softmax_cross_entropy_loss(handle, logits_desc, logits, labels,
                                          static_cast<float*>(workspace), loss, alpha, beta,
                                          dlogits_desc, dlogits);
#else
  return cuda_not_available(fn);
#endif
}

Status mse_loss(const Handle& handle, const TensorDesc& x_desc, const void* x,
                const TensorDesc& target_desc, const void* target, void* workspace,
                size_t workspace_bytes, float* loss, float alpha, float beta,
                const TensorDesc& dx_desc, void* dx) {
  return elementwise_loss("mse_loss", cpu::LossKind::MSE, handle, x_desc, x, target_desc, target,
                          workspace, workspace_bytes, loss, alpha, beta, dx_desc, dx);
}

Status bce_with_logits_loss(const Handle& handle, const TensorDesc& x_desc, const void* x,
                            const TensorDesc& target_desc, const void* target, void* workspace,
                            size_t workspace_bytes, float* loss, float alpha, float beta,
                            const TensorDesc& dx_desc, void* dx) {
  return elementwise_loss("bce_with_logits_loss", cpu::LossKind::BCE_WITH_LOGITS, handle, x_desc,
                          x, target_desc, target, workspace, workspace_bytes, loss, alpha, beta,
                          dx_desc, dx);
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

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
