// Image preprocessing: an 8-bit interleaved image (a camera frame, a decoded PNG) to a network's
// input tensor in one pass: resize (bilinear or nearest), letterbox or stretch, colour order,
// per-channel scale and offset (mean/std), layout (any strides: NCHW, NHWC) and dtype (f32, f16).
// On CUDA this is one fused kernel reading the uint8 image and writing the tensor.
#pragma once

#include "jet/dnn/tensor.h"

namespace jet {

// How the bytes of one pixel are ordered. GRAY8 is one byte; RGBA8/BGRA8 ignore the alpha byte.
enum class PixelFormat : int32_t { RGB8 = 0, BGR8 = 1, RGBA8 = 2, BGRA8 = 3, GRAY8 = 4 };

const char* pixel_format_name(PixelFormat f);
int pixel_format_channels(PixelFormat f);  // bytes per pixel: 3, 3, 4, 4, 1 (0 when unknown)

// A source image: `height` rows of `width` pixels, row r starting at byte r * row_bytes
// (row_bytes >= width * bytes per pixel: padded rows and crops of a larger image are both
// expressible). Host memory for a CPU handle, device (or mapped host) memory for a CUDA handle.
struct ImageDesc {
  PixelFormat format = PixelFormat::RGB8;
  int64_t width = 0;
  int64_t height = 0;
  int64_t row_bytes = 0;
};

enum class ImageResize : int32_t {
  BILINEAR = 0,  // half-pixel centres, edge pixels clamped (OpenCV INTER_LINEAR, no antialias)
  NEAREST = 1,   // the pixel whose area holds the output pixel's centre (INTER_NEAREST_EXACT)
};
template <>
struct EnumCount<ImageResize> {
  static constexpr int32_t value = static_cast<int32_t>(ImageResize::NEAREST) + 1;
};

enum class ImageFit : int32_t {
  STRETCH = 0,    // the whole image fills the output; the aspect ratio may change
  LETTERBOX = 1,  // aspect ratio kept, image centred, the borders filled with pad_value
};
template <>
struct EnumCount<ImageFit> {
  static constexpr int32_t value = static_cast<int32_t>(ImageFit::LETTERBOX) + 1;
};

// The order of the output channels (C = 3). C = 1 takes a GRAY8 image only.
enum class ChannelOrder : int32_t { RGB = 0, BGR = 1 };
template <>
struct EnumCount<ChannelOrder> {
  static constexpr int32_t value = static_cast<int32_t>(ChannelOrder::BGR) + 1;
};

struct ImagePreprocessDesc {
  ImageResize resize = ImageResize::BILINEAR;
  ImageFit fit = ImageFit::LETTERBOX;
  ChannelOrder order = ChannelOrder::RGB;
  // Output value of channel c (in output order) for a resized pixel value p in [0, 255]:
  //   p * scale[c] + offset[c].
  // [0, 1]: scale 1/255, offset 0. [-1, 1]: scale 2/255, offset -1. ImageNet mean/std: see
  // set_mean_std. Only the first C entries are used.
  float scale[3] = {1.f, 1.f, 1.f};
  float offset[3] = {0.f, 0.f, 0.f};
  // The letterbox border as a pixel value (0 black, 114 YOLO grey), normalized like the image.
  float pad_value = 0.f;

  // (p / 255 - mean[c]) / std[c], mean and std for values in [0, 1] (torchvision's convention).
  void set_mean_std(const float mean[3], const float stddev[3]) {
    for (int c = 0; c < 3; ++c) {
      scale[c] = 1.f / (255.f * stddev[c]);
      offset[c] = -mean[c] / stddev[c];
    }
  }
};

// Where the image landed in the output, to map results (boxes, key points) back to the source:
// output = source * scale + offset, per axis, in pixel units where pixel i covers [i, i + 1).
// source_x/source_y invert it. STRETCH: offsets 0, scales out / in.
struct ImageTransform {
  double scale_x = 1.0, scale_y = 1.0;
  double offset_x = 0.0, offset_y = 0.0;
  int64_t resized_width = 0, resized_height = 0;  // the image's extent inside the output

  double source_x(double output_x) const { return (output_x - offset_x) / scale_x; }
  double source_y(double output_y) const { return (output_y - offset_y) / scale_y; }
};

// The transform image_preprocess uses for this image and output size (no work on any device).
// LETTERBOX: the image is resized by min(out_w / in_w, out_h / in_h), the other side rounded to
// the nearest pixel (at least 1), and centred (the extra pixel, if any, on the right/bottom).
Status image_preprocess_transform(const ImagePreprocessDesc& desc, const ImageDesc& src_desc,
                                  const TensorDesc& y_desc, ImageTransform* transform);

// y = alpha * preprocess(src) + beta * y (y not read when beta == 0). y is rank 4, dims
// [1, C, H, W] in jet's N, C, H, W order with any strides (TensorDesc::nchw or ::nhwc, padded),
// f32 or f16; C is 3 (any colour format; GRAY8 repeated) or 1 (GRAY8 only). For a batch, call
// once per image on y.subregion(0, n, 1). `transform` (may be null) receives the mapping back to
// source pixels. Sampling positions are computed in exact integer arithmetic, so every backend
// samples the same pixels with the same weights.
// docs/ops.md routines: | `image_preprocess` | uint8 RGB8/BGR8/RGBA8/BGRA8/GRAY8 image with any row
//   pitch -> [1, C, H, W] (C 3, or 1 from GRAY8), any strides (NCHW, NHWC): bilinear or nearest
//   resize, letterbox (aspect kept, pad value) or stretch, RGB/BGR output order, per-channel
//   scale/offset (mean/std); returns the letterbox transform; one fused CUDA kernel; sampling in
//   exact integer arithmetic | yes | yes | yes | yes | yes | -- | -- (samples, camera loop) |
Status image_preprocess(const Handle& handle, const ImagePreprocessDesc& desc,
                        const ImageDesc& src_desc, const void* src, float alpha, float beta,
                        const TensorDesc& y_desc, void* y, ImageTransform* transform);

}  // namespace jet
