// gather_forward's (and gather_elements_forward's) loop over y, shared by the CPU and CUDA backends (host code): per dim of y,
// the stride of x (0 over the indices' dims: x's own gathered dim is addressed by the index) and
// the stride of indices (0 outside its dims).
#pragma once

#include <cstdint>

#include "jet/dnn/tensor.h"

namespace jet {

inline void gather_strides(int axis, const TensorDesc& x, const TensorDesc& indices, const TensorDesc& y,
                           int64_t* x_strides, int64_t* index_strides) {
  const int ir = indices.rank();
  for (int d = 0; d < y.rank(); ++d) {
    if (d < axis) {
      x_strides[d] = x.stride(d);
      index_strides[d] = 0;
    } else if (d < axis + ir) {
      x_strides[d] = 0;
      index_strides[d] = indices.stride(d - axis);
    } else {
      x_strides[d] = x.stride(d - ir + 1);
      index_strides[d] = 0;
    }
  }
}

// gather_elements_forward's strides of x per dim of y (= the indices' dims): x's own, 0 at the
// axis, which the index addresses.
inline void gather_elements_strides(int axis, const TensorDesc& x, int64_t* x_strides) {
  for (int d = 0; d < x.rank(); ++d) x_strides[d] = d == axis ? 0 : x.stride(d);
}

// An index of gather_forward in [0, n), or -1 when it is outside [-n, n).
template <class I>
inline int64_t gather_index(I i, int64_t n) {
  const int64_t v = static_cast<int64_t>(i);
  if (v < -n || v >= n) return -1;
  return v < 0 ? v + n : v;
}

}  // namespace jet
