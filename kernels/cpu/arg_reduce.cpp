// CPU arg_reduce_forward: for each element of y, one walk along x's `axis`, values compared in
// their own type (arg_better, kernels/common/typed_math.h).
#include "../api/backend.h"
#include "cpu_common.h"
#include "typed_access.h"

namespace jet {
namespace cpu {
namespace {

template <class T>
void run(ArgReduceOp op, int axis, bool last, const TensorDesc& x_desc, const void* x,
         const TensorDesc& y_desc, void* y) {
  const T* xp = static_cast<const T*>(x);
  int64_t* yp = static_cast<int64_t*>(y);
  const bool max = op == ArgReduceOp::ARGMAX;
  const int64_t n = x_desc.dim(axis), step = x_desc.stride(axis);
  StridedWalk w(y_desc.rank(), y_desc.dims(), x_desc.strides(), y_desc.strides());
  do {
    auto best = value_of(xp[w.off[0]]);
    int64_t best_i = 0;
    for (int64_t i = 1; i < n; ++i) {
      const auto v = value_of(xp[w.off[0] + i * step]);
      if (arg_better(v, best, max, last)) {
        best = v;
        best_i = i;
      }
    }
    yp[w.off[1]] = best_i;
  } while (w.next());
}

}  // namespace

Status arg_reduce_forward(ArgReduceOp op, int axis, bool select_last_index,
                          const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
                          void* y) {
  switch (x_desc.dtype()) {
    case DType::F32: run<float>(op, axis, select_last_index, x_desc, x, y_desc, y); break;
    case DType::F16: run<half>(op, axis, select_last_index, x_desc, x, y_desc, y); break;
    case DType::I32: run<int32_t>(op, axis, select_last_index, x_desc, x, y_desc, y); break;
    case DType::I64: run<int64_t>(op, axis, select_last_index, x_desc, x, y_desc, y); break;
    case DType::BOOL:
      return Status(StatusCode::INTERNAL_ERROR, "arg_reduce_forward: bool x reached the backend");
  }
  return Status();
}

}  // namespace cpu
}  // namespace jet
