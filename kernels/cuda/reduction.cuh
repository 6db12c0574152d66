// Reduction building blocks shared by reduce.cu, pool.cu and softmax.cu: a compensated f32 sum,
// NaN-propagating max/min, and the generic strided reduction engine (reduce_strided) that
// reduce_forward and global pooling both run on.
#pragma once

#include <type_traits>

#include "../api/backend.h"
#include "cuda_common.cuh"
#include "elementwise.cuh"  // FastDiv

namespace jet {
namespace cuda {

// Kahan-Babuska (Neumaier) summation in f32. A thread's running sum over thousands of terms
// would otherwise drift by ~n * 2^-24 relative; the compensation keeps it at ~2^-24, and the
// cross-thread combination is a pairwise tree, so long reductions stay well within 1e-5.
// nvcc does not reassociate floating point without --use_fast_math, so the compensation survives.
struct CompensatedSum {
  float sum = 0.f;
  float comp = 0.f;

  __device__ __forceinline__ void add(float v) {
    const float t = sum + v;
    // The low-order bits lost in t, taken from whichever operand is smaller in magnitude.
    if (fabsf(sum) >= fabsf(v))
      comp += (sum - t) + v;
    else
      comp += (v - t) + sum;
    sum = t;
  }
  // inf/NaN terms: sum is then inf or NaN and comp may be NaN (inf - inf); the plain sum is the
  // right answer (as a plain f32 or f64 sum would give).
  __device__ __forceinline__ float value() const { return isfinite(sum) ? sum + comp : sum; }
};

// max/min that propagate NaN from either operand (as PyTorch and the CPU backend do).
// Dims [begin, end) of x and y in their order (a row-major index over them stays one: layernorm
// indexes its parameters by it), size-1 dims dropped, neighbours contiguous in both x and y
// merged; index decomposition through FastDiv (elementwise.cuh). At least one dim (extent 1,
// strides 0, when there is none). instancenorm's planes and layernorm's groups and rows.
struct MergedDims {
  int rank;
  int64_t dims[kMaxRank];
  int64_t xs[kMaxRank];
  int64_t ys[kMaxRank];
  FastDiv div[kMaxRank];
  int64_t count;

  __device__ __forceinline__ void offsets(int64_t i, int64_t* xo, int64_t* yo) const {
    if (rank == 1) {
      *xo = i * xs[0];
      *yo = i * ys[0];
      return;
    }
    int64_t a = 0, b = 0;
    // Unrolled with constant indices so the parameter arrays stay out of local memory.
#pragma unroll
    for (int j = kMaxRank - 1; j >= 0; --j) {
      if (j >= rank) continue;
      const int64_t q = div[j].div(i);
      const int64_t r = i - q * dims[j];
      a += r * xs[j];
      b += r * ys[j];
      i = q;
    }
    *xo = a;
    *yo = b;
  }
};

inline MergedDims merge_dims(const TensorDesc& xd, const TensorDesc& yd, int begin, int end) {
  MergedDims m{};
  for (int i = begin; i < end; ++i) {
    if (xd.dim(i) == 1) continue;
    if (m.rank > 0 && m.xs[m.rank - 1] == xd.stride(i) * xd.dim(i) &&
        m.ys[m.rank - 1] == yd.stride(i) * xd.dim(i)) {
      m.dims[m.rank - 1] *= xd.dim(i);
      m.xs[m.rank - 1] = xd.stride(i);
      m.ys[m.rank - 1] = yd.stride(i);
      continue;
    }
    m.dims[m.rank] = xd.dim(i);
    m.xs[m.rank] = xd.stride(i);
    m.ys[m.rank] = yd.stride(i);
    ++m.rank;
  }
  if (m.rank == 0) {
    m.rank = 1;
    m.dims[0] = 1;
    m.xs[0] = m.ys[0] = 0;
  }
  m.count = 1;
  for (int j = 0; j < m.rank; ++j) {
    m.count *= m.dims[j];
    m.div[j] = FastDiv::make(m.dims[j]);
  }
  return m;
}

// The sum of v over the block (instancenorm, layernorm), returned to every thread. blockDim.x is a multiple of 32 and at
// most 1024; every thread must call it (it holds barriers). `partial` has 32 doubles. The
// threads' sums are combined in double: a few dozen double adds per plane and pass, negligible
// next to the per-element work even where f64 is slow (Jetson), and the combination then adds no
// rounding of its own to the f32 per-thread sums however long the plane.
__device__ __forceinline__ float block_sum(float v, double* partial) {
  double d = v;
  for (int s = 16; s > 0; s /= 2) d += __shfl_xor_sync(0xffffffffu, d, s);
  const int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) partial[warp] = d;
  __syncthreads();
  double total = 0.0;
  const int warps = blockDim.x / 32;
  for (int i = 0; i < warps; ++i) total += partial[i];  // the same order in every thread
  __syncthreads();  // partial is rewritten by the next call
  return static_cast<float>(total);
}

// The mean and 1 / sqrt(biased variance + epsilon) of one group of elements (dims d from xp), by
// the whole block (barriers inside: every thread calls it), two-pass on shifted data: the mean as
// sum(x - x0) / count with x0 the group's first element (terms of the size of the spread, not of
// the mean), then the squared deviations from it. x0 is read before the first barrier and the
// group is read completely before the caller writes any of it: in place is safe.
struct GroupStats {
  float x0, mean_minus_x0;  // x - mean = (x - x0) - mean_minus_x0, nearly exact
  double inv_std;
};
template <class T>
__device__ __forceinline__ GroupStats group_stats(const MergedDims& d, const T* xp, double epsilon,
                                                  double* partial) {
  GroupStats g;
  const float count = static_cast<float>(d.count);
  g.x0 = to_f32(xp[0]);
  CompensatedSum shifted;
  for (int64_t i = threadIdx.x; i < d.count; i += blockDim.x) {
    int64_t xo, yo;
    d.offsets(i, &xo, &yo);
    shifted.add(to_f32(xp[xo]) - g.x0);
  }
  g.mean_minus_x0 = block_sum(shifted.value(), partial) / count;
  CompensatedSum squares;
  for (int64_t i = threadIdx.x; i < d.count; i += blockDim.x) {
    int64_t xo, yo;
    d.offsets(i, &xo, &yo);
    const float v = (to_f32(xp[xo]) - g.x0) - g.mean_minus_x0;
    squares.add(v * v);
  }
  const float var = block_sum(squares.value(), partial) / count;
  g.inv_std = 1.0 / sqrt(static_cast<double>(var) + epsilon);
  return g;
}

__device__ __forceinline__ float nan_max(float a, float b) { return (a > b || a != a) ? a : b; }
__device__ __forceinline__ float nan_min(float a, float b) { return (a < b || a != a) ? a : b; }

// V consecutive elements of x as floats (V > 1: one 16-byte load, p 16-byte aligned).
template <class T, int V>
__device__ __forceinline__ void load_channels(const T* p, float* out) {
  if constexpr (V == 1) {
    out[0] = to_f32(*p);
  } else if constexpr (std::is_same<T, float>::value) {
    static_assert(V == 4, "f32: 4 channels a load");
    const float4 q = *reinterpret_cast<const float4*>(p);
    out[0] = q.x;
    out[1] = q.y;
    out[2] = q.z;
    out[3] = q.w;
  } else {
    static_assert(V == 8, "f16: 8 channels a load");
    const uint4 q = *reinterpret_cast<const uint4*>(p);
    const uint32_t words[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&words[j]));
      out[2 * j] = f.x;
      out[2 * j + 1] = f.y;
    }
  }
}

// y = alpha * reduce_op(x) + beta * y with cudnnReduceTensor's shape rule (every dim where y is 1
// and x is not is reduced; the others match). Any strides. Launches on h's stream; errors name
// `routine`. Used by reduce_forward and by global pooling (a reduction over the spatial dims).
Status reduce_strided(const Handle& h, ReduceOp op, float alpha, const TensorDesc& x_desc,
                      const void* x, float beta, const TensorDesc& y_desc, void* y,
                      const char* routine);

}  // namespace cuda
}  // namespace jet
