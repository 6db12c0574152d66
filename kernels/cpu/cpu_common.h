// Helpers for the CPU backend: typed element access and iteration over strided tensors.
#pragma once

#include <cstdint>

#include "jet/dnn.h"

namespace jet {
namespace cpu {

inline float load(DType t, const void* base, int64_t off) {
  if (t == DType::F32) return static_cast<const float*>(base)[off];
  return half::half_bits_to_float(static_cast<const uint16_t*>(base)[off]);
}

inline void store(DType t, void* base, int64_t off, float v) {
  if (t == DType::F32)
    static_cast<float*>(base)[off] = v;
  else
    static_cast<uint16_t*>(base)[off] = half::float_to_half_bits(v);
}

// y = alpha * v + beta * y, not reading y when beta == 0 (so NaNs in y never leak).
inline void blend_store(DType t, void* y, int64_t off, float alpha, float v, float beta) {
  float r = alpha * v;
  if (beta != 0.f) r += beta * load(t, y, off);
  store(t, y, off, r);
}

// Walks every index of a rank-`rank` shape in row-major order, keeping the element offsets of up
// to four tensors (strides given per tensor). Usage:
//   StridedWalk w(rank, dims, {xs, ys});  do { f(w.off[0], w.off[1]); } while (w.next());
struct StridedWalk {
  int rank;
  int64_t dims[kMaxRank];
  int64_t strides[4][kMaxRank];
  int64_t idx[kMaxRank] = {};
  int64_t off[4] = {0, 0, 0, 0};
  int count;

  StridedWalk(int r, const int64_t* d, const int64_t* s0, const int64_t* s1 = nullptr,
              const int64_t* s2 = nullptr, const int64_t* s3 = nullptr)
      : rank(r), count(s3 ? 4 : (s2 ? 3 : (s1 ? 2 : 1))) {
    const int64_t* s[4] = {s0, s1, s2, s3};
    for (int i = 0; i < r; ++i) {
      dims[i] = d[i];
      for (int t = 0; t < count; ++t) strides[t][i] = s[t][i];
    }
  }

  // Advances to the next index; false after the last one.
  bool next() {
    for (int i = rank - 1; i >= 0; --i) {
      if (++idx[i] < dims[i]) {
        for (int t = 0; t < count; ++t) off[t] += strides[t][i];
        return true;
      }
      for (int t = 0; t < count; ++t) off[t] -= strides[t][i] * (dims[i] - 1);
      idx[i] = 0;
    }
    return false;
  }
};

// Mean and biased variance (divided by the count) of the elements of one strided group, two-pass
// in double: the variance is the mean squared deviation from the mean, so a large mean next to a
// small spread costs no accuracy (instancenorm's planes, layernorm's groups).
inline void group_mean_var(DType t, const void* x, int64_t xo, int rank, const int64_t* dims,
                           const int64_t* xs, double* mean, double* var) {
  double sum = 0.0, count = 0.0;
  {
    StridedWalk w(rank, dims, xs);
    do {
      sum += load(t, x, xo + w.off[0]);
      count += 1.0;
    } while (w.next());
  }
  *mean = sum / count;
  double squares = 0.0;
  StridedWalk w(rank, dims, xs);
  do {
    const double d = load(t, x, xo + w.off[0]) - *mean;
    squares += d * d;
  } while (w.next());
  *var = squares / count;
}

// Strides of `b` as seen from c's dims: 0 where b broadcasts (b's dim is 1).
inline void broadcast_strides(const TensorDesc& b, int64_t* out) {
  for (int i = 0; i < b.rank(); ++i) out[i] = b.dim(i) == 1 ? 0 : b.stride(i);
}

// c = f(a, b) element by element over c's index space, a and b (same rank as c) read through
// broadcast strides; each element reads a and b before writing c at the same index, so c may
// alias an input of its layout. TA, TB, TC: the storage types.
template <class TA, class TB, class TC, class F>
void broadcast_binary(const TensorDesc& a_desc, const void* a, const TensorDesc& b_desc,
                      const void* b, const TensorDesc& c_desc, void* c, F f) {
  int64_t a_strides[kMaxRank], b_strides[kMaxRank];
  broadcast_strides(a_desc, a_strides);
  broadcast_strides(b_desc, b_strides);
  const TA* ap = static_cast<const TA*>(a);
  const TB* bp = static_cast<const TB*>(b);
  TC* cp = static_cast<TC*>(c);
  StridedWalk w(c_desc.rank(), c_desc.dims(), a_strides, b_strides, c_desc.strides());
  do {
    cp[w.off[2]] = f(ap[w.off[0]], bp[w.off[1]]);
  } while (w.next());
}

}  // namespace cpu
}  // namespace jet
