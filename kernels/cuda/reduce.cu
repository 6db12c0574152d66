// CUDA reduce_forward, and the strided reduction engine that global pooling reuses.
//
// The dims split into kept ones (y keeps them) and reduced ones; each is sorted by decreasing x
// stride and contiguous neighbours are merged, as the CPU does. A block holds `outs` outputs and
// gives each `lanes` threads (both powers of two); a lane accumulates every lanes-th element of
// its output's reduced range, then the lanes are combined by a pairwise tree in shared memory.
// Two thread arrangements, chosen by where x is contiguous:
//  - inner (the smallest x stride is reduced: NCHW global pooling, a softmax-like row, a sum over
//    the last axis): consecutive threads are lanes of one output, reading consecutive elements.
//  - outer (the smallest x stride is kept: a sum over N or H of an NCHW tensor, NHWC global
//    pooling): consecutive threads are consecutive outputs, so each lane's reads coalesce across
//    the warp; the lanes split a long reduced range so that few outputs still fill the GPU.
// One launch, no workspace: a reduction to a single output runs in one block of 1024 threads.
#include "reduction.cuh"

namespace jet {
namespace cuda {
namespace {

struct ReducePlan {
  int kept_rank;  // dims y keeps, slowest first in x; the last varies fastest in x
  int64_t kept_dims[kMaxRank];
  int64_t kept_xs[kMaxRank];
  int64_t kept_ys[kMaxRank];
  int red_rank;  // reduced dims, slowest first in x (always >= 1: a size-1 dim when none)
  int64_t red_dims[kMaxRank];
  int64_t red_xs[kMaxRank];
  int64_t outputs;  // product of kept_dims
  int64_t count;    // product of red_dims
  int lanes, outs;  // threads per output, outputs per block; lanes * outs == blockDim.x
  bool inner;       // thread t is lane t % lanes of output t / lanes (else the transpose)
  float inv_count;  // MEAN
};

// Offset of reduced element r (row-major over red_dims) in x.
__device__ __forceinline__ int64_t reduced_offset(const ReducePlan& p, int64_t r) {
  if (p.red_rank == 1) return r * p.red_xs[0];
  int64_t off = 0;
  // Unrolled with constant indices: a kernel parameter array indexed dynamically is copied to
  // local memory by every thread.
#pragma unroll
  for (int i = kMaxRank - 1; i >= 0; --i) {
    if (i >= p.red_rank) continue;
    const int64_t q = r / p.red_dims[i];
    off += (r - q * p.red_dims[i]) * p.red_xs[i];
    r = q;
  }
  return off;
}

// x and y offsets of output o (row-major over kept_dims).
__device__ __forceinline__ void kept_offsets(const ReducePlan& p, int64_t o, int64_t* xo,
                                             int64_t* yo) {
  int64_t rest = o;
  // Unrolled with constant indices, as in reduced_offset.
#pragma unroll
  for (int i = kMaxRank - 1; i >= 0; --i) {
    if (i >= p.kept_rank) continue;
    const int64_t q = rest / p.kept_dims[i];
    const int64_t idx = rest - q * p.kept_dims[i];
    *xo += idx * p.kept_xs[i];
    *yo += idx * p.kept_ys[i];
    rest = q;
  }
}

template <ReduceOp OP>
struct Accum;

template <>
struct Accum<ReduceOp::SUM> {
  CompensatedSum s;
  __device__ __forceinline__ void add(float v) { s.add(v); }
  __device__ __forceinline__ float value() const { return s.value(); }
  __device__ static __forceinline__ float combine(float a, float b) { return a + b; }
};
template <>
struct Accum<ReduceOp::MAX> {
  float m = -INFINITY;  // identity; NaN wins over it and over everything
  __device__ __forceinline__ void add(float v) { m = nan_max(m, v); }
  __device__ __forceinline__ float value() const { return m; }
  __device__ static __forceinline__ float combine(float a, float b) { return nan_max(a, b); }
};
template <>
struct Accum<ReduceOp::MIN> {
  float m = INFINITY;
  __device__ __forceinline__ void add(float v) { m = nan_min(m, v); }
  __device__ __forceinline__ float value() const { return m; }
  __device__ static __forceinline__ float combine(float a, float b) { return nan_min(a, b); }
};

// ACC is the accumulator (MEAN uses the SUM one and scales at the end). V > 1 (outer
// arrangement only): an "output" is V consecutive outputs, contiguous in x and y (the plan's
// innermost kept dim counts them in vectors; see vector_outputs), read 16 bytes at a time
// (NHWC global pooling: one 2-byte load per element was what bound it).
template <class T, ReduceOp ACC, bool MEAN, int V>
__global__ void reduce_kernel(ReducePlan p, float alpha, const T* __restrict__ x, float beta,
                              T* __restrict__ y) {
  extern __shared__ float partial[];  // lanes * outs * V values, indexed (lane * outs + slot) * V
  const int t = threadIdx.x;
  const int lane = p.inner ? t % p.lanes : t / p.outs;
  const int slot = p.inner ? t / p.lanes : t % p.outs;
  if constexpr (V > 1) {
    for (int64_t tile = blockIdx.x; tile * p.outs < p.outputs; tile += gridDim.x) {
      const int64_t o = tile * p.outs + slot;
      Accum<ACC> acc[V];
      int64_t yo = 0;
      if (o < p.outputs) {
        int64_t xo = 0;
        kept_offsets(p, o, &xo, &yo);
        // Four 16-byte loads in flight before their adds (the same order as one at a time).
        int64_t r = lane;
        for (; r + 3 * p.lanes < p.count; r += 4 * p.lanes) {
          float v[4][V];
#pragma unroll
          for (int u = 0; u < 4; ++u)
            load_channels<T, V>(x + xo + reduced_offset(p, r + u * p.lanes), v[u]);
#pragma unroll
          for (int u = 0; u < 4; ++u)
#pragma unroll
            for (int q = 0; q < V; ++q) acc[q].add(v[u][q]);
        }
        for (; r < p.count; r += p.lanes) {
          float v[V];
          load_channels<T, V>(x + xo + reduced_offset(p, r), v);
#pragma unroll
          for (int q = 0; q < V; ++q) acc[q].add(v[q]);
        }
      }
#pragma unroll
      for (int q = 0; q < V; ++q) partial[(lane * p.outs + slot) * V + q] = acc[q].value();
      __syncthreads();
      for (int s = p.lanes / 2; s > 0; s /= 2) {
        if (lane < s)
#pragma unroll
          for (int q = 0; q < V; ++q)
            partial[(lane * p.outs + slot) * V + q] =
                Accum<ACC>::combine(partial[(lane * p.outs + slot) * V + q],
                                    partial[((lane + s) * p.outs + slot) * V + q]);
        __syncthreads();
      }
      if (lane == 0 && o < p.outputs) {
#pragma unroll
        for (int q = 0; q < V; ++q) {
          float v = partial[slot * V + q];
          if (MEAN) v *= p.inv_count;
          blend_store(y + yo + q, alpha, v, beta);
        }
      }
      __syncthreads();  // partial[] is rewritten by the next tile
    }
  } else {
    // The loop condition is uniform across the block, so the barriers inside are safe.
    for (int64_t tile = blockIdx.x; tile * p.outs < p.outputs; tile += gridDim.x) {
      const int64_t o = tile * p.outs + slot;
      Accum<ACC> acc;
      int64_t yo = 0;
      if (o < p.outputs) {
        int64_t xo = 0;
        kept_offsets(p, o, &xo, &yo);
        // Eight loads in flight before their adds (in the same order as one at a time: the same
        // sum): a block with few outputs and long ranges (NHWC global pooling of a large map, one
        // block in all) is bound by how many loads each lane keeps in flight.
        int64_t r = lane;
        for (; r + 7 * p.lanes < p.count; r += 8 * p.lanes) {
          float v[8];
#pragma unroll
          for (int u = 0; u < 8; ++u) v[u] = to_f32(x[xo + reduced_offset(p, r + u * p.lanes)]);
#pragma unroll
          for (int u = 0; u < 8; ++u) acc.add(v[u]);
        }
        for (; r < p.count; r += p.lanes) acc.add(to_f32(x[xo + reduced_offset(p, r)]));
      }
      // Pairwise tree over the lanes: error grows with log2(lanes), not with lanes. Inner groups
      // of up to 32 lanes lie in one warp (lanes is a power of two): a shuffle butterfly.
      const bool in_warp = p.inner && p.lanes <= 32;
      float v = acc.value();
      if (in_warp) {
        for (int s = p.lanes / 2; s > 0; s /= 2)
          v = Accum<ACC>::combine(v, __shfl_xor_sync(0xffffffffu, v, s));
      } else {
        partial[lane * p.outs + slot] = v;
        __syncthreads();
        for (int s = p.lanes / 2; s > 0; s /= 2) {
          if (lane < s)
            partial[lane * p.outs + slot] = Accum<ACC>::combine(partial[lane * p.outs + slot],
                                                                partial[(lane + s) * p.outs + slot]);
          __syncthreads();
        }
        v = partial[slot];
      }
      if (lane == 0 && o < p.outputs) {
        if (MEAN) v *= p.inv_count;
        blend_store(y + yo, alpha, v, beta);
      }
      if (!in_warp) __syncthreads();  // partial[] is rewritten by the next tile
    }
  }
}

int pow2_at_least(int64_t n, int cap) {
  int p = 1;
  while (p < n && p < cap) p *= 2;
  return p;
}

// Sorts dims by decreasing x stride (insertion sort: at most 8) and merges neighbours that are
// contiguous in x (and in y, when y strides are given).
void sort_and_merge(int* rank, int64_t* dims, int64_t* xs, int64_t* ys) {
  for (int j = 1; j < *rank; ++j) {
    const int64_t d = dims[j], sx = xs[j], sy = ys ? ys[j] : 0;
    int k = j;
    for (; k > 0 && xs[k - 1] < sx; --k) {
      dims[k] = dims[k - 1];
      xs[k] = xs[k - 1];
      if (ys) ys[k] = ys[k - 1];
    }
    dims[k] = d;
    xs[k] = sx;
    if (ys) ys[k] = sy;
  }
  int out = 0;
  for (int j = 0; j < *rank; ++j) {
    if (out > 0 && xs[out - 1] == xs[j] * dims[j] && (!ys || ys[out - 1] == ys[j] * dims[j])) {
      dims[out - 1] *= dims[j];
      xs[out - 1] = xs[j];
      if (ys) ys[out - 1] = ys[j];
      continue;
    }
    dims[out] = dims[j];
    xs[out] = xs[j];
    if (ys) ys[out] = ys[j];
    ++out;
  }
  *rank = out;
}

template <class T, int V>
Status launch(const Handle& h, ReduceOp op, const ReducePlan& p, float alpha, const void* x,
              float beta, void* y, const char* routine) {
  const int threads = p.lanes * p.outs;
  const int64_t tiles = (p.outputs + p.outs - 1) / p.outs;
  const int64_t cap = static_cast<int64_t>(h.sm_count() > 0 ? h.sm_count() : 16) * 2048 / threads;
  const int grid = static_cast<int>(tiles < cap ? tiles : cap);
  const size_t shmem = static_cast<size_t>(threads) * V * sizeof(float);
  const T* xp = static_cast<const T*>(x);
  T* yp = static_cast<T*>(y);
  switch (op) {
    case ReduceOp::SUM:
      reduce_kernel<T, ReduceOp::SUM, false, V><<<grid, threads, shmem, h.stream()>>>(p, alpha, xp, beta, yp);
      break;
    case ReduceOp::MEAN:
      reduce_kernel<T, ReduceOp::SUM, true, V><<<grid, threads, shmem, h.stream()>>>(p, alpha, xp, beta, yp);
      break;
    case ReduceOp::MAX:
      reduce_kernel<T, ReduceOp::MAX, false, V><<<grid, threads, shmem, h.stream()>>>(p, alpha, xp, beta, yp);
      break;
    case ReduceOp::MIN:
      reduce_kernel<T, ReduceOp::MIN, false, V><<<grid, threads, shmem, h.stream()>>>(p, alpha, xp, beta, yp);
      break;
  }
  return launch_status(routine);
}

// Outer arrangement with V consecutive outputs a thread: the innermost kept dim is contiguous
// in x and y (stride 1) and a multiple of V long, every other stride a multiple of V, both
// pointers 16-byte aligned. Rewrites the plan to count that dim in vectors of V.
bool vector_outputs(ReducePlan* p, const void* x, const void* y, int v) {
  if (p->inner || p->kept_rank == 0) return false;
  const int last = p->kept_rank - 1;
  if (p->kept_xs[last] != 1 || p->kept_ys[last] != 1 || p->kept_dims[last] % v != 0) return false;
  if (reinterpret_cast<uintptr_t>(x) % 16 != 0 || reinterpret_cast<uintptr_t>(y) % 16 != 0)
    return false;
  for (int i = 0; i < last; ++i)
    if (p->kept_xs[i] % v != 0 || p->kept_ys[i] % v != 0) return false;
  for (int i = 0; i < p->red_rank; ++i)
    if (p->red_xs[i] % v != 0) return false;
  p->kept_dims[last] /= v;
  p->kept_xs[last] = v;
  p->kept_ys[last] = v;
  p->outputs /= v;
  return true;
}

}  // namespace

Status reduce_strided(const Handle& h, ReduceOp op, float alpha, const TensorDesc& x_desc,
                      const void* x, float beta, const TensorDesc& y_desc, void* y,
                      const char* routine) {
  ReducePlan p{};
  for (int i = 0; i < x_desc.rank(); ++i) {
    if (x_desc.dim(i) == 1) continue;
    if (y_desc.dim(i) == 1) {
      p.red_dims[p.red_rank] = x_desc.dim(i);
      p.red_xs[p.red_rank++] = x_desc.stride(i);
    } else {
      p.kept_dims[p.kept_rank] = x_desc.dim(i);
      p.kept_xs[p.kept_rank] = x_desc.stride(i);
      p.kept_ys[p.kept_rank++] = y_desc.stride(i);
    }
  }
  sort_and_merge(&p.red_rank, p.red_dims, p.red_xs, nullptr);
  sort_and_merge(&p.kept_rank, p.kept_dims, p.kept_xs, p.kept_ys);
  if (p.red_rank == 0) {  // nothing reduced: a scaled copy, one "element" per output
    p.red_rank = 1;
    p.red_dims[0] = 1;
    p.red_xs[0] = 0;
  }
  p.outputs = 1;
  for (int i = 0; i < p.kept_rank; ++i) p.outputs *= p.kept_dims[i];
  p.count = 1;
  for (int i = 0; i < p.red_rank; ++i) p.count *= p.red_dims[i];
  p.inv_count = static_cast<float>(1.0 / static_cast<double>(p.count));

  const int64_t sms = h.sm_count() > 0 ? h.sm_count() : 16;
  // Inner when the most contiguous x dim is reduced (the sorted lists end with the smallest).
  p.inner = p.kept_rank == 0 ||
            (p.count > 1 && p.red_xs[p.red_rank - 1] < p.kept_xs[p.kept_rank - 1]);
  if (p.inner) {
    // Few outputs with long ranges (a reduction to a scalar, global pooling of a small batch):
    // 1024 lanes per output so that each block pulls as much bandwidth as an SM can.
    const bool few = p.outputs <= sms && p.count >= 16384;
    // Up to 1024 elements per output, one warp (shuffle reduction, no barriers) does it.
    p.lanes = pow2_at_least(p.count, few ? 1024 : (p.count <= 1024 ? 32 : 256));
    p.outs = (few ? 1024 : 256) / p.lanes;
    if (p.outs < 1) p.outs = 1;
  }
  const bool f32 = x_desc.dtype() == DType::F32;
  // Only where the vectors alone fill the GPU (32 a block, a block an SM): with fewer outputs
  // (the squeeze-and-excitation pools of EfficientNet at batch 1: 96 channels, 12544 pixels)
  // the scalar arrangement's 1024-thread blocks split the long ranges over more lanes, and the
  // vector kernel at 256 threads ran them ~15% slower end to end.
  const int vw = f32 ? 4 : 8;
  const bool vec = !p.inner && p.outputs / vw >= 32 * sms && vector_outputs(&p, x, y, vw);
  if (!p.inner) {
    p.outs = pow2_at_least(p.outputs, 32);
    // Enough tiles to fill the GPU: 256-thread blocks; otherwise let lanes split the range.
    // The vector kernel keeps V sums a thread: at most 256 threads (its registers).
    const int64_t tiles = (p.outputs + p.outs - 1) / p.outs;
    const int threads = tiles >= 4 * sms || vec ? 256 : 1024;
    p.lanes = pow2_at_least(p.count, threads / p.outs);
  }
  if (f32) {
    if (vec) return launch<float, 4>(h, op, p, alpha, x, beta, y, routine);
    return launch<float, 1>(h, op, p, alpha, x, beta, y, routine);
  }
  if (vec) return launch<__half, 8>(h, op, p, alpha, x, beta, y, routine);
  return launch<__half, 1>(h, op, p, alpha, x, beta, y, routine);
}

Status reduce_forward(const Handle& h, ReduceOp op, float alpha, const TensorDesc& x_desc,
                      const void* x, float beta, const TensorDesc& y_desc, void* y) {
  return reduce_strided(h, op, alpha, x_desc, x, beta, y_desc, y, "reduce_forward");
}

JET_CUDA_MODULE(reduce)

}  // namespace cuda
}  // namespace jet
