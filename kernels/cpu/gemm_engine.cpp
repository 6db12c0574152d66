// The blocked GEMM engine: packing of strided operands, the register-tile micro-kernel and the
// loop nest around it. See gemm_engine.h.
#include "gemm_engine.h"

#include <algorithm>

namespace jet {
namespace cpu {

namespace {

constexpr int64_t kMaxPanelWidth = kGemmNR > kGemmMR ? kGemmNR : kGemmMR;
static_assert(kGemmMC % kGemmMR == 0, "MC must be a multiple of MR");
static_assert(kGemmNC % kGemmNR == 0, "NC must be a multiple of NR");

inline float to_f32(float v) { return v; }
inline float to_f32(uint16_t h) { return half::half_bits_to_float(h); }

template <class T>
void pack_strided_typed(const StridedMatrix& s, int64_t row0, int64_t rows, int64_t depth0,
                        int64_t depth, int64_t width, float* dst) {
  const T* data = static_cast<const T*>(s.data);
  const int64_t panels = (rows + width - 1) / width;
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t valid = std::min(width, rows - p * width);
    int64_t row_off[kMaxPanelWidth];
    for (int64_t i = 0; i < valid; ++i) {
      const int64_t r = row0 + p * width + i;
      const int64_t in_block = s.rows_per_block > 0 ? r % s.rows_per_block : r;
      const int64_t block = s.rows_per_block > 0 ? r / s.rows_per_block : 0;
      row_off[i] = s.offset + block * s.block_stride + in_block * s.row_stride +
                   depth0 * s.depth_stride;
    }
    float* out = dst + p * depth * width;
    if (s.depth_stride == 1) {
      // Rows contiguous in depth (e.g. a row-major A): read each row once, sequentially.
      for (int64_t i = 0; i < valid; ++i) {
        const T* src = data + row_off[i];
        for (int64_t d = 0; d < depth; ++d) out[d * width + i] = to_f32(src[d]);
      }
    } else {
      for (int64_t d = 0; d < depth; ++d)
        for (int64_t i = 0; i < valid; ++i)
          out[d * width + i] = to_f32(data[row_off[i] + d * s.depth_stride]);
    }
    if (valid < width)
      for (int64_t d = 0; d < depth; ++d)
        for (int64_t i = valid; i < width; ++i) out[d * width + i] = 0.f;
  }
}

// C tile (MR x NR at c, row stride ldc) = or += A panel (kc x MR) * B panel (kc x NR).
// Plain loops over a register-sized accumulator. Compiled as a function of its own (restrict
// pointers, nothing else around it), gcc keeps all MR x NR accumulators in registers: with AVX2
// one broadcast of A and NR / 8 FMAs per row and depth step. Inlined into the loop nest it
// loses that (the accumulators spill), hence the separate non-inlined instances below.
__attribute__((always_inline)) inline void micro_kernel_body(int64_t kc,
                                                             const float* __restrict a,
                                                             const float* __restrict b,
                                                             float* __restrict c, int64_t ldc,
                                                             bool accumulate) {
  float acc[kGemmMR * kGemmNR] = {};
  for (int64_t p = 0; p < kc; ++p) {
    const float* ap = a + p * kGemmMR;
    const float* bp = b + p * kGemmNR;
    // No unroll pragmas: fully unrolling j defeats the loop vectorizer (the SLP result
    // shuffles and spills, 30x slower).
    for (int i = 0; i < kGemmMR; ++i)
      for (int j = 0; j < kGemmNR; ++j) acc[i * kGemmNR + j] += ap[i] * bp[j];
  }
  if (accumulate) {
    for (int i = 0; i < kGemmMR; ++i)
      for (int j = 0; j < kGemmNR; ++j) c[i * ldc + j] += acc[i * kGemmNR + j];
  } else {
    for (int i = 0; i < kGemmMR; ++i)
      for (int j = 0; j < kGemmNR; ++j) c[i * ldc + j] = acc[i * kGemmNR + j];
  }
}

using MicroKernel = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                             bool accumulate);

__attribute__((noinline)) void micro_kernel_plain(int64_t kc, const float* a, const float* b,
                                                  float* c, int64_t ldc, bool accumulate) {
  micro_kernel_body(kc, a, b, c, ldc, accumulate);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma"), noinline)) void micro_kernel_avx2(
    int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate) {
  micro_kernel_body(kc, a, b, c, ldc, accumulate);
}
#endif

// The best micro-kernel this CPU runs, picked once.
MicroKernel select_micro_kernel() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return micro_kernel_avx2;
#endif
  return micro_kernel_plain;
}

}  // namespace

void pack_strided(const void* strided_matrix, int64_t row0, int64_t rows, int64_t depth0,
                  int64_t depth, int64_t width, float* dst) {
  const StridedMatrix& s = *static_cast<const StridedMatrix*>(strided_matrix);
  if (s.dtype == DType::F32)
    pack_strided_typed<float>(s, row0, rows, depth0, depth, width, dst);
  else
    pack_strided_typed<uint16_t>(s, row0, rows, depth0, depth, width, dst);
}

// Loop nest: columns of C in blocks of NC, rows in blocks of MC; for each (row, column) block the
// sums over all of K accumulate in a stack buffer, which then goes to the sink once. B is packed
// per block unless pre-packed.
void gemm_run(const GemmJob& job) {
  static const MicroKernel micro_kernel = select_micro_kernel();
  alignas(64) float a_pack[kGemmMC * kGemmKC];
  alignas(64) float b_pack[kGemmKC * kGemmNC];
  alignas(64) float c_block[kGemmMC * kGemmNC];
  for (int64_t jc = 0; jc < job.n; jc += kGemmNC) {
    const int64_t nc = std::min(kGemmNC, job.n - jc);
    for (int64_t ic = 0; ic < job.m; ic += kGemmMC) {
      const int64_t mc = std::min(kGemmMC, job.m - ic);
      for (int64_t pc = 0; pc < job.k; pc += kGemmKC) {
        const int64_t kc = std::min(kGemmKC, job.k - pc);
        const float* b_panels;
        int64_t b_panel_stride;  // floats from one NR panel to the next
        if (job.b_prepacked) {
          b_panels = job.b_prepacked + (jc / kGemmNR) * job.k * kGemmNR + pc * kGemmNR;
          b_panel_stride = job.k * kGemmNR;
        } else {
          job.b.pack(job.b.ctx, jc, nc, pc, kc, kGemmNR, b_pack);
          b_panels = b_pack;
          b_panel_stride = kc * kGemmNR;
        }
        const float* a_panels;
        int64_t a_panel_stride;  // floats from one MR panel to the next
        if (job.a_prepacked) {
          a_panels = job.a_prepacked + (ic / kGemmMR) * job.k * kGemmMR + pc * kGemmMR;
          a_panel_stride = job.k * kGemmMR;
        } else {
          job.a.pack(job.a.ctx, ic, mc, pc, kc, kGemmMR, a_pack);
          a_panels = a_pack;
          a_panel_stride = kc * kGemmMR;
        }
        for (int64_t jr = 0; jr < nc; jr += kGemmNR) {
          const float* b_panel = b_panels + (jr / kGemmNR) * b_panel_stride;
          for (int64_t ir = 0; ir < mc; ir += kGemmMR)
            micro_kernel(kc, a_panels + (ir / kGemmMR) * a_panel_stride, b_panel,
                         c_block + ir * kGemmNC + jr, kGemmNC, pc > 0);
        }
      }
      job.sink.store(job.sink.ctx, ic, mc, jc, nc, c_block, kGemmNC);
    }
  }
}

size_t gemm_prepacked_a_floats(int64_t m, int64_t k) {
  const int64_t panels = (m + kGemmMR - 1) / kGemmMR;
  return static_cast<size_t>(panels * kGemmMR * k);
}

void gemm_prepack_a(const GemmPacker& a, int64_t m, int64_t k, float* dst) {
  a.pack(a.ctx, 0, m, 0, k, kGemmMR, dst);
}

size_t gemm_prepacked_b_floats(int64_t k, int64_t n) {
  const int64_t panels = (n + kGemmNR - 1) / kGemmNR;
  return static_cast<size_t>(panels * kGemmNR * k);
}

void gemm_prepack_b(const GemmPacker& b, int64_t k, int64_t n, float* dst) {
  b.pack(b.ctx, 0, n, 0, k, kGemmNR, dst);
}

}  // namespace cpu
}  // namespace jet
