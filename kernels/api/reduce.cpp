// reduce_forward: validation and backend dispatch.
#include "backend.h"
#include "check.h"

namespace jet {

JET_BACKEND_ENTRIES(reduce_forward, ReduceOp op, float alpha, const TensorDesc& x_desc,
                    const void* x, float beta, const TensorDesc& y_desc, void* y);

Status reduce_forward(const Handle& handle, ReduceOp op, float alpha, const TensorDesc& x_desc,
                      const void* x, float beta, const TensorDesc& y_desc, void* y) {
  const char* fn = "reduce_forward";
  const int o = static_cast<int>(op);
  if (!enum_in_range<ReduceOp>(o))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown reduce op %d", fn, o);
  JET_RETURN_IF_ERROR(check_reshaping_io(fn, Ranks::ANY, x_desc, x, y_desc, y));
  for (int i = 0; i < x_desc.rank(); ++i) {
    if (y_desc.dim(i) != 1 && y_desc.dim(i) != x_desc.dim(i))
      return make_status(StatusCode::BAD_PARAM,
                         "%s: y has dims %s and x has dims %s; each dim of y must be 1 (reduced) "
                         "or equal to x's, but dim %d is neither",
                         fn, dims_text(y_desc.rank(), y_desc.dims()).c_str(),
                         dims_text(x_desc.rank(), x_desc.dims()).c_str(), i);
  }
  if (handle.backend() == Backend::CPU) return cpu::reduce_forward(op, alpha, x_desc, x, beta, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::reduce_forward(handle, op, alpha, x_desc, x, beta, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

}  // namespace jet
