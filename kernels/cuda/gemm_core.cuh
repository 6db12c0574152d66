// The tiled GEMM engine of the CUDA backend, shared by gemm_forward and the GEMM-family
// convolutions (conv_gemm.cu).
//
// C[M x N] = A[M x K] * B[K x N], computed by thread blocks that each own a BM x BN tile of C
// and walk the depth (K) in tiles of BK, staging an A tile and a B tile through shared memory
// (pipelined: the loads of the next tiles are in flight while tile k is multiplied).
// Nothing in the kernels knows where the operands come from. Each operand is a *loader*: an
// object that turns (row, depth index) into an element, so an operand can be a strided matrix
// (gemm_forward, the filters, an im2col buffer) or the lowered input of a convolution formed on
// the fly (implicit GEMM). B is described by its N rows, i.e. B^T, so A and B loaders are the
// same kind of object. The result goes to an *epilogue* object that stores one element.
//
// Loader concept (T = float or __half storage):
//   using Elem = T;
//   static constexpr bool kDepthFast;   // f32 kernel only: true when consecutive depth indices
//                                        // are closer in memory than consecutive rows (threads
//                                        // of a warp then walk the depth, for coalescing)
//   struct Row;                          // per-row state a thread keeps for the whole depth loop
//   template <int BK> struct Stage;      // shared memory filled once per depth tile (may be
//                                        // empty): e.g. the tap offsets of the tile's columns
//   L bind(int z) const;                 // the loader for batch entry / group z
//   Row row(int r) const;                // r may be >= the row count: loads then give 0
//   template <int BK> void stage(Stage<BK>&, int k0, int tid, int nthreads) const;
//   T load(const Row&, const Stage&, int kk, int k) const;   // element (row, k), kk = k - k0;
//                                                             // 0 outside the matrix
//   uint4 load8(const Row&, const Stage&, int kk, int k) const;  // __half only: elements
//                                                             // k..k+7 of the row (k % 8 == 0)
//   const T* src(const Row&, const Stage&, int kk, int k, bool* in) const;
//                                    // f32 only: where element (row, k) is, for the pipelined
//                                    // f32 kernel's copies; *in false: it is 0 (the pointer is
//                                    // then any valid address, never read)
// Epilogue concept (the kernels only call it for rows < M and columns < N):
//   struct Row;
//   Row row(int z, int r) const;                        // row r of problem z
//   void store(const Row&, int col, float acc) const;
//   void store8(const Row&, int col, const float* v) const;  // optional (tensor-core engine):
//                                                        // columns col..col+7, all < N
//
// f32 storage runs on CUDA cores with FMA (f32 math, no TF32): on sm_80+ in gemm_f32_async_kernel
// (cp.async, four depth tiles in flight), on sm_72 in gemm_f32_kernel; on sm_80+ the menu also has
// X3 tiles (gemm_f32x3_kernel): f32-accurate products from three TF32 tensor-core products each
// ("3xTF32", as accurate as FFMA against float64). f16 storage runs on tensor cores
// with mma.sync m16n8k16 (f16 inputs, f32 accumulation) on sm_80 and newer; older
// architectures (sm_72) compute the same fragments with FMA from shared memory.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "cuda_common.cuh"

namespace jet {
namespace cuda {
namespace gemm {

// Rows, columns and depth are int: the callers check that they fit (kMaxDim).
constexpr int64_t kMaxDim = (int64_t(1) << 31) - 1024;

// Packs eight halves into the 16 bytes a thread writes to shared memory.
__device__ __forceinline__ uint4 pack8(const __half* h) {
  uint32_t w[4];
#pragma unroll
  for (int j = 0; j < 4; ++j)
    w[j] = static_cast<uint32_t>(__half_as_ushort(h[2 * j])) |
           (static_cast<uint32_t>(__half_as_ushort(h[2 * j + 1])) << 16);
  return make_uint4(w[0], w[1], w[2], w[3]);
}

template <class T> __device__ __forceinline__ T zero_of();
template <> __device__ __forceinline__ float zero_of<float>() { return 0.f; }
template <> __device__ __forceinline__ __half zero_of<__half>() { return __ushort_as_half(0); }

// ---------------------------------------------------------------------------------------------
// Asynchronous global -> shared copies (cp.async, sm_80+), used by the tensor-core engine
// (gemm_mma.cuh) and the f32 engine's pipelined kernel.

// Whether this device runs the sm_80+ kernels (mma.sync and cp.async code in this binary).
bool mma_available(const Handle& h);

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte copy global -> shared; bytes < 16 zero-fills the rest (0: the source is not read).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, int bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(bytes));
#endif
}
// 8-byte copy (cp.async.cg takes 16 bytes only; .ca 4, 8 or 16); bytes 0 zero-fills it.
__device__ __forceinline__ void cp_async8(uint32_t dst, const void* src, int bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src),
               "r"(bytes));
#endif
}
// 16 bytes, or 16 zero bytes when !in (the source is then not read). The ignore-src operand
// (PTX 7.5, CUDA 11.5) lets the copy take a predicate: a byte count in a register makes ptxas
// form the zero-fill's address adjustment, four more instructions a copy in the main loop.
__device__ __forceinline__ void cp_async16_if(uint32_t dst, const void* src, bool in) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#if __CUDACC_VER_MAJOR__ > 11 || (__CUDACC_VER_MAJOR__ == 11 && __CUDACC_VER_MINOR__ >= 5)
  asm volatile(
      "{\n.reg .pred skip;\nsetp.eq.u32 skip, %2, 0;\n"
      "cp.async.cg.shared.global [%0], [%1], 16, skip;\n}\n" ::"r"(dst),
      "l"(src), "r"(static_cast<uint32_t>(in)));
#else
  cp_async16(dst, src, in ? 16 : 0);
#endif
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

// 4 bytes, or 4 zero bytes when !in (the f32 engine's async copies; .ca: cg takes 16 only).
__device__ __forceinline__ void cp_async4_if(uint32_t dst, const void* src, bool in) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#if __CUDACC_VER_MAJOR__ > 11 || (__CUDACC_VER_MAJOR__ == 11 && __CUDACC_VER_MINOR__ >= 5)
  asm volatile(
      "{\n.reg .pred skip;\nsetp.eq.u32 skip, %2, 0;\n"
      "cp.async.ca.shared.global [%0], [%1], 4, skip;\n}\n" ::"r"(dst),
      "l"(src), "r"(static_cast<uint32_t>(in)));
#else
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
               "r"(in ? 4 : 0));
#endif
#endif
}

// ---------------------------------------------------------------------------------------------
// A strided matrix: element (r, k) at p[r * rs + k * ks], batch/group z at p + z * zs.
// `vec` (f16 only): 16-byte loads of 8 depth elements are legal (ks == 1, rs and zs multiples
// of 8, p 16-byte aligned); the host decides. kDepthFast picks the f32 thread mapping.
template <class T, bool kDepthFast_>
struct RowsLoader {
  using Elem = T;
  static constexpr bool kDepthFast = kDepthFast_;
  const T* p;
  int rows, depth;
  int64_t rs, ks, zs;
  bool vec;

  struct Row {
    int64_t off;
    bool valid;
  };
  template <int BK> struct Stage {
    char unused;
  };

  __device__ RowsLoader bind(int z) const {
    RowsLoader l = *this;
    l.p += z * zs;
    return l;
  }
  __device__ Row row(int r) const { return Row{r * rs, r < rows}; }
  template <int BK> __device__ void stage(Stage<BK>&, int, int, int) const {}
  template <class S> __device__ T load(const Row& r, const S&, int, int k) const {
    return r.valid && k < depth ? p[r.off + k * ks] : zero_of<T>();
  }
  template <class S> __device__ const T* src(const Row& r, const S&, int, int k, bool* in) const {
    *in = r.valid && k < depth;
    return *in ? p + r.off + k * ks : p;
  }
  // Async operand (gemm_mma.cuh), f16 with `vec` only.
  struct Cursor {
    int k;
  };
  __device__ Cursor cursor(int k) const { return Cursor{k}; }
  __device__ void advance(Cursor& c, int step) const { c.k += step; }
  __device__ const T* chunk(const Row& r, const Cursor& c, int* bytes) const {
    const int left = depth - c.k;
    *bytes = r.valid && left > 0 ? (left >= 8 ? 16 : left * 2) : 0;
    return *bytes ? p + r.off + c.k : p;
  }
  template <class S> __device__ uint4 load8(const Row& r, const S& s, int kk, int k) const {
    if (vec && r.valid && k + 8 <= depth)
      return __ldg(reinterpret_cast<const uint4*>(p + r.off + k));
    __half h[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) h[j] = load(r, s, kk + j, k + j);
    return pack8(h);
  }
};

// ---------------------------------------------------------------------------------------------
// Thread-block tile shapes. f32: BM x BN outputs, 8 x 8 per thread. f16: BM x BN outputs, WM x WN
// warps, each warp (BM/WM) x (BN/WN) built from m16n8k16 tiles.
template <int BM_, int BN_>
struct F32Tile {
  static constexpr int BM = BM_, BN = BN_, BK = 8, THREADS = BM * BN / 64;
  // 128x128: two blocks an SM (128 registers). Left to itself ptxas gave it 163, one block of 8
  // warps an SM (ncu: 12.5% occupancy), too few to hide the shared loads. The smaller tiles
  // already keep 12 warps an SM; bounding them too spilled (up to 688 bytes).
  static constexpr int MIN_BLOCKS = THREADS >= 256 ? 2 : 1;
};
// The same tiles in the pipelined f32 kernel (sm_80+), STAGES depth tiles of shared memory.
template <int BM_, int BN_, int STAGES_>
struct F32AsyncTile : F32Tile<BM_, BN_> {
  static constexpr int STAGES = STAGES_;
};
template <int BM_, int BN_, int WM_, int WN_>
struct TcTile {
  static constexpr int BM = BM_, BN = BN_, BK = 32, WM = WM_, WN = WN_, THREADS = WM * WN * 32;
};

// ---------------------------------------------------------------------------------------------
// f32 kernel pieces.

// One operand's share of a tile held in registers between the global load and the shared store.
// Depth-fast mapping: thread t loads depth t % BK of rows t / BK + e * (THREADS / BK).
// Row-fast mapping: thread t loads row t % BR at depths t / BR + e * (THREADS / BR).
// The tile in shared memory is [BK][PITCH] (transposed: a depth row of BR elements, padded).
template <class L, int BR, int BK, int THREADS, int PITCH = BR + 4>
struct F32Operand {
  static constexpr bool kDF = L::kDepthFast;
  static constexpr int E = BK * BR / THREADS;
  static constexpr int NR = kDF ? E : 1;
  static_assert(BK * BR % THREADS == 0, "tile not divisible among threads");
  static_assert(kDF ? THREADS % BK == 0 : THREADS % BR == 0, "bad f32 operand mapping");
  typename L::Row rows[NR];
  float v[E];

  static __device__ __forceinline__ int row_of(int tid, int e) {
    return kDF ? tid / BK + e * (THREADS / BK) : tid % BR;
  }
  static __device__ __forceinline__ int k_of(int tid, int e) {
    return kDF ? tid % BK : tid / BR + e * (THREADS / BR);
  }
  __device__ __forceinline__ void init(const L& l, int r0, int tid) {
#pragma unroll
    for (int i = 0; i < NR; ++i) rows[i] = l.row(r0 + row_of(tid, i));
  }
  template <class S>
  __device__ __forceinline__ void load(const L& l, const S& s, int k0, int tid) {
#pragma unroll
    for (int e = 0; e < E; ++e) {
      const int kk = k_of(tid, e);
      v[e] = to_f32(l.load(rows[kDF ? e : 0], s, kk, k0 + kk));
    }
  }
  __device__ __forceinline__ void store(float (*tile)[PITCH], int tid) const {
#pragma unroll
    for (int e = 0; e < E; ++e) tile[k_of(tid, e)][row_of(tid, e)] = v[e];
  }
  // The pipelined kernel: the same elements copied straight to the tile with cp.async (v unused).
  template <class S>
  __device__ __forceinline__ void copy(const L& l, const S& s, int k0, int tid,
                                       float (*tile)[PITCH]) const {
#pragma unroll
    for (int e = 0; e < E; ++e) {
      const int kk = k_of(tid, e);
      bool in;
      const float* p = l.src(rows[kDF ? e : 0], s, kk, k0 + kk, &in);
      cp_async4_if(smem_addr(&tile[kk][row_of(tid, e)]), p, in);
    }
  }
};

// One BK-deep step of the f32 engine's 8 x 8 register tile: thread (tm, tn) multiplies rows
// tm*4 + {0..3} and BM/2 + tm*4 + {0..3} of As (transposed: [depth][row]) by the same columns of
// Bs ([depth][column]). The two halves keep the float4 shared reads conflict-free; rows are
// padded by 4 floats (16-byte aligned). Shared by gemm_f32_kernel and WINOGRAD's GEMM.
template <int BM, int BN, int BK>
__device__ __forceinline__ void fma_step_8x8(const float (*As)[BM + 4], const float (*Bs)[BN + 4], int tm,
                                             int tn, float (&acc)[8][8]) {
#pragma unroll
  for (int k = 0; k < BK; ++k) {
    const float4 a0 = *reinterpret_cast<const float4*>(&As[k][tm * 4]);
    const float4 a1 = *reinterpret_cast<const float4*>(&As[k][BM / 2 + tm * 4]);
    const float4 b0 = *reinterpret_cast<const float4*>(&Bs[k][tn * 4]);
    const float4 b1 = *reinterpret_cast<const float4*>(&Bs[k][BN / 2 + tn * 4]);
    const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
    const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
  }
}

// Whether an epilogue has the f32 engine's 16-byte stores (ConvEpi: f4, rows_f4,
// store_rows_f4, store_cols_f4; see conv_gemm.cu).
template <class E, class = void>
struct EpiStoresF4 : std::false_type {};
template <class E>
struct EpiStoresF4<E, decltype(void(&E::store_rows_f4))> : std::true_type {};

// Stores the 8 x 8 accumulators of thread (tm, tn) of the f32 engine's BM x BN tile at (m0, n0)
// of problem zz (both f32 kernels).
template <int BM, int BN, class E>
__device__ __forceinline__ void store_f32_tile(const E& ep, const float (&acc)[8][8], int zz,
                                               int m0, int n0, int tm, int tn, int M, int N) {
  // The thread's rows and columns come in runs of 4 (half h of the rows: acc[h * 4 + i]).
  // An epilogue with 16-byte stores (EpiStoresF4) writes a run at once where y holds it
  // contiguously; otherwise one element at a time.
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int rb = m0 + h * (BM / 2) + tm * 4;
    if (rb >= M) continue;
    if constexpr (EpiStoresF4<E>::value) {
      if (ep.f4 == E::F4_ROWS && rb + 4 <= M && ep.rows_f4(rb)) {
        const typename E::Row w = ep.row(zz, rb);
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const int c = n0 + (j < 4 ? tn * 4 + j : BN / 2 + tn * 4 + j - 4);
          const float v[4] = {acc[h * 4][j], acc[h * 4 + 1][j], acc[h * 4 + 2][j],
                              acc[h * 4 + 3][j]};
          if (c < N) ep.store_rows_f4(w, c, v);
        }
        continue;
      }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = rb + i;
      if (r >= M) continue;
      const typename E::Row er = ep.row(zz, r);
      if constexpr (EpiStoresF4<E>::value) {
        if (ep.f4 == E::F4_COLS) {
#pragma unroll
          for (int jh = 0; jh < 2; ++jh) {
            const int c = n0 + jh * (BN / 2) + tn * 4;
            const float* a = &acc[h * 4 + i][jh * 4];
            const float v[4] = {a[0], a[1], a[2], a[3]};
            if (c < N) ep.store_cols_f4(er, c, v);
          }
          continue;
        }
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int c = n0 + (j < 4 ? tn * 4 + j : BN / 2 + tn * 4 + j - 4);
        if (c < N) ep.store(er, c, acc[h * 4 + i][j]);
      }
    }
  }
}

template <class Cfg, class LA, class LB, class E>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
    gemm_f32_kernel(LA la, LB lb, E ep, int M, int N, int K, int nz, int splits,
                    int k_per_split) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, THREADS = Cfg::THREADS;
  // +4 floats per row: the transposed stores of depth-fast operands hit distinct banks, and
  // rows stay 16-byte aligned for the float4 reads.
  __shared__ __align__(16) float As[2][BK][BM + 4];
  __shared__ __align__(16) float Bs[2][BK][BN + 4];
  __shared__ typename LA::template Stage<BK> sa[2];
  __shared__ typename LB::template Stage<BK> sb[2];
  const int tid = threadIdx.x;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  // Thread (tm, tn) owns rows tm*4 + {0..3}, BM/2 + tm*4 + {0..3} and the same for columns:
  // the two halves keep the float4 shared reads conflict-free.
  const int tm = tid % (BM / 8), tn = tid / (BM / 8);
  // Problem zz = z * splits + split: batch entry / group z, depth range of `split` (split-K, see
  // PartialEpi; splits == 1 covers the whole depth and zz == z).
  for (int zz = blockIdx.z; zz < nz * splits; zz += gridDim.z) {
    const int z = zz / splits;
    const int k0 = (zz - z * splits) * k_per_split;
    const int nk = (min(K, k0 + k_per_split) - k0 + BK - 1) / BK;
    __syncthreads();  // shared memory of the previous problem is no longer read
    const LA A = la.bind(z);
    const LB B = lb.bind(z);
    F32Operand<LA, BM, BK, THREADS> oa;
    F32Operand<LB, BN, BK, THREADS> ob;
    oa.init(A, m0, tid);
    ob.init(B, n0, tid);
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;

    A.stage(sa[0], k0, tid, THREADS);
    B.stage(sb[0], k0, tid, THREADS);
    __syncthreads();
    oa.load(A, sa[0], k0, tid);
    ob.load(B, sb[0], k0, tid);
    oa.store(As[0], tid);
    ob.store(Bs[0], tid);
    if (nk > 1) {
      A.stage(sa[1], k0 + BK, tid, THREADS);
      B.stage(sb[1], k0 + BK, tid, THREADS);
    }
    __syncthreads();
    for (int kt = 0; kt < nk; ++kt) {
      const int cur = kt & 1;
      if (kt + 1 < nk) {  // next tile's global loads overlap this tile's math
        oa.load(A, sa[cur ^ 1], k0 + (kt + 1) * BK, tid);
        ob.load(B, sb[cur ^ 1], k0 + (kt + 1) * BK, tid);
      }
      fma_step_8x8<BM, BN, BK>(As[cur], Bs[cur], tm, tn, acc);
      if (kt + 1 < nk) {
        oa.store(As[cur ^ 1], tid);
        ob.store(Bs[cur ^ 1], tid);
      }
      if (kt + 2 < nk) {  // this stage buffer was last read by the loads of tile kt
        A.stage(sa[cur], k0 + (kt + 2) * BK, tid, THREADS);
        B.stage(sb[cur], k0 + (kt + 2) * BK, tid, THREADS);
      }
      __syncthreads();
    }
    store_f32_tile<BM, BN>(ep, acc, zz, m0, n0, tm, tn, M, N);
  }
}

// The main loop of the sm_80+ f32 kernels (gemm_f32_async_kernel, gemm_f32x3_kernel) over one
// problem's nk depth tiles from depth k0: each operand element copied global -> shared by a
// 4-byte cp.async (oa, ob: F32Operand) into S tile buffers (As, Bs: [S][BK][pitch]), tiles
// 0 .. S-2 in flight before the first is used, and math(A tile, B tile) on each tile once it has
// landed. One commit group a tile, empty groups past the end, so that "tile kt has landed" is
// always "at most S - 2 groups pending". The loaders' stage tables (the tap entries of a
// convolution's depth tile) get S slots too: slot s holds tile t's table for t % S == s, written
// S tiles ahead of its copies.
template <int S, int THREADS, int BK, int PA, int PB, class LA, class LB, class OA, class OB,
          class Math>
__device__ __forceinline__ void f32_copy_pipeline(const LA& A, const LB& B, const OA& oa,
                                                  const OB& ob,
                                                  typename LA::template Stage<BK>* sa,
                                                  typename LB::template Stage<BK>* sb,
                                                  float (*As)[BK][PA], float (*Bs)[BK][PB], int k0,
                                                  int nk, int tid, Math&& math) {
  static_assert(S >= 2, "a pipeline of at least two stages");
  for (int s = 0; s < S && s < nk; ++s) {
    A.stage(sa[s], k0 + s * BK, tid, THREADS);
    B.stage(sb[s], k0 + s * BK, tid, THREADS);
  }
  __syncthreads();
#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    if (s < nk) {
      oa.copy(A, sa[s], k0 + s * BK, tid, As[s]);
      ob.copy(B, sb[s], k0 + s * BK, tid, Bs[s]);
    }
    cp_async_commit();
  }
  for (int kt = 0; kt < nk; ++kt) {
    cp_async_wait<S - 2>();
    // Every thread's copies of tile kt are visible, and every thread is done with the math
    // of tile kt - 1, whose buffer the copies below refill.
    __syncthreads();
    const int next = kt + S - 1;
    if (next < nk) {
      oa.copy(A, sa[next % S], k0 + next * BK, tid, As[next % S]);
      ob.copy(B, sb[next % S], k0 + next * BK, tid, Bs[next % S]);
    }
    cp_async_commit();
    math(As[kt % S], Bs[kt % S]);
    // Tile kt's table slot: its copies were issued S - 1 tiles ago, before the barrier above.
    if (kt + S < nk) {
      A.stage(sa[kt % S], k0 + (kt + S) * BK, tid, THREADS);
      B.stage(sb[kt % S], k0 + (kt + S) * BK, tid, THREADS);
    }
  }
  cp_async_wait<0>();  // only empty groups are left; nothing lands after the next problem starts
}

// The f32 engine's pipelined kernel for sm_80+ (gemm_f32_kernel stays for sm_72): the same
// tiles, thread mapping and 8 x 8 step, but each element goes global -> shared with a 4-byte
// cp.async, STAGES depth tiles in flight (f32_copy_pipeline). The register-staged kernel holds
// one tile's loads in registers across one tile's math (2 x 512 FMAs a thread at 128 x 128);
// here the copies of tile k + STAGES - 1 are issued when tile k's math starts and need no
// registers to land.
template <class Cfg, class LA, class LB, class E>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
    gemm_f32_async_kernel(LA la, LB lb, E ep, int M, int N, int K, int nz, int splits,
                          int k_per_split) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, THREADS = Cfg::THREADS;
  constexpr int S = Cfg::STAGES;
  __shared__ __align__(16) float As[S][BK][BM + 4];
  __shared__ __align__(16) float Bs[S][BK][BN + 4];
  __shared__ typename LA::template Stage<BK> sa[S];
  __shared__ typename LB::template Stage<BK> sb[S];
  const int tid = threadIdx.x;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int tm = tid % (BM / 8), tn = tid / (BM / 8);
  for (int zz = blockIdx.z; zz < nz * splits; zz += gridDim.z) {
    const int z = zz / splits;
    const int k0 = (zz - z * splits) * k_per_split;
    const int nk = (min(K, k0 + k_per_split) - k0 + BK - 1) / BK;
    __syncthreads();  // shared memory of the previous problem is no longer read
    const LA A = la.bind(z);
    const LB B = lb.bind(z);
    F32Operand<LA, BM, BK, THREADS> oa;
    F32Operand<LB, BN, BK, THREADS> ob;
    oa.init(A, m0, tid);
    ob.init(B, n0, tid);
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;
    const auto math = [&](const float(*as)[BM + 4], const float(*bs)[BN + 4]) {
      fma_step_8x8<BM, BN, BK>(as, bs, tm, tn, acc);
    };
    f32_copy_pipeline<S, THREADS>(A, B, oa, ob, sa, sb, As, Bs, k0, nk, tid, math);
    store_f32_tile<BM, BN>(ep, acc, zz, m0, n0, tm, tn, M, N);
  }
#endif
}

// Stores a warp's MI x NI m16n8 accumulator fragments, whose tile starts at row r0 and column
// c0 of problem zz: lane (g = lane / 4, t = lane % 4) holds rows g and g + 8, columns 2t and
// 2t + 1 of each (gemm_f32x3_kernel, gemm_tc_kernel).
template <class E, int MI, int NI>
__device__ __forceinline__ void store_fragments(const E& ep, const float (&acc)[MI][NI][4], int zz,
                                                int r0, int c0, int lane, int M, int N) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = r0 + i * 16 + g + h * 8;
      if (r >= M) continue;
      const typename E::Row er = ep.row(zz, r);
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int q = 0; q < 2; ++q) {
          const int c = c0 + j * 8 + 2 * t + q;
          if (c < N) ep.store(er, c, acc[i][j][h * 2 + q]);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// f32 on tensor cores (sm_80+), the f32 engine's X3 tiles: the same operand copies and pipeline
// as gemm_f32_async_kernel, with f32-accurate products from TF32 mma.sync ("3xTF32"). Each
// element x is split into big = tf32(x) (rounded to nearest) and small = tf32(x - big); then
// a * b = big_a * big_b + big_a * small_b + small_a * big_b, short of small_a * small_b and the
// small parts' own rounding: about 2^-21 of |a * b|, against f32's 2^-24 for one rounding. The
// tensor pipe does the three m16n8k8 products (1024 multiply-adds each) faster than FFMA does one
// pass, but the splits, FADDs and copies cost ~11 instructions a product (ncu, 2026-11-28): the
// tiles measured faster than the FMA tiles only on grids that leave SMs idle (bench/NOTES.md).
//
// The tensor cores round the sum inside an mma toward zero. Chained over a long depth into the
// same accumulators that bias grows with the depth (3e-4 of the terms' magnitude at a depth of
// 32768 on positive data, where FFMA's error is 2e-6), so each 8-deep step's three products
// start from zero and are added to the f32 accumulators with FADD (rounded to nearest).
// Measured against float64 (bench/NOTES.md, 2026-11-28): mean error over the terms' magnitude
// below the FFMA kernels' at depths 576 .. 100352, positive and signed data.
template <int BM_, int BN_, int WM_, int WN_, int STAGES_, int MIN_BLOCKS_>
struct F32X3Tile {
  static constexpr int BM = BM_, BN = BN_, BK = 16, WM = WM_, WN = WN_, STAGES = STAGES_;
  static constexpr int THREADS = WM * WN * 32, MIN_BLOCKS = MIN_BLOCKS_;
  // A stage is [BK][BM + 8] and [BK][BN + 8] floats: with a pitch of 8 (mod 32) words the
  // fragment loads (lane (g, t) reads depth t, row g) hit 32 distinct banks.
  static constexpr int PA = BM + 8, PB = BN + 8;
  static constexpr int SMEM_BYTES = STAGES * BK * (PA + PB) * 4;
  static_assert(BM % 32 == 0 && BN % 32 == 0, "rows a multiple of 32: the pitch stays 8 mod 32");
  static_assert(BM % (16 * WM) == 0 && BN % (8 * WN) == 0, "warp tiles of m16n8 fragments");
};

// big = tf32(x) and small = tf32(x - big), as mma operands, and cross: big for the cross term
// (big * the other's small), 0 where big is infinite or NaN. Such an x gets small = 0, and
// inf * 0 in a cross term would turn inf * b into NaN; big * big still carries inf and NaN.
// (An x within 2^-12 of FLT_MAX rounds to big = inf: its products are inf where FFMA's may be
// finite.)
__device__ __forceinline__ void split_tf32(float x, uint32_t& big, uint32_t& small,
                                           uint32_t& cross) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(big) : "f"(x));
  const float rest = x - __uint_as_float(big);  // exact for a finite big
  const bool finite = fabsf(rest) < INFINITY;      // false for NaN
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(small) : "f"(finite ? rest : 0.f));
  cross = finite ? big : 0u;
#else
  big = small = cross = 0;
  (void)x;
#endif
}

// d = a * b for one m16n8k8 TF32 fragment (d starts from zero: see above).
__device__ __forceinline__ void mma_1688_tf32(float* d, const uint32_t* a, const uint32_t* b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  (void)d, (void)a, (void)b;
#endif
}

// Warp (wm, wn) owns rows wm * WTM .. + WTM and columns wn * WTN .. + WTN of the block's tile,
// as MI x NI m16n8 fragments: lane (g = lane / 4, t = lane % 4) holds rows g and g + 8, columns
// 2t and 2t + 1 of each.
template <class Cfg, class LA, class LB, class E>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
    gemm_f32x3_kernel(LA la, LB lb, E ep, int M, int N, int K, int nz, int splits,
                      int k_per_split) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, THREADS = Cfg::THREADS;
  constexpr int S = Cfg::STAGES, PA = Cfg::PA, PB = Cfg::PB;
  constexpr int WTM = BM / Cfg::WM, WTN = BN / Cfg::WN, MI = WTM / 16, NI = WTN / 8;
  extern __shared__ uint4 smem_u4[];
  float(*As)[BK][PA] = reinterpret_cast<float(*)[BK][PA]>(smem_u4);
  float(*Bs)[BK][PB] = reinterpret_cast<float(*)[BK][PB]>(
      reinterpret_cast<float*>(smem_u4) + S * BK * PA);
  __shared__ typename LA::template Stage<BK> sa[S];
  __shared__ typename LB::template Stage<BK> sb[S];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp % Cfg::WM, wn = warp / Cfg::WM;
  const int g = lane >> 2, t = lane & 3;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  for (int zz = blockIdx.z; zz < nz * splits; zz += gridDim.z) {
    const int z = zz / splits;
    const int k0 = (zz - z * splits) * k_per_split;
    const int nk = (min(K, k0 + k_per_split) - k0 + BK - 1) / BK;
    __syncthreads();  // shared memory of the previous problem is no longer read
    const LA A = la.bind(z);
    const LB B = lb.bind(z);
    F32Operand<LA, BM, BK, THREADS, PA> oa;
    F32Operand<LB, BN, BK, THREADS, PB> ob;
    oa.init(A, m0, tid);
    ob.init(B, n0, tid);
    float acc[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.f;

    // One depth tile: each fragment's big, small and cross parts (split_tf32), then three
    // products an m16n8 fragment and 8-deep step.
    const auto math = [&](const float(*as)[PA], const float(*bs)[PB]) {
#pragma unroll
      for (int ks = 0; ks < BK; ks += 8) {
        uint32_t ab[MI][4], as_[MI][4], ac[MI][4], bb[NI][2], bs_[NI][2], bc[NI][2];
#pragma unroll
        for (int i = 0; i < MI; ++i) {
          const int r = wm * WTM + i * 16 + g;
          split_tf32(as[ks + t][r], ab[i][0], as_[i][0], ac[i][0]);
          split_tf32(as[ks + t][r + 8], ab[i][1], as_[i][1], ac[i][1]);
          split_tf32(as[ks + t + 4][r], ab[i][2], as_[i][2], ac[i][2]);
          split_tf32(as[ks + t + 4][r + 8], ab[i][3], as_[i][3], ac[i][3]);
        }
#pragma unroll
        for (int j = 0; j < NI; ++j) {
          const int c = wn * WTN + j * 8 + g;
          split_tf32(bs[ks + t][c], bb[j][0], bs_[j][0], bc[j][0]);
          split_tf32(bs[ks + t + 4][c], bb[j][1], bs_[j][1], bc[j][1]);
        }
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
          for (int j = 0; j < NI; ++j) {
            float d[4] = {0.f, 0.f, 0.f, 0.f};
            mma_1688_tf32(d, as_[i], bc[j]);  // the small terms first
            mma_1688_tf32(d, ac[i], bs_[j]);
            mma_1688_tf32(d, ab[i], bb[j]);
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[i][j][q] += d[q];
          }
      }
    };
    f32_copy_pipeline<S, THREADS>(A, B, oa, ob, sa, sb, As, Bs, k0, nk, tid, math);
    store_fragments(ep, acc, zz, m0 + wm * WTM, n0 + wn * WTN, lane, M, N);
  }
#endif
}

// ---------------------------------------------------------------------------------------------
// f16 tensor-core kernel pieces.

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
__device__ __forceinline__ void ldmatrix_x4(uint32_t* r, const __half* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void mma_16816(float* c, const uint32_t* a, const uint32_t* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#endif

// Shared tiles are [rows][BK + 8] halves: the 8-half pad makes the eight 16-byte rows an
// ldmatrix phase reads fall in distinct bank groups (row pitch 80 bytes).
template <class Cfg, class LA, class LB, class E>
__global__ void __launch_bounds__(Cfg::THREADS)
    gemm_tc_kernel(LA la, LB lb, E ep, int M, int N, int K, int nz) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, THREADS = Cfg::THREADS;
  constexpr int LDS = BK + 8;
  constexpr int WTM = BM / Cfg::WM, WTN = BN / Cfg::WN;
  constexpr int MI = WTM / 16, NI = WTN / 8;
  static_assert(NI % 2 == 0, "B fragments are loaded two n8 tiles at a time");
  // Chunks of 8 depth elements: BK / 8 = 4 per row. Thread t loads chunk column t % 4 of rows
  // t / 4 + e * THREADS / 4.
  constexpr int CA = BM * 4 / THREADS, CB = BN * 4 / THREADS;
  static_assert(BM * 4 % THREADS == 0 && BN * 4 % THREADS == 0, "bad f16 tile mapping");
  __shared__ __align__(16) __half As[2][BM][LDS];
  __shared__ __align__(16) __half Bs[2][BN][LDS];
  __shared__ typename LA::template Stage<BK> sa[2];
  __shared__ typename LB::template Stage<BK> sb[2];
  const int tid = threadIdx.x;
  const int lane = tid & 31, warp = tid >> 5;
  const int wm = warp % Cfg::WM, wn = warp / Cfg::WM;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int kc = (tid & 3) * 8;
  const int nk = (K + BK - 1) / BK;
  for (int z = blockIdx.z; z < nz; z += gridDim.z) {
    __syncthreads();
    const LA A = la.bind(z);
    const LB B = lb.bind(z);
    typename LA::Row ra[CA];
    typename LB::Row rb[CB];
#pragma unroll
    for (int e = 0; e < CA; ++e) ra[e] = A.row(m0 + (tid >> 2) + e * (THREADS / 4));
#pragma unroll
    for (int e = 0; e < CB; ++e) rb[e] = B.row(n0 + (tid >> 2) + e * (THREADS / 4));
    uint4 va[CA], vb[CB];
    float acc[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.f;

    auto load_tile = [&](int buf, int k0) {
#pragma unroll
      for (int e = 0; e < CA; ++e) va[e] = A.load8(ra[e], sa[buf], kc, k0 + kc);
#pragma unroll
      for (int e = 0; e < CB; ++e) vb[e] = B.load8(rb[e], sb[buf], kc, k0 + kc);
    };
    auto store_tile = [&](int buf) {
#pragma unroll
      for (int e = 0; e < CA; ++e)
        *reinterpret_cast<uint4*>(&As[buf][(tid >> 2) + e * (THREADS / 4)][kc]) = va[e];
#pragma unroll
      for (int e = 0; e < CB; ++e)
        *reinterpret_cast<uint4*>(&Bs[buf][(tid >> 2) + e * (THREADS / 4)][kc]) = vb[e];
    };

    A.stage(sa[0], 0, tid, THREADS);
    B.stage(sb[0], 0, tid, THREADS);
    __syncthreads();
    load_tile(0, 0);
    store_tile(0);
    if (nk > 1) {
      A.stage(sa[1], BK, tid, THREADS);
      B.stage(sb[1], BK, tid, THREADS);
    }
    __syncthreads();
    for (int kt = 0; kt < nk; ++kt) {
      const int cur = kt & 1;
      if (kt + 1 < nk) load_tile(cur ^ 1, (kt + 1) * BK);
#pragma unroll
      for (int ks = 0; ks < BK; ks += 16) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        uint32_t af[MI][4], bf[NI][2];
#pragma unroll
        for (int i = 0; i < MI; ++i)
          ldmatrix_x4(af[i], &As[cur][wm * WTM + i * 16 + (lane & 15)][ks + (lane >> 4) * 8]);
#pragma unroll
        for (int j = 0; j < NI; j += 2) {
          uint32_t r[4];
          ldmatrix_x4(r, &Bs[cur][wn * WTN + j * 8 + (lane & 7) + ((lane >> 4) << 3)]
                            [ks + ((lane >> 3) & 1) * 8]);
          bf[j][0] = r[0];
          bf[j][1] = r[1];
          bf[j + 1][0] = r[2];
          bf[j + 1][1] = r[3];
        }
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
          for (int j = 0; j < NI; ++j) mma_16816(acc[i][j], af[i], bf[j]);
#else
        // No m16n8k16 before sm_80: the same accumulator fragments with FMA. Lane (g, t) owns
        // rows g, g + 8 and columns 2t, 2t + 1 of each 16 x 8 tile.
        const int g = lane >> 2, t = lane & 3;
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
          for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int q = 0; q < 4; ++q) {
              const __half* ar = As[cur][wm * WTM + i * 16 + g + (q >> 1) * 8] + ks;
              const __half* br = Bs[cur][wn * WTN + j * 8 + 2 * t + (q & 1)] + ks;
              float s = acc[i][j][q];
#pragma unroll
              for (int kx = 0; kx < 16; ++kx) s = fmaf(__half2float(ar[kx]), __half2float(br[kx]), s);
              acc[i][j][q] = s;
            }
#endif
      }
      if (kt + 1 < nk) store_tile(cur ^ 1);
      if (kt + 2 < nk) {
        A.stage(sa[cur], (kt + 2) * BK, tid, THREADS);
        B.stage(sb[cur], (kt + 2) * BK, tid, THREADS);
      }
      __syncthreads();
    }
    store_fragments(ep, acc, z, m0 + wm * WTM, n0 + wn * WTN, lane, M, N);
  }
}

// ---------------------------------------------------------------------------------------------
// Split-K, shared by the engines: `splits` blocks share one output tile, each with its own range
// of the depth (a multiple of 32, so that ranges never share a depth tile of any engine), and
// write f32 partial sums through a PartialEpi into the workspace; reduce_splits_kernel adds them
// in a fixed order (deterministic) and applies the real epilogue once.

// Problem z's split s at ws[((z * splits + s) * M + r) * N + c]; the kernels pass
// zz = z * splits + s as the problem index.
struct PartialEpi {
  float* ws;
  int M, N;
  struct Row {
    int64_t off;
  };
  __device__ Row row(int zz, int r) const { return Row{(static_cast<int64_t>(zz) * M + r) * N}; }
  __device__ __forceinline__ void store(const Row& w, int col, float acc) const {
    ws[w.off + col] = acc;
  }
  __device__ __forceinline__ void store8(const Row& w, int col, const float* v) const {
    float* p = ws + w.off + col;
    if (reinterpret_cast<uintptr_t>(p) % 16 == 0) {
      reinterpret_cast<float4*>(p)[0] = make_float4(v[0], v[1], v[2], v[3]);
      reinterpret_cast<float4*>(p)[1] = make_float4(v[4], v[5], v[6], v[7]);
      return;
    }
#pragma unroll
    for (int q = 0; q < 8; ++q) p[q] = v[q];
  }
};

template <class E>
__global__ void reduce_splits_kernel(const float* ws, E ep, int M, int N, int nz, int splits) {
  const int64_t per = static_cast<int64_t>(M) * N;
  const int64_t total = per * nz;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int z = static_cast<int>(i / per);
    const int64_t rc = i - z * per;
    const int r = static_cast<int>(rc / N), c = static_cast<int>(rc - static_cast<int64_t>(r) * N);
    const float* p = ws + static_cast<int64_t>(z) * splits * per + rc;
    float s = 0.f;
    for (int k = 0; k < splits; ++k) s += p[k * per];
    ep.store(ep.row(z, r), c, s);
  }
}

// Split-K factors a tactic can ask for.
constexpr int kSplitChoices[] = {1, 2, 3, 4, 6, 8, 12, 16};
constexpr int kSplitChoiceCount = sizeof(kSplitChoices) / sizeof(kSplitChoices[0]);

// Depth per split: a multiple of 64 (every engine's depth tile divides it: a split ends where
// a depth tile does, since the copies only test the whole depth's end).
inline int split_depth(int64_t K, int splits) {
  const int64_t tiles = (K + 63) / 64;
  return static_cast<int>((tiles + splits - 1) / splits * 64);
}
// The splits that actually get depth (a large factor on a short depth leaves some empty).
inline int effective_splits(int64_t K, int splits) {
  const int64_t kps = split_depth(K, splits);
  return static_cast<int>((K + kps - 1) / kps);
}

// A launch configuration: a tile of the engine's menu and a split-K factor.
struct GemmConfig {
  int tile = 0;
  int splits = 1;
};

// Workspace bytes of a configuration: the f32 partial sums of every split.
inline size_t split_workspace(const GemmConfig& c, int64_t M, int64_t N, int64_t K, int64_t nz) {
  const int s = effective_splits(K, c.splits);
  return s > 1 ? static_cast<size_t>(s) * M * N * nz * sizeof(float) : 0;
}

// Launches `kernel` (an engine's kernel instantiated for epilogue E and for PartialEpi) with the
// split-K protocol: one launch when the configuration does not split, else the partial sums and
// the reduction.
template <class E, class Launch>
Status launch_split(const Handle& h, const E& e, int m, int n, int k, int nz, int splits,
                    void* workspace, const char* routine, const Launch& launch) {
  const int kps = split_depth(k, splits);
  const int s = effective_splits(k, splits);
  const int64_t zs = static_cast<int64_t>(nz) * s;
  const unsigned gz = static_cast<unsigned>(zs < 65535 ? zs : 65535);
  if (s <= 1) {
    launch(e, gz, 1, kps);
    return launch_status(routine);
  }
  PartialEpi pe;
  pe.ws = static_cast<float*>(workspace);
  pe.M = m;
  pe.N = n;
  launch(pe, gz, s, kps);
  JET_TRY(launch_status(routine));
  const int64_t total = static_cast<int64_t>(m) * n * nz;
  reduce_splits_kernel<E><<<grid_for(total, 256, h.sm_count()), 256, 0, h.stream()>>>(
      pe.ws, e, m, n, nz, s);
  return launch_status(routine);
}

// ---------------------------------------------------------------------------------------------
// Raises the kernel's dynamic shared-memory limit to `bytes` on the handle's device, once per
// device (a bit per device in `done`). NOT_SUPPORTED when the device does not allow it.
template <class Kernel>
Status allow_shared_memory(const Handle& h, Kernel kernel, int bytes, std::atomic<uint64_t>& done,
                           const char* routine) {
  const int dev = h.device();
  const uint64_t bit = dev >= 0 && dev < 64 ? uint64_t(1) << dev : 0;
  if (bit && (done.load(std::memory_order_relaxed) & bit)) return Status();
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) !=
      cudaSuccess) {
    const cudaError_t err = cudaGetLastError();
    return make_status(StatusCode::NOT_SUPPORTED,
                       "%s: this tile needs %d bytes of shared memory per block, which device %d "
                       "does not allow (%s)",
                       routine, bytes, dev, cudaGetErrorString(err));
  }
  done.fetch_or(bit, std::memory_order_relaxed);
  return Status();
}

// Host side of the f32 engine: tile menu, heuristic and launch.

// Values are part of the tactic numbering (conv tactics, tests): append only.
enum class F32TileId : int {
  T128x128 = 0,  // 256 threads
  T128x64 = 1,   // 128 threads
  T64x64 = 2,    // 64 threads: small problems, with split-K at batch 1
  // 3xTF32 on tensor cores (gemm_f32x3_kernel), sm_80+ only (mma_available): refused elsewhere.
  T128x128X3 = 3,  // 8 warps of 64 x 32
  T128x64X3 = 4,   // 4 warps of 64 x 32
  T64x64X3 = 5,    // 4 warps of 32 x 32
  COUNT = 6,
};
constexpr int kF32TileCount = static_cast<int>(F32TileId::COUNT);
constexpr bool is_f32x3_tile(int tile) {
  return tile >= static_cast<int>(F32TileId::T128x128X3) &&
         tile <= static_cast<int>(F32TileId::T64x64X3);
}

// The heuristic (gemm_config.cu): smallest estimated time over the menu; splits == 1 only
// when allow_split is false (no workspace).
GemmConfig choose_f32_config(const Handle& h, int64_t M, int64_t N, int64_t K, int64_t nz,
                             bool allow_split);

// C = A * B^T-rows for nz independent problems (batch entries or groups), f32 storage, with
// configuration c. The caller checks M, N, K < kMaxDim and N / 64 < 65535 (the grid's y
// dimension) and that the workspace holds split_workspace(c, ...) bytes.
template <class LA, class LB, class E>
Status run_gemm_f32(const Handle& h, const LA& a, const LB& b, const E& e, int64_t M, int64_t N,
                    int64_t K, int64_t nz, const GemmConfig& c, void* workspace,
                    const char* routine) {
  static_assert(std::is_same<typename LA::Elem, float>::value, "f32 operands");
  if (M <= 0 || N <= 0 || nz <= 0) return Status();
  const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  const int z = static_cast<int>(nz);
  const bool pipelined = mma_available(h);  // sm_80+: cp.async
  const auto run = [&](auto cfg, auto async_cfg) {
    using C = decltype(cfg);
    using AC = decltype(async_cfg);
    const dim3 grid((m + C::BM - 1) / C::BM, (n + C::BN - 1) / C::BN, 1);
    return launch_split(h, e, m, n, k, z, c.splits, workspace, routine,
                        [&](const auto& ep, unsigned gz, int splits, int kps) {
                          using EP = std::decay_t<decltype(ep)>;
                          const dim3 g(grid.x, grid.y, gz);
                          if (pipelined)
                            gemm_f32_async_kernel<AC, LA, LB, EP>
                                <<<g, C::THREADS, 0, h.stream()>>>(a, b, ep, m, n, k, z, splits, kps);
                          else
                            gemm_f32_kernel<C, LA, LB, EP>
                                <<<g, C::THREADS, 0, h.stream()>>>(a, b, ep, m, n, k, z, splits, kps);
                        });
  };
  // The X3 tiles: dynamic shared memory, above the default 48 KB for the larger ones.
  const auto run_x3 = [&](auto cfg) -> Status {
    using C = decltype(cfg);
    if (!pipelined)
      return make_status(StatusCode::NOT_SUPPORTED,
                         "%s: f32 tile %d runs on tensor cores (3xTF32), which needs sm_80+",
                         routine, c.tile);
    static std::atomic<uint64_t> done_final{0}, done_partial{0};
    static_assert(C::SMEM_BYTES <= 99 * 1024, "tile exceeds the shared memory of sm_86 / sm_89");
    if constexpr (C::SMEM_BYTES > 48 * 1024) {
      JET_TRY(allow_shared_memory(h, gemm_f32x3_kernel<C, LA, LB, E>, C::SMEM_BYTES, done_final,
                                  routine));
      JET_TRY(allow_shared_memory(h, gemm_f32x3_kernel<C, LA, LB, PartialEpi>, C::SMEM_BYTES,
                                  done_partial, routine));
    }
    const dim3 grid((m + C::BM - 1) / C::BM, (n + C::BN - 1) / C::BN, 1);
    return launch_split(h, e, m, n, k, z, c.splits, workspace, routine,
                        [&](const auto& ep, unsigned gz, int splits, int kps) {
                          using EP = std::decay_t<decltype(ep)>;
                          gemm_f32x3_kernel<C, LA, LB, EP>
                              <<<dim3(grid.x, grid.y, gz), C::THREADS, C::SMEM_BYTES,
                                 h.stream()>>>(a, b, ep, m, n, k, z, splits, kps);
                        });
  };
  switch (static_cast<F32TileId>(c.tile)) {
    case F32TileId::T128x128: return run(F32Tile<128, 128>(), F32AsyncTile<128, 128, 4>());
    case F32TileId::T128x64: return run(F32Tile<128, 64>(), F32AsyncTile<128, 64, 4>());
    case F32TileId::T64x64: return run(F32Tile<64, 64>(), F32AsyncTile<64, 64, 4>());
    case F32TileId::T128x128X3: return run_x3(F32X3Tile<128, 128, 2, 4, 4, 1>());
    case F32TileId::T128x64X3: return run_x3(F32X3Tile<128, 64, 2, 2, 4, 2>());
    case F32TileId::T64x64X3: return run_x3(F32X3Tile<64, 64, 2, 2, 4, 3>());
    case F32TileId::COUNT: break;
  }
  return make_status(StatusCode::INTERNAL_ERROR, "%s: unknown f32 tile %d", routine, c.tile);
}

// ---------------------------------------------------------------------------------------------
// The register-staged f16 kernel's tile shapes (operands without 16-byte copies, and sm_72).
// Large tiles for large problems; 64 x 64 when the large tiles would leave SMs idle.
enum class TileShape { T128x128, T128x64, T64x64 };

inline TileShape choose_tile(const Handle& h, int64_t M, int64_t N, int64_t nz) {
  const int64_t sms = h.sm_count() > 0 ? h.sm_count() : 16;
  const auto blocks = [&](int64_t bm, int64_t bn) {
    return ((M + bm - 1) / bm) * ((N + bn - 1) / bn) * nz;
  };
  TileShape t = N <= 64 ? TileShape::T128x64 : TileShape::T128x128;
  const int64_t b = t == TileShape::T128x64 ? blocks(128, 64) : blocks(128, 128);
  if (b < sms) t = TileShape::T64x64;
  return t;
}

// C = A * B^T-rows with the heuristic's configuration and no split-K (no workspace): f32 on the
// f32 engine, f16 on the register-staged tensor-core kernel. The caller checks M, N, K < kMaxDim
// and N / 64 < 65535 (the grid's y dimension).
template <class LA, class LB, class E>
Status run_gemm(const Handle& h, const LA& a, const LB& b, const E& e, int64_t M, int64_t N,
                int64_t K, int64_t nz, const char* routine) {
  static_assert(std::is_same<typename LA::Elem, typename LB::Elem>::value, "operand types differ");
  if (M <= 0 || N <= 0 || nz <= 0) return Status();
  if (M > kMaxDim || N > kMaxDim || K > kMaxDim || nz > kMaxDim || (N + 63) / 64 > 65535)
    return make_status(StatusCode::NOT_SUPPORTED,
                       "%s: GEMM of %lld x %lld x %lld exceeds the CUDA engine's 32-bit tiling",
                       routine, static_cast<long long>(M), static_cast<long long>(N),
                       static_cast<long long>(K));
  using T = typename LA::Elem;
  if constexpr (std::is_same<T, float>::value) {
    return run_gemm_f32(h, a, b, e, M, N, K, nz, choose_f32_config(h, M, N, K, nz, false),
                        nullptr, routine);
  } else {
    const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
    // Blocks loop over z beyond the grid's 65535 limit.
    const unsigned gz = static_cast<unsigned>(nz < 65535 ? nz : 65535);
    switch (choose_tile(h, M, N, nz)) {
      case TileShape::T128x128: {
        using C = TcTile<128, 128, 2, 4>;
        gemm_tc_kernel<C, LA, LB, E><<<dim3((m + 127) / 128, (n + 127) / 128, gz), C::THREADS, 0,
                                       h.stream()>>>(a, b, e, m, n, k, static_cast<int>(nz));
        break;
      }
      case TileShape::T128x64: {
        using C = TcTile<128, 64, 2, 2>;
        gemm_tc_kernel<C, LA, LB, E><<<dim3((m + 127) / 128, (n + 63) / 64, gz), C::THREADS, 0,
                                       h.stream()>>>(a, b, e, m, n, k, static_cast<int>(nz));
        break;
      }
      case TileShape::T64x64: {
        using C = TcTile<64, 64, 2, 2>;
        gemm_tc_kernel<C, LA, LB, E><<<dim3((m + 63) / 64, (n + 63) / 64, gz), C::THREADS, 0,
                                       h.stream()>>>(a, b, e, m, n, k, static_cast<int>(nz));
        break;
      }
    }
    return launch_status(routine);
  }
}

}  // namespace gemm
}  // namespace cuda
}  // namespace jet
