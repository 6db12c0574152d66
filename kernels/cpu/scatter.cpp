// CPU scatter_elements_forward and scatter_nd_forward: one walk over y; each element computed by
// the shared rule of kernels/common/scatter_plan.h from x's value there and the updates that land
// on it, or written as the invalid value (NaN, the lowest integer, false).
#include <cstring>
#include <limits>

#include "../api/backend.h"
#include "cpu_common.h"
#include "typed_access.h"

namespace jet {
namespace cpu {
namespace {

template <class T>
T invalid_of() {
  if constexpr (std::is_same<T, half>::value) {
    return half(std::numeric_limits<float>::quiet_NaN());
  } else if constexpr (std::is_same<T, uint8_t>::value) {
    return 0;
  } else if constexpr (std::is_floating_point<T>::value) {
    return std::numeric_limits<T>::quiet_NaN();
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

template <class T, class I>
void run(const ScatterPlan& p, const void* x, const void* indices, const void* updates, void* y) {
  using V = decltype(value_of(T()));
  const T* xp = static_cast<const T*>(x);
  const I* ip = static_cast<const I*>(indices);
  const T* up = static_cast<const T*>(updates);
  T* yp = static_cast<T*>(y);
  const auto load = [](T v) { return static_cast<V>(value_of(v)); };
  StridedWalk w(p.rank, p.y_dims, p.y_strides, p.x_strides);
  do {
    V v{};
    const bool ok = scatter_element<V, T, I>(p, w.idx, value_of(xp[w.off[1]]), ip, up, load, &v);
    yp[w.off[0]] = ok ? static_cast<T>(v) : invalid_of<T>();
  } while (w.next());
}

}  // namespace

Status scatter_forward(const ScatterPlan& plan, const TensorDesc& x_desc, const void* x, const TensorDesc& indices_desc,
                       const void* indices, const void* updates, const TensorDesc&, void* y) {
  const bool i32 = indices_desc.dtype() == DType::I32;
  with_storage_type(x_desc.dtype(), [&](auto type) {
    using T = decltype(type);
    if (i32)
      run<T, int32_t>(plan, x, indices, updates, y);
    else
      run<T, int64_t>(plan, x, indices, updates, y);
  });
  return Status();
}

}  // namespace cpu
}  // namespace jet
