// transform_tensor: validation and backend dispatch; below, the CPU backend.
//
// CPU transform_tensor: y = alpha * x + beta * y between any two layouts and dtypes of the same
// dims.
//
// The loop nest is simplified before walking it: dims of size 1 are dropped, the remaining dims
// are ordered by y's stride (largest first, so the writes walk forward through memory) and
// neighbours that are contiguous in both tensors are merged. NCHW -> NCHW or NHWC -> NHWC then
// becomes one long row, and a transpose keeps only the dims it really permutes.

#include <cstring>

#include "../api/backend.h"
#include "../api/check.h"
#include "cpu_common.h"
#include "typed_access.h"

namespace jet {

JET_BACKEND_ENTRIES(transform_tensor, float alpha, const TensorDesc& x_desc, const void* x,
                    float beta, const TensorDesc& y_desc, void* y);

Status transform_tensor(const Handle& handle, float alpha, const TensorDesc& x_desc,
                        const void* x, float beta, const TensorDesc& y_desc, void* y) {
  const char* fn = "transform_tensor";
  JET_RETURN_IF_ERROR(in_routine(fn, x_desc.validate_any_dtype("x")));
  JET_RETURN_IF_ERROR(in_routine(fn, y_desc.validate_any_dtype("y")));
  // Dtypes may differ: converting between them is part of this routine's job. Scaling and
  // blending are float operations: an integer or bool side is a plain copy or conversion.
  if ((!dtype_is_float(x_desc.dtype()) || !dtype_is_float(y_desc.dtype())) &&
      (alpha != 1.f || beta != 0.f))
    return make_status(StatusCode::NOT_SUPPORTED,
                       "%s: alpha %g and beta %g from %s to %s; integer and bool tensors are "
                       "copied and converted with alpha 1 and beta 0 only",
                       fn, static_cast<double>(alpha), static_cast<double>(beta),
                       dtype_name(x_desc.dtype()), dtype_name(y_desc.dtype()));
  JET_RETURN_IF_ERROR(check_same_dims(fn, x_desc, "x", y_desc, "y"));
  JET_RETURN_IF_ERROR(check_ptr(fn, x, "x"));
  JET_RETURN_IF_ERROR(check_ptr(fn, y, "y"));
  JET_RETURN_IF_ERROR(check_in_place(fn, x, x_desc, "x", y, y_desc, "y"));
  if (handle.backend() == Backend::CPU)
    return cpu::transform_tensor(alpha, x_desc, x, beta, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::transform_tensor(handle, alpha, x_desc, x, beta, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {
namespace {

// A two-tensor loop nest with the innermost dim last.
struct CopyLoops {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t x_strides[kMaxRank] = {};
  int64_t y_strides[kMaxRank] = {};
};

CopyLoops simplify_loops(const TensorDesc& x_desc, const TensorDesc& y_desc) {
  CopyLoops l;
  for (int i = 0; i < x_desc.rank(); ++i) {
    if (x_desc.dim(i) == 1) continue;  // contributes nothing to any offset
    l.dims[l.rank] = x_desc.dim(i);
    l.x_strides[l.rank] = x_desc.stride(i);
    l.y_strides[l.rank] = y_desc.stride(i);
    ++l.rank;
  }
  // Stable insertion sort by y stride, largest first: the order of visiting elements does not
  // matter for an elementwise copy, and writing in memory order is the cache-friendly choice.
  for (int j = 1; j < l.rank; ++j) {
    const int64_t d = l.dims[j], xs = l.x_strides[j], ys = l.y_strides[j];
    int k = j;
    for (; k > 0 && l.y_strides[k - 1] < ys; --k) {
      l.dims[k] = l.dims[k - 1];
      l.x_strides[k] = l.x_strides[k - 1];
      l.y_strides[k] = l.y_strides[k - 1];
    }
    l.dims[k] = d;
    l.x_strides[k] = xs;
    l.y_strides[k] = ys;
  }
  // Merge dim j into j+1 when stepping j once is the same as stepping j+1 across its whole
  // extent, in both tensors.
  int out = 0;
  for (int j = 0; j < l.rank; ++j) {
    if (out > 0) {
      const int p = out - 1;  // the merged dim so far, outer to j
      if (l.x_strides[p] == l.x_strides[j] * l.dims[j] &&
          l.y_strides[p] == l.y_strides[j] * l.dims[j]) {
        l.dims[p] *= l.dims[j];
        l.x_strides[p] = l.x_strides[j];
        l.y_strides[p] = l.y_strides[j];
        continue;
      }
    }
    l.dims[out] = l.dims[j];
    l.x_strides[out] = l.x_strides[j];
    l.y_strides[out] = l.y_strides[j];
    ++out;
  }
  l.rank = out;
  if (l.rank == 0) {  // a single element
    l.rank = 1;
    l.dims[0] = 1;
    l.x_strides[0] = 0;
    l.y_strides[0] = 0;
  }
  return l;
}

// One row of n elements: y[i * ys] = alpha * x[i * xs] (+ beta * y[i * ys]).
void copy_row(DType xt, const void* x, int64_t xo, int64_t xs, DType yt, void* y, int64_t yo,
              int64_t ys, int64_t n, float alpha, float beta) {
  if (xt == yt && alpha == 1.f && beta == 0.f && xs == 1 && ys == 1) {
    // A plain copy: move the bytes (memmove, since x may be y itself).
    const size_t esz = dtype_size(xt);
    std::memmove(static_cast<unsigned char*>(y) + yo * esz,
                 static_cast<const unsigned char*>(x) + xo * esz, static_cast<size_t>(n) * esz);
    return;
  }
  if (!dtype_is_float(xt) || !dtype_is_float(yt)) {
    // Integer or bool on either side: alpha 1, beta 0 (the front end checked), each value
    // converted in its own type.
    with_storage_type(xt, [&](auto x_type) {
      using X = decltype(x_type);
      with_storage_type(yt, [&](auto y_type) {
        using Y = decltype(y_type);
        const X* xp = static_cast<const X*>(x) + xo;
        Y* yp = static_cast<Y*>(y) + yo;
        for (int64_t i = 0; i < n; ++i) yp[i * ys] = convert_value<Y>(xp[i * xs]);
      });
    });
    return;
  }
  if (xt == DType::F32 && yt == DType::F32) {
    const float* xp = static_cast<const float*>(x) + xo;
    float* yp = static_cast<float*>(y) + yo;
    if (beta == 0.f) {
      for (int64_t i = 0; i < n; ++i) yp[i * ys] = alpha * xp[i * xs];
    } else {
      for (int64_t i = 0; i < n; ++i) yp[i * ys] = alpha * xp[i * xs] + beta * yp[i * ys];
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    blend_store(yt, y, yo + i * ys, alpha, load(xt, x, xo + i * xs), beta);
}

}  // namespace

Status transform_tensor(float alpha, const TensorDesc& x_desc, const void* x, float beta,
                        const TensorDesc& y_desc, void* y) {
  const CopyLoops l = simplify_loops(x_desc, y_desc);
  const int inner = l.rank - 1;
  // Walk the outer dims; the innermost one is a row handled by copy_row.
  StridedWalk w(inner, l.dims, l.x_strides, l.y_strides);
  do {
    copy_row(x_desc.dtype(), x, w.off[0], l.x_strides[inner], y_desc.dtype(), y, w.off[1],
             l.y_strides[inner], l.dims[inner], alpha, beta);
  } while (w.next());
  return Status();
}

}  // namespace cpu

}  // namespace jet
