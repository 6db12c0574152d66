// CUDA activation: one elementwise loop over y (elementwise.cuh) with x read through its strides:
// same layouts collapse to a flat, 16-byte vectorized loop; any other layout pair still runs
// with coalesced writes.
#include "../api/backend.h"
#include "../common/activation_math.h"
#include "elementwise.cuh"

namespace jet {
namespace cuda {
namespace {

template <class T>
struct ActivationOp {
  const T* x;
  T* y;
  ActivationDesc act;
  float alpha, beta;

  __device__ __forceinline__ void setup() {}
  template <int V>
  __device__ __forceinline__ void apply(const EwLoop<2>& l, const int64_t* off) const {
    float v[V];
    load_v<V>(x, off[1], l.inner_stride(1), l.vec[1], v);
    for (int k = 0; k < V; ++k) v[k] = apply_activation(act, v[k]);
    blend_store_v<V>(y, off[0], l.inner_stride(0), l.vec[0], alpha, v, beta);
  }
};

template <class T>
Status run(const Handle& h, const ActivationDesc& act, float alpha, const TensorDesc& xd,
           const void* x, float beta, const TensorDesc& yd, void* y) {
  const TensorDesc* descs[2] = {&yd, &xd};
  const void* ptrs[2] = {y, x};
  constexpr int V = vec_width<T, T>();
  const ActivationOp<T> op{static_cast<const T*>(x), static_cast<T*>(y), act, alpha, beta};
  return launch_ew<2, V>(h, op, make_ew_loop<2>(descs, ptrs, V), "activation_forward");
}

}  // namespace

Status activation_forward(const Handle& h, const ActivationDesc& act, float alpha,
                          const TensorDesc& x_desc, const void* x, float beta,
                          const TensorDesc& y_desc, void* y) {
  if (x_desc.dtype() == DType::F32) return run<float>(h, act, alpha, x_desc, x, beta, y_desc, y);
  return run<__half>(h, act, alpha, x_desc, x, beta, y_desc, y);
}

JET_CUDA_MODULE(activation)

}  // namespace cuda
}  // namespace jet
