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
  broadcast_binary<T, T, uint8_t>(a_desc, a, b_desc, b, c_desc, c, [op](T x, T y) {
    return static_cast<uint8_t>(apply_compare(op, value_of(x), value_of(y)) ? 1 : 0);
  });
}

void run_logical(LogicOp op, const TensorDesc& a_desc, const void* a, const TensorDesc& b_desc,
                 const void* b, const TensorDesc& c_desc, void* c) {
  const auto f = [op](uint8_t x, uint8_t y) {
    return static_cast<uint8_t>(apply_logical(op, x, y) ? 1 : 0);
  };
  broadcast_binary<uint8_t, uint8_t, uint8_t>(a_desc, a, b_desc, b, c_desc, c, f);
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
