// CPU where_forward: one pass over y's index space, cond, a and b read through broadcast
// strides; the chosen element is copied as stored (any dtype, no conversion).
#include <cstring>

#include "../api/backend.h"
#include "cpu_common.h"

namespace jet {
namespace cpu {

Status where_forward(const TensorDesc& cond_desc, const void* cond, const TensorDesc& a_desc,
                     const void* a, const TensorDesc& b_desc, const void* b,
                     const TensorDesc& y_desc, void* y) {
  int64_t c_strides[kMaxRank], a_strides[kMaxRank], b_strides[kMaxRank];
  broadcast_strides(cond_desc, c_strides);
  broadcast_strides(a_desc, a_strides);
  broadcast_strides(b_desc, b_strides);
  const size_t esz = dtype_size(y_desc.dtype());
  const uint8_t* cp = static_cast<const uint8_t*>(cond);
  const unsigned char* ap = static_cast<const unsigned char*>(a);
  const unsigned char* bp = static_cast<const unsigned char*>(b);
  unsigned char* yp = static_cast<unsigned char*>(y);
  StridedWalk w(y_desc.rank(), y_desc.dims(), c_strides, a_strides, b_strides, y_desc.strides());
  do {
    const unsigned char* src = cp[w.off[0]] != 0 ? ap + w.off[1] * esz : bp + w.off[2] * esz;
    std::memcpy(yp + w.off[3] * esz, src, esz);
  } while (w.next());
  return Status();
}

}  // namespace cpu
}  // namespace jet
