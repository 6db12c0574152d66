// arg_reduce_forward: validation and backend dispatch; below, the CPU backend.
//
// CPU arg_reduce_forward: for each element of y, one walk along x's `axis`, values compared in
// their own type (arg_better, kernels/common/typed_math.h).

#include "../api/backend.h"
#include "../api/check.h"
#include "cpu_common.h"
#include "typed_access.h"

namespace jet {

JET_BACKEND_ENTRIES(arg_reduce_forward, ArgReduceOp op, int axis, bool select_last_index,
                    const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc, void* y);

Status arg_reduce_forward(const Handle& handle, ArgReduceOp op, int axis, bool select_last_index,
                          const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
                          void* y) {
  const char* fn = "arg_reduce_forward";
  const int op_value = static_cast<int>(op);
  if (!enum_in_range<ArgReduceOp>(op_value))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown arg-reduce op %d", fn, op_value);
  JET_RETURN_IF_ERROR(in_routine(fn, x_desc.validate_any_dtype("x")));
  JET_RETURN_IF_ERROR(in_routine(fn, y_desc.validate_any_dtype("y")));
  if (x_desc.dtype() == DType::BOOL)
    return make_status(StatusCode::BAD_PARAM, "%s: x is bool; it takes f32, f16, i32 or i64", fn);
  if (y_desc.dtype() != DType::I64)
    return make_status(StatusCode::BAD_PARAM, "%s: y is %s; the indices are i64", fn,
                       dtype_name(y_desc.dtype()));
  if (x_desc.rank() != y_desc.rank())
    return make_status(StatusCode::BAD_PARAM, "%s: x has rank %d but y has rank %d", fn,
                       x_desc.rank(), y_desc.rank());
  if (axis < 0 || axis >= x_desc.rank())
    return make_status(StatusCode::BAD_PARAM, "%s: axis %d is outside [0, %d)", fn, axis,
                       x_desc.rank());
  for (int d = 0; d < x_desc.rank(); ++d) {
    const int64_t want = d == axis ? 1 : x_desc.dim(d);
    if (y_desc.dim(d) != want)
      return make_status(StatusCode::BAD_PARAM,
                         "%s: y has dims %s; x's dims %s reduced along axis %d give 1 there and "
                         "x's dims elsewhere",
                         fn, dims_text(y_desc.rank(), y_desc.dims()).c_str(),
                         dims_text(x_desc.rank(), x_desc.dims()).c_str(), axis);
  }
  JET_RETURN_IF_ERROR(check_ptr(fn, x, "x"));
  JET_RETURN_IF_ERROR(check_ptr(fn, y, "y"));
  if (x == y) return make_status(StatusCode::BAD_PARAM, "%s: x and y are the same buffer", fn);
  if (handle.backend() == Backend::CPU)
    return cpu::arg_reduce_forward(op, axis, select_last_index, x_desc, x, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::arg_reduce_forward(handle, op, axis, select_last_index, x_desc, x, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {
namespace {

template <class T>
void run(ArgReduceOp op, int axis, bool last, const TensorDesc& x_desc, const void* x,
         const TensorDesc& y_desc, void* y) {
  const T* xp = static_cast<const T*>(x);
  int64_t* yp = static_cast<int64_t*>(y);
  const bool max = op == ArgReduceOp::ARGMAX;
  const int64_t n = x_desc.dim(axis), step = x_desc.stride(axis);
  StridedWalk w(y_desc.rank(), y_desc.dims(), x_desc.strides(), y_desc.strides());
  do {
    auto best = value_of(xp[w.off[0]]);
    int64_t best_i = 0;
    for (int64_t i = 1; i < n; ++i) {
      const auto v = value_of(xp[w.off[0] + i * step]);
      if (arg_better(v, best, max, last)) {
        best = v;
        best_i = i;
      }
    }
    yp[w.off[1]] = best_i;
  } while (w.next());
}

}  // namespace

Status arg_reduce_forward(ArgReduceOp op, int axis, bool select_last_index,
                          const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
                          void* y) {
  switch (x_desc.dtype()) {
    case DType::F32: run<float>(op, axis, select_last_index, x_desc, x, y_desc, y); break;
    case DType::F16: run<half>(op, axis, select_last_index, x_desc, x, y_desc, y); break;
    case DType::I32: run<int32_t>(op, axis, select_last_index, x_desc, x, y_desc, y); break;
    case DType::I64: run<int64_t>(op, axis, select_last_index, x_desc, x, y_desc, y); break;
    case DType::BOOL:
      return Status(StatusCode::INTERNAL_ERROR, "arg_reduce_forward: bool x reached the backend");
  }
  return Status();
}

}  // namespace cpu

}  // namespace jet
