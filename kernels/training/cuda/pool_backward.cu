// CUDA pooling backward: one thread per dx element gathers from the windows that contain it
// (kernels/training/pool_grad.h, the CPU's code); MAX recomputes each window's argmax from x.
// Index arithmetic in 32 bits where every offset fits: 64-bit division is a long software
// sequence, and it made ResNet-18's max pool backward (32x64x112x112) take 5.7 ms.
// No atomics, no zero-fill: deterministic, and beta == 0 does not read dx.
#include "../pool_grad.h"
#include "train_common.cuh"

namespace jet {
namespace cuda {
namespace {

// I: int where every index of x, dy and dx fits (32-bit division), else int64_t.
template <class I>
__global__ void pool_backward_kernel(PoolGradGeom g, float alpha, float beta,
                                     const float* __restrict__ x, const float* __restrict__ dy,
                                     float* dx, I total) {
  const I in0 = static_cast<I>(g.ax[0].in), in1 = static_cast<I>(g.ax[1].in),
          in2 = static_cast<I>(g.ax[2].in), channels = static_cast<I>(g.c);
  for (I idx = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x);
       idx < total; idx += static_cast<I>(gridDim.x) * static_cast<I>(blockDim.x)) {
    I r = idx, p[3];
    p[2] = r % in2;
    r /= in2;
    p[1] = r % in1;
    r /= in1;
    p[0] = r % in0;
    r /= in0;
    const I c = r % channels, n = r / channels;
    const float v = pool_grad_at<I>(g, x, dy, n, c, p);
    blend_store(dx + n * static_cast<I>(g.dxs_n) + c * static_cast<I>(g.dxs_c) +
                    p[0] * static_cast<I>(g.dxs[0]) + p[1] * static_cast<I>(g.dxs[1]) +
                    p[2] * static_cast<I>(g.dxs[2]),
                alpha, v, beta);
  }
}

// The largest element offset a tensor of these dims and strides reaches, plus one.
int64_t span(int64_t n, int64_t c, const int64_t* spatial, int64_t sn, int64_t sc, const int64_t* ss) {
  int64_t last = (n - 1) * sn + (c - 1) * sc;
  for (int i = 0; i < 3; ++i) last += (spatial[i] - 1) * ss[i];
  return last + 1;
}

}  // namespace

Status pool_backward(const Handle& h, const PoolDesc& pool, float alpha, const TensorDesc& x_desc,
                     const void* x, const TensorDesc& dy_desc, const void* dy, float beta,
                     const TensorDesc& dx_desc, void* dx) {
  const PoolGradGeom g = make_pool_grad_geom(pool, x_desc, dy_desc, dx_desc);
  const int64_t total = g.n * g.c * g.ax[0].in * g.ax[1].in * g.ax[2].in;
  const int64_t in[3] = {g.ax[0].in, g.ax[1].in, g.ax[2].in};
  const int64_t out[3] = {g.ax[0].out, g.ax[1].out, g.ax[2].out};
  const int64_t limit = int64_t(1) << 30;  // room for the index arithmetic's intermediate sums
  const bool small = total < limit && span(g.n, g.c, in, g.xs_n, g.xs_c, g.xs) < limit &&
                     span(g.n, g.c, in, g.dxs_n, g.dxs_c, g.dxs) < limit &&
                     span(g.n, g.c, out, g.dys_n, g.dys_c, g.dys) < limit;
  const int grid = grid_for(total, kTrainThreads, h.sm_count());
  const float* xp = static_cast<const float*>(x);
  const float* dyp = static_cast<const float*>(dy);
  float* dxp = static_cast<float*>(dx);
  if (small)
    pool_backward_kernel<int><<<grid, kTrainThreads, 0, h.stream()>>>(g, alpha, beta, xp, dyp, dxp,
                                                                      static_cast<int>(total));
  else
    pool_backward_kernel<int64_t><<<grid, kTrainThreads, 0, h.stream()>>>(g, alpha, beta, xp, dyp,
                                                                           dxp, total);
  return launch_status("pool_backward");
}

}  // namespace cuda
}  // namespace jet
