// WINOGRAD convolution on CUDA: F(2x2, 3x3) and F(4x4, 3x3) for 2D 3x3 filters, stride 1,
// dilation 1, any groups, pads, layouts and both modes.
//
// With m x m output tiles over the output plane (P tiles over all images), alpha = m + 2 points a
// dimension and alpha^2 transform positions xi:
//   U[xi][k][c]  = (G g_kc G^T)[xi]                  filter transform      (winograd_filter)
//   V[xi][c][p]  = (B^T d_cp B)[xi]                  input tile transform  (winograd_input)
//   M[xi][k][p]  = sum_c U[xi][k][c] V[xi][c][p]     a GEMM per (xi, group) (winograd_gemm*)
//   y tile       = A^T M[.][k][p] A                  output transform -> conv_store
// All three live in the workspace as f32 whatever the storage type, so f16 problems transform
// and accumulate in f32. Channel indices are global (c = group * cg + cc, k = group * kg + kk),
// so a group's slice of U, V and M is a contiguous block and the GEMM needs no gather.
// F(4x4) multiplies 2.25 times an output and channel against F(2x2)'s 4, and its V and M hold
// 2.25 floats an input / output element against 4, but it is less accurate: its transforms have
// coefficients up to 8 and 1/24 (in f32 up to 1.6e-5 of the output's magnitude at 20-60
// channels, growing with depth; ~1e-6 for F(2x2)), so it is a tactic (3, 4, 6) that f32 callers opt
// into (conv_forward_tactic_is_approximate), tactic 0's choice only with ConvMath::ALLOW_APPROXIMATE.
#include <type_traits>

#include "conv_algos.cuh"
#include "gemm_core.cuh"

namespace jet {
namespace cuda {
namespace {

// The 1D transforms of F(m, 3) (Lavin and Gray, "Fast Algorithms for Convolutional Neural
// Networks", 2015): filter() is G (alpha x 3), input() B^T (alpha x alpha), output() A^T
// (m x alpha). The 2D forms apply them along one dimension, then the other.
template <int M>
struct WinoTx;
template <>
struct WinoTx<2> {  // points 0, 1, -1, infinity
  static constexpr int A = 4;
  __device__ static void filter(const float* f, float* o) {
    o[0] = f[0];
    o[1] = 0.5f * (f[0] + f[1] + f[2]);
    o[2] = 0.5f * (f[0] - f[1] + f[2]);
    o[3] = f[2];
  }
  __device__ static void input(const float* d, float* o) {
    o[0] = d[0] - d[2];
    o[1] = d[1] + d[2];
    o[2] = d[2] - d[1];
    o[3] = d[1] - d[3];
  }
  __device__ static void output(const float* t, float* o) {
    o[0] = t[0] + t[1] + t[2];
    o[1] = t[1] - t[2] - t[3];
  }
};
template <>
struct WinoTx<4> {  // points 0, 1, -1, 2, -2, infinity
  static constexpr int A = 6;
  __device__ static void filter(const float* f, float* o) {
    o[0] = 0.25f * f[0];
    o[1] = -(f[0] + f[1] + f[2]) * (1.f / 6.f);
    o[2] = -(f[0] - f[1] + f[2]) * (1.f / 6.f);
    o[3] = f[0] * (1.f / 24.f) + f[1] * (1.f / 12.f) + f[2] * (1.f / 6.f);
    o[4] = f[0] * (1.f / 24.f) - f[1] * (1.f / 12.f) + f[2] * (1.f / 6.f);
    o[5] = f[2];
  }
  __device__ static void input(const float* d, float* o) {
    o[0] = 4.f * d[0] - 5.f * d[2] + d[4];
    o[1] = -4.f * (d[1] + d[2]) + d[3] + d[4];
    o[2] = 4.f * (d[1] - d[2]) - d[3] + d[4];
    o[3] = -2.f * (d[1] - d[3]) - d[2] + d[4];
    o[4] = 2.f * (d[1] - d[3]) - d[2] + d[4];
    o[5] = 4.f * d[1] - 5.f * d[3] + d[5];
  }
  __device__ static void output(const float* t, float* o) {
    o[0] = t[0] + t[1] + t[2] + t[3] + t[4];
    o[1] = t[1] - t[2] + 2.f * (t[3] - t[4]);
    o[2] = t[1] + t[2] + 4.f * (t[3] + t[4]);
    o[3] = t[1] - t[2] + 8.f * (t[3] - t[4]) + t[5];
  }
};

// The output tile of a WINOGRAD tactic: 1, 2 and 5 F(2x2), 3, 4 and 6 F(4x4); 0 (the heuristic)
// F(2x2), or F(4x4) where the descriptor allows approximate math (ConvMath).
int wino_tile(const ConvGeom& g) {
  if (g.tactic == 0) return g.approximate ? 4 : 2;
  return g.tactic == 3 || g.tactic == 4 || g.tactic == 6 ? 4 : 2;
}

// Sizes of the three workspace arrays, in floats.
struct WinoSizes {
  int64_t tiles_h, tiles_w, p;  // output tiles per image along H and W; P = N * tiles
  int64_t positions;            // alpha^2
  int64_t u, v, m;
  // Channels-last x (y): V (M) is stored [xi][p][c] ([xi][p][k]) instead of [xi][c][p]
  // ([xi][k][p]), so that the transform reading x (writing y) walks channels across threads
  // and touches both arrays contiguously.
  bool v_pc, m_pk;
};

WinoSizes wino_sizes(const ConvGeom& g) {
  const int t = wino_tile(g);
  WinoSizes s;
  s.tiles_h = (g.out[1] + t - 1) / t;
  s.tiles_w = (g.out[2] + t - 1) / t;
  s.p = g.n * s.tiles_h * s.tiles_w;
  s.positions = (t + 2) * (t + 2);
  s.u = s.positions * g.k * g.cg;
  s.v = s.positions * g.c * s.p;
  s.m = s.positions * g.k * s.p;
  s.v_pc = g.xs_c == 1 && g.c > 1;
  s.m_pk = g.ys_c == 1 && g.k > 1;
  return s;
}

// U[xi][k][cc] = G g G^T.
template <class T, int M>
__global__ void winograd_filter(ConvGeom g, const T* __restrict__ w, float* __restrict__ u) {
  constexpr int A = WinoTx<M>::A;
  const int64_t total = g.k * g.cg;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t k = i / g.cg, cc = i % g.cg;
    float ft[3][3];  // transposed: ft[s][r] = g[r][s]
    for (int r = 0; r < 3; ++r)
      for (int s = 0; s < 3; ++s) {
        const int fr = g.flip ? 2 - r : r, fs = g.flip ? 2 - s : s;
        ft[s][r] = to_f32(w[k * g.ws_k + cc * g.ws_c + fr * g.ws[1] + fs * g.ws[2]]);
      }
    float gf[3][A];  // (G g)^T: gf[s][a]
    for (int s = 0; s < 3; ++s) WinoTx<M>::filter(ft[s], gf[s]);
    for (int a = 0; a < A; ++a) {
      const float col[3] = {gf[0][a], gf[1][a], gf[2][a]};
      float row[A];
      WinoTx<M>::filter(col, row);
      for (int b = 0; b < A; ++b) u[(a * A + b) * total + i] = row[b];
    }
  }
}

// V[xi][c][p] = B^T d B; d is the alpha x alpha input patch at (m * tile - pad), zero outside x.
// The thread index runs over V's layout ([c][p] or [p][c]), so writes are coalesced, and so are
// the reads of channels-last x.
template <class T, int M>
__global__ void winograd_input(ConvGeom g, WinoSizes s, const T* __restrict__ x,
                               float* __restrict__ v) {
  constexpr int A = WinoTx<M>::A;
  const int64_t total = g.c * s.p;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = s.v_pc ? i % g.c : i / s.p;
    const int64_t p = s.v_pc ? i / g.c : i % s.p;
    const int64_t tw = p % s.tiles_w;
    const int64_t th = (p / s.tiles_w) % s.tiles_h;
    const int64_t n = p / (s.tiles_w * s.tiles_h);
    const int64_t ih0 = th * M - g.pad[1], iw0 = tw * M - g.pad[2];
    const T* xp = x + n * g.xs_n + c * g.xs_c;
    float dt[A][A];  // transposed: dt[b][a] = d[a][b]
    for (int a = 0; a < A; ++a) {
      const int64_t ih = ih0 + a;
      const bool row_in = ih >= 0 && ih < g.in[1];
      for (int b = 0; b < A; ++b) {
        const int64_t iw = iw0 + b;
        dt[b][a] = row_in && iw >= 0 && iw < g.in[2] ? to_f32(xp[ih * g.xs[1] + iw * g.xs[2]]) : 0.f;
      }
    }
    float bd[A][A];  // (B^T d)^T: bd[b][a]
    for (int b = 0; b < A; ++b) WinoTx<M>::input(dt[b], bd[b]);
    for (int a = 0; a < A; ++a) {
      float col[A], row[A];
      for (int b = 0; b < A; ++b) col[b] = bd[b][a];
      WinoTx<M>::input(col, row);
      for (int b = 0; b < A; ++b) v[(a * A + b) * total + i] = row[b];
    }
  }
}

// Batched f32 GEMM, batch = (xi, group): M[kg x P] = U[kg x cg] * V[cg x P]. U is row-major;
// V and M are addressed through strides (depth/column for V, row/column for M) so that both of
// their layouts work. 64 x 64 block tile, 16-deep K steps, 256 threads with a 4 x 4 register
// tile each.
constexpr int kTm = 64, kTn = 64, kTk = 16;

struct WinoGemm {
  int64_t groups, kg, cg, p, batches;
  int64_t u_xi, u_grp;              // U offsets of a batch: xi * u_xi + group * u_grp
  int64_t v_xi, v_grp, v_d, v_col;  // V: batch offsets, then depth and column strides
  int64_t m_xi, m_grp, m_row, m_col;
  // Every A (U) row, every B (V) run of 4 a thread loads starts 16-byte aligned (winograd_gemm_big
  // then loads them as float4s): the arrays' bases and every stride of the run's start aligned.
  bool a_vec, b_vec;
  // M's rows are contiguous (m_col 1) and every run of 4 a thread stores starts 16-byte aligned:
  // winograd_gemm_big stores them as float4s.
  bool m_vec;

  // Batch b's operands: transform position b / groups, group b % groups.
  __device__ const float* u_of(const float* u, int64_t b) const { return u + b / groups * u_xi + b % groups * u_grp; }
  __device__ const float* v_of(const float* v, int64_t b) const { return v + b / groups * v_xi + b % groups * v_grp; }
  __device__ float* m_of(float* m, int64_t b) const { return m + b / groups * m_xi + b % groups * m_grp; }
};

// Calls tile(b, row0, col0) for every TM x TN tile of M this block owns: a grid-stride loop over
// all three grid dimensions, so any problem fits the launch limits. The bounds depend on the block
// only, so every thread reaches the same barriers inside tile().
template <int TM, int TN, class Tile>
__device__ void for_each_block_tile(const WinoGemm& q, Tile tile) {
  const int64_t row_step = static_cast<int64_t>(gridDim.y) * TM;
  const int64_t col_step = static_cast<int64_t>(gridDim.x) * TN;
  for (int64_t b = blockIdx.z; b < q.batches; b += gridDim.z)
    for (int64_t row0 = static_cast<int64_t>(blockIdx.y) * TM; row0 < q.kg; row0 += row_step)
      for (int64_t col0 = static_cast<int64_t>(blockIdx.x) * TN; col0 < q.p; col0 += col_step)
        tile(b, row0, col0);
}

__global__ void __launch_bounds__(256)
winograd_gemm(WinoGemm q, const float* __restrict__ u, const float* __restrict__ v,
              float* __restrict__ m) {
  __shared__ float as[kTk][kTm + 4];  // A tile, transposed: as[kk][row]
  __shared__ float bs[kTk][kTn + 4];
  const int tid = threadIdx.x;
  const int tx = tid % 16, ty = tid / 16;  // thread's 4x4 tile: rows ty*4.., cols tx*4..
  const bool b_cols_contiguous = q.v_col == 1;
  for_each_block_tile<kTm, kTn>(q, [&](int64_t b, int64_t row0, int64_t col0) {
    const float* a = q.u_of(u, b);
    const float* bm = q.v_of(v, b);
    float* c = q.m_of(m, b);
    float acc[4][4] = {};
    for (int64_t d0 = 0; d0 < q.cg; d0 += kTk) {
      // 1024 elements per tile, 4 per thread. A: consecutive threads walk the depth (the
      // contiguous dim of U); B: consecutive threads walk V's contiguous dim.
      for (int r = 0; r < 4; ++r) {
        const int e = tid + r * 256;
        const int ar = e / kTk, ad = e % kTk;
        const int64_t gr = row0 + ar, gd = d0 + ad;
        as[ad][ar] = gr < q.kg && gd < q.cg ? a[gr * q.cg + gd] : 0.f;
        const int bd = b_cols_contiguous ? e / kTn : e % kTk;
        const int bc = b_cols_contiguous ? e % kTn : e / kTk;
        const int64_t gd2 = d0 + bd, gc = col0 + bc;
        bs[bd][bc] = gd2 < q.cg && gc < q.p ? bm[gd2 * q.v_d + gc * q.v_col] : 0.f;
      }
      __syncthreads();
      for (int kk = 0; kk < kTk; ++kk) {
        float ra[4], rb[4];
        for (int i = 0; i < 4; ++i) ra[i] = as[kk][ty * 4 + i];
        for (int j = 0; j < 4; ++j) rb[j] = bs[kk][tx * 4 + j];
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j) acc[i][j] += ra[i] * rb[j];
      }
      __syncthreads();
    }
    for (int i = 0; i < 4; ++i) {
      const int64_t gr = row0 + ty * 4 + i;
      if (gr >= q.kg) break;
      for (int j = 0; j < 4; ++j) {
        const int64_t gc = col0 + tx * 4 + j;
        if (gc < q.p) c[gr * q.m_row + gc * q.m_col] = acc[i][j];
      }
    }
  });
}

// The same GEMM on TM x 128 block tiles (TM = 128, or 64 for the layers of at most 64 output
// channels, which a 128-row tile would leave half empty) with 8-deep steps: TM * 2 threads with an
// 8 x 8 register tile each (the f32 engine's fma_step_8x8, gemm_core.cuh), whose shared-memory
// reads are float4s (4 per 64 FMAs, against 8 scalar reads per 16 in winograd_gemm). The next
// step's tiles are loaded into registers during this step's FMAs and stored to the other half of
// a double buffer: one barrier a step. For the batch-32 layers, whose GEMMs are large: ResNet-50's
// f32 3x3 layers at N=32 spent most of their time in winograd_gemm.
constexpr int kBigTn = 128, kBigTk = 8;
constexpr int kBigPad = 4;  // row padding (fma_step_8x8's layout): transposed stores in distinct banks

// 256 / TM blocks an SM: 128 registers a thread at most, 16 warps an SM for both tiles.
template <int TM>
__global__ void __launch_bounds__(TM * 2, 256 / TM)
winograd_gemm_big(WinoGemm q, const float* __restrict__ u, const float* __restrict__ v,
                  float* __restrict__ m) {
  constexpr int kThreads = TM * 2;
  constexpr int kBRuns = kBigTk * kBigTn / (kThreads * 4);  // B's runs of 4 a thread per step
  __shared__ __align__(16) float as[2][kBigTk][TM + kBigPad];      // A, transposed: [kk][row]
  __shared__ __align__(16) float bs[2][kBigTk][kBigTn + kBigPad];  // B: [kk][col]
  const int tid = threadIdx.x;
  const int tx = tid % 16, ty = tid / 16;
  // Loads, runs of 4 elements a step. A (U's rows are depth-contiguous): row tid / 2, depths
  // (tid % 2) * 4 + 0..3. B with contiguous columns: depth tid / 32 (+ kThreads / 32 for the
  // second run of the 64-row tile), columns (tid % 32) * 4 + 0..3; with contiguous depth
  // (channels-last V): column tid / 2 (+ kThreads / 2), depths (tid % 2) * 4 + 0..3.
  const bool b_cols_contiguous = q.v_col == 1;
  const int a_row = tid / 2, a_d = (tid % 2) * 4;
  int b_d[kBRuns], b_col[kBRuns];
  for (int r = 0; r < kBRuns; ++r) {
    b_d[r] = b_cols_contiguous ? tid / 32 + r * (kThreads / 32) : (tid % 2) * 4;
    b_col[r] = b_cols_contiguous ? (tid % 32) * 4 : tid / 2 + r * (kThreads / 2);
  }
  for_each_block_tile<TM, kBigTn>(q, [&](int64_t b, int64_t row0, int64_t col0) {
    const float* a = q.u_of(u, b);
    const float* bm = q.v_of(v, b);
    float* c = q.m_of(m, b);
    // Per tile: each thread's first element of A and of each B run and how much of its 4 is in
    // range; per step only the depth is checked.
    const bool a_ok = row0 + a_row < q.kg;
    const float* pa = a + (a_ok ? row0 + a_row : 0) * q.cg + a_d;
    int b_cols[kBRuns];
    const float* pb[kBRuns];
    for (int r = 0; r < kBRuns; ++r) {
      const int64_t b_col_left = q.p - (col0 + b_col[r]);  // columns from the run's first on
      const bool b_ok = b_col_left > 0;
      b_cols[r] = b_cols_contiguous ? static_cast<int>(b_col_left < 4 ? (b_ok ? b_col_left : 0) : 4) : (b_ok ? 1 : 0);
      pb[r] = bm + (b_ok ? col0 + b_col[r] : 0) * q.v_col + b_d[r] * q.v_d;
    }
    float next_a[4], next_b[kBRuns][4];
    // A thread's 4 elements of each run are contiguous: one float4 where they are all in
    // range and aligned (q.a_vec, q.b_vec), else element by element with zeros outside.
    auto load4 = [](const float* p, int in_range, bool vec, float* out) {
      if (vec && in_range >= 4) {
        const float4 f = __ldg(reinterpret_cast<const float4*>(p));
        out[0] = f.x;
        out[1] = f.y;
        out[2] = f.z;
        out[3] = f.w;
      } else {
        for (int i = 0; i < 4; ++i) out[i] = i < in_range ? p[i] : 0.f;
      }
    };
    auto load = [&](int64_t d0) {
      const int64_t a_left = q.cg - d0 - a_d;  // depths from this thread's first on
      load4(pa + d0, a_ok ? static_cast<int>(a_left < 4 ? (a_left > 0 ? a_left : 0) : 4) : 0, q.a_vec, next_a);
      for (int r = 0; r < kBRuns; ++r) {
        const int64_t b_left = q.cg - d0 - b_d[r];
        if (b_cols_contiguous) {
          load4(pb[r] + d0 * q.v_d, b_left > 0 ? b_cols[r] : 0, q.b_vec, next_b[r]);
        } else {
          load4(pb[r] + d0, b_cols[r] > 0 ? static_cast<int>(b_left < 4 ? (b_left > 0 ? b_left : 0) : 4) : 0,
                q.b_vec, next_b[r]);
        }
      }
    };
    auto store = [&](int buf) {
      for (int i = 0; i < 4; ++i) {
        as[buf][a_d + i][a_row] = next_a[i];
        for (int r = 0; r < kBRuns; ++r) {
          if (b_cols_contiguous) {
            bs[buf][b_d[r]][b_col[r] + i] = next_b[r][i];
          } else {
            bs[buf][b_d[r] + i][b_col[r]] = next_b[r][i];
          }
        }
      }
    };
    float acc[8][8] = {};
    load(0);
    store(0);
    __syncthreads();
    int buf = 0;
    for (int64_t d0 = 0; d0 < q.cg; d0 += kBigTk) {
      const bool more = d0 + kBigTk < q.cg;
      if (more) load(d0 + kBigTk);
      gemm::fma_step_8x8<TM, kBigTn, kBigTk>(as[buf], bs[buf], ty, tx, acc);
      // The other buffer was last read before the previous step's barrier.
      if (more) store(buf ^ 1);
      __syncthreads();
      buf ^= 1;
    }
    for (int i = 0; i < 8; ++i) {
      const int64_t gr = row0 + (i < 4 ? 0 : TM / 2) + ty * 4 + i % 4;
      if (gr >= q.kg) continue;
      for (int h = 0; h < 2; ++h) {  // the thread's two runs of 4 columns
        const int64_t gc0 = col0 + h * (kBigTn / 2) + tx * 4;
        if (q.m_vec && gc0 + 4 <= q.p) {
          *reinterpret_cast<float4*>(c + gr * q.m_row + gc0) =
              make_float4(acc[i][h * 4], acc[i][h * 4 + 1], acc[i][h * 4 + 2], acc[i][h * 4 + 3]);
          continue;
        }
        for (int j = 0; j < 4; ++j) {
          const int64_t gc = gc0 + j;
          if (gc < q.p) c[gr * q.m_row + gc * q.m_col] = acc[i][h * 4 + j];
        }
      }
    }
  });
}

// The large GEMM of channels-last problems on the f32 engine (gemm_core.cuh): its 128 x 128 tile,
// on sm_80+ the pipelined kernel (4-byte copies, four depth tiles in flight). A is U (kg rows,
// depth-contiguous), B is V's columns (P rows: the engine takes B by its rows), each a strided
// matrix per batch entry (WinoOperand); M is written element by element (WinoEpi). Measured on the
// H200 (bench/NOTES.md, 2026-11-27 fourth session): 1.17-1.23x faster than winograd_gemm_big on
// ResNet-50's channels-last f32 3x3 layers at N=32, but 1.1-1.14x slower on channels-first ones,
// where winograd_gemm_big's float4 loads along V's contiguous columns beat the engine's 4-byte
// copies: those keep winograd_gemm_big.
template <bool kDepthFast>
struct WinoOperand : gemm::RowsLoader<float, kDepthFast> {
  int64_t xi_stride, group_stride;  // batch entry b: position b / groups, group b % groups
  int groups;
  __device__ WinoOperand bind(int b) const {
    WinoOperand l = *this;
    l.p += b / groups * xi_stride + b % groups * group_stride;
    return l;
  }
};

template <bool kDepthFast>
WinoOperand<kDepthFast> wino_operand(const float* p, int64_t rows, int64_t depth, int64_t rs,
                                     int64_t ks, int64_t xi_stride, int64_t group_stride,
                                     int64_t groups) {
  WinoOperand<kDepthFast> o;
  o.p = p;
  o.rows = static_cast<int>(rows);
  o.depth = static_cast<int>(depth);
  o.rs = rs;
  o.ks = ks;
  o.zs = 0;  // bind() places the batch entry
  o.vec = false;
  o.xi_stride = xi_stride;
  o.group_stride = group_stride;
  o.groups = static_cast<int>(groups);
  return o;
}

struct WinoEpi {
  WinoGemm q;
  float* m;
  struct Row {
    float* p;
  };
  __device__ Row row(int b, int r) const { return Row{q.m_of(m, b) + r * q.m_row}; }
  __device__ __forceinline__ void store(const Row& w, int col, float acc) const {
    w.p[col * q.m_col] = acc;
  }
};

Status run_big_gemm(const Handle& h, const WinoGemm& q, const float* u, const float* v,
                    float* m) {
  const gemm::GemmConfig c{static_cast<int>(gemm::F32TileId::T128x128), 1};
  const auto a = wino_operand<true>(u, q.kg, q.cg, q.cg, 1, q.u_xi, q.u_grp, q.groups);
  const WinoEpi e{q, m};
  const char* routine = "conv_forward (winograd)";
  // Channels-last V: each column's depth is contiguous.
  return gemm::run_gemm_f32(h, a, wino_operand<true>(v, q.p, q.cg, q.v_col, q.v_d, q.v_xi, q.v_grp, q.groups),
                            e, q.kg, q.p, q.cg, q.batches, c, nullptr, routine);
}

// y tile = A^T M A, written through conv_store (clipped at the output's edge). One thread per
// (k, tile), in M's layout order. store4: F(4x4) with float y where conv_store4_applies and the
// width is a multiple of 4: each row of a tile is one 16-byte store.
template <class T, int M>
__global__ void winograd_output(ConvGeom g, ConvOut e, WinoSizes s, const float* __restrict__ m,
                                T* y, bool store4) {
  constexpr int A = WinoTx<M>::A;
  const int64_t total = g.k * s.p;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t k = s.m_pk ? i % g.k : i / s.p;
    const int64_t p = s.m_pk ? i / g.k : i % s.p;
    const int64_t tw = p % s.tiles_w;
    const int64_t th = (p / s.tiles_w) % s.tiles_h;
    const int64_t n = p / (s.tiles_w * s.tiles_h);
    float tt[A][A];  // transposed: tt[b][a] = M[a][b]
    for (int a = 0; a < A; ++a)
      for (int b = 0; b < A; ++b) tt[b][a] = m[(a * A + b) * total + i];
    float at[A][M];  // (A^T t)^T: at[b][a]
    for (int b = 0; b < A; ++b) WinoTx<M>::output(tt[b], at[b]);
    // Unrolled, with constant indices into at (a loop left with `break` kept it in local memory).
#pragma unroll
    for (int a = 0; a < M; ++a) {
      const int64_t oh = th * M + a;
      if (oh < g.out[1]) {
        float col[A], out[M];
        for (int b = 0; b < A; ++b) col[b] = at[b][a];
        WinoTx<M>::output(col, out);
        bool stored = false;
        if constexpr (M == 4 && std::is_same<T, float>::value) {
          if (store4) {
            conv_store4(g, e, y, n, k, 0, oh, tw * M, out);
            stored = true;
          }
        }
        for (int b = 0; b < M && !stored; ++b) {
          const int64_t ow = tw * M + b;
          if (ow < g.out[2]) conv_store(g, e, y, n, k, 0, oh, ow, out[b]);
        }
      }
    }
  }
}

// The f32 engine's 32-bit tiling (gemm::kMaxDim, N / 64 < 65535 blocks) bounds run_big_gemm's
// problems; winograd_gemm_big's grid-stride loops take any size.
bool engine_fits(const ConvGeom& g, const WinoSizes& s) {
  return s.p <= gemm::kMaxDim && g.kg <= gemm::kMaxDim && g.cg <= gemm::kMaxDim &&
         s.positions * g.groups <= gemm::kMaxDim && (s.p + 63) / 64 < 65535;
}

// The GEMM's tile (tactic t: F(2x2) for 1, 2 and 5, F(4x4) for 3, 4 and 6):
//   SMALL  64 x 64, winograd_gemm (tactics 1, 3);
//   BIG    128 x 128, winograd_gemm_big<128> (channels-last: the f32 engine's, run_big_gemm) (2, 4);
//   HALF   64 x 128, winograd_gemm_big<64>: layers of at most 64 output channels (a group's),
//          whose GEMM half fills BIG's rows (5, 6).
// Tactic 0 takes a 128-column tile where its blocks give every SM one (ResNet-50 f32 at N=1 does
// not: 16-64 blocks), HALF where the rows fit in it.
enum class WinoGemmTile { SMALL, BIG, HALF };

WinoGemmTile winograd_gemm_tile(const Handle& h, const ConvGeom& g) {
  if (g.tactic != 0) {
    if (g.tactic == 5 || g.tactic == 6) return WinoGemmTile::HALF;
    return g.tactic == 2 || g.tactic == 4 ? WinoGemmTile::BIG : WinoGemmTile::SMALL;
  }
  const WinoSizes s = wino_sizes(g);
  const int64_t blocks = (s.p + kBigTn - 1) / kBigTn * ((g.kg + 127) / 128) * s.positions * g.groups;
  if (blocks < h.sm_count()) return WinoGemmTile::SMALL;
  return g.kg <= 64 ? WinoGemmTile::HALF : WinoGemmTile::BIG;
}

template <class T, int M>
Status run_winograd(const Handle& h, const ConvGeom& g, const ConvOut& e, const void* x,
                    const void* w, void* workspace, void* y) {
  const WinoSizes s = wino_sizes(g);
  float* u = static_cast<float*>(workspace);
  float* v = u + s.u;
  float* m = v + s.v;
  const int threads = 256;
  cudaStream_t st = h.stream();
  winograd_filter<T, M><<<grid_for(g.k * g.cg, threads, h.sm_count()), threads, 0, st>>>(
      g, static_cast<const T*>(w), u);
  winograd_input<T, M><<<grid_for(g.c * s.p, threads, h.sm_count()), threads, 0, st>>>(
      g, s, static_cast<const T*>(x), v);
  WinoGemm q;
  q.groups = g.groups;
  q.kg = g.kg;
  q.cg = g.cg;
  q.p = s.p;
  q.batches = s.positions * g.groups;
  q.u_xi = g.k * g.cg;
  q.u_grp = g.kg * g.cg;
  q.v_xi = g.c * s.p;
  q.v_grp = s.v_pc ? g.cg : g.cg * s.p;
  q.v_d = s.v_pc ? 1 : s.p;
  q.v_col = s.v_pc ? g.c : 1;
  q.m_xi = g.k * s.p;
  q.m_grp = s.m_pk ? g.kg : g.kg * s.p;
  q.m_row = s.m_pk ? 1 : s.p;
  q.m_col = s.m_pk ? g.k : 1;
  const auto aligned16 = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  q.a_vec = aligned16(u) && g.cg % 4 == 0;  // U rows are cg apart, batches multiples of cg
  // B's runs: columns of V (4 apart from depth to depth: P; batches c * P, cg * P) or channels
  // (c apart; batches c * P, cg).
  q.b_vec = aligned16(v) && (s.v_pc ? g.c % 4 == 0 && g.cg % 4 == 0 : s.p % 4 == 0);
  q.m_vec = aligned16(m) && q.m_col == 1 && q.m_row % 4 == 0 && q.m_xi % 4 == 0 && q.m_grp % 4 == 0;
  const WinoGemmTile tile = winograd_gemm_tile(h, g);
  const int tm = tile == WinoGemmTile::BIG ? 128 : 64, tn = tile == WinoGemmTile::SMALL ? kTn : kBigTn;
  const int64_t gx = (s.p + tn - 1) / tn, gy = (g.kg + tm - 1) / tm;
  const dim3 grid(static_cast<unsigned>(gx < 65535 * 64 ? gx : 65535 * 64),
                  static_cast<unsigned>(gy < 65535 ? gy : 65535),
                  static_cast<unsigned>(q.batches < 65535 ? q.batches : 65535));
  if (tile == WinoGemmTile::BIG && s.v_pc && engine_fits(g, s)) {
    JET_TRY(run_big_gemm(h, q, u, v, m));
  } else if (tile == WinoGemmTile::BIG) {
    winograd_gemm_big<128><<<grid, 256, 0, st>>>(q, u, v, m);
  } else if (tile == WinoGemmTile::HALF) {
    winograd_gemm_big<64><<<grid, 128, 0, st>>>(q, u, v, m);
  } else {
    winograd_gemm<<<grid, 256, 0, st>>>(q, u, v, m);
  }
  const bool store4 = M == 4 && std::is_same<T, float>::value && g.out[2] % 4 == 0 && conv_store4_applies(g, e, y);
  winograd_output<T, M><<<grid_for(g.k * s.p, threads, h.sm_count()), threads, 0, st>>>(
      g, e, s, m, static_cast<T*>(y), store4);
  return launch_status("conv_forward (winograd)");
}

}  // namespace

bool winograd_applies(const ConvGeom& g) {
  return g.spatial_rank == 2 && g.win[1] == 3 && g.win[2] == 3 && g.stride[1] == 1 &&
         g.stride[2] == 1 && g.dil[1] == 1 && g.dil[2] == 1;
}

int winograd_tactic_count() { return 6; }

size_t winograd_workspace(const ConvGeom& g, DType) {
  const WinoSizes s = wino_sizes(g);
  return static_cast<size_t>(s.u + s.v + s.m) * sizeof(float);
}

Status conv_winograd(const Handle& h, const ConvGeom& g, const ConvOut& e, DType t, const void* x,
                     const void* w, void* workspace, void* y) {
  if (wino_tile(g) == 4) {
    if (t == DType::F32) return run_winograd<float, 4>(h, g, e, x, w, workspace, y);
    return run_winograd<__half, 4>(h, g, e, x, w, workspace, y);
  }
  if (t == DType::F32) return run_winograd<float, 2>(h, g, e, x, w, workspace, y);
  return run_winograd<__half, 2>(h, g, e, x, w, workspace, y);
}

JET_CUDA_MODULE(conv_winograd)

}  // namespace cuda
}  // namespace jet
