// CUDA logic_tensor and where_forward: one elementwise loop over the output (elementwise.cuh,
// scalar accesses), inputs read through broadcast strides, values handled in their own type.
#include "../api/backend.h"
#include "elementwise.cuh"
#include "typed_access.cuh"

namespace jet {
namespace cuda {
namespace {

template <class T>
struct CompareOp {
  const T* a;
  const T* b;
  uint8_t* c;
  LogicOp op;

  __device__ __forceinline__ void setup() {}
  template <int V>
  __device__ __forceinline__ void apply(const EwLoop<3>& l, const int64_t* off) const {
    for (int k = 0; k < V; ++k) {
      const auto va = value_of(a[off[1] + k * l.inner_stride(1)]);
      const auto vb = value_of(b[off[2] + k * l.inner_stride(2)]);
      c[off[0] + k * l.inner_stride(0)] = apply_compare(op, va, vb) ? 1 : 0;
    }
  }
};

struct LogicalOp {
  const uint8_t* a;
  const uint8_t* b;
  uint8_t* c;
  LogicOp op;

  __device__ __forceinline__ void setup() {}
  template <int V>
  __device__ __forceinline__ void apply(const EwLoop<3>& l, const int64_t* off) const {
    for (int k = 0; k < V; ++k) {
      c[off[0] + k * l.inner_stride(0)] =
          apply_logical(op, a[off[1] + k * l.inner_stride(1)], b[off[2] + k * l.inner_stride(2)]) ? 1 : 0;
    }
  }
};

// y = cond ? a : b, T of y's element size (the bytes are copied, never converted).
template <class T>
struct WhereOp {
  const uint8_t* cond;
  const T* a;
  const T* b;
  T* y;

  __device__ __forceinline__ void setup() {}
  template <int V>
  __device__ __forceinline__ void apply(const EwLoop<4>& l, const int64_t* off) const {
    for (int k = 0; k < V; ++k) {
      const bool pick_a = cond[off[1] + k * l.inner_stride(1)] != 0;
      y[off[0] + k * l.inner_stride(0)] =
          pick_a ? a[off[2] + k * l.inner_stride(2)] : b[off[3] + k * l.inner_stride(3)];
    }
  }
};

}  // namespace

Status logic_tensor(const Handle& h, LogicOp op, const TensorDesc& a_desc, const void* a,
                    const TensorDesc& b_desc, const void* b, const TensorDesc& c_desc, void* c) {
  const TensorDesc* descs[3] = {&c_desc, &a_desc, &b_desc};
  const void* ptrs[3] = {c, a, b};
  const EwLoop<3> l = make_ew_loop<3>(descs, ptrs, 1);
  uint8_t* cp = static_cast<uint8_t*>(c);
  if (is_logical(op)) {
    const LogicalOp k{static_cast<const uint8_t*>(a), static_cast<const uint8_t*>(b), cp, op};
    return launch_ew<3, 1>(h, k, l, "logic_tensor");
  }
  Status st;
  with_storage_type(a_desc.dtype(), [&](auto type) {
    using T = decltype(type);
    const CompareOp<T> k{static_cast<const T*>(a), static_cast<const T*>(b), cp, op};
    st = launch_ew<3, 1>(h, k, l, "logic_tensor");
  });
  return st;
}

Status where_forward(const Handle& h, const TensorDesc& cond_desc, const void* cond,
                     const TensorDesc& a_desc, const void* a, const TensorDesc& b_desc,
                     const void* b, const TensorDesc& y_desc, void* y) {
  const TensorDesc* descs[4] = {&y_desc, &cond_desc, &a_desc, &b_desc};
  const void* ptrs[4] = {y, cond, a, b};
  const EwLoop<4> l = make_ew_loop<4>(descs, ptrs, 1);
  const uint8_t* cp = static_cast<const uint8_t*>(cond);
  switch (dtype_size(y_desc.dtype())) {
    case 1: {
      const WhereOp<uint8_t> k{cp, static_cast<const uint8_t*>(a), static_cast<const uint8_t*>(b), static_cast<uint8_t*>(y)};
      return launch_ew<4, 1>(h, k, l, "where_forward");
    }
    case 2: {
      const WhereOp<uint16_t> k{cp, static_cast<const uint16_t*>(a), static_cast<const uint16_t*>(b), static_cast<uint16_t*>(y)};
      return launch_ew<4, 1>(h, k, l, "where_forward");
    }
    case 4: {
      const WhereOp<uint32_t> k{cp, static_cast<const uint32_t*>(a), static_cast<const uint32_t*>(b), static_cast<uint32_t*>(y)};
      return launch_ew<4, 1>(h, k, l, "where_forward");
    }
    case 8: {
      const WhereOp<uint64_t> k{cp, static_cast<const uint64_t*>(a), static_cast<const uint64_t*>(b), static_cast<uint64_t*>(y)};
      return launch_ew<4, 1>(h, k, l, "where_forward");
    }
    default: break;
  }
  return make_status(StatusCode::INTERNAL_ERROR, "where_forward: element size %zu reached the backend",
                     dtype_size(y_desc.dtype()));
}

}  // namespace cuda
}  // namespace jet
