// GEMM-family convolutions on CUDA: IMPLICIT_GEMM, IMPLICIT_PRECOMP_GEMM and GEMM, on the GEMM
// engines of gemm_core.cuh (f32 FMA, register-staged f16) and gemm_mma.cuh (tensor cores).
//
// The lowering, per group: rows m = output pixels (n, o0, o1, o2), columns = the group's K
// filters, depth d = the group's filter elements (c, tap). The depth order follows the filter
// layout so that the filter is a plain strided matrix (row stride ws_k, depth stride 1):
//   KRSC filters: d = tap * Cg + c   ("RSC": channels fastest, as NHWC activations are stored)
//   KCRS filters: d = c * taps + tap ("CRS")
// Element (m, d) of the lowered input is x[n, c, o * stride - pad + tap' * dil] (tap' = the tap,
// mirrored in CONVOLUTION mode), or 0 in the padding.
//
// IMPLICIT_GEMM: the register-staged engines decode each depth tile's indices into tap entries
// in shared memory (x offset of (c, tap') and the tap's spatial displacement); each thread keeps
// its rows' origin and base offset in registers, so forming an element of the lowered tile is a
// table read, a bounds test and a load. The tensor-core engine instead reads through
// ConvMaskLoader (per row a window pointer and a mask of the taps inside x, per thread a cursor
// that walks (channel, tap) by additions), or TapPairLoader for C <= 4. IMPLICIT_PRECOMP_GEMM: the tap
// entries of the whole depth precomputed into the workspace by a small kernel, and split-K's
// partial sums after them. GEMM: the lowered matrix is written to the workspace by an im2col
// kernel and multiplied as a plain matrix (1x1, stride 1, unpadded problems whose x rows are
// evenly strided use x itself). Which engine runs a problem: Engine below.
#include "conv_gemm.cuh"

namespace jet {
namespace cuda {

namespace {
using namespace conv_gemm_detail;

// ---- Engines and tactics ---------------------------------------------------------------------
// A GEMM-family problem runs on one of three engines:
//  - MMA: the tensor-core core (gemm_mma.cuh) for f16 problems whose operands it can copy 16
//    bytes at a time: sm_80+ code for this device, RSC depth order (KRSC filters, or 1x1),
//    windows of at most 64 taps on the implicit lowerings (ConvMaskLoader's mask),
//    C/groups % 8 == 0, unit channel stride and strides that keep every 8-channel chunk 16-byte
//    aligned, filter rows of a multiple of 8 (pointer alignment is checked per call: unaligned
//    buffers take the register-staged kernel with tactic 0, NOT_SUPPORTED with a tactic);
//  - F32: the FMA engine (gemm_core.cuh), every f32 problem;
//  - STAGED: the register-staged f16 kernel, every other f16 problem (no tactics, no split-K).
// MMA and F32 take tactics: tactic t >= 1 is tile (t - 1) / 8 of the engine's menu with the
// split-K factor kSplitChoices[(t - 1) % 8]; 0 is the heuristic's configuration.
//  - MMA_PADDED: IMPLICIT_PRECOMP_GEMM's f16 problems with groups == 1 whose channel count is
//    not a multiple of 8 (the stem of a CNN: C = 3) on sm_80+: x is copied into the workspace as
//    channels-last with C rounded up to 4 (C <= 4: TapPairLoader) or 8 (zeros in the added
//    channels), the filter as KRSC with the same C, and the copies run on the tensor cores; the
//    added channels add zero products.
enum class Engine { MMA, MMA_PADDED, F32, STAGED };

bool direct_rows(const ConvGeom& g, int64_t* row_stride);

int64_t gemm_rows(const ConvGeom& g) { return g.n * g.out[0] * g.out[1] * g.out[2]; }
int64_t gemm_depth(const ConvGeom& g) { return g.cg * g.win[0] * g.win[1] * g.win[2]; }

// How an algorithm forms the lowered input: on the fly (IMPLICIT_GEMM), on the fly with
// workspace (IMPLICIT_PRECOMP_GEMM) or as rows of a matrix (GEMM: x itself for 1x1 direct rows,
// else the im2col matrix whose row stride is the depth).
enum class Lowering { IMPLICIT, IMPLICIT_WS, ROWS };

Engine engine_of(const Handle& h, const ConvGeom& g, DType t, Lowering l) {
  if (t == DType::F32) return Engine::F32;
  if (!gemm::mma_available(h)) return Engine::STAGED;
  const bool mask_taps = g.win[0] * g.win[1] * g.win[2] <= kMaskTaps;  // ConvMaskLoader
  if (l == Lowering::IMPLICIT_WS && g.groups == 1 && g.cg % 8 != 0)
    return g.cg <= 4 || mask_taps ? Engine::MMA_PADDED : Engine::STAGED;
  if (g.ws_k % 8 != 0 || g.ws_c != 1) return Engine::STAGED;
  bool ok;
  int64_t rs;
  if (l != Lowering::ROWS) {
    ok = mask_taps && g.cg % 8 == 0 && g.xs_c == 1 && g.xs_n % 8 == 0 && g.xs[0] % 8 == 0 &&
         g.xs[1] % 8 == 0 && g.xs[2] % 8 == 0;
  } else if (direct_rows(g, &rs)) {
    ok = g.xs_c == 1 && rs % 8 == 0 && g.cg % 8 == 0;
  } else {
    ok = gemm_depth(g) % 8 == 0;
  }
  return ok ? Engine::MMA : Engine::STAGED;
}

int tactic_count(Engine e) {
  switch (e) {
    case Engine::MMA:
    case Engine::MMA_PADDED: return gemm::kMmaTileCount * gemm::kSplitChoiceCount;
    case Engine::F32: return gemm::kF32TileCount * gemm::kSplitChoiceCount;
    case Engine::STAGED: break;
  }
  return 0;
}

// The configuration for this problem on engine e: the tactic's or the heuristic's. allow_split:
// the algorithm has workspace for partial sums. NOT_SUPPORTED for a tactic that does not apply.
Status config_of(const Handle& h, const ConvGeom& g, Engine e, bool allow_split,
                 const char* routine, gemm::GemmConfig* c) {
  const int64_t M = gemm_rows(g), N = g.kg, K = gemm_depth(g);
  if (e == Engine::STAGED) {
    if (g.tactic == 0) return Status();
    return make_status(StatusCode::NOT_SUPPORTED,
                       "%s: tactic %d: tactics choose tiles of the f32 and tensor-core engines; "
                       "this f16 problem takes neither (the tensor-core one needs sm_80+, "
                       "channels-last x with C/groups %% 8 == 0 and KRSC filters)",
                       routine, g.tactic);
  }
  if (g.tactic == 0) {
    *c = e == Engine::F32 ? gemm::choose_f32_config(h, M, N, K, g.groups, allow_split)
                          : gemm::choose_mma_config(h, M, N, K, g.groups, allow_split);
    return Status();
  }
  if (g.tactic > tactic_count(e))
    return make_status(StatusCode::NOT_SUPPORTED, "%s: tactic %d is outside 1..%d", routine,
                       g.tactic, tactic_count(e));
  c->tile = (g.tactic - 1) / gemm::kSplitChoiceCount;
  c->splits = gemm::kSplitChoices[(g.tactic - 1) % gemm::kSplitChoiceCount];
  if (e == Engine::F32 && gemm::is_f32x3_tile(c->tile) && !gemm::mma_available(h))
    return make_status(StatusCode::NOT_SUPPORTED,
                       "%s: tactic %d runs an f32 tile on tensor cores (3xTF32), which needs "
                       "sm_80+",
                       routine, g.tactic);
  if (e != Engine::F32 && gemm::is_hopper_tile(c->tile) && !hopper_mma_available(h))
    return make_status(StatusCode::NOT_SUPPORTED,
                       "%s: tactic %d runs a Hopper tile (wgmma): it needs an sm_90 GPU and a "
                       "build whose CMAKE_CUDA_ARCHITECTURES lists 90a",
                       routine, g.tactic);
  if (c->splits > 1 && !allow_split)
    return make_status(StatusCode::NOT_SUPPORTED,
                       "%s: tactic %d splits the depth %d ways, which needs workspace; "
                       "implicit_gemm has none (implicit_precomp_gemm has)",
                       routine, g.tactic, c->splits);
  if (gemm::effective_splits(K, c->splits) != c->splits)
    return make_status(StatusCode::NOT_SUPPORTED,
                       "%s: tactic %d: a depth of %lld leaves some of %d splits empty", routine,
                       g.tactic, static_cast<long long>(K), c->splits);
  return Status();
}

constexpr size_t kWorkspaceAlign = 256;
size_t align_up(size_t n) { return (n + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign; }

// Partial-sum bytes of the problem's configuration (0 without split-K).
Status partial_bytes(const Handle& h, const ConvGeom& g, Engine e, bool allow_split,
                     const char* routine, size_t* bytes) {
  gemm::GemmConfig c;
  JET_TRY(config_of(h, g, e, allow_split, routine, &c));
  *bytes = e == Engine::STAGED ? 0 : gemm::split_workspace(c, gemm_rows(g), g.kg, gemm_depth(g), g.groups);
  return Status();
}

// Runs C = lowered x * filters^T on engine e with the problem's configuration. `partials` holds
// the split-K sums when the configuration splits.
// Loaders with gemm_mma.cuh's async interface (a Cursor); the others (ConvLoader) feed the
// register-staged and f32 engines only.
template <class L, class = void>
struct AsyncOperand : std::false_type {};
template <class L>
struct AsyncOperand<L, std::void_t<typename L::Cursor>> : std::true_type {};

// Whether the tensor-core engine can take this call's buffers (16-byte copies of the filter
// rows and of the partial sums); a_aligned: the A operand's own condition.
bool mma_buffers(bool a_aligned, const gemm::RowsLoader<__half, true>& b, const void* partials) {
  return a_aligned && b.vec && (partials == nullptr || aligned16(partials));
}

Status unaligned_tactic(const ConvGeom& g, const char* routine) {
  return make_status(StatusCode::NOT_SUPPORTED,
                     "%s: tactic %d needs x, w and the workspace 16-byte aligned", routine,
                     g.tactic);
}

template <class LA>
Status run_engine(const Handle& h, const ConvGeom& g, const ConvOut& e, Engine engine,
                  const LA& a, bool a_aligned, const void* w, void* partials, bool allow_split,
                  void* y, const char* routine) {
  using T = typename LA::Elem;
  const int64_t M = gemm_rows(g), N = g.kg, K = gemm_depth(g);
  gemm::GemmConfig c;
  JET_TRY(config_of(h, g, engine, allow_split, routine, &c));
  if constexpr (std::is_same<T, float>::value) {
    return run_f32_engine(h, g, e, a, w, partials, c, y, routine);  // conv_gemm_f32.cu
  } else {
    if constexpr (AsyncOperand<LA>::value) {
      const gemm::RowsLoader<__half, true> b = filter_operand<__half, true>(g, w);
      if (engine == Engine::MMA && mma_buffers(a_aligned, b, partials))
        return gemm::run_gemm_mma(h, a, b, make_epi<__half>(g, e, y), M, N, K, g.groups, c,
                                  partials, routine);
    }
    if (engine == Engine::MMA && g.tactic != 0) return unaligned_tactic(g, routine);
    return gemm::run_gemm(h, a, filter_operand<__half, false>(g, w), make_epi<__half>(g, e, y), M,
                          N, K, g.groups, routine);
  }
}

// The implicit GEMM of a channels-last f16 problem on the tensor-core engine (ConvMaskLoader);
// the caller checked the buffers (mma_buffers).
Status run_mask_mma(const Handle& h, const ConvGeom& g, const ConvOut& e, const void* x,
                    const void* w, void* partials, bool allow_split, void* y,
                    const char* routine) {
  gemm::GemmConfig c;
  JET_TRY(config_of(h, g, Engine::MMA, allow_split, routine, &c));
  return gemm::run_gemm_mma(h, mask_operand(make_shape(g), x), filter_operand<__half, true>(g, w),
                            make_epi<__half>(g, e, y), gemm_rows(g), g.kg, gemm_depth(g), g.groups,
                            c, partials, routine);
}

__global__ void tap_table_kernel(ConvShape s, TapEntry* table) {
  for (int d = blockIdx.x * blockDim.x + threadIdx.x; d < s.depth; d += gridDim.x * blockDim.x)
    table[d] = tap_entry(s, d);
}

size_t tap_table_bytes(const ConvGeom& g) {
  return static_cast<size_t>(gemm_depth(g)) * sizeof(TapEntry);
}

template <class T, bool kDF>
ConvLoader<T, kDF> conv_operand(const ConvShape& s, const void* x, const TapEntry* table,
                                bool vec) {
  ConvLoader<T, kDF> a;
  a.s = s;
  a.x = static_cast<const T*>(x);
  a.table = table;
  a.vec = vec;
  return a;
}

// ---- MMA_PADDED: the channel-padded copies ------------------------------------------------------

int64_t round8(int64_t v) { return (v + 7) / 8 * 8; }

// The problem on the copies: C rounded up to 4 when it is at most 4 (TapPairLoader), else to 8;
// x dense channels-last, the filter KRSC with rows of a multiple of 8 elements; y, the
// epilogue and the tactic unchanged.
ConvGeom padded_geom(const ConvGeom& g) {
  ConvGeom p = g;
  p.cg = p.c = g.cg <= 4 ? 4 : round8(g.cg);
  p.xs_c = 1;
  p.xs[2] = p.cg;
  p.xs[1] = p.xs[2] * g.in[2];
  p.xs[0] = p.xs[1] * g.in[1];
  p.xs_n = p.xs[0] * g.in[0];
  p.ws_c = 1;
  p.ws[2] = p.cg;
  p.ws[1] = p.ws[2] * g.win[2];
  p.ws[0] = p.ws[1] * g.win[1];
  p.ws_k = round8(p.ws[0] * g.win[0]);
  return p;
}

size_t padded_x_bytes(const ConvGeom& p) { return static_cast<size_t>(p.xs_n * p.n) * 2; }
size_t padded_w_bytes(const ConvGeom& p) { return static_cast<size_t>(p.ws_k * p.k) * 2; }

// x (any strides) -> x2 [n][spatial][cp], then w (any layout) -> w2 [k][taps][cp] (rows of
// p.ws_k, the tail past taps * cp zeros: read as depth by the C <= 4 path); zeros in the added
// channels. A thread per
// pixel of x (or tap of a filter) writes its cp channels 8 or 16 bytes at a time: the index
// arithmetic (64-bit divisions) is paid once per pixel, not once per element (per element it
// made this copy take ~1/3 of the stem's time at batch 32).
__global__ void pad_channels_kernel(ConvGeom g, ConvGeom p, const __half* x, const __half* w,
                                    __half* x2, __half* w2) {
  const int64_t taps = g.win[0] * g.win[1] * g.win[2];
  const int64_t px = p.n * g.in[0] * g.in[1] * g.in[2], pw = p.k * taps;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < px + pw;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const bool is_x = i < px;
    int64_t j = is_x ? i : i - px;
    const int64_t* ext = is_x ? g.in : g.win;
    const int64_t* str = is_x ? g.xs : g.ws;
    int64_t off = 0;
    for (int d = 2; d >= 0; --d) {
      off += (j % ext[d]) * str[d];
      j /= ext[d];
    }
    const __half* src = is_x ? x + j * g.xs_n + off : w + j * g.ws_k + off;
    const int64_t cs = is_x ? g.xs_c : g.ws_c;
    const int64_t tap = i - px - j * taps;  // filters: the tap this thread copies
    __half* dst = is_x ? x2 + i * p.cg : w2 + j * p.ws_k + tap * p.cg;
    if (!is_x && tap == taps - 1)  // the row's tail up to p.ws_k: zeros (read as depth)
      for (int64_t q = taps * p.cg; q < p.ws_k; ++q) w2[j * p.ws_k + q] = __ushort_as_half(0);
    for (int c0 = 0; c0 < p.cg; c0 += 8) {  // p.cg is 4 or a multiple of 8
      __half v[8];
#pragma unroll
      for (int q = 0; q < 8; ++q)
        v[q] = c0 + q < g.cg ? src[(c0 + q) * cs] : __ushort_as_half(0);
      const uint4 packed = gemm::pack8(v);
      if (p.cg - c0 >= 8)
        *reinterpret_cast<uint4*>(dst + c0) = packed;
      else
        *reinterpret_cast<uint2*>(dst + c0) = make_uint2(packed.x, packed.y);
    }
  }
}

// Implicit GEMM (table == false: decoded per depth tile) or with precomputed tap entries
// (workspace: the table, then the split-K partial sums).
Status implicit_dispatch(const Handle& h, const ConvGeom& g, const ConvOut& e, DType t,
                         const void* x, const void* w, bool precomp, void* workspace, void* y,
                         const char* routine) {
  JET_TRY(check_shape(g, routine));
  const ConvShape s = make_shape(g);
  const Engine engine = engine_of(h, g, t, precomp ? Lowering::IMPLICIT_WS : Lowering::IMPLICIT);
  char* const ws = static_cast<char*>(workspace);
  if (engine == Engine::MMA_PADDED) {  // workspace: x2, w2, partial sums
    const ConvGeom p = padded_geom(g);
    JET_TRY(check_shape(p, routine));
    __half* x2 = reinterpret_cast<__half*>(ws);
    __half* w2 = reinterpret_cast<__half*>(ws + align_up(padded_x_bytes(p)));
    void* partials = ws + align_up(padded_x_bytes(p)) + align_up(padded_w_bytes(p));
    const int64_t total = p.n * g.in[0] * g.in[1] * g.in[2] +
                          p.k * g.win[0] * g.win[1] * g.win[2];  // pixels and filter taps
    pad_channels_kernel<<<grid_for(total, 256, h.sm_count()), 256, 0, h.stream()>>>(
        g, p, static_cast<const __half*>(x), static_cast<const __half*>(w), x2, w2);
    JET_TRY(launch_status(routine));
    if (p.cg > 4) return run_mask_mma(h, p, e, x2, w2, partials, true, y, routine);
    gemm::GemmConfig c;
    JET_TRY(config_of(h, p, Engine::MMA, true, routine, &c));
    const TapPairLoader a{conv_operand<__half, false>(make_shape(p), x2, nullptr, true)};
    // The filters' depth (taps * 4) rounded up to 8 as the tensor-core engine's row operands
    // need (RowsAsyncIter): the rows' tail is zeros (pad_channels_kernel), and so are A's taps
    // there (TapPairLoader), so no NaN or stale value enters a sum.
    gemm::RowsLoader<__half, true> b = filter_operand<__half, true>(p, w2);
    b.depth = static_cast<int>(p.ws_k);
    return gemm::run_gemm_mma(h, a, b, make_epi<__half>(p, e, y),
                              gemm_rows(p), p.kg, gemm_depth(p), 1, c, partials, routine);
  }
  void* const partials = precomp ? ws + align_up(tap_table_bytes(g)) : nullptr;
  if (engine == Engine::MMA) {  // the cursors decode the taps: no table
    if (mma_buffers(aligned16(x), filter_operand<__half, true>(g, w), partials))
      return run_mask_mma(h, g, e, x, w, partials, precomp, y, routine);
    if (g.tactic != 0) return unaligned_tactic(g, routine);
    // Unaligned buffers: the register-staged kernel, tap entries decoded per depth tile.
    return run_engine(h, g, e, Engine::STAGED, conv_operand<__half, false>(s, x, nullptr, false),
                      false, w, nullptr, false, y, routine);
  }
  if (t == DType::F32 && pointwise(s)) {  // no tap table to make
    const PointwiseLoader<true> df{s, static_cast<const float*>(x)};
    if (depth_fast(s)) return run_engine(h, g, e, engine, df, false, w, partials, precomp, y, routine);
    const PointwiseLoader<false> rf{s, df.x};
    return run_engine(h, g, e, engine, rf, false, w, partials, precomp, y, routine);
  }
  const TapEntry* table = nullptr;
  if (precomp) {
    TapEntry* tab = reinterpret_cast<TapEntry*>(ws);
    tap_table_kernel<<<grid_for(s.depth, 256, h.sm_count()), 256, 0, h.stream()>>>(s, tab);
    JET_TRY(launch_status(routine));
    table = tab;
  }
  if (t == DType::F16) {
    const bool vec = s.rsc && s.cg % 8 == 0 && s.xs_c == 1 && s.xs_n % 8 == 0 && s.xs[0] % 8 == 0 &&
                     s.xs[1] % 8 == 0 && s.xs[2] % 8 == 0 && aligned16(x);
    return run_engine(h, g, e, engine, conv_operand<__half, false>(s, x, table, vec), false, w,
                      nullptr, false, y, routine);
  }
  if (depth_fast(s))
    return run_engine(h, g, e, engine, conv_operand<float, true>(s, x, table, false), false, w,
                      partials, precomp, y, routine);
  return run_engine(h, g, e, engine, conv_operand<float, false>(s, x, table, false), false, w,
                    partials, precomp, y, routine);
}

// Lowered matrix [groups][rows][depth] in x's dtype.
template <class T>
__global__ void im2col_kernel(ConvShape s, const T* x, int64_t groups, T* out) {
  ConvLoader<T, true> l;
  l.s = s;
  l.x = x;
  l.table = nullptr;
  l.vec = false;
  const int64_t total = groups * s.rows * static_cast<int64_t>(s.depth);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int d = static_cast<int>(i % s.depth);
    const int64_t q = i / s.depth;
    const int m = static_cast<int>(q % s.rows);
    const int z = static_cast<int>(q / s.rows);
    const ConvLoader<T, true> lz = l.bind(z);
    const typename ConvLoader<T, true>::Row r = lz.row(m);
    const TapEntry e = tap_entry(s, d);
    out[i] = lz.inside(r, e) ? lz.x[r.base + e.off] : gemm::zero_of<T>();
  }
}

// The GEMM algorithm reads x directly when the lowering is the identity: every window is one
// tap at its output pixel (1x1, stride 1, no padding) and the rows (n, o0, o1, o2) are evenly
// strided in x. Gives that row stride.
bool direct_rows(const ConvGeom& g, int64_t* row_stride) {
  for (int i = 0; i < 3; ++i)
    if (g.win[i] != 1 || g.stride[i] != 1 || g.pad[i] != 0 || g.out[i] != g.in[i]) return false;
  const int64_t ext[4] = {g.in[2], g.in[1], g.in[0], g.n};  // innermost first
  const int64_t str[4] = {g.xs[2], g.xs[1], g.xs[0], g.xs_n};
  int64_t rs = -1, next = 0;
  for (int i = 0; i < 4; ++i) {
    if (ext[i] == 1) continue;
    if (rs < 0) {
      rs = str[i];
    } else if (str[i] != next) {
      return false;
    }
    next = str[i] * ext[i];
  }
  // A single row (every extent 1: a 1x1 convolution on a 1x1 map, as in squeeze-and-excitation
  // blocks) has no row stride: report the row's own length, so that the tensor-core engine's
  // 16-byte alignment test sees the channels' (a stride of 1 sent these to the register-staged
  // kernel, serial over the depth: 53 us for EfficientNet-B0's 1152-deep SE layers on the H100).
  *row_stride = rs < 0 ? g.cg * g.xs_c : rs;
  return true;
}

template <class T, bool kDF>
gemm::RowsLoader<T, kDF> rows_operand(const ConvGeom& g, const void* a_ptr, int64_t rs,
                                      int64_t ks, int64_t zs) {
  gemm::RowsLoader<T, kDF> a;
  a.p = static_cast<const T*>(a_ptr);
  a.rows = static_cast<int>(gemm_rows(g));
  a.depth = static_cast<int>(gemm_depth(g));
  a.rs = rs;
  a.ks = ks;
  a.zs = zs;
  a.vec = std::is_same<T, __half>::value && ks == 1 && rs % 8 == 0 && zs % 8 == 0 &&
          aligned16(a_ptr);
  return a;
}

// GEMM's multiply: A is x itself (direct rows) or the im2col matrix.
Status rows_dispatch(const Handle& h, const ConvGeom& g, const ConvOut& e, DType t,
                     const void* a, int64_t rs, int64_t ks, int64_t zs, const void* w,
                     void* partials, void* y, const char* routine) {
  const Engine engine = engine_of(h, g, t, Lowering::ROWS);
  if (t == DType::F16) {
    const gemm::RowsLoader<__half, false> ra = rows_operand<__half, false>(g, a, rs, ks, zs);
    return run_engine(h, g, e, engine, ra, ra.vec, w, partials, true, y, routine);
  }
  if (ks <= rs)
    return run_engine(h, g, e, engine, rows_operand<float, true>(g, a, rs, ks, zs), false, w,
                      partials, true, y, routine);
  return run_engine(h, g, e, engine, rows_operand<float, false>(g, a, rs, ks, zs), false, w,
                    partials, true, y, routine);
}

size_t im2col_bytes(const ConvGeom& g, DType t) {
  int64_t rs;
  if (direct_rows(g, &rs)) return 0;
  return static_cast<size_t>(g.groups * gemm_rows(g) * gemm_depth(g)) * dtype_size(t);
}

// Workspace = a leading block (the tap table, the im2col matrix, or nothing), 256-aligned, then
// the split-K partial sums when the configuration splits.
Status workspace_with(const Handle& h, const ConvGeom& g, Engine e, bool allow_split,
                      size_t leading, const char* routine, size_t* bytes) {
  size_t partials = 0;
  JET_TRY(partial_bytes(h, g, e, allow_split, routine, &partials));
  *bytes = partials == 0 ? leading : align_up(leading) + partials;
  return Status();
}

}  // namespace

Status implicit_gemm_workspace(const Handle& h, const ConvGeom& g, DType t, size_t* bytes) {
  return workspace_with(h, g, engine_of(h, g, t, Lowering::IMPLICIT), false, 0, "implicit_gemm",
                        bytes);
}

Status conv_implicit_gemm(const Handle& h, const ConvGeom& g, const ConvOut& e, DType t,
                          const void* x, const void* w, void* y) {
  return implicit_dispatch(h, g, e, t, x, w, false, nullptr, y, "implicit_gemm");
}

Status implicit_precomp_gemm_workspace(const Handle& h, const ConvGeom& g, DType t,
                                       size_t* bytes) {
  const Engine e = engine_of(h, g, t, Lowering::IMPLICIT_WS);
  if (e == Engine::MMA_PADDED) {
    const ConvGeom p = padded_geom(g);
    return workspace_with(h, p, Engine::MMA, true,
                          align_up(padded_x_bytes(p)) + align_up(padded_w_bytes(p)),
                          "implicit_precomp_gemm", bytes);
  }
  return workspace_with(h, g, e, true, tap_table_bytes(g), "implicit_precomp_gemm", bytes);
}

Status conv_implicit_precomp_gemm(const Handle& h, const ConvGeom& g, const ConvOut& e, DType t,
                                  const void* x, const void* w, void* workspace, void* y) {
  const char* routine = "implicit_precomp_gemm";
  if (reinterpret_cast<uintptr_t>(workspace) % alignof(TapEntry) != 0)
    return make_status(StatusCode::BAD_PARAM, "%s: the workspace must be 8-byte aligned", routine);
  return implicit_dispatch(h, g, e, t, x, w, true, workspace, y, routine);
}

bool gemm_reads_x(const ConvGeom& g) {
  int64_t rs;
  return direct_rows(g, &rs);
}

Status gemm_workspace(const Handle& h, const ConvGeom& g, DType t, size_t* bytes) {
  return workspace_with(h, g, engine_of(h, g, t, Lowering::ROWS), true, im2col_bytes(g, t), "gemm",
                        bytes);
}

Status conv_gemm(const Handle& h, const ConvGeom& g, const ConvOut& e, DType t, const void* x,
                 const void* w, void* workspace, void* y) {
  const char* routine = "gemm";
  JET_TRY(check_shape(g, routine));
  const size_t lowered = im2col_bytes(g, t);
  void* partials = static_cast<char*>(workspace) + (lowered == 0 ? 0 : align_up(lowered));
  int64_t rs;
  if (direct_rows(g, &rs))  // x is the lowered matrix: depth = channels
    return rows_dispatch(h, g, e, t, x, rs, g.xs_c, g.cg * g.xs_c, w, partials, y, routine);
  const ConvShape s = make_shape(g);
  const int64_t total = g.groups * s.rows * static_cast<int64_t>(s.depth);
  const int grid = grid_for(total, 256, h.sm_count());
  if (t == DType::F16)
    im2col_kernel<__half><<<grid, 256, 0, h.stream()>>>(s, static_cast<const __half*>(x), g.groups,
                                                        static_cast<__half*>(workspace));
  else
    im2col_kernel<float><<<grid, 256, 0, h.stream()>>>(s, static_cast<const float*>(x), g.groups,
                                                       static_cast<float*>(workspace));
  JET_TRY(launch_status(routine));
  const int64_t rows_elems = static_cast<int64_t>(s.rows) * s.depth;
  return rows_dispatch(h, g, e, t, workspace, s.depth, 1, rows_elems, w, partials, y, routine);
}

Status gemm_family_tactic_count(const Handle& h, const ConvGeom& g, DType t, ConvAlgo algo,
                                int* count) {
  const Lowering l = algo == ConvAlgo::GEMM ? Lowering::ROWS
                    : algo == ConvAlgo::IMPLICIT_GEMM ? Lowering::IMPLICIT
                                                      : Lowering::IMPLICIT_WS;
  *count = tactic_count(engine_of(h, g, t, l));
  return Status();
}

JET_CUDA_MODULE(conv_gemm)

}  // namespace cuda
}  // namespace jet
