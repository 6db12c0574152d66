// logic_tensor and logic_op_name: validation and backend dispatch; below, the CPU backend.
//
// CPU logic_tensor: one pass over c's index space, a and b read through broadcast strides and
// compared in their own type (kernels/common/typed_math.h).

#include "../api/backend.h"
#include "../api/check.h"
#include "../common/typed_math.h"
#include "cpu_common.h"
#include "typed_access.h"

namespace jet {

JET_BACKEND_ENTRIES(logic_tensor, LogicOp op, const TensorDesc& a_desc, const void* a,
                    const TensorDesc& b_desc, const void* b, const TensorDesc& c_desc, void* c);

const char* logic_op_name(LogicOp op) {
  switch (op) {
    case LogicOp::EQUAL: return "equal";
    case LogicOp::LESS: return "less";
    case LogicOp::LESS_OR_EQUAL: return "less_or_equal";
    case LogicOp::GREATER: return "greater";
    case LogicOp::GREATER_OR_EQUAL: return "greater_or_equal";
    case LogicOp::AND: return "and";
    case LogicOp::OR: return "or";
    case LogicOp::XOR: return "xor";
  }
  return "unknown-logic-op";
}

Status logic_tensor(const Handle& handle, LogicOp op, const TensorDesc& a_desc, const void* a,
                    const TensorDesc& b_desc, const void* b, const TensorDesc& c_desc, void* c) {
  const char* fn = "logic_tensor";
  const int op_value = static_cast<int>(op);
  if (!enum_in_range<LogicOp>(op_value))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown logic op %d", fn, op_value);
  JET_RETURN_IF_ERROR(in_routine(fn, a_desc.validate_any_dtype("a")));
  JET_RETURN_IF_ERROR(in_routine(fn, b_desc.validate_any_dtype("b")));
  JET_RETURN_IF_ERROR(in_routine(fn, c_desc.validate_any_dtype("c")));
  JET_RETURN_IF_ERROR(check_same_dtype(fn, a_desc, "a", b_desc, "b"));
  if (c_desc.dtype() != DType::BOOL)
    return make_status(StatusCode::BAD_PARAM, "%s: c is %s; the result of %s is bool", fn,
                       dtype_name(c_desc.dtype()), logic_op_name(op));
  const DType t = a_desc.dtype();
  const bool logical = op == LogicOp::AND || op == LogicOp::OR || op == LogicOp::XOR;
  if (logical && t != DType::BOOL)
    return make_status(StatusCode::BAD_PARAM, "%s: %s takes bool a and b, not %s", fn,
                       logic_op_name(op), dtype_name(t));
  if (!logical && t == DType::BOOL && op != LogicOp::EQUAL)
    return make_status(StatusCode::BAD_PARAM, "%s: %s takes f32, f16, i32 or i64 a and b, not bool",
                       fn, logic_op_name(op));
  JET_RETURN_IF_ERROR(check_ptr(fn, c, "c"));
  TensorDesc a_aligned, b_aligned;
  JET_RETURN_IF_ERROR(check_broadcast_input(fn, a, a_desc, "a", c, c_desc, "c", &a_aligned));
  JET_RETURN_IF_ERROR(check_broadcast_input(fn, b, b_desc, "b", c, c_desc, "c", &b_aligned));
  if (handle.backend() == Backend::CPU)
    return cpu::logic_tensor(op, a_aligned, a, b_aligned, b, c_desc, c);
#if defined(JET_HAVE_CUDA)
  return cuda::logic_tensor(handle, op, a_aligned, a, b_aligned, b, c_desc, c);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

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
