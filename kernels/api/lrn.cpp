// LrnDesc::validate and lrn_cross_channel_forward: validation and backend dispatch.
#include <cmath>

#include "backend.h"
#include "check.h"

namespace jet {

JET_BACKEND_ENTRIES(lrn_cross_channel_forward, const LrnDesc& lrn, float alpha,
                    const TensorDesc& x_desc, const void* x, float beta, const TensorDesc& y_desc,
                    void* y);

Status LrnDesc::validate() const {
  // cuDNN's limits (CUDNN_LRN_MIN_N, CUDNN_LRN_MAX_N, CUDNN_LRN_MIN_K, CUDNN_LRN_MIN_BETA).
  if (n < 1 || n > 16)
    return make_status(StatusCode::INVALID_VALUE, "lrn: window n = %lld is outside [1, 16]",
                       static_cast<long long>(n));
  if (!std::isfinite(alpha))
    return make_status(StatusCode::INVALID_VALUE, "lrn: alpha = %g must be finite", alpha);
  if (!(k >= 1e-5) || !std::isfinite(k))
    return make_status(StatusCode::INVALID_VALUE, "lrn: k = %g must be finite and >= 1e-5", k);
  if (!(beta >= 0.01) || !std::isfinite(beta))
    return make_status(StatusCode::INVALID_VALUE, "lrn: beta = %g must be finite and >= 0.01",
                       beta);
  return Status();
}

Status lrn_cross_channel_forward(const Handle& handle, const LrnDesc& lrn, float alpha,
                                 const TensorDesc& x_desc, const void* x, float beta,
                                 const TensorDesc& y_desc, void* y) {
  const char* fn = "lrn_cross_channel_forward";
  JET_RETURN_IF_ERROR(in_routine(fn, lrn.validate()));
  JET_RETURN_IF_ERROR(check_elementwise_io(fn, Ranks::SPATIAL, x_desc, x, y_desc, y));
  if (handle.backend() == Backend::CPU)
    return cpu::lrn_cross_channel_forward(lrn, alpha, x_desc, x, beta, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::lrn_cross_channel_forward(handle, lrn, alpha, x_desc, x, beta, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

}  // namespace jet
