// CPU pad_forward: every y element reads the x element its index maps to (or the constant).
//
// Padding is "pad, then crop": a negative pad removes elements from that side of x, and the
// REFLECT / EDGE source index is always computed against x's full extent. Each row of y's last
// dim is filled in one inner loop; the outer dims' source index is resolved once per row.
#include "../api/backend.h"
#include "cpu_common.h"

namespace jet {
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
