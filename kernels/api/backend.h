// The backends' entry points. The front ends in kernels/api/ validate every argument, then call
// these; a backend may assume valid, mutually consistent descriptors and non-null pointers.
// Each backend implements an op in one file: kernels/cpu/<op>.cpp, kernels/cuda/<op>.cu.
#pragma once

#include "../common/scatter_plan.h"
#include "jet/dnn.h"

namespace jet {

// The shared convolution entry: conv_forward is conv_bias_act_forward with no residual, no bias
// and the identity activation, blended with beta * y; z (residual) may be null, bias may be null.
// y = act(alpha1 * conv(x, w) + alpha2 * z + bias) when fused is true, otherwise
// y = alpha1 * conv(x, w) + beta * y (z, bias and act unused).
struct ConvEpilogue {
  bool fused = false;
  float beta = 0.f;     // unfused: y = alpha1 * conv + beta * y
  float alpha2 = 0.f;   // fused: residual scale
  const TensorDesc* z_desc = nullptr;
  const void* z = nullptr;
  const void* bias = nullptr;  // K values in y's dtype (contiguous per the bias desc's stride)
  int64_t bias_stride = 1;     // element stride between channels in the bias tensor
  ActivationDesc act;
};

// image_preprocess, resolved by the front end (kernels/api/image_preprocess.cpp) so that both
// backends sample identically. Along x (likewise y), output column x in [pad_x, pad_x + width)
// samples the source at u = x - pad_x: BILINEAR between columns i0 and i0 + 1 with weight
// rem / den on the second, where (2u + 1) * in - resized = i0 * den + rem and den = 2 * resized
// (the half-pixel centre mapping in exact integers; clamped at the edges); NEAREST column
// ((2u + 1) * in) / den. Outside the resized extent the output is pad_out[c].
struct ImageResampleAxis {
  int64_t in = 0;       // source pixels
  int64_t out = 0;      // output pixels
  int64_t resized = 0;  // the image's extent in the output
  int64_t pad = 0;      // first output pixel of the image
};

struct ImageResample {
  ImageResize resize = ImageResize::BILINEAR;
  ImageResampleAxis x, y;
  int64_t row_bytes = 0;
  int pixel_bytes = 0;
  int channels = 0;         // output channels, 1 or 3
  int source_byte[3] = {};  // byte within a source pixel of each output channel
  float scale[3] = {}, offset[3] = {}, pad_out[3] = {};
};

// One source tap along an axis: value = (1 - w) * p[i0] + w * p[i1]; NEAREST: w = 0, i1 = i0.
// Shared by the CPU backend and the CUDA kernel (host and device).
struct ImageTap {
  int64_t i0, i1;
  float w;
};

#if defined(__CUDACC__)
__host__ __device__
#endif
inline ImageTap image_tap(const ImageResampleAxis& a, bool bilinear, int64_t u) {
  const int64_t den = 2 * a.resized;
  ImageTap t{0, 0, 0.f};
  if (!bilinear) {
    t.i0 = (2 * u + 1) * a.in / den;
    if (t.i0 > a.in - 1) t.i0 = a.in - 1;
    t.i1 = t.i0;
    return t;
  }
  const int64_t num = (2 * u + 1) * a.in - a.resized;
  if (num <= 0) return t;  // left of the first pixel centre: clamped
  t.i0 = num / den;
  if (t.i0 >= a.in - 1) {  // right of the last pixel centre: clamped
    t.i0 = t.i1 = a.in - 1;
    return t;
  }
  t.i1 = t.i0 + 1;
  // rem and den are below 2^24, so both are exact floats and the quotient is correctly rounded.
  t.w = static_cast<float>(num - t.i0 * den) / static_cast<float>(den);
  return t;
}

namespace cpu {

Status activation_forward(const ActivationDesc& act, float alpha, const TensorDesc& x_desc,
                          const void* x, float beta, const TensorDesc& y_desc, void* y);

Status conv_forward_workspace_size(const TensorDesc& x_desc, const FilterDesc& w_desc,
                                   const ConvDesc& conv, const TensorDesc& y_desc, ConvAlgo algo,
                                   size_t* bytes);
Status choose_conv_forward_algo(const TensorDesc& x_desc, const FilterDesc& w_desc,
                                const ConvDesc& conv, const TensorDesc& y_desc,
                                ConvPreference preference, size_t workspace_limit,
                                ConvAlgo* algo);
Status conv_forward(float alpha1, const TensorDesc& x_desc, const void* x,
                    const FilterDesc& w_desc, const void* w, const ConvDesc& conv, ConvAlgo algo,
                    void* workspace, size_t workspace_bytes, const ConvEpilogue& epilogue,
                    const TensorDesc& y_desc, void* y);
Status conv_backward_data(float alpha, const FilterDesc& w_desc, const void* w,
                          const TensorDesc& dy_desc, const void* dy, const ConvDesc& conv,
                          float beta, const TensorDesc& dx_desc, void* dx);

Status pool_forward(const PoolDesc& pool, float alpha, const TensorDesc& x_desc, const void* x,
                    float beta, const TensorDesc& y_desc, void* y);

Status softmax_forward(SoftmaxAlgo algo, SoftmaxMode mode, float alpha, const TensorDesc& x_desc,
                       const void* x, float beta, const TensorDesc& y_desc, void* y);

Status lrn_cross_channel_forward(const LrnDesc& lrn, float alpha, const TensorDesc& x_desc,
                                 const void* x, float beta, const TensorDesc& y_desc, void* y);
Status batchnorm_forward_inference(float alpha, float beta, const TensorDesc& x_desc,
                                   const void* x, const TensorDesc& y_desc, void* y,
                                   const float* scale, const float* bias, const float* mean,
                                   const float* var, double epsilon);
Status instancenorm_forward(float alpha, float beta, const TensorDesc& x_desc, const void* x,
                            const TensorDesc& y_desc, void* y, const float* scale,
                            const float* bias, double epsilon);
Status layernorm_forward(int axis, float alpha, float beta, const TensorDesc& x_desc, const void* x,
                         const TensorDesc& y_desc, void* y, const float* scale, const float* bias,
                         double epsilon);
Status prelu_forward(float alpha, const TensorDesc& x_desc, const void* x,
                     const TensorDesc& slope_desc, const void* slope, float beta,
                     const TensorDesc& y_desc, void* y);

Status gemm_forward(const GemmDesc& gemm, float alpha, const TensorDesc& a_desc, const void* a,
                    const TensorDesc& b_desc, const void* b, const TensorDesc* bias_desc,
                    const void* bias, float beta, const TensorDesc& y_desc, void* y);

Status add_tensor(float alpha, const TensorDesc& b_desc, const void* b, float beta,
                  const TensorDesc& c_desc, void* c);
Status op_tensor(TensorOp op, float alpha1, const TensorDesc& a_desc, const void* a, float alpha2,
                 const TensorDesc& b_desc, const void* b, float beta, const TensorDesc& c_desc,
                 void* c);
Status transform_tensor(float alpha, const TensorDesc& x_desc, const void* x, float beta,
                        const TensorDesc& y_desc, void* y);
Status pad_forward(PadMode mode, const int64_t* pad_begin, const int64_t* pad_end, float value,
                   float alpha, const TensorDesc& x_desc, const void* x, float beta,
                   const TensorDesc& y_desc, void* y);
Status resize_forward(const ResizeDesc& resize, float alpha, const TensorDesc& x_desc,
                      const void* x, float beta, const TensorDesc& y_desc, void* y);
Status reduce_forward(ReduceOp op, float alpha, const TensorDesc& x_desc, const void* x,
                      float beta, const TensorDesc& y_desc, void* y);
Status logic_tensor(LogicOp op, const TensorDesc& a_desc, const void* a, const TensorDesc& b_desc,
                    const void* b, const TensorDesc& c_desc, void* c);
Status where_forward(const TensorDesc& cond_desc, const void* cond, const TensorDesc& a_desc,
                     const void* a, const TensorDesc& b_desc, const void* b,
                     const TensorDesc& y_desc, void* y);
Status arg_reduce_forward(ArgReduceOp op, int axis, bool select_last_index,
                          const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
                          void* y);
Status gather_forward(int axis, const TensorDesc& x_desc, const void* x,
                      const TensorDesc& indices_desc, const void* indices,
                      const TensorDesc& y_desc, void* y);
// Detection heads (TopK, NonMaxSuppression).
Status topk_forward(int axis, int64_t k, bool largest, const TensorDesc& x_desc, const void* x,
                    const TensorDesc& values_desc, void* values, const TensorDesc& indices_desc,
                    void* indices);
Status nms_forward(const NmsDesc& nms, const TensorDesc& boxes_desc, const void* boxes,
                   const TensorDesc& scores_desc, const void* scores, void* workspace,
                   const TensorDesc& y_desc, void* y);
Status image_preprocess(const ImageResample& plan, const void* src, float alpha, float beta,
                        const TensorDesc& y_desc, void* y);
Status gather_elements_forward(int axis, const TensorDesc& x_desc, const void* x,
                               const TensorDesc& indices_desc, const void* indices,
                               const TensorDesc& y_desc, void* y);
Status trilu_forward(bool upper, int64_t k, const TensorDesc& x_desc, const void* x,
                     const TensorDesc& y_desc, void* y);
Status cumsum_forward(int axis, bool exclusive, bool reverse, const TensorDesc& x_desc, const void* x,
                      const TensorDesc& y_desc, void* y);
Status scatter_forward(const ScatterPlan& plan, const TensorDesc& x_desc, const void* x,
                       const TensorDesc& indices_desc, const void* indices, const void* updates,
                       const TensorDesc& y_desc, void* y);

}  // namespace cpu

// The CUDA backend (kernels/cuda/*.cu), built when JET_HAVE_CUDA is defined. Pointers are device
// memory; every routine is asynchronous on handle.stream().
namespace cuda {

Status activation_forward(const Handle& handle, const ActivationDesc& act, float alpha,
                          const TensorDesc& x_desc, const void* x, float beta,
                          const TensorDesc& y_desc, void* y);

Status conv_forward_workspace_size(const Handle& handle, const TensorDesc& x_desc,
                                   const FilterDesc& w_desc, const ConvDesc& conv,
                                   const TensorDesc& y_desc, ConvAlgo algo, size_t* bytes);
Status conv_forward_tactic_count(const Handle& handle, const TensorDesc& x_desc,
                                 const FilterDesc& w_desc, const ConvDesc& conv,
                                 const TensorDesc& y_desc, ConvAlgo algo, int* count);
Status choose_conv_forward_algo(const Handle& handle, const TensorDesc& x_desc,
                                const FilterDesc& w_desc, const ConvDesc& conv,
                                const TensorDesc& y_desc, ConvPreference preference,
                                size_t workspace_limit, ConvAlgo* algo);
Status conv_forward(const Handle& handle, float alpha1, const TensorDesc& x_desc, const void* x,
                    const FilterDesc& w_desc, const void* w, const ConvDesc& conv, ConvAlgo algo,
                    void* workspace, size_t workspace_bytes, const ConvEpilogue& epilogue,
                    const TensorDesc& y_desc, void* y);
// For find_conv_forward_algo: runs conv_forward(algo) with alpha 1, beta 0 once to warm up, then
// times `runs` runs with CUDA events on the handle's stream; *ms gets their median. Synchronizes.
Status time_conv_forward_algo(const Handle& handle, const TensorDesc& x_desc, const void* x,
                              const FilterDesc& w_desc, const void* w, const ConvDesc& conv,
                              ConvAlgo algo, void* workspace, size_t workspace_bytes,
                              const TensorDesc& y_desc, void* y, int runs, float* ms);
Status conv_backward_data(const Handle& handle, float alpha, const FilterDesc& w_desc,
                          const void* w, const TensorDesc& dy_desc, const void* dy,
                          const ConvDesc& conv, float beta, const TensorDesc& dx_desc, void* dx);

Status pool_forward(const Handle& handle, const PoolDesc& pool, float alpha,
                    const TensorDesc& x_desc, const void* x, float beta,
                    const TensorDesc& y_desc, void* y);

Status softmax_forward(const Handle& handle, SoftmaxAlgo algo, SoftmaxMode mode, float alpha,
                       const TensorDesc& x_desc, const void* x, float beta,
                       const TensorDesc& y_desc, void* y);

Status lrn_cross_channel_forward(const Handle& handle, const LrnDesc& lrn, float alpha,
                                 const TensorDesc& x_desc, const void* x, float beta,
                                 const TensorDesc& y_desc, void* y);
Status batchnorm_forward_inference(const Handle& handle, float alpha, float beta,
                                   const TensorDesc& x_desc, const void* x,
                                   const TensorDesc& y_desc, void* y, const float* scale,
                                   const float* bias, const float* mean, const float* var,
                                   double epsilon);
Status instancenorm_forward(const Handle& handle, float alpha, float beta,
                            const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
                            void* y, const float* scale, const float* bias, double epsilon);
Status layernorm_forward(const Handle& handle, int axis, float alpha, float beta,
                         const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc, void* y,
                         const float* scale, const float* bias, double epsilon);
Status prelu_forward(const Handle& handle, float alpha, const TensorDesc& x_desc, const void* x,
                     const TensorDesc& slope_desc, const void* slope, float beta,
                     const TensorDesc& y_desc, void* y);

Status gemm_forward(const Handle& handle, const GemmDesc& gemm, float alpha,
                    const TensorDesc& a_desc, const void* a, const TensorDesc& b_desc,
                    const void* b, const TensorDesc* bias_desc, const void* bias, float beta,
                    const TensorDesc& y_desc, void* y);

Status add_tensor(const Handle& handle, float alpha, const TensorDesc& b_desc, const void* b,
                  float beta, const TensorDesc& c_desc, void* c);
Status op_tensor(const Handle& handle, TensorOp op, float alpha1, const TensorDesc& a_desc,
                 const void* a, float alpha2, const TensorDesc& b_desc, const void* b, float beta,
                 const TensorDesc& c_desc, void* c);
Status transform_tensor(const Handle& handle, float alpha, const TensorDesc& x_desc,
                        const void* x, float beta, const TensorDesc& y_desc, void* y);
Status pad_forward(const Handle& handle, PadMode mode, const int64_t* pad_begin,
                   const int64_t* pad_end, float value, float alpha, const TensorDesc& x_desc,
                   const void* x, float beta, const TensorDesc& y_desc, void* y);
Status resize_forward(const Handle& handle, const ResizeDesc& resize, float alpha,
                      const TensorDesc& x_desc, const void* x, float beta,
                      const TensorDesc& y_desc, void* y);
Status reduce_forward(const Handle& handle, ReduceOp op, float alpha, const TensorDesc& x_desc,
                      const void* x, float beta, const TensorDesc& y_desc, void* y);
Status logic_tensor(const Handle& handle, LogicOp op, const TensorDesc& a_desc, const void* a,
                    const TensorDesc& b_desc, const void* b, const TensorDesc& c_desc, void* c);
Status where_forward(const Handle& handle, const TensorDesc& cond_desc, const void* cond,
                     const TensorDesc& a_desc, const void* a, const TensorDesc& b_desc,
                     const void* b, const TensorDesc& y_desc, void* y);
Status arg_reduce_forward(const Handle& handle, ArgReduceOp op, int axis, bool select_last_index,
                          const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
                          void* y);
Status gather_forward(const Handle& handle, int axis, const TensorDesc& x_desc, const void* x,
                      const TensorDesc& indices_desc, const void* indices,
                      const TensorDesc& y_desc, void* y);
// Detection heads (TopK, NonMaxSuppression).
Status topk_forward(const Handle& handle, int axis, int64_t k, bool largest,
                    const TensorDesc& x_desc, const void* x, const TensorDesc& values_desc,
                    void* values, const TensorDesc& indices_desc, void* indices);
Status nms_forward(const Handle& handle, const NmsDesc& nms, const TensorDesc& boxes_desc,
                   const void* boxes, const TensorDesc& scores_desc, const void* scores,
                   void* workspace, const TensorDesc& y_desc, void* y);
Status image_preprocess(const Handle& handle, const ImageResample& plan, const void* src,
                        float alpha, float beta, const TensorDesc& y_desc, void* y);
Status gather_elements_forward(const Handle& handle, int axis, const TensorDesc& x_desc, const void* x,
                               const TensorDesc& indices_desc, const void* indices,
                               const TensorDesc& y_desc, void* y);
Status trilu_forward(const Handle& handle, bool upper, int64_t k, const TensorDesc& x_desc,
                     const void* x, const TensorDesc& y_desc, void* y);
Status cumsum_forward(const Handle& handle, int axis, bool exclusive, bool reverse,
                      const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc, void* y);
Status scatter_forward(const Handle& handle, const ScatterPlan& plan, const TensorDesc& x_desc,
                       const void* x, const TensorDesc& indices_desc, const void* indices,
                       const void* updates, const TensorDesc& y_desc, void* y);

}  // namespace cuda
}  // namespace jet
