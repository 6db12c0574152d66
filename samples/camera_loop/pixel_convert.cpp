#include "pixel_convert.h"

#include <cstring>
#include <string>

#include <stb_image.h>
#include <stb_image_write.h>

namespace jet {
namespace camera {

namespace {

// BT.601 limited range to full-range RGB, scaled by 2^16 and rounded:
// Y' = 255/219, R from V = 255/224 * 2(1 - Kr), G from U = 255/224 * 2(1 - Kb) Kb / Kg,
// G from V = 255/224 * 2(1 - Kr) Kr / Kg, B from U = 255/224 * 2(1 - Kb), Kr = 0.299, Kb = 0.114.
constexpr int32_t kY = 76309;
constexpr int32_t kRV = 104597;
constexpr int32_t kGU = 25675;
constexpr int32_t kGV = 53279;
constexpr int32_t kBU = 132201;
constexpr int32_t kHalf = 1 << 15;

inline uint8_t clamp_shift(int32_t v) {
  v = (v + kHalf) >> 16;  // arithmetic shift: floor, so + half rounds to nearest
  return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

inline void put_rgb(int32_t y_scaled, int32_t r_chroma, int32_t g_chroma, int32_t b_chroma, uint8_t* out) {
  out[0] = clamp_shift(y_scaled + r_chroma);
  out[1] = clamp_shift(y_scaled - g_chroma);
  out[2] = clamp_shift(y_scaled + b_chroma);
}

}  // namespace

void yuyv_to_rgb(const uint8_t* yuyv, int width, int height, size_t yuyv_row_bytes, uint8_t* rgb,
                 size_t rgb_row_bytes) {
  for (int row = 0; row < height; ++row) {
    const uint8_t* in = yuyv + static_cast<size_t>(row) * yuyv_row_bytes;
    uint8_t* out = rgb + static_cast<size_t>(row) * rgb_row_bytes;
    for (int x = 0; x + 1 < width; x += 2, in += 4, out += 6) {
      const int32_t u = in[1] - 128;
      const int32_t v = in[3] - 128;
      const int32_t r_chroma = kRV * v;
      const int32_t g_chroma = kGU * u + kGV * v;
      const int32_t b_chroma = kBU * u;
      put_rgb(kY * (in[0] - 16), r_chroma, g_chroma, b_chroma, out);
      put_rgb(kY * (in[2] - 16), r_chroma, g_chroma, b_chroma, out + 3);
    }
  }
}

bool jpeg_lacks_huffman_tables(const uint8_t* jpeg, size_t bytes, size_t* scan_offset) {
  if (bytes < 4 || jpeg[0] != 0xFF || jpeg[1] != 0xD8) return false;  // no SOI
  size_t at = 2;
  while (at + 4 <= bytes) {
    if (jpeg[at] != 0xFF) return false;
    size_t marker_at = at;
    while (at < bytes && jpeg[at] == 0xFF) ++at;  // fill bytes
    if (at >= bytes) return false;
    const uint8_t marker = jpeg[at++];
    if (marker == 0xC4) return false;  // DHT
    if (marker == 0xDA) {              // SOS: the scan starts, no tables met
      *scan_offset = marker_at;
      return true;
    }
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;  // no length field
    if (at + 2 > bytes) return false;
    const size_t length = (static_cast<size_t>(jpeg[at]) << 8) | jpeg[at + 1];
    if (length < 2) return false;
    at += length;
  }
  return false;
}

namespace {

void append_bytes(void* context, void* data, int size) {
  auto* out = static_cast<std::vector<uint8_t>*>(context);
  const uint8_t* p = static_cast<const uint8_t*>(data);
  out->insert(out->end(), p, p + size);
}

}  // namespace

Status MjpegDecoder::init(size_t max_frame_bytes) {
  // The standard tables, as bytes of a DHT segment: taken from a JPEG that stb_image_write
  // encodes, since it always writes T.81 Annex K's tables (one DHT segment holding all four).
  std::vector<uint8_t> sample;
  const uint8_t grey[8 * 8 * 3] = {};
  if (stbi_write_jpg_to_func(append_bytes, &sample, 8, 8, 3, grey, 90) == 0) {
    return Status(StatusCode::INTERNAL_ERROR, "MJPEG: cannot encode the table sample");
  }
  standard_tables_.clear();
  for (size_t at = 2; at + 4 <= sample.size();) {
    const size_t length = (static_cast<size_t>(sample[at + 2]) << 8) | sample[at + 3];
    if (sample[at] != 0xFF || length < 2) break;
    if (sample[at + 1] == 0xC4 && at + 2 + length <= sample.size()) {
      standard_tables_.assign(sample.begin() + static_cast<std::ptrdiff_t>(at),
                              sample.begin() + static_cast<std::ptrdiff_t>(at + 2 + length));
      break;
    }
    if (sample[at + 1] == 0xDA) break;
    at += 2 + length;
  }
  if (standard_tables_.empty()) return Status(StatusCode::INTERNAL_ERROR, "MJPEG: no DHT segment in the table sample");
  scratch_.reserve(max_frame_bytes + standard_tables_.size());
  return Status::success();
}

Status MjpegDecoder::decode(const uint8_t* jpeg, size_t bytes, int width, int height, uint8_t* rgb) {
  if (jpeg == nullptr || bytes == 0) return Status(StatusCode::BAD_PARAM, "MJPEG frame: empty buffer");
  if (bytes > static_cast<size_t>(INT32_MAX) / 2) {
    return Status(StatusCode::BAD_PARAM, "MJPEG frame: " + std::to_string(bytes) + " bytes is too large");
  }
  size_t scan = 0;
  if (!standard_tables_.empty() && jpeg_lacks_huffman_tables(jpeg, bytes, &scan)) {
    scratch_.assign(jpeg, jpeg + scan);  // within the reserved capacity for frames init() sized
    scratch_.insert(scratch_.end(), standard_tables_.begin(), standard_tables_.end());
    scratch_.insert(scratch_.end(), jpeg + scan, jpeg + bytes);
    jpeg = scratch_.data();
    bytes = scratch_.size();
  }
  int w = 0, h = 0, channels = 0;
  uint8_t* pixels = stbi_load_from_memory(jpeg, static_cast<int>(bytes), &w, &h, &channels, 3);
  if (pixels == nullptr) {
    const char* why = stbi_failure_reason();
    return Status(StatusCode::BAD_PARAM,
                  std::string("MJPEG frame: cannot decode (stb_image: ") + (why ? why : "unknown") + ")");
  }
  if (w != width || h != height) {
    stbi_image_free(pixels);
    return Status(StatusCode::BAD_PARAM, "MJPEG frame: decoded " + std::to_string(w) + "x" +
                                             std::to_string(h) + ", the format says " +
                                             std::to_string(width) + "x" + std::to_string(height));
  }
  std::memcpy(rgb, pixels, static_cast<size_t>(w) * static_cast<size_t>(h) * 3);
  stbi_image_free(pixels);
  return Status::success();
}

}  // namespace camera
}  // namespace jet
