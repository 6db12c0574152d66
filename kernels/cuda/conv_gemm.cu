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
#include "../common/fast_div.h"
#include "conv_algos.cuh"
#include "gemm_core.cuh"
#include "gemm_mma.cuh"

namespace jet {
namespace cuda {
// A named namespace: nvcc flags unused static members of types with internal linkage.
namespace conv_gemm_detail {

// One depth index of the lowered matrix: x offset of (c, tap') from the row's base, and the tap's
// displacement in each spatial dim. Invalid entries (depth tail) carry kBadCoord displacements.
struct TapEntry {
  int64_t off;
  int d[3];
  int pad_;
};
static_assert(sizeof(TapEntry) == 24, "TapEntry layout");

// Far outside every extent but safe to add to any valid coordinate (|coord| < kMaxExtent).
constexpr int kBadCoord = -(1 << 30);
constexpr int64_t kMaxExtent = int64_t(1) << 28;

// The convolution geometry as the GEMM loaders see it (32-bit coordinates).
struct ConvShape {
  int rows, depth;  // M = N * out pixels, Cg * taps
  int out[3], in[3], stride[3], pad[3], win[3], dil[3];
  int cg, taps;
  bool rsc, flip;
  int64_t xs_n, xs_c, xs[3];
  FastDiv out_div[3], win_div[3], cg_div;  // the divisions of row() and cursor()

  // Output row r as (n, o0, o1, o2): n returned, o[] filled.
  __device__ __forceinline__ int split_row(int r, int* o) const {
    int q = out_div[2].divmod(r, &o[2]);
    q = out_div[1].divmod(q, &o[1]);
    return out_div[0].divmod(q, &o[0]);
  }
};

// NOT_SUPPORTED when coordinates or GEMM dims could overflow the 32-bit index math.
Status check_shape(const ConvGeom& g, const char* routine) {
  bool ok = g.n * g.out[0] * g.out[1] * g.out[2] <= gemm::kMaxDim &&
            g.cg * g.win[0] * g.win[1] * g.win[2] <= gemm::kMaxDim && g.kg <= gemm::kMaxDim &&
            g.groups <= gemm::kMaxDim;
  for (int i = 0; i < 3 && ok; ++i)
    ok = g.in[i] < kMaxExtent && g.pad[i] < kMaxExtent &&
         (g.out[i] - 1) * g.stride[i] < kMaxExtent && (g.win[i] - 1) * g.dil[i] < kMaxExtent;
  if (ok) return Status();
  return make_status(StatusCode::NOT_SUPPORTED,
                     "%s: the convolution's extents exceed the CUDA GEMM engine's 32-bit index "
                     "range (2^28 per spatial coordinate)",
                     routine);
}

ConvShape make_shape(const ConvGeom& g) {
  ConvShape s{};
  s.rows = static_cast<int>(g.n * g.out[0] * g.out[1] * g.out[2]);
  s.taps = static_cast<int>(g.win[0] * g.win[1] * g.win[2]);
  s.cg = static_cast<int>(g.cg);
  s.depth = s.cg * s.taps;
  for (int i = 0; i < 3; ++i) {
    s.out[i] = static_cast<int>(g.out[i]);
    s.in[i] = static_cast<int>(g.in[i]);
    s.stride[i] = static_cast<int>(g.stride[i]);
    s.pad[i] = static_cast<int>(g.pad[i]);
    s.win[i] = static_cast<int>(g.win[i]);
    s.dil[i] = static_cast<int>(g.dil[i]);
    s.xs[i] = g.xs[i];
  }
  // Filters are packed: KRSC has unit channel stride. With Cg == 1 or one tap both orders are
  // the same enumeration.
  s.rsc = g.ws_c == 1;
  s.flip = g.flip;
  s.xs_n = g.xs_n;
  s.xs_c = g.xs_c;
  for (int i = 0; i < 3; ++i) {
    s.out_div[i] = FastDiv::make(s.out[i]);
    s.win_div[i] = FastDiv::make(s.win[i]);
  }
  s.cg_div = FastDiv::make(s.cg);
  return s;
}

__device__ __forceinline__ TapEntry tap_entry(const ConvShape& s, int d) {
  int c, tap;
  if (s.rsc) {
    tap = d / s.cg;
    c = d - tap * s.cg;
  } else {
    c = d / s.taps;
    tap = d - c * s.taps;
  }
  int t[3];
  t[2] = tap % s.win[2];
  const int q = tap / s.win[2];
  t[1] = q % s.win[1];
  t[0] = q / s.win[1];
  TapEntry e;
  e.off = c * s.xs_c;
  e.pad_ = 0;
#pragma unroll
  for (int i = 0; i < 3; ++i) {
    const int ti = s.flip ? s.win[i] - 1 - t[i] : t[i];
    e.d[i] = ti * s.dil[i];
    e.off += static_cast<int64_t>(e.d[i]) * s.xs[i];
  }
  return e;
}

__device__ __forceinline__ TapEntry bad_entry() {
  TapEntry e;
  e.off = 0;
  e.d[0] = e.d[1] = e.d[2] = kBadCoord;
  e.pad_ = 0;
  return e;
}

// The lowered input of one group as a GEMM operand (see gemm_core.cuh for the concept).
// table == null: tap entries are decoded per depth tile (IMPLICIT_GEMM); otherwise copied from
// the precomputed table (IMPLICIT_PRECOMP_GEMM). vec: the RSC / Cg % 8 / unit channel stride /
// 16-byte alignment conditions of the f16 fast path hold.
template <class T, bool kDepthFast_>
struct ConvLoader {
  using Elem = T;
  static constexpr bool kDepthFast = kDepthFast_;
  ConvShape s;
  const T* x;
  const TapEntry* table;
  bool vec;

  struct Row {
    int64_t base;  // x offset of the row's window origin (may be negative: in the padding)
    int c[3];      // window origin o * stride - pad
  };
  template <int BK> struct Stage {
    TapEntry e[BK];
  };

  __device__ ConvLoader bind(int z) const {
    ConvLoader l = *this;
    l.x += z * (s.cg * s.xs_c);
    return l;
  }
  __device__ Row row(int r) const {
    Row w;
    if (r >= s.rows) {
      w.base = 0;
      w.c[0] = w.c[1] = w.c[2] = kBadCoord;
      return w;
    }
    int o[3];
    const int n = s.split_row(r, o);
    w.base = n * s.xs_n;
#pragma unroll
    for (int i = 0; i < 3; ++i) {
      w.c[i] = o[i] * s.stride[i] - s.pad[i];
      w.base += static_cast<int64_t>(w.c[i]) * s.xs[i];
    }
    return w;
  }
  template <int BK> __device__ void stage(Stage<BK>& st, int k0, int tid, int nthreads) const {
    for (int i = tid; i < BK; i += nthreads) {
      const int d = k0 + i;
      st.e[i] = d >= s.depth ? bad_entry() : (table ? table[d] : tap_entry(s, d));
    }
  }
  __device__ __forceinline__ bool inside(const Row& r, const TapEntry& e) const {
    return static_cast<unsigned>(r.c[0] + e.d[0]) < static_cast<unsigned>(s.in[0]) &&
           static_cast<unsigned>(r.c[1] + e.d[1]) < static_cast<unsigned>(s.in[1]) &&
           static_cast<unsigned>(r.c[2] + e.d[2]) < static_cast<unsigned>(s.in[2]);
  }
  template <class S> __device__ __forceinline__ T load(const Row& r, const S& st, int kk, int) const {
    const TapEntry& e = st.e[kk];
    return inside(r, e) ? x[r.base + e.off] : gemm::zero_of<T>();
  }
  template <class S>
  __device__ __forceinline__ const T* src(const Row& r, const S& st, int kk, int, bool* in) const {
    const TapEntry& e = st.e[kk];
    *in = inside(r, e);
    return *in ? x + r.base + e.off : x;
  }
  template <class S> __device__ __forceinline__ uint4 load8(const Row& r, const S& st, int kk, int k) const {
    if (vec) {
      // Cg % 8 == 0 and RSC: the 8 depth indices are 8 consecutive channels of one tap.
      const TapEntry& e = st.e[kk];
      return inside(r, e) ? __ldg(reinterpret_cast<const uint4*>(x + r.base + e.off))
                          : make_uint4(0, 0, 0, 0);
    }
    __half h[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) h[j] = load(r, st, kk + j, k + j);
    return gemm::pack8(h);
  }
};

// The lowered input of a 1x1 convolution without padding (every window inside x) for the f32
// engine: element (row, k) is channel k of the row's input pixel, so a load is one multiply-add
// from the row's offset, with no tap entries and no bounds tests beyond the row's and the depth's
// ends (ConvLoader's general element costs a tap entry read from shared memory and three
// coordinate tests). Rows are any pixels: NCHW and strided windows too, where x itself is not a
// matrix of rows (direct_rows).
template <bool kDepthFast_>
struct PointwiseLoader {
  using Elem = float;
  static constexpr bool kDepthFast = kDepthFast_;
  ConvShape s;
  const float* x;

  struct Row {
    int64_t base;  // x offset of the row's input pixel
    bool valid;
  };
  template <int BK> struct Stage {
    char unused;
  };

  __device__ PointwiseLoader bind(int z) const {
    PointwiseLoader l = *this;
    l.x += z * (s.cg * s.xs_c);
    return l;
  }
  __device__ Row row(int r) const {
    if (r >= s.rows) return Row{0, false};
    int o[3];
    const int n = s.split_row(r, o);
    int64_t base = n * s.xs_n;
#pragma unroll
    for (int i = 0; i < 3; ++i) base += static_cast<int64_t>(o[i] * s.stride[i]) * s.xs[i];
    return Row{base, true};
  }
  template <int BK> __device__ void stage(Stage<BK>&, int, int, int) const {}
  template <class S> __device__ __forceinline__ float load(const Row& r, const S&, int, int k) const {
    return r.valid && k < s.depth ? x[r.base + k * s.xs_c] : 0.f;
  }
  template <class S>
  __device__ __forceinline__ const float* src(const Row& r, const S&, int, int k, bool* in) const {
    *in = r.valid && k < s.depth;
    return *in ? x + r.base + k * s.xs_c : x;
  }
};

// Whether every window is one pixel inside x (PointwiseLoader's condition): one tap, no padding
// before, and the last window not past x's end (padding after shows only as a longer output,
// e.g. in conv_backward_data's TRANSPOSED_FORWARD phases).
bool pointwise(const ConvShape& s) {
  if (s.taps != 1) return false;
  for (int i = 0; i < 3; ++i)
    if (s.pad[i] != 0 || static_cast<int64_t>(s.out[i] - 1) * s.stride[i] >= s.in[i]) return false;
  return true;
}

// Most taps a ConvMaskLoader takes: one bit of a row's mask each.
constexpr int kMaskTaps = 64;

// The lowered input as the tensor-core engine's A operand (gemm_mma.cuh's async concept), for
// channels-last x with C/groups % 8 == 0 and RSC depth order: a 16-byte chunk is 8 consecutive
// channels of one tap. Everything that does not change along the depth is precomputed:
//  - per row, a pointer to its window's origin and a mask of the taps inside x (bit t: tap t);
//  - per thread, a cursor (channel, tap, x offset of both) that a depth step moves by additions
//    (crossing to the next tap adds that axis's precomputed stride).
// A chunk is then a mask test and one pointer addition: the per-chunk bounds tests and the
// tap-offset products of a general cursor made the main loop ~8 instructions per mma.
struct ConvMaskLoader {
  using Elem = __half;
  static constexpr bool kShareRows = true;  // row(): divisions and the taps' mask (gemm_mma.cuh)
  ConvShape s;       // s.taps <= kMaskTaps
  const __half* x;
  int64_t tap_step[3];  // x offset between neighbouring taps of axis i (negative when flipped)

  struct Row {
    const __half* p;  // x at the window's first tap (never dereferenced outside the mask)
    uint64_t mask;    // bit t: tap t is inside x
  };
  struct Cursor {
    int c, t, t1, t2;  // channel within the group, tap, the tap's last two coordinates
    int64_t off;       // x offset of (c, t) from a row's p
  };

  __device__ ConvMaskLoader bind(int z) const {
    ConvMaskLoader l = *this;
    l.x += z * (s.cg * s.xs_c);
    return l;
  }
  // Bit j: tap j of an axis (input coordinate start + j * dir, win <= 64 taps) is inside
  // [0, in). Unit steps (no dilation) in closed form, as the range of taps inside.
  static __device__ __forceinline__ uint64_t axis_taps(int start, int dir, int win, int in) {
    int lo = 0, hi = 0;  // the taps inside, for unit steps
    if (dir == 1) {
      lo = max(0, -start);
      hi = min(win, in - start);
    } else if (dir == -1) {
      lo = max(0, start - in + 1);
      hi = min(win, start + 1);
    } else {
      uint64_t bits = 0;
      for (int j = 0; j < win; ++j)
        if (static_cast<unsigned>(start + j * dir) < static_cast<unsigned>(in))
          bits |= uint64_t(1) << j;
      return bits;
    }
    if (hi <= lo) return 0;
    const int count = hi - lo;
    return (count >= 64 ? ~uint64_t(0) : (uint64_t(1) << count) - 1) << lo;
  }
  // First tap's coordinate along axis i (the last one in convolution mode) and its x offset.
  __device__ __forceinline__ int first_tap(int i) const {
    return s.flip ? (s.win[i] - 1) * s.dil[i] : 0;
  }
  __device__ Row row(int r) const {
    Row w;
    w.mask = 0;
    w.p = x;
    if (r >= s.rows) return w;
    int o[3];
    const int n = s.split_row(r, o);
    int64_t base = n * s.xs_n;
    uint64_t axis_in[3];  // bit j: tap j of the axis is inside x
#pragma unroll
    for (int i = 0; i < 3; ++i) {
      const int start = o[i] * s.stride[i] - s.pad[i] + first_tap(i);
      base += static_cast<int64_t>(start) * s.xs[i];
      axis_in[i] = axis_taps(start, s.flip ? -s.dil[i] : s.dil[i], s.win[i], s.in[i]);
    }
    // Tap t = (t0 * win1 + t1) * win2 + t2: the axes' bits spread over the taps, one row of
    // win2 bits (and one plane of win1 * win2) at a time.
    uint64_t plane = 0;
    for (int t1 = 0; t1 < s.win[1]; ++t1)
      if ((axis_in[1] >> t1) & 1) plane |= axis_in[2] << (t1 * s.win[2]);
    for (int t0 = 0; t0 < s.win[0]; ++t0)
      if ((axis_in[0] >> t0) & 1) w.mask |= plane << (t0 * s.win[1] * s.win[2]);
    // Offsets are applied to a pointer only inside the mask; form the origin by integer
    // arithmetic (it may lie before x when the window starts in the padding).
    w.p = reinterpret_cast<const __half*>(reinterpret_cast<uintptr_t>(x) +
                                          static_cast<uintptr_t>(base * 2));
    return w;
  }
  __device__ Cursor cursor(int k) const {
    Cursor u;
    u.t = s.cg_div.divmod(k, &u.c);
    const int q = s.win_div[2].divmod(u.t, &u.t2);
    const int t0 = s.win_div[1].divmod(q, &u.t1);
    u.off = u.c + t0 * tap_step[0] + u.t1 * tap_step[1] + u.t2 * tap_step[2];
    return u;
  }
  __device__ __forceinline__ void advance(Cursor& u, int step) const {
    u.c += step;
    u.off += step;
    next_taps(u);
  }
  // The cursor's channel past C/groups: on to the next tap (a step longer than C/groups crosses
  // several).
  __device__ __forceinline__ void next_taps(Cursor& u) const {
    while (u.c >= s.cg) {
      u.c -= s.cg;
      u.off -= s.cg;
      ++u.t;
      if (++u.t2 < s.win[2]) {
        u.off += tap_step[2];
        continue;
      }
      u.t2 = 0;
      u.off -= (s.win[2] - 1) * tap_step[2];
      if (++u.t1 < s.win[1]) {
        u.off += tap_step[1];
        continue;
      }
      u.t1 = 0;
      u.off += tap_step[0] - (s.win[1] - 1) * tap_step[1];
    }
  }
  __device__ __forceinline__ const __half* chunk(const Row& r, const Cursor& u, int* bytes) const {
    const bool in = u.t < s.taps && ((r.mask >> u.t) & 1);
    *bytes = in ? 16 : 0;
    return in ? r.p + u.off : x;
  }
  // The tensor-core engine's copy state (gemm_mma.cuh, RowCursorIter). Per row the window and
  // its mask shifted so that bit 0 is the cursor's tap: the main loop tests one bit, and shifts
  // only when the cursor moves to another tap (every C/groups / 32 steps). A chunk is all in x
  // or all padding, so the copy is predicated, never sized.
  template <int CHUNKS>
  struct AsyncIter {
    const __half* p[CHUNKS];
    uint64_t m[CHUNKS];
    Cursor cur;
    // From the block's row records in shared memory (gemm_mma.cuh's SharesRows).
    __device__ __forceinline__ AsyncIter(const ConvMaskLoader& l, const Row* rows, int row_step,
                                         int k)
        : cur(l.cursor(k)) {
#pragma unroll
      for (int e = 0; e < CHUNKS; ++e) {
        const Row w = rows[e * row_step];
        p[e] = w.p;
        m[e] = cur.t < 64 ? w.mask >> cur.t : 0;  // taps >= s.taps have no bit
      }
    }
    __device__ __forceinline__ void copy(const ConvMaskLoader& l, uint32_t dst,
                                         uint32_t dst_step) const {
#pragma unroll
      for (int e = 0; e < CHUNKS; ++e) {
        const bool in = m[e] & 1;
        gemm::cp_async16_if(dst + e * dst_step, in ? p[e] + cur.off : l.x, in);
      }
    }
    __device__ __forceinline__ void advance(const ConvMaskLoader& l, int step) {
      cur.c += step;
      cur.off += step;
      if (cur.c >= l.s.cg) {  // another tap: the masks follow
        const int t0 = cur.t;
        l.next_taps(cur);
        const int dt = cur.t - t0;
#pragma unroll
        for (int e = 0; e < CHUNKS; ++e) m[e] = dt < 64 ? m[e] >> dt : 0;
      }
    }
  };
};

ConvMaskLoader mask_operand(const ConvShape& s, const void* x) {
  ConvMaskLoader a;
  a.s = s;
  a.x = static_cast<const __half*>(x);
  for (int i = 0; i < 3; ++i)
    a.tap_step[i] = (s.flip ? -1 : 1) * static_cast<int64_t>(s.dil[i]) * s.xs[i];
  return a;
}

// The small-channel path of MMA_PADDED (C <= 4, the stem of a CNN): x copied channels-last
// with C = 4, so a 16-byte chunk of the lowered matrix (depth d = tap * 4 + c) is two
// consecutive taps, each 8 contiguous bytes that are copied or zero-filled on their own
// (rounding C up to 8 instead doubled the depth: 392 for a 7x7 stem against 196).
// Async A operand of gemm_mma.cuh through copy16.
struct TapPairLoader {
  using Elem = __half;
  static constexpr bool kShareRows = true;  // row(): divisions by the output extents
  ConvLoader<__half, false> rows;  // row() and bind(); rows.s.cg == 4, channels-last
  using Row = ConvLoader<__half, false>::Row;
  struct Cursor {
    int t[3];  // the chunk's first tap (t[0] >= win[0]: past the end)
  };

  __device__ TapPairLoader bind(int z) const {
    TapPairLoader l = *this;
    l.rows = rows.bind(z);
    return l;
  }
  __device__ Row row(int r) const { return rows.row(r); }
  __device__ Cursor cursor(int k) const {
    const ConvShape& s = rows.s;
    const int tap = k / 4;
    Cursor u;
    u.t[2] = tap % s.win[2];
    const int q = tap / s.win[2];
    u.t[1] = q % s.win[1];
    u.t[0] = q / s.win[1];
    return u;
  }
  // Depth step (a multiple of 8): step / 4 taps on, carried without dividing.
  __device__ void advance(Cursor& u, int step) const {
    const ConvShape& s = rows.s;
    u.t[2] += step / 4;
    while (u.t[2] >= s.win[2] && u.t[0] < s.win[0]) {
      u.t[2] -= s.win[2];
      if (++u.t[1] == s.win[1]) {
        u.t[1] = 0;
        ++u.t[0];
      }
    }
  }
  // Copies tap t of row r (4 channels, 8 bytes) to shared address dst, or zeros.
  __device__ __forceinline__ void copy_tap(uint32_t dst, const Row& r, const int* t) const {
    const ConvShape& s = rows.s;
    bool in = t[0] < s.win[0];
    int64_t off = 0;
#pragma unroll
    for (int i = 0; i < 3; ++i) {
      const int d = (s.flip ? s.win[i] - 1 - t[i] : t[i]) * s.dil[i];
      in = in && static_cast<unsigned>(r.c[i] + d) < static_cast<unsigned>(s.in[i]);
      off += static_cast<int64_t>(d) * s.xs[i];
    }
    gemm::cp_async8(dst, in ? rows.x + r.base + off : rows.x, in ? 8 : 0);
  }
  __device__ __forceinline__ void copy16(uint32_t dst, const Row& r, const Cursor& u) const {
    const ConvShape& s = rows.s;
    copy_tap(dst, r, u.t);
    int t[3] = {u.t[0], u.t[1], u.t[2] + 1};  // the next tap
    if (t[2] == s.win[2]) {
      t[2] = 0;
      if (++t[1] == s.win[1]) {
        t[1] = 0;
        ++t[0];
      }
    }
    copy_tap(dst + 8, r, t);
  }
};

// Activations other than identity and ReLU out of line: inlined into every one of a thread's
// 64 accumulator stores they would multiply the kernels' code size (and compile time) by ~10.
__device__ __noinline__ float activate_outlined(ActivationDesc act, float v) {
  return apply_activation(act, v);
}

// Writes C (rows = output pixels, columns = the group's filters) with conv_store's semantics
// (conv_common.cuh), the row's offsets computed once per row instead of once per element.
template <class T>
struct ConvEpi {
  ConvGeom g;
  ConvOut e;
  T* y;
  FastDiv out_div[3];  // the output extents (row's divisions)
  // Decided once on the host (make_epi): every 8-channel group of y (and of the residual, the
  // bias and the old y, where read) is 16 contiguous, 16-byte aligned bytes, so store8 goes
  // straight to its vector code with no per-segment stride or alignment tests (for 1x1 layers
  // of small depth the epilogue is most of the kernel's instructions).
  bool vec8;
  // The f32 engine's 16-byte stores (gemm_f32_kernel), also decided on the host (make_epi):
  // F4_ROWS when y's pixels are packed (NCHW: 4 consecutive rows of one image are 4 consecutive
  // floats), F4_COLS when its channels are (NHWC: 4 consecutive columns). A thread of that
  // kernel holds 4 consecutive rows and 4 consecutive columns; its scalar stores left 60% of the
  // sectors written by ResNet-50's f32 1x1 layers excessive (ncu).
  enum F4 : int { F4_NONE = 0, F4_ROWS = 1, F4_COLS = 2 };
  F4 f4;
  int image_rows;  // out[0] * out[1] * out[2]

  struct Row {
    int64_t yo, zo;  // y and z offsets of (n, o0, o1, o2)
    int64_t k0;      // first output channel of the group
  };
  __device__ Row row(int z, int r) const {
    int o[3];
    int q = out_div[2].divmod(r, &o[2]);
    q = out_div[1].divmod(q, &o[1]);
    const int n = out_div[0].divmod(q, &o[0]);
    Row w;
    w.yo = n * g.ys_n + o[0] * g.ys[0] + o[1] * g.ys[1] + o[2] * g.ys[2];
    w.zo = n * e.zs_n + o[0] * e.zs[0] + o[1] * e.zs[1] + o[2] * e.zs[2];
    w.k0 = z * g.kg;
    return w;
  }
  // The value of output channel k (conv_store's formula) from its accumulator.
  __device__ __forceinline__ float finish(const Row& w, int64_t k, float acc, const T* yp) const {
    float v = e.alpha1 * acc;
    if (e.fused) {
      if (e.z) v += e.alpha2 * to_f32(static_cast<const T*>(e.z)[w.zo + k * e.zs_c]);
      if (e.bias) v += to_f32(static_cast<const T*>(e.bias)[k * e.bias_stride]);
      if (e.act.mode == ActivationMode::RELU)
        v = v < 0.f ? 0.f : v;  // NaN stays NaN (apply_activation RELU)
      else if (e.act.mode != ActivationMode::IDENTITY)
        v = activate_outlined(e.act, v);
    } else if (e.beta != 0.f) {
      v += e.beta * to_f32(*yp);
    }
    return v;
  }
  __device__ __forceinline__ void store(const Row& w, int col, float acc) const {
    const int64_t k = w.k0 + col;
    T* yp = y + w.yo + k * g.ys_c;
    *yp = from_f32<T>(finish(w, k, acc, yp));
  }
  // F4_ROWS: whether rows r0 .. r0 + 3 are 16 aligned bytes of y (one image, r0 at a multiple
  // of 4 within it; make_epi checked the strides and the base).
  __device__ __forceinline__ bool rows_f4(int r0) const {
    const int p = r0 % image_rows;
    return p % 4 == 0 && p + 4 <= image_rows;
  }
  // F4_ROWS: column col of rows w .. w + 3 (w the first row's record).
  __device__ __forceinline__ void store_rows_f4(const Row& w, int col, const float (&acc)[4]) const {
    const int64_t k = w.k0 + col;
    T* yp = y + w.yo + k * g.ys_c;
    float v[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      Row wq = w;  // row w + q: packed pixels of y, and of the residual (make_epi)
      wq.yo += q;
      wq.zo += q;
      v[q] = finish(wq, k, acc[q], yp + q);
    }
    store4(yp, v);
  }
  // F4_COLS: columns col .. col + 3 of row w (col % 4 == 0 and kg % 4 == 0: all inside).
  __device__ __forceinline__ void store_cols_f4(const Row& w, int col, const float (&acc)[4]) const {
    const int64_t k = w.k0 + col;
    T* yp = y + w.yo + k;
    float v[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) v[q] = finish(w, k + q, acc[q], yp + q);
    store4(yp, v);
  }
  // Channels col .. col + 7 (the tensor-core engine's epilogue). NHWC f16 with 16-byte aligned
  // rows: conv_store's formula on 8 values at once, with 16-byte loads of the residual, the bias
  // and (beta != 0) the old y, and one 16-byte store; otherwise one store() each.
  __device__ __forceinline__ void store8(const Row& w, int col, const float* acc) const {
    const int64_t k = w.k0 + col;
    T* yp = y + w.yo + k * g.ys_c;
    if (!std::is_same<T, __half>::value || !vec8) {
#pragma unroll
      for (int q = 0; q < 8; ++q) store(w, col + q, acc[q]);
      return;
    }
    float v[8];
#pragma unroll
    for (int q = 0; q < 8; ++q) v[q] = e.alpha1 * acc[q];
    if (e.fused) {
      if (e.z) {
        float zv[8];
        unpack8(*reinterpret_cast<const uint4*>(static_cast<const T*>(e.z) + w.zo + k), zv);
#pragma unroll
        for (int q = 0; q < 8; ++q) v[q] += e.alpha2 * zv[q];
      }
      if (e.bias) {
        float bv[8];
        unpack8(*reinterpret_cast<const uint4*>(static_cast<const T*>(e.bias) + k), bv);
#pragma unroll
        for (int q = 0; q < 8; ++q) v[q] += bv[q];
      }
      if (e.act.mode == ActivationMode::RELU) {
#pragma unroll
        for (int q = 0; q < 8; ++q) v[q] = v[q] < 0.f ? 0.f : v[q];  // NaN stays NaN
      } else if (e.act.mode != ActivationMode::IDENTITY) {
#pragma unroll
        for (int q = 0; q < 8; ++q) v[q] = activate_outlined(e.act, v[q]);
      }
    } else if (e.beta != 0.f) {
      float old[8];
      unpack8(*reinterpret_cast<const uint4*>(yp), old);
#pragma unroll
      for (int q = 0; q < 8; ++q) v[q] += e.beta * old[q];
    }
    uint32_t packed[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const __half2 h2 = __floats2half2_rn(v[2 * q], v[2 * q + 1]);
      packed[q] = *reinterpret_cast<const uint32_t*>(&h2);
    }
    *reinterpret_cast<uint4*>(yp) = make_uint4(packed[0], packed[1], packed[2], packed[3]);
  }

 private:
  __device__ __forceinline__ void store4(T* yp, const float (&v)[4]) const {
    if constexpr (std::is_same<T, float>::value) {
      *reinterpret_cast<float4*>(yp) = make_float4(v[0], v[1], v[2], v[3]);
    } else {
#pragma unroll
      for (int q = 0; q < 4; ++q) yp[q] = from_f32<T>(v[q]);
    }
  }
  // Eight f16 values packed in 16 bytes, as floats.
  static __device__ __forceinline__ void unpack8(const uint4& raw, float* out) {
    const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&words[q]));
      out[2 * q] = f.x;
      out[2 * q + 1] = f.y;
    }
  }
};

}  // namespace conv_gemm_detail

namespace {
using namespace conv_gemm_detail;

// Whether every 8 consecutive channels (from a multiple of 8, within a group) of a tensor at p
// with these strides are 16 contiguous bytes at a 16-byte aligned address (f16).
bool channel_groups_vec8(const void* p, int64_t cs, int64_t ns, const int64_t* ss,
                         int64_t group_channels) {
  bool ok = p && reinterpret_cast<uintptr_t>(p) % 16 == 0 && cs == 1 && ns % 8 == 0 &&
            group_channels % 8 == 0;
  for (int i = 0; i < 3; ++i) ok = ok && ss[i] % 8 == 0;
  return ok;
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <class T>
ConvEpi<T> make_epi(const ConvGeom& g, const ConvOut& e, void* y) {
  ConvEpi<T> ep;
  ep.g = g;
  ep.e = e;
  ep.y = static_cast<T*>(y);
  for (int i = 0; i < 3; ++i) ep.out_div[i] = FastDiv::make(static_cast<int>(g.out[i]));
  // Channel k0 = group * kg: with kg % 8 == 0 every 8-channel group starts 16-byte aligned.
  bool v = std::is_same<T, __half>::value && channel_groups_vec8(y, g.ys_c, g.ys_n, g.ys, g.kg);
  if (e.fused && e.z) v = v && channel_groups_vec8(e.z, e.zs_c, e.zs_n, e.zs, g.kg);
  if (e.fused && e.bias)
    v = v && e.bias_stride == 1 && reinterpret_cast<uintptr_t>(e.bias) % 16 == 0;
  ep.vec8 = v;
  // The f32 engine's 16-byte stores: y 16-byte aligned and every offset a thread's 4 values
  // start at a multiple of 4 floats. Rows (pixels) packed: the residual's too, read at the same
  // offsets + q. Columns (channels) packed: kg % 4 == 0 keeps 4 columns inside the group.
  ep.f4 = ConvEpi<T>::F4_NONE;
  ep.image_rows = static_cast<int>(g.out[0] * g.out[1] * g.out[2]);
  if (std::is_same<T, float>::value && aligned16(y) && g.ys_n % 4 == 0) {
    const auto pixels_packed = [&](const int64_t* s) {
      return s[2] == 1 && (g.out[1] == 1 || s[1] == g.out[2]) &&
             (g.out[0] == 1 || s[0] == g.out[1] * g.out[2]);
    };
    bool cols = g.ys_c == 1 && g.kg % 4 == 0;
    for (int i = 0; i < 3; ++i) cols = cols && (g.out[i] == 1 || g.ys[i] % 4 == 0);
    const bool rows = !cols && g.ys_c % 4 == 0 && pixels_packed(g.ys) &&
                      (!e.fused || !e.z || pixels_packed(e.zs));
    ep.f4 = cols ? ConvEpi<T>::F4_COLS : rows ? ConvEpi<T>::F4_ROWS : ConvEpi<T>::F4_NONE;
  }
  return ep;
}

// The filters of one group as the B operand: K/groups rows of depth Cg * taps, depth stride 1.
template <class T, bool kDF>
gemm::RowsLoader<T, kDF> filter_operand(const ConvGeom& g, const void* w) {
  gemm::RowsLoader<T, kDF> b;
  b.p = static_cast<const T*>(w);
  b.rows = static_cast<int>(g.kg);
  b.depth = static_cast<int>(g.cg * g.win[0] * g.win[1] * g.win[2]);
  b.rs = g.ws_k;
  b.ks = 1;
  b.zs = g.kg * g.ws_k;
  b.vec = std::is_same<T, __half>::value && b.rs % 8 == 0 && aligned16(w);
  return b;
}

// The threads of a warp walk the depth when consecutive depth indices are closer in x than
// consecutive output pixels (NHWC with RSC order), else the pixels (NCHW).
bool depth_fast(const ConvShape& s) {
  return s.rsc && (s.out[2] == 1 || s.xs_c < static_cast<int64_t>(s.stride[2]) * s.xs[2]);
}

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
    return gemm::run_gemm_f32(h, a, filter_operand<float, true>(g, w), make_epi<float>(g, e, y), M,
                              N, K, g.groups, c, partials, routine);
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
