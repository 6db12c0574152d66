// topk_forward: validation and backend dispatch; below, the CPU backend.
//
// CPU topk_forward: per row along the axis, an insertion into the k best seen so far, kept in the
// outputs themselves (no scratch: routines never allocate). O(n k) per row.

#include "../api/backend.h"
#include "../api/check.h"
#include "../common/detection_math.h"
#include "cpu_common.h"
#include "typed_access.h"

namespace jet {

JET_BACKEND_ENTRIES(topk_forward, int axis, int64_t k, bool largest, const TensorDesc& x_desc,
                    const void* x, const TensorDesc& values_desc, void* values,
                    const TensorDesc& indices_desc, void* indices);

namespace {

// An output of topk_forward: x's rank and dims but k at `axis`, of dtype `want`.
Status check_topk_output(const char* fn, const char* what, const TensorDesc& d, DType want,
                         const TensorDesc& x, int axis, int64_t k) {
  JET_RETURN_IF_ERROR(in_routine(fn, d.validate_any_dtype(what)));
  if (d.dtype() != want)
    return make_status(StatusCode::BAD_PARAM, "%s: %s is %s, expected %s", fn, what,
                       dtype_name(d.dtype()), dtype_name(want));
  if (d.rank() != x.rank())
    return make_status(StatusCode::BAD_PARAM, "%s: %s has rank %d but x has rank %d", fn, what,
                       d.rank(), x.rank());
  for (int i = 0; i < x.rank(); ++i) {
    if (d.dim(i) != (i == axis ? k : x.dim(i)))
      return make_status(StatusCode::BAD_PARAM,
                         "%s: %s has dims %s; x's dims %s with k = %lld at axis %d expected", fn,
                         what, dims_text(d.rank(), d.dims()).c_str(),
                         dims_text(x.rank(), x.dims()).c_str(), static_cast<long long>(k), axis);
  }
  return Status();
}

}  // namespace

Status topk_forward(const Handle& handle, int axis, int64_t k, bool largest,
                    const TensorDesc& x_desc, const void* x, const TensorDesc& values_desc,
                    void* values, const TensorDesc& indices_desc, void* indices) {
  const char* fn = "topk_forward";
  JET_RETURN_IF_ERROR(in_routine(fn, x_desc.validate_any_dtype("x")));
  if (x_desc.dtype() == DType::BOOL)
    return make_status(StatusCode::NOT_SUPPORTED, "%s: x is bool; it takes f32, f16, i32 or i64", fn);
  if (axis < 0 || axis >= x_desc.rank())
    return make_status(StatusCode::BAD_PARAM, "%s: axis %d is outside [0, %d)", fn, axis,
                       x_desc.rank());
  if (k < 1 || k > x_desc.dim(axis))
    return make_status(StatusCode::BAD_PARAM, "%s: k = %lld is outside [1, %lld] (x's dim at axis %d)",
                       fn, static_cast<long long>(k), static_cast<long long>(x_desc.dim(axis)), axis);
  JET_RETURN_IF_ERROR(check_ptr(fn, x, "x"));
  if (!values && !indices)
    return make_status(StatusCode::BAD_PARAM, "%s: values and indices are both null", fn);
  if (values) {
    JET_RETURN_IF_ERROR(check_topk_output(fn, "values", values_desc, x_desc.dtype(), x_desc, axis, k));
    if (values == x) return make_status(StatusCode::BAD_PARAM, "%s: values and x are the same buffer", fn);
  }
  if (indices) {
    JET_RETURN_IF_ERROR(check_topk_output(fn, "indices", indices_desc, DType::I64, x_desc, axis, k));
    if (indices == x || indices == values)
      return make_status(StatusCode::BAD_PARAM, "%s: indices share a buffer with x or values", fn);
  }
  if (handle.backend() == Backend::CPU)
    return cpu::topk_forward(axis, k, largest, x_desc, x, values_desc, values, indices_desc, indices);
#if defined(JET_HAVE_CUDA)
  return cuda::topk_forward(handle, axis, k, largest, x_desc, x, values_desc, values, indices_desc,
                            indices);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {
namespace {

template <class T>
void run(int axis, int64_t k, bool largest, const TensorDesc& xd, const void* x,
         const TensorDesc& vd, void* values, const TensorDesc& id, void* indices) {
  const T* xp = static_cast<const T*>(x);
  T* vp = static_cast<T*>(values);
  int64_t* ip = static_cast<int64_t*>(indices);
  const int rank = xd.rank();
  int64_t rows[kMaxRank];
  for (int d = 0; d < rank; ++d) rows[d] = d == axis ? 1 : xd.dim(d);
  // A missing output walks with x's strides (its offsets are never used).
  StridedWalk w(rank, rows, xd.strides(), vp ? vd.strides() : xd.strides(), ip ? id.strides() : xd.strides());
  const int64_t n = xd.dim(axis), xs = xd.stride(axis);
  const int64_t vs = vp ? vd.stride(axis) : 0, is = ip ? id.stride(axis) : 0;
  do {
    const int64_t xo = w.off[0], vo = w.off[1], io = w.off[2];
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i) {
      const auto v = value_of(xp[xo + i * xs]);
      // Entry q: its value (values, or x at its index) and index (indices; without them any
      // index below i: every entry was seen before i).
      const auto entry_value = [&](int64_t q) { return vp ? value_of(vp[vo + q * vs]) : value_of(xp[xo + ip[io + q * is] * xs]); };
      const auto entry_index = [&](int64_t q) { return ip ? ip[io + q * is] : i - 1; };
      if (count == k && !topk_before(v, i, entry_value(k - 1), entry_index(k - 1), largest)) continue;
      int64_t q = count < k ? count : k - 1;
      while (q > 0 && topk_before(v, i, entry_value(q - 1), entry_index(q - 1), largest)) {
        if (vp) vp[vo + q * vs] = vp[vo + (q - 1) * vs];
        if (ip) ip[io + q * is] = ip[io + (q - 1) * is];
        --q;
      }
      if (vp) vp[vo + q * vs] = xp[xo + i * xs];
      if (ip) ip[io + q * is] = i;
      if (count < k) ++count;
    }
  } while (w.next());
}

}  // namespace

Status topk_forward(int axis, int64_t k, bool largest, const TensorDesc& x_desc, const void* x,
                    const TensorDesc& values_desc, void* values, const TensorDesc& indices_desc,
                    void* indices) {
  Status st(StatusCode::INTERNAL_ERROR, "topk_forward: bool x reached the backend");
  with_storage_type(x_desc.dtype(), [&](auto type) {
    using T = decltype(type);
    if constexpr (!std::is_same<T, uint8_t>::value) {
      run<T>(axis, k, largest, x_desc, x, values_desc, values, indices_desc, indices);
      st = Status();
    }
  });
  return st;
}

}  // namespace cpu

}  // namespace jet
