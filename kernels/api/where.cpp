// where_forward: validation and backend dispatch.
#include "backend.h"
#include "check.h"

namespace jet {

JET_BACKEND_ENTRIES(where_forward, const TensorDesc& cond_desc, const void* cond,
                    const TensorDesc& a_desc, const void* a, const TensorDesc& b_desc,
                    const void* b, const TensorDesc& y_desc, void* y);

Status where_forward(const Handle& handle, const TensorDesc& cond_desc, const void* cond,
                     const TensorDesc& a_desc, const void* a, const TensorDesc& b_desc,
                     const void* b, const TensorDesc& y_desc, void* y) {
  const char* fn = "where_forward";
  JET_RETURN_IF_ERROR(in_routine(fn, cond_desc.validate_any_dtype("cond")));
  JET_RETURN_IF_ERROR(in_routine(fn, a_desc.validate_any_dtype("a")));
  JET_RETURN_IF_ERROR(in_routine(fn, b_desc.validate_any_dtype("b")));
  JET_RETURN_IF_ERROR(in_routine(fn, y_desc.validate_any_dtype("y")));
  if (cond_desc.dtype() != DType::BOOL)
    return make_status(StatusCode::BAD_PARAM, "%s: cond is %s, expected bool", fn,
                       dtype_name(cond_desc.dtype()));
  JET_RETURN_IF_ERROR(check_same_dtype(fn, a_desc, "a", y_desc, "y"));
  JET_RETURN_IF_ERROR(check_same_dtype(fn, b_desc, "b", y_desc, "y"));
  JET_RETURN_IF_ERROR(check_ptr(fn, y, "y"));
  TensorDesc c_aligned, a_aligned, b_aligned;
  JET_RETURN_IF_ERROR(check_broadcast_input(fn, cond, cond_desc, "cond", y, y_desc, "y", &c_aligned));
  JET_RETURN_IF_ERROR(check_broadcast_input(fn, a, a_desc, "a", y, y_desc, "y", &a_aligned));
  JET_RETURN_IF_ERROR(check_broadcast_input(fn, b, b_desc, "b", y, y_desc, "y", &b_aligned));
  if (handle.backend() == Backend::CPU)
    return cpu::where_forward(c_aligned, cond, a_aligned, a, b_aligned, b, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::where_forward(handle, c_aligned, cond, a_aligned, a, b_aligned, b, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

}  // namespace jet
