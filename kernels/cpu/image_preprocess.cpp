// image_preprocess: validation, the letterbox geometry (shared by both backends) and dispatch.
//
// CPU image_preprocess: uint8 interleaved image -> [1, C, H, W] tensor, any strides, f32/f16.
// The sampling positions and weights come from image_tap (kernels/api/backend.h), shared with the
// CUDA kernel; one output pixel is computed for all its channels at once.

#include <cmath>

#include "../api/backend.h"
#include "../api/check.h"
#include "cpu_common.h"

namespace jet {

JET_BACKEND_ENTRIES(image_preprocess, const ImageResample& plan, const void* src, float alpha,
                    float beta, const TensorDesc& y_desc, void* y);
namespace {

// Image sides and output sides are capped so that the sampling arithmetic stays exact: the
// BILINEAR weight's numerator and denominator (below 2 * side) must be exact floats.
constexpr int64_t kMaxSide = int64_t(1) << 20;

// Fills the resized extents and pads of both axes.
void place(const ImagePreprocessDesc& desc, ImageResampleAxis* x, ImageResampleAxis* y) {
  x->resized = x->out;
  y->resized = y->out;
  x->pad = y->pad = 0;
  if (desc.fit != ImageFit::LETTERBOX) return;
  // The limiting side fills the output; the other is in * out / in rounded to nearest, in exact
  // integers (out_w / in_w <= out_h / in_h  <=>  out_w * in_h <= out_h * in_w).
  if (x->out * y->in <= y->out * x->in) {
    y->resized = (2 * y->in * x->out + x->in) / (2 * x->in);
  } else {
    x->resized = (2 * x->in * y->out + y->in) / (2 * y->in);
  }
  x->resized = x->resized < 1 ? 1 : (x->resized > x->out ? x->out : x->resized);
  y->resized = y->resized < 1 ? 1 : (y->resized > y->out ? y->out : y->resized);
  x->pad = (x->out - x->resized) / 2;
  y->pad = (y->out - y->resized) / 2;
}

Status make_plan(const char* fn, const ImagePreprocessDesc& desc, const ImageDesc& src,
                 const TensorDesc& y_desc, ImageResample* plan) {
  const int resize = static_cast<int>(desc.resize);
  if (!enum_in_range<ImageResize>(resize))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown resize mode %d", fn, resize);
  const int fit = static_cast<int>(desc.fit);
  if (!enum_in_range<ImageFit>(fit))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown fit %d", fn, fit);
  const int order = static_cast<int>(desc.order);
  if (!enum_in_range<ChannelOrder>(order))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown channel order %d", fn, order);
  const int pixel_bytes = pixel_format_channels(src.format);
  if (pixel_bytes == 0)
    return make_status(StatusCode::BAD_PARAM, "%s: unknown pixel format %d", fn,
                       static_cast<int>(src.format));
  if (src.width < 1 || src.height < 1 || src.width > kMaxSide || src.height > kMaxSide)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: the image is %lld x %lld pixels; each side must be 1 to %lld", fn,
                       static_cast<long long>(src.width), static_cast<long long>(src.height),
                       static_cast<long long>(kMaxSide));
  if (src.row_bytes < src.width * pixel_bytes)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: row_bytes %lld is less than width %lld x %d bytes per %s pixel", fn,
                       static_cast<long long>(src.row_bytes), static_cast<long long>(src.width),
                       pixel_bytes, pixel_format_name(src.format));
  JET_RETURN_IF_ERROR(in_routine(fn, y_desc.validate("y")));
  if (y_desc.rank() != 4 || y_desc.dim(0) != 1 || (y_desc.dim(1) != 1 && y_desc.dim(1) != 3))
    return make_status(StatusCode::BAD_PARAM,
                       "%s: y has dims %s; it must be [1, C, H, W] with C = 1 or 3 (for a batch, "
                       "one call per image on a sub-region of y)",
                       fn, dims_text(y_desc.rank(), y_desc.dims()).c_str());
  if (y_desc.dim(2) > kMaxSide || y_desc.dim(3) > kMaxSide)
    return make_status(StatusCode::BAD_PARAM, "%s: y's sides (%lld x %lld) must be at most %lld",
                       fn, static_cast<long long>(y_desc.dim(3)),
                       static_cast<long long>(y_desc.dim(2)), static_cast<long long>(kMaxSide));
  const int channels = static_cast<int>(y_desc.dim(1));
  if (channels == 1 && src.format != PixelFormat::GRAY8)
    return make_status(StatusCode::NOT_SUPPORTED,
                       "%s: y has 1 channel but the image is %s; one channel is made from GRAY8 "
                       "images only (convert to grey first)",
                       fn, pixel_format_name(src.format));
  for (int c = 0; c < channels; ++c) {
    if (!std::isfinite(desc.scale[c]) || !std::isfinite(desc.offset[c]))
      return make_status(StatusCode::INVALID_VALUE, "%s: scale[%d] = %g, offset[%d] = %g must be finite",
                         fn, c, static_cast<double>(desc.scale[c]), c,
                         static_cast<double>(desc.offset[c]));
  }
  if (!std::isfinite(desc.pad_value))
    return make_status(StatusCode::INVALID_VALUE, "%s: pad_value %g must be finite", fn,
                       static_cast<double>(desc.pad_value));

  ImageResample& p = *plan;
  p.resize = desc.resize;
  p.x.in = src.width;
  p.y.in = src.height;
  p.x.out = y_desc.dim(3);
  p.y.out = y_desc.dim(2);
  place(desc, &p.x, &p.y);
  p.row_bytes = src.row_bytes;
  p.pixel_bytes = pixel_bytes;
  p.channels = channels;
  // Byte of R, G, B within a source pixel.
  int rgb[3] = {0, 1, 2};
  if (src.format == PixelFormat::BGR8 || src.format == PixelFormat::BGRA8) rgb[0] = 2, rgb[2] = 0;
  if (src.format == PixelFormat::GRAY8) rgb[0] = rgb[1] = rgb[2] = 0;
  for (int c = 0; c < channels; ++c) {
    const int colour = desc.order == ChannelOrder::BGR && channels == 3 ? 2 - c : c;
    p.source_byte[c] = rgb[colour];
    p.scale[c] = desc.scale[c];
    p.offset[c] = desc.offset[c];
    p.pad_out[c] = desc.pad_value * desc.scale[c] + desc.offset[c];
  }
  return Status();
}

ImageTransform transform_of(const ImageResample& p) {
  ImageTransform t;
  t.scale_x = static_cast<double>(p.x.resized) / static_cast<double>(p.x.in);
  t.scale_y = static_cast<double>(p.y.resized) / static_cast<double>(p.y.in);
  t.offset_x = static_cast<double>(p.x.pad);
  t.offset_y = static_cast<double>(p.y.pad);
  t.resized_width = p.x.resized;
  t.resized_height = p.y.resized;
  return t;
}

}  // namespace

const char* pixel_format_name(PixelFormat f) {
  switch (f) {
    case PixelFormat::RGB8: return "RGB8";
    case PixelFormat::BGR8: return "BGR8";
    case PixelFormat::RGBA8: return "RGBA8";
    case PixelFormat::BGRA8: return "BGRA8";
    case PixelFormat::GRAY8: return "GRAY8";
  }
  return "unknown";
}

int pixel_format_channels(PixelFormat f) {
  switch (f) {
    case PixelFormat::RGB8:
    case PixelFormat::BGR8: return 3;
    case PixelFormat::RGBA8:
    case PixelFormat::BGRA8: return 4;
    case PixelFormat::GRAY8: return 1;
  }
  return 0;
}

Status image_preprocess_transform(const ImagePreprocessDesc& desc, const ImageDesc& src_desc,
                                  const TensorDesc& y_desc, ImageTransform* transform) {
  const char* fn = "image_preprocess_transform";
  JET_RETURN_IF_ERROR(check_ptr(fn, transform, "transform"));
  ImageResample plan;
  JET_RETURN_IF_ERROR(make_plan(fn, desc, src_desc, y_desc, &plan));
  *transform = transform_of(plan);
  return Status();
}

Status image_preprocess(const Handle& handle, const ImagePreprocessDesc& desc,
                        const ImageDesc& src_desc, const void* src, float alpha, float beta,
                        const TensorDesc& y_desc, void* y, ImageTransform* transform) {
  const char* fn = "image_preprocess";
  ImageResample plan;
  JET_RETURN_IF_ERROR(make_plan(fn, desc, src_desc, y_desc, &plan));
  JET_RETURN_IF_ERROR(check_ptr(fn, src, "src"));
  JET_RETURN_IF_ERROR(check_ptr(fn, y, "y"));
  if (transform) *transform = transform_of(plan);
  if (handle.backend() == Backend::CPU) return cpu::image_preprocess(plan, src, alpha, beta, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::image_preprocess(handle, plan, src, alpha, beta, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

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
