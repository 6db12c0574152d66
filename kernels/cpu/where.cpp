// where_forward: validation and backend dispatch; below, the CPU backend.
//
// CPU where_forward: one pass over y's index space, cond, a and b read through broadcast
// strides; the chosen element is copied as stored (any dtype, no conversion).

#include <cstring>

#include "../api/backend.h"
#include "../api/check.h"
#include "cpu_common.h"

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

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {

Status where_forward(const TensorDesc& cond_desc, const void* cond, const TensorDesc& a_desc,
                     const void* a, const TensorDesc& b_desc, const void* b,
                     const TensorDesc& y_desc, void* y) {
  int64_t c_strides[kMaxRank], a_strides[kMaxRank], b_strides[kMaxRank];
  broadcast_strides(cond_desc, c_strides);
  broadcast_strides(a_desc, a_strides);
  broadcast_strides(b_desc, b_strides);
  const size_t esz = dtype_size(y_desc.dtype());
  const uint8_t* cp = static_cast<const uint8_t*>(cond);
  const unsigned char* ap = static_cast<const unsigned char*>(a);
  const unsigned char* bp = static_cast<const unsigned char*>(b);
  unsigned char* yp = static_cast<unsigned char*>(y);
  StridedWalk w(y_desc.rank(), y_desc.dims(), c_strides, a_strides, b_strides, y_desc.strides());
  do {
    const unsigned char* src = cp[w.off[0]] != 0 ? ap + w.off[1] * esz : bp + w.off[2] * esz;
    std::memcpy(yp + w.off[3] * esz, src, esz);
  } while (w.next());
  return Status();
}

}  // namespace cpu

}  // namespace jet
