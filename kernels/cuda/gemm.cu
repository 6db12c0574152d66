// CUDA gemm_forward on the tiled engine (gemm_core.cuh): A and B are strided matrices read in
// place (a transpose is a swap of strides), one z-slice of the grid per batch entry (a batch dim
// of 1 broadcasts through a zero batch stride), bias and alpha/beta applied in the epilogue.
#include "../api/backend.h"
#include "gemm_core.cuh"

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
  if constexpr (std::is_same<T, __half>::value) {  // the tensor-core kernel has one mapping
    return run<T, false, false>(h, a, b, ep, batch);
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
