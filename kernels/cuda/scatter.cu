// CUDA scatter_elements_forward and scatter_nd_forward: one thread per element of y (row-major
// logical order, coordinates decomposed per element), each computed by the shared rule of
// kernels/common/scatter_plan.h from x's value there and the updates that land on it: no atomics,
// the same order of application as the CPU backend.
#include <limits>
#include <type_traits>

#include "../api/backend.h"
#include "cuda_common.cuh"
#include "typed_access.cuh"

namespace jet {
namespace cuda {
namespace {

template <class T>
__device__ __forceinline__ T from_value(decltype(value_of(T())) v) {
  if constexpr (std::is_same<T, __half>::value) return __float2half_rn(v);
  else return static_cast<T>(v);
}

template <class T, class I>
__global__ void scatter_kernel(ScatterPlan p, int64_t n, const T* x, const I* idx, const T* upd, T* y, T invalid) {
  using V = decltype(value_of(T()));
  const auto load = [](T v) { return static_cast<V>(value_of(v)); };
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t c[kMaxRank];
    int64_t r = e, oy = 0, ox = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
      const int64_t q = r / p.y_dims[d];
      c[d] = r - q * p.y_dims[d];
      oy += c[d] * p.y_strides[d];
      ox += c[d] * p.x_strides[d];
      r = q;
    }
    V v{};
    const bool ok = scatter_element<V, T, I>(p, c, value_of(x[ox]), idx, upd, load, &v);
    y[oy] = ok ? from_value<T>(v) : invalid;
  }
}

template <class T, class I>
Status launch(const Handle& h, const ScatterPlan& p, int64_t n, const void* x, const void* indices,
              const void* updates, void* y, T invalid) {
  const int threads = 256;
  const int sms = h.sm_count() > 0 ? h.sm_count() : 16;
  const int grid = grid_for(n, threads, sms);
  scatter_kernel<T, I><<<grid, threads, 0, h.stream()>>>(p, n, static_cast<const T*>(x), static_cast<const I*>(indices),
                                                         static_cast<const T*>(updates), static_cast<T*>(y), invalid);
  return launch_status(p.nd ? "scatter_nd_forward" : "scatter_elements_forward");
}

template <class T>
Status run(const Handle& h, const ScatterPlan& p, const TensorDesc& indices_desc, int64_t n, const void* x,
           const void* indices, const void* updates, void* y, T invalid) {
  if (indices_desc.dtype() == DType::I32) return launch<T, int32_t>(h, p, n, x, indices, updates, y, invalid);
  return launch<T, int64_t>(h, p, n, x, indices, updates, y, invalid);
}

}  // namespace

Status scatter_forward(const Handle& h, const ScatterPlan& plan, const TensorDesc& x_desc, const void* x,
                       const TensorDesc& indices_desc, const void* indices, const void* updates,
                       const TensorDesc& y_desc, void* y) {
  const int64_t n = y_desc.elements();
  __half_raw nan_bits;
  nan_bits.x = 0x7e00;
  switch (x_desc.dtype()) {
    case DType::F32: return run<float>(h, plan, indices_desc, n, x, indices, updates, y, std::numeric_limits<float>::quiet_NaN());
    case DType::F16:
      return run<__half>(h, plan, indices_desc, n, x, indices, updates, y, __half(nan_bits));
    case DType::I32: return run<int32_t>(h, plan, indices_desc, n, x, indices, updates, y, INT32_MIN);
    case DType::I64: return run<int64_t>(h, plan, indices_desc, n, x, indices, updates, y, INT64_MIN);
    case DType::BOOL: return run<uint8_t>(h, plan, indices_desc, n, x, indices, updates, y, uint8_t{0});
  }
  return make_status(StatusCode::INTERNAL_ERROR, "scatter_forward: unknown dtype reached the backend");
}

}  // namespace cuda
}  // namespace jet
