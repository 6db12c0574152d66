// CUDA convolution backward filter and bias gradient, deterministic (no atomics):
//  - implicit: one block per dw element; its threads stride over (image, output position) with
//    x addressed on the fly (kernels/training/conv_grad.h), each keeping a compensated f32 sum,
//    combined by a fixed tree (block_sum).
//  - lower: the GEMM algorithm's im2col of x and packing of dy, one thread per element written
//    (the GEMM itself is gemm_forward, called by the front end).
//  - bias: one block per channel, summing over the other dims the same way.
#include "../conv_grad.h"
#include "train_common.cuh"

namespace jet {
namespace cuda {
namespace {

__global__ void filter_implicit_kernel(ConvGradGeom g, float alpha, float beta,
                                       const float* __restrict__ x, const float* __restrict__ dy,
                                       float* dw, int64_t total) {
  __shared__ float smem[kTrainThreads];
  const int64_t work = g.n * g.positions;
  for (int64_t e = blockIdx.x; e < total; e += gridDim.x) {
    const int64_t k = e / g.row();
    const FilterTap f = filter_tap(g, e - k * g.row());
    const int64_t x_group = k / g.kg * g.cg * g.xs_c;
    CompensatedSum acc;
    for (int64_t r = threadIdx.x; r < work; r += blockDim.x) {
      const int64_t n = r / g.positions;
      int64_t o[3];
      conv_grad_position(g, r - n * g.positions, o);
      const int64_t xo = conv_grad_x_offset(g, f, n, o);
      if (xo < 0) continue;
      acc.add(dy[n * g.ys_n + k * g.ys_c + o[0] * g.ys[0] + o[1] * g.ys[1] + o[2] * g.ys[2]] *
              x[xo + x_group]);
    }
    const float sum = block_sum(acc.value(), smem);
    if (threadIdx.x == 0) blend_store(dw + k * g.ws_k + filter_offset(g, f), alpha, sum, beta);
  }
}

__global__ void lower_x_kernel(ConvGradGeom g, const float* __restrict__ x, float* col,
                               int64_t total) {
  const int64_t rows = g.n * g.positions, row = g.row();
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    // e runs over (group, row r, filter element j) with j fastest.
    const int64_t j = e % row;
    const int64_t gr = e / row;
    const int64_t r = gr % rows, grp = gr / rows;
    const int64_t n = r / g.positions;
    int64_t o[3];
    conv_grad_position(g, r - n * g.positions, o);
    const FilterTap f = filter_tap(g, j);
    const int64_t xo = conv_grad_x_offset(g, f, n, o);
    col[gr * row + filter_offset(g, f)] = xo < 0 ? 0.f : x[xo + grp * g.cg * g.xs_c];
  }
}

__global__ void pack_dy_kernel(ConvGradGeom g, const float* __restrict__ dy, float* dyp,
                               int64_t total) {
  const int64_t rows = g.n * g.positions;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = e % rows, k = e / rows;
    const int64_t n = r / g.positions;
    int64_t o[3];
    conv_grad_position(g, r - n * g.positions, o);
    dyp[e] = dy[n * g.ys_n + k * g.ys_c + o[0] * g.ys[0] + o[1] * g.ys[1] + o[2] * g.ys[2]];
  }
}

__global__ void bias_kernel(Walk3 rest, int64_t channels, int64_t dy_c, int64_t db_c, float alpha,
                            float beta, const float* __restrict__ dy, float* db) {
  __shared__ float smem[kTrainThreads];
  for (int64_t k = blockIdx.x; k < channels; k += gridDim.x) {
    CompensatedSum acc;
    for (int64_t i = threadIdx.x; i < rest.count; i += blockDim.x) {
      int64_t o[3];
      rest.offsets(i, o);
      acc.add(dy[k * dy_c + o[0]]);
    }
    const float sum = block_sum(acc.value(), smem);
    if (threadIdx.x == 0) blend_store(db + k * db_c, alpha, sum, beta);
  }
}

int blocks_for(int64_t items) { return static_cast<int>(items < 65535 ? items : 65535); }

}  // namespace

Status conv_backward_filter_implicit(const Handle& h, float alpha, const TensorDesc& x_desc,
                                     const void* x, const TensorDesc& dy_desc, const void* dy,
                                     const ConvDesc& conv, float beta, const FilterDesc& dw_desc,
                                     void* dw) {
  const ConvGradGeom g = make_conv_grad_geom(x_desc, dy_desc, conv, dw_desc);
  const int64_t total = g.groups * g.kg * g.row();
  filter_implicit_kernel<<<blocks_for(total), kTrainThreads, 0, h.stream()>>>(
      g, alpha, beta, static_cast<const float*>(x), static_cast<const float*>(dy),
      static_cast<float*>(dw), total);
  return launch_status("conv_backward_filter");
}

Status conv_backward_filter_lower(const Handle& h, const TensorDesc& x_desc, const void* x,
                                  const TensorDesc& dy_desc, const void* dy, const ConvDesc& conv,
                                  const FilterDesc& dw_desc, float* col, float* dyp) {
  const ConvGradGeom g = make_conv_grad_geom(x_desc, dy_desc, conv, dw_desc);
  const int64_t rows = g.n * g.positions;
  const int64_t col_total = g.groups * rows * g.row(), dy_total = g.groups * g.kg * rows;
  lower_x_kernel<<<grid_for(col_total, kTrainThreads, h.sm_count()), kTrainThreads, 0,
                   h.stream()>>>(g, static_cast<const float*>(x), col, col_total);
  JET_TRY(launch_status("conv_backward_filter (im2col)"));
  pack_dy_kernel<<<grid_for(dy_total, kTrainThreads, h.sm_count()), kTrainThreads, 0,
                   h.stream()>>>(g, static_cast<const float*>(dy), dyp, dy_total);
  return launch_status("conv_backward_filter (dy packing)");
}

Status conv_backward_bias(const Handle& h, float alpha, const TensorDesc& dy_desc, const void* dy,
                          float beta, const TensorDesc& db_desc, void* db) {
  Walk3 rest;
  for (int i = 0; i < dy_desc.rank(); ++i)
    if (i != 1) rest.add(dy_desc.dim(i), dy_desc.stride(i));
  bias_kernel<<<blocks_for(dy_desc.dim(1)), kTrainThreads, 0, h.stream()>>>(
      rest, dy_desc.dim(1), dy_desc.stride(1), db_desc.stride(1), alpha, beta,
      static_cast<const float*>(dy), static_cast<float*>(db));
  return launch_status("conv_backward_bias");
}

}  // namespace cuda
}  // namespace jet
