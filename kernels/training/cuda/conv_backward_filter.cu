// CUDA convolution backward filter and bias gradient, deterministic (no atomics):
//  - implicit: one block per dw element; its threads stride over (image, output position) with
//    x addressed on the fly (kernels/training/conv_grad.h), each keeping a compensated f32 sum,
//    combined by a fixed tree (block_sum).
//  - lower: the GEMM algorithm's im2col of x (transposed: a row per filter element, along the
//    images' output positions) and packing of dy (the GEMM itself is gemm_forward, called by
//    the front end).
//  - Winograd: the transforms of x and dy into the 16 planes, and the output transform of the
//    summed planes into dw (winograd_grad.h; the products are gemm_forward, called by the front
//    end).
//  - bias (and conv_backward_bias_activation, the activation's backward fused into it): one block
//    per channel, summing over the other dims the same way; with the workspace, several blocks
//    per channel where the channels are few (chunk sums, then a fixed-order total per channel).
#include <algorithm>

#include "../../common/fast_div.h"
#include "../activation_grad.h"
#include "../conv_grad.h"
#include "../winograd_grad.h"
#include "../../cuda/elementwise.cuh"
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

// The lowering's general kernels (any size, 64-bit index math): one thread per element written.
__global__ void lower_x_kernel(ConvGradGeom g, const float* __restrict__ x, float* col,
                               int64_t total) {
  const int64_t rows = g.n * g.positions, row = g.row();
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    // e runs over (group, filter element j, row r) with r fastest.
    const int64_t r = e % rows;
    const int64_t gj = e / rows;
    const int64_t j = gj % row, grp = gj / row;
    const int64_t n = r / g.positions;
    int64_t o[3];
    conv_grad_position(g, r - n * g.positions, o);
    const FilterTap f = filter_tap(g, j);
    const int64_t xo = conv_grad_x_offset(g, f, n, o);
    col[(grp * row + filter_offset(g, f)) * rows + r] = xo < 0 ? 0.f : x[xo + grp * g.cg * g.xs_c];
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

// The lowering's fast kernels, where every x and dy offset and the row count fit in 31 bits:
// threads run along r = (n, o), so x and dy are read and col and dyp written in runs, with 32-bit
// FastDiv steps instead of six 64-bit divisions an element (bench/NOTES.md, 2026-11-27 seventh
// session). dyp: a block row (blockIdx.y) is one channel, each element decoded; col: see
// lower_x_rows_kernel.
struct RowsSplit {  // r -> (n, o0, o1, o2)
  FastDiv positions, out1, out2;
  JET_HOST_DEVICE void at(int r, int* n, int* o) const {
    int p, o01;
    *n = positions.divmod(r, &p);
    o01 = out2.divmod(p, &o[2]);
    o[0] = out1.divmod(o01, &o[1]);
  }
};

RowsSplit rows_split(const ConvGradGeom& g) {
  RowsSplit s;
  s.positions = FastDiv::make(g.positions);
  s.out1 = FastDiv::make(g.out[1]);
  s.out2 = FastDiv::make(g.out[2]);
  return s;
}

// col's fast lowering: a thread per row r = (n, o), decoded once, looping over a run of
// kLowerEntries entries (filter elements of a group), each decoded once per block into shared
// memory; so x is read and col written in runs along r, and an element costs a few integer adds
// and compares. (The first version, a block row per entry and FastDiv steps per element, wrote
// col at a quarter of the bandwidth on ResNet-18's 7x7 stem: 0.42 ms, ncu on the H200.)
constexpr int kLowerEntries = 64;

__global__ void lower_x_rows_kernel(ConvGradGeom g, RowsSplit split, const float* __restrict__ x,
                                    float* col, int rows, int64_t entries) {
  __shared__ int e_col[kLowerEntries];       // the entry's row of col
  __shared__ int e_x[kLowerEntries];         // its channel's offset in x
  __shared__ int e_base[kLowerEntries][3];   // input position = o * stride + base, per axis
  const int64_t row = g.row();
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  int n = 0, o[3] = {0, 0, 0};
  if (r < rows) split.at(r, &n, o);
  int xn = n * static_cast<int>(g.xs_n), ob[3], in[3], xs[3];
  for (int d = 0; d < 3; ++d) {
    ob[d] = o[d] * static_cast<int>(g.stride[d]);
    in[d] = static_cast<int>(g.in[d]);
    xs[d] = static_cast<int>(g.xs[d]);
  }
  for (int64_t e0 = blockIdx.y * int64_t(kLowerEntries); e0 < entries; e0 += gridDim.y * int64_t(kLowerEntries)) {
    const int count = static_cast<int>(entries - e0 < kLowerEntries ? entries - e0 : kLowerEntries);
    __syncthreads();  // the previous run's entries are read
    if (threadIdx.x < count) {
      const int64_t e = e0 + threadIdx.x, grp = e / row;  // e = group * row + j
      const FilterTap f = filter_tap(g, e - grp * row);
      e_col[threadIdx.x] = static_cast<int>(grp * row + filter_offset(g, f));
      e_x[threadIdx.x] = static_cast<int>((grp * g.cg + f.c) * g.xs_c);
      for (int d = 0; d < 3; ++d) {
        const int64_t t = g.flip ? g.win[d] - 1 - f.t[d] : f.t[d];
        e_base[threadIdx.x][d] = static_cast<int>(t * g.dil[d] - g.pad[d]);
      }
    }
    __syncthreads();
    if (r >= rows) continue;
    for (int k = 0; k < count; ++k) {
      int off = xn + e_x[k];
      bool inside = true;
#pragma unroll
      for (int d = 0; d < 3; ++d) {
        const int i = ob[d] + e_base[k][d];
        inside = inside && i >= 0 && i < in[d];
        off += i * xs[d];
      }
      col[static_cast<int64_t>(e_col[k]) * rows + r] = inside ? x[off] : 0.f;
    }
  }
}

__global__ void pack_dy_rows_kernel(ConvGradGeom g, RowsSplit split, const float* __restrict__ dy,
                                    float* dyp, int rows, int64_t channels) {
  for (int64_t k = blockIdx.y; k < channels; k += gridDim.y) {
    const float* dk = dy + k * g.ys_c;
    float* out = dyp + k * rows;
    for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += gridDim.x * blockDim.x) {
      int n, o[3];
      split.at(r, &n, o);
      out[r] = dk[n * static_cast<int>(g.ys_n) + o[0] * static_cast<int>(g.ys[0]) +
                  o[1] * static_cast<int>(g.ys[1]) + o[2] * static_cast<int>(g.ys[2])];
    }
  }
}

// The largest offset a tensor of these (n, c, spatial) dims and strides reaches, plus one.
int64_t span(int64_t n, int64_t c, const int64_t* spatial, int64_t sn, int64_t sc, const int64_t* ss) {
  int64_t last = (n - 1) * sn + (c - 1) * sc;
  for (int i = 0; i < 3; ++i) last += (spatial[i] - 1) * ss[i];
  return last + 1;
}

// WINOGRAD's transforms: one thread per (tile, channel) of V and then of U, the tile fastest, so
// that each of the 16 planes is written in runs (winograd_grad.h's chunk-major layout). Tiles past
// the last real one (the last chunk's padding) are written as zeros.
struct WinogradSplit {  // tile t -> (chunk, image, tile row, tile column)
  FastDiv padded_tiles, chunk_tiles, per_image, tiles_w;
};

template <int M>
__global__ void winograd_transform_kernel(WinogradGradGeom w, WinogradSplit sp,
                                          const float* __restrict__ x,
                                          const float* __restrict__ dy, float* v, float* u,
                                          int64_t v_total, int64_t total) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const bool data = e < v_total;
    const int64_t r = data ? e : e - v_total;
    const int64_t ch = sp.padded_tiles.div(r);  // channel c (V) or k (U)
    const int64_t t = r - ch * sp.padded_tiles.d;
    constexpr int kPlanes = (M + 2) * (M + 2);
    float tile[kPlanes];
    if (t < w.tiles) {
      const int64_t n = sp.per_image.div(t);
      const int64_t rest = t - n * sp.per_image.d;
      const int64_t ty = sp.tiles_w.div(rest), tx = rest - ty * sp.tiles_w.d;
      if (data)
        winograd_data_tile<M>(w, x, n, ch, ty, tx, tile);
      else
        winograd_delta_tile<M>(w, dy, n, ch, ty, tx, tile);
    } else {
#pragma unroll
      for (int z = 0; z < kPlanes; ++z) tile[z] = 0.f;
    }
    const int64_t j = sp.chunk_tiles.div(t);
    const int64_t in_chunk = t - j * w.chunk_tiles;
    const int64_t channels = data ? w.g.cg : w.g.kg;
    float* out = (data ? v : u) + (j * kPlanes * channels + ch) * w.chunk_tiles + in_chunk;
    const int64_t plane = channels * w.chunk_tiles;
#pragma unroll
    for (int z = 0; z < kPlanes; ++z) out[z * plane] = tile[z];
  }
}

template <int M>
__global__ void winograd_output_kernel(ConvGradGeom g, const float* __restrict__ m, float alpha,
                                       float beta, float* dw) {
  const int64_t kc = g.kg * g.cg;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < kc;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t k = e / g.cg, c = e - k * g.cg;
    float mm[(M + 2) * (M + 2)], out[9];
#pragma unroll
    for (int z = 0; z < (M + 2) * (M + 2); ++z) mm[z] = m[z * kc + e];
    winograd_filter_tile<M>(mm, out);
#pragma unroll
    for (int r = 0; r < 3; ++r)
#pragma unroll
      for (int q = 0; q < 3; ++q)
        blend_store(dw + winograd_dw_offset(g, k, c, r, q), alpha, out[r * 3 + q], beta);
  }
}

// The bias gradient, optionally with the activation's backward fused (conv_backward_bias_activation):
// block (chunk b, channel k) walks its chunk of the channel (`rest`: every dim but C, in units
// of V elements; offsets o[0] into dy, o[1] into x, o[2] into dpre), turns dy into
// dpre = dy * act'(x) when x is given, stores it when dpre is given, and sums it. With a
// workspace (`parts` chunks a channel) the chunk's sum goes to ws[k * parts + b] and
// bias_finish_kernel adds each channel's sums in slot order; without, the block's whole channel
// (parts 1) is blended into db. Deterministic, no atomics. V = 4: the innermost dim is contiguous
// in every tensor and 16-byte aligned (bias_units), one float4 a tensor per unit.
struct BiasGrad {
  Walk3 rest;  // in units of V elements
  int64_t channels, parts, len;  // len: units a chunk
  int64_t dy_c, x_c, dpre_c, db_c;
  ActivationDesc act;
  float alpha, beta;
};

template <int V>
__global__ void bias_kernel(BiasGrad q, const float* __restrict__ dy, const float* x, float* dpre,
                            float* ws, float* db) {
  __shared__ float smem[kTrainThreads];
  for (int64_t k = blockIdx.y; k < q.channels; k += gridDim.y) {
    const int64_t begin = blockIdx.x * q.len, end = min(q.rest.count, begin + q.len);
    const float* dyk = dy + k * q.dy_c;
    const float* xk = x ? x + k * q.x_c : nullptr;
    float* dk = dpre ? dpre + k * q.dpre_c : nullptr;
    CompensatedSum acc;
    static_assert(V == 1 || V == 4, "one float or one float4 a unit");
#pragma unroll 4
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      int64_t o[3];
      q.rest.offsets(i, o);
      float g[V];
      load_v<V>(dyk, o[0], 1, V == 4, g);
      if (xk) {
        float xv[V];
        load_v<V>(xk, o[1], 1, V == 4, xv);
        for (int j = 0; j < V; ++j) g[j] *= activation_derivative(q.act, xv[j]);
      }
      if (dk) {
        if constexpr (V == 4)
          store_vec_aligned(dk + o[2], g, V);
        else
          dk[o[2]] = g[0];
      }
      for (int j = 0; j < V; ++j) acc.add(g[j]);
    }
    const float sum = block_sum(acc.value(), smem);
    if (threadIdx.x == 0) {
      if (ws)
        ws[k * q.parts + blockIdx.x] = sum;
      else
        blend_store(db + k * q.db_c, q.alpha, sum, q.beta);
    }
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
  const int64_t entries = g.groups * g.row(), channels = g.groups * g.kg;
  const int64_t limit = int64_t(1) << 30;  // room for the 32-bit sums of offsets
  const bool fast = rows < limit && span(g.n, g.groups * g.cg, g.in, g.xs_n, g.xs_c, g.xs) < limit &&
                    span(g.n, channels, g.out, g.ys_n, g.ys_c, g.ys) < limit;
  if (fast) {
    const RowsSplit split = rows_split(g);
    const int threads = 256;
    const int64_t x_blocks = std::min<int64_t>((rows + threads - 1) / threads, 1024);
    const int64_t runs = (entries + kLowerEntries - 1) / kLowerEntries;
    lower_x_rows_kernel<<<dim3(static_cast<unsigned>((rows + threads - 1) / threads),
                               static_cast<unsigned>(std::min<int64_t>(runs, 65535))),
                          threads, 0, h.stream()>>>(g, split, static_cast<const float*>(x), col,
                                                    static_cast<int>(rows), entries);
    JET_TRY(launch_status("conv_backward_filter (im2col)"));
    pack_dy_rows_kernel<<<dim3(static_cast<unsigned>(x_blocks), static_cast<unsigned>(std::min<int64_t>(channels, 65535))),
                          threads, 0, h.stream()>>>(g, split, static_cast<const float*>(dy), dyp,
                                                    static_cast<int>(rows), channels);
    return launch_status("conv_backward_filter (dy packing)");
  }
  const int64_t col_total = entries * rows, dy_total = channels * rows;
  lower_x_kernel<<<grid_for(col_total, kTrainThreads, h.sm_count()), kTrainThreads, 0,
                   h.stream()>>>(g, static_cast<const float*>(x), col, col_total);
  JET_TRY(launch_status("conv_backward_filter (im2col)"));
  pack_dy_kernel<<<grid_for(dy_total, kTrainThreads, h.sm_count()), kTrainThreads, 0,
                   h.stream()>>>(g, static_cast<const float*>(dy), dyp, dy_total);
  return launch_status("conv_backward_filter (dy packing)");
}

Status conv_backward_filter_winograd_transform(const Handle& h, const TensorDesc& x_desc,
                                               const void* x, const TensorDesc& dy_desc,
                                               const void* dy, const ConvDesc& conv,
                                               const FilterDesc& dw_desc, int64_t chunks,
                                               float* v, float* u) {
  const WinogradGradGeom w = make_winograd_grad_geom(make_conv_grad_geom(x_desc, dy_desc, conv, dw_desc),
                                                     winograd_grad_tile(conv), chunks);
  WinogradSplit sp;
  sp.padded_tiles = FastDiv::make(w.chunks * w.chunk_tiles);
  sp.chunk_tiles = FastDiv::make(w.chunk_tiles);
  sp.per_image = FastDiv::make(w.tiles_h * w.tiles_w);
  sp.tiles_w = FastDiv::make(w.tiles_w);
  const int64_t v_total = w.g.cg * sp.padded_tiles.d;
  const int64_t total = v_total + w.g.kg * sp.padded_tiles.d;
  auto* kernel = w.m == 4 ? winograd_transform_kernel<4> : winograd_transform_kernel<2>;
  kernel<<<grid_for(total, kTrainThreads, h.sm_count()), kTrainThreads, 0, h.stream()>>>(
      w, sp, static_cast<const float*>(x), static_cast<const float*>(dy), v, u, v_total, total);
  return launch_status("conv_backward_filter (Winograd transforms)");
}

Status conv_backward_filter_winograd_output(const Handle& h, const TensorDesc& x_desc,
                                            const TensorDesc& dy_desc, const ConvDesc& conv,
                                            const FilterDesc& dw_desc, const float* m, float alpha,
                                            float beta, void* dw) {
  const ConvGradGeom g = make_conv_grad_geom(x_desc, dy_desc, conv, dw_desc);
  auto* kernel = winograd_grad_tile(conv) == 4 ? winograd_output_kernel<4> : winograd_output_kernel<2>;
  kernel<<<grid_for(g.kg * g.cg, kTrainThreads, h.sm_count()), kTrainThreads, 0, h.stream()>>>(
      g, m, alpha, beta, static_cast<float*>(dw));
  return launch_status("conv_backward_filter (Winograd output)");
}

size_t conv_backward_bias_workspace_size(const Handle& h, const TensorDesc& dy_desc) {
  const int64_t channels = dy_desc.dim(1);
  const int64_t parts = chunks_per_channel(h, channels, dy_desc.elements() / channels);
  return parts > 1 ? static_cast<size_t>(channels * parts) * sizeof(float) : 0;
}

namespace {

// The bias gradient's walk over every dim but C in units of 4 elements where the innermost
// (merged) dim is contiguous in dy, x and dpre, a multiple of 4, and every other stride and base
// keeps the units 16-byte aligned; else in single elements. Returns the unit (4 or 1).
int bias_units(const TensorDesc& dy_desc, const void* dy, const TensorDesc* x_desc, const void* x,
               const TensorDesc* dpre_desc, const void* dpre, Walk3* rest) {
  *rest = Walk3();
  for (int i = 0; i < dy_desc.rank(); ++i)
    if (i != 1)
      rest->add(dy_desc.dim(i), dy_desc.stride(i), x_desc ? x_desc->stride(i) : 0,
                dpre_desc ? dpre_desc->stride(i) : 0);
  const int j = rest->rank - 1;
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  bool vec = j >= 0 && rest->dims[j] % 4 == 0 && aligned(dy) && (!x || aligned(x)) && (!dpre || aligned(dpre)) &&
             dy_desc.stride(1) % 4 == 0 && (!x || x_desc->stride(1) % 4 == 0) &&
             (!dpre || dpre_desc->stride(1) % 4 == 0);
  for (int t = 0; vec && t < 3; ++t) {
    const bool used = t == 0 || (t == 1 && x) || (t == 2 && dpre);
    if (!used) continue;
    vec = rest->s[t][j] == 1;
    for (int d = 0; vec && d < j; ++d) vec = rest->s[t][d] % 4 == 0;
  }
  if (!vec) return 1;
  rest->dims[j] /= 4;
  rest->count /= 4;
  for (int t = 0; t < 3; ++t) rest->s[t][j] *= 4;
  return 4;
}

Status run_bias_grad(const Handle& h, BiasGrad q, int unit, const float* dy, const float* x,
                     float* dpre, float* db, void* workspace, const char* routine) {
  const int64_t elements = q.rest.count * unit;
  q.parts = workspace ? chunks_per_channel(h, q.channels, elements) : 1;
  q.len = (q.rest.count + q.parts - 1) / q.parts;
  float* ws = q.parts > 1 ? static_cast<float*>(workspace) : nullptr;
  const dim3 grid(static_cast<unsigned>(q.parts), static_cast<unsigned>(blocks_for(q.channels)));
  if (unit == 4)
    bias_kernel<4><<<grid, kTrainThreads, 0, h.stream()>>>(q, dy, x, dpre, ws, db);
  else
    bias_kernel<1><<<grid, kTrainThreads, 0, h.stream()>>>(q, dy, x, dpre, ws, db);
  JET_TRY(launch_status(routine));
  if (ws) {
    bias_finish_kernel<<<grid_for(q.channels, kTrainThreads, h.sm_count()), kTrainThreads, 0, h.stream()>>>(
        q.channels, q.parts, q.db_c, q.alpha, q.beta, ws, db);
  }
  return launch_status(routine);
}

}  // namespace

Status conv_backward_bias(const Handle& h, float alpha, const TensorDesc& dy_desc, const void* dy,
                          float beta, const TensorDesc& db_desc, void* db, void* workspace) {
  BiasGrad q;
  const int unit = bias_units(dy_desc, dy, nullptr, nullptr, nullptr, nullptr, &q.rest);
  q.channels = dy_desc.dim(1);
  q.dy_c = dy_desc.stride(1);
  q.x_c = q.dpre_c = 0;
  q.db_c = db_desc.stride(1);
  q.act = ActivationDesc::identity();
  q.alpha = alpha;
  q.beta = beta;
  return run_bias_grad(h, q, unit, static_cast<const float*>(dy), nullptr, nullptr, static_cast<float*>(db),
                       workspace, "conv_backward_bias");
}

Status conv_backward_bias_activation(const Handle& h, const ActivationDesc& act, const TensorDesc& x_desc,
                                     const void* x, const TensorDesc& dy_desc, const void* dy,
                                     const TensorDesc& dpre_desc, void* dpre, float alpha, float beta,
                                     const TensorDesc& db_desc, void* db, void* workspace) {
  BiasGrad q;
  const int unit = bias_units(dy_desc, dy, &x_desc, x, &dpre_desc, dpre, &q.rest);
  q.channels = dy_desc.dim(1);
  q.dy_c = dy_desc.stride(1);
  q.x_c = x_desc.stride(1);
  q.dpre_c = dpre_desc.stride(1);
  q.db_c = db_desc.stride(1);
  q.act = act;
  q.alpha = alpha;
  q.beta = beta;
  return run_bias_grad(h, q, unit, static_cast<const float*>(dy), static_cast<const float*>(x),
                       static_cast<float*>(dpre), static_cast<float*>(db), workspace,
                       "conv_backward_bias_activation");
}

}  // namespace cuda
}  // namespace jet
