// CUDA PReLU: y = alpha * (x >= 0 ? x : slope * x) + beta * y, slope broadcast to x.
//
// One elementwise loop over y (elementwise.cuh) with x and the slope read through their strides
// (0 where the slope broadcasts): same layouts collapse to a flat 16-byte vectorized loop, and a
// per-channel slope costs one load per vector (NCHW) or one vector load (NHWC).
#include "../api/backend.h"
#include "elementwise.cuh"

namespace jet {
namespace cuda {
namespace {

template <class T>
struct PreluOp {
  const T* x;
  const T* slope;
  T* y;
  float alpha, beta;

  __device__ __forceinline__ void setup() {}
  template <int V>
  __device__ __forceinline__ void apply(const EwLoop<3>& l, const int64_t* off) const {
    float v[V], s[V];
    load_v<V>(x, off[1], l.inner_stride(1), l.vec[1], v);
    load_v<V>(slope, off[2], l.inner_stride(2), l.vec[2], s);
    // "Not negative" keeps a NaN x on the slope branch, where it stays NaN (as on the CPU).
    for (int k = 0; k < V; ++k) v[k] = v[k] >= 0.f ? v[k] : s[k] * v[k];
    blend_store_v<V>(y, off[0], l.inner_stride(0), l.vec[0], alpha, v, beta);
  }
};

template <class T>
Status run(const Handle& h, float alpha, const TensorDesc& xd, const void* x,
           const TensorDesc& sd, const void* slope, float beta, const TensorDesc& yd, void* y) {
  const TensorDesc* descs[3] = {&yd, &xd, &sd};
  const void* ptrs[3] = {y, x, slope};
  constexpr int V = vec_width<T, T>();
  const PreluOp<T> op{static_cast<const T*>(x), static_cast<const T*>(slope), static_cast<T*>(y),
                      alpha, beta};
  return launch_ew<3, V>(h, op, make_ew_loop<3>(descs, ptrs, V), "prelu_forward");
}

}  // namespace

Status prelu_forward(const Handle& h, float alpha, const TensorDesc& x_desc, const void* x,
                     const TensorDesc& slope_desc, const void* slope, float beta,
                     const TensorDesc& y_desc, void* y) {
  if (x_desc.dtype() == DType::F32)
    return run<float>(h, alpha, x_desc, x, slope_desc, slope, beta, y_desc, y);
  return run<__half>(h, alpha, x_desc, x, slope_desc, slope, beta, y_desc, y);
}

}  // namespace cuda
}  // namespace jet
