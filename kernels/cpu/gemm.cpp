// gemm_forward: validation and backend dispatch; below, the CPU backend.
//
// CPU gemm_forward: one run of the blocked GEMM engine per batch entry, the operands read in
// place through their strides (transposition is a swap of strides), bias and alpha/beta applied
// as each finished block of the product is written.

#include "../api/backend.h"
#include "../api/check.h"
#include "cpu_common.h"
#include "gemm_engine.h"

namespace jet {

JET_BACKEND_ENTRIES(gemm_forward, const GemmDesc& gemm, float alpha, const TensorDesc& a_desc,
                    const void* a, const TensorDesc& b_desc, const void* b,
                    const TensorDesc* bias_desc, const void* bias, float beta,
                    const TensorDesc& y_desc, void* y);

Status gemm_forward(const Handle& handle, const GemmDesc& gemm, float alpha,
                    const TensorDesc& a_desc, const void* a, const TensorDesc& b_desc,
                    const void* b, const TensorDesc& bias_desc, const void* bias, float beta,
                    const TensorDesc& y_desc, void* y) {
  const char* fn = "gemm_forward";
  JET_RETURN_IF_ERROR(in_routine(fn, a_desc.validate("a")));
  JET_RETURN_IF_ERROR(in_routine(fn, b_desc.validate("b")));
  JET_RETURN_IF_ERROR(in_routine(fn, y_desc.validate("y")));
  const int rank = y_desc.rank();
  if (rank < 2 || rank > 3 || a_desc.rank() != rank || b_desc.rank() != rank)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: a, b and y must all have rank 2 or all rank 3, got %d, %d and %d",
                       fn, a_desc.rank(), b_desc.rank(), rank);
  JET_RETURN_IF_ERROR(check_same_dtype(fn, a_desc, "a", y_desc, "y"));
  JET_RETURN_IF_ERROR(check_same_dtype(fn, b_desc, "b", y_desc, "y"));
  // op(a) is M x K, op(b) is K x N.
  const int r0 = rank - 2, r1 = rank - 1;
  const int64_t m = gemm.trans_a ? a_desc.dim(r1) : a_desc.dim(r0);
  const int64_t k = gemm.trans_a ? a_desc.dim(r0) : a_desc.dim(r1);
  const int64_t kb = gemm.trans_b ? b_desc.dim(r1) : b_desc.dim(r0);
  const int64_t n = gemm.trans_b ? b_desc.dim(r0) : b_desc.dim(r1);
  if (k != kb)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: op(a) is %lld x %lld but op(b) is %lld x %lld (a dims %s%s, b dims "
                       "%s%s): inner dims differ",
                       fn, static_cast<long long>(m), static_cast<long long>(k),
                       static_cast<long long>(kb), static_cast<long long>(n),
                       dims_text(a_desc.rank(), a_desc.dims()).c_str(),
                       gemm.trans_a ? " transposed" : "",
                       dims_text(b_desc.rank(), b_desc.dims()).c_str(),
                       gemm.trans_b ? " transposed" : "");
  if (y_desc.dim(r0) != m || y_desc.dim(r1) != n)
    return make_status(StatusCode::BAD_PARAM, "%s: y has dims %s but op(a) @ op(b) is %lld x %lld",
                       fn, dims_text(rank, y_desc.dims()).c_str(), static_cast<long long>(m),
                       static_cast<long long>(n));
  if (rank == 3) {
    const int64_t batch = y_desc.dim(0);
    if ((a_desc.dim(0) != 1 && a_desc.dim(0) != batch) ||
        (b_desc.dim(0) != 1 && b_desc.dim(0) != batch))
      return make_status(StatusCode::BAD_PARAM,
                         "%s: batch dims of a (%lld) and b (%lld) must each be 1 or y's (%lld)",
                         fn, static_cast<long long>(a_desc.dim(0)),
                         static_cast<long long>(b_desc.dim(0)), static_cast<long long>(batch));
  }
  if (bias) {
    JET_RETURN_IF_ERROR(in_routine(fn, bias_desc.validate("bias")));
    JET_RETURN_IF_ERROR(check_same_dtype(fn, bias_desc, "bias", y_desc, "y"));
    JET_RETURN_IF_ERROR(check_broadcast(fn, bias_desc, "bias", y_desc, "y"));
  }
  JET_RETURN_IF_ERROR(check_ptr(fn, a, "a"));
  JET_RETURN_IF_ERROR(check_ptr(fn, b, "b"));
  JET_RETURN_IF_ERROR(check_ptr(fn, y, "y"));
  if (a == y || b == y)
    return make_status(StatusCode::BAD_PARAM, "%s: y must not be the same buffer as a or b", fn);
  if (handle.backend() == Backend::CPU)
    return cpu::gemm_forward(gemm, alpha, a_desc, a, b_desc, b, bias ? &bias_desc : nullptr, bias,
                             beta, y_desc, y);
#if defined(JET_HAVE_CUDA)
  // The CUDA backend's messages already name the routine.
  return cuda::gemm_forward(handle, gemm, alpha, a_desc, a, b_desc, b,
                            bias ? &bias_desc : nullptr, bias, beta, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

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
