// reduce_forward: validation and backend dispatch; below, the CPU backend.
//
// CPU reduce_forward: one output element at a time, walking the reduced dims of x.
//
// Sums accumulate in double so that long f32 reductions stay within ~1e-7 relative (an f32
// accumulator drifts by ~n * 2^-24). MAX and MIN are exact in any precision and propagate NaN.

#include <cmath>

#include "../api/backend.h"
#include "../api/check.h"
#include "cpu_common.h"

namespace jet {

JET_BACKEND_ENTRIES(reduce_forward, ReduceOp op, float alpha, const TensorDesc& x_desc,
                    const void* x, float beta, const TensorDesc& y_desc, void* y);

Status reduce_forward(const Handle& handle, ReduceOp op, float alpha, const TensorDesc& x_desc,
                      const void* x, float beta, const TensorDesc& y_desc, void* y) {
  const char* fn = "reduce_forward";
  const int o = static_cast<int>(op);
  if (!enum_in_range<ReduceOp>(o))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown reduce op %d", fn, o);
  JET_RETURN_IF_ERROR(check_reshaping_io(fn, Ranks::ANY, x_desc, x, y_desc, y));
  for (int i = 0; i < x_desc.rank(); ++i) {
    if (y_desc.dim(i) != 1 && y_desc.dim(i) != x_desc.dim(i))
      return make_status(StatusCode::BAD_PARAM,
                         "%s: y has dims %s and x has dims %s; each dim of y must be 1 (reduced) "
                         "or equal to x's, but dim %d is neither",
                         fn, dims_text(y_desc.rank(), y_desc.dims()).c_str(),
                         dims_text(x_desc.rank(), x_desc.dims()).c_str(), i);
  }
  if (handle.backend() == Backend::CPU) return cpu::reduce_forward(op, alpha, x_desc, x, beta, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::reduce_forward(handle, op, alpha, x_desc, x, beta, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {
namespace {

// A set of dims with their strides in up to two tensors.
struct Loops {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t x_strides[kMaxRank] = {};
  int64_t y_strides[kMaxRank] = {};
};

// Orders the reduced dims by x stride (largest first) and merges neighbours that are contiguous
// in x, so that the innermost loop runs over as long a unit-stride run as x allows.
void sort_and_merge_by_x_stride(Loops* l) {
  for (int j = 1; j < l->rank; ++j) {
    const int64_t d = l->dims[j], xs = l->x_strides[j];
    int k = j;
    for (; k > 0 && l->x_strides[k - 1] < xs; --k) {
      l->dims[k] = l->dims[k - 1];
      l->x_strides[k] = l->x_strides[k - 1];
    }
    l->dims[k] = d;
    l->x_strides[k] = xs;
  }
  int out = 0;
  for (int j = 0; j < l->rank; ++j) {
    if (out > 0 && l->x_strides[out - 1] == l->x_strides[j] * l->dims[j]) {
      l->dims[out - 1] *= l->dims[j];
      l->x_strides[out - 1] = l->x_strides[j];
      continue;
    }
    l->dims[out] = l->dims[j];
    l->x_strides[out] = l->x_strides[j];
    ++out;
  }
  l->rank = out;
}

}  // namespace

Status reduce_forward(ReduceOp op, float alpha, const TensorDesc& x_desc, const void* x,
                      float beta, const TensorDesc& y_desc, void* y) {
  const DType t = x_desc.dtype();
  Loops kept;     // dims y keeps (size > 1): walked once per output element
  Loops reduced;  // dims where y is 1 and x is not
  for (int i = 0; i < x_desc.rank(); ++i) {
    if (x_desc.dim(i) == 1) continue;
    Loops& l = y_desc.dim(i) == 1 ? reduced : kept;
    l.dims[l.rank] = x_desc.dim(i);
    l.x_strides[l.rank] = x_desc.stride(i);
    l.y_strides[l.rank] = y_desc.stride(i);
    ++l.rank;
  }
  sort_and_merge_by_x_stride(&reduced);
  int64_t count = 1;
  for (int i = 0; i < reduced.rank; ++i) count *= reduced.dims[i];
  // The innermost reduced dim is a row; a reduction over nothing is a row of one element.
  const int inner = reduced.rank > 0 ? reduced.rank - 1 : 0;
  const int64_t row_len = reduced.rank > 0 ? reduced.dims[inner] : 1;
  const int64_t row_stride = reduced.rank > 0 ? reduced.x_strides[inner] : 0;
  const int outer_rank = reduced.rank > 0 ? reduced.rank - 1 : 0;

  StridedWalk out(kept.rank, kept.dims, kept.x_strides, kept.y_strides);
  do {
    const int64_t x_base = out.off[0];
    double sum = 0.0;
    float extreme = load(t, x, x_base);  // MAX / MIN start from the first element
    StridedWalk rows(outer_rank, reduced.dims, reduced.x_strides);
    do {
      const int64_t row = x_base + rows.off[0];
      if (op == ReduceOp::SUM || op == ReduceOp::MEAN) {
        if (t == DType::F32) {
          const float* xp = static_cast<const float*>(x) + row;
          for (int64_t j = 0; j < row_len; ++j) sum += static_cast<double>(xp[j * row_stride]);
        } else {
          for (int64_t j = 0; j < row_len; ++j) sum += load(t, x, row + j * row_stride);
        }
      } else if (op == ReduceOp::MAX) {
        for (int64_t j = 0; j < row_len; ++j) {
          const float v = load(t, x, row + j * row_stride);
          if (v > extreme || std::isnan(v)) extreme = v;  // once NaN, nothing compares greater
        }
      } else {
        for (int64_t j = 0; j < row_len; ++j) {
          const float v = load(t, x, row + j * row_stride);
          if (v < extreme || std::isnan(v)) extreme = v;
        }
      }
    } while (rows.next());
    float result;
    switch (op) {
      case ReduceOp::SUM: result = static_cast<float>(sum); break;
      case ReduceOp::MEAN: result = static_cast<float>(sum / static_cast<double>(count)); break;
      default: result = extreme; break;
    }
    blend_store(t, y, out.off[1], alpha, result, beta);
  } while (out.next());
  return Status();
}

}  // namespace cpu

}  // namespace jet
