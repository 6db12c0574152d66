// activation_forward: validation and backend dispatch; below, the CPU backend.
//
// CPU activation: one pass over the elements in x's index order.

#include <cmath>

#include "../api/backend.h"
#include "../api/check.h"
#include "../common/activation_math.h"
#include "cpu_common.h"

namespace jet {

JET_BACKEND_ENTRIES(activation_forward, const ActivationDesc& act, float alpha,
                    const TensorDesc& x_desc, const void* x, float beta, const TensorDesc& y_desc,
                    void* y);

const char* activation_mode_name(ActivationMode m) {
#define JET_ACTIVATION_NAME(e, v, name) \
  case ActivationMode::e: return name;
  switch (m) { JET_ACTIVATION_MODES(JET_ACTIVATION_NAME) }
#undef JET_ACTIVATION_NAME
  return "unknown-activation";
}

Status ActivationDesc::validate() const {
  const int m = static_cast<int>(mode);
  if (!enum_in_range<ActivationMode>(m))
    return make_status(StatusCode::BAD_PARAM, "activation: unknown mode %d", m);
  if (!std::isfinite(alpha) || !std::isfinite(beta))
    return make_status(StatusCode::INVALID_VALUE, "activation %s: parameters must be finite",
                       activation_mode_name(mode));
  if (mode == ActivationMode::CLIPPED_RELU && !(alpha > 0.f))
    return make_status(StatusCode::INVALID_VALUE,
                       "activation clipped_relu: ceiling alpha = %g must be > 0", alpha);
  if (mode == ActivationMode::CLIP && !(alpha <= beta))
    return make_status(StatusCode::INVALID_VALUE,
                       "activation clip: min alpha = %g must be <= max beta = %g", alpha, beta);
  return Status();
}

Status activation_forward(const Handle& handle, const ActivationDesc& act, float alpha,
                          const TensorDesc& x_desc, const void* x, float beta,
                          const TensorDesc& y_desc, void* y) {
  const char* fn = "activation_forward";
  JET_RETURN_IF_ERROR(in_routine(fn, act.validate()));
  JET_RETURN_IF_ERROR(check_elementwise_io(fn, Ranks::ANY, x_desc, x, y_desc, y));
  if (handle.backend() == Backend::CPU)
    return cpu::activation_forward(act, alpha, x_desc, x, beta, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::activation_forward(handle, act, alpha, x_desc, x, beta, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {

Status activation_forward(const ActivationDesc& act, float alpha, const TensorDesc& x_desc,
                          const void* x, float beta, const TensorDesc& y_desc, void* y) {
  const DType t = x_desc.dtype();
  StridedWalk w(x_desc.rank(), x_desc.dims(), x_desc.strides(), y_desc.strides());
  do {
    const float v = apply_activation(act, load(t, x, w.off[0]));
    blend_store(t, y, w.off[1], alpha, v, beta);
  } while (w.next());
  return Status();
}

}  // namespace cpu

}  // namespace jet
