// The losses: workspace queries, validation and backend dispatch.
#include "train_check.h"

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

}  // namespace jet
