// add_tensor: validation and backend dispatch.
#include "backend.h"
#include "check.h"

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

}  // namespace jet
