// The V4L2 pixel formats the camera loop reads, converted to packed RGB8 on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>

#include "jet/dnn/common.h"

namespace jet {
namespace camera {

// V4L2_PIX_FMT_YUYV (4:2:2, bytes Y0 U Y1 V for each pair of pixels) to RGB8, with the BT.601
// limited-range matrix that UVC webcams use (Y in [16, 235], U and V in [16, 240], centred on
// 128), in 16-bit fixed point, rounded to nearest and clamped to [0, 255]. `width` must be even.
// Rows: `yuyv_row_bytes` >= width * 2 in, `rgb_row_bytes` >= width * 3 out.
void yuyv_to_rgb(const uint8_t* yuyv, int width, int height, size_t yuyv_row_bytes, uint8_t* rgb,
                 size_t rgb_row_bytes);

// One MJPEG frame (a JPEG image) decoded with stb_image into RGB8 rows of width * 3 bytes. The
// image must be exactly width x height (what the driver negotiated). Errors name the problem
// (stb_image's reason, or the size found); grey JPEGs are expanded to RGB.
Status mjpeg_to_rgb(const uint8_t* jpeg, size_t bytes, int width, int height, uint8_t* rgb);

}  // namespace camera
}  // namespace jet
