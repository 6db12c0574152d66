// The V4L2 pixel formats the camera loop reads, converted to packed RGB8 on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "jet/dnn/common.h"

namespace jet {
namespace camera {

// V4L2_PIX_FMT_YUYV (4:2:2, bytes Y0 U Y1 V for each pair of pixels) to RGB8, with the BT.601
// limited-range matrix that UVC webcams use (Y in [16, 235], U and V in [16, 240], centred on
// 128), in 16-bit fixed point, rounded to nearest and clamped to [0, 255]. `width` must be even.
// Rows: `yuyv_row_bytes` >= width * 2 in, `rgb_row_bytes` >= width * 3 out.
void yuyv_to_rgb(const uint8_t* yuyv, int width, int height, size_t yuyv_row_bytes, uint8_t* rgb,
                 size_t rgb_row_bytes);

// MJPEG frames (each a JPEG image) decoded with stb_image into RGB8 rows of width * 3 bytes.
// UVC cameras may leave the Huffman tables (DHT) out of their frames, relying on the standard
// tables of the JPEG specification (ITU-T T.81, Annex K.3), which stb_image does not assume: such
// frames get the standard tables inserted before their first scan. The image must be exactly
// width x height (what the driver negotiated); grey JPEGs are expanded to RGB.
class MjpegDecoder {
 public:
  // Sizes the scratch buffer (frames of up to `max_frame_bytes` need no allocation here; stb_image
  // still allocates inside each decode).
  Status init(size_t max_frame_bytes);
  // Errors name the problem: stb_image's reason, or the size found.
  Status decode(const uint8_t* jpeg, size_t bytes, int width, int height, uint8_t* rgb);

 private:
  std::vector<uint8_t> standard_tables_;  // one DHT segment, marker included
  std::vector<uint8_t> scratch_;
};

// Walks a JPEG's marker segments up to its first scan (SOS). True when it reaches the scan
// without meeting a DHT segment; `scan_offset` is then where the SOS marker starts. False when
// the tables are there or the stream cannot be walked (stb_image then reports the problem).
bool jpeg_lacks_huffman_tables(const uint8_t* jpeg, size_t bytes, size_t* scan_offset);

}  // namespace camera
}  // namespace jet
