// CUDA op_tensor: c = op(alpha1 * a, alpha2 * b) + beta * c, a and b broadcast to c.
//
// One elementwise loop over c (elementwise.cuh), a and b read through broadcast strides; same
// layouts collapse to a flat 16-byte vectorized loop, per-channel operands read one value (NCHW)
// or one vector (NHWC) per vector of c. Each thread reads its a and b elements before writing
// the same c elements, so c may alias a or b of the same layout.
#include "../api/backend.h"
#include "../common/tensor_op_math.h"
#include "elementwise.cuh"

namespace jet {
namespace cuda {
namespace {

template <class T, TensorOp Op>
struct TensorOpOp {
  const T* a;
  const T* b;
  T* c;
  float alpha1, alpha2, beta;

  __device__ __forceinline__ void setup() {}
  template <int V>
  __device__ __forceinline__ void apply(const EwLoop<3>& l, const int64_t* off) const {
    float va[V], vb[V];
    load_v<V>(a, off[1], l.inner_stride(1), l.vec[1], va);
    load_v<V>(b, off[2], l.inner_stride(2), l.vec[2], vb);
    for (int k = 0; k < V; ++k) va[k] = apply_tensor_op(Op, alpha1 * va[k], alpha2 * vb[k]);
    blend_store_v<V>(c, off[0], l.inner_stride(0), l.vec[0], 1.f, va, beta);
  }
};

// Integer tensors: exact in T (apply_int_tensor_op), scalar accesses, no scaling.
template <class T, class U>
struct IntTensorOp {
  const T* a;
  const T* b;
  T* c;
  TensorOp op;

  __device__ __forceinline__ void setup() {}
  template <int V>
  __device__ __forceinline__ void apply(const EwLoop<3>& l, const int64_t* off) const {
    for (int k = 0; k < V; ++k) {
      const T va = a[off[1] + k * l.inner_stride(1)];
      const T vb = b[off[2] + k * l.inner_stride(2)];
      c[off[0] + k * l.inner_stride(0)] = apply_int_tensor_op<T, U>(op, va, vb);
    }
  }
};

template <class T, class U>
Status run_int(const Handle& h, TensorOp op, const TensorDesc& ad, const void* a,
               const TensorDesc& bd, const void* b, const TensorDesc& cd, void* c) {
  const TensorDesc* descs[3] = {&cd, &ad, &bd};
  const void* ptrs[3] = {c, a, b};
  const EwLoop<3> l = make_ew_loop<3>(descs, ptrs, 1);
  const IntTensorOp<T, U> k{static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(c), op};
  return launch_ew<3, 1>(h, k, l, "op_tensor");
}

template <class T, TensorOp Op>
Status run_op(const Handle& h, float alpha1, const void* a, float alpha2, const void* b,
              float beta, void* c, const EwLoop<3>& l) {
  const TensorOpOp<T, Op> op{static_cast<const T*>(a), static_cast<const T*>(b),
                             static_cast<T*>(c), alpha1, alpha2, beta};
  return launch_ew<3, vec_width<T, T>()>(h, op, l, "op_tensor");
}

template <class T>
Status run(const Handle& h, TensorOp op, float alpha1, const TensorDesc& ad, const void* a,
           float alpha2, const TensorDesc& bd, const void* b, float beta, const TensorDesc& cd,
           void* c) {
  const TensorDesc* descs[3] = {&cd, &ad, &bd};
  const void* ptrs[3] = {c, a, b};
  const EwLoop<3> l = make_ew_loop<3>(descs, ptrs, vec_width<T, T>());
  switch (op) {
    case TensorOp::ADD: return run_op<T, TensorOp::ADD>(h, alpha1, a, alpha2, b, beta, c, l);
    case TensorOp::SUB: return run_op<T, TensorOp::SUB>(h, alpha1, a, alpha2, b, beta, c, l);
    case TensorOp::MUL: return run_op<T, TensorOp::MUL>(h, alpha1, a, alpha2, b, beta, c, l);
    case TensorOp::DIV: return run_op<T, TensorOp::DIV>(h, alpha1, a, alpha2, b, beta, c, l);
    case TensorOp::MIN: return run_op<T, TensorOp::MIN>(h, alpha1, a, alpha2, b, beta, c, l);
    case TensorOp::MAX: return run_op<T, TensorOp::MAX>(h, alpha1, a, alpha2, b, beta, c, l);
    case TensorOp::POW: return run_op<T, TensorOp::POW>(h, alpha1, a, alpha2, b, beta, c, l);
    case TensorOp::MOD: return run_op<T, TensorOp::MOD>(h, alpha1, a, alpha2, b, beta, c, l);
    case TensorOp::MOD_FLOOR: return run_op<T, TensorOp::MOD_FLOOR>(h, alpha1, a, alpha2, b, beta, c, l);
  }
  return make_status(StatusCode::INTERNAL_ERROR, "op_tensor: unknown op reached the backend");
}

}  // namespace

Status op_tensor(const Handle& h, TensorOp op, float alpha1, const TensorDesc& a_desc,
                 const void* a, float alpha2, const TensorDesc& b_desc, const void* b, float beta,
                 const TensorDesc& c_desc, void* c) {
  if (c_desc.dtype() == DType::I32)
    return run_int<int32_t, uint32_t>(h, op, a_desc, a, b_desc, b, c_desc, c);
  if (c_desc.dtype() == DType::I64)
    return run_int<int64_t, uint64_t>(h, op, a_desc, a, b_desc, b, c_desc, c);
  if (c_desc.dtype() == DType::F32)
    return run<float>(h, op, alpha1, a_desc, a, alpha2, b_desc, b, beta, c_desc, c);
  return run<__half>(h, op, alpha1, a_desc, a, alpha2, b_desc, b, beta, c_desc, c);
}

JET_CUDA_MODULE(op_tensor)

}  // namespace cuda
}  // namespace jet
