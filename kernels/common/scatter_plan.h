// scatter_elements_forward's and scatter_nd_forward's per-element rule, shared by the CPU and CUDA
// backends (host and device): each element of y starts from x's value and applies, in order, every
// update that lands on it, found by scanning its candidates (the updates along the axis for
// ScatterElements, every index tuple for ScatterND). No atomics: deterministic everywhere.
#pragma once

#include <cstdint>
#include <type_traits>

#include "activation_math.h"  // JET_HOST_DEVICE
#include "jet/dnn/tensor.h"
#include "jet/dnn/tensor_ops.h"
#include "typed_math.h"

namespace jet {

// Built by the front end (kernels/cpu/scatter.cpp) from the descriptors.
struct ScatterPlan {
  ScatterReduction reduction = ScatterReduction::NONE;
  bool nd = false;
  int rank = 0;                       // y's (and x's)
  int64_t y_dims[kMaxRank] = {};
  int64_t y_strides[kMaxRank] = {};
  int64_t x_strides[kMaxRank] = {};
  // ScatterElements: updates and indices share upd_dims; indices are addressed by idx_strides.
  int axis = 0;
  int64_t upd_dims[kMaxRank] = {};
  int64_t upd_strides[kMaxRank] = {};  // ScatterND: the tuple dims' strides, then x's dims from k on
  int64_t idx_strides[kMaxRank] = {};  // ScatterND: the tuple dims' strides
  // ScatterND: tuples of k indices over tuple_rank dims (indices' dims but the last).
  int k = 0;
  int tuple_rank = 0;
  int64_t tuple_dims[kMaxRank] = {};
  int64_t n_tuples = 0;
  int64_t idx_last_stride = 0;
};

// a combined with update b.
template <class V>
JET_HOST_DEVICE inline V scatter_combine(ScatterReduction r, V a, V b) {
  if constexpr (std::is_same<V, uint8_t>::value) {
    return b;  // bool: NONE only (the front end refuses the others)
  } else {
    switch (r) {
      case ScatterReduction::NONE: return b;
      case ScatterReduction::ADD: return typed_add(a, b);
      case ScatterReduction::MUL: return typed_mul(a, b);
      case ScatterReduction::MAX: return (a != a || a > b) ? a : b;  // NaN on either side wins
      case ScatterReduction::MIN: return (a != a || a < b) ? a : b;
    }
    return b;
  }
}

// The value of y at coordinates c (x's value there `xv`, as the routine computes: Value), or false
// when an index it had to read is out of range (y gets the invalid value).
template <class V, class T, class I, class Load>
JET_HOST_DEVICE inline bool scatter_element(const ScatterPlan& p, const int64_t* c, V xv, const I* idx, const T* upd,
                                            Load load, V* out) {
  V v = xv;
  if (!p.nd) {
    int64_t bi = 0, bu = 0;
    for (int d = 0; d < p.rank; ++d) {
      if (d == p.axis) continue;
      if (c[d] >= p.upd_dims[d]) {  // no update reaches this element
        *out = v;
        return true;
      }
      bi += c[d] * p.idx_strides[d];
      bu += c[d] * p.upd_strides[d];
    }
    const int64_t n = p.y_dims[p.axis];
    for (int64_t j = 0; j < p.upd_dims[p.axis]; ++j) {
      int64_t t = static_cast<int64_t>(idx[bi + j * p.idx_strides[p.axis]]);
      if (t < -n || t >= n) return false;
      if (t < 0) t += n;
      if (t == c[p.axis]) v = scatter_combine(p.reduction, v, load(upd[bu + j * p.upd_strides[p.axis]]));
    }
    *out = v;
    return true;
  }
  for (int64_t t = 0; t < p.n_tuples; ++t) {
    int64_t oi = 0, ou = 0, r = t;
    for (int d = p.tuple_rank - 1; d >= 0; --d) {
      const int64_t q = r / p.tuple_dims[d];
      const int64_t e = r - q * p.tuple_dims[d];
      oi += e * p.idx_strides[d];
      ou += e * p.upd_strides[d];
      r = q;
    }
    bool match = true;
    for (int m = 0; m < p.k; ++m) {
      int64_t i = static_cast<int64_t>(idx[oi + m * p.idx_last_stride]);
      const int64_t n = p.y_dims[m];
      if (i < -n || i >= n) return false;
      if (i < 0) i += n;
      match = match && i == c[m];
    }
    if (!match) continue;
    for (int d = p.k; d < p.rank; ++d) ou += c[d] * p.upd_strides[p.tuple_rank + d - p.k];
    v = scatter_combine(p.reduction, v, load(upd[ou]));
  }
  *out = v;
  return true;
}

}  // namespace jet
