// CPU trilu_forward: one walk over y with the offsets of y and x and, as two more "tensors" of
// stride 1 along one dim and 0 elsewhere, the element's row and column in its matrix.
#include <cstring>

#include "../api/backend.h"
#include "cpu_common.h"

namespace jet {
namespace cpu {

Status trilu_forward(bool upper, int64_t k, const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
                     void* y) {
  const int r = y_desc.rank();
  int64_t rows[kMaxRank] = {}, cols[kMaxRank] = {};
  rows[r - 2] = 1;
  cols[r - 1] = 1;
  const int64_t esz = static_cast<int64_t>(dtype_size(y_desc.dtype()));
  const unsigned char* xp = static_cast<const unsigned char*>(x);
  unsigned char* yp = static_cast<unsigned char*>(y);
  StridedWalk w(r, y_desc.dims(), y_desc.strides(), x_desc.strides(), rows, cols);
  do {
    const int64_t d = w.off[3] - w.off[2];  // col - row
    const bool keep = upper ? d >= k : d <= k;
    if (keep)
      std::memcpy(yp + w.off[0] * esz, xp + w.off[1] * esz, static_cast<size_t>(esz));
    else
      std::memset(yp + w.off[0] * esz, 0, static_cast<size_t>(esz));  // 0 in every dtype, +0.0 in floats
  } while (w.next());
  return Status();
}

}  // namespace cpu
}  // namespace jet
