// pad_forward: validation and backend dispatch; below, the CPU backend.
//
// CPU pad_forward: every y element reads the x element its index maps to (or the constant).
//
// Padding is "pad, then crop": a negative pad removes elements from that side of x, and the
// REFLECT / EDGE source index is always computed against x's full extent. Each row of y's last
// dim is filled in one inner loop; the outer dims' source index is resolved once per row.

#include "../api/backend.h"
#include "../api/check.h"
#include "cpu_common.h"

namespace jet {

JET_BACKEND_ENTRIES(pad_forward, PadMode mode, const int64_t* pad_begin, const int64_t* pad_end,
                    float value, float alpha, const TensorDesc& x_desc, const void* x, float beta,
                    const TensorDesc& y_desc, void* y);

namespace {

const char* pad_mode_name(PadMode m) {
  switch (m) {
    case PadMode::CONSTANT: return "constant";
    case PadMode::REFLECT: return "reflect";
    case PadMode::EDGE: return "edge";
  }
  return "unknown-pad-mode";
}

}  // namespace

Status pad_forward(const Handle& handle, PadMode mode, const int64_t* pad_begin,
                   const int64_t* pad_end, float value, float alpha, const TensorDesc& x_desc,
                   const void* x, float beta, const TensorDesc& y_desc, void* y) {
  const char* fn = "pad_forward";
  const int m = static_cast<int>(mode);
  if (!enum_in_range<PadMode>(m))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown pad mode %d", fn, m);
  JET_RETURN_IF_ERROR(in_routine(fn, x_desc.validate("x")));
  JET_RETURN_IF_ERROR(in_routine(fn, y_desc.validate("y")));
  JET_RETURN_IF_ERROR(check_same_dtype(fn, x_desc, "x", y_desc, "y"));
  JET_RETURN_IF_ERROR(check_ptr(fn, pad_begin, "pad_begin"));
  JET_RETURN_IF_ERROR(check_ptr(fn, pad_end, "pad_end"));
  JET_RETURN_IF_ERROR(check_ptr(fn, x, "x"));
  JET_RETURN_IF_ERROR(check_ptr(fn, y, "y"));
  const int rank = x_desc.rank();
  if (y_desc.rank() != rank)
    return make_status(StatusCode::BAD_PARAM, "%s: x has rank %d but y has rank %d", fn, rank,
                       y_desc.rank());
  // Pads beyond this bound cannot describe a valid y (dims are far smaller) and would overflow
  // the sums below.
  const int64_t kPadLimit = INT64_MAX / 4;
  int64_t expected[kMaxRank];
  bool dims_match = true;
  for (int i = 0; i < rank; ++i) {
    if (pad_begin[i] < -kPadLimit || pad_begin[i] > kPadLimit || pad_end[i] < -kPadLimit ||
        pad_end[i] > kPadLimit)
      return make_status(StatusCode::BAD_PARAM, "%s: pads %lld, %lld of dim %d are out of range",
                         fn, static_cast<long long>(pad_begin[i]),
                         static_cast<long long>(pad_end[i]), i);
    expected[i] = x_desc.dim(i) + pad_begin[i] + pad_end[i];
    dims_match = dims_match && expected[i] == y_desc.dim(i);
  }
  if (!dims_match)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: y has dims %s but padding x (dims %s) by begin %s, end %s gives %s", fn,
                       dims_text(rank, y_desc.dims()).c_str(),
                       dims_text(rank, x_desc.dims()).c_str(),
                       dims_text(rank, pad_begin).c_str(), dims_text(rank, pad_end).c_str(),
                       dims_text(rank, expected).c_str());
  if (mode == PadMode::REFLECT) {
    for (int i = 0; i < rank; ++i) {
      if (pad_begin[i] >= x_desc.dim(i) || pad_end[i] >= x_desc.dim(i))
        return make_status(StatusCode::INVALID_VALUE,
                           "%s: %s mode needs pads < the dim on each side, but dim %d of x is "
                           "%lld and its pads are %lld, %lld",
                           fn, pad_mode_name(mode), i, static_cast<long long>(x_desc.dim(i)),
                           static_cast<long long>(pad_begin[i]),
                           static_cast<long long>(pad_end[i]));
    }
  }
  if (handle.backend() == Backend::CPU)
    return cpu::pad_forward(mode, pad_begin, pad_end, value, alpha, x_desc, x, beta, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::pad_forward(handle, mode, pad_begin, pad_end, value, alpha, x_desc, x, beta, y_desc,
                           y);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {
namespace {

constexpr int64_t kInConstantPad = -1;

// Index into x (of extent n) read by output index j when the dim is padded by `begin` at its
// start; kInConstantPad for CONSTANT positions outside x. The front end guarantees for REFLECT
// that one reflection lands inside x.
inline int64_t source_index(PadMode mode, int64_t j, int64_t begin, int64_t n) {
  const int64_t s = j - begin;
  if (s >= 0 && s < n) return s;
  switch (mode) {
    case PadMode::CONSTANT: return kInConstantPad;
    case PadMode::EDGE: return s < 0 ? 0 : n - 1;
    case PadMode::REFLECT: return s < 0 ? -s : 2 * (n - 1) - s;
  }
  return kInConstantPad;
}

}  // namespace

Status pad_forward(PadMode mode, const int64_t* pad_begin, const int64_t* pad_end, float value,
                   float alpha, const TensorDesc& x_desc, const void* x, float beta,
                   const TensorDesc& y_desc, void* y) {
  (void)pad_end;  // implied by the dims, which the front end has checked
  const DType t = x_desc.dtype();
  const int last = x_desc.rank() - 1;
  const int64_t row_len = y_desc.dim(last);
  const int64_t x_row_stride = x_desc.stride(last);
  const int64_t y_row_stride = y_desc.stride(last);
  const int64_t x_row_len = x_desc.dim(last);
  const int64_t row_begin = pad_begin[last];

  // Walk y's outer dims (all but the last); walk.idx holds the outer index.
  StridedWalk walk(last, y_desc.dims(), y_desc.strides());
  do {
    int64_t x_row = 0;
    bool row_is_constant = false;
    for (int i = 0; i < last; ++i) {
      const int64_t s = source_index(mode, walk.idx[i], pad_begin[i], x_desc.dim(i));
      if (s == kInConstantPad) {
        row_is_constant = true;
        break;
      }
      x_row += s * x_desc.stride(i);
    }
    const int64_t y_row = walk.off[0];
    if (row_is_constant) {
      for (int64_t j = 0; j < row_len; ++j)
        blend_store(t, y, y_row + j * y_row_stride, alpha, value, beta);
      continue;
    }
    for (int64_t j = 0; j < row_len; ++j) {
      const int64_t s = source_index(mode, j, row_begin, x_row_len);
      const float v = s == kInConstantPad ? value : load(t, x, x_row + s * x_row_stride);
      blend_store(t, y, y_row + j * y_row_stride, alpha, v, beta);
    }
  } while (walk.next());
  return Status();
}

}  // namespace cpu

}  // namespace jet
