// CUDA trilu_forward: one elementwise loop over y (elementwise.cuh, scalar accesses) with the
// offsets of y and x and, as two tensors that are never accessed (stride 1 along one dim, 0
// elsewhere), the element's row and column in its matrix; each element copied as stored (T: an
// unsigned integer of the element's size) or zeroed.
#include "../api/backend.h"
#include "elementwise.cuh"

namespace jet {
namespace cuda {
namespace {

template <class T>
struct TriluOp {
  const T* x;
  T* y;
  int64_t k;
  bool upper;

  __device__ __forceinline__ void setup() {}
  template <int V>
  __device__ __forceinline__ void apply(const EwLoop<4>& l, const int64_t* off) const {
    for (int v = 0; v < V; ++v) {
      const int64_t d = (off[3] + v * l.inner_stride(3)) - (off[2] + v * l.inner_stride(2));  // col - row
      const bool keep = upper ? d >= k : d <= k;
      y[off[0] + v * l.inner_stride(0)] = keep ? x[off[1] + v * l.inner_stride(1)] : T(0);
    }
  }
};

template <class T>
Status run(const Handle& h, bool upper, int64_t k, const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
           void* y) {
  const int r = y_desc.rank();
  int64_t rows[kMaxRank] = {}, cols[kMaxRank] = {};
  rows[r - 2] = 1;
  cols[r - 1] = 1;
  const TensorDesc row_view = TensorDesc::strided(DType::I64, r, y_desc.dims(), rows);
  const TensorDesc col_view = TensorDesc::strided(DType::I64, r, y_desc.dims(), cols);
  const TensorDesc* descs[4] = {&y_desc, &x_desc, &row_view, &col_view};
  const void* ptrs[4] = {y, x, nullptr, nullptr};
  const EwLoop<4> l = make_ew_loop<4>(descs, ptrs, 1);
  const TriluOp<T> op{static_cast<const T*>(x), static_cast<T*>(y), k, upper};
  return launch_ew<4, 1>(h, op, l, "trilu_forward");
}

}  // namespace

Status trilu_forward(const Handle& h, bool upper, int64_t k, const TensorDesc& x_desc, const void* x,
                     const TensorDesc& y_desc, void* y) {
  switch (dtype_size(y_desc.dtype())) {
    case 1: return run<uint8_t>(h, upper, k, x_desc, x, y_desc, y);
    case 2: return run<uint16_t>(h, upper, k, x_desc, x, y_desc, y);
    case 4: return run<uint32_t>(h, upper, k, x_desc, x, y_desc, y);
    case 8: return run<uint64_t>(h, upper, k, x_desc, x, y_desc, y);
    default: break;
  }
  return make_status(StatusCode::INTERNAL_ERROR, "trilu_forward: unknown dtype reached the backend");
}

}  // namespace cuda
}  // namespace jet
