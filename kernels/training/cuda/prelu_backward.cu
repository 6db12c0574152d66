// CUDA PReLU backward. dslope first (it reads dy, which dx may overwrite): one block per slope
// element sums over the dims where the slope broadcasts (compensated f32 per thread, fixed tree);
// then dx with the forward's elementwise loop (kernels/cuda/elementwise.cuh), the slope read
// through broadcast strides.
#include "../../cuda/elementwise.cuh"
#include "train_common.cuh"

namespace jet {
namespace cuda {
namespace {

// kept: the slope's dims (x, dy, dslope strides); reduced: where it broadcasts (x, dy strides).
__global__ void dslope_kernel(Walk3 kept, Walk3 reduced, float alpha, float beta,
                              const float* __restrict__ x, const float* __restrict__ dy,
                              float* dslope) {
  __shared__ float smem[kTrainThreads];
  for (int64_t e = blockIdx.x; e < kept.count; e += gridDim.x) {
    int64_t base[3];
    kept.offsets(e, base);
    CompensatedSum acc;
    for (int64_t i = threadIdx.x; i < reduced.count; i += blockDim.x) {
      int64_t o[3];
      reduced.offsets(i, o);
      const float v = x[base[0] + o[0]];
      acc.add(v > 0.f ? 0.f : v * dy[base[1] + o[1]]);
    }
    const float sum = block_sum(acc.value(), smem);
    if (threadIdx.x == 0) blend_store(dslope + base[2], alpha, sum, beta);
  }
}

struct PreluBackwardOp {
  const float* x;
  const float* slope;
  const float* dy;
  float* dx;
  float alpha, beta;

  __device__ __forceinline__ void setup() {}
  template <int V>
  __device__ __forceinline__ void apply(const EwLoop<4>& l, const int64_t* off) const {
    float xv[V], sv[V], g[V];
    load_v<V>(x, off[1], l.inner_stride(1), l.vec[1], xv);
    load_v<V>(slope, off[2], l.inner_stride(2), l.vec[2], sv);
    load_v<V>(dy, off[3], l.inner_stride(3), l.vec[3], g);
    for (int k = 0; k < V; ++k) g[k] *= xv[k] > 0.f ? 1.f : sv[k];
    blend_store_v<V>(dx, off[0], l.inner_stride(0), l.vec[0], alpha, g, beta);
  }
};

}  // namespace

Status prelu_backward(const Handle& h, float alpha, const TensorDesc& x_desc, const void* x,
                      const TensorDesc& slope_desc, const void* slope, const TensorDesc& dy_desc,
                      const void* dy, float beta, const TensorDesc& dx_desc, void* dx,
                      float alpha_param, float beta_param, const TensorDesc& dslope_desc,
                      void* dslope) {
  if (dslope) {
    Walk3 kept, reduced;
    for (int i = 0; i < x_desc.rank(); ++i) {
      if (slope_desc.dim(i) == x_desc.dim(i))
        kept.add(x_desc.dim(i), x_desc.stride(i), dy_desc.stride(i), dslope_desc.stride(i));
      else
        reduced.add(x_desc.dim(i), x_desc.stride(i), dy_desc.stride(i));
    }
    const int blocks = static_cast<int>(kept.count < 65535 ? kept.count : 65535);
    dslope_kernel<<<blocks, kTrainThreads, 0, h.stream()>>>(
        kept, reduced, alpha_param, beta_param, static_cast<const float*>(x),
        static_cast<const float*>(dy), static_cast<float*>(dslope));
    JET_TRY(launch_status("prelu_backward (dslope)"));
  }
  if (!dx) return Status();
  const TensorDesc* descs[4] = {&dx_desc, &x_desc, &slope_desc, &dy_desc};
  const void* ptrs[4] = {dx, x, slope, dy};
  constexpr int V = vec_width<float, float>();
  const PreluBackwardOp op{static_cast<const float*>(x), static_cast<const float*>(slope),
                           static_cast<const float*>(dy), static_cast<float*>(dx), alpha, beta};
  return launch_ew<4, V>(h, op, make_ew_loop<4>(descs, ptrs, V), "prelu_backward");
}

}  // namespace cuda
}  // namespace jet
