// gemm_backward: the data, weight and bias gradients of gemm_forward, composed from
// gemm_forward (with transposed views) and reduce_forward, so both backends run it.
#include <utility>

#include "train_check.h"

namespace jet {

namespace {

// The same memory with its last two dims swapped: a transposed view.
TensorDesc swap_last(const TensorDesc& d) {
  int64_t dims[kMaxRank], strides[kMaxRank];
  const int r = d.rank();
  for (int i = 0; i < r; ++i) {
    dims[i] = d.dim(i);
    strides[i] = d.stride(i);
  }
  std::swap(dims[r - 1], dims[r - 2]);
  std::swap(strides[r - 1], strides[r - 2]);
  return TensorDesc::strided(d.dtype(), r, dims, strides);
}

}  // namespace

Status gemm_backward(const Handle& handle, const GemmDesc& gemm, float alpha,
                     const TensorDesc& a_desc, const void* a, const TensorDesc& b_desc,
                     const void* b, const TensorDesc& dy_desc, const void* dy, float beta,
                     const TensorDesc& da_desc, void* da, const TensorDesc& db_desc, void* db,
                     const TensorDesc& dbias_desc, void* dbias) {
  const char* fn = "gemm_backward";
  JET_TRY(check_train_tensor(fn, Ranks::ANY, dy_desc, dy, "dy"));
  const int rank = dy_desc.rank();
  if (rank < 2 || rank > 3)
    return make_status(StatusCode::BAD_PARAM, "%s: dy has rank %d; GEMM tensors have rank 2 or 3",
                       fn, rank);
  if (!da && !db && !dbias)
    return make_status(StatusCode::BAD_PARAM, "%s: da, db and dbias are all null", fn);
  // The operands whose gradient is wanted must not broadcast a batch of 1.
  const auto check_operand = [&](const TensorDesc& d, const void* p, const char* name,
                                 const TensorDesc& gd, const void* gp, const char* gname) -> Status {
    JET_TRY(check_train_tensor(fn, Ranks::ANY, d, p, name));
    JET_TRY(check_train_tensor(fn, Ranks::ANY, gd, gp, gname));
    JET_TRY(check_dims_as(fn, gd, gname, d, name));
    if (rank == 3 && d.rank() == 3 && d.dim(0) != dy_desc.dim(0))
      return make_status(StatusCode::NOT_SUPPORTED,
                         "%s: %s has batch %lld but dy has %lld; the gradient of a broadcast "
                         "operand (a sum over the batch) is not implemented",
                         fn, name, static_cast<long long>(d.dim(0)),
                         static_cast<long long>(dy_desc.dim(0)));
    return Status();
  };
  // dA = dy @ op(b)^T, written through a transposed view of da when trans_a.
  if (da) {
    JET_TRY(check_operand(a_desc, a, "a", da_desc, da, "da"));
    JET_TRY(check_train_tensor(fn, Ranks::ANY, b_desc, b, "b"));
    const TensorDesc out = gemm.trans_a ? swap_last(da_desc) : da_desc;
    JET_TRY(in_routine(fn, gemm_forward(handle, GemmDesc{false, !gemm.trans_b}, alpha, dy_desc, dy,
                                        b_desc, b, TensorDesc(), nullptr, beta, out, da)));
  }
  // dB = op(a)^T @ dy, written through a transposed view of db when trans_b.
  if (db) {
    JET_TRY(check_operand(b_desc, b, "b", db_desc, db, "db"));
    JET_TRY(check_train_tensor(fn, Ranks::ANY, a_desc, a, "a"));
    const TensorDesc out = gemm.trans_b ? swap_last(db_desc) : db_desc;
    JET_TRY(in_routine(fn, gemm_forward(handle, GemmDesc{!gemm.trans_a, false}, alpha, a_desc, a,
                                        dy_desc, dy, TensorDesc(), nullptr, beta, out, db)));
  }
  if (dbias) {
    JET_TRY(check_train_tensor(fn, Ranks::ANY, dbias_desc, dbias, "dbias"));
    JET_TRY(in_routine(fn, reduce_forward(handle, ReduceOp::SUM, alpha, dy_desc, dy, beta,
                                          dbias_desc, dbias)));
  }
  return Status();
}

}  // namespace jet
