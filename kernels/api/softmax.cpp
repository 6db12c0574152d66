// softmax_forward: validation and backend dispatch.
#include "backend.h"
#include "check.h"

namespace jet {

JET_BACKEND_ENTRIES(softmax_forward, SoftmaxAlgo algo, SoftmaxMode mode, float alpha,
                    const TensorDesc& x_desc, const void* x, float beta, const TensorDesc& y_desc,
                    void* y);

Status softmax_forward(const Handle& handle, SoftmaxAlgo algo, SoftmaxMode mode, float alpha,
                       const TensorDesc& x_desc, const void* x, float beta,
                       const TensorDesc& y_desc, void* y) {
  const char* fn = "softmax_forward";
  const int a = static_cast<int>(algo);
  if (!enum_in_range<SoftmaxAlgo>(a))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown algorithm %d", fn, a);
  const int m = static_cast<int>(mode);
  if (!enum_in_range<SoftmaxMode>(m))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown mode %d", fn, m);
  JET_RETURN_IF_ERROR(check_elementwise_io(fn, Ranks::SPATIAL, x_desc, x, y_desc, y));
  if (handle.backend() == Backend::CPU)
    return cpu::softmax_forward(algo, mode, alpha, x_desc, x, beta, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::softmax_forward(handle, algo, mode, alpha, x_desc, x, beta, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

}  // namespace jet
