// CPU cumsum_forward: for each line along `axis` (walked as y's dims with 1 at the axis), one
// running sum in f32 (floats) or the integer's own type (wrapping, computed unsigned).
#include <type_traits>

#include "../api/backend.h"
#include "cpu_common.h"
#include "typed_access.h"

namespace jet {
namespace cpu {
namespace {

template <class T>
void run(int axis, bool exclusive, bool reverse, const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
         void* y) {
  using Acc = typename std::conditional<std::is_integral<T>::value, T, float>::type;
  const T* xp = static_cast<const T*>(x);
  T* yp = static_cast<T*>(y);
  const int r = y_desc.rank();
  int64_t lines[kMaxRank];
  for (int d = 0; d < r; ++d) lines[d] = d == axis ? 1 : y_desc.dim(d);
  const int64_t n = y_desc.dim(axis), xstep = x_desc.stride(axis), ystep = y_desc.stride(axis);
  StridedWalk w(r, lines, x_desc.strides(), y_desc.strides());
  do {
    Acc sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t i = reverse ? n - 1 - j : j;
      const Acc v = static_cast<Acc>(value_of(xp[w.off[0] + i * xstep]));
      if (!exclusive) sum = typed_add(sum, v);
      yp[w.off[1] + i * ystep] = static_cast<T>(sum);
      if (exclusive) sum = typed_add(sum, v);
    }
  } while (w.next());
}

}  // namespace

Status cumsum_forward(int axis, bool exclusive, bool reverse, const TensorDesc& x_desc, const void* x,
                      const TensorDesc& y_desc, void* y) {
  switch (x_desc.dtype()) {
    case DType::F32: run<float>(axis, exclusive, reverse, x_desc, x, y_desc, y); break;
    case DType::F16: run<half>(axis, exclusive, reverse, x_desc, x, y_desc, y); break;
    case DType::I32: run<int32_t>(axis, exclusive, reverse, x_desc, x, y_desc, y); break;
    case DType::I64: run<int64_t>(axis, exclusive, reverse, x_desc, x, y_desc, y); break;
    case DType::BOOL: return Status(StatusCode::INTERNAL_ERROR, "cumsum_forward: bool x reached the backend");
  }
  return Status();
}

}  // namespace cpu
}  // namespace jet
