// CUDA softmax. The tensor splits into independent groups (INSTANCE: C and the spatial dims of
// each N; CHANNEL: the C values at each (N, spatial) position), each taking three passes over x
// as on the CPU: the max (not for FAST), the sum of exponentials, the outputs.
//  - rows: `lanes` threads per group (a warp-sized or block-wide group of lanes), the group's
//    elements spread over them; max and sum are pairwise trees over the lanes in shared memory.
//    Used for INSTANCE and for CHANNEL when C is contiguous (NHWC, classifier logits N x C x 1).
//  - columns: CHANNEL with a strided C (NCHW): one thread per (N, spatial) position looping over
//    C, consecutive threads at consecutive positions, so every pass coalesces across the warp.
// Each element is read and then written by the same thread after both statistics are known, so
// x == y (same layout) works in place.
#include <algorithm>

#include "reduction.cuh"
#include "../common/small_sort.h"

namespace jet {
namespace cuda {
namespace {

// A set of dims with x and y strides, slowest (in x) first.
struct Dims {
  int rank;
  int64_t dims[kMaxRank];
  int64_t xs[kMaxRank];
  int64_t ys[kMaxRank];
  int64_t count;

  __device__ __forceinline__ void offsets(int64_t i, int64_t* xo, int64_t* yo) const {
    if (rank == 1) {
      *xo = i * xs[0];
      *yo = i * ys[0];
      return;
    }
    int64_t a = 0, b = 0;
    // Unrolled with constant indices: a kernel parameter array indexed dynamically is copied to
    // local memory by every thread.
#pragma unroll
    for (int j = kMaxRank - 1; j >= 0; --j) {
      if (j >= rank) continue;
      const int64_t q = i / dims[j];
      const int64_t r = i - q * dims[j];
      a += r * xs[j];
      b += r * ys[j];
      i = q;
    }
    *xo = a;
    *yo = b;
  }
};

// Dims from the tensor dims listed in `which`, sorted by decreasing x stride, size-1 dims
// dropped and neighbours contiguous in both x and y merged.
Dims make_dims(const TensorDesc& xd, const TensorDesc& yd, const int* which, int n) {
  Dims d{};
  int order[kMaxRank];
  int m = 0;
  for (int j = 0; j < n; ++j)
    if (xd.dim(which[j]) > 1) order[m++] = which[j];
  small_stable_sort(order, m, [&](int a, int b) { return xd.stride(a) > xd.stride(b); });
  for (int j = 0; j < m; ++j) {
    const int i = order[j];
    if (d.rank > 0 && d.xs[d.rank - 1] == xd.stride(i) * xd.dim(i) &&
        d.ys[d.rank - 1] == yd.stride(i) * xd.dim(i)) {
      d.dims[d.rank - 1] *= xd.dim(i);
      d.xs[d.rank - 1] = xd.stride(i);
      d.ys[d.rank - 1] = yd.stride(i);
      continue;
    }
    d.dims[d.rank] = xd.dim(i);
    d.xs[d.rank] = xd.stride(i);
    d.ys[d.rank] = yd.stride(i);
    ++d.rank;
  }
  if (d.rank == 0) {
    d.rank = 1;
    d.dims[0] = 1;
    d.xs[0] = d.ys[0] = 0;
  }
  d.count = 1;
  for (int j = 0; j < d.rank; ++j) d.count *= d.dims[j];
  return d;
}

__device__ __forceinline__ float finish(SoftmaxAlgo algo, float v, float max_v, float sum,
                                        float log_sum) {
  if (algo == SoftmaxAlgo::LOG) return v - max_v - log_sum;
  return expf(v - max_v) / sum;
}

// Pairwise tree over the `lanes` lanes of each slot; returns the slot's result to every lane.
// All threads of the block must call it (it may hold barriers). Up to 32 lanes a group lies in
// one warp (lanes is a power of two, groups start at multiples of it): a shuffle butterfly.
template <bool MAX>
__device__ __forceinline__ float lanes_reduce(float* sh, int lane, int slot, int lanes, int outs,
                                              float v) {
  if (lanes <= 32) {
    for (int s = lanes / 2; s > 0; s /= 2) {
      const float o = __shfl_xor_sync(0xffffffffu, v, s);
      v = MAX ? fmaxf(v, o) : v + o;
    }
    return v;
  }
  sh[lane * outs + slot] = v;
  __syncthreads();
  for (int s = lanes / 2; s > 0; s /= 2) {
    if (lane < s) {
      const float a = sh[lane * outs + slot], b = sh[(lane + s) * outs + slot];
      sh[lane * outs + slot] = MAX ? fmaxf(a, b) : a + b;
    }
    __syncthreads();
  }
  const float r = sh[slot];
  __syncthreads();  // sh is reused by the next call
  return r;
}

template <class T, SoftmaxAlgo ALGO>
__global__ void softmax_rows(Dims outer, Dims group, int lanes, int outs, float alpha,
                             const T* x, float beta, T* y) {
  extern __shared__ float sh[];
  const int lane = threadIdx.x % lanes;
  const int slot = threadIdx.x / lanes;
  for (int64_t tile = blockIdx.x; tile * outs < outer.count; tile += gridDim.x) {
    const int64_t g = tile * outs + slot;
    const bool active = g < outer.count;
    int64_t xb = 0, yb = 0;
    if (active) outer.offsets(g, &xb, &yb);
    float max_v = 0.f;  // FAST: no max subtraction
    if (ALGO != SoftmaxAlgo::FAST) {
      float m = -INFINITY;
      if (active)
        for (int64_t r = lane; r < group.count; r += lanes) {
          int64_t xo, yo;
          group.offsets(r, &xo, &yo);
          m = fmaxf(m, to_f32(x[xb + xo]));
        }
      max_v = lanes_reduce<true>(sh, lane, slot, lanes, outs, m);
    }
    CompensatedSum s;
    if (active)
      for (int64_t r = lane; r < group.count; r += lanes) {
        int64_t xo, yo;
        group.offsets(r, &xo, &yo);
        s.add(expf(to_f32(x[xb + xo]) - max_v));
      }
    const float sum = lanes_reduce<false>(sh, lane, slot, lanes, outs, s.value());
    const float log_sum = ALGO == SoftmaxAlgo::LOG ? logf(sum) : 0.f;
    if (active)
      for (int64_t r = lane; r < group.count; r += lanes) {
        int64_t xo, yo;
        group.offsets(r, &xo, &yo);
        const float v = to_f32(x[xb + xo]);
        blend_store(y + yb + yo, alpha, finish(ALGO, v, max_v, sum, log_sum), beta);
      }
  }
}

template <class T, SoftmaxAlgo ALGO>
__global__ void softmax_columns(Dims outer, int64_t channels, int64_t xc, int64_t yc, float alpha,
                                const T* x, float beta, T* y) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < outer.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t xb, yb;
    outer.offsets(i, &xb, &yb);
    float max_v = 0.f;
    if (ALGO != SoftmaxAlgo::FAST) {
      max_v = -INFINITY;
      for (int64_t c = 0; c < channels; ++c) max_v = fmaxf(max_v, to_f32(x[xb + c * xc]));
    }
    CompensatedSum s;
    for (int64_t c = 0; c < channels; ++c) s.add(expf(to_f32(x[xb + c * xc]) - max_v));
    const float sum = s.value();
    const float log_sum = ALGO == SoftmaxAlgo::LOG ? logf(sum) : 0.f;
    for (int64_t c = 0; c < channels; ++c)
      blend_store(y + yb + c * yc, alpha, finish(ALGO, to_f32(x[xb + c * xc]), max_v, sum, log_sum),
                  beta);
  }
}

int pow2_at_least(int64_t n, int cap) {
  int p = 1;
  while (p < n && p < cap) p *= 2;
  return p;
}

template <class T, SoftmaxAlgo ALGO>
Status run(const Handle& h, SoftmaxMode mode, float alpha, const TensorDesc& xd, const void* x,
           float beta, const TensorDesc& yd, void* y) {
  const T* xp = static_cast<const T*>(x);
  T* yp = static_cast<T*>(y);
  const int rank = xd.rank();
  const int64_t sms = h.sm_count() > 0 ? h.sm_count() : 16;
  int outer_ids[kMaxRank] = {}, group_ids[kMaxRank] = {};
  int no = 0, ng = 0;
  outer_ids[no++] = 0;
  if (mode == SoftmaxMode::CHANNEL) {
    group_ids[ng++] = 1;
    for (int i = 2; i < rank; ++i) outer_ids[no++] = i;
  } else {
    for (int i = 1; i < rank; ++i) group_ids[ng++] = i;
  }
  const Dims outer = make_dims(xd, yd, outer_ids, no);
  const Dims group = make_dims(xd, yd, group_ids, ng);

  if (mode == SoftmaxMode::CHANNEL && group.count > 1 && outer.count > 1) {
    // C strided (some position dim is more contiguous in x than C) and enough positions to give
    // one thread each: the column kernel.
    const bool c_strided = xd.stride(1) > outer.xs[outer.rank - 1];
    if (c_strided && (outer.count >= 32 * sms || group.count <= 32)) {
      const int threads = 256;
      const int grid = grid_for(outer.count, threads, h.sm_count());
      softmax_columns<T, ALGO><<<grid, threads, 0, h.stream()>>>(
          outer, xd.dim(1), xd.stride(1), yd.stride(1), alpha, xp, beta, yp);
      return launch_status("softmax_forward");
    }
  }
  // Rows: up to 256 lanes per group (1024 when there are too few groups to fill the GPU), and
  // small groups share a block.
  const bool few = outer.count <= sms && group.count >= 8192;
  const int block = few ? 1024 : 256;
  const int lanes = pow2_at_least(group.count, block);
  const int outs = block / lanes;
  const int64_t tiles = (outer.count + outs - 1) / outs;
  const int64_t cap = sms * 2048 / block;
  const int grid = static_cast<int>(tiles < cap ? tiles : cap);
  softmax_rows<T, ALGO><<<grid, block, block * sizeof(float), h.stream()>>>(
      outer, group, lanes, outs, alpha, xp, beta, yp);
  return launch_status("softmax_forward");
}

template <class T>
Status run_algo(const Handle& h, SoftmaxAlgo algo, SoftmaxMode mode, float alpha,
                const TensorDesc& xd, const void* x, float beta, const TensorDesc& yd, void* y) {
  switch (algo) {
    case SoftmaxAlgo::FAST: return run<T, SoftmaxAlgo::FAST>(h, mode, alpha, xd, x, beta, yd, y);
    case SoftmaxAlgo::ACCURATE:
      return run<T, SoftmaxAlgo::ACCURATE>(h, mode, alpha, xd, x, beta, yd, y);
    case SoftmaxAlgo::LOG: return run<T, SoftmaxAlgo::LOG>(h, mode, alpha, xd, x, beta, yd, y);
  }
  return make_status(StatusCode::INTERNAL_ERROR, "softmax_forward: unknown algorithm");
}

}  // namespace

Status softmax_forward(const Handle& h, SoftmaxAlgo algo, SoftmaxMode mode, float alpha,
                       const TensorDesc& x_desc, const void* x, float beta,
                       const TensorDesc& y_desc, void* y) {
  if (x_desc.dtype() == DType::F32)
    return run_algo<float>(h, algo, mode, alpha, x_desc, x, beta, y_desc, y);
  return run_algo<__half>(h, algo, mode, alpha, x_desc, x, beta, y_desc, y);
}

JET_CUDA_MODULE(softmax)

}  // namespace cuda
}  // namespace jet
