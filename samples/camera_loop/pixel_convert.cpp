#include "pixel_convert.h"

#include <cstring>
#include <string>

#include <stb_image.h>

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

Status mjpeg_to_rgb(const uint8_t* jpeg, size_t bytes, int width, int height, uint8_t* rgb) {
  if (jpeg == nullptr || bytes == 0) return Status(StatusCode::BAD_PARAM, "MJPEG frame: empty buffer");
  if (bytes > static_cast<size_t>(INT32_MAX)) {
    return Status(StatusCode::BAD_PARAM, "MJPEG frame: " + std::to_string(bytes) + " bytes is too large");
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
