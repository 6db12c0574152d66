// CPU image_preprocess: uint8 interleaved image -> [1, C, H, W] tensor, any strides, f32/f16.
// The sampling positions and weights come from image_tap (kernels/api/backend.h), shared with the
// CUDA kernel; one output pixel is computed for all its channels at once.
#include "../api/backend.h"
#include "cpu_common.h"

namespace jet {
namespace cpu {
namespace {

// Up to this many output columns share one table of precomputed taps (on the stack).
constexpr int64_t kColumnChunk = 256;

}  // namespace

Status image_preprocess(const ImageResample& p, const void* src, float alpha, float beta,
                        const TensorDesc& y_desc, void* y) {
  const DType t = y_desc.dtype();
  const uint8_t* image = static_cast<const uint8_t*>(src);
  const bool bilinear = p.resize == ImageResize::BILINEAR;
  const int64_t cs = y_desc.stride(1), hs = y_desc.stride(2), ws = y_desc.stride(3);
  ImageTap col_tap[kColumnChunk];
  for (int64_t col0 = 0; col0 < p.x.out; col0 += kColumnChunk) {
    const int64_t cols = p.x.out - col0 < kColumnChunk ? p.x.out - col0 : kColumnChunk;
    for (int64_t j = 0; j < cols; ++j) {
      const int64_t u = col0 + j - p.x.pad;
      if (u >= 0 && u < p.x.resized) col_tap[j] = image_tap(p.x, bilinear, u);
    }
    for (int64_t oy = 0; oy < p.y.out; ++oy) {
      const int64_t v = oy - p.y.pad;
      const bool row_inside = v >= 0 && v < p.y.resized;
      ImageTap row{0, 0, 0.f};
      if (row_inside) row = image_tap(p.y, bilinear, v);
      const uint8_t* row0 = image + row.i0 * p.row_bytes;
      const uint8_t* row1 = image + row.i1 * p.row_bytes;
      for (int64_t j = 0; j < cols; ++j) {
        const int64_t ox = col0 + j;
        const int64_t u = ox - p.x.pad;
        const int64_t y_off = oy * hs + ox * ws;
        if (!row_inside || u < 0 || u >= p.x.resized) {
          for (int c = 0; c < p.channels; ++c)
            blend_store(t, y, y_off + c * cs, alpha, p.pad_out[c], beta);
          continue;
        }
        const ImageTap& col = col_tap[j];
        const int64_t a0 = col.i0 * p.pixel_bytes, a1 = col.i1 * p.pixel_bytes;
        for (int c = 0; c < p.channels; ++c) {
          const int b = p.source_byte[c];
          const float top = (1.f - col.w) * row0[a0 + b] + col.w * row0[a1 + b];
          const float bottom = (1.f - col.w) * row1[a0 + b] + col.w * row1[a1 + b];
          const float pixel = (1.f - row.w) * top + row.w * bottom;
          blend_store(t, y, y_off + c * cs, alpha, pixel * p.scale[c] + p.offset[c], beta);
        }
      }
    }
  }
  return Status();
}

}  // namespace cpu
}  // namespace jet
