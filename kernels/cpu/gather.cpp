// CPU gather_forward and gather_elements_forward: one walk over y's index space with the offsets
// of y, of x without its gathered dim and of indices; each element is copied as stored, or the invalid-index value
// (NaN, the integer's lowest value, false) written.
#include <cstring>
#include <limits>

#include "../api/backend.h"
#include "../common/gather_plan.h"
#include "cpu_common.h"

namespace jet {
namespace cpu {
namespace {

// The bytes gather_forward writes for an index out of range.
void invalid_value(DType t, unsigned char* out) {
  switch (t) {
    case DType::F32: {
      const float v = std::numeric_limits<float>::quiet_NaN();
      std::memcpy(out, &v, 4);
      return;
    }
    case DType::F16: {
      const uint16_t v = 0x7e00;  // NaN
      std::memcpy(out, &v, 2);
      return;
    }
    case DType::I32: {
      const int32_t v = std::numeric_limits<int32_t>::min();
      std::memcpy(out, &v, 4);
      return;
    }
    case DType::I64: {
      const int64_t v = std::numeric_limits<int64_t>::min();
      std::memcpy(out, &v, 8);
      return;
    }
    case DType::BOOL: *out = 0; return;
  }
}

// The walk over y shared by gather_forward and gather_elements_forward: xs and is are the strides
// of x (0 at the dims its index addresses) and of indices, per dim of y.
template <class I>
void run(int axis, const TensorDesc& x_desc, const void* x, const int64_t* xs, const void* indices,
         const int64_t* is, const TensorDesc& y_desc, void* y) {
  const size_t esz = dtype_size(y_desc.dtype());
  unsigned char invalid[8];
  invalid_value(y_desc.dtype(), invalid);
  const unsigned char* xp = static_cast<const unsigned char*>(x);
  const I* ip = static_cast<const I*>(indices);
  unsigned char* yp = static_cast<unsigned char*>(y);
  const int64_t n = x_desc.dim(axis), step = x_desc.stride(axis);
  StridedWalk w(y_desc.rank(), y_desc.dims(), y_desc.strides(), xs, is);
  do {
    const int64_t k = gather_index(ip[w.off[2]], n);
    const unsigned char* src = k >= 0 ? xp + (w.off[1] + k * step) * static_cast<int64_t>(esz) : invalid;
    std::memcpy(yp + w.off[0] * static_cast<int64_t>(esz), src, esz);
  } while (w.next());
}

}  // namespace

Status gather_forward(int axis, const TensorDesc& x_desc, const void* x, const TensorDesc& indices_desc,
                      const void* indices, const TensorDesc& y_desc, void* y) {
  int64_t xs[kMaxRank], is[kMaxRank];
  gather_strides(axis, x_desc, indices_desc, y_desc, xs, is);
  if (indices_desc.dtype() == DType::I32)
    run<int32_t>(axis, x_desc, x, xs, indices, is, y_desc, y);
  else
    run<int64_t>(axis, x_desc, x, xs, indices, is, y_desc, y);
  return Status();
}

Status gather_elements_forward(int axis, const TensorDesc& x_desc, const void* x, const TensorDesc& indices_desc,
                               const void* indices, const TensorDesc& y_desc, void* y) {
  int64_t xs[kMaxRank];
  gather_elements_strides(axis, x_desc, xs);
  if (indices_desc.dtype() == DType::I32)
    run<int32_t>(axis, x_desc, x, xs, indices, indices_desc.strides(), y_desc, y);
  else
    run<int64_t>(axis, x_desc, x, xs, indices, indices_desc.strides(), y_desc, y);
  return Status();
}

}  // namespace cpu
}  // namespace jet
