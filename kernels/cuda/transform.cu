// CUDA transform_tensor: y = alpha * x + beta * y between any two layouts and dtypes.
//
// The loop is simplified as in every elementwise routine (elementwise.cuh): ordered by y's
// strides and merged, so a same-layout copy or conversion is one flat, 16-byte vectorized loop.
// When x's fastest dim is not y's (NCHW <-> NHWC, any transpose), reading x in y's order would
// touch one element per cache line; a shared-memory tiled transpose instead reads 64x64 tiles
// along x's fastest dim and writes them along y's. When y's fastest dim is narrow (an image's
// 3 channels going NCHW -> NHWC) a thread moves the whole of it for one index of x's fastest
// dim: reads run along x, and a warp's writes cover one contiguous span of y. Everything else
// (strided views, small transposed dims) takes the gather loop, whose writes stay coalesced.
#include "../api/backend.h"
#include "elementwise.cuh"
#include "typed_access.cuh"

namespace jet {
namespace cuda {
namespace {

// Integer or bool on either side (alpha 1, beta 0: the front end checked): each element
// converted in its own type, scalar accesses.
template <class Tx, class Ty>
struct ConvertOp {
  const Tx* x;
  Ty* y;

  __device__ __forceinline__ void setup() {}
  template <int V>
  __device__ __forceinline__ void apply(const EwLoop<2>& l, const int64_t* off) const {
    for (int k = 0; k < V; ++k)
      y[off[0] + k * l.inner_stride(0)] = convert_value<Ty>(x[off[1] + k * l.inner_stride(1)]);
  }
};

template <class Tx, class Ty>
struct TransformOp {
  const Tx* x;
  Ty* y;
  float alpha, beta;

  __device__ __forceinline__ void setup() {}
  template <int V>
  __device__ __forceinline__ void apply(const EwLoop<2>& l, const int64_t* off) const {
    float r[V];
    load_v<V>(x, off[1], l.inner_stride(1), l.vec[1], r);
    blend_store_v<V>(y, off[0], l.inner_stride(0), l.vec[0], alpha, r, beta);
  }
};

// 64x64 tiles moved by 32x8 threads: 16 elements per thread in each phase, all loads issued
// before the first use, so that enough bytes are in flight per SM to cover DRAM latency (four
// elements per thread leave f16 transposes latency-bound).
constexpr int kTile = 64;
constexpr int kThreadsX = 32;
constexpr int kThreadsY = 8;
constexpr int kPerX = kTile / kThreadsX;  // 2
constexpr int kPerY = kTile / kThreadsY;  // 8

// Dim a is x's fastest (reads run along it), dim b is y's fastest (writes run along it); every
// other dim is a batch dim. One block per (a tile, b tile, batch index): no divisions per tile
// but the batch decomposition (none for a single batch dim, the NCHW <-> NHWC case).
struct TransposeParams {
  int64_t a_dim, b_dim;
  int64_t xs_a, xs_b, ys_a, ys_b;
  int64_t tiles_b, batch;
  FastDiv a_div;  // narrow plan: index -> (batch index, a)
  int batch_rank;
  int64_t batch_dims[kMaxRank];
  FastDiv batch_div[kMaxRank];
  int64_t batch_xs[kMaxRank], batch_ys[kMaxRank];
};

// x and y offsets of batch index bi.
__device__ __forceinline__ void batch_offsets(const TransposeParams& p, int64_t bi, int64_t* xo,
                                              int64_t* yo) {
  int64_t rest = bi;
  *xo = *yo = 0;
  for (int d = p.batch_rank - 1; d > 0; --d) {
    const int64_t q = p.batch_div[d].div(rest);
    const int64_t r = rest - q * p.batch_dims[d];
    *xo += r * p.batch_xs[d];
    *yo += r * p.batch_ys[d];
    rest = q;
  }
  if (p.batch_rank > 0) {
    *xo += rest * p.batch_xs[0];
    *yo += rest * p.batch_ys[0];
  }
}

// y's fastest dim b is narrow: a thread per (batch index, a) moves all of b.
template <class Tx, class Ty>
__global__ void transpose_narrow(TransposeParams p, const Tx* x, Ty* y, float alpha, float beta) {
  const int64_t total = p.batch * p.a_dim;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t bi = p.a_div.div(i), a = i - bi * p.a_dim;
    int64_t xo, yo;
    batch_offsets(p, bi, &xo, &yo);
    const Tx* xa = x + xo + a * p.xs_a;
    Ty* ya = y + yo + a * p.ys_a;
    for (int64_t b = 0; b < p.b_dim; ++b)
      blend_store(ya + b * p.ys_b, alpha, to_f32(xa[b * p.xs_b]), beta);
  }
}

template <class Tx, class Ty>
__global__ void __launch_bounds__(kThreadsX * kThreadsY)
    transpose_tiled(TransposeParams p, const Tx* x, Ty* y, float alpha, float beta) {
  // +1 column: both phases touch 32 different banks per warp.
  __shared__ float tile[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t a0 = static_cast<int64_t>(blockIdx.x) * kTile;
  for (int64_t tb = blockIdx.y; tb < p.tiles_b; tb += gridDim.y) {
    const int64_t b0 = tb * kTile;
    const bool full = a0 + kTile <= p.a_dim && b0 + kTile <= p.b_dim;
    for (int64_t bi = blockIdx.z; bi < p.batch; bi += gridDim.z) {
      int64_t xo, yo;
      batch_offsets(p, bi, &xo, &yo);
      // Read: thread (tx, ty) loads a = a0 + tx + 32 i, b = b0 + ty + 8 k.
      const Tx* xb = x + xo + (a0 + tx) * p.xs_a + (b0 + ty) * p.xs_b;
      float v[kPerX][kPerY];
      if (full) {
#pragma unroll
        for (int i = 0; i < kPerX; ++i)
#pragma unroll
          for (int k = 0; k < kPerY; ++k)
            v[i][k] = to_f32(xb[i * kThreadsX * p.xs_a + k * kThreadsY * p.xs_b]);
      } else {
#pragma unroll
        for (int i = 0; i < kPerX; ++i)
#pragma unroll
          for (int k = 0; k < kPerY; ++k) {
            const bool in = a0 + tx + i * kThreadsX < p.a_dim && b0 + ty + k * kThreadsY < p.b_dim;
            v[i][k] = in ? to_f32(xb[i * kThreadsX * p.xs_a + k * kThreadsY * p.xs_b]) : 0.f;
          }
      }
#pragma unroll
      for (int i = 0; i < kPerX; ++i)
#pragma unroll
        for (int k = 0; k < kPerY; ++k) tile[ty + k * kThreadsY][tx + i * kThreadsX] = v[i][k];
      __syncthreads();
      // Write: thread (tx, ty) stores b = b0 + tx + 32 i, a = a0 + ty + 8 k.
      Ty* yb = y + yo + (b0 + tx) * p.ys_b + (a0 + ty) * p.ys_a;
#pragma unroll
      for (int i = 0; i < kPerX; ++i)
#pragma unroll
        for (int k = 0; k < kPerY; ++k) {
          const bool in =
              full || (b0 + tx + i * kThreadsX < p.b_dim && a0 + ty + k * kThreadsY < p.a_dim);
          if (in)
            blend_store(yb + i * kThreadsX * p.ys_b + k * kThreadsY * p.ys_a, alpha,
                        tile[tx + i * kThreadsX][ty + k * kThreadsY], beta);
        }
      __syncthreads();  // the tile is reused by the next iteration
    }
  }
}

enum class Transpose { NONE, TILED, NARROW };

// The transpose plan for a simplified loop: tiled, narrow (y's fastest dim short, x's long) or
// none when the gather loop is the better choice.
Transpose plan_transpose(const EwLoop<2>& l, TransposeParams* p) {
  if (l.rank < 2) return Transpose::NONE;
  const int jb = l.rank - 1;  // y's fastest dim (the loop is ordered by y's strides)
  int ja = 0;
  for (int d = 1; d < l.rank; ++d)
    if (l.strides[1][d] < l.strides[1][ja]) ja = d;
  // Same fastest dim: reads are already coalesced. Narrow dims waste most of a tile.
  if (ja == jb || l.dims[ja] < 16) return Transpose::NONE;
  const Transpose kind = l.dims[jb] >= 16 ? Transpose::TILED
                         : l.dims[ja] >= 64 && l.dims[jb] <= 4 ? Transpose::NARROW
                                                               : Transpose::NONE;
  if (kind == Transpose::NONE) return kind;
  p->a_dim = l.dims[ja];
  p->b_dim = l.dims[jb];
  p->xs_a = l.strides[1][ja];
  p->xs_b = l.strides[1][jb];
  p->ys_a = l.strides[0][ja];
  p->ys_b = l.strides[0][jb];
  p->tiles_b = (p->b_dim + kTile - 1) / kTile;
  p->batch_rank = 0;
  p->batch = 1;
  for (int d = 0; d < l.rank; ++d) {
    if (d == ja || d == jb) continue;
    p->batch_dims[p->batch_rank] = l.dims[d];
    p->batch_div[p->batch_rank] = FastDiv::make(l.dims[d]);
    p->batch_xs[p->batch_rank] = l.strides[1][d];
    p->batch_ys[p->batch_rank] = l.strides[0][d];
    ++p->batch_rank;
    p->batch *= l.dims[d];
  }
  p->a_div = FastDiv::make(p->a_dim);
  // The a tiles go on grid x (2^31 - 1 blocks); b tiles and batch loop past 65535.
  return kind == Transpose::NARROW || (p->a_dim + kTile - 1) / kTile <= 0x7fffffff
             ? kind
             : Transpose::NONE;
}

template <class Tx, class Ty>
Status run(const Handle& h, float alpha, const TensorDesc& xd, const void* x, float beta,
           const TensorDesc& yd, void* y) {
  const TensorDesc* descs[2] = {&yd, &xd};
  const void* ptrs[2] = {y, x};
  constexpr int V = vec_width<Tx, Ty>();
  const EwLoop<2> l = make_ew_loop<2>(descs, ptrs, V);
  TransposeParams p;
  const Transpose kind = plan_transpose(l, &p);
  if (kind == Transpose::NARROW) {
    transpose_narrow<Tx, Ty><<<grid_for(p.batch * p.a_dim, 256, h.sm_count()), 256, 0,
                               h.stream()>>>(p, static_cast<const Tx*>(x), static_cast<Ty*>(y),
                                             alpha, beta);
    return launch_status("transform_tensor");
  }
  if (kind == Transpose::TILED) {
    const dim3 grid(static_cast<unsigned>((p.a_dim + kTile - 1) / kTile),
                    static_cast<unsigned>(p.tiles_b < 65535 ? p.tiles_b : 65535),
                    static_cast<unsigned>(p.batch < 65535 ? p.batch : 65535));
    transpose_tiled<Tx, Ty><<<grid, dim3(kThreadsX, kThreadsY), 0, h.stream()>>>(
        p, static_cast<const Tx*>(x), static_cast<Ty*>(y), alpha, beta);
    return launch_status("transform_tensor");
  }
  const TransformOp<Tx, Ty> op{static_cast<const Tx*>(x), static_cast<Ty*>(y), alpha, beta};
  return launch_ew<2, V>(h, op, l, "transform_tensor");
}

}  // namespace

Status transform_tensor(const Handle& h, float alpha, const TensorDesc& x_desc, const void* x,
                        float beta, const TensorDesc& y_desc, void* y) {
  if (!dtype_is_float(x_desc.dtype()) || !dtype_is_float(y_desc.dtype())) {
    const TensorDesc* descs[2] = {&y_desc, &x_desc};
    const void* ptrs[2] = {y, x};
    const EwLoop<2> l = make_ew_loop<2>(descs, ptrs, 1);
    Status st;
    with_storage_type(x_desc.dtype(), [&](auto x_type) {
      using Tx = decltype(x_type);
      with_storage_type(y_desc.dtype(), [&](auto y_type) {
        using Ty = decltype(y_type);
        const ConvertOp<Tx, Ty> k{static_cast<const Tx*>(x), static_cast<Ty*>(y)};
        st = launch_ew<2, 1>(h, k, l, "transform_tensor");
      });
    });
    return st;
  }
  const bool xf = x_desc.dtype() == DType::F32, yf = y_desc.dtype() == DType::F32;
  if (xf && yf) return run<float, float>(h, alpha, x_desc, x, beta, y_desc, y);
  if (xf) return run<float, __half>(h, alpha, x_desc, x, beta, y_desc, y);
  if (yf) return run<__half, float>(h, alpha, x_desc, x, beta, y_desc, y);
  return run<__half, __half>(h, alpha, x_desc, x, beta, y_desc, y);
}

JET_CUDA_MODULE(transform)

}  // namespace cuda
}  // namespace jet
