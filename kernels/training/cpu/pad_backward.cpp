// pad_backward: validation (pad_forward's rules, with x = dx and y = dy) and backend dispatch.
//
// CPU pad backward: each dx element gathers from the dy positions that read it
// (kernels/training/pad_grad.h, shared with CUDA).

#include <cstdint>

#include "../api/train_check.h"
#include "../../cpu/cpu_common.h"
#include "../backend.h"

namespace jet {

JET_BACKEND_ENTRIES(pad_backward, const PadGradGeom& g, float alpha, const void* dy, float beta,
                    const TensorDesc& dx_desc, void* dx);

Status pad_backward(const Handle& handle, PadMode mode, const int64_t* pad_begin,
                    const int64_t* pad_end, float alpha, const TensorDesc& dy_desc,
                    const void* dy, float beta, const TensorDesc& dx_desc, void* dx) {
  const char* fn = "pad_backward";
  const int m = static_cast<int>(mode);
  if (m < static_cast<int>(PadMode::CONSTANT) || m > static_cast<int>(PadMode::EDGE))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown pad mode %d", fn, m);
  JET_TRY(check_train_tensor(fn, Ranks::ANY, dy_desc, dy, "dy"));
  JET_TRY(check_train_tensor(fn, Ranks::ANY, dx_desc, dx, "dx"));
  JET_TRY(check_ptr(fn, pad_begin, "pad_begin"));
  JET_TRY(check_ptr(fn, pad_end, "pad_end"));
  const int rank = dx_desc.rank();
  if (dy_desc.rank() != rank)
    return make_status(StatusCode::BAD_PARAM, "%s: dx has rank %d but dy has rank %d", fn, rank,
                       dy_desc.rank());
  const int64_t kPadLimit = INT64_MAX / 4;  // as pad_forward: the sums below cannot overflow
  PadGradGeom g;
  g.mode = mode;
  g.rank = rank;
  for (int i = 0; i < rank; ++i) {
    if (pad_begin[i] < -kPadLimit || pad_begin[i] > kPadLimit || pad_end[i] < -kPadLimit ||
        pad_end[i] > kPadLimit)
      return make_status(StatusCode::BAD_PARAM, "%s: pads %lld, %lld of dim %d are out of range",
                         fn, static_cast<long long>(pad_begin[i]),
                         static_cast<long long>(pad_end[i]), i);
    if (dx_desc.dim(i) + pad_begin[i] + pad_end[i] != dy_desc.dim(i))
      return make_status(StatusCode::BAD_PARAM,
                         "%s: dy has dims %s but padding dx (dims %s) by begin %s, end %s gives "
                         "another extent on dim %d",
                         fn, dims_string(rank, dy_desc.dims()).c_str(),
                         dims_string(rank, dx_desc.dims()).c_str(),
                         dims_string(rank, pad_begin).c_str(), dims_string(rank, pad_end).c_str(),
                         i);
    if (mode == PadMode::REFLECT && (pad_begin[i] >= dx_desc.dim(i) || pad_end[i] >= dx_desc.dim(i)))
      return make_status(StatusCode::INVALID_VALUE,
                         "%s: reflect mode needs pads < the dim on each side, but dim %d of dx is "
                         "%lld and its pads are %lld, %lld",
                         fn, i, static_cast<long long>(dx_desc.dim(i)),
                         static_cast<long long>(pad_begin[i]), static_cast<long long>(pad_end[i]));
    g.n[i] = dx_desc.dim(i);
    g.out[i] = dy_desc.dim(i);
    g.begin[i] = pad_begin[i];
    g.dys[i] = dy_desc.stride(i);
    g.dxs[i] = dx_desc.stride(i);
  }
  if (dx == dy)
    return make_status(StatusCode::BAD_PARAM, "%s: dx must not be the same buffer as dy", fn);
  if (handle.backend() == Backend::CPU) return cpu::pad_backward(g, alpha, dy, beta, dx_desc, dx);
#if defined(JET_HAVE_CUDA)
  return cuda::pad_backward(handle, g, alpha, dy, beta, dx_desc, dx);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {

Status pad_backward(const PadGradGeom& g, float alpha, const void* dy, float beta,
                    const TensorDesc& dx_desc, void* dx) {
  const float* dyp = static_cast<const float*>(dy);
  StridedWalk w(dx_desc.rank(), dx_desc.dims(), dx_desc.strides());
  do {
    blend_store(DType::F32, dx, w.off[0], alpha, pad_grad_at(g, dyp, w.idx), beta);
  } while (w.next());
  return Status();
}

}  // namespace cpu

}  // namespace jet
