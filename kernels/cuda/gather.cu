// CUDA gather_forward and gather_elements_forward: one elementwise loop over y (elementwise.cuh, scalar accesses) with the
// offsets of y, of x without its gathered dim and of indices (kernels/common/gather_plan.h); each
// element copied as stored (T: an unsigned integer of the element's size), or the invalid-index
// value written.
#include "../api/backend.h"
#include "../common/gather_plan.h"
#include "elementwise.cuh"

namespace jet {
namespace cuda {
namespace {

template <class T, class I>
struct GatherOp {
  const T* x;
  const I* indices;
  T* y;
  int64_t n, step;
  T invalid;

  __device__ __forceinline__ void setup() {}
  template <int V>
  __device__ __forceinline__ void apply(const EwLoop<3>& l, const int64_t* off) const {
    for (int k = 0; k < V; ++k) {
      int64_t i = static_cast<int64_t>(indices[off[2] + k * l.inner_stride(2)]);
      if (i < 0) i += n;
      const bool in = i >= 0 && i < n;
      y[off[0] + k * l.inner_stride(0)] = in ? x[off[1] + k * l.inner_stride(1) + i * step] : invalid;
    }
  }
};

// xs, is: the strides of x (0 where the index addresses it) and of indices, per dim of y.
template <class T>
Status run(const Handle& h, int axis, const TensorDesc& x_desc, const void* x, const int64_t* xs,
           const TensorDesc& indices_desc, const void* indices, const int64_t* is, const TensorDesc& y_desc,
           void* y, T invalid, const char* fn) {
  const TensorDesc x_view = TensorDesc::strided(x_desc.dtype(), y_desc.rank(), y_desc.dims(), xs);
  const TensorDesc i_view = TensorDesc::strided(indices_desc.dtype(), y_desc.rank(), y_desc.dims(), is);
  const TensorDesc* descs[3] = {&y_desc, &x_view, &i_view};
  const void* ptrs[3] = {y, x, indices};
  const EwLoop<3> l = make_ew_loop<3>(descs, ptrs, 1);
  const int64_t n = x_desc.dim(axis), step = x_desc.stride(axis);
  if (indices_desc.dtype() == DType::I32) {
    const GatherOp<T, int32_t> k{static_cast<const T*>(x), static_cast<const int32_t*>(indices), static_cast<T*>(y),
                                 n, step, invalid};
    return launch_ew<3, 1>(h, k, l, fn);
  }
  const GatherOp<T, int64_t> k{static_cast<const T*>(x), static_cast<const int64_t*>(indices), static_cast<T*>(y),
                               n, step, invalid};
  return launch_ew<3, 1>(h, k, l, fn);
}

// Both routines: the invalid-index value's bits (NaN for floats, the lowest integer, false).
Status run_any(const Handle& h, int axis, const TensorDesc& x_desc, const void* x, const int64_t* xs,
               const TensorDesc& indices_desc, const void* indices, const int64_t* is, const TensorDesc& y_desc,
               void* y, const char* fn) {
  switch (y_desc.dtype()) {
    case DType::F32:
      return run<uint32_t>(h, axis, x_desc, x, xs, indices_desc, indices, is, y_desc, y, 0x7fc00000u, fn);
    case DType::F16:
      return run<uint16_t>(h, axis, x_desc, x, xs, indices_desc, indices, is, y_desc, y, uint16_t{0x7e00}, fn);
    case DType::I32:
      return run<uint32_t>(h, axis, x_desc, x, xs, indices_desc, indices, is, y_desc, y, 0x80000000u, fn);
    case DType::I64:
      return run<uint64_t>(h, axis, x_desc, x, xs, indices_desc, indices, is, y_desc, y, 0x8000000000000000ull,
                           fn);
    case DType::BOOL:
      return run<uint8_t>(h, axis, x_desc, x, xs, indices_desc, indices, is, y_desc, y, uint8_t{0}, fn);
  }
  return make_status(StatusCode::INTERNAL_ERROR, "%s: unknown dtype reached the backend", fn);
}

}  // namespace

Status gather_forward(const Handle& h, int axis, const TensorDesc& x_desc, const void* x,
                      const TensorDesc& indices_desc, const void* indices, const TensorDesc& y_desc, void* y) {
  int64_t xs[kMaxRank], is[kMaxRank];
  gather_strides(axis, x_desc, indices_desc, y_desc, xs, is);
  return run_any(h, axis, x_desc, x, xs, indices_desc, indices, is, y_desc, y, "gather_forward");
}

Status gather_elements_forward(const Handle& h, int axis, const TensorDesc& x_desc, const void* x,
                               const TensorDesc& indices_desc, const void* indices, const TensorDesc& y_desc,
                               void* y) {
  int64_t xs[kMaxRank];
  gather_elements_strides(axis, x_desc, xs);
  return run_any(h, axis, x_desc, x, xs, indices_desc, indices, indices_desc.strides(), y_desc, y,
                 "gather_elements_forward");
}

}  // namespace cuda
}  // namespace jet
