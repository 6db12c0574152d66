// CUDA batch normalization for inference: y = alpha * ((x - mean) * factor + bias) + beta * y
// per channel, factor = scale / sqrt(var + epsilon).
//
// One elementwise loop over y (elementwise.cuh) with x read through its strides and a third,
// virtual "tensor" whose offset is the channel index (stride 1 on C, 0 elsewhere): the loop
// simplification keeps C apart from its neighbours, and in the vector loop one 16-byte vector of
// y covers one channel (NCHW, inner stride 0) or V consecutive channels (NHWC, inner stride 1).
// Each block first computes the per-channel terms (in double, as the CPU backend) into shared
// memory, so the per-element work is a subtract and a multiply-add. Grids are capped at a few
// blocks per SM so that this setup stays small next to the tensor.
#include "../api/backend.h"
#include "elementwise.cuh"

namespace jet {
namespace cuda {
namespace {

constexpr int64_t kSmemChannels = 2048;  // 3 floats each: 24 KiB

extern __shared__ float bn_terms[];  // mean[C], factor[C], bias[C]

template <class T>
struct BatchnormOp {
  const T* x;
  T* y;
  const float* scale;
  const float* bias;
  const float* mean;
  const float* var;
  double epsilon;
  float alpha, beta;
  int64_t channels;
  bool use_smem;

  __device__ __forceinline__ float factor(int64_t c) const {
    return static_cast<float>(static_cast<double>(scale[c]) /
                              sqrt(static_cast<double>(var[c]) + epsilon));
  }

  __device__ __forceinline__ void setup() {
    if (!use_smem) return;
    for (int64_t c = threadIdx.x; c < channels; c += blockDim.x) {
      bn_terms[c] = mean[c];
      bn_terms[channels + c] = factor(c);
      bn_terms[2 * channels + c] = bias[c];
    }
    __syncthreads();
  }

  template <int V>
  __device__ __forceinline__ void apply(const EwLoop<3>& l, const int64_t* off) const {
    float v[V];
    load_v<V>(x, off[1], l.inner_stride(1), l.vec[1], v);
    const int64_t cs = l.inner_stride(2);
    if (cs == 0) {  // one channel for the whole vector (NCHW): look its terms up once
      const int64_t c = off[2];
      const float m = use_smem ? bn_terms[c] : mean[c];
      const float f = use_smem ? bn_terms[channels + c] : factor(c);
      const float b = use_smem ? bn_terms[2 * channels + c] : bias[c];
      for (int k = 0; k < V; ++k) v[k] = (v[k] - m) * f + b;
    } else {
      for (int k = 0; k < V; ++k) {
        const int64_t c = off[2] + k * cs;
        if (use_smem)
          v[k] = (v[k] - bn_terms[c]) * bn_terms[channels + c] + bn_terms[2 * channels + c];
        else
          v[k] = (v[k] - mean[c]) * factor(c) + bias[c];
      }
    }
    blend_store_v<V>(y, off[0], l.inner_stride(0), l.vec[0], alpha, v, beta);
  }
};

template <class T>
Status run(const Handle& h, float alpha, float beta, const TensorDesc& xd, const void* x,
           const TensorDesc& yd, void* y, const float* scale, const float* bias, const float* mean,
           const float* var, double epsilon) {
  // The channel index as a tensor: x's dims with 1 everywhere but C, stride 1 on C.
  int64_t cdims[kMaxRank], cstrides[kMaxRank];
  for (int i = 0; i < xd.rank(); ++i) {
    cdims[i] = i == 1 ? xd.dim(1) : 1;
    cstrides[i] = i == 1 ? 1 : 0;
  }
  const TensorDesc cd = TensorDesc::strided(DType::F32, xd.rank(), cdims, cstrides);
  const TensorDesc* descs[3] = {&yd, &xd, &cd};
  const void* ptrs[3] = {y, x, nullptr};
  constexpr int V = vec_width<T, T>();
  const int64_t channels = xd.dim(1);
  BatchnormOp<T> op{static_cast<const T*>(x), static_cast<T*>(y), scale, bias, mean, var, epsilon,
                    alpha, beta, channels, channels <= kSmemChannels};
  const size_t smem = op.use_smem ? static_cast<size_t>(3 * channels) * sizeof(float) : 0;
  return launch_ew<3, V>(h, op, make_ew_loop<3>(descs, ptrs, V), "batchnorm_forward_inference",
                         smem, 8);
}

}  // namespace

Status batchnorm_forward_inference(const Handle& h, float alpha, float beta,
                                   const TensorDesc& x_desc, const void* x,
                                   const TensorDesc& y_desc, void* y, const float* scale,
                                   const float* bias, const float* mean, const float* var,
                                   double epsilon) {
  if (x_desc.dtype() == DType::F32)
    return run<float>(h, alpha, beta, x_desc, x, y_desc, y, scale, bias, mean, var, epsilon);
  return run<__half>(h, alpha, beta, x_desc, x, y_desc, y, scale, bias, mean, var, epsilon);
}

}  // namespace cuda
}  // namespace jet
