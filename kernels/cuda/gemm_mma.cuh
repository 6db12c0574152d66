// The tensor-core GEMM core for sm_80 and newer (Orin sm_87, the H100, Thor): f16 operands, f32
// accumulation with mma.sync m16n8k16, fed by a cp.async pipeline of STAGES shared-memory
// stages and ldmatrix. Part of the engine in gemm_core.cuh, which keeps the register-staged
// kernel for operands that cannot be copied 16 bytes at a time and for sm_72.
//
// A block owns a BM x BN tile of C and walks its share of the depth in steps of BK (32 or 64).
// While tile k is multiplied, the copies of tiles k+1 .. k+STAGES-1 are in flight. Each thread
// copies the same 8-element depth chunk of a few rows every step, so an operand needs no shared
// tables:
// it keeps a *cursor* for that chunk (the depth index, or for a convolution the channel and tap
// it is at) and advances it by BK.
//
// Async operand concept (in addition to gemm_core.cuh's loaders; f16 storage):
//   struct Row;   Row row(int r) const;       // as in gemm_core.cuh
//   struct Cursor; Cursor cursor(int k) const; // chunk at depth k (k % 8 == 0)
//   void advance(Cursor&, int step) const;     // k += step (step % 8 == 0)
//   const __half* chunk(const Row&, const Cursor&, int* bytes) const;
//       // the chunk's first element and how many of its 16 bytes exist (0: all zero, e.g. the
//       // padding of a convolution or rows past the end; 2..14: the matrix's depth ends inside
//       // it); the copy zero-fills the rest. Or, for the A operand, instead of chunk():
//   void copy16(uint32_t dst, const Row&, const Cursor&) const;  // issues the chunk's copies
// A loader may also define template <int CHUNKS> struct AsyncIter (see RowCursorIter): a
// thread's copy state for a tile, in fewer instructions per step than the general concept.
//
// Split-K follows gemm_core.cuh's protocol (PartialEpi, reduce_splits_kernel, launch_split).
//
// The epilogue: the accumulators pass through shared memory (the operand stages, no longer
// needed) so that a thread finishes 8 consecutive columns of a row: epilogues with store8 write
// them with one 16-byte store.
#pragma once

#include <algorithm>
#include <atomic>

#include "gemm_core.cuh"
#include "wgmma.cuh"

namespace jet {
namespace cuda {
namespace gemm {

template <int BM_, int BN_, int WM_, int WN_, int STAGES_, int MIN_BLOCKS_ = 1,
          bool PIPELINED_ = true, int BK_ = 32, bool STREAM_ = false, bool WGMMA_ = false>
struct MmaTile {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = STAGES_;
  static constexpr int THREADS = WM * WN * 32;
  static constexpr int MIN_BLOCKS = MIN_BLOCKS_;  // __launch_bounds__: blocks per SM to fit
  // Fragments double-buffered by slice (the main loop's comment); costs MI * 4 + NI * 2
  // registers, which the 8-warp 128x128 tile at two blocks an SM (128 registers) cannot spare.
  // Off on 64x32 too: it measured 5% slower pipelined on the H100 (bench/NOTES.md).
  static constexpr bool PIPELINED = PIPELINED_;
  static constexpr int SMEM_BYTES = STAGES * (BM + BN) * BK * 2;
  static_assert(BK == 32 || BK == 64, "depth tile: 32 or 64 (the swizzle's two forms)");
  // Streaming: a block takes several row tiles of C (blockIdx.x, + gridDim.x, ...; the launch
  // sizes the grid to the resident blocks) and its pipeline runs on across them, so the next
  // tile's copies are in flight during this one's epilogue, which stages through shared memory
  // of its own (EPI_BYTES after the row records). For operands whose rows are cheap to make
  // (loaders without kShareRows: a 1x1 convolution's or a GEMM's rows); the others run the
  // tile one row tile per block as without it.
  static constexpr bool STREAM = STREAM_;
  static constexpr int EPI_BYTES = STREAM ? WM * 16 * (BN + 8) * 4 : 0;
  // Hopper tiles (sm_90a, hopper_mma_available): each warpgroup multiplies its 64 rows of the
  // stage by all BN columns with wgmma (wgmma.cuh) instead of ldmatrix + mma.sync; the copies,
  // stages, split-K and epilogue are the same code. The warps are laid out as WM = BM / 16 along
  // M (WN = 1), so a warp's accumulators are the m16n8 fragments of 16 rows by BN columns, as an
  // mma.sync warp tile of 16 x BN would hold them. PIPELINED here: a warpgroup leaves one depth
  // step's wgmma running while it waits for the next tile's copies (the copies then run
  // STAGES - 2 tiles ahead instead of STAGES - 1).
  static constexpr bool WGMMA = WGMMA_;
  static_assert(!WGMMA || (BK == 64 && WN == 1 && WM * 16 == BM && BM % 64 == 0 && !STREAM &&
                           (BN == 128 || BN == 64) && (!PIPELINED || STAGES >= 3)),
                "Hopper tile: 64 deep (the 128-byte swizzle), warps along M, m64n128 or m64n64");
  // The kernel's shared memory is this plus the epilogue's row records and EPI_BYTES
  // (mma_smem_bytes); above the 48 KB a block gets by default, launch_mma raises the limit.
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
__device__ __forceinline__ void ldmatrix_x4_at(uint32_t* r, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
#endif

// A tile row is BK halves: BK / 8 16-byte chunks. The 8 rows one ldmatrix phase reads (same
// logical chunk) must fall in 8 distinct 16-byte bank groups, and so must a warp's copies:
//  - BK = 32 (64-byte rows, two to a 128-byte line): chunk c of row r at c ^ ((r >> 1) & 3);
//  - BK = 64 (128-byte rows): chunk c of row r at c ^ (r & 7).
// Either way rows 8 apart swizzle alike, and logical chunk c ^ 2s is physical chunk (c's) ^ 2s:
// slice s of a stage is the byte offset of slice 0 XOR s * 32. Offset in halves.
template <int BK>
__device__ __forceinline__ int swizzle(int r, int c) {
  if constexpr (BK == 32) return r * 32 + ((c ^ ((r >> 1) & 3)) << 3);
  return r * 64 + ((c ^ (r & 7)) << 3);
}

// An async operand whose 16-byte chunk is not one contiguous piece of memory provides
// copy16(dst, row, cursor) instead of chunk(): it issues the chunk's copies (cp_async8 /
// cp_async16) into shared address dst itself.
template <class L, class = void>
struct HasCopy16 : std::false_type {};
template <class L>
struct HasCopy16<L, decltype(std::declval<const L&>().copy16(
                        0u, std::declval<const typename L::Row&>(),
                        std::declval<const typename L::Cursor&>()))> : std::true_type {};

// A thread's copies of one operand for a tile: CHUNKS chunks, of rows row0 + e * row_step, at
// depth k, moved BK deeper each step. The main loop issues these between its mma, so every
// instruction here counts (bench/NOTES.md: 8-10 instructions per mma before): loaders may define
// their own AsyncIter<CHUNKS> with this interface; RowCursorIter serves the others through the
// Row / Cursor / chunk() or copy16() concept.
template <class L, int CHUNKS>
struct RowCursorIter {
  typename L::Row rows[CHUNKS];
  typename L::Cursor cur;
  __device__ __forceinline__ RowCursorIter(const L& l, int row0, int row_step, int k)
      : cur(l.cursor(k)) {
#pragma unroll
    for (int e = 0; e < CHUNKS; ++e) rows[e] = l.row(row0 + e * row_step);
  }
  // From the block's row records in shared memory (SharesRows): this thread's first row and the
  // step between its rows.
  __device__ __forceinline__ RowCursorIter(const L& l, const typename L::Row* shared_rows,
                                           int row_step, int k)
      : cur(l.cursor(k)) {
#pragma unroll
    for (int e = 0; e < CHUNKS; ++e) rows[e] = shared_rows[e * row_step];
  }
  __device__ __forceinline__ void copy(const L& l, uint32_t dst, uint32_t dst_step) const {
#pragma unroll
    for (int e = 0; e < CHUNKS; ++e) {
      if constexpr (HasCopy16<L>::value) {
        l.copy16(dst + e * dst_step, rows[e], cur);
      } else {
        int bytes;
        const typename L::Elem* src = l.chunk(rows[e], cur, &bytes);
        cp_async16(dst + e * dst_step, src, bytes);
      }
    }
  }
  __device__ __forceinline__ void advance(const L& l, int step) { l.advance(cur, step); }
};

// RowsLoader (f16, depth stride 1 as its chunk() assumes, and depth % 8 == 0: every caller of
// run_gemm_mma checks it, so a chunk is all inside the depth or all past it and the copy is
// predicated, never sized): a pointer per chunk moved by the step, one count of the depth left
// for all of them. Rows past the end copy the last row instead of zeros: they only feed rows (A)
// or columns (B) of C that are never stored.
template <bool kDF, int CHUNKS>
struct RowsAsyncIter {
  using L = RowsLoader<__half, kDF>;
  const __half* src[CHUNKS];
  int left;  // depth elements from this thread's chunk to the end (a multiple of 8)
  __device__ __forceinline__ RowsAsyncIter(const L& l, int row0, int row_step, int k)
      : left(l.depth - k) {
#pragma unroll
    for (int e = 0; e < CHUNKS; ++e)
      src[e] = l.p + static_cast<int64_t>(min(row0 + e * row_step, l.rows - 1)) * l.rs + k;
  }
  __device__ __forceinline__ void copy(const L& l, uint32_t dst, uint32_t dst_step) const {
    const bool in = left > 0;
#pragma unroll
    for (int e = 0; e < CHUNKS; ++e) cp_async16_if(dst + e * dst_step, in ? src[e] : l.p, in);
  }
  __device__ __forceinline__ void advance(const L&, int step) {
#pragma unroll
    for (int e = 0; e < CHUNKS; ++e) src[e] += step;
    left -= step;
  }
};

// Loaders whose row() is costly (a convolution's: divisions by the output extents, the taps'
// mask) set kShareRows: the kernel then makes each of the tile's row records once, into shared
// memory, and the copy iterators read theirs from there (constructor (loader, rows, row_step,
// k)), instead of every thread making its own: BK / 8 threads copy each row, and a 128x128
// block's 256 threads each made 2-4 records before their first copy (ncu: two thirds of the
// instructions of a 64-deep 1x1 layer at batch 32).
template <class L, class = void>
struct SharesRows : std::false_type {};
template <class L>
struct SharesRows<L, std::enable_if_t<L::kShareRows>> : std::true_type {};

template <class L, int CHUNKS, class = void>
struct IterOf {
  using type = RowCursorIter<L, CHUNKS>;
};
template <class L, int CHUNKS>
struct IterOf<L, CHUNKS, std::void_t<typename L::template AsyncIter<CHUNKS>>> {
  using type = typename L::template AsyncIter<CHUNKS>;
};
template <bool kDF, int CHUNKS>
struct IterOf<RowsLoader<__half, kDF>, CHUNKS, void> {
  using type = RowsAsyncIter<kDF, CHUNKS>;
};

template <class T>
struct TypeTag {
  using type = T;
};

// Epilogues may provide store8(row, col, const float v[8]) for columns col..col+7 (16-byte
// stores where their layout allows); the others get eight store() calls. `left` = N - col.
template <class E, class = void>
struct HasStore8 : std::false_type {};
template <class E>
struct HasStore8<E, decltype(std::declval<const E&>().store8(std::declval<const typename E::Row&>(),
                                                          0, static_cast<const float*>(nullptr)))>
    : std::true_type {};

template <class E>
__device__ __forceinline__ void store_row8(const E& ep, const typename E::Row& er, int col,
                                           int left, const float* v) {
  if constexpr (HasStore8<E>::value) {
    if (left >= 8) {
      ep.store8(er, col, v);
      return;
    }
  }
#pragma unroll
  for (int q = 0; q < 8; ++q)
    if (q < left) ep.store(er, col + q, v[q]);
}

// Shared memory of gemm_mma_kernel<Cfg, ..., E>: the operand stages, the epilogue's row records
// (BM of them, 16-byte aligned) and, streaming, the epilogue's staging.
template <class Cfg, class E>
__host__ __device__ constexpr int mma_erows_end() {
  return Cfg::SMEM_BYTES + static_cast<int>((Cfg::BM * sizeof(typename E::Row) + 15) / 16 * 16);
}
template <class Cfg, class E>
__host__ __device__ constexpr int mma_smem_bytes() {
  return mma_erows_end<Cfg, E>() + Cfg::EPI_BYTES;
}

template <class Cfg, class LA, class LB, class E>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
    gemm_mma_kernel(LA la, LB lb, E ep, int M, int N, int K, int nz, int splits,
                    int k_per_split) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, STAGES = Cfg::STAGES;
  constexpr int THREADS = Cfg::THREADS;
  constexpr int WTM = BM / Cfg::WM, WTN = BN / Cfg::WN;
  constexpr int MI = WTM / 16, NI = WTN / 8;
  static_assert(MI >= 1 && NI >= 2 && NI % 2 == 0, "warp tile: 16 x 16 at least");
#if !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (Cfg::WGMMA) {
    __trap();  // not an sm_90a image: the host never launches this (hopper_mma_available)
  } else
#endif
  {
  // BK / 8 chunks per row; thread t copies chunk t % CPR of rows t / CPR + e * THREADS / CPR.
  constexpr int CPR = BK / 8, RSTEP = THREADS / CPR;
  static_assert(BM % RSTEP == 0 && BN % RSTEP == 0, "tile rows not divisible among threads");
  constexpr int CA = BM / RSTEP, CB = BN / RSTEP;
  // Epilogue staging: WM * 16 rows of BN floats; +8 floats per row keeps the float2 writes of a
  // half-warp (4 rows x 4 column pairs) on distinct banks.
  constexpr int kEpiRows = Cfg::WM * 16, kEpiStride = BN + 8;
  static_assert(kEpiStride % 8 == 0, "row records must stay 16-byte aligned");
  static_assert(kEpiRows * kEpiStride * 4 <= Cfg::SMEM_BYTES, "epilogue staging does not fit");
  extern __shared__ uint4 smem_u4[];
  __half* const As = reinterpret_cast<__half*>(smem_u4);
  __half* const Bs = As + STAGES * BM * BK;
  const int tid = threadIdx.x;
  const int lane = tid & 31, warp = tid >> 5;
  const int wm = warp % Cfg::WM, wn = warp / Cfg::WM;
  const int n0 = blockIdx.y * BN;
  const int kc = tid % CPR, r_first = tid / CPR;
  // Shared-memory addresses, formed once: rows RSTEP, 16 or 8 * (even j) apart (multiples of 8)
  // swizzle alike, so they are whole rows further, and slice s of a stage is slice 0's offset
  // ^ (s * 32) (swizzle's comment). The main loop then adds constants.
  static_assert(RSTEP % 8 == 0, "address increments assume rows 8k apart swizzle alike");
  const uint32_t a_base = smem_addr(As), b_base = smem_addr(Bs);
  // This thread's copy destinations in stage 0 (chunk e: + e * RSTEP rows). The empty asm makes
  // them opaque values: ptxas otherwise re-derived them from threadIdx every step (8
  // instructions of the main loop) to spare a register.
  const uint32_t copy_off = swizzle<BK>(r_first, kc) * 2;
  uint32_t a_copy = a_base + copy_off, b_copy = b_base + copy_off;
  asm volatile("" : "+r"(a_copy), "+r"(b_copy));
  const uint32_t a_ld = swizzle<BK>(wm * WTM + (lane & 15), lane >> 4) * 2;  // within a stage
  const uint32_t b_ld =
      swizzle<BK>(wn * WTN + (lane & 7) + ((lane >> 4) << 3), (lane >> 3) & 1) * 2;

  constexpr bool kStream = Cfg::STREAM && !SharesRows<LA>::value && !SharesRows<LB>::value;
  // The row tiles this block takes: blockIdx.x + i * gridDim.x for i < tiles (streaming), else
  // blockIdx.x alone.
  const int tiles =
      kStream ? ((M + BM - 1) / BM - static_cast<int>(blockIdx.x) + gridDim.x - 1) / gridDim.x
              : 1;
  const auto tile_m0 = [&](int i) { return (static_cast<int>(blockIdx.x) + i * gridDim.x) * BM; };
  for (int zz = blockIdx.z; zz < nz * splits; zz += gridDim.z) {
    const int z = zz / splits, split = zz - z * splits;
    const int k_begin = split * k_per_split;
    const int k_end = min(K, k_begin + k_per_split);
    const int nk = (k_end - k_begin + BK - 1) / BK;
    // The pipeline's depth steps, over all of this block's row tiles.
    const int steps = nk * tiles;
    __syncthreads();  // the previous problem's shared reads are done
    const LA A = la.bind(z);
    const LB B = lb.bind(z);
    using IterA = typename IterOf<LA, CA>::type;
    using IterB = typename IterOf<LB, CB>::type;
    // The operand iterators; rows of SharesRows loaders go through the (still unused) stages.
    const auto make_iter = [&](const auto& l, auto tag, int tile0, int extent) {
      using L = std::decay_t<decltype(l)>;
      using It = typename decltype(tag)::type;
      if constexpr (SharesRows<L>::value) {
        static_assert(sizeof(typename L::Row) * (BM > BN ? BM : BN) <= Cfg::SMEM_BYTES,
                      "row records do not fit the stages");
        auto* const rows = reinterpret_cast<typename L::Row*>(smem_u4);
        for (int r = tid; r < extent; r += THREADS) rows[r] = l.row(tile0 + r);
        __syncthreads();
        It it(l, rows + r_first, RSTEP, k_begin + kc * 8);
        __syncthreads();  // every record read before the copies overwrite them
        return it;
      } else {
        return It(l, tile0 + r_first, RSTEP, k_begin + kc * 8);
      }
    };
    int m0 = tile_m0(0);  // the row tile the mma work on (the copies may be a tile ahead)
    IterA ia = make_iter(A, TypeTag<IterA>(), m0, BM);
    IterB ib = make_iter(B, TypeTag<IterB>(), n0, BN);

    // Issues the copies of the next depth tile into `stage` and moves the operands on; when
    // streaming, past a row tile's last depth tile onto the next row tile's first.
    int copy_tile = 0, copy_k = 0;
    auto issue = [&](int stage) {
      ia.copy(A, a_copy + stage * (BM * BK * 2), RSTEP * BK * 2);
      ib.copy(B, b_copy + stage * (BN * BK * 2), RSTEP * BK * 2);
      ia.advance(A, BK);
      ib.advance(B, BK);
      if constexpr (kStream) {
        if (++copy_k == nk) {
          copy_k = 0;
          if (++copy_tile < tiles) {
            ia = make_iter(A, TypeTag<IterA>(), tile_m0(copy_tile), BM);
            ib = make_iter(B, TypeTag<IterB>(), n0, BN);
          }
        }
      }
    };

    float acc[MI][NI][4];
    auto zero_acc = [&]() {
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
          for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.f;
    };
    zero_acc();

    // Prologue: PRE tiles in flight (STAGES - 1; a pipelined Hopper tile STAGES - 2, its main
    // loop says why). Every step commits one group (empty past the end) so that
    // wait_group<PRE - 1> always means "tile kt has landed".
    constexpr int PRE = Cfg::WGMMA && Cfg::PIPELINED ? STAGES - 2 : STAGES - 1;
    static_assert(PRE >= 1, "too few stages");
#pragma unroll
    for (int s = 0; s < PRE; ++s) {
      if (s < steps) issue(s);
      cp_async_commit();
    }
    // The epilogue's row records (output offsets: divisions by the output extents), made once per
    // row of the tile, in their own shared memory after the stages: here, while the first tiles'
    // copies are in flight, and not on the way from the last mma to the first store (at batch 1
    // a layer's blocks run a handful of depth steps).
    // Streaming makes each tile's records in its epilogue (its own shared memory, read only there).
    typename E::Row* const erows =
        reinterpret_cast<typename E::Row*>(reinterpret_cast<char*>(smem_u4) + Cfg::SMEM_BYTES);
    if constexpr (!kStream)
      for (int r = tid; r < BM; r += THREADS)
        if (m0 + r < M) erows[r] = ep.row(zz, m0 + r);
    // The epilogue goes through shared memory so that each thread finishes 8 consecutive columns
    // of one row and stores them 16 bytes at a time (store8), instead of the mma layout's 2
    // columns of 8 rows. Pass i stages band i (16 rows) of every warp's accumulators: WM * 16
    // rows of BN floats.
    // Streaming stages in its own shared memory (the operand stages hold the next tiles' copies)
    // and makes the tile's row records first: the band loop's first barrier publishes them, and
    // the previous tile's epilogue read its records before its last barrier.
    float* const cs = kStream ? reinterpret_cast<float*>(reinterpret_cast<char*>(smem_u4) +
                                                         mma_erows_end<Cfg, E>())
                              : reinterpret_cast<float*>(smem_u4);
    const int g = lane >> 2, t = lane & 3;
    auto epilogue = [&]() {
      if constexpr (kStream)
        for (int r = tid; r < BM; r += THREADS)
          if (m0 + r < M) erows[r] = ep.row(zz, m0 + r);
      // The band loop is not unrolled, so that the store code (most of the epilogue's
      // instructions) exists once, not MI times; only the staging selects acc[i] by constant index.
#pragma unroll 1
      for (int i = 0; i < MI; ++i) {
#pragma unroll
        for (int ii = 0; ii < MI; ++ii) {
          if (ii != i) continue;
#pragma unroll
          for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int j = 0; j < NI; ++j)
              *reinterpret_cast<float2*>(cs + (wm * 16 + g + h * 8) * kEpiStride + wn * WTN +
                                         j * 8 + 2 * t) =
                  make_float2(acc[ii][j][h * 2], acc[ii][j][h * 2 + 1]);
        }
        __syncthreads();
        for (int seg = tid; seg < kEpiRows * (BN / 8); seg += THREADS) {
          const int pr = seg / (BN / 8), col = (seg - pr * (BN / 8)) * 8;
          const int tr = (pr >> 4) * WTM + i * 16 + (pr & 15);  // row within the tile
          const int c = n0 + col;
          if (m0 + tr >= M || c >= N) continue;
          // Eight lanes (one phase of a 16-byte shared load) read 8 consecutive 32-byte segments:
          // lanes j and j + 4 would hit the same banks, so lanes 4-7 of each eight read their
          // upper half first.
          const int first = (seg & 4) ? 4 : 0;
          const float4 p0 = *reinterpret_cast<const float4*>(cs + pr * kEpiStride + col + first);
          const float4 p1 =
              *reinterpret_cast<const float4*>(cs + pr * kEpiStride + col + 4 - first);
          const float4 lo = first ? p1 : p0, hi = first ? p0 : p1;
          const float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
          store_row8(ep, erows[tr], c, N - c, v);
        }
        __syncthreads();  // band i read before band i + 1 overwrites it
      }
    };
    // Streaming: after a row tile's last depth step, its epilogue, then the next row tile's sums.
    int steps_left_in_tile = nk;
    auto tile_done = [&]() {
      if constexpr (kStream) {
        if (--steps_left_in_tile == 0) {
          steps_left_in_tile = nk;
          epilogue();
          zero_acc();
          m0 += gridDim.x * BM;
        }
      }
    };
    // The fragments of one 16-deep slice: A rows (lanes 0-15: k-half 0, 16-31: k-half 1) and
    // B as pairs of n-tiles (matrices (j, k-half 0), (j, 1), (j + 1, 0), (j + 1, 1)).
    uint32_t af[2][MI][4], bf[2][NI][2];
    auto load_slice = [&](int buf, int stage, int ks) {
      const uint32_t as = a_base + stage * (BM * BK * 2) + (a_ld ^ (ks * 32));
      const uint32_t bs = b_base + stage * (BN * BK * 2) + (b_ld ^ (ks * 32));
#pragma unroll
      for (int i = 0; i < MI; ++i) ldmatrix_x4_at(af[buf][i], as + i * (16 * BK * 2));
#pragma unroll
      for (int j = 0; j < NI; j += 2) {
        uint32_t q[4];
        ldmatrix_x4_at(q, bs + j * (8 * BK * 2));
        bf[buf][j][0] = q[0];
        bf[buf][j][1] = q[1];
        bf[buf][j + 1][0] = q[2];
        bf[buf][j + 1][1] = q[3];
      }
    };
    auto mma_slice = [&](int buf) {
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j) mma_16816(acc[i][j], af[buf][i], bf[buf][j]);
    };
    // Software-pipelined by slice: the fragments of the next slice are read from shared memory
    // while the mma of this one run, and the barrier that makes tile kt + 1 visible comes
    // before the last slice of tile kt (whose fragments are already in registers), so that the
    // next tile's first slice loads behind the last slice's mma. One barrier per tile, as
    // before; it also orders every read of stage (kt - 1) % STAGES before the copy into it.
    constexpr int SLICES = BK / 16;
    static_assert(SLICES % 2 == 0, "slices alternate between two fragment buffers");
    int stage = 0, next = PRE;  // kt % STAGES, (kt + PRE) % STAGES
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    if constexpr (Cfg::WGMMA) {
      // Step kt: tile kt's copies landed and fenced for the async proxy, one barrier (every
      // thread's copies visible; every warpgroup done with the stage the next copies overwrite),
      // the warpgroup's BK / 16 wgmma on stage kt, then the copies of tile kt + PRE.
      // Without PIPELINED a warpgroup waits for its wgmma at the end of the step, so the next
      // copies may go into stage kt - 1 (PRE = STAGES - 1); with it, step kt - 1's wgmma may
      // still run, so the copies go into stage kt - 2 (PRE = STAGES - 2).
      constexpr int INFLIGHT = Cfg::PIPELINED ? 1 : 0;
      if (((a_base | b_base) & 1023) != 0) __trap();  // the swizzle atoms need 1024-byte stages
      const uint32_t a_wg = a_base + (warp >> 2) * (64 * BK * 2);  // this warpgroup's 64 rows
      for (int kt = 0; kt < steps; ++kt) {
        cp_async_wait<PRE - 1>();
        fence_proxy_async_shared();
        __syncthreads();
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < BK / 16; ++ks)
          Wgmma<BN>::mma(acc[0], wgmma_desc(a_wg + stage * (BM * BK * 2) + ks * 32),
                         wgmma_desc(b_base + stage * (BN * BK * 2) + ks * 32));
        wgmma_commit();
        // The copies are issued while the tensor cores work on this step (into a stage no
        // wgmma in flight reads: above).
        if (kt + PRE < steps) issue(next);
        cp_async_commit();
        next = next + 1 == STAGES ? 0 : next + 1;
        wgmma_wait<INFLIGHT>();
        stage = stage + 1 == STAGES ? 0 : stage + 1;
      }
      wgmma_wait<0>();
    } else
#endif
    if constexpr (Cfg::PIPELINED) {
      cp_async_wait<STAGES - 2>();
      __syncthreads();  // tile 0 visible
      if (steps > 0) load_slice(0, 0, 0);
      for (int kt = 0; kt < steps; ++kt) {
#pragma unroll
        for (int ks = 0; ks < SLICES; ++ks) {
          // Slice ks + 1's fragments (buffer (ks + 1) & 1) load while slice ks's mma run; the
          // last slice loads the next tile's first (buffer 0: SLICES is even).
          if (ks + 1 < SLICES) {
            load_slice((ks + 1) & 1, stage, ks + 1);
          } else if (kt + 1 < steps) {
            load_slice(0, stage, 0);  // `stage` already moved on below
          }
          if (ks == 0) {
            if (kt + STAGES - 1 < steps) issue(next);
            cp_async_commit();
            next = next + 1 == STAGES ? 0 : next + 1;
          }
          mma_slice(ks & 1);
          if (ks == SLICES - 2) {
            cp_async_wait<STAGES - 2>();
            __syncthreads();  // tile kt + 1 visible; stage kt's fragments all read
            stage = stage + 1 == STAGES ? 0 : stage + 1;
          }
        }
        tile_done();
      }
    } else {
      for (int kt = 0; kt < steps; ++kt) {
        cp_async_wait<STAGES - 2>();
        __syncthreads();  // tile kt visible to all; stage (kt - 1) % STAGES no longer read
        if (kt + STAGES - 1 < steps) issue(next);
        cp_async_commit();
        next = next + 1 == STAGES ? 0 : next + 1;
#pragma unroll
        for (int ks = 0; ks < SLICES; ++ks) {
          load_slice(0, stage, ks);
          mma_slice(0);
        }
        stage = stage + 1 == STAGES ? 0 : stage + 1;
        tile_done();
      }
    }
    cp_async_wait<0>();
    if constexpr (!kStream) {
      __syncthreads();  // every warp is done with the operand tiles: the epilogue reuses them
      epilogue();
    } else if (nk == 0) {  // no depth: every tile's epilogue of zero sums
      for (int i = 0; i < tiles; ++i, m0 += gridDim.x * BM) epilogue();
    }
  }
  }
#endif
}

// ---------------------------------------------------------------------------------------------
// The tile menu. Values are part of the tactic numbering (conv tactics, tests): append only.
enum class MmaTileId : int {
  T128x128 = 0,  // 8 warps of 64 x 32, 3 stages of 64 deep (96 KB): large M and N
  T128x64 = 1,   // 8 warps of 32 x 32, 4 stages of 64 (96 KB)
  T64x128 = 2,   // 8 warps of 32 x 32, 4 stages of 64 (96 KB)
  T64x64 = 3,    // 4 warps of 32 x 32, 6 stages of 32
  T64x32 = 4,    // 4 warps of 16 x 32, 4 stages of 64 (48 KB): small N
  T32x64 = 5,    // 4 warps of 16 x 32 (2 x 2), 8 stages of 32: small M (7x7 and 14x14 maps at
                 // batch 1)
  T32x32 = 6,    // 4 warps of 16 x 16 (2 x 2), 6 stages of 64 (48 KB): twice the blocks of 32x64
                 // at batch 1
  T64x64K64 = 7,  // T64x64 with 4 stages of 64 (64 KB)
  T32x64K64 = 8,  // T32x64 with 6 stages of 64 (72 KB)
  // Four warps of 64 x 32 / 32 x 64: each warp reads half the shared-memory bytes per mma of a
  // 32 x 32 warp tile (6 ldmatrix for 16 mma instead of 4 for 8), three blocks an SM (161-167
  // registers, not software-pipelined: pipelined, they need 208-255 and fit two).
  T128x64W4 = 9,   // 3 stages of 64 (72 KB)
  T64x128W4 = 10,  // 3 stages of 64 (72 KB)
  // Streaming forms (MmaTile::STREAM) for the shallow 1x1 layers at batch 32, whose blocks
  // spend most of their time outside the main loop: the next row tile's copies fly during the
  // epilogue.
  T128x128S = 11,   // T128x128 with 2 stages of 64 (64 KB + 17 KB of staging)
  T64x128W4S = 12,  // T64x128W4 with 2 stages of 64 (48 KB + 17 KB of staging)
  // Hopper tiles (MmaTile::WGMMA): warpgroups of 64 rows (one, two, or four for 256 rows),
  // wgmma m64n128 or m64n64. Only where hopper_mma_available(); elsewhere NOT_SUPPORTED.
  // Measured on ResNet-50's layers at batch 32 (bench/NOTES.md, 2026-11-27 fifth session).
  // Measured with two more (128x256, and 128x128 at one block an SM), which won no layer of
  // ResNet-50 at batch 1 or 32 by more than 1% and are not in the menu.
  T128x128H = 13,  // 3 stages of 64 (96 KB), two blocks an SM
  T256x128H = 14,  // 16 warps (four warpgroups), 4 stages of 64 (192 KB), one block an SM, a
                   // step's wgmma left running
  // For the layers the two above leave short of blocks or half idle (2026-11-27, sixth session:
  // ResNet-50 at batch 32, best vs cuDNN 0.781 -> 0.808). Measured with two more, a 64x128 tile
  // of 4 stages at two blocks an SM and a 128x64 one of 4 stages at two blocks with a step's
  // wgmma left running, which won no layer.
  T64x128H = 15,  // one warpgroup, 3 stages of 64 (72 KB), three blocks an SM: twice the row
                  // tiles of 128x128 (the deep 1x1 layers of 14x14 maps)
  T128x64H = 16,  // m64n64, 3 stages of 64 (72 KB), three blocks an SM: 64 output channels
  COUNT = 17,
};
constexpr bool is_hopper_tile(int tile) {
  return tile >= static_cast<int>(MmaTileId::T128x128H) &&
         tile <= static_cast<int>(MmaTileId::T128x64H);
}
constexpr int kMmaTileCount = static_cast<int>(MmaTileId::COUNT);

// The heuristic (gemm_config.cu): the configuration with the smallest estimated time. With
// allow_split false (no workspace) only splits == 1.
GemmConfig choose_mma_config(const Handle& h, int64_t M, int64_t N, int64_t K, int64_t nz,
                             bool allow_split);

// 99 KB is the smallest opt-in limit of an sm_80+ part (sm_86 / sm_89; Orin's sm_87 and sm_80
// allow 163 KB, the H100 227 KB, which the Hopper tiles may use); above 48 KB the launch raises
// the kernel's limit once.
template <class Cfg, class E>
Status allow_mma_smem(const Handle& h, const void* kernel, std::atomic<uint64_t>& done,
                      const char* routine) {
  constexpr int bytes = mma_smem_bytes<Cfg, E>();
  static_assert(bytes <= (Cfg::WGMMA ? 227 : 99) * 1024,
                "tile exceeds the shared memory of some GPU it is built for");
  if constexpr (bytes > 48 * 1024) return allow_shared_memory(h, kernel, bytes, done, routine);
  return Status();
}

template <class Cfg, class LA, class LB, class E>
Status launch_mma(const Handle& h, const LA& a, const LB& b, const E& e, int m, int n, int k,
                  int nz, int splits, void* workspace, const char* routine) {
  // One flag per kernel: the final epilogue's and split-K's partial-sum kernel.
  static std::atomic<uint64_t> done_final{0}, done_partial{0};
  const void* const final_kernel = reinterpret_cast<const void*>(gemm_mma_kernel<Cfg, LA, LB, E>);
  const void* const partial_kernel =
      reinterpret_cast<const void*>(gemm_mma_kernel<Cfg, LA, LB, PartialEpi>);
  const Status final_ok = allow_mma_smem<Cfg, E>(h, final_kernel, done_final, routine);
  JET_TRY(final_ok);
  const Status partial_ok =
      allow_mma_smem<Cfg, PartialEpi>(h, partial_kernel, done_partial, routine);
  JET_TRY(partial_ok);
  const unsigned gx = static_cast<unsigned>((m + Cfg::BM - 1) / Cfg::BM);
  const unsigned gy = static_cast<unsigned>((n + Cfg::BN - 1) / Cfg::BN);
  constexpr bool stream = Cfg::STREAM && !SharesRows<LA>::value && !SharesRows<LB>::value;
  return launch_split(h, e, m, n, k, nz, splits, workspace, routine,
                      [&](const auto& ep, unsigned gz, int s, int kps) {
                        using EP = std::decay_t<decltype(ep)>;
                        // Streaming: as many blocks as the GPU keeps resident (MIN_BLOCKS an
                        // SM), each taking every gx-th row tile.
                        unsigned x = gx;
                        if constexpr (stream) {
                          const unsigned resident =
                              static_cast<unsigned>(std::max(1, h.sm_count()) * Cfg::MIN_BLOCKS);
                          x = std::min(gx, std::max(1u, resident / (gy * gz)));
                        }
                        gemm_mma_kernel<Cfg, LA, LB, EP>
                            <<<dim3(x, gy, gz), Cfg::THREADS, mma_smem_bytes<Cfg, EP>(),
                               h.stream()>>>(
                                a, b, ep, m, n, k, nz, s, kps);
                      });
}

// Runs C = A * B^T-rows with configuration c. The caller checks mma_available(h), the async
// operand conditions, the dims (kMaxDim, grid y) and that the workspace holds
// split_workspace(c, ...) bytes (16-byte aligned).
template <class LA, class LB, class E>
Status run_gemm_mma(const Handle& h, const LA& a, const LB& b, const E& e, int64_t M, int64_t N,
                    int64_t K, int64_t nz, const GemmConfig& c, void* workspace,
                    const char* routine) {
  const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  const int z = static_cast<int>(nz);
  const auto run = [&](auto tile) {
    return launch_mma<decltype(tile)>(h, a, b, e, m, n, k, z, c.splits, workspace, routine);
  };
  switch (static_cast<MmaTileId>(c.tile)) {
    // The large tiles have 8 warps: with 4 (64 x 64 warp tiles, ~200 registers) an SM held one
    // or two blocks, too few warps to hide the copies' and the epilogue's latency (on the H100
    // they ran 2-3x slower than 64 x 64 blocks on ResNet-50's batch-32 layers).
    // The large tiles have 8 warps: with 4 (64 x 64 warp tiles, ~200 registers) an SM held one
    // or two blocks, too few warps to hide the copies' and the epilogue's latency (on the H100
    // they ran 2-3x slower than 64 x 64 blocks on ResNet-50's batch-32 layers). Their depth
    // tile is 64: half the barriers and pipeline steps of 32, 4-16% faster at batch 32
    // (bench/NOTES.md, 2026-11-26 fifth session).
    case MmaTileId::T128x128: return run(MmaTile<128, 128, 2, 4, 3, 2, false, 64>());
    case MmaTileId::T128x64: return run(MmaTile<128, 64, 4, 2, 4, 2, true, 64>());
    case MmaTileId::T64x128: return run(MmaTile<64, 128, 2, 4, 4, 2, true, 64>());
    // The small tiles run where the grid is a block or two an SM (batch 1): each block's copies
    // in flight are then what hides DRAM latency, so they take as many stages as the 48 KB hold
    // (8 and 6 instead of 4: ResNet-50's batch-1 layers 0.329 -> 0.310 ms, bench/NOTES.md).
    // 64x32 and 32x32 hold the same bytes 64 deep (half the barriers and pipeline steps): at
    // batch 1 that measured 1.04x over ResNet-50's layers against their 32-deep forms, up to
    // 1.14x on the deep 1x1 layers (bench/NOTES.md, 2026-11-27).
    case MmaTileId::T64x64: return run(MmaTile<64, 64, 2, 2, 6>());
    case MmaTileId::T64x32: return run(MmaTile<64, 32, 4, 1, 4, 1, false, 64>());
    case MmaTileId::T32x64: return run(MmaTile<32, 64, 2, 2, 8>());
    // At batch 1 a block's operand bytes through its SM's load path, not the flops, set the time
    // of a layer: smaller blocks spread them over twice the SMs (ResNet-50's res5 1x1 layers make
    // 64 blocks of 32x64 and read 96 KB each).
    case MmaTileId::T32x32: return run(MmaTile<32, 32, 2, 2, 6, 1, true, 64>());
    // 64x64 and 32x64 also with depth tiles of 64 (the opt-in's shared memory): each wins on some
    // layers and loses on others against its 32-deep twin (deep 3x3 layers gain).
    case MmaTileId::T64x64K64: return run(MmaTile<64, 64, 2, 2, 4, 1, true, 64>());
    case MmaTileId::T32x64K64: return run(MmaTile<32, 64, 2, 2, 6, 1, true, 64>());
    // At batch 32 the 8-warp tiles' 32 x 32 warp tiles read 256 bytes of ldmatrix per mma (and
    // an SM's shared memory gives 128 bytes a cycle); with 64 x 32 warp tiles, 192. Ten of
    // ResNet-50's 21 layer shapes at batch 32 ran 1.04-1.28x faster on these (bench/NOTES.md,
    // 2026-11-27 second session). A 64 x 64 warp tile (128x128, 4 warps, ~250 registers, two
    // blocks an SM) lost on all but two layers and is not in the menu.
    case MmaTileId::T128x64W4: return run(MmaTile<128, 64, 2, 2, 3, 3, false, 64>());
    case MmaTileId::T64x128W4: return run(MmaTile<64, 128, 2, 2, 3, 3, false, 64>());
    case MmaTileId::T128x128S: return run(MmaTile<128, 128, 2, 4, 2, 2, false, 64, true>());
    case MmaTileId::T64x128W4S: return run(MmaTile<64, 128, 2, 2, 2, 3, false, 64, true>());
    // Compiled only into builds with sm_90a code (kernels/CMakeLists.txt defines JET_CUDA_SM90A):
    // the Jetson builds do not carry kernels they can never run.
    case MmaTileId::T128x128H:
    case MmaTileId::T256x128H:
    case MmaTileId::T64x128H:
    case MmaTileId::T128x64H:
      if (!hopper_mma_available(h))
        return make_status(StatusCode::NOT_SUPPORTED,
                           "%s: tile %d is a Hopper tile (wgmma): it needs an sm_90 GPU and a "
                           "build whose CMAKE_CUDA_ARCHITECTURES lists 90a",
                           routine, c.tile);
#if defined(JET_CUDA_SM90A)
      switch (static_cast<MmaTileId>(c.tile)) {
        case MmaTileId::T128x128H:
          return run(MmaTile<128, 128, 8, 1, 3, 2, false, 64, false, true>());
        case MmaTileId::T256x128H:
          return run(MmaTile<256, 128, 16, 1, 4, 1, true, 64, false, true>());
        case MmaTileId::T64x128H:
          return run(MmaTile<64, 128, 4, 1, 3, 3, false, 64, false, true>());
        default:  // T128x64H
          return run(MmaTile<128, 64, 8, 1, 3, 3, false, 64, false, true>());
      }
#else
      break;
#endif
    case MmaTileId::COUNT: break;
  }
  return make_status(StatusCode::INTERNAL_ERROR, "%s: unknown tile %d", routine, c.tile);
}

}  // namespace gemm
}  // namespace cuda
}  // namespace jet
