// gather_elements_forward: validation and backend dispatch; below, the CPU backend.
//
// gather_forward: validation and backend dispatch.
//
// CPU gather_forward and gather_elements_forward: one walk over y's index space with the offsets
// of y, of x without its gathered dim and of indices; each element is copied as stored, or the invalid-index value
// (NaN, the integer's lowest value, false) written.

#include <cstring>
#include <limits>

#include "../api/backend.h"
#include "../api/check.h"
#include "../common/gather_plan.h"
#include "cpu_common.h"

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

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {
namespace {

// The bytes gather_forward writes for an index out of range.
void invalid_value(DType t, unsigned char* out) {
  switch (t) {
    case DType::F32: {
      const float v = std::numeric_limits<float>::quiet_NaN();
      std::memcpy(out, &v, 4);
      return;
    }
    case DType::F16: {
      const uint16_t v = 0x7e00;  // NaN
      std::memcpy(out, &v, 2);
      return;
    }
    case DType::I32: {
      const int32_t v = std::numeric_limits<int32_t>::min();
      std::memcpy(out, &v, 4);
      return;
    }
    case DType::I64: {
      const int64_t v = std::numeric_limits<int64_t>::min();
      std::memcpy(out, &v, 8);
      return;
    }
    case DType::BOOL: *out = 0; return;
  }
}

// The walk over y shared by gather_forward and gather_elements_forward: xs and is are the strides
// of x (0 at the dims its index addresses) and of indices, per dim of y.
template <class I>
void run(int axis, const TensorDesc& x_desc, const void* x, const int64_t* xs, const void* indices,
         const int64_t* is, const TensorDesc& y_desc, void* y) {
  const size_t esz = dtype_size(y_desc.dtype());
  unsigned char invalid[8];
  invalid_value(y_desc.dtype(), invalid);
  const unsigned char* xp = static_cast<const unsigned char*>(x);
  const I* ip = static_cast<const I*>(indices);
  unsigned char* yp = static_cast<unsigned char*>(y);
  const int64_t n = x_desc.dim(axis), step = x_desc.stride(axis);
  StridedWalk w(y_desc.rank(), y_desc.dims(), y_desc.strides(), xs, is);
  do {
    const int64_t k = gather_index(ip[w.off[2]], n);
    const unsigned char* src = k >= 0 ? xp + (w.off[1] + k * step) * static_cast<int64_t>(esz) : invalid;
    std::memcpy(yp + w.off[0] * static_cast<int64_t>(esz), src, esz);
  } while (w.next());
}

}  // namespace

Status gather_forward(int axis, const TensorDesc& x_desc, const void* x, const TensorDesc& indices_desc,
                      const void* indices, const TensorDesc& y_desc, void* y) {
  int64_t xs[kMaxRank], is[kMaxRank];
  gather_strides(axis, x_desc, indices_desc, y_desc, xs, is);
  if (indices_desc.dtype() == DType::I32)
    run<int32_t>(axis, x_desc, x, xs, indices, is, y_desc, y);
  else
    run<int64_t>(axis, x_desc, x, xs, indices, is, y_desc, y);
  return Status();
}

Status gather_elements_forward(int axis, const TensorDesc& x_desc, const void* x, const TensorDesc& indices_desc,
                               const void* indices, const TensorDesc& y_desc, void* y) {
  int64_t xs[kMaxRank];
  gather_elements_strides(axis, x_desc, xs);
  if (indices_desc.dtype() == DType::I32)
    run<int32_t>(axis, x_desc, x, xs, indices, indices_desc.strides(), y_desc, y);
  else
    run<int64_t>(axis, x_desc, x, xs, indices, indices_desc.strides(), y_desc, y);
  return Status();
}

}  // namespace cpu

}  // namespace jet
