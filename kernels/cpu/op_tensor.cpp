// op_tensor and tensor_op_name: validation and backend dispatch; below, the CPU backend.
//
// CPU op_tensor: one pass over c's index space, a and b read through broadcast strides (0 on the
// dims where they have size 1). Each element reads a and b before writing c at the same index, so
// c may alias an input of the same layout.

#include "../api/backend.h"
#include "../api/check.h"
#include "../common/tensor_op_math.h"
#include "cpu_common.h"

namespace jet {

JET_BACKEND_ENTRIES(op_tensor, TensorOp op, float alpha1, const TensorDesc& a_desc, const void* a,
                    float alpha2, const TensorDesc& b_desc, const void* b, float beta,
                    const TensorDesc& c_desc, void* c);

const char* tensor_op_name(TensorOp op) {
  switch (op) {
    case TensorOp::ADD: return "add";
    case TensorOp::SUB: return "sub";
    case TensorOp::MUL: return "mul";
    case TensorOp::DIV: return "div";
    case TensorOp::MIN: return "min";
    case TensorOp::MAX: return "max";
    case TensorOp::POW: return "pow";
    case TensorOp::MOD: return "mod";
    case TensorOp::MOD_FLOOR: return "mod_floor";
  }
  return "unknown-tensor-op";
}

Status op_tensor(const Handle& handle, TensorOp op, float alpha1, const TensorDesc& a_desc,
                 const void* a, float alpha2, const TensorDesc& b_desc, const void* b, float beta,
                 const TensorDesc& c_desc, void* c) {
  const char* fn = "op_tensor";
  const int op_value = static_cast<int>(op);
  if (!enum_in_range<TensorOp>(op_value))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown tensor op %d", fn, op_value);
  JET_RETURN_IF_ERROR(in_routine(fn, a_desc.validate_any_dtype("a")));
  JET_RETURN_IF_ERROR(in_routine(fn, b_desc.validate_any_dtype("b")));
  JET_RETURN_IF_ERROR(in_routine(fn, c_desc.validate_any_dtype("c")));
  JET_RETURN_IF_ERROR(check_same_dtype(fn, a_desc, "a", c_desc, "c"));
  JET_RETURN_IF_ERROR(check_same_dtype(fn, b_desc, "b", c_desc, "c"));
  const DType t = c_desc.dtype();
  if (t == DType::BOOL)
    return make_status(StatusCode::NOT_SUPPORTED, "%s: c is bool; this routine takes f32, f16, i32 or i64", fn);
  if ((t == DType::I32 || t == DType::I64) && (alpha1 != 1.f || alpha2 != 1.f || beta != 0.f))
    return make_status(StatusCode::NOT_SUPPORTED,
                       "%s: %s tensors take alpha1 = alpha2 = 1 and beta = 0 (given %g, %g, %g)", fn,
                       dtype_name(t), static_cast<double>(alpha1), static_cast<double>(alpha2),
                       static_cast<double>(beta));
  JET_RETURN_IF_ERROR(check_ptr(fn, c, "c"));
  TensorDesc a_aligned, b_aligned;
  JET_RETURN_IF_ERROR(check_broadcast_input(fn, a, a_desc, "a", c, c_desc, "c", &a_aligned));
  JET_RETURN_IF_ERROR(check_broadcast_input(fn, b, b_desc, "b", c, c_desc, "c", &b_aligned));
  if (handle.backend() == Backend::CPU)
    return cpu::op_tensor(op, alpha1, a_aligned, a, alpha2, b_aligned, b, beta, c_desc, c);
#if defined(JET_HAVE_CUDA)
  return cuda::op_tensor(handle, op, alpha1, a_aligned, a, alpha2, b_aligned, b, beta, c_desc,
                         c);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

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
