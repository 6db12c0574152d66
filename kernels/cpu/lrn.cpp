// LrnDesc::validate and lrn_cross_channel_forward: validation and backend dispatch; below, the CPU
// backend.
//
// CPU LRN across channels: at each (N, spatial) position the channels are swept in order while a
// ring of the last 16 x values (the largest window) holds the window's inputs. Every x value is
// read once, and read before the y of its channel is written, so x == y (same layout) works in
// place without scratch memory.

#include <algorithm>
#include <cmath>

#include "../api/backend.h"
#include "../api/check.h"
#include "cpu_common.h"

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

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {

Status lrn_cross_channel_forward(const LrnDesc& lrn, float alpha, const TensorDesc& x_desc,
                                 const void* x, float beta, const TensorDesc& y_desc, void* y) {
  const DType t = x_desc.dtype();
  constexpr int64_t kRing = 16;  // >= the largest window, LrnDesc's n <= 16
  const int64_t channels = x_desc.dim(1);
  const int64_t xc = x_desc.stride(1), yc = y_desc.stride(1);
  // Window [c - before, c + after] with before = floor((n-1)/2), after = ceil((n-1)/2).
  const int64_t before = (lrn.n - 1) / 2;
  const int64_t after = lrn.n - 1 - before;
  const float k = static_cast<float>(lrn.k);
  const float scale = static_cast<float>(lrn.alpha / static_cast<double>(lrn.n));
  const float power = static_cast<float>(lrn.beta);

  // Positions: N and the spatial dims (C swept inside).
  int64_t dims[5], xs[5], ys[5];
  int rank = 0;
  for (int i = 0; i < x_desc.rank(); ++i) {
    if (i == 1) continue;
    dims[rank] = x_desc.dim(i);
    xs[rank] = x_desc.stride(i);
    ys[rank] = y_desc.stride(i);
    ++rank;
  }
  StridedWalk w(rank, dims, xs, ys);
  do {
    float ring[kRing];
    int64_t loaded = 0;  // channels [0, loaded) have been read into the ring
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t last = std::min(channels - 1, c + after);
      for (; loaded <= last; ++loaded) ring[loaded % kRing] = load(t, x, w.off[0] + loaded * xc);
      float sum_sq = 0.f;
      for (int64_t j = std::max<int64_t>(0, c - before); j <= last; ++j)
        sum_sq += ring[j % kRing] * ring[j % kRing];
      const float v = ring[c % kRing] / std::pow(k + scale * sum_sq, power);
      blend_store(t, y, w.off[1] + c * yc, alpha, v, beta);
    }
  } while (w.next());
  return Status();
}

}  // namespace cpu

}  // namespace jet
