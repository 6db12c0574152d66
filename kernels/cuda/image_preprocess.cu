// CUDA image_preprocess: one fused kernel from a uint8 interleaved image to the network input
// (resize + letterbox + colour order + scale/offset + layout + dtype), the CPU's arithmetic.
//
// One thread per output pixel (a grid-stride loop over rows) computes all its channels: the taps (image_tap, shared with the
// CPU backend in kernels/api/backend.h) are exact integer arithmetic, so both backends read the
// same source pixels with the same weights. Output columns run across the warp's lanes: NCHW
// stores coalesce, and neighbouring lanes read neighbouring source pixels.
#include "../api/backend.h"
#include "cuda_common.cuh"

namespace jet {
namespace cuda {
namespace {

template <class T>
__global__ void image_preprocess_kernel(ImageResample p, float alpha, const uint8_t* __restrict__ image,
                                        float beta, int64_t cs, int64_t hs, int64_t ws,
                                        T* __restrict__ y) {
  const int64_t ox = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (ox >= p.x.out) return;  // no barriers below
  const bool bilinear = p.resize == ImageResize::BILINEAR;
  const int64_t u = ox - p.x.pad;
  const bool col_inside = u >= 0 && u < p.x.resized;
  ImageTap col{0, 0, 0.f};
  if (col_inside) col = image_tap(p.x, bilinear, u);
  const int64_t a0 = col.i0 * p.pixel_bytes, a1 = col.i1 * p.pixel_bytes;
  for (int64_t oy = blockIdx.y * static_cast<int64_t>(blockDim.y) + threadIdx.y; oy < p.y.out;
       oy += static_cast<int64_t>(gridDim.y) * blockDim.y) {
    T* out = y + oy * hs + ox * ws;
    const int64_t v = oy - p.y.pad;
    // Unrolled with constant indices: a kernel parameter array indexed dynamically is copied to
    // local memory by every thread.
    if (!col_inside || v < 0 || v >= p.y.resized) {
#pragma unroll
      for (int c = 0; c < 3; ++c)
        if (c < p.channels) blend_store(out + c * cs, alpha, p.pad_out[c], beta);
      continue;
    }
    const ImageTap row = image_tap(p.y, bilinear, v);
    const uint8_t* row0 = image + row.i0 * p.row_bytes;
    const uint8_t* row1 = image + row.i1 * p.row_bytes;
#pragma unroll
    for (int c = 0; c < 3; ++c) {
      if (c >= p.channels) break;
      const int b = p.source_byte[c];
      const float top = (1.f - col.w) * row0[a0 + b] + col.w * row0[a1 + b];
      const float bottom = (1.f - col.w) * row1[a0 + b] + col.w * row1[a1 + b];
      const float pixel = (1.f - row.w) * top + row.w * bottom;
      blend_store(out + c * cs, alpha, pixel * p.scale[c] + p.offset[c], beta);
    }
  }
}

template <class T>
Status run(const Handle& h, const ImageResample& p, const void* src, float alpha, float beta,
           const TensorDesc& yd, void* y) {
  const dim3 block(32, 8);
  // Sides are at most 2^20 (checked by the front end): grid.x fits; rows beyond 65535 blocks are
  // covered by the kernel's loop.
  const int64_t row_blocks = (p.y.out + 7) / 8;
  const dim3 grid(static_cast<unsigned>((p.x.out + 31) / 32),
                  static_cast<unsigned>(row_blocks < 65535 ? row_blocks : 65535));
  image_preprocess_kernel<T><<<grid, block, 0, h.stream()>>>(
      p, alpha, static_cast<const uint8_t*>(src), beta, yd.stride(1), yd.stride(2), yd.stride(3),
      static_cast<T*>(y));
  return launch_status("image_preprocess");
}

}  // namespace

Status image_preprocess(const Handle& handle, const ImageResample& plan, const void* src,
                        float alpha, float beta, const TensorDesc& y_desc, void* y) {
  if (y_desc.dtype() == DType::F32) return run<float>(handle, plan, src, alpha, beta, y_desc, y);
  return run<__half>(handle, plan, src, alpha, beta, y_desc, y);
}

}  // namespace cuda
}  // namespace jet
