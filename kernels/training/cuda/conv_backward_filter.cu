// CUDA convolution backward filter and bias gradient, deterministic (no atomics):
//  - implicit: one block per dw element; its threads stride over (image, output position) with
//    x addressed on the fly (kernels/training/conv_grad.h), each keeping a compensated f32 sum,
//    combined by a fixed tree (block_sum).
//  - lower: the GEMM algorithm's im2col of x and packing of dy, one thread per element written
//    (the GEMM itself is gemm_forward, called by the front end).
//  - bias: one block per channel, summing over the other dims the same way; with the workspace,
//    several blocks per channel where the channels are few (chunk sums, then a fixed-order
//    total per channel).
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

// The bias gradient with `parts` blocks per channel: block (chunk b, channel k) sums its chunk of
// the channel into ws[k * parts + b]; bias_finish_kernel adds each channel's partial sums in
// slot order (deterministic, no atomics).
__global__ void bias_partial_kernel(Walk3 rest, int64_t channels, int64_t parts, int64_t len,
                                    int64_t dy_c, const float* __restrict__ dy, float* ws) {
  __shared__ float smem[kTrainThreads];
  for (int64_t k = blockIdx.y; k < channels; k += gridDim.y) {
    const int64_t begin = blockIdx.x * len, end = min(rest.count, begin + len);
    CompensatedSum acc;
#pragma unroll 4
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      int64_t o[3];
      rest.offsets(i, o);
      acc.add(dy[k * dy_c + o[0]]);
    }
    const float sum = block_sum(acc.value(), smem);
    if (threadIdx.x == 0) ws[k * parts + blockIdx.x] = sum;
  }
}

__global__ void bias_finish_kernel(int64_t channels, int64_t parts, int64_t db_c, float alpha,
                                   float beta, const float* ws, float* db) {
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < channels;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    CompensatedSum acc;
    for (int64_t b = 0; b < parts; ++b) acc.add(ws[k * parts + b]);
    blend_store(db + k * db_c, alpha, acc.value(), beta);
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

size_t conv_backward_bias_workspace_size(const Handle& h, const TensorDesc& dy_desc) {
  const int64_t channels = dy_desc.dim(1);
  const int64_t parts = chunks_per_channel(h, channels, dy_desc.elements() / channels);
  return parts > 1 ? static_cast<size_t>(channels * parts) * sizeof(float) : 0;
}

Status conv_backward_bias(const Handle& h, float alpha, const TensorDesc& dy_desc, const void* dy,
                          float beta, const TensorDesc& db_desc, void* db, void* workspace) {
  Walk3 rest;
  for (int i = 0; i < dy_desc.rank(); ++i)
    if (i != 1) rest.add(dy_desc.dim(i), dy_desc.stride(i));
  const int64_t channels = dy_desc.dim(1);
  if (workspace) {
    const int64_t parts = chunks_per_channel(h, channels, rest.count);
    const int64_t len = (rest.count + parts - 1) / parts;
    float* ws = static_cast<float*>(workspace);
    bias_partial_kernel<<<dim3(static_cast<unsigned>(parts),
                               static_cast<unsigned>(blocks_for(channels))),
                          kTrainThreads, 0, h.stream()>>>(rest, channels, parts, len,
                                                          dy_desc.stride(1),
                                                          static_cast<const float*>(dy), ws);
    JET_TRY(launch_status("conv_backward_bias"));
    bias_finish_kernel<<<grid_for(channels, kTrainThreads, h.sm_count()), kTrainThreads, 0,
                         h.stream()>>>(channels, parts, db_desc.stride(1), alpha, beta, ws,
                                       static_cast<float*>(db));
    return launch_status("conv_backward_bias");
  }
  bias_kernel<<<blocks_for(channels), kTrainThreads, 0, h.stream()>>>(
      rest, channels, dy_desc.stride(1), db_desc.stride(1), alpha, beta,
      static_cast<const float*>(dy), static_cast<float*>(db));
  return launch_status("conv_backward_bias");
}

}  // namespace cuda
}  // namespace jet
