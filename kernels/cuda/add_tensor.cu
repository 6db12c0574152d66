// CUDA add_tensor: c = alpha * b + beta * c, b broadcast to c.
//
// One elementwise loop over c (elementwise.cuh) with b read through broadcast strides. The loop
// simplification turns the common cases into fast paths without special code: a full-shape b of
// c's layout is one flat vectorized loop; a per-channel bias over NCHW reads one bias value per
// 16-byte vector of c (inner stride 0), over NHWC a 16-byte vector of bias (inner stride 1).
#include "../api/backend.h"
#include "elementwise.cuh"

namespace jet {
namespace cuda {
namespace {

template <class T>
struct AddOp {
  const T* b;
  T* c;
  float alpha, beta;

  __device__ __forceinline__ void setup() {}
  template <int V>
  __device__ __forceinline__ void apply(const EwLoop<2>& l, const int64_t* off) const {
    float r[V];
    load_v<V>(b, off[1], l.inner_stride(1), l.vec[1], r);
    blend_store_v<V>(c, off[0], l.inner_stride(0), l.vec[0], alpha, r, beta);
  }
};

template <class T>
Status run(const Handle& h, float alpha, const TensorDesc& bd, const void* b, float beta,
           const TensorDesc& cd, void* c) {
  const TensorDesc* descs[2] = {&cd, &bd};
  const void* ptrs[2] = {c, b};
  constexpr int V = vec_width<T, T>();
  const AddOp<T> op{static_cast<const T*>(b), static_cast<T*>(c), alpha, beta};
  return launch_ew<2, V>(h, op, make_ew_loop<2>(descs, ptrs, V), "add_tensor");
}

}  // namespace

Status add_tensor(const Handle& h, float alpha, const TensorDesc& b_desc, const void* b,
                  float beta, const TensorDesc& c_desc, void* c) {
  if (c_desc.dtype() == DType::F32) return run<float>(h, alpha, b_desc, b, beta, c_desc, c);
  return run<__half>(h, alpha, b_desc, b, beta, c_desc, c);
}

JET_CUDA_MODULE(add_tensor)

}  // namespace cuda
}  // namespace jet
