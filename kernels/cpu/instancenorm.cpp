// instancenorm_forward: validation and backend dispatch; below, the CPU backend.
//
// CPU instance normalization: per (n, c) plane, three sweeps over the spatial dims in x's and
// y's strides: the mean, the variance as the mean squared deviation from it (two-pass, so a large
// mean next to a small spread costs no accuracy), then the outputs. Statistics and the
// normalization itself are computed in double; f16 storage is widened on load. Each plane is
// fully read before any of it is written, which makes x == y (same layout) safe. No allocation.

#include <cmath>

#include "../api/backend.h"
#include "../api/check.h"
#include "cpu_common.h"

namespace jet {

JET_BACKEND_ENTRIES(instancenorm_forward, float alpha, float beta, const TensorDesc& x_desc,
                    const void* x, const TensorDesc& y_desc, void* y, const float* scale,
                    const float* bias, double epsilon);

Status instancenorm_forward(const Handle& handle, float alpha, float beta,
                            const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
                            void* y, const float* scale, const float* bias, double epsilon) {
  const char* fn = "instancenorm_forward";
  // !(epsilon > 0) also catches NaN; an infinite epsilon would silently zero the normalized term.
  if (!(epsilon > 0.0) || !std::isfinite(epsilon))
    return make_status(StatusCode::INVALID_VALUE, "%s: epsilon = %g must be finite and > 0", fn,
                       epsilon);
  // Each (n, c) plane is read in full before any of it is written, and planes do not overlap:
  // x == y with one layout is safe (check_elementwise_io rejects two layouts on one buffer).
  JET_RETURN_IF_ERROR(check_elementwise_io(fn, Ranks::SPATIAL, x_desc, x, y_desc, y));
  JET_RETURN_IF_ERROR(check_ptr(fn, scale, "scale"));
  JET_RETURN_IF_ERROR(check_ptr(fn, bias, "bias"));
  if (handle.backend() == Backend::CPU)
    return cpu::instancenorm_forward(alpha, beta, x_desc, x, y_desc, y, scale, bias, epsilon);
#if defined(JET_HAVE_CUDA)
  return cuda::instancenorm_forward(handle, alpha, beta, x_desc, x, y_desc, y, scale, bias,
                                    epsilon);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {

Status instancenorm_forward(float alpha, float beta, const TensorDesc& x_desc, const void* x,
                            const TensorDesc& y_desc, void* y, const float* scale,
                            const float* bias, double epsilon) {
  const DType t = x_desc.dtype();
  const int spatial = x_desc.spatial_rank();
  const int64_t batch = x_desc.dim(0), channels = x_desc.dim(1);
  const int64_t* dims = x_desc.dims() + 2;
  const int64_t* xs = x_desc.strides() + 2;
  const int64_t* ys = y_desc.strides() + 2;

  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t xo = n * x_desc.stride(0) + c * x_desc.stride(1);
      const int64_t yo = n * y_desc.stride(0) + c * y_desc.stride(1);
      double mean = 0.0, var = 0.0;
      group_mean_var(t, x, xo, spatial, dims, xs, &mean, &var);
      const double factor = static_cast<double>(scale[c]) / std::sqrt(var + epsilon);
      const double shift = bias[c];
      StridedWalk w(spatial, dims, xs, ys);
      do {
        const double v = (load(t, x, xo + w.off[0]) - mean) * factor + shift;
        blend_store(t, y, yo + w.off[1], alpha, static_cast<float>(v), beta);
      } while (w.next());
    }
  }
  return Status();
}

}  // namespace cpu

}  // namespace jet
