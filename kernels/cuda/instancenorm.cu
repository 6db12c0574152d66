// CUDA instance normalization: one block per (n, c) plane (grid-stride over planes), three sweeps
// over the plane's elements by the block's threads:
//   1. the mean, accumulated as sum(x - x0) with x0 the plane's first element (shifted data: the
//      terms are of the size of the spread, not of the mean, so a mean of 100 with a spread of 1
//      keeps its f32 accuracy, and (x - x0) - (mean - x0) later subtracts nearly exact numbers);
//   2. the biased variance as the mean squared deviation from that mean (two-pass);
//   3. y = alpha * ((x - mean) * factor + bias) + beta * y, factor = scale / sqrt(var + eps).
// Each thread keeps a compensated f32 sum (reduction.cuh); the block combines them in double with
// warp shuffles and a fixed-order sum over the warps, so every thread sees the same statistics
// and results are deterministic. A plane is read completely (two barriers) before any of it is
// written and planes do not overlap, so x == y with one layout is safe.
//
// Threads walk the plane in element order with x's and y's strides (spatial dims merged where
// both are contiguous): NCHW reads coalesce; channels-last planes are strided by C, correct but
// slower (a channel-tiled variant would fix that if InstanceNorm on NHWC ever matters).
#include "reduction.cuh"

namespace jet {
namespace cuda {
namespace {

struct PlaneBases {
  int64_t channels, planes;
  int64_t xs_n, xs_c, ys_n, ys_c;
};

// Up to 1024 threads per block (large planes): the bound keeps registers within what a block of
// 1024 may use on every architecture.
template <class T>
__global__ void __launch_bounds__(1024)
    instancenorm_planes(MergedDims pd, PlaneBases pb, float alpha, const T* x, float beta, T* y,
                        const float* __restrict__ scale, const float* __restrict__ bias,
                        double epsilon) {
  __shared__ double partial[32];
  for (int64_t p = blockIdx.x; p < pb.planes; p += gridDim.x) {
    const int64_t n = p / pb.channels;
    const int64_t c = p - n * pb.channels;
    const T* xp = x + n * pb.xs_n + c * pb.xs_c;
    T* yp = y + n * pb.ys_n + c * pb.ys_c;
    const GroupStats g = group_stats(pd, xp, epsilon, partial);
    const float factor = static_cast<float>(static_cast<double>(scale[c]) * g.inv_std);
    const float shift = bias[c];
    for (int64_t i = threadIdx.x; i < pd.count; i += blockDim.x) {
      int64_t xo, yo;
      pd.offsets(i, &xo, &yo);
      const float d = (to_f32(xp[xo]) - g.x0) - g.mean_minus_x0;
      blend_store(yp + yo, alpha, d * factor + shift, beta);
    }
  }
}

template <class T>
Status run(const Handle& h, float alpha, float beta, const TensorDesc& xd, const void* x,
           const TensorDesc& yd, void* y, const float* scale, const float* bias, double epsilon) {
  const MergedDims pd = merge_dims(xd, yd, 2, xd.rank());
  PlaneBases pb;
  pb.channels = xd.dim(1);
  pb.planes = xd.dim(0) * xd.dim(1);
  pb.xs_n = xd.stride(0);
  pb.xs_c = xd.stride(1);
  pb.ys_n = yd.stride(0);
  pb.ys_c = yd.stride(1);
  // Enough warps to cover small planes once, 1024 threads for large planes (there are few of
  // them per image, each a long reduction).
  int threads = 32;
  while (threads < 256 && threads < pd.count) threads *= 2;
  if (pd.count >= 16384) threads = 1024;
  const int64_t cap = static_cast<int64_t>(h.sm_count() > 0 ? h.sm_count() : 16) * 32;
  const int grid = static_cast<int>(pb.planes < cap ? pb.planes : cap);
  instancenorm_planes<T><<<grid, threads, 0, h.stream()>>>(
      pd, pb, alpha, static_cast<const T*>(x), beta, static_cast<T*>(y), scale, bias, epsilon);
  return launch_status("instancenorm_forward");
}

}  // namespace

Status instancenorm_forward(const Handle& h, float alpha, float beta, const TensorDesc& x_desc,
                            const void* x, const TensorDesc& y_desc, void* y, const float* scale,
                            const float* bias, double epsilon) {
  if (x_desc.dtype() == DType::F32)
    return run<float>(h, alpha, beta, x_desc, x, y_desc, y, scale, bias, epsilon);
  return run<__half>(h, alpha, beta, x_desc, x, y_desc, y, scale, bias, epsilon);
}

}  // namespace cuda
}  // namespace jet
