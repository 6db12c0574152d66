// gather_forward: validation and backend dispatch.
#include "backend.h"
#include "check.h"

namespace jet {

JET_BACKEND_ENTRIES(gather_forward, int axis, const TensorDesc& x_desc, const void* x,
                    const TensorDesc& indices_desc, const void* indices, const TensorDesc& y_desc,
                    void* y);

Status gather_forward(const Handle& handle, int axis, const TensorDesc& x_desc, const void* x,
                      const TensorDesc& indices_desc, const void* indices,
                      const TensorDesc& y_desc, void* y) {
  const char* fn = "gather_forward";
  JET_RETURN_IF_ERROR(check_gather_descs(fn, axis, x_desc, indices_desc, y_desc));
  const int xr = x_desc.rank(), ir = indices_desc.rank();
  if (y_desc.rank() != xr - 1 + ir)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: y has rank %d; x of rank %d gathered by indices of rank %d gives %d", fn,
                       y_desc.rank(), xr, ir, xr - 1 + ir);
  for (int d = 0; d < y_desc.rank(); ++d) {
    const int64_t want = d < axis ? x_desc.dim(d)
                         : d < axis + ir ? indices_desc.dim(d - axis)
                                         : x_desc.dim(d - ir + 1);
    if (y_desc.dim(d) != want)
      return make_status(StatusCode::BAD_PARAM,
                         "%s: y has dims %s; x %s gathered along axis %d by indices %s gives %lld "
                         "at dim %d",
                         fn, dims_text(y_desc.rank(), y_desc.dims()).c_str(),
                         dims_text(xr, x_desc.dims()).c_str(), axis,
                         dims_text(ir, indices_desc.dims()).c_str(), static_cast<long long>(want), d);
  }
  JET_RETURN_IF_ERROR(check_gather_buffers(fn, x, indices, y));
  if (handle.backend() == Backend::CPU)
    return cpu::gather_forward(axis, x_desc, x, indices_desc, indices, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::gather_forward(handle, axis, x_desc, x, indices_desc, indices, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

}  // namespace jet
