// gather_elements_forward: validation and backend dispatch.
#include "backend.h"
#include "check.h"

namespace jet {

JET_BACKEND_ENTRIES(gather_elements_forward, int axis, const TensorDesc& x_desc, const void* x,
                    const TensorDesc& indices_desc, const void* indices, const TensorDesc& y_desc,
                    void* y);

Status gather_elements_forward(const Handle& handle, int axis, const TensorDesc& x_desc,
                               const void* x, const TensorDesc& indices_desc, const void* indices,
                               const TensorDesc& y_desc, void* y) {
  const char* fn = "gather_elements_forward";
  JET_RETURN_IF_ERROR(check_gather_descs(fn, axis, x_desc, indices_desc, y_desc));
  const int r = x_desc.rank();
  if (indices_desc.rank() != r || y_desc.rank() != r)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: x, indices and y have ranks %d, %d and %d; they must be equal", fn, r,
                       indices_desc.rank(), y_desc.rank());
  for (int d = 0; d < r; ++d) {
    if (y_desc.dim(d) != indices_desc.dim(d))
      return make_status(StatusCode::BAD_PARAM, "%s: y has dims %s but indices %s", fn,
                         dims_text(r, y_desc.dims()).c_str(),
                         dims_text(r, indices_desc.dims()).c_str());
    if (d != axis && indices_desc.dim(d) > x_desc.dim(d))
      return make_status(StatusCode::BAD_PARAM, "%s: indices %s are larger than x %s at dim %d",
                         fn, dims_text(r, indices_desc.dims()).c_str(),
                         dims_text(r, x_desc.dims()).c_str(), d);
  }
  JET_RETURN_IF_ERROR(check_gather_buffers(fn, x, indices, y));
  if (handle.backend() == Backend::CPU)
    return cpu::gather_elements_forward(axis, x_desc, x, indices_desc, indices, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::gather_elements_forward(handle, axis, x_desc, x, indices_desc, indices, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

}  // namespace jet
