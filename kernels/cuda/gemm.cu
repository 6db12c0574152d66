// CUDA gemm_forward: A and B are strided matrices read in place (a transpose is a swap of
// strides), one z-slice of the grid per batch entry (a batch dim of 1 broadcasts through a zero
// batch stride), bias and alpha/beta applied in the epilogue. Three engines:
//  - GEMV (M <= 8 with both operands contiguous along K, the fully connected layer at small
//    batch): warps stream the rows of B once, 16-byte loads several in flight per lane, K split
//    across the warps of a block; one element at a time when rows are not 16-byte aligned;
//  - the tensor-core core (gemm_mma.cuh) for f16 operands it can copy 16 bytes at a time;
//  - the register-staged tiled engine (gemm_core.cuh) for everything else.
#include <algorithm>

#include "../api/backend.h"
#include "gemm_core.cuh"
#include "gemm_mma.cuh"

namespace jet {
namespace cuda {
namespace {

// y = alpha * (acc + bias) + beta * y, not reading y when beta == 0.
template <class T>
struct GemmEpi {
  T* y;
  const T* bias;  // null when none
  int64_t ys_z, ys_m, ys_n;
  int64_t bs_z, bs_m, bs_n;  // broadcast strides: 0 along bias dims of size 1
  float alpha, beta;

  struct Row {
    int64_t yo, bo;
  };
  __device__ Row row(int z, int r) const { return Row{z * ys_z + r * ys_m, z * bs_z + r * bs_m}; }
  __device__ __forceinline__ void store(const Row& w, int col, float acc) const {
    float v = acc;
    if (bias) v += to_f32(bias[w.bo + col * bs_n]);
    blend_store(y + w.yo + col * ys_n, alpha, v, beta);
  }
  __device__ __forceinline__ void store2(const Row& w, int col, float a0, float a1) const {
    store(w, col, a0);
    store(w, col + 1, a1);
  }
};

// Threads of a warp walk the depth when it is the closer dim in memory (f32 kernel mapping).
bool depth_fast(int64_t rows, int64_t depth, int64_t rs, int64_t ks) {
  if (depth == 1) return false;
  if (rows == 1) return true;
  return ks <= rs;
}

template <class T, bool kDF>
gemm::RowsLoader<T, kDF> operand(const void* p, int64_t rows, int64_t depth, int64_t rs,
                                 int64_t ks, int64_t zs) {
  gemm::RowsLoader<T, kDF> l;
  l.p = static_cast<const T*>(p);
  l.rows = static_cast<int>(rows);
  l.depth = static_cast<int>(depth);
  l.rs = rs;
  l.ks = ks;
  l.zs = zs;
  l.vec = std::is_same<T, __half>::value && ks == 1 && rs % 8 == 0 && zs % 8 == 0 &&
          reinterpret_cast<uintptr_t>(p) % 16 == 0;
  return l;
}

struct Operand {
  const void* p;
  int64_t rows, depth, rs, ks, zs;
};

// ---- GEMV -------------------------------------------------------------------------------------
// y[m, n] = sum_k a[m, k] * b[n, k] for M <= 8 rows of a (the batch of a fully connected layer)
// and N rows of b (its weights), both contiguous along k. The weights are the traffic: each is
// read once, and the kernel is built to have as much of them in flight at once as the GPU holds.
//  - A warp streams the depth of one weight row (two when a has 3-8 rows, so that each chunk of a
//    serves two of b) in chunks: 16 bytes when every row is 16-byte aligned, else one element;
//    lane l takes chunks l, l + 32, ...; each lane issues 8 loads of b before it uses any (at
//    batch 1 also the 8 chunks of a they meet), and keeps the sums of the M <= 8 rows in
//    registers.
//  - `wpc` warps (1, 2, 4 or 8) share a weight row, each taking every wpc-th 32-chunk stretch of
//    it; a block of 8 warps covers 8 / wpc warps' rows. run_gemv picks wpc so that a warp has at
//    most one unrolled pass over its part (or, on long rows, as few as 8 warps allow) and so that
//    the warps fill the GPU when N alone does not.
//  - Sums are reduced in a fixed order (lane butterfly, then the row's warps in order through
//    shared memory): results are deterministic. The first warp of the row applies the epilogue,
//    one lane per output.
//  - The grid is capped at 2-3 blocks per SM; blocks loop over the row groups beyond it.
// The rows of a are read through the read-only cache (every warp of an SM reads the same ones);
// the weights bypass L1 so that they do not evict them.

constexpr int kGemvMaxRows = 8;
constexpr int kGemvThreads = 256;
constexpr int kGemvWarps = kGemvThreads / 32;

// 16 bytes of T as floats.
__device__ __forceinline__ void unpack(const uint4& v, float (&f)[4], float) {
  f[0] = __uint_as_float(v.x);
  f[1] = __uint_as_float(v.y);
  f[2] = __uint_as_float(v.z);
  f[3] = __uint_as_float(v.w);
}
__device__ __forceinline__ void unpack(const uint4& v, float (&f)[8], __half) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    // Through the bit patterns, not a pointer cast, so that w stays in registers.
    f[2 * i] = __half2float(__ushort_as_half(static_cast<unsigned short>(w[i] & 0xffffu)));
    f[2 * i + 1] = __half2float(__ushort_as_half(static_cast<unsigned short>(w[i] >> 16)));
  }
}

// 16 bytes read once: through the non-coherent path without allocating in L1.
__device__ __forceinline__ uint4 load_streaming(const uint4* p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return v;
#else
  return __ldg(p);
#endif
}

// One chunk of a K-contiguous row: 16 bytes (kVec) or one element.
template <class T, bool kVec>
struct GemvChunk;
template <class T>
struct GemvChunk<T, true> {
  static constexpr int V = 16 / sizeof(T);
  uint4 raw;
  __device__ __forceinline__ void load_streaming_at(const T* row, int c) {
    raw = load_streaming(reinterpret_cast<const uint4*>(row) + c);
  }
  __device__ __forceinline__ void load_cached_at(const T* row, int c) {
    raw = __ldg(reinterpret_cast<const uint4*>(row) + c);
  }
  __device__ __forceinline__ void to_float(float (&f)[V]) const { unpack(raw, f, T()); }
};
template <class T>
struct GemvChunk<T, false> {
  static constexpr int V = 1;
  T raw;
  __device__ __forceinline__ void load_streaming_at(const T* row, int c) { raw = __ldg(row + c); }
  __device__ __forceinline__ void load_cached_at(const T* row, int c) { raw = __ldg(row + c); }
  __device__ __forceinline__ void to_float(float (&f)[1]) const { f[0] = to_f32(raw); }
};

// Per kernel built for MT rows of a: R weight rows per warp (two from MT = 4 on: each chunk of a
// read from L1 then serves two weight chunks, halving the L1 traffic that batch rows multiply), U
// unrolled loads per weight row (R x U = 8 chunks of b in flight per lane), and the blocks per SM
// its registers are bounded for (3 or 2: 85 or 128 registers, no spills on sm_87 and sm_90); the
// grid is capped at that many blocks per SM.
template <int MT>
struct GemvShape {
  static constexpr int R = MT <= 2 ? 1 : 2;
  static constexpr int U = 8 / R;
  // One row of a (batch 1): its U chunks are loaded together, before the first is used, so that
  // a pass waits for them once (the SASS had each chunk's load right before its four FMAs, in a
  // chain: eight L1 or, for a warp's first pass on an SM, L2 round trips). Their registers bound
  // the kernel to two blocks per SM.
  static constexpr bool kPrefetchA = MT == 1;
  static constexpr int kBlocksPerSm = MT <= 2 && !kPrefetchA ? 3 : 2;
};

// MT: the rows of a the kernel is built for (1, 2, 4, 8); M <= MT are real, the others repeat
// row M - 1 (read from L1, never stored).
template <class T, int MT, bool kVec, class E>
__global__ void __launch_bounds__(kGemvThreads, GemvShape<MT>::kBlocksPerSm)
    gemv_kernel(const T* a, int64_t as_z, int64_t as_m, const T* b, int64_t bs_z, int64_t bs_n,
                E ep, int M, int N, int K, int wpc) {
  using Chunk = GemvChunk<T, kVec>;
  constexpr int V = Chunk::V;
  constexpr int R = GemvShape<MT>::R;
  constexpr int U = GemvShape<MT>::U;
  __shared__ float partial[kGemvWarps][R][MT];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int rows_per_block = kGemvWarps / wpc * R;
  const int part = warp % wpc;
  const int z = blockIdx.y;
  const T* az = a + z * as_z;
  const int chunks = K / V;
  const int step = wpc * 32;
  const int groups = (N + rows_per_block - 1) / rows_per_block;
  for (int g = blockIdx.x; g < groups; g += gridDim.x) {
    const int col0 = g * rows_per_block + warp / wpc * R;  // the warp's first weight row
    // Weight rows past N repeat the last one (read, never stored).
    const T* bz[R];
#pragma unroll
    for (int r = 0; r < R; ++r)
      bz[r] = b + z * bs_z + static_cast<int64_t>(col0 + r < N ? col0 + r : N - 1) * bs_n;
    float sum[R][MT];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int m = 0; m < MT; ++m) sum[r][m] = 0.f;
    if (col0 < N) {
      for (int c0 = part * 32 + lane; c0 < chunks; c0 += U * step) {
        Chunk bc[R][U];
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
          for (int r = 0; r < R; ++r)
            if (c0 + u * step < chunks) bc[r][u].load_streaming_at(bz[r], c0 + u * step);
        if constexpr (GemvShape<MT>::kPrefetchA) {
          Chunk ac[U];
#pragma unroll
          for (int u = 0; u < U; ++u)
            if (c0 + u * step < chunks) ac[u].load_cached_at(az, c0 + u * step);
#pragma unroll
          for (int u = 0; u < U; ++u) {
            if (c0 + u * step >= chunks) continue;
            float bf[V], af[V];
            bc[0][u].to_float(bf);
            ac[u].to_float(af);
#pragma unroll
            for (int i = 0; i < V; ++i) sum[0][0] = fmaf(af[i], bf[i], sum[0][0]);
          }
        } else {
#pragma unroll
          for (int u = 0; u < U; ++u) {
            if (c0 + u * step >= chunks) continue;
            float bf[R][V];
#pragma unroll
            for (int r = 0; r < R; ++r) bc[r][u].to_float(bf[r]);
#pragma unroll
            for (int m = 0; m < MT; ++m) {
              Chunk ac;
              ac.load_cached_at(az + (m < M ? m : M - 1) * as_m, c0 + u * step);
              float af[V];
              ac.to_float(af);
#pragma unroll
              for (int r = 0; r < R; ++r)
#pragma unroll
                for (int i = 0; i < V; ++i) sum[r][m] = fmaf(af[i], bf[r][i], sum[r][m]);
            }
          }
        }
      }
      // The depth past the last whole 16-byte chunk (fewer than V elements).
      if (kVec)
        for (int k = chunks * V + part * 32 + lane; k < K; k += step) {
          float bk[R];
#pragma unroll
          for (int r = 0; r < R; ++r) bk[r] = to_f32(bz[r][k]);
#pragma unroll
          for (int m = 0; m < MT; ++m) {
            const float ak = to_f32(az[(m < M ? m : M - 1) * as_m + k]);
#pragma unroll
            for (int r = 0; r < R; ++r) sum[r][m] = fmaf(ak, bk[r], sum[r][m]);
          }
        }
    }
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) sum[r][m] += __shfl_xor_sync(0xffffffffu, sum[r][m], o);
    if (wpc > 1) {
      if (lane == 0)
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
          for (int m = 0; m < MT; ++m) partial[warp][r][m] = sum[r][m];
      __syncthreads();
      if (part == 0)
        for (int p = 1; p < wpc; ++p)
#pragma unroll
          for (int r = 0; r < R; ++r)
#pragma unroll
            for (int m = 0; m < MT; ++m) sum[r][m] += partial[warp + p][r][m];
      __syncthreads();  // partial is written again by the next row group
    }
    // Lane r * MT + m stores row m of weight row col0 + r.
    if (part == 0 && lane < R * MT) {
      const int r = lane / MT, m = lane % MT;
      float v = 0.f;
#pragma unroll
      for (int rr = 0; rr < R; ++rr)
#pragma unroll
        for (int mm = 0; mm < MT; ++mm)
          if (rr == r && mm == m) v = sum[rr][mm];
      if (m < M && col0 + r < N) ep.store(ep.row(z, m), col0 + r, v);
    }
  }
}

// GEMV applies when M is small and both operands are contiguous along the depth; it reads them
// 16 bytes at a time when their rows and batches are 16-byte aligned, one element otherwise.
bool gemv_applies(const Operand& a, const Operand& b) {
  return a.rows <= kGemvMaxRows && a.ks == 1 && b.ks == 1 && b.rows <= (int64_t(1) << 30) &&
         a.depth <= (int64_t(1) << 30);
}

template <class T>
bool gemv_vector_aligned(const Operand& o) {
  constexpr int64_t V = 16 / sizeof(T);
  return o.ks == 1 && (o.rows == 1 || o.rs % V == 0) && o.zs % V == 0 &&
         reinterpret_cast<uintptr_t>(o.p) % 16 == 0;
}

// Warps per weight row: enough that a warp's part of the row takes at most one unrolled pass
// (U chunks per lane), and more while the warps cannot fill the GPU and each would still have a
// whole 32-chunk stretch. `warp_rows`: how many warps the weight rows take with one warp per row
// (rows / R, times the batch).
int gemv_warps_per_row(int64_t chunks, int64_t warp_rows, int64_t sms, int unroll) {
  const int64_t fill = sms * kGemvWarps;  // warps: a block on every SM
  int wpc = 1;
  while (wpc < kGemvWarps && (chunks > int64_t(wpc) * 32 * unroll ||
                              (warp_rows * wpc < fill && chunks >= int64_t(wpc) * 64)))
    wpc *= 2;
  return wpc;
}

template <class T, int MT, bool kVec>
void launch_gemv(const Handle& h, const Operand& a, const Operand& b, const GemmEpi<T>& ep,
                 int64_t batch) {
  using Shape = GemvShape<MT>;
  const int n = static_cast<int>(b.rows);
  constexpr int64_t V = GemvChunk<T, kVec>::V;
  const int64_t sms = h.sm_count() > 0 ? h.sm_count() : 16;
  const int wpc = gemv_warps_per_row(a.depth / V + (a.depth % V != 0),
                                     (n + Shape::R - 1) / Shape::R * batch, sms, Shape::U);
  const int rows_per_block = kGemvWarps / wpc * Shape::R;
  const int64_t groups = (n + rows_per_block - 1) / rows_per_block;
  const int64_t cap = std::max<int64_t>(1, sms * Shape::kBlocksPerSm / batch);
  const unsigned gx = static_cast<unsigned>(std::min(groups, cap));
  gemv_kernel<T, MT, kVec, GemmEpi<T>><<<dim3(gx, static_cast<unsigned>(batch)), kGemvThreads,
                                         0, h.stream()>>>(
      static_cast<const T*>(a.p), a.zs, a.rows == 1 ? 0 : a.rs, static_cast<const T*>(b.p), b.zs,
      b.rs, ep, static_cast<int>(a.rows), n, static_cast<int>(a.depth), wpc);
}

template <class T, bool kVec>
void launch_gemv_rows(const Handle& h, const Operand& a, const Operand& b, const GemmEpi<T>& ep,
                      int64_t batch) {
  if (a.rows <= 1)
    launch_gemv<T, 1, kVec>(h, a, b, ep, batch);
  else if (a.rows <= 2)
    launch_gemv<T, 2, kVec>(h, a, b, ep, batch);
  else if (a.rows <= 4)
    launch_gemv<T, 4, kVec>(h, a, b, ep, batch);
  else
    launch_gemv<T, 8, kVec>(h, a, b, ep, batch);
}

template <class T>
Status run_gemv(const Handle& h, const Operand& a, const Operand& b, const GemmEpi<T>& ep,
                int64_t batch) {
  if (batch > 65535)
    return make_status(StatusCode::NOT_SUPPORTED, "gemm_forward: batch %lld over 65535",
                       static_cast<long long>(batch));
  if (gemv_vector_aligned<T>(a) && gemv_vector_aligned<T>(b))
    launch_gemv_rows<T, true>(h, a, b, ep, batch);
  else
    launch_gemv_rows<T, false>(h, a, b, ep, batch);
  return launch_status("gemm_forward");
}

template <class T, bool kDFA, bool kDFB>
Status run(const Handle& h, const Operand& a, const Operand& b, const GemmEpi<T>& ep,
           int64_t batch) {
  return gemm::run_gemm(h, operand<T, kDFA>(a.p, a.rows, a.depth, a.rs, a.ks, a.zs),
                        operand<T, kDFB>(b.p, b.rows, b.depth, b.rs, b.ks, b.zs), ep, a.rows,
                        b.rows, a.depth, batch, "gemm_forward");
}

template <class T>
Status dispatch(const Handle& h, const Operand& a, const Operand& b, const GemmEpi<T>& ep,
                int64_t batch) {
  if (gemv_applies(a, b)) return run_gemv<T>(h, a, b, ep, batch);
  if constexpr (std::is_same<T, __half>::value) {
    const gemm::RowsLoader<T, false> la = operand<T, false>(a.p, a.rows, a.depth, a.rs, a.ks, a.zs);
    const gemm::RowsLoader<T, false> lb = operand<T, false>(b.p, b.rows, b.depth, b.rs, b.ks, b.zs);
    // depth % 8: the tensor-core engine copies whole 16-byte chunks of depth (RowsAsyncIter).
    if (la.vec && lb.vec && a.depth % 8 == 0 && gemm::mma_available(h) && a.rows <= gemm::kMaxDim &&
        b.rows <= gemm::kMaxDim && a.depth <= gemm::kMaxDim && batch <= gemm::kMaxDim &&
        (b.rows + 31) / 32 <= 65535) {
      // No workspace here: the heuristic's tile without split-K.
      const gemm::GemmConfig c =
          gemm::choose_mma_config(h, a.rows, b.rows, a.depth, batch, false);
      return gemm::run_gemm_mma(h, la, lb, ep, a.rows, b.rows, a.depth, batch, c, nullptr,
                                "gemm_forward");
    }
    return run<T, false, false>(h, a, b, ep, batch);  // the register-staged kernel
  } else {
  const bool da = depth_fast(a.rows, a.depth, a.rs, a.ks);
  const bool db = depth_fast(b.rows, b.depth, b.rs, b.ks);
  if (da && db) return run<T, true, true>(h, a, b, ep, batch);
  if (da) return run<T, true, false>(h, a, b, ep, batch);
  if (db) return run<T, false, true>(h, a, b, ep, batch);
  return run<T, false, false>(h, a, b, ep, batch);
  }
}

template <class T>
Status gemm_typed(const Handle& h, const GemmDesc& gemm, float alpha, const TensorDesc& ad,
                  const void* a, const TensorDesc& bd, const void* b, const TensorDesc* biasd,
                  const void* bias, float beta, const TensorDesc& yd, void* y) {
  const int rank = yd.rank();
  const int r0 = rank - 2, r1 = rank - 1;
  const int64_t batch = rank == 3 ? yd.dim(0) : 1;
  Operand oa;  // rows of op(a), depth K
  oa.p = a;
  oa.rows = yd.dim(r0);
  oa.depth = gemm.trans_a ? ad.dim(r0) : ad.dim(r1);
  oa.rs = gemm.trans_a ? ad.stride(r1) : ad.stride(r0);
  oa.ks = gemm.trans_a ? ad.stride(r0) : ad.stride(r1);
  oa.zs = rank == 3 && ad.dim(0) > 1 ? ad.stride(0) : 0;
  Operand ob;  // op(b) by its N columns, depth K
  ob.p = b;
  ob.rows = yd.dim(r1);
  ob.depth = oa.depth;
  ob.rs = gemm.trans_b ? bd.stride(r0) : bd.stride(r1);
  ob.ks = gemm.trans_b ? bd.stride(r1) : bd.stride(r0);
  ob.zs = rank == 3 && bd.dim(0) > 1 ? bd.stride(0) : 0;
  GemmEpi<T> ep;
  ep.y = static_cast<T*>(y);
  ep.bias = static_cast<const T*>(bias);
  ep.ys_z = rank == 3 ? yd.stride(0) : 0;
  ep.ys_m = yd.stride(r0);
  ep.ys_n = yd.stride(r1);
  ep.bs_z = ep.bs_m = ep.bs_n = 0;
  if (bias) {
    const auto bs = [&](int i) { return biasd->dim(i) == 1 ? int64_t(0) : biasd->stride(i); };
    if (rank == 3) ep.bs_z = bs(0);
    ep.bs_m = bs(r0);
    ep.bs_n = bs(r1);
  }
  ep.alpha = alpha;
  ep.beta = beta;
  if (oa.depth == 0) return Status();  // unreachable: validated dims are >= 1
  return dispatch<T>(h, oa, ob, ep, batch);
}

}  // namespace

Status gemm_forward(const Handle& h, const GemmDesc& gemm, float alpha, const TensorDesc& a_desc,
                    const void* a, const TensorDesc& b_desc, const void* b,
                    const TensorDesc* bias_desc, const void* bias, float beta,
                    const TensorDesc& y_desc, void* y) {
  if (y_desc.dtype() == DType::F32)
    return gemm_typed<float>(h, gemm, alpha, a_desc, a, b_desc, b, bias_desc, bias, beta, y_desc,
                             y);
  return gemm_typed<__half>(h, gemm, alpha, a_desc, a, b_desc, b, bias_desc, bias, beta, y_desc,
                            y);
}

JET_CUDA_MODULE(gemm)

}  // namespace cuda
}  // namespace jet
