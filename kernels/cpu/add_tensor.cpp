// CPU add_tensor: one pass over c's index space, b read through broadcast strides (0 on the dims
// where b has size 1), so bias, scalar and full-shape b share one path.
#include "../api/backend.h"
#include "cpu_common.h"

namespace jet {
namespace cpu {

Status add_tensor(float alpha, const TensorDesc& b_desc, const void* b, float beta,
                  const TensorDesc& c_desc, void* c) {
  const DType t = c_desc.dtype();
  int64_t b_strides[kMaxRank];
  broadcast_strides(b_desc, b_strides);
  StridedWalk w(c_desc.rank(), c_desc.dims(), b_strides, c_desc.strides());
  do {
    blend_store(t, c, w.off[1], alpha, load(t, b, w.off[0]), beta);
  } while (w.next());
  return Status();
}

}  // namespace cpu
}  // namespace jet
