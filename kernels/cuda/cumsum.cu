// CUDA cumsum_forward: one thread per line along `axis` (elementwise.cuh's loop over y's dims with
// 1 at the axis, x and y seen through their strides), each summing its line in order: in f32 for
// floats, in the integer's own type (wrapping) for integers, as the CPU backend.
#include <type_traits>

#include "../api/backend.h"
#include "elementwise.cuh"
#include "typed_access.cuh"

namespace jet {
namespace cuda {
namespace {

__device__ __forceinline__ __half to_storage(float v, __half*) { return __float2half_rn(v); }
template <class T, class A>
__device__ __forceinline__ T to_storage(A v, T*) { return static_cast<T>(v); }

template <class T>
struct CumSumKernel {
  const T* x;
  T* y;
  int64_t n, xstep, ystep;
  bool exclusive, reverse;

  __device__ __forceinline__ void setup() {}
  template <int V>
  __device__ __forceinline__ void apply(const EwLoop<2>& l, const int64_t* off) const {
    using Acc = decltype(value_of(T()));
    for (int k = 0; k < V; ++k) {
      const T* xp = x + off[1] + k * l.inner_stride(1);
      T* yp = y + off[0] + k * l.inner_stride(0);
      Acc sum = 0;
      for (int64_t j = 0; j < n; ++j) {
        const int64_t i = reverse ? n - 1 - j : j;
        const Acc v = value_of(xp[i * xstep]);
        if (!exclusive) sum = typed_add(sum, v);
        yp[i * ystep] = to_storage(sum, static_cast<T*>(nullptr));
        if (exclusive) sum = typed_add(sum, v);
      }
    }
  }
};

}  // namespace

Status cumsum_forward(const Handle& h, int axis, bool exclusive, bool reverse, const TensorDesc& x_desc,
                      const void* x, const TensorDesc& y_desc, void* y) {
  const int r = y_desc.rank();
  int64_t lines[kMaxRank];
  for (int d = 0; d < r; ++d) lines[d] = d == axis ? 1 : y_desc.dim(d);
  // The first element of each line of y and of x, addressed by the line's index.
  const TensorDesc y_lines = TensorDesc::strided(y_desc.dtype(), r, lines, y_desc.strides());
  const TensorDesc x_lines = TensorDesc::strided(x_desc.dtype(), r, lines, x_desc.strides());
  const TensorDesc* descs[2] = {&y_lines, &x_lines};
  const void* ptrs[2] = {y, x};
  const EwLoop<2> l = make_ew_loop<2>(descs, ptrs, 1);
  Status st = make_status(StatusCode::INTERNAL_ERROR, "cumsum_forward: bool x reached the backend");
  with_storage_type(x_desc.dtype(), [&](auto type) {
    using T = decltype(type);
    if constexpr (!std::is_same<T, uint8_t>::value) {
      const CumSumKernel<T> k{static_cast<const T*>(x), static_cast<T*>(y), y_desc.dim(axis), x_desc.stride(axis),
                              y_desc.stride(axis), exclusive, reverse};
      st = launch_ew<2, 1>(h, k, l, "cumsum_forward");
    }
  });
  return st;
}

}  // namespace cuda
}  // namespace jet
