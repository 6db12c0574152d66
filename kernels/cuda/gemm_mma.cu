// Host side of the tensor-core GEMM core (gemm_mma.cuh): whether a device runs it, and the
// heuristic that picks a tile and split-K factor when no tactic is given.
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

// Per tile: resident blocks per SM (registers and shared memory on sm_80-class SMs, estimated
// from the compiler's resource report) and warps per block.
struct TileModel {
  MmaTileId id;
  int blocks_per_sm;
};
constexpr TileModel kTiles[] = {
    {MmaTileId::T128x128, 2}, {MmaTileId::T128x64, 3}, {MmaTileId::T64x128, 3},
    {MmaTileId::T64x64, 4},   {MmaTileId::T64x32, 6},  {MmaTileId::T32x64, 6},
};
static_assert(sizeof(kTiles) / sizeof(kTiles[0]) == kMmaTileCount, "a model row per tile");

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

// Estimated time, in cycles of one SM, of a configuration:
//  - each SM runs ceil(blocks / SMs) blocks, up to blocks_per_sm of them at once;
//  - a depth step of a block costs at least kStepLatency cycles (copy wait, barrier, ldmatrix
//    and the mma chain) and otherwise its share of the SM's tensor-core rate;
//  - split-K adds writing and re-reading the partial sums and a second launch.
// The constants are first estimates for sm_80/sm_90 class SMs; `jet-tune` measures instead.
MmaConfig choose_mma_config(const Handle& h, int64_t M, int64_t N, int64_t K, int64_t nz,
                            bool allow_split) {
  constexpr double kStepLatency = 220.0;      // cycles per depth step of one block, at best
  constexpr double kMmaFlopsPerCycle = 1024;  // f16 mma.sync flops per SM cycle (dense)
  constexpr double kBytesPerCycle = 16;       // DRAM bytes per SM cycle (about 2.5 TB/s / 132)
  constexpr double kLaunchCycles = 3000;      // a second kernel in the stream
  const double sms = h.sm_count() > 0 ? h.sm_count() : 16;
  MmaConfig best;
  double best_cost = 1e300;
  for (const TileModel& tm : kTiles) {
    const MmaTileDims d = mma_tile_dims(tm.id);
    const double tiles = static_cast<double>((M + d.bm - 1) / d.bm) * ((N + d.bn - 1) / d.bn) * nz;
    for (int si = 0; si < (allow_split ? kSplitChoiceCount : 1); ++si) {
      const int splits = kSplitChoices[si];
      if (mma_effective_splits(K, splits) != splits) continue;
      const double steps = mma_k_per_split(K, splits) / 32.0;
      const double blocks = tiles * splits;
      const double per_sm = std::ceil(blocks / sms);
      const double together = per_sm < tm.blocks_per_sm ? per_sm : tm.blocks_per_sm;
      const double step_flops = 2.0 * d.bm * d.bn * 32 * together;
      const double step = std::max(kStepLatency, step_flops / kMmaFlopsPerCycle);
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

}  // namespace gemm
}  // namespace cuda
}  // namespace jet
