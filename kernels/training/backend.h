// The training add-on's backend entry points (kernels/training/cpu/*.cpp, cuda/*.cu), called by
// the front ends in kernels/training/api/ after validation, as kernels/api/backend.h for the
// forward routines: a backend may assume valid, consistent f32 descriptors and non-null pointers
// (except where an argument is documented as optional).
#pragma once

#include "jet/dnn.h"
#include "jet/dnn/training.h"
#include "lrn_grad.h"
#include "pad_grad.h"
#include "resize_grad.h"
#include "train_math.h"

namespace jet {

// The reduction shapes of the losses' means and of the global-norm clip: the elements (rows for
// the cross-entropy) are split into chunks fixed by the count alone, so every device sums in
// the same order; one block per chunk writes a partial sum to the workspace, one block adds the
// partials.
constexpr int64_t kLossChunk = 4096;    // elements per partial (MSE, BCE, the clip's norm)
constexpr int64_t kLossRowChunk = 32;   // cross-entropy rows per partial
inline int64_t chunks(int64_t count, int64_t chunk) { return (count + chunk - 1) / chunk; }

// One operand's gradient in op_tensor_backward: which = 0 for a, 1 for b. The descriptors are
// rank-aligned with dc; dt_desc/dt is the gradient of operand `which`.
struct OpTensorGrad {
  TensorOp op;
  float alpha1, alpha2, alpha, beta;
  int which;
};

// LRN's window and constants as the gradient code takes them (kernels/training/lrn_grad.h).
LrnGradParams lrn_grad_params(const LrnDesc& lrn, int64_t channels);

// The Adam step's constants (bias corrections in double), the same for both backends
// (kernels/training/api/optimizer.cpp).
AdamScalars adam_scalars(const AdamDesc& adam, int64_t step);

namespace cpu {

Status activation_backward(const ActivationDesc& act, float alpha, const TensorDesc& x_desc,
                           const void* x, const TensorDesc& dy_desc, const void* dy, float beta,
                           const TensorDesc& dx_desc, void* dx);
Status prelu_backward(float alpha, const TensorDesc& x_desc, const void* x,
                      const TensorDesc& slope_desc, const void* slope, const TensorDesc& dy_desc,
                      const void* dy, float beta, const TensorDesc& dx_desc, void* dx,
                      float alpha_param, float beta_param, const TensorDesc& dslope_desc,
                      void* dslope);
Status softmax_backward(SoftmaxAlgo algo, SoftmaxMode mode, float alpha, const TensorDesc& y_desc,
                        const void* y, const TensorDesc& dy_desc, const void* dy, float beta,
                        const TensorDesc& dx_desc, void* dx);
Status pool_backward(const PoolDesc& pool, float alpha, const TensorDesc& x_desc, const void* x,
                     const TensorDesc& dy_desc, const void* dy, float beta,
                     const TensorDesc& dx_desc, void* dx);
Status conv_backward_bias(float alpha, const TensorDesc& dy_desc, const void* dy, float beta,
                          const TensorDesc& db_desc, void* db);
Status conv_backward_filter_implicit(float alpha, const TensorDesc& x_desc, const void* x,
                                     const TensorDesc& dy_desc, const void* dy,
                                     const ConvDesc& conv, float beta, const FilterDesc& dw_desc,
                                     void* dw);
// The GEMM algorithm's lowering: col[g][(n, o)][j] = x at filter offset j of group g's filter
// row (j = c * ws_c + taps . ws, the filter layout's own order; 0 in the padding), and
// dyp[g][kk][(n, o)] = dy[n, g * K/groups + kk, o]. Both packed.
Status conv_backward_filter_lower(const TensorDesc& x_desc, const void* x,
                                  const TensorDesc& dy_desc, const void* dy, const ConvDesc& conv,
                                  const FilterDesc& dw_desc, float* col, float* dyp);
Status op_tensor_backward(const OpTensorGrad& g, const TensorDesc& a_desc, const void* a,
                          const TensorDesc& b_desc, const void* b, const TensorDesc& dc_desc,
                          const void* dc, const TensorDesc& dt_desc, void* dt);
Status pad_backward(const PadGradGeom& g, float alpha, const void* dy, float beta,
                    const TensorDesc& dx_desc, void* dx);
Status resize_backward(const ResizeGradGeom& g, float alpha, const void* dy, float beta,
                       void* dx);
Status lrn_cross_channel_backward(const LrnDesc& lrn, float alpha, const TensorDesc& x_desc,
                                  const void* x, const TensorDesc& dy_desc, const void* dy,
                                  float beta, const TensorDesc& dx_desc, void* dx);
Status batchnorm_forward_training(float alpha, float beta, const TensorDesc& x_desc,
                                  const void* x, const TensorDesc& y_desc, void* y,
                                  const float* scale, const float* bias, double momentum,
                                  float* running_mean, float* running_var, double epsilon,
                                  float* save_mean, float* save_inv_std);
Status batchnorm_backward(float alpha_data, float beta_data, float alpha_param, float beta_param,
                          const TensorDesc& x_desc, const void* x, const TensorDesc& dy_desc,
                          const void* dy, const TensorDesc& dx_desc, void* dx,
                          const float* scale, float* dscale, float* dbias, double epsilon,
                          const float* saved_mean, const float* saved_inv_std);
// stats: 2 doubles per group (mean, inv_std), written for the parameter gradients; null when
// neither dscale nor dbias is asked for.
Status layernorm_backward(int axis, float alpha_data, float beta_data, float alpha_param,
                          float beta_param, const TensorDesc& x_desc, const void* x,
                          const TensorDesc& dy_desc, const void* dy, const TensorDesc& dx_desc,
                          void* dx, const float* scale, float* dscale, float* dbias,
                          double epsilon, double* stats);

enum class LossKind { MSE, BCE_WITH_LOGITS };
Status softmax_cross_entropy_loss(const TensorDesc& logits_desc, const void* logits,
                                  const int32_t* labels, float* loss, float alpha, float beta,
                                  const TensorDesc& dlogits_desc, void* dlogits);
Status elementwise_loss(LossKind kind, const TensorDesc& x_desc, const void* x,
                        const TensorDesc& target_desc, const void* target, float* loss,
                        float alpha, float beta, const TensorDesc& dx_desc, void* dx);
Status sgd_step(const SgdDesc& sgd, int64_t count, float* param, const float* grad,
                float* momentum_buf);
Status adam_step(const AdamDesc& adam, int64_t step, int64_t count, float* param,
                 const float* grad, float* m, float* v);
Status clip_grad_norm(int tensors, float* const* grads, const int64_t* counts, float max_norm,
                      float* total_norm);

}  // namespace cpu

namespace cuda {

Status activation_backward(const Handle& h, const ActivationDesc& act, float alpha,
                           const TensorDesc& x_desc, const void* x, const TensorDesc& dy_desc,
                           const void* dy, float beta, const TensorDesc& dx_desc, void* dx);
Status prelu_backward(const Handle& h, float alpha, const TensorDesc& x_desc, const void* x,
                      const TensorDesc& slope_desc, const void* slope, const TensorDesc& dy_desc,
                      const void* dy, float beta, const TensorDesc& dx_desc, void* dx,
                      float alpha_param, float beta_param, const TensorDesc& dslope_desc,
                      void* dslope);
Status softmax_backward(const Handle& h, SoftmaxAlgo algo, SoftmaxMode mode, float alpha,
                        const TensorDesc& y_desc, const void* y, const TensorDesc& dy_desc,
                        const void* dy, float beta, const TensorDesc& dx_desc, void* dx);
Status pool_backward(const Handle& h, const PoolDesc& pool, float alpha, const TensorDesc& x_desc,
                     const void* x, const TensorDesc& dy_desc, const void* dy, float beta,
                     const TensorDesc& dx_desc, void* dx);
// The bias gradient's workspace for dy (0: one block per channel fills the GPU); workspace null:
// one block per channel, else it holds that many bytes (several blocks per channel).
size_t conv_backward_bias_workspace_size(const Handle& h, const TensorDesc& dy_desc);
Status conv_backward_bias(const Handle& h, float alpha, const TensorDesc& dy_desc, const void* dy,
                          float beta, const TensorDesc& db_desc, void* db,
                          void* workspace);
Status conv_backward_filter_implicit(const Handle& h, float alpha, const TensorDesc& x_desc,
                                     const void* x, const TensorDesc& dy_desc, const void* dy,
                                     const ConvDesc& conv, float beta, const FilterDesc& dw_desc,
                                     void* dw);
Status conv_backward_filter_lower(const Handle& h, const TensorDesc& x_desc, const void* x,
                                  const TensorDesc& dy_desc, const void* dy, const ConvDesc& conv,
                                  const FilterDesc& dw_desc, float* col, float* dyp);
Status op_tensor_backward(const Handle& h, const OpTensorGrad& g, const TensorDesc& a_desc,
                          const void* a, const TensorDesc& b_desc, const void* b,
                          const TensorDesc& dc_desc, const void* dc, const TensorDesc& dt_desc,
                          void* dt);
Status pad_backward(const Handle& h, const PadGradGeom& g, float alpha, const void* dy,
                    float beta, const TensorDesc& dx_desc, void* dx);
Status resize_backward(const Handle& h, const ResizeGradGeom& g, float alpha, const void* dy,
                       float beta, void* dx);
Status lrn_cross_channel_backward(const Handle& h, const LrnDesc& lrn, float alpha,
                                  const TensorDesc& x_desc, const void* x,
                                  const TensorDesc& dy_desc, const void* dy, float beta,
                                  const TensorDesc& dx_desc, void* dx);
// The batch-norm kernels' workspace for x (0: one block per channel fills the GPU);
// workspace null: one block per channel, else it holds that many bytes (P blocks per channel).
size_t batchnorm_training_workspace_size(const Handle& h, const TensorDesc& x_desc);
Status batchnorm_forward_training(const Handle& h, float alpha, float beta,
                                  const TensorDesc& x_desc, const void* x,
                                  const TensorDesc& y_desc, void* y, const float* scale,
                                  const float* bias, double momentum, float* running_mean,
                                  float* running_var, double epsilon, float* save_mean,
                                  float* save_inv_std, void* workspace);
Status batchnorm_backward(const Handle& h, float alpha_data, float beta_data, float alpha_param,
                          float beta_param, const TensorDesc& x_desc, const void* x,
                          const TensorDesc& dy_desc, const void* dy, const TensorDesc& dx_desc,
                          void* dx, const float* scale, float* dscale, float* dbias,
                          double epsilon, const float* saved_mean, const float* saved_inv_std,
                          void* workspace);
// stats: 2 floats per group (mean, inv_std), as the CPU's.
Status layernorm_backward(const Handle& h, int axis, float alpha_data, float beta_data,
                          float alpha_param, float beta_param, const TensorDesc& x_desc,
                          const void* x, const TensorDesc& dy_desc, const void* dy,
                          const TensorDesc& dx_desc, void* dx, const float* scale, float* dscale,
                          float* dbias, double epsilon, float* stats);
Status softmax_cross_entropy_loss(const Handle& h, const TensorDesc& logits_desc,
                                  const void* logits, const int32_t* labels, float* partials,
                                  float* loss, float alpha, float beta,
                                  const TensorDesc& dlogits_desc, void* dlogits);
Status elementwise_loss(const Handle& h, cpu::LossKind kind, const TensorDesc& x_desc,
                        const void* x, const TensorDesc& target_desc, const void* target,
                        float* partials, float* loss, float alpha, float beta,
                        const TensorDesc& dx_desc, void* dx);
Status sgd_step(const Handle& h, const SgdDesc& sgd, int64_t count, float* param,
                const float* grad, float* momentum_buf);
Status adam_step(const Handle& h, const AdamDesc& adam, int64_t step, int64_t count,
                 float* param, const float* grad, float* m, float* v);
Status clip_grad_norm(const Handle& h, int tensors, float* const* grads, const int64_t* counts,
                      float max_norm, float* partials, float* total_norm);

}  // namespace cuda
}  // namespace jet
