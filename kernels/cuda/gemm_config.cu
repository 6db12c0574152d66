// Host side of the GEMM engines: whether a device runs the tensor-core core (gemm_mma.cuh), and
// the heuristics that pick a tile and split-K factor for it and for the f32 engine
// (gemm_core.cuh) when no tactic is given.
#include <algorithm>
#include <atomic>
#include <cmath>

#include "gemm_mma.cuh"

namespace jet {
namespace cuda {
namespace gemm {
namespace {

// A kernel compiled like the mma kernels; its PTX version is the __CUDA_ARCH__ the device runs.
__global__ void mma_arch_probe_kernel() {}

constexpr int kMaxDevices = 64;
std::atomic<int> g_code_arch[kMaxDevices];  // 0: not asked yet, else ptxVersion + 1

// Per tile of an engine's menu: its shape and how many blocks an SM keeps resident (registers
// and shared memory on sm_80-class SMs, from the compiler's resource report).
struct TileModel {
  int id, bm, bn, blocks_per_sm;
};
constexpr TileModel kMmaTiles[] = {
    {static_cast<int>(MmaTileId::T128x128), 128, 128, 2},
    {static_cast<int>(MmaTileId::T128x64), 128, 64, 3},
    {static_cast<int>(MmaTileId::T64x128), 64, 128, 3},
    {static_cast<int>(MmaTileId::T64x64), 64, 64, 4},
    {static_cast<int>(MmaTileId::T64x32), 64, 32, 6},
    {static_cast<int>(MmaTileId::T32x64), 32, 64, 6},
};
static_assert(sizeof(kMmaTiles) / sizeof(kMmaTiles[0]) == kMmaTileCount, "a row per mma tile");
constexpr TileModel kF32Tiles[] = {
    {static_cast<int>(F32TileId::T128x128), 128, 128, 2},
    {static_cast<int>(F32TileId::T128x64), 128, 64, 4},
    {static_cast<int>(F32TileId::T64x64), 64, 64, 8},
};
static_assert(sizeof(kF32Tiles) / sizeof(kF32Tiles[0]) == kF32TileCount, "a row per f32 tile");

// Estimated time, in cycles of one SM, of each configuration; the smallest wins:
//  - each SM runs ceil(blocks / SMs) blocks, up to blocks_per_sm of them at once;
//  - a depth step (32) of a block costs at least kStepLatency cycles (copy wait, barrier and the
//    dependent math) and otherwise its share of the SM's rate for this engine;
//  - split-K adds writing and re-reading the partial sums and a second launch.
// The constants are first estimates for sm_80/sm_90 class SMs; tuning measures instead.
template <size_t NT>
GemmConfig choose(const Handle& h, const TileModel (&tiles)[NT], double flops_per_cycle,
                  int64_t M, int64_t N, int64_t K, int64_t nz, bool allow_split) {
  constexpr double kStepLatency = 220.0;  // cycles per depth step of one block, at best
  constexpr double kBytesPerCycle = 16;   // DRAM bytes per SM cycle (about 2.5 TB/s / 132)
  constexpr double kLaunchCycles = 3000;  // a second kernel in the stream
  const double sms = h.sm_count() > 0 ? h.sm_count() : 16;
  GemmConfig best;
  double best_cost = 1e300;
  for (const TileModel& tm : tiles) {
    const double blocks_mn =
        static_cast<double>((M + tm.bm - 1) / tm.bm) * ((N + tm.bn - 1) / tm.bn) * nz;
    for (int si = 0; si < (allow_split ? kSplitChoiceCount : 1); ++si) {
      const int splits = kSplitChoices[si];
      if (effective_splits(K, splits) != splits) continue;
      const double steps = split_depth(K, splits) / 32.0;
      const double per_sm = std::ceil(blocks_mn * splits / sms);
      const double together = per_sm < tm.blocks_per_sm ? per_sm : tm.blocks_per_sm;
      const double step_flops = 2.0 * tm.bm * tm.bn * 32 * together;
      const double step = std::max(kStepLatency, step_flops / flops_per_cycle);
      double cost = std::ceil(per_sm / together) * steps * step;
      if (splits > 1)
        cost += kLaunchCycles + 2.0 * splits * M * N * nz * 4 / (kBytesPerCycle * sms);
      if (cost < best_cost * 0.999) {  // ties keep the earlier (larger) tile and fewer splits
        best_cost = cost;
        best.tile = tm.id;
        best.splits = splits;
      }
    }
  }
  return best;
}

}  // namespace

bool mma_available(const Handle& h) {
  if (h.compute_capability() < 80) return false;
  const int dev = h.device();
  if (dev < 0 || dev >= kMaxDevices) return false;
  int v = g_code_arch[dev].load(std::memory_order_relaxed);
  if (v == 0) {
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(dev);
    cudaFuncAttributes attr;
    const cudaError_t e = cudaFuncGetAttributes(&attr, mma_arch_probe_kernel);
    cudaSetDevice(previous);
    if (e != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    v = attr.ptxVersion + 1;
    g_code_arch[dev].store(v, std::memory_order_relaxed);
  }
  return v - 1 >= 80;
}

GemmConfig choose_mma_config(const Handle& h, int64_t M, int64_t N, int64_t K, int64_t nz,
                             bool allow_split) {
  return choose(h, kMmaTiles, 1024.0, M, N, K, nz, allow_split);  // f16 mma.sync flops per cycle
}

GemmConfig choose_f32_config(const Handle& h, int64_t M, int64_t N, int64_t K, int64_t nz,
                             bool allow_split) {
  return choose(h, kF32Tiles, 256.0, M, N, K, nz, allow_split);  // 128 FMA lanes per SM
}

}  // namespace gemm
}  // namespace cuda
}  // namespace jet
