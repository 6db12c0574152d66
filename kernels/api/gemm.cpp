// gemm_forward: validation and backend dispatch.
#include "backend.h"
#include "check.h"

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

}  // namespace jet
