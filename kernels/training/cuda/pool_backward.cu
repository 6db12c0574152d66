// CUDA pooling backward: one thread per dx element gathers from the windows that contain it
// (kernels/training/pool_grad.h, the CPU's code); MAX recomputes each window's argmax from x.
// Index arithmetic in 32 bits where every offset fits: 64-bit division is a long software
// sequence, and it made ResNet-18's max pool backward (32x64x112x112) take 5.7 ms.
// No atomics, no zero-fill: deterministic, and beta == 0 does not read dx.
#include <algorithm>

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

// 2D max pooling (dilation 1, window up to kTileWindow): a block takes a kTile x kTile region of
// one plane of dx. It first finds the argmax of every window that reaches the region, once each,
// into shared memory with dy's value there, then each thread gathers for its dx elements from
// those windows, in pool_grad_at's order (output descending along each axis), so the sums are
// the CPU's bit for bit. The general kernel recomputes a window's argmax for every element of it
// (up to 4 times for ResNet's 3x3 stride-2 stem pooling: 36 loads an element here against under
// 3); this was its slowest backward kernel after the division cuts (1.2 ms at batch 32).
constexpr int kTile = 32, kTileWindow = 8, kTileOut = kTile + kTileWindow;  // outputs per axis

bool max_tile_applies(const PoolGradGeom& g) {
  if (g.mode != PoolMode::MAX || g.ax[0].in != 1 || g.ax[0].window != 1) return false;
  for (int a = 1; a < 3; ++a)
    if (g.ax[a].dilation != 1 || g.ax[a].window > kTileWindow || g.ax[a].stride < 1) return false;
  return true;
}

// The outputs along one axis whose windows reach inputs [i0, i1): [lo, hi], possibly empty.
__device__ __forceinline__ void tile_outputs(const PoolGradAxis& a, int i0, int i1, int* lo, int* hi) {
  const int stride = static_cast<int>(a.stride), pad = static_cast<int>(a.pad_begin);
  const int reach = static_cast<int>(a.window) - 1;
  const int q0 = i0 + pad - reach;  // the first output o with o * stride + reach >= i0 + pad
  *lo = q0 <= 0 ? 0 : (q0 + stride - 1) / stride;
  *hi = min(static_cast<int>(a.out) - 1, (i1 - 1 + pad) / stride);
}

// W and S: the window and stride on both axes when known at compile time (ResNet's 3x3 stride-2
// stem pooling: the window scans unroll into independent loads, the divisions by the stride
// become shifts), 0 for the values of the geometry.
template <int W, int S>
__global__ void __launch_bounds__(kTrainThreads)
    max_pool_backward_tiled_kernel(PoolGradGeom g, float alpha, float beta, const float* __restrict__ x,
                                   const float* __restrict__ dy, float* dx, int tiles_w) {
  __shared__ int arg[kTileOut * kTileOut];  // the window's argmax as row * in_w + col
  __shared__ float grad[kTileOut * kTileOut];
  __shared__ int out_lo[2][kTile], out_hi[2][kTile];  // per row / column of the tile: its windows
  PoolGradAxis ah = g.ax[1], aw = g.ax[2];
  if (W) ah.window = aw.window = W;
  if (S) ah.stride = aw.stride = S;
  const int in_h = static_cast<int>(ah.in), in_w = static_cast<int>(aw.in);
  const int i0 = (blockIdx.x / tiles_w) * kTile, j0 = (blockIdx.x % tiles_w) * kTile;
  const int i1 = min(i0 + kTile, in_h), j1 = min(j0 + kTile, in_w);
  int oh_lo, oh_hi, ow_lo, ow_hi;
  tile_outputs(ah, i0, i1, &oh_lo, &oh_hi);
  tile_outputs(aw, j0, j1, &ow_lo, &ow_hi);
  const int oh_n = max(0, oh_hi - oh_lo + 1), ow_n = max(0, ow_hi - ow_lo + 1);
  // The outputs whose windows hold each row and column of the tile: the same for every plane.
  if (threadIdx.x < kTile) {
    const int k = threadIdx.x;
    tile_outputs(ah, i0 + k, i0 + k + 1, &out_lo[0][k], &out_hi[0][k]);
  } else if (threadIdx.x < 2 * kTile) {
    const int k = threadIdx.x - kTile;
    tile_outputs(aw, j0 + k, j0 + k + 1, &out_lo[1][k], &out_hi[1][k]);
  }
  for (int64_t plane = blockIdx.y; plane < g.n * g.c; plane += gridDim.y) {
    const int64_t n = plane / g.c, c = plane - n * g.c;
    const float* xp = x + n * g.xs_n + c * g.xs_c;
    const float* dyp = dy + n * g.dys_n + c * g.dys_c;
    float* dxp = dx + n * g.dxs_n + c * g.dxs_c;
    __syncthreads();  // the previous plane's gathers are done with arg and grad
    for (int e = threadIdx.x; e < oh_n * ow_n; e += blockDim.x) {
      const int oh = oh_lo + e / ow_n, ow = ow_lo + e % ow_n;
      const PoolGradTaps<int> th = pool_grad_taps<int>(ah, oh), tw = pool_grad_taps<int>(aw, ow);
      // pool_is_argmax's rule: the first maximum in window order, the last NaN; all -inf: the first tap.
      float best = -INFINITY;
      int br = th.start + th.k_begin, bc = tw.start + tw.k_begin;
      constexpr int kScan = W ? W : kTileWindow;
#pragma unroll
      for (int kh = 0; kh < kScan; ++kh) {
        if (kh < th.k_begin || kh >= th.k_end) continue;
        const int r = th.start + kh;
#pragma unroll
        for (int kw = 0; kw < kScan; ++kw) {
          if (kw < tw.k_begin || kw >= tw.k_end) continue;
          const int col = tw.start + kw;
          const float v = xp[r * g.xs[1] + col * g.xs[2]];
          if (v > best || v != v) {
            best = v;
            br = r;
            bc = col;
          }
        }
      }
      arg[e] = br * in_w + bc;
      grad[e] = dyp[oh * g.dys[1] + ow * g.dys[2]];
    }
    __syncthreads();
    for (int e = threadIdx.x; e < kTile * kTile; e += blockDim.x) {
      const int ii = e / kTile, jj = e % kTile, i = i0 + ii, j = j0 + jj;
      if (i >= i1 || j >= j1) continue;
      const int lo_h = out_lo[0][ii], hi_h = out_hi[0][ii], lo_w = out_lo[1][jj], hi_w = out_hi[1][jj];
      const int self = i * in_w + j;
      float acc = 0.f;
      for (int oh = hi_h; oh >= lo_h; --oh)
        for (int ow = hi_w; ow >= lo_w; --ow) {
          const int s = (oh - oh_lo) * ow_n + (ow - ow_lo);
          if (arg[s] == self) acc += grad[s];
        }
      blend_store(dxp + i * g.dxs[1] + j * g.dxs[2], alpha, acc, beta);
    }
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
  if (small && max_tile_applies(g)) {
    const int tiles_h = static_cast<int>((g.ax[1].in + kTile - 1) / kTile);
    const int tiles_w = static_cast<int>((g.ax[2].in + kTile - 1) / kTile);
    const int64_t planes = g.n * g.c;
    const dim3 tgrid(static_cast<unsigned>(tiles_h * tiles_w),
                     static_cast<unsigned>(std::min<int64_t>(planes, 65535)));
    const bool stem = g.ax[1].window == 3 && g.ax[2].window == 3 && g.ax[1].stride == 2 && g.ax[2].stride == 2;
    auto* kernel = stem ? max_pool_backward_tiled_kernel<3, 2> : max_pool_backward_tiled_kernel<0, 0>;
    kernel<<<tgrid, kTrainThreads, 0, h.stream()>>>(g, alpha, beta, static_cast<const float*>(x),
                                                    static_cast<const float*>(dy), static_cast<float*>(dx),
                                                    tiles_w);
    return launch_status("pool_backward");
  }
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
