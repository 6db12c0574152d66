// Image files as model inputs (jet-run, jet-compare): PNG, JPEG, BMP, ... decoded by stb_image
// (Debian's libstb), then turned into the input tensor by the preprocessing the model records
// (jet-convert --preprocess, jet::ImagePreprocessing) through jet::image_preprocess on the CPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jet/runtime.h"

namespace jet {
namespace tools {

// 8-bit RGB pixels, row after row.
struct RgbImage {
  int64_t width = 0, height = 0;
  std::vector<uint8_t> pixels;  // width * height * 3
};

// True for the file names read_image takes: .png, .jpg, .jpeg, .bmp, .tga, .ppm, .pgm, .gif
// (any case).
bool is_image_file(const std::string& path);

// Decodes the image file `path` (a regular file of at most 256 MiB whose image has at most 2^28
// pixels). BAD_PARAM naming the path and the reason otherwise; NOT_SUPPORTED when the tools were
// built without stb.
Status read_image(const std::string& path, RgbImage* out);

// The bytes of input `info` (info.bytes, in its dtype and layout) for `image` under `pre`:
// the resize pre.resize says (CENTER_CROP: the centred region of the input's aspect ratio,
// crop_fraction of the largest one, rounded to whole pixels, then stretched), bilinear, then
// (pixel / 255 - mean) / std in the channel order given. BAD_PARAM when the input is not a
// batch-1 image input of pre's size.
Status image_to_tensor_bytes(const RgbImage& image, const ImagePreprocessing& pre, const TensorInfo& info,
                             std::vector<uint8_t>* out);

// The model's preprocessing for tensor `input`, or null.
const ImagePreprocessing* find_preprocessing(const Engine& engine, int input);

// preprocessing_text (the text of an ImagePreprocessing) is in cli/cli_args.h.

}  // namespace tools
}  // namespace jet
