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

#if defined(JET_CUDA_SM90A)
// Which image of this module a device runs: the sm_90a one (wgmma) holds this kernel with 4 KB
// of static shared memory, every other image with none, and cudaFuncGetAttributes reports the
// size of the image the device loads. No launch, no allocation.
__global__ void hopper_probe_kernel() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ volatile int marker[1024];
  marker[threadIdx.x & 1023] = 0;
#endif
}
std::atomic<int> g_hopper[kMaxDevices];  // 0: not asked yet, 1: no, 2: yes
#endif

// The cost model of an engine, fitted to measurements by bench/calibration/fit_heuristic.py
// (its input, bench/calibration/*.csv: every tactic of every ResNet-50 layer at N = 1 and 32 and
// of MobileNetV2's stem and pointwise layers at N = 1, bench/conv --tactics --csv, on an H200:
// 132 SMs). Refitted 2026-11-27 (second session) for the menu with the 4-warp 128x64 / 64x128
// tiles and the warps term; per-problem pick / best, old constants -> these: f16 batch 1
// 1.018 -> 1.013, batch 32 1.093 -> 1.026; f32 (several starting points, the best kept) batch 1
// 1.063 -> 1.065, batch 32 1.125 -> 1.051. Per tile of the menu: its shape, the blocks an SM
// keeps resident (registers and shared memory, from the compiler's resource report), its warps
// and the fitted rate in flops per SM cycle (a low rate keeps the model off a tile that measured
// slow). The Hopper tiles' rates were fitted with the others held (2026-11-27, fifth session, on
// that session's ResNet-50 sweeps at N = 1 and 32 with every tile, and MobileNetV2's pointwise
// layers): only T128x128H is taken (2560), batch-32 picks / best 1.165 -> 1.037 on the sweep
// (bench/NOTES.md), batch 1 unchanged; elsewhere they are skipped, so nothing changes off Hopper.
// T64x128H and T128x64H likewise (sixth session, on its sweeps with all four Hopper tiles): 3072
// and 2048, batch-32 picks / best 1.065 -> 1.032, batch 1 1.012 -> 1.016.
struct TileModel {
  int id, bm, bn, blocks_per_sm, warps;
  double rate;
  bool hopper = false;  // a Hopper tile: considered only where hopper_mma_available()
  bool sm80 = false;    // an f32 X3 tile (tensor cores): considered only where mma_available()
};
struct EngineModel {
  double step_latency;  // cycles per depth step (32) of one block, at best
  double launch;        // cycles added by split-K's reduction launch
  // An SM reaches a tile's rate with at least this many warps resident; with fewer (a small
  // grid of 4-warp blocks) the rate scales down with them. 0: no such limit in the fit.
  int full_warps;
};

constexpr TileModel kMmaTiles[] = {
    {static_cast<int>(MmaTileId::T128x128), 128, 128, 2, 8, 1536},
    {static_cast<int>(MmaTileId::T128x64), 128, 64, 2, 8, 1024},
    {static_cast<int>(MmaTileId::T64x128), 64, 128, 2, 8, 51},
    {static_cast<int>(MmaTileId::T64x64), 64, 64, 4, 4, 51},
    {static_cast<int>(MmaTileId::T64x32), 64, 32, 4, 4, 1024},
    {static_cast<int>(MmaTileId::T32x64), 32, 64, 4, 4, 51},
    {static_cast<int>(MmaTileId::T32x32), 32, 32, 4, 4, 716.8},
    {static_cast<int>(MmaTileId::T64x64K64), 64, 64, 3, 4, 51},
    {static_cast<int>(MmaTileId::T32x64K64), 32, 64, 3, 4, 1024},
    {static_cast<int>(MmaTileId::T128x64W4), 128, 64, 3, 4, 1536},
    {static_cast<int>(MmaTileId::T64x128W4), 64, 128, 3, 4, 2048},
    {static_cast<int>(MmaTileId::T128x128S), 128, 128, 2, 8, 51},
    {static_cast<int>(MmaTileId::T64x128W4S), 64, 128, 3, 4, 51},
    {static_cast<int>(MmaTileId::T128x128H), 128, 128, 2, 8, 2560, true},
    {static_cast<int>(MmaTileId::T256x128H), 256, 128, 1, 16, 51, true},
    {static_cast<int>(MmaTileId::T64x128H), 64, 128, 3, 4, 3072, true},
    {static_cast<int>(MmaTileId::T128x64H), 128, 64, 3, 8, 2048, true},
};
static_assert(sizeof(kMmaTiles) / sizeof(kMmaTiles[0]) == kMmaTileCount, "a row per mma tile");
constexpr EngineModel kMmaModel = {50, 6000, 8};

constexpr TileModel kF32Tiles[] = {
    {static_cast<int>(F32TileId::T128x128), 128, 128, 2, 8, 256},
    {static_cast<int>(F32TileId::T128x64), 128, 64, 4, 4, 256},
    {static_cast<int>(F32TileId::T64x64), 64, 64, 8, 2, 179.2},
    // The X3 tiles (3xTF32, sm_80+): rates fitted with the others held (2026-11-28, on that
    // session's H100 sweep of every f32 tactic on ResNet-50's N = 32 layers, channels-first, and
    // conv_r50_f32.csv; fit_heuristic.py --only-tiles 3,4,5 stopped at 256 / 51 / 256, a grid search
    // of the three found these): N = 32 picks sum 15.60 -> 15.28 ms (best 14.44); no N = 1
    // problem takes them. They win only where a layer's grid leaves SMs idle (res4 / res5).
    {static_cast<int>(F32TileId::T128x128X3), 128, 128, 1, 8, 256, false, true},
    {static_cast<int>(F32TileId::T128x64X3), 128, 64, 2, 4, 12.8, false, true},
    {static_cast<int>(F32TileId::T64x64X3), 64, 64, 3, 4, 230.4, false, true},
};
static_assert(sizeof(kF32Tiles) / sizeof(kF32Tiles[0]) == kF32TileCount, "a row per f32 tile");
constexpr EngineModel kF32Model = {3200, 500, 0};

// Estimated time, in cycles of one SM, of each configuration; the smallest wins:
//  - each SM runs ceil(blocks / SMs) blocks, up to blocks_per_sm of them at once;
//  - a depth step of a block costs at least step_latency cycles and otherwise the resident
//    blocks' flops at the tile's rate (scaled down when they hold fewer than full_warps warps);
//  - split-K adds the reduction launch and writing and re-reading the partial sums.
template <size_t NT>
GemmConfig choose(const Handle& h, const TileModel (&tiles)[NT], const EngineModel& model,
                  int64_t M, int64_t N, int64_t K, int64_t nz, bool allow_split) {
  constexpr double kBytesPerCycle = 16;  // DRAM bytes per SM cycle (about 2.5 TB/s / 132)
  const double sms = h.sm_count() > 0 ? h.sm_count() : 16;
  GemmConfig best;
  double best_cost = 1e300;
  const bool hopper = hopper_mma_available(h);
  const bool sm80 = mma_available(h);
  for (const TileModel& tm : tiles) {
    if (tm.hopper && !hopper) continue;
    if (tm.sm80 && !sm80) continue;
    const double blocks_mn =
        static_cast<double>((M + tm.bm - 1) / tm.bm) * ((N + tm.bn - 1) / tm.bn) * nz;
    for (int si = 0; si < (allow_split ? kSplitChoiceCount : 1); ++si) {
      const int splits = kSplitChoices[si];
      if (effective_splits(K, splits) != splits) continue;
      const double steps = split_depth(K, splits) / 32.0;
      const double per_sm = std::ceil(blocks_mn * splits / sms);
      const double together = per_sm < tm.blocks_per_sm ? per_sm : tm.blocks_per_sm;
      const double step_flops = 2.0 * tm.bm * tm.bn * 32 * together;
      double rate = tm.rate;
      if (model.full_warps > 0)
        rate *= std::min(1.0, together * tm.warps / static_cast<double>(model.full_warps));
      const double step = std::max(model.step_latency, step_flops / rate);
      double cost = std::ceil(per_sm / together) * steps * step;
      if (splits > 1)
        cost += model.launch + 2.0 * splits * M * N * nz * 4 / (kBytesPerCycle * sms);
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

}  // namespace gemm
}  // namespace cuda

bool hopper_mma_available(const Handle& h) {
#if defined(JET_CUDA_SM90A)
  if (h.backend() != Backend::CUDA || h.compute_capability() != 90) return false;
  const int dev = h.device();
  if (dev < 0 || dev >= cuda::gemm::kMaxDevices) return false;
  int v = cuda::gemm::g_hopper[dev].load(std::memory_order_relaxed);
  if (v == 0) {
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(dev);
    cudaFuncAttributes attr;
    const cudaError_t e = cudaFuncGetAttributes(&attr, cuda::gemm::hopper_probe_kernel);
    cudaSetDevice(previous);
    if (e != cudaSuccess) cudaGetLastError();
    v = e == cudaSuccess && attr.sharedSizeBytes >= 4096 ? 2 : 1;
    cuda::gemm::g_hopper[dev].store(v, std::memory_order_relaxed);
  }
  return v == 2;
#else
  (void)h;
  return false;
#endif
}

namespace cuda {
namespace gemm {

GemmConfig choose_mma_config(const Handle& h, int64_t M, int64_t N, int64_t K, int64_t nz,
                             bool allow_split) {
  return choose(h, kMmaTiles, kMmaModel, M, N, K, nz, allow_split);
}

GemmConfig choose_f32_config(const Handle& h, int64_t M, int64_t N, int64_t K, int64_t nz,
                             bool allow_split) {
  return choose(h, kF32Tiles, kF32Model, M, N, K, nz, allow_split);
}

}  // namespace gemm
}  // namespace cuda
}  // namespace jet
