// where_forward: validation and backend dispatch.
#include "backend.h"
#include "check.h"

namespace jet {

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
  const int rank = y_desc.rank();
  const TensorDesc c_aligned = align_rank(cond_desc, rank);
  const TensorDesc a_aligned = align_rank(a_desc, rank);
  const TensorDesc b_aligned = align_rank(b_desc, rank);
  JET_RETURN_IF_ERROR(check_broadcast(fn, c_aligned, "cond", y_desc, "y"));
  JET_RETURN_IF_ERROR(check_broadcast(fn, a_aligned, "a", y_desc, "y"));
  JET_RETURN_IF_ERROR(check_broadcast(fn, b_aligned, "b", y_desc, "y"));
  JET_RETURN_IF_ERROR(check_ptr(fn, cond, "cond"));
  JET_RETURN_IF_ERROR(check_ptr(fn, a, "a"));
  JET_RETURN_IF_ERROR(check_ptr(fn, b, "b"));
  JET_RETURN_IF_ERROR(check_ptr(fn, y, "y"));
  JET_RETURN_IF_ERROR(check_in_place(fn, cond, c_aligned, "cond", y, y_desc, "y"));
  JET_RETURN_IF_ERROR(check_in_place(fn, a, a_aligned, "a", y, y_desc, "y"));
  JET_RETURN_IF_ERROR(check_in_place(fn, b, b_aligned, "b", y, y_desc, "y"));
  if (handle.backend() == Backend::CPU)
    return cpu::where_forward(c_aligned, cond, a_aligned, a, b_aligned, b, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::where_forward(handle, c_aligned, cond, a_aligned, a, b_aligned, b, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

}  // namespace jet
