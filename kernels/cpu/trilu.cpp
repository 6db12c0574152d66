// trilu_forward: validation and backend dispatch; below, the CPU backend.
//
// CPU trilu_forward: one walk over y with the offsets of y and x and, as two more "tensors" of
// stride 1 along one dim and 0 elsewhere, the element's row and column in its matrix.

#include <cstring>

#include "../api/backend.h"
#include "../api/check.h"
#include "cpu_common.h"

namespace jet {

JET_BACKEND_ENTRIES(trilu_forward, bool upper, int64_t k, const TensorDesc& x_desc, const void* x,
                    const TensorDesc& y_desc, void* y);

Status trilu_forward(const Handle& handle, bool upper, int64_t k, const TensorDesc& x_desc, const void* x,
                     const TensorDesc& y_desc, void* y) {
  const char* fn = "trilu_forward";
  JET_RETURN_IF_ERROR(in_routine(fn, x_desc.validate_any_dtype("x")));
  JET_RETURN_IF_ERROR(in_routine(fn, y_desc.validate_any_dtype("y")));
  JET_RETURN_IF_ERROR(check_same_dtype(fn, x_desc, "x", y_desc, "y"));
  if (x_desc.rank() < 2)
    return make_status(StatusCode::BAD_PARAM, "%s: x has rank %d; it needs at least 2 (matrices)", fn,
                       x_desc.rank());
  if (!x_desc.same_dims(y_desc))
    return make_status(StatusCode::BAD_PARAM, "%s: x has dims %s but y %s", fn,
                       dims_text(x_desc.rank(), x_desc.dims()).c_str(), dims_text(y_desc.rank(), y_desc.dims()).c_str());
  JET_RETURN_IF_ERROR(check_ptr(fn, x, "x"));
  JET_RETURN_IF_ERROR(check_ptr(fn, y, "y"));
  if (x == y) return make_status(StatusCode::BAD_PARAM, "%s: x and y are the same buffer", fn);
  // Beyond +-(rows + cols) every k keeps all or nothing: clamp so that col - row - k cannot overflow.
  const int64_t lim = x_desc.dim(x_desc.rank() - 2) + x_desc.dim(x_desc.rank() - 1) + 1;
  const int64_t kc = k < -lim ? -lim : k > lim ? lim : k;
  if (handle.backend() == Backend::CPU) return cpu::trilu_forward(upper, kc, x_desc, x, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::trilu_forward(handle, upper, kc, x_desc, x, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {

Status trilu_forward(bool upper, int64_t k, const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
                     void* y) {
  const int r = y_desc.rank();
  int64_t rows[kMaxRank] = {}, cols[kMaxRank] = {};
  rows[r - 2] = 1;
  cols[r - 1] = 1;
  const int64_t esz = static_cast<int64_t>(dtype_size(y_desc.dtype()));
  const unsigned char* xp = static_cast<const unsigned char*>(x);
  unsigned char* yp = static_cast<unsigned char*>(y);
  StridedWalk w(r, y_desc.dims(), y_desc.strides(), x_desc.strides(), rows, cols);
  do {
    const int64_t d = w.off[3] - w.off[2];  // col - row
    const bool keep = upper ? d >= k : d <= k;
    if (keep)
      std::memcpy(yp + w.off[0] * esz, xp + w.off[1] * esz, static_cast<size_t>(esz));
    else
      std::memset(yp + w.off[0] * esz, 0, static_cast<size_t>(esz));  // 0 in every dtype, +0.0 in floats
  } while (w.next());
  return Status();
}

}  // namespace cpu

}  // namespace jet
