// CUDA arg_reduce_forward: one thread per element of y (elementwise.cuh's loop over y, with x
// seen through y's dims and x's strides), each walking x's reduced axis in its own type.
#include "../api/backend.h"
#include "elementwise.cuh"
#include "typed_access.cuh"

namespace jet {
namespace cuda {
namespace {

template <class T>
struct ArgReduceKernel {
  const T* x;
  int64_t* y;
  int64_t n, step;
  bool max, last;

  __device__ __forceinline__ void setup() {}
  template <int V>
  __device__ __forceinline__ void apply(const EwLoop<2>& l, const int64_t* off) const {
    for (int k = 0; k < V; ++k) {
      const T* xp = x + off[1] + k * l.inner_stride(1);
      auto best = value_of(xp[0]);
      int64_t best_i = 0;
      for (int64_t i = 1; i < n; ++i) {
        const auto v = value_of(xp[i * step]);
        if (arg_better(v, best, max, last)) {
          best = v;
          best_i = i;
        }
      }
      y[off[0] + k * l.inner_stride(0)] = best_i;
    }
  }
};

}  // namespace

Status arg_reduce_forward(const Handle& h, ArgReduceOp op, int axis, bool select_last_index,
                          const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
                          void* y) {
  // x's first element of each reduced row, addressed by y's index.
  const TensorDesc x_rows = TensorDesc::strided(x_desc.dtype(), y_desc.rank(), y_desc.dims(), x_desc.strides());
  const TensorDesc* descs[2] = {&y_desc, &x_rows};
  const void* ptrs[2] = {y, x};
  const EwLoop<2> l = make_ew_loop<2>(descs, ptrs, 1);
  Status st = make_status(StatusCode::INTERNAL_ERROR, "arg_reduce_forward: bool x reached the backend");
  with_storage_type(x_desc.dtype(), [&](auto type) {
    using T = decltype(type);
    if constexpr (!std::is_same<T, uint8_t>::value) {
      const ArgReduceKernel<T> k{static_cast<const T*>(x), static_cast<int64_t*>(y), x_desc.dim(axis),
                              x_desc.stride(axis), op == ArgReduceOp::ARGMAX, select_last_index};
      st = launch_ew<2, 1>(h, k, l, "arg_reduce_forward");
    }
  });
  return st;
}

}  // namespace cuda
}  // namespace jet
