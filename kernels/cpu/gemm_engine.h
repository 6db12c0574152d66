// A cache-blocked f32 GEMM engine for the CPU backend: C[M x N] = A[M x K] * B[K x N].
//
// The engine never sees the operands' memory directly. Each operand comes with a packer that
// copies a block of it (converted to f32) into micro-panels, so the same engine serves plain
// strided matrices (gemm_forward), f16 storage, and convolution's lowered input, which only
// exists as an address computation (implicit GEMM). Finished blocks of C go to a sink that
// applies the caller's epilogue (alpha/beta, bias, residual, activation) and converts to the
// output dtype. All scratch lives in fixed-size stack arrays (about 190 KiB) or, for a
// pre-packed B, in the caller's workspace: nothing is allocated.
#pragma once

#include <cstddef>
#include <cstdint>

#include "jet/dnn.h"

namespace jet {
namespace cpu {

// Register tile of the micro-kernel (rows of A x columns of B) and the cache blocks.
// KC x NR floats of B (16 KiB) stay in L1 while MC x KC of A (60 KiB) streams from L2.
constexpr int64_t kGemmMR = 3;
constexpr int64_t kGemmNR = 32;
constexpr int64_t kGemmKC = 128;
constexpr int64_t kGemmMC = 120;  // a multiple of kGemmMR
constexpr int64_t kGemmNC = 128;  // a multiple of kGemmNR

// Copies rows [row0, row0 + rows) x depth [depth0, depth0 + depth) of an operand into
// ceil(rows / width) panels laid out one after the other; panel p holds depth x width floats,
// the width rows of one depth index adjacent: dst[(p * depth + d) * width + i]. Rows past the
// end of the range are zero. For A, "rows" are rows of A and width is kGemmMR; for B they are
// columns of B (B is packed as B^T) and width is kGemmNR.
struct GemmPacker {
  void (*pack)(const void* ctx, int64_t row0, int64_t rows, int64_t depth0, int64_t depth,
               int64_t width, float* dst) = nullptr;
  const void* ctx = nullptr;
};

// Receives one finished block of C: c[i * ldc + j] is the complete sum for row row0 + i and
// column col0 + j.
struct GemmSink {
  void (*store)(const void* ctx, int64_t row0, int64_t rows, int64_t col0, int64_t cols,
                const float* c, int64_t ldc) = nullptr;
  const void* ctx = nullptr;
};

struct GemmJob {
  int64_t m = 0, n = 0, k = 0;
  GemmPacker a;                        // unused when a_prepacked is set
  GemmPacker b;                        // unused when b_prepacked is set
  const float* a_prepacked = nullptr;  // all of A as gemm_prepack_a() lays it out
  const float* b_prepacked = nullptr;  // all of B as gemm_prepack_b() lays it out
  GemmSink sink;
};

// Runs the job. m, n, k >= 1.
void gemm_run(const GemmJob& job);

// Floats needed to hold all of an m x k A or a k x n B pre-packed, and the packing itself (the
// packer's layout over all rows and the whole depth, which is what gemm_run reads when
// a_prepacked / b_prepacked is set). Pre-packing pays when an operand would otherwise be packed
// again for every block of the other one (filters of a convolution, its lowered input).
size_t gemm_prepacked_a_floats(int64_t m, int64_t k);
size_t gemm_prepacked_b_floats(int64_t k, int64_t n);
void gemm_prepack_a(const GemmPacker& a, int64_t m, int64_t k, float* dst);
void gemm_prepack_b(const GemmPacker& b, int64_t k, int64_t n, float* dst);

// A strided matrix as a packer source: element (r, d) lives at
//   offset + (r / rows_per_block) * block_stride + (r % rows_per_block) * row_stride
//          + d * depth_stride
// (rows_per_block = 0 means one block). The block split lets the rows of a 1x1 convolution run
// over several images whose pixels are not one uniform stride apart (NCHW).
struct StridedMatrix {
  const void* data = nullptr;
  DType dtype = DType::F32;
  int64_t offset = 0;
  int64_t row_stride = 0;
  int64_t depth_stride = 0;
  int64_t rows_per_block = 0;
  int64_t block_stride = 0;
};
void pack_strided(const void* strided_matrix, int64_t row0, int64_t rows, int64_t depth0,
                  int64_t depth, int64_t width, float* dst);

}  // namespace cpu
}  // namespace jet
