// CPU gemm_forward: one run of the blocked GEMM engine per batch entry, the operands read in
// place through their strides (transposition is a swap of strides), bias and alpha/beta applied
// as each finished block of the product is written.
#include "../api/backend.h"
#include "cpu_common.h"
#include "gemm_engine.h"

namespace jet {
namespace cpu {

namespace {

struct GemmOutput {
  DType dtype;
  void* y;
  int64_t y_offset, ys_m, ys_n;
  const void* bias;  // null when none
  int64_t bias_offset, bias_sm, bias_sn;  // broadcast strides: 0 along dims of size 1
  float alpha, beta;
};

void gemm_sink_store(const void* ctx, int64_t row0, int64_t rows, int64_t col0, int64_t cols,
                     const float* c, int64_t ldc) {
  const GemmOutput& o = *static_cast<const GemmOutput*>(ctx);
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t y_row = o.y_offset + (row0 + i) * o.ys_m;
    const int64_t bias_row = o.bias_offset + (row0 + i) * o.bias_sm;
    for (int64_t j = 0; j < cols; ++j) {
      float v = c[i * ldc + j];
      if (o.bias) v += load(o.dtype, o.bias, bias_row + (col0 + j) * o.bias_sn);
      blend_store(o.dtype, o.y, y_row + (col0 + j) * o.ys_n, o.alpha, v, o.beta);
    }
  }
}

}  // namespace

Status gemm_forward(const GemmDesc& gemm, float alpha, const TensorDesc& a_desc, const void* a,
                    const TensorDesc& b_desc, const void* b, const TensorDesc* bias_desc,
                    const void* bias, float beta, const TensorDesc& y_desc, void* y) {
  const int rank = y_desc.rank();
  const int r0 = rank - 2, r1 = rank - 1;
  const int64_t batch = rank == 3 ? y_desc.dim(0) : 1;
  int64_t bias_strides[3] = {0, 0, 0};
  if (bias) broadcast_strides(*bias_desc, bias_strides);

  StridedMatrix am;  // rows of op(a), depth = K
  am.data = a;
  am.dtype = a_desc.dtype();
  am.row_stride = gemm.trans_a ? a_desc.stride(r1) : a_desc.stride(r0);
  am.depth_stride = gemm.trans_a ? a_desc.stride(r0) : a_desc.stride(r1);
  StridedMatrix bm;  // B packs as B^T: rows are the N columns of op(b), depth = K
  bm.data = b;
  bm.dtype = b_desc.dtype();
  bm.row_stride = gemm.trans_b ? b_desc.stride(r0) : b_desc.stride(r1);
  bm.depth_stride = gemm.trans_b ? b_desc.stride(r1) : b_desc.stride(r0);

  GemmOutput out;
  out.dtype = y_desc.dtype();
  out.y = y;
  out.ys_m = y_desc.stride(r0);
  out.ys_n = y_desc.stride(r1);
  out.bias = bias;
  out.bias_sm = bias_strides[r0];
  out.bias_sn = bias_strides[r1];
  out.alpha = alpha;
  out.beta = beta;

  GemmJob job;
  job.m = y_desc.dim(r0);
  job.n = y_desc.dim(r1);
  job.k = gemm.trans_a ? a_desc.dim(r0) : a_desc.dim(r1);
  job.a = {pack_strided, &am};
  job.b = {pack_strided, &bm};
  job.sink = {gemm_sink_store, &out};
  for (int64_t i = 0; i < batch; ++i) {
    // A batch dim of 1 broadcasts: its stride is ignored.
    am.offset = rank == 3 && a_desc.dim(0) > 1 ? i * a_desc.stride(0) : 0;
    bm.offset = rank == 3 && b_desc.dim(0) > 1 ? i * b_desc.stride(0) : 0;
    out.y_offset = rank == 3 ? i * y_desc.stride(0) : 0;
    out.bias_offset = rank == 3 ? i * bias_strides[0] : 0;
    gemm_run(job);
  }
  return Status();
}

}  // namespace cpu
}  // namespace jet
