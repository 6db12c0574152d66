// batchnorm_forward_inference: validation and backend dispatch; below, the CPU backend.
//
// CPU batch normalization for inference.
//
// Channels are processed in blocks whose per-channel factors live in small stack arrays (no
// allocation). Within a block the loop order follows the memory layout: when the channel stride
// is the smallest one (NHWC and friends) the channel loop is innermost, otherwise (NCHW) each
// channel's plane is swept on its own. Both orders are correct for any strides.

#include <cmath>

#include "../api/backend.h"
#include "../api/check.h"
#include "cpu_common.h"

namespace jet {

JET_BACKEND_ENTRIES(batchnorm_forward_inference, float alpha, float beta, const TensorDesc& x_desc,
                    const void* x, const TensorDesc& y_desc, void* y, const float* scale,
                    const float* bias, const float* mean, const float* var, double epsilon);

Status batchnorm_forward_inference(const Handle& handle, float alpha, float beta,
                                   const TensorDesc& x_desc, const void* x,
                                   const TensorDesc& y_desc, void* y, const float* scale,
                                   const float* bias, const float* mean, const float* var,
                                   double epsilon) {
  const char* fn = "batchnorm_forward_inference";
  // !(epsilon > 0) also catches NaN; an infinite epsilon would silently zero the normalized term.
  if (!(epsilon > 0.0) || !std::isfinite(epsilon))
    return make_status(StatusCode::INVALID_VALUE,
                       "%s: epsilon = %g must be finite and > 0", fn, epsilon);
  JET_RETURN_IF_ERROR(check_elementwise_io(fn, Ranks::SPATIAL, x_desc, x, y_desc, y));
  JET_RETURN_IF_ERROR(check_ptr(fn, scale, "scale"));
  JET_RETURN_IF_ERROR(check_ptr(fn, bias, "bias"));
  JET_RETURN_IF_ERROR(check_ptr(fn, mean, "mean"));
  JET_RETURN_IF_ERROR(check_ptr(fn, var, "var"));
  if (handle.backend() == Backend::CPU)
    return cpu::batchnorm_forward_inference(alpha, beta, x_desc, x, y_desc, y, scale, bias, mean,
                                            var, epsilon);
#if defined(JET_HAVE_CUDA)
  return cuda::batchnorm_forward_inference(handle, alpha, beta, x_desc, x, y_desc, y, scale,
                                           bias, mean, var, epsilon);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {

namespace {

constexpr int64_t kChannelBlock = 128;

// Per-channel terms of y = (x - mean) * factor + bias, with factor = scale / sqrt(var + eps)
// computed in double. Keeping (x - mean) explicit (rather than folding mean into the bias)
// avoids cancellation when |mean| is large compared with the spread of x.
struct ChannelTerms {
  float mean[kChannelBlock];
  float factor[kChannelBlock];
  float bias[kChannelBlock];
};

}  // namespace

Status batchnorm_forward_inference(float alpha, float beta, const TensorDesc& x_desc,
                                   const void* x, const TensorDesc& y_desc, void* y,
                                   const float* scale, const float* bias, const float* mean,
                                   const float* var, double epsilon) {
  const DType t = x_desc.dtype();
  const int rank = x_desc.rank();
  const int64_t channels = x_desc.dim(1);
  const int64_t xcs = x_desc.stride(1), ycs = y_desc.stride(1);

  // Every dim except the channel dim: N and the spatial dims.
  int64_t rest_dims[kMaxRank], rest_xs[kMaxRank], rest_ys[kMaxRank];
  int rest_rank = 0;
  bool channel_innermost = true;  // x's channel stride is no larger than any other stride
  for (int i = 0; i < rank; ++i) {
    if (i == 1) continue;
    rest_dims[rest_rank] = x_desc.dim(i);
    rest_xs[rest_rank] = x_desc.stride(i);
    rest_ys[rest_rank] = y_desc.stride(i);
    ++rest_rank;
    if (x_desc.dim(i) > 1 && x_desc.stride(i) < xcs) channel_innermost = false;
  }

  ChannelTerms terms;
  for (int64_t c0 = 0; c0 < channels; c0 += kChannelBlock) {
    const int64_t nb = channels - c0 < kChannelBlock ? channels - c0 : kChannelBlock;
    for (int64_t j = 0; j < nb; ++j) {
      const int64_t c = c0 + j;
      terms.mean[j] = mean[c];
      terms.factor[j] = static_cast<float>(static_cast<double>(scale[c]) /
                                           std::sqrt(static_cast<double>(var[c]) + epsilon));
      terms.bias[j] = bias[c];
    }
    if (channel_innermost) {
      StridedWalk w(rest_rank, rest_dims, rest_xs, rest_ys);
      do {
        for (int64_t j = 0; j < nb; ++j) {
          const int64_t c = c0 + j;
          const float v = (load(t, x, w.off[0] + c * xcs) - terms.mean[j]) * terms.factor[j] +
                          terms.bias[j];
          blend_store(t, y, w.off[1] + c * ycs, alpha, v, beta);
        }
      } while (w.next());
    } else {
      for (int64_t j = 0; j < nb; ++j) {
        const int64_t c = c0 + j;
        const int64_t xo = c * xcs, yo = c * ycs;
        StridedWalk w(rest_rank, rest_dims, rest_xs, rest_ys);
        do {
          const float v =
              (load(t, x, xo + w.off[0]) - terms.mean[j]) * terms.factor[j] + terms.bias[j];
          blend_store(t, y, yo + w.off[1], alpha, v, beta);
        } while (w.next());
      }
    }
  }
  return Status();
}

}  // namespace cpu

}  // namespace jet
