// scatter_elements_forward, scatter_nd_forward and scatter_reduction_name: validation, the
// ScatterPlan (kernels/common/scatter_plan.h) and backend dispatch.
//
// CPU scatter_elements_forward and scatter_nd_forward: one walk over y; each element computed by
// the shared rule of kernels/common/scatter_plan.h from x's value there and the updates that land
// on it, or written as the invalid value (NaN, the lowest integer, false).

#include <cstring>
#include <limits>

#include "../api/backend.h"
#include "../api/check.h"
#include "cpu_common.h"
#include "typed_access.h"

namespace jet {

JET_BACKEND_ENTRIES(scatter_forward, const ScatterPlan& plan, const TensorDesc& x_desc,
                    const void* x, const TensorDesc& indices_desc, const void* indices,
                    const void* updates, const TensorDesc& y_desc, void* y);

const char* scatter_reduction_name(ScatterReduction r) {
  switch (r) {
    case ScatterReduction::NONE: return "none";
    case ScatterReduction::ADD: return "add";
    case ScatterReduction::MUL: return "mul";
    case ScatterReduction::MAX: return "max";
    case ScatterReduction::MIN: return "min";
  }
  return "unknown";
}

namespace {

// The checks both routines share: the reduction, dtypes, pointers and aliasing.
Status check_common(const char* fn, ScatterReduction reduction, const TensorDesc& x_desc, const void* x,
                    const TensorDesc& indices_desc, const void* indices, const TensorDesc& updates_desc,
                    const void* updates, const TensorDesc& y_desc, const void* y) {
  const int rv = static_cast<int>(reduction);
  if (!enum_in_range<ScatterReduction>(rv))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown reduction %d", fn, rv);
  JET_RETURN_IF_ERROR(in_routine(fn, x_desc.validate_any_dtype("x")));
  JET_RETURN_IF_ERROR(in_routine(fn, indices_desc.validate_any_dtype("indices")));
  JET_RETURN_IF_ERROR(in_routine(fn, updates_desc.validate_any_dtype("updates")));
  JET_RETURN_IF_ERROR(in_routine(fn, y_desc.validate_any_dtype("y")));
  JET_RETURN_IF_ERROR(check_same_dtype(fn, x_desc, "x", y_desc, "y"));
  JET_RETURN_IF_ERROR(check_same_dtype(fn, x_desc, "x", updates_desc, "updates"));
  JET_RETURN_IF_ERROR(check_index_dtype(fn, indices_desc));
  if (x_desc.dtype() == DType::BOOL && reduction != ScatterReduction::NONE)
    return make_status(StatusCode::BAD_PARAM, "%s: reduction %s of bool tensors", fn,
                       scatter_reduction_name(reduction));
  if (!x_desc.same_dims(y_desc))
    return make_status(StatusCode::BAD_PARAM, "%s: x has dims %s but y %s", fn,
                       dims_text(x_desc.rank(), x_desc.dims()).c_str(), dims_text(y_desc.rank(), y_desc.dims()).c_str());
  JET_RETURN_IF_ERROR(check_ptr(fn, x, "x"));
  JET_RETURN_IF_ERROR(check_ptr(fn, indices, "indices"));
  JET_RETURN_IF_ERROR(check_ptr(fn, updates, "updates"));
  JET_RETURN_IF_ERROR(check_ptr(fn, y, "y"));
  if (y == indices || y == updates)
    return make_status(StatusCode::BAD_PARAM, "%s: y is the same buffer as %s", fn, y == indices ? "indices" : "updates");
  if (y == x && !x_desc.same_layout(y_desc))
    return make_status(StatusCode::BAD_PARAM, "%s: y is x's buffer with another layout", fn);
  return Status();
}

void fill_common(ScatterPlan* p, ScatterReduction reduction, const TensorDesc& x_desc, const TensorDesc& y_desc) {
  p->reduction = reduction;
  p->rank = y_desc.rank();
  for (int d = 0; d < p->rank; ++d) {
    p->y_dims[d] = y_desc.dim(d);
    p->y_strides[d] = y_desc.stride(d);
    p->x_strides[d] = x_desc.stride(d);
  }
}

Status dispatch(const Handle& handle, const char* fn, const ScatterPlan& p, const TensorDesc& x_desc, const void* x,
                const TensorDesc& indices_desc, const void* indices, const void* updates, const TensorDesc& y_desc,
                void* y) {
  if (handle.backend() == Backend::CPU) return cpu::scatter_forward(p, x_desc, x, indices_desc, indices, updates, y_desc, y);
#if defined(JET_HAVE_CUDA)
  (void)fn;
  return cuda::scatter_forward(handle, p, x_desc, x, indices_desc, indices, updates, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

}  // namespace

Status scatter_elements_forward(const Handle& handle, ScatterReduction reduction, int axis,
                                const TensorDesc& x_desc, const void* x, const TensorDesc& indices_desc,
                                const void* indices, const TensorDesc& updates_desc, const void* updates,
                                const TensorDesc& y_desc, void* y) {
  const char* fn = "scatter_elements_forward";
  JET_RETURN_IF_ERROR(
      check_common(fn, reduction, x_desc, x, indices_desc, indices, updates_desc, updates, y_desc, y));
  const int r = x_desc.rank();
  if (axis < 0 || axis >= r) return make_status(StatusCode::BAD_PARAM, "%s: axis %d is outside [0, %d)", fn, axis, r);
  if (indices_desc.rank() != r || !indices_desc.same_dims(updates_desc))
    return make_status(StatusCode::BAD_PARAM, "%s: indices %s and updates %s must have one shape of x's rank %d", fn,
                       dims_text(indices_desc.rank(), indices_desc.dims()).c_str(),
                       dims_text(updates_desc.rank(), updates_desc.dims()).c_str(), r);
  for (int d = 0; d < r; ++d) {
    if (d != axis && indices_desc.dim(d) > x_desc.dim(d))
      return make_status(StatusCode::BAD_PARAM, "%s: indices %s are larger than x %s at dim %d", fn,
                         dims_text(r, indices_desc.dims()).c_str(), dims_text(r, x_desc.dims()).c_str(), d);
  }
  ScatterPlan p;
  fill_common(&p, reduction, x_desc, y_desc);
  p.axis = axis;
  for (int d = 0; d < r; ++d) {
    p.upd_dims[d] = updates_desc.dim(d);
    p.upd_strides[d] = updates_desc.stride(d);
    p.idx_strides[d] = indices_desc.stride(d);
  }
  return dispatch(handle, fn, p, x_desc, x, indices_desc, indices, updates, y_desc, y);
}

Status scatter_nd_forward(const Handle& handle, ScatterReduction reduction, const TensorDesc& x_desc, const void* x,
                          const TensorDesc& indices_desc, const void* indices, const TensorDesc& updates_desc,
                          const void* updates, const TensorDesc& y_desc, void* y) {
  const char* fn = "scatter_nd_forward";
  JET_RETURN_IF_ERROR(
      check_common(fn, reduction, x_desc, x, indices_desc, indices, updates_desc, updates, y_desc, y));
  const int r = x_desc.rank(), q = indices_desc.rank();
  const int64_t k = indices_desc.dim(q - 1);
  if (k < 1 || k > r)
    return make_status(StatusCode::BAD_PARAM, "%s: indices %s have a last dim outside [1, %d] (x's rank)", fn,
                       dims_text(q, indices_desc.dims()).c_str(), r);
  // updates: indices' dims but the last, then x's dims from k on.
  const int ur = q - 1 + r - static_cast<int>(k);
  bool ok = updates_desc.rank() == ur;
  for (int d = 0; ok && d < ur; ++d) {
    const int64_t want = d < q - 1 ? indices_desc.dim(d) : x_desc.dim(static_cast<int>(k) + d - (q - 1));
    ok = updates_desc.dim(d) == want;
  }
  if (!ok)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: updates have dims %s; indices %s into x %s need the indices' dims but the last, then "
                       "x's dims from %lld on",
                       fn, dims_text(updates_desc.rank(), updates_desc.dims()).c_str(),
                       dims_text(q, indices_desc.dims()).c_str(), dims_text(r, x_desc.dims()).c_str(),
                       static_cast<long long>(k));
  ScatterPlan p;
  fill_common(&p, reduction, x_desc, y_desc);
  p.nd = true;
  p.k = static_cast<int>(k);
  p.tuple_rank = q - 1;
  p.n_tuples = 1;
  for (int d = 0; d < q - 1; ++d) {
    p.tuple_dims[d] = indices_desc.dim(d);
    p.idx_strides[d] = indices_desc.stride(d);
    p.n_tuples *= indices_desc.dim(d);
  }
  p.idx_last_stride = indices_desc.stride(q - 1);
  for (int d = 0; d < ur; ++d) p.upd_strides[d] = updates_desc.stride(d);
  return dispatch(handle, fn, p, x_desc, x, indices_desc, indices, updates, y_desc, y);
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {
namespace {

template <class T>
T invalid_of() {
  if constexpr (std::is_same<T, half>::value) {
    return half(std::numeric_limits<float>::quiet_NaN());
  } else if constexpr (std::is_same<T, uint8_t>::value) {
    return 0;
  } else if constexpr (std::is_floating_point<T>::value) {
    return std::numeric_limits<T>::quiet_NaN();
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

template <class T, class I>
void run(const ScatterPlan& p, const void* x, const void* indices, const void* updates, void* y) {
  using V = decltype(value_of(T()));
  const T* xp = static_cast<const T*>(x);
  const I* ip = static_cast<const I*>(indices);
  const T* up = static_cast<const T*>(updates);
  T* yp = static_cast<T*>(y);
  const auto load = [](T v) { return static_cast<V>(value_of(v)); };
  StridedWalk w(p.rank, p.y_dims, p.y_strides, p.x_strides);
  do {
    V v{};
    const bool ok = scatter_element<V, T, I>(p, w.idx, value_of(xp[w.off[1]]), ip, up, load, &v);
    yp[w.off[0]] = ok ? static_cast<T>(v) : invalid_of<T>();
  } while (w.next());
}

}  // namespace

Status scatter_forward(const ScatterPlan& plan, const TensorDesc& x_desc, const void* x, const TensorDesc& indices_desc,
                       const void* indices, const void* updates, const TensorDesc&, void* y) {
  const bool i32 = indices_desc.dtype() == DType::I32;
  with_storage_type(x_desc.dtype(), [&](auto type) {
    using T = decltype(type);
    if (i32)
      run<T, int32_t>(plan, x, indices, updates, y);
    else
      run<T, int64_t>(plan, x, indices, updates, y);
  });
  return Status();
}

}  // namespace cpu

}  // namespace jet
