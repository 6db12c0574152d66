// CPU logic_tensor: one pass over c's index space, a and b read through broadcast strides and
// compared in their own type (kernels/common/typed_math.h).
#include "../api/backend.h"
#include "../common/typed_math.h"
#include "cpu_common.h"
#include "typed_access.h"

namespace jet {
namespace cpu {
namespace {

template <class T>
void run(LogicOp op, const TensorDesc& a_desc, const void* a, const TensorDesc& b_desc,
         const void* b, const TensorDesc& c_desc, void* c) {
  int64_t a_strides[kMaxRank], b_strides[kMaxRank];
  broadcast_strides(a_desc, a_strides);
  broadcast_strides(b_desc, b_strides);
  const T* ap = static_cast<const T*>(a);
  const T* bp = static_cast<const T*>(b);
  uint8_t* cp = static_cast<uint8_t*>(c);
  StridedWalk w(c_desc.rank(), c_desc.dims(), a_strides, b_strides, c_desc.strides());
  do {
    const auto va = value_of(ap[w.off[0]]);
    const auto vb = value_of(bp[w.off[1]]);
    cp[w.off[2]] = apply_compare(op, va, vb) ? 1 : 0;
  } while (w.next());
}

void run_logical(LogicOp op, const TensorDesc& a_desc, const void* a, const TensorDesc& b_desc,
                 const void* b, const TensorDesc& c_desc, void* c) {
  int64_t a_strides[kMaxRank], b_strides[kMaxRank];
  broadcast_strides(a_desc, a_strides);
  broadcast_strides(b_desc, b_strides);
  const uint8_t* ap = static_cast<const uint8_t*>(a);
  const uint8_t* bp = static_cast<const uint8_t*>(b);
  uint8_t* cp = static_cast<uint8_t*>(c);
  StridedWalk w(c_desc.rank(), c_desc.dims(), a_strides, b_strides, c_desc.strides());
  do {
    cp[w.off[2]] = apply_logical(op, ap[w.off[0]], bp[w.off[1]]) ? 1 : 0;
  } while (w.next());
}

}  // namespace

Status logic_tensor(LogicOp op, const TensorDesc& a_desc, const void* a, const TensorDesc& b_desc,
                    const void* b, const TensorDesc& c_desc, void* c) {
  if (is_logical(op)) {
    run_logical(op, a_desc, a, b_desc, b, c_desc, c);
    return Status();
  }
  switch (a_desc.dtype()) {
    case DType::F32: run<float>(op, a_desc, a, b_desc, b, c_desc, c); break;
    case DType::F16: run<half>(op, a_desc, a, b_desc, b, c_desc, c); break;
    case DType::I32: run<int32_t>(op, a_desc, a, b_desc, b, c_desc, c); break;
    case DType::I64: run<int64_t>(op, a_desc, a, b_desc, b, c_desc, c); break;
    case DType::BOOL: run<uint8_t>(op, a_desc, a, b_desc, b, c_desc, c); break;
  }
  return Status();
}

}  // namespace cpu
}  // namespace jet
