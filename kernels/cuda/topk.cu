// CUDA topk_forward: one thread per row along the axis, the CPU's insertion into the k best seen
// so far, kept in the outputs (kernels/cpu/topk.cpp; no workspace). O(n k) per thread: meant for
// the small rows of detection heads and classifiers, not for sorting long rows.
#include "../api/backend.h"
#include "../common/detection_math.h"
#include "cuda_common.cuh"
#include "typed_access.cuh"

namespace jet {
namespace cuda {
namespace {

struct TopkShape {
  int rank;
  int64_t rows_dims[kMaxRank];  // x's dims with 1 at the axis
  int64_t xs[kMaxRank], vs[kMaxRank], is[kMaxRank];
  int64_t n, k, x_step, v_step, i_step;
  bool largest;
};

template <class T>
__global__ void topk_rows(TopkShape s, int64_t rows, const T* __restrict__ x, T* __restrict__ vp,
                          int64_t* __restrict__ ip) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = r, xo = 0, vo = 0, io = 0;
    for (int d = s.rank - 1; d >= 0; --d) {
      const int64_t q = rest / s.rows_dims[d];
      const int64_t c = rest - q * s.rows_dims[d];
      rest = q;
      xo += c * s.xs[d];
      vo += c * s.vs[d];
      io += c * s.is[d];
    }
    int64_t count = 0;
    for (int64_t i = 0; i < s.n; ++i) {
      const auto v = value_of(x[xo + i * s.x_step]);
      const auto entry_value = [&](int64_t q) {
        return vp ? value_of(vp[vo + q * s.v_step]) : value_of(x[xo + ip[io + q * s.i_step] * s.x_step]);
      };
      const auto entry_index = [&](int64_t q) { return ip ? ip[io + q * s.i_step] : i - 1; };
      if (count == s.k && !topk_before(v, i, entry_value(s.k - 1), entry_index(s.k - 1), s.largest)) continue;
      int64_t q = count < s.k ? count : s.k - 1;
      while (q > 0 && topk_before(v, i, entry_value(q - 1), entry_index(q - 1), s.largest)) {
        if (vp) vp[vo + q * s.v_step] = vp[vo + (q - 1) * s.v_step];
        if (ip) ip[io + q * s.i_step] = ip[io + (q - 1) * s.i_step];
        --q;
      }
      if (vp) vp[vo + q * s.v_step] = x[xo + i * s.x_step];
      if (ip) ip[io + q * s.i_step] = i;
      if (count < s.k) ++count;
    }
  }
}

}  // namespace

Status topk_forward(const Handle& h, int axis, int64_t k, bool largest, const TensorDesc& x_desc,
                    const void* x, const TensorDesc& values_desc, void* values,
                    const TensorDesc& indices_desc, void* indices) {
  TopkShape s{};
  s.rank = x_desc.rank();
  int64_t rows = 1;
  for (int d = 0; d < s.rank; ++d) {
    s.rows_dims[d] = d == axis ? 1 : x_desc.dim(d);
    rows *= s.rows_dims[d];
    s.xs[d] = x_desc.stride(d);
    s.vs[d] = values ? values_desc.stride(d) : 0;
    s.is[d] = indices ? indices_desc.stride(d) : 0;
  }
  s.n = x_desc.dim(axis);
  s.k = k;
  s.x_step = x_desc.stride(axis);
  s.v_step = values ? values_desc.stride(axis) : 0;
  s.i_step = indices ? indices_desc.stride(axis) : 0;
  s.largest = largest;
  const int threads = 128;
  const int grid = grid_for(rows, threads, h.sm_count());
  int64_t* ip = static_cast<int64_t*>(indices);
  Status st = make_status(StatusCode::INTERNAL_ERROR, "topk_forward: bool x reached the backend");
  with_storage_type(x_desc.dtype(), [&](auto type) {
    using T = decltype(type);
    if constexpr (!std::is_same<T, uint8_t>::value) {
      topk_rows<T><<<grid, threads, 0, h.stream()>>>(s, rows, static_cast<const T*>(x), static_cast<T*>(values), ip);
      st = launch_status("topk_forward");
    }
  });
  return st;
}

}  // namespace cuda
}  // namespace jet
