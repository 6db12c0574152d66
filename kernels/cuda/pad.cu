// CUDA pad_forward: every y element reads the x element its index maps to (or the constant).
//
// Padding is "pad, then crop", as on the CPU: the REFLECT / EDGE source index is measured against
// x's full extent. Each dim maps independently, so the host drops y's size-1 dims (their single
// source index is folded into a base offset, or makes all of y constant) and orders the rest by
// y's stride so that consecutive threads write consecutive addresses whatever y's layout is.
// One thread per y element; index decomposition uses FastDiv (elementwise.cuh).
#include "../api/backend.h"
#include "elementwise.cuh"

namespace jet {
namespace cuda {
namespace {

constexpr int64_t kInConstantPad = -1;

// Index into x (extent n) read by output index j when the dim is padded by `begin` at its start;
// kInConstantPad for CONSTANT positions outside x. The front end guarantees for REFLECT that one
// reflection lands inside x.
__host__ __device__ __forceinline__ int64_t source_index(PadMode mode, int64_t j, int64_t begin,
                                                         int64_t n) {
  const int64_t s = j - begin;
  if (s >= 0 && s < n) return s;
  if (mode == PadMode::CONSTANT) return kInConstantPad;
  if (mode == PadMode::EDGE) return s < 0 ? 0 : n - 1;
  return s < 0 ? -s : 2 * (n - 1) - s;  // REFLECT
}

struct PadParams {
  int rank;
  int64_t n;  // y elements
  int64_t y_dims[kMaxRank];
  FastDiv div[kMaxRank];
  int64_t y_strides[kMaxRank];
  int64_t x_dims[kMaxRank];
  int64_t x_strides[kMaxRank];
  int64_t begin[kMaxRank];
  int64_t x_base;     // offset contributed by y's size-1 dims
  bool all_constant;  // a size-1 dim of y maps into the constant padding
  PadMode mode;
  float value;
};

template <class T>
__global__ void pad_kernel(PadParams p, const T* x, T* y, float alpha, float beta) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < p.n;
       i += step) {
    int64_t rest = i, xo = p.x_base, yo = 0;
    bool constant = p.all_constant;
    for (int d = p.rank - 1; d >= 0; --d) {
      int64_t j = rest;
      if (d > 0) {
        const int64_t q = p.div[d].div(rest);
        j = rest - q * p.y_dims[d];
        rest = q;
      }
      yo += j * p.y_strides[d];
      const int64_t s = source_index(p.mode, j, p.begin[d], p.x_dims[d]);
      if (s == kInConstantPad)
        constant = true;
      else
        xo += s * p.x_strides[d];
    }
    blend_store(y + yo, alpha, constant ? p.value : to_f32(x[xo]), beta);
  }
}

template <class T>
Status run(const Handle& h, PadMode mode, const int64_t* pad_begin, float value, float alpha,
           const TensorDesc& xd, const void* x, float beta, const TensorDesc& yd, void* y) {
  PadParams p{};
  p.n = yd.elements();
  p.mode = mode;
  p.value = value;
  for (int i = 0; i < yd.rank(); ++i) {
    if (yd.dim(i) == 1) {
      const int64_t s = source_index(mode, 0, pad_begin[i], xd.dim(i));
      if (s == kInConstantPad)
        p.all_constant = true;
      else
        p.x_base += s * xd.stride(i);
      continue;
    }
    // Insert ordered by y's stride, largest first (stable).
    int pos = p.rank;
    while (pos > 0 && p.y_strides[pos - 1] < yd.stride(i)) {
      p.y_dims[pos] = p.y_dims[pos - 1];
      p.y_strides[pos] = p.y_strides[pos - 1];
      p.x_dims[pos] = p.x_dims[pos - 1];
      p.x_strides[pos] = p.x_strides[pos - 1];
      p.begin[pos] = p.begin[pos - 1];
      --pos;
    }
    p.y_dims[pos] = yd.dim(i);
    p.y_strides[pos] = yd.stride(i);
    p.x_dims[pos] = xd.dim(i);
    p.x_strides[pos] = xd.stride(i);
    p.begin[pos] = pad_begin[i];
    ++p.rank;
  }
  for (int d = 0; d < p.rank; ++d) p.div[d] = FastDiv::make(p.y_dims[d]);
  const int threads = 256;
  const int grid = grid_for(p.n, threads, h.sm_count());
  pad_kernel<T><<<grid, threads, 0, h.stream()>>>(p, static_cast<const T*>(x), static_cast<T*>(y),
                                                  alpha, beta);
  return launch_status("pad_forward");
}

}  // namespace

Status pad_forward(const Handle& h, PadMode mode, const int64_t* pad_begin,
                   const int64_t* pad_end, float value, float alpha, const TensorDesc& x_desc,
                   const void* x, float beta, const TensorDesc& y_desc, void* y) {
  (void)pad_end;  // implied by the dims, which the front end has checked
  if (x_desc.dtype() == DType::F32)
    return run<float>(h, mode, pad_begin, value, alpha, x_desc, x, beta, y_desc, y);
  return run<__half>(h, mode, pad_begin, value, alpha, x_desc, x, beta, y_desc, y);
}

}  // namespace cuda
}  // namespace jet
