// cumsum_forward: validation and backend dispatch; below, the CPU backend.
//
// CPU cumsum_forward: for each line along `axis` (walked as y's dims with 1 at the axis), one
// running sum in f32 (floats) or the integer's own type (wrapping, computed unsigned).

#include <type_traits>

#include "../api/backend.h"
#include "../api/check.h"
#include "cpu_common.h"
#include "typed_access.h"

namespace jet {

JET_BACKEND_ENTRIES(cumsum_forward, int axis, bool exclusive, bool reverse,
                    const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc, void* y);

Status cumsum_forward(const Handle& handle, int axis, bool exclusive, bool reverse, const TensorDesc& x_desc,
                      const void* x, const TensorDesc& y_desc, void* y) {
  const char* fn = "cumsum_forward";
  JET_RETURN_IF_ERROR(in_routine(fn, x_desc.validate_any_dtype("x")));
  JET_RETURN_IF_ERROR(in_routine(fn, y_desc.validate_any_dtype("y")));
  JET_RETURN_IF_ERROR(check_same_dtype(fn, x_desc, "x", y_desc, "y"));
  if (x_desc.dtype() == DType::BOOL)
    return make_status(StatusCode::BAD_PARAM, "%s: x is bool; it takes f32, f16, i32 or i64", fn);
  if (axis < 0 || axis >= x_desc.rank())
    return make_status(StatusCode::BAD_PARAM, "%s: axis %d is outside [0, %d)", fn, axis, x_desc.rank());
  if (!x_desc.same_dims(y_desc))
    return make_status(StatusCode::BAD_PARAM, "%s: x has dims %s but y %s", fn,
                       dims_text(x_desc.rank(), x_desc.dims()).c_str(), dims_text(y_desc.rank(), y_desc.dims()).c_str());
  JET_RETURN_IF_ERROR(check_ptr(fn, x, "x"));
  JET_RETURN_IF_ERROR(check_ptr(fn, y, "y"));
  if (x == y) return make_status(StatusCode::BAD_PARAM, "%s: x and y are the same buffer", fn);
  if (handle.backend() == Backend::CPU) return cpu::cumsum_forward(axis, exclusive, reverse, x_desc, x, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::cumsum_forward(handle, axis, exclusive, reverse, x_desc, x, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {
namespace {

template <class T>
void run(int axis, bool exclusive, bool reverse, const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
         void* y) {
  using Acc = typename std::conditional<std::is_integral<T>::value, T, float>::type;
  const T* xp = static_cast<const T*>(x);
  T* yp = static_cast<T*>(y);
  const int r = y_desc.rank();
  int64_t lines[kMaxRank];
  for (int d = 0; d < r; ++d) lines[d] = d == axis ? 1 : y_desc.dim(d);
  const int64_t n = y_desc.dim(axis), xstep = x_desc.stride(axis), ystep = y_desc.stride(axis);
  StridedWalk w(r, lines, x_desc.strides(), y_desc.strides());
  do {
    Acc sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t i = reverse ? n - 1 - j : j;
      const Acc v = static_cast<Acc>(value_of(xp[w.off[0] + i * xstep]));
      if (!exclusive) sum = typed_add(sum, v);
      yp[w.off[1] + i * ystep] = static_cast<T>(sum);
      if (exclusive) sum = typed_add(sum, v);
    }
  } while (w.next());
}

}  // namespace

Status cumsum_forward(int axis, bool exclusive, bool reverse, const TensorDesc& x_desc, const void* x,
                      const TensorDesc& y_desc, void* y) {
  switch (x_desc.dtype()) {
    case DType::F32: run<float>(axis, exclusive, reverse, x_desc, x, y_desc, y); break;
    case DType::F16: run<half>(axis, exclusive, reverse, x_desc, x, y_desc, y); break;
    case DType::I32: run<int32_t>(axis, exclusive, reverse, x_desc, x, y_desc, y); break;
    case DType::I64: run<int64_t>(axis, exclusive, reverse, x_desc, x, y_desc, y); break;
    case DType::BOOL: return Status(StatusCode::INTERNAL_ERROR, "cumsum_forward: bool x reached the backend");
  }
  return Status();
}

}  // namespace cpu

}  // namespace jet
