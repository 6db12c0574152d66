// Shared machinery of the CUDA elementwise and broadcast routines (transform, add_tensor,
// op_tensor, prelu, batchnorm, pad).
//
// An elementwise routine is a loop over the output's logical index space with K tensors
// (tensor 0 is the output; inputs broadcast with stride 0 on their size-1 dims). The host
// simplifies that loop once per call (EwLoop): size-1 dims are dropped, the dims are ordered by
// the output's stride (largest first, so consecutive threads write consecutive addresses) and
// neighbours that are contiguous in every tensor are merged. Dense same-layout tensors become one
// flat dim; a per-channel bias over NCHW becomes (N, C, HW) with bias strides (0, 1, 0).
//
// The kernels then run one of two loops:
//  - vector: each thread handles V consecutive elements of the innermost dim (V * element size
//    = 16 bytes), decomposing the index once per vector. Every tensor's V elements are then
//    base + k * inner_stride: a 16-byte vector access when the inner stride is 1 and the address
//    is aligned, a single broadcast load when it is 0, strided scalar accesses otherwise. Needs
//    the innermost dim to be a multiple of V (or a flat loop, where a scalar tail finishes).
//  - scalar: one element per thread and iteration, for everything else.
// Index decomposition uses FastDiv: a multiply-high and a shift instead of a 64-bit division
// whenever the numbers fit in 31 bits (always, for tensors below 2^31 elements).
#pragma once

#include <cstdint>

#include "../common/fast_div.h"
#include "cuda_common.cuh"

namespace jet {
namespace cuda {

// The simplified loop nest of K tensors (tensor 0 = output). See the file comment.
template <int K>
struct EwLoop {
  int rank = 0;
  int64_t n = 0;                          // elements
  int64_t dims[kMaxRank] = {};            // outermost first
  FastDiv div[kMaxRank];                  // dividers for dims[]
  int64_t strides[K][kMaxRank] = {};      // per tensor, 0 where it broadcasts
  bool vec[K] = {};                       // tensor k may use aligned vector accesses (vector loop)

  int64_t inner_dim() const { return dims[rank - 1]; }
  __device__ __forceinline__ int64_t inner_stride(int k) const { return strides[k][rank - 1]; }

  // Element offsets of every tensor for logical index i (in the simplified dim order).
  __device__ __forceinline__ void offsets(int64_t i, int64_t* off) const {
    for (int k = 0; k < K; ++k) off[k] = 0;
    for (int d = rank - 1; d > 0; --d) {
      const int64_t q = div[d].div(i);
      const int64_t r = i - q * dims[d];
      for (int k = 0; k < K; ++k) off[k] += r * strides[k][d];
      i = q;
    }
    for (int k = 0; k < K; ++k) off[k] += i * strides[k][0];
  }
};

// Builds the loop for tensors descs[0..K-1] over descs[0]'s dims; inputs have descs[0]'s rank
// and each dim either equal to it or 1 (broadcast). ptrs (may hold nullptr for tensors that are
// not accessed in memory, like batchnorm's parameter index) and the vector width v decide vec[].
template <int K>
EwLoop<K> make_ew_loop(const TensorDesc* const* descs, const void* const* ptrs, int v) {
  EwLoop<K> l;
  const TensorDesc& out = *descs[0];
  l.n = out.elements();
  for (int i = 0; i < out.rank(); ++i) {
    if (out.dim(i) == 1) continue;
    l.dims[l.rank] = out.dim(i);
    for (int k = 0; k < K; ++k)
      l.strides[k][l.rank] = descs[k]->dim(i) == 1 ? 0 : descs[k]->stride(i);
    ++l.rank;
  }
  // Stable insertion sort by the output's stride, largest first: coalesced writes.
  for (int j = 1; j < l.rank; ++j) {
    int64_t d = l.dims[j], s[K];
    for (int k = 0; k < K; ++k) s[k] = l.strides[k][j];
    int p = j;
    for (; p > 0 && l.strides[0][p - 1] < s[0]; --p) {
      l.dims[p] = l.dims[p - 1];
      for (int k = 0; k < K; ++k) l.strides[k][p] = l.strides[k][p - 1];
    }
    l.dims[p] = d;
    for (int k = 0; k < K; ++k) l.strides[k][p] = s[k];
  }
  // Merge dim j into the previous one when stepping the previous dim once equals stepping j
  // across its extent, in every tensor (0 == 0 * d holds for broadcasts on both).
  int out_rank = 0;
  for (int j = 0; j < l.rank; ++j) {
    if (out_rank > 0) {
      const int p = out_rank - 1;
      bool mergeable = true;
      for (int k = 0; k < K; ++k)
        mergeable = mergeable && l.strides[k][p] == l.strides[k][j] * l.dims[j];
      if (mergeable) {
        l.dims[p] *= l.dims[j];
        for (int k = 0; k < K; ++k) l.strides[k][p] = l.strides[k][j];
        continue;
      }
    }
    l.dims[out_rank] = l.dims[j];
    for (int k = 0; k < K; ++k) l.strides[k][out_rank] = l.strides[k][j];
    ++out_rank;
  }
  l.rank = out_rank;
  if (l.rank == 0) {  // a single element
    l.rank = 1;
    l.dims[0] = 1;
    for (int k = 0; k < K; ++k) l.strides[k][0] = 0;
  }
  for (int d = 0; d < l.rank; ++d) l.div[d] = FastDiv::make(l.dims[d]);
  // Vector accesses: unit inner stride, every outer stride a multiple of v (so each vector
  // starts at a multiple of v elements) and a 16-byte aligned base.
  for (int k = 0; k < K; ++k) {
    bool ok = l.strides[k][l.rank - 1] == 1 && ptrs[k] != nullptr &&
              reinterpret_cast<uintptr_t>(ptrs[k]) % 16 == 0;
    for (int d = 0; d + 1 < l.rank; ++d) ok = ok && l.strides[k][d] % v == 0;
    l.vec[k] = ok;
  }
  return l;
}

// Whether the vector loop applies: the innermost dim splits into whole vectors, or the loop is
// flat (rank 1) and a scalar tail finishes the last n % v elements.
template <int K>
bool ew_vector_ok(const EwLoop<K>& l, int v) {
  return l.rank == 1 || l.inner_dim() % v == 0;
}

// ---- V-element loads and stores (f32 math). `vec` selects one aligned vector access; otherwise
// element k is at p[off + k * s] (s == 0: a broadcast).

__device__ __forceinline__ void load_vec_aligned(const float* p, float* o, int v) {
  for (int c = 0; c < v; c += 4) {
    const float4 t = *reinterpret_cast<const float4*>(p + c);
    o[c] = t.x;
    o[c + 1] = t.y;
    o[c + 2] = t.z;
    o[c + 3] = t.w;
  }
}
__device__ __forceinline__ void load_vec_aligned(const __half* p, float* o, int v) {
  for (int c = 0; c < v; c += 8) {
    if (v - c >= 8) {
      const uint4 t = *reinterpret_cast<const uint4*>(p + c);
      const __half2* h = reinterpret_cast<const __half2*>(&t);
      for (int j = 0; j < 4; ++j) {
        const float2 f = __half22float2(h[j]);
        o[c + 2 * j] = f.x;
        o[c + 2 * j + 1] = f.y;
      }
    } else {  // v == 4
      const uint2 t = *reinterpret_cast<const uint2*>(p + c);
      const __half2* h = reinterpret_cast<const __half2*>(&t);
      for (int j = 0; j < 2; ++j) {
        const float2 f = __half22float2(h[j]);
        o[c + 2 * j] = f.x;
        o[c + 2 * j + 1] = f.y;
      }
    }
  }
}
__device__ __forceinline__ void store_vec_aligned(float* p, const float* o, int v) {
  for (int c = 0; c < v; c += 4)
    *reinterpret_cast<float4*>(p + c) = make_float4(o[c], o[c + 1], o[c + 2], o[c + 3]);
}
__device__ __forceinline__ void store_vec_aligned(__half* p, const float* o, int v) {
  for (int c = 0; c < v; c += 8) {
    if (v - c >= 8) {
      uint4 t;
      __half2* h = reinterpret_cast<__half2*>(&t);
      for (int j = 0; j < 4; ++j) h[j] = __floats2half2_rn(o[c + 2 * j], o[c + 2 * j + 1]);
      *reinterpret_cast<uint4*>(p + c) = t;
    } else {
      uint2 t;
      __half2* h = reinterpret_cast<__half2*>(&t);
      for (int j = 0; j < 2; ++j) h[j] = __floats2half2_rn(o[c + 2 * j], o[c + 2 * j + 1]);
      *reinterpret_cast<uint2*>(p + c) = t;
    }
  }
}

template <int V, class T>
__device__ __forceinline__ void load_v(const T* p, int64_t off, int64_t s, bool vec, float* o) {
  if constexpr (V > 1) {
    if (vec) {
      load_vec_aligned(p + off, o, V);
      return;
    }
  }
  if (s == 0) {
    const float b = to_f32(p[off]);
    for (int k = 0; k < V; ++k) o[k] = b;
  } else {
    for (int k = 0; k < V; ++k) o[k] = to_f32(p[off + k * s]);
  }
}

// y = alpha * r + beta * y over V elements, not reading y when beta == 0.
template <int V, class T>
__device__ __forceinline__ void blend_store_v(T* p, int64_t off, int64_t s, bool vec, float alpha,
                                              float* r, float beta) {
  if constexpr (V > 1) {
    if (vec) {
      if (beta != 0.f) {
        float old[V];
        load_vec_aligned(p + off, old, V);
        for (int k = 0; k < V; ++k) r[k] = alpha * r[k] + beta * old[k];
      } else {
        for (int k = 0; k < V; ++k) r[k] = alpha * r[k];
      }
      store_vec_aligned(p + off, r, V);
      return;
    }
  }
  for (int k = 0; k < V; ++k) blend_store(p + off + k * s, alpha, r[k], beta);
}

// The generic elementwise kernel. Op provides
//   __device__ void setup();  // once per thread before the loop (may fill shared memory)
//   template <int V> __device__ void apply(const EwLoop<K>& l, const int64_t* off);
// apply<V> handles V consecutive elements of the innermost dim starting at offsets off[];
// the vector loop calls apply<V>, the scalar loop and the tail call apply<1>.
template <int K, int V, class Op>
__global__ void ew_kernel(Op op, EwLoop<K> l) {
  op.setup();
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  int64_t off[K];
  if constexpr (V > 1) {
    const int64_t nv = l.n / V;
    for (int64_t i = first; i < nv; i += step) {
      l.offsets(i * V, off);
      op.template apply<V>(l, off);
    }
    // Flat loops only: the n % V leftover elements.
    for (int64_t i = nv * V + first; i < l.n; i += step) {
      l.offsets(i, off);
      op.template apply<1>(l, off);
    }
  } else {
    for (int64_t i = first; i < l.n; i += step) {
      l.offsets(i, off);
      op.template apply<1>(l, off);
    }
  }
}

// Launches ew_kernel<K, V or 1, Op> on the handle's stream; smem: dynamic shared memory bytes.
template <int K, int V, class Op>
Status launch_ew(const Handle& h, const Op& op, const EwLoop<K>& l, const char* routine,
                 size_t smem = 0, int max_blocks_per_sm = 32) {
  const int threads = 256;
  const bool vector = ew_vector_ok(l, V);
  const int64_t work = vector ? (l.n + V - 1) / V : l.n;
  const int sms = h.sm_count() > 0 ? h.sm_count() : 16;
  int grid = grid_for(work, threads, sms);
  if (grid > sms * max_blocks_per_sm) grid = sms * max_blocks_per_sm;
  if (vector)
    ew_kernel<K, V, Op><<<grid, threads, smem, h.stream()>>>(op, l);
  else
    ew_kernel<K, 1, Op><<<grid, threads, smem, h.stream()>>>(op, l);
  return launch_status(routine);
}

// 16 bytes of the narrower type: 4 for f32 only, 8 when f16 is involved.
template <class A, class B>
constexpr int vec_width() {
  return (sizeof(A) == 2 || sizeof(B) == 2) ? 8 : 4;
}

}  // namespace cuda
}  // namespace jet
