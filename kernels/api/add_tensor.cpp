// add_tensor: validation and backend dispatch.
#include "backend.h"
#include "check.h"

namespace jet {

Status add_tensor(const Handle& handle, float alpha, const TensorDesc& b_desc, const void* b,
                  float beta, const TensorDesc& c_desc, void* c) {
  const char* fn = "add_tensor";
  JET_TRY(in_routine(fn, b_desc.validate("b")));
  JET_TRY(in_routine(fn, c_desc.validate("c")));
  JET_TRY(check_broadcast(fn, b_desc, "b", c_desc, "c"));
  JET_TRY(check_same_dtype(fn, b_desc, "b", c_desc, "c"));
  JET_TRY(check_ptr(fn, b, "b"));
  JET_TRY(check_ptr(fn, c, "c"));
  // c is written while b is still being read: sharing the buffer only works element by element.
  if (b == c && !b_desc.same_layout(c_desc))
    return make_status(StatusCode::BAD_PARAM,
                       "%s: b and c are the same buffer but b (dims %s, strides %s) does not have "
                       "c's layout (dims %s, strides %s)",
                       fn, dims_string(b_desc.rank(), b_desc.dims()).c_str(),
                       dims_string(b_desc.rank(), b_desc.strides()).c_str(),
                       dims_string(c_desc.rank(), c_desc.dims()).c_str(),
                       dims_string(c_desc.rank(), c_desc.strides()).c_str());
  if (handle.backend() == Backend::CPU) return cpu::add_tensor(alpha, b_desc, b, beta, c_desc, c);
  return cuda_not_available(fn);
}

}  // namespace jet
