// float64 reference for image_preprocess: letterbox geometry and half-pixel sampling written from
// their definitions (continuous coordinates in double), independent of the backends' integer
// arithmetic.
// float64 reference for image_preprocess (see image_preprocess.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "jet/dnn/image_preprocess.h"

namespace jet {
namespace ref {

// Helpers of the definitions below (ref::detail is shared by every reference header).
namespace detail {

// Source position sampled by output pixel u of an axis whose image covers `resized` output
// pixels: pixel centres map onto pixel centres, (u + 0.5) * in / resized - 0.5, clamped to the
// outermost centres.
inline double centre(int64_t u, int64_t in, int64_t resized) {
  const double s = (static_cast<double>(u) + 0.5) * static_cast<double>(in) /
                       static_cast<double>(resized) - 0.5;
  return std::min(std::max(s, 0.0), static_cast<double>(in - 1));
}

// NEAREST: the source pixel whose extent [i, i + 1) holds the output pixel's centre.
inline int64_t nearest(int64_t u, int64_t in, int64_t resized) {
  const double s = (static_cast<double>(u) + 0.5) * static_cast<double>(in) / static_cast<double>(resized);
  return std::min(static_cast<int64_t>(std::floor(s)), in - 1);
}

}  // namespace detail

// The packed [1, channels, out_h, out_w] output of preprocessing `image` (bytes laid out as
// `src` says). *transform receives where the image landed.
inline std::vector<double> image_preprocess(const ImagePreprocessDesc& desc, const ImageDesc& src,
                                            const std::vector<uint8_t>& image, int64_t channels,
                                            int64_t out_h, int64_t out_w, ImageTransform* transform) {
  // Geometry: STRETCH fills the output; LETTERBOX scales by the smaller ratio, rounds the other
  // side to the detail::nearest pixel and centres the image (floor of half the slack before it).
  int64_t rw = out_w, rh = out_h;
  if (desc.fit == ImageFit::LETTERBOX) {
    const double sx = static_cast<double>(out_w) / static_cast<double>(src.width);
    const double sy = static_cast<double>(out_h) / static_cast<double>(src.height);
    if (sx <= sy)
      rh = static_cast<int64_t>(std::round(static_cast<double>(src.height * out_w) / static_cast<double>(src.width)));
    else
      rw = static_cast<int64_t>(std::round(static_cast<double>(src.width * out_h) / static_cast<double>(src.height)));
    rw = std::min(std::max<int64_t>(rw, 1), out_w);
    rh = std::min(std::max<int64_t>(rh, 1), out_h);
  }
  const int64_t px = (out_w - rw) / 2, py = (out_h - rh) / 2;
  transform->scale_x = static_cast<double>(rw) / static_cast<double>(src.width);
  transform->scale_y = static_cast<double>(rh) / static_cast<double>(src.height);
  transform->offset_x = static_cast<double>(px);
  transform->offset_y = static_cast<double>(py);
  transform->resized_width = rw;
  transform->resized_height = rh;

  // Which byte of a pixel holds red, green, blue.
  const int bytes = pixel_format_channels(src.format);
  int red = 0, green = 1, blue = 2;
  if (src.format == PixelFormat::BGR8 || src.format == PixelFormat::BGRA8) std::swap(red, blue);
  if (src.format == PixelFormat::GRAY8) red = green = blue = 0;
  int byte_of[3] = {red, green, blue};
  if (desc.order == ChannelOrder::BGR && channels == 3) std::swap(byte_of[0], byte_of[2]);

  auto pixel = [&](int64_t row, int64_t col, int c) -> double {
    return image[static_cast<size_t>(row * src.row_bytes + col * bytes + byte_of[c])];
  };
  std::vector<double> out(static_cast<size_t>(channels * out_h * out_w));
  for (int64_t c = 0; c < channels; ++c) {
    const double scale = desc.scale[c], offset = desc.offset[c];
    for (int64_t oy = 0; oy < out_h; ++oy) {
      for (int64_t ox = 0; ox < out_w; ++ox) {
        const int64_t u = ox - px, v = oy - py;
        double value;
        if (u < 0 || u >= rw || v < 0 || v >= rh) {
          value = static_cast<double>(desc.pad_value);
        } else if (desc.resize == ImageResize::NEAREST) {
          value = pixel(detail::nearest(v, src.height, rh), detail::nearest(u, src.width, rw),
                        static_cast<int>(c));
        } else {
          const double sx = detail::centre(u, src.width, rw), sy = detail::centre(v, src.height, rh);
          const int64_t x0 = static_cast<int64_t>(std::floor(sx)), y0 = static_cast<int64_t>(std::floor(sy));
          const int64_t x1 = std::min(x0 + 1, src.width - 1), y1 = std::min(y0 + 1, src.height - 1);
          const double wx = sx - static_cast<double>(x0), wy = sy - static_cast<double>(y0);
          const int ci = static_cast<int>(c);
          value = (1 - wy) * ((1 - wx) * pixel(y0, x0, ci) + wx * pixel(y0, x1, ci)) +
                  wy * ((1 - wx) * pixel(y1, x0, ci) + wx * pixel(y1, x1, ci));
        }
        out[static_cast<size_t>((c * out_h + oy) * out_w + ox)] = value * scale + offset;
      }
    }
  }
  return out;
}

}  // namespace ref
}  // namespace jet
