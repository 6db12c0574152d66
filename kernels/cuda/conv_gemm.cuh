// The GEMM-family convolutions' operands and epilogue (conv_gemm.cu): shared by conv_gemm.cu
// (the f16 engines and the host dispatch) and conv_gemm_f32.cu (the f32 engine's kernels), so
// that the two compile in parallel and load as two CUDA modules.
#pragma once

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
inline Status check_shape(const ConvGeom& g, const char* routine) {
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

inline ConvShape make_shape(const ConvGeom& g) {
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
inline bool pointwise(const ConvShape& s) {
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

inline ConvMaskLoader mask_operand(const ConvShape& s, const void* x) {
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
static __device__ __noinline__ float activate_outlined(ActivationDesc act, float v) {
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

// Whether every 8 consecutive channels (from a multiple of 8, within a group) of a tensor at p
// with these strides are 16 contiguous bytes at a 16-byte aligned address (f16).
inline bool channel_groups_vec8(const void* p, int64_t cs, int64_t ns, const int64_t* ss,
                         int64_t group_channels) {
  bool ok = p && reinterpret_cast<uintptr_t>(p) % 16 == 0 && cs == 1 && ns % 8 == 0 &&
            group_channels % 8 == 0;
  for (int i = 0; i < 3; ++i) ok = ok && ss[i] % 8 == 0;
  return ok;
}

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

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
inline bool depth_fast(const ConvShape& s) {
  return s.rsc && (s.out[2] == 1 || s.xs_c < static_cast<int64_t>(s.stride[2]) * s.xs[2]);
}

// The f32 engine (gemm_core.cuh) on A operand `a` and the filters w with configuration c: defined
// and instantiated in conv_gemm_f32.cu for ConvLoader<float, kDF>, PointwiseLoader<kDF> and
// RowsLoader<float, kDF>.
template <class LA>
Status run_f32_engine(const Handle& h, const ConvGeom& g, const ConvOut& e, const LA& a,
                      const void* w, void* partials, const gemm::GemmConfig& c, void* y,
                      const char* routine);

}  // namespace conv_gemm_detail
}  // namespace cuda
}  // namespace jet
