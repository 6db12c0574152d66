// CUDA layer normalization: one block per group (the dims from `axis` on; grid-stride over the
// groups), three sweeps over the group's elements by the block's threads, the first two in
// group_stats (reduction.cuh, shared with instancenorm.cu):
//   1. the mean, accumulated as sum(x - x0) with x0 the group's first element (shifted data keep
//      f32 accuracy when the mean is large next to the spread);
//   2. the biased variance as the mean squared deviation from that mean (two-pass);
//   3. y = alpha * ((x - mean) * inv_std * scale[i] + bias[i]) + beta * y.
// Each thread keeps a compensated f32 sum; block_sum (reduction.cuh) combines them in double in
// a fixed order, so results are deterministic. A group is read completely (two barriers) before
// any of it is written and groups do not overlap, so x == y with one layout is safe.
//
// The group's dims are merged where contiguous in both x and y (a packed [..., 768] row is one
// dim), so threads read consecutive addresses; i is the element's row-major index in the group,
// which merging keeps, and indexes scale and bias. Index decomposition uses FastDiv
// (elementwise.cuh).
#include "reduction.cuh"

namespace jet {
namespace cuda {
namespace {

template <class T>
__global__ void __launch_bounds__(1024)
    layernorm_groups(MergedDims outer, MergedDims inner, float alpha, const T* x, float beta, T* y,
                     const float* __restrict__ scale, const float* __restrict__ bias,
                     double epsilon) {
  __shared__ double partial[32];
  for (int64_t g = blockIdx.x; g < outer.count; g += gridDim.x) {
    int64_t gx, gy;
    outer.offsets(g, &gx, &gy);
    const T* xp = x + gx;
    T* yp = y + gy;
    const GroupStats st = group_stats(inner, xp, epsilon, partial);
    const float inv_std = static_cast<float>(st.inv_std);
    for (int64_t i = threadIdx.x; i < inner.count; i += blockDim.x) {
      int64_t xo, yo;
      inner.offsets(i, &xo, &yo);
      float v = ((to_f32(xp[xo]) - st.x0) - st.mean_minus_x0) * inv_std;
      if (scale) v *= scale[i];
      if (bias) v += bias[i];
      blend_store(yp + yo, alpha, v, beta);
    }
  }
}

template <class T>
Status run(const Handle& h, int axis, float alpha, float beta, const TensorDesc& xd, const void* x,
           const TensorDesc& yd, void* y, const float* scale, const float* bias, double epsilon) {
  const MergedDims outer = merge_dims(xd, yd, 0, axis);
  const MergedDims inner = merge_dims(xd, yd, axis, xd.rank());
  // A warp per 128 elements up to 256 threads (a transformer row of 768: 256 threads, 3 each);
  // 1024 threads for long groups, which are few.
  int threads = 32;
  while (threads < 256 && threads * 4 < inner.count) threads *= 2;
  if (inner.count >= 16384) threads = 1024;
  const int64_t cap = static_cast<int64_t>(h.sm_count() > 0 ? h.sm_count() : 16) * 32;
  const int grid = static_cast<int>(outer.count < cap ? outer.count : cap);
  layernorm_groups<T><<<grid, threads, 0, h.stream()>>>(outer, inner, alpha, static_cast<const T*>(x),
                                                         beta, static_cast<T*>(y), scale, bias, epsilon);
  return launch_status("layernorm_forward");
}

}  // namespace

Status layernorm_forward(const Handle& h, int axis, float alpha, float beta, const TensorDesc& x_desc,
                         const void* x, const TensorDesc& y_desc, void* y, const float* scale,
                         const float* bias, double epsilon) {
  if (x_desc.dtype() == DType::F32)
    return run<float>(h, axis, alpha, beta, x_desc, x, y_desc, y, scale, bias, epsilon);
  return run<__half>(h, axis, alpha, beta, x_desc, x, y_desc, y, scale, bias, epsilon);
}

}  // namespace cuda
}  // namespace jet
