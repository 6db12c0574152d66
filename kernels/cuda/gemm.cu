// CUDA gemm_forward: A and B are strided matrices read in place (a transpose is a swap of
// strides), one z-slice of the grid per batch entry (a batch dim of 1 broadcasts through a zero
// batch stride), bias and alpha/beta applied in the epilogue. Three engines:
//  - GEMV (M <= 8 with both operands contiguous along K, the fully connected layer at small
//    batch): warps stream the rows of B once with 16-byte loads, K split across the warps of a
//    block when N alone cannot fill the GPU;
//  - the tensor-core core (gemm_mma.cuh) for f16 operands it can copy 16 bytes at a time;
//  - the register-staged tiled engine (gemm_core.cuh) for everything else.
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

constexpr int kGemvMaxRows = 8;
constexpr int kGemvThreads = 256;

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
    const float2 p = __half22float2(*reinterpret_cast<const __half2*>(&w[i]));
    f[2 * i] = p.x;
    f[2 * i + 1] = p.y;
  }
}

// Block: 8 warps; `wpc` warps share one column (a row of B), each taking every wpc-th 16-byte
// chunk of the depth; the block's columns are 8 / wpc consecutive ones. A warp keeps M (<= 8)
// sums per lane, reduces them across its lanes and, with wpc > 1, across the column's warps in
// shared memory; the first warp of the column applies the epilogue.
template <class T, class E>
__global__ void __launch_bounds__(kGemvThreads)
    gemv_kernel(const T* a, int64_t as_z, int64_t as_m, const T* b, int64_t bs_z, int64_t bs_n,
                E ep, int M, int N, int K, int wpc) {
  constexpr int V = 16 / sizeof(T);  // elements per 16-byte chunk
  __shared__ float partial[kGemvThreads / 32][kGemvMaxRows];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int cols_per_block = (kGemvThreads / 32) / wpc;
  const int col = blockIdx.x * cols_per_block + warp / wpc, part = warp % wpc;
  const int z = blockIdx.y;
  const T* bz = b + z * bs_z + static_cast<int64_t>(col < N ? col : 0) * bs_n;
  const T* az = a + z * as_z;
  float sum[kGemvMaxRows];
#pragma unroll
  for (int m = 0; m < kGemvMaxRows; ++m) sum[m] = 0.f;
  const int chunks = K / V;
  if (col < N) {
    // Four chunks of B in flight per lane before they are used.
    int c = part * 32 + lane;
    const int step = wpc * 32;
    for (; c + 3 * step < chunks; c += 4 * step) {
      uint4 bv[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) bv[u] = __ldg(reinterpret_cast<const uint4*>(bz) + c + u * step);
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        float bf[V];
        unpack(bv[u], bf, T());
#pragma unroll
        for (int m = 0; m < kGemvMaxRows; ++m) {
          if (m >= M) break;
          float af[V];
          unpack(__ldg(reinterpret_cast<const uint4*>(az + m * as_m) + c + u * step), af, T());
#pragma unroll
          for (int i = 0; i < V; ++i) sum[m] = fmaf(af[i], bf[i], sum[m]);
        }
      }
    }
    for (; c < chunks; c += step) {
      float bf[V];
      unpack(__ldg(reinterpret_cast<const uint4*>(bz) + c), bf, T());
#pragma unroll
      for (int m = 0; m < kGemvMaxRows; ++m) {
        if (m >= M) break;
        float af[V];
        unpack(__ldg(reinterpret_cast<const uint4*>(az + m * as_m) + c), af, T());
#pragma unroll
        for (int i = 0; i < V; ++i) sum[m] = fmaf(af[i], bf[i], sum[m]);
      }
    }
    // The depth's tail past the last whole chunk, element by element.
    for (int k = chunks * V + part * 32 + lane; k < K; k += step) {
      const float bk = to_f32(bz[k]);
      for (int m = 0; m < M; ++m) sum[m] = fmaf(to_f32(az[m * as_m + k]), bk, sum[m]);
    }
  }
#pragma unroll
  for (int m = 0; m < kGemvMaxRows; ++m)
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) sum[m] += __shfl_xor_sync(0xffffffffu, sum[m], o);
  if (wpc > 1) {
    if (lane == 0)
#pragma unroll
      for (int m = 0; m < kGemvMaxRows; ++m) partial[warp][m] = sum[m];
    __syncthreads();
    if (part != 0) return;
    for (int p = 1; p < wpc; ++p)
#pragma unroll
      for (int m = 0; m < kGemvMaxRows; ++m) sum[m] += partial[warp + p][m];
  }
  if (lane != 0 || col >= N) return;
  for (int m = 0; m < M; ++m) ep.store(ep.row(z, m), col, sum[m]);
}

// GEMV applies when M is small and both operands are contiguous along the depth with rows and
// batches 16-byte aligned.
template <class T>
bool gemv_applies(const Operand& a, const Operand& b) {
  constexpr int64_t V = 16 / sizeof(T);
  const auto aligned = [&](const Operand& o) {
    return o.ks == 1 && (o.rows == 1 || o.rs % V == 0) && o.zs % V == 0 &&
           reinterpret_cast<uintptr_t>(o.p) % 16 == 0;
  };
  return a.rows <= kGemvMaxRows && b.rows <= (int64_t(1) << 30) && a.depth <= (int64_t(1) << 30) &&
         aligned(a) && aligned(b);
}

template <class T>
Status run_gemv(const Handle& h, const Operand& a, const Operand& b, const GemmEpi<T>& ep,
                int64_t batch) {
  const int n = static_cast<int>(b.rows);
  // Split the depth across more warps per column until the blocks fill the GPU twice over.
  const int64_t sms = h.sm_count() > 0 ? h.sm_count() : 16;
  int wpc = 1;
  while (wpc < 8 && (n * batch * wpc + 7) / 8 < 2 * sms && a.depth / (wpc * 2) >= 256) wpc *= 2;
  const int cols_per_block = 8 / wpc;
  const unsigned gx = static_cast<unsigned>((n + cols_per_block - 1) / cols_per_block);
  if (batch > 65535)
    return make_status(StatusCode::NOT_SUPPORTED, "gemm_forward: batch %lld over 65535",
                       static_cast<long long>(batch));
  gemv_kernel<T, GemmEpi<T>><<<dim3(gx, static_cast<unsigned>(batch)), kGemvThreads, 0,
                               h.stream()>>>(
      static_cast<const T*>(a.p), a.zs, a.rows == 1 ? 0 : a.rs, static_cast<const T*>(b.p), b.zs,
      b.rs, ep, static_cast<int>(a.rows), n, static_cast<int>(a.depth), wpc);
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
  if (gemv_applies<T>(a, b)) return run_gemv<T>(h, a, b, ep, batch);
  if constexpr (std::is_same<T, __half>::value) {
    const gemm::RowsLoader<T, false> la = operand<T, false>(a.p, a.rows, a.depth, a.rs, a.ks, a.zs);
    const gemm::RowsLoader<T, false> lb = operand<T, false>(b.p, b.rows, b.depth, b.rs, b.ks, b.zs);
    if (la.vec && lb.vec && gemm::mma_available(h) && a.rows <= gemm::kMaxDim &&
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

}  // namespace cuda
}  // namespace jet
