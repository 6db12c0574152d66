// CUDA activation backward: the forward's elementwise loop (kernels/cuda/elementwise.cuh) over
// dx, with x and dy read through their strides; dx = alpha * dy * act'(x) + beta * dx.
#include "../../cuda/elementwise.cuh"
#include "../activation_grad.h"
#include "../backend.h"

namespace jet {
namespace cuda {
namespace {

struct ActivationBackwardOp {
  const float* x;
  const float* dy;
  float* dx;
  ActivationDesc act;
  float alpha, beta;

  __device__ __forceinline__ void setup() {}
  template <int V>
  __device__ __forceinline__ void apply(const EwLoop<3>& l, const int64_t* off) const {
    float xv[V], g[V];
    load_v<V>(x, off[1], l.inner_stride(1), l.vec[1], xv);
    load_v<V>(dy, off[2], l.inner_stride(2), l.vec[2], g);
    for (int k = 0; k < V; ++k) g[k] *= activation_derivative(act, xv[k]);
    blend_store_v<V>(dx, off[0], l.inner_stride(0), l.vec[0], alpha, g, beta);
  }
};

}  // namespace

Status activation_backward(const Handle& h, const ActivationDesc& act, float alpha,
                           const TensorDesc& x_desc, const void* x, const TensorDesc& dy_desc,
                           const void* dy, float beta, const TensorDesc& dx_desc, void* dx) {
  const TensorDesc* descs[3] = {&dx_desc, &x_desc, &dy_desc};
  const void* ptrs[3] = {dx, x, dy};
  constexpr int V = vec_width<float, float>();
  const ActivationBackwardOp op{static_cast<const float*>(x), static_cast<const float*>(dy),
                                static_cast<float*>(dx), act, alpha, beta};
  return launch_ew<3, V>(h, op, make_ew_loop<3>(descs, ptrs, V), "activation_backward");
}

}  // namespace cuda
}  // namespace jet
