// What the training add-on's CUDA kernels share: strided index decomposition over up to three
// tensors and a deterministic block-wide sum. Straightforward by design (issue 15's first
// session: correct and deterministic before fast); CUDA 11.4-era features only.
#pragma once

#include <cstdint>

#include "../../cuda/cuda_common.cuh"
#include "../../cuda/reduction.cuh"
#include "../backend.h"

namespace jet {
namespace cuda {

constexpr int kTrainThreads = 256;

// Up to kMaxRank dims with the strides of up to three tensors; offsets() maps a row-major
// logical index to each tensor's element offset.
struct Walk3 {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t s[3][kMaxRank] = {};
  int64_t count = 1;

  // Adds the next inner dim of the tensors (strides 0 for an absent one). A dim of size 1 adds
  // nothing; a dim that continues the previous one in all three tensors (the previous stride is
  // this one's times its size: NCHW's H and W, say) is merged into it, so offsets() divides once
  // less an element. Neither changes the offsets of any logical index.
  void add(int64_t dim, int64_t s0, int64_t s1 = 0, int64_t s2 = 0) {
    count *= dim;
    if (dim == 1) return;
    if (rank > 0 && s[0][rank - 1] == dim * s0 && s[1][rank - 1] == dim * s1 && s[2][rank - 1] == dim * s2) {
      dims[rank - 1] *= dim;
      s[0][rank - 1] = s0;
      s[1][rank - 1] = s1;
      s[2][rank - 1] = s2;
      return;
    }
    dims[rank] = dim;
    s[0][rank] = s0;
    s[1][rank] = s1;
    s[2][rank] = s2;
    ++rank;
  }

  __device__ __forceinline__ void offsets(int64_t i, int64_t* o) const {
    // 64-bit division is a long software sequence on the GPU (tens of instructions per dim, per
    // element, in every training kernel's inner loop); the index and the dims fit 32 bits
    // whenever the walk has fewer than 2^31 elements, which is the common case.
    if (count <= INT32_MAX)
      offsets_as<uint32_t>(static_cast<uint32_t>(i), o);
    else
      offsets_as<int64_t>(i, o);
  }

  template <class I>
  __device__ __forceinline__ void offsets_as(I i, int64_t* o) const {
    o[0] = o[1] = o[2] = 0;
    // Unrolled with constant indices: a kernel parameter array indexed dynamically would be
    // copied to local memory by every thread.
#pragma unroll
    for (int j = kMaxRank - 1; j >= 0; --j) {
      if (j >= rank) continue;
      const I d = static_cast<I>(dims[j]);
      const I q = i / d;
      const int64_t r = static_cast<int64_t>(i - q * d);
      o[0] += r * s[0][j];
      o[1] += r * s[1][j];
      o[2] += r * s[2][j];
      i = q;
    }
  }
};

// Blocks per channel for the per-channel reductions (batch norm's statistics and sums, the bias
// gradient) when the caller gives a workspace: enough blocks of kTrainThreads threads to fill
// every SM (8 each: 2048 threads), each at least 16 elements per thread; 1 (one block per
// channel, no workspace) when the channels alone come within a factor 2 of that.
inline int64_t chunks_per_channel(const Handle& h, int64_t channels, int64_t count) {
  const int64_t sms = h.sm_count() > 0 ? h.sm_count() : 16;
  const int64_t target = 8 * sms;
  if (channels * 2 >= target) return 1;
  int64_t p = (target + channels - 1) / channels;
  const int64_t most = count / (static_cast<int64_t>(kTrainThreads) * 16);
  if (most < p) p = most;
  return p < 2 ? 1 : p;
}

// The sum of every thread's `v` over a block of kTrainThreads threads, returned to all of them,
// by a fixed pairwise tree in shared memory: the same inputs give the same bits on every run.
// Every thread of the block must call it (it synchronizes); `smem` holds kTrainThreads floats.
__device__ __forceinline__ float block_sum(float v, float* smem) {
  smem[threadIdx.x] = v;
  __syncthreads();
#pragma unroll
  for (int width = kTrainThreads / 2; width > 0; width /= 2) {
    if (static_cast<int>(threadIdx.x) < width) smem[threadIdx.x] += smem[threadIdx.x + width];
    __syncthreads();
  }
  const float r = smem[0];
  __syncthreads();  // smem may be reused right after
  return r;
}

}  // namespace cuda
}  // namespace jet
