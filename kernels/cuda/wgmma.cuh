// Hopper's warpgroup MMA (wgmma.mma_async, sm_90a only): the instructions cuDNN's fastest f16
// kernels use on the H100 / H200 (bench/NOTES.md: at batch 32 its winners are sm90 wgmma kernels).
// gemm_mma.cuh's Hopper tiles (MmaTile::WGMMA) read their operand stages through these instead
// of ldmatrix + mma.sync. A warpgroup (4 consecutive warps, the first a multiple of 4) issues
// one m64nNk16 (N = 128, or 64 for the tiles of 64 output channels; a 256-wide tile measured
// no faster): a 64-row A slice and an N-row B slice, both in shared memory, 16 deep, summed into
// the warpgroup's 64 x N accumulators, asynchronously: the threads go on (issuing the next
// tiles' copies) until wgmma_wait.
//
// Only compiled where __CUDA_ARCH_FEAT_SM90_ALL is defined: an sm_90a pass
// (CMAKE_CUDA_ARCHITECTURES lists 90a). Orin, Thor and Xavier never run it; the host side checks
// hopper_mma_available() before launching a kernel that uses it.
#pragma once

#include <cstdint>

namespace jet {
namespace cuda {
namespace gemm {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// A shared-memory matrix descriptor for an operand stored as gemm_mma.cuh's 64-deep stages: rows
// of 128 bytes (64 halves of depth), 16-byte chunk c of row r at c ^ (r & 7), which is the
// hardware's 128-byte swizzle when the stage starts on a 1024-byte boundary (8 rows: one swizzle
// atom). Fields: start address / 16 (bits 0-13); leading offset / 16 (bits 16-29, unused by
// swizzled K-major operands: 1); stride offset / 16 (bits 32-45: 1024 bytes from one 8-row group
// to the next); layout (bits 62-63: 1 = 128-byte swizzle). A 16-deep slice ks of the stage starts
// ks * 32 bytes further: the hardware applies the swizzle to the address it forms.
__device__ __forceinline__ uint64_t wgmma_desc(uint32_t smem_addr) {
  return static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) |
         (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 62);
}
// Orders this thread's earlier accumulator and shared-memory accesses before the wgmma that
// follow (required before the first wgmma of a batch).
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Waits until at most N of this warpgroup's committed batches are still running.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// cp.async writes shared memory through the generic proxy and wgmma reads it through the async
// proxy: each copying thread fences between the two (before the barrier that publishes a stage).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// m64nNk16, f16 operands, f32 accumulators (D += A * B), both operands K-major in shared memory.
// A thread's N / 2 accumulators are mma.sync's m16n8 C fragments of its warp's 16 rows, one per 8
// columns: d[j] = {(g, 8j + 2t), (g, 8j + 2t + 1), (g + 8, 8j + 2t), (g + 8, 8j + 2t + 1)} with
// g = lane / 4, t = lane % 4, rows counted from 16 * (warp % 4).
template <int N>
struct Wgmma;

template <>
struct Wgmma<128> {
  // d: the warp's 16 accumulator fragments of 4 floats (mma.sync's m16n8 layout).
  __device__ __forceinline__ static void mma(float (&d)[16][4], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]),
          "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),
          "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),
          "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),
          "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),
          "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),
          "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]),
          "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]),
          "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]),
          "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]),
          "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]),
          "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]),
          "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]),
          "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]),
          "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]),
          "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3])
        : "l"(a), "l"(b), "r"(1));
  }
};

template <>
struct Wgmma<64> {
  // d: the warp's 8 accumulator fragments of 4 floats (mma.sync's m16n8 layout).
  __device__ __forceinline__ static void mma(float (&d)[8][4], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
        "}, %32, %33, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]),
          "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),
          "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),
          "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),
          "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),
          "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),
          "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]),
          "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])
        : "l"(a), "l"(b), "r"(1));
  }
};

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace gemm
}  // namespace cuda
}  // namespace jet
