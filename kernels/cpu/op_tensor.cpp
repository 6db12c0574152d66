// CPU op_tensor: one pass over c's index space, a and b read through broadcast strides (0 on the
// dims where they have size 1). Each element reads a and b before writing c at the same index, so
// c may alias an input of the same layout.
#include "../api/backend.h"
#include "../common/tensor_op_math.h"
#include "cpu_common.h"

namespace jet {
namespace cpu {
namespace {

// Integer tensors: exact in T (apply_int_tensor_op), no scaling (the front end checks).
template <class T, class U>
void run_int(TensorOp op, const TensorDesc& a_desc, const void* a, const TensorDesc& b_desc,
             const void* b, const TensorDesc& c_desc, void* c) {
  broadcast_binary<T, T, T>(a_desc, a, b_desc, b, c_desc, c,
                            [op](T x, T y) { return apply_int_tensor_op<T, U>(op, x, y); });
}

}  // namespace

Status op_tensor(TensorOp op, float alpha1, const TensorDesc& a_desc, const void* a, float alpha2,
                 const TensorDesc& b_desc, const void* b, float beta, const TensorDesc& c_desc,
                 void* c) {
  const DType t = c_desc.dtype();
  if (t == DType::I32) {
    run_int<int32_t, uint32_t>(op, a_desc, a, b_desc, b, c_desc, c);
    return Status();
  }
  if (t == DType::I64) {
    run_int<int64_t, uint64_t>(op, a_desc, a, b_desc, b, c_desc, c);
    return Status();
  }
  int64_t a_strides[kMaxRank], b_strides[kMaxRank];
  broadcast_strides(a_desc, a_strides);
  broadcast_strides(b_desc, b_strides);
  StridedWalk w(c_desc.rank(), c_desc.dims(), a_strides, b_strides, c_desc.strides());
  do {
    const float va = alpha1 * load(t, a, w.off[0]);
    const float vb = alpha2 * load(t, b, w.off[1]);
    blend_store(t, c, w.off[2], 1.f, apply_tensor_op(op, va, vb), beta);
  } while (w.next());
  return Status();
}

}  // namespace cpu
}  // namespace jet
