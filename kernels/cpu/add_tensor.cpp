// add_tensor: validation and backend dispatch; below, the CPU backend.
//
// CPU add_tensor: one pass over c's index space, b read through broadcast strides (0 on the dims
// where b has size 1), so bias, scalar and full-shape b share one path.

#include "../api/backend.h"
#include "../api/check.h"
#include "cpu_common.h"

namespace jet {

JET_BACKEND_ENTRIES(add_tensor, float alpha, const TensorDesc& b_desc, const void* b, float beta,
                    const TensorDesc& c_desc, void* c);

Status add_tensor(const Handle& handle, float alpha, const TensorDesc& b_desc, const void* b,
                  float beta, const TensorDesc& c_desc, void* c) {
  const char* fn = "add_tensor";
  JET_RETURN_IF_ERROR(in_routine(fn, b_desc.validate("b")));
  JET_RETURN_IF_ERROR(in_routine(fn, c_desc.validate("c")));
  JET_RETURN_IF_ERROR(check_broadcast(fn, b_desc, "b", c_desc, "c"));
  JET_RETURN_IF_ERROR(check_same_dtype(fn, b_desc, "b", c_desc, "c"));
  JET_RETURN_IF_ERROR(check_ptr(fn, b, "b"));
  JET_RETURN_IF_ERROR(check_ptr(fn, c, "c"));
  JET_RETURN_IF_ERROR(check_in_place(fn, b, b_desc, "b", c, c_desc, "c"));
  if (handle.backend() == Backend::CPU) return cpu::add_tensor(alpha, b_desc, b, beta, c_desc, c);
#if defined(JET_HAVE_CUDA)
  return cuda::add_tensor(handle, alpha, b_desc, b, beta, c_desc, c);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

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
