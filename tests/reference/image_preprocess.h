// float64 reference for image_preprocess: letterbox geometry and half-pixel sampling written from
// their definitions (continuous coordinates in double), independent of the backends' integer
// arithmetic.
#pragma once

#include <cstdint>
#include <vector>

#include "jet/dnn/image_preprocess.h"

namespace jet {
namespace ref {

// The packed [1, channels, out_h, out_w] output of preprocessing `image` (bytes laid out as
// `src` says). *transform receives where the image landed.
std::vector<double> image_preprocess(const ImagePreprocessDesc& desc, const ImageDesc& src,
                                     const std::vector<uint8_t>& image, int64_t channels,
                                     int64_t out_h, int64_t out_w, ImageTransform* transform);

}  // namespace ref
}  // namespace jet
