// Image files and drawing for the samples (see image_io.h).
#include "image_io.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <stb_image.h>
#include <stb_image_write.h>

namespace jet {
namespace samples {

bool load_image(const std::string& path, int channels, Image* out, std::string* error) {
  int w = 0, h = 0, file_channels = 0;
  unsigned char* data = stbi_load(path.c_str(), &w, &h, &file_channels, channels);
  if (data == nullptr) {
    const char* why = stbi_failure_reason();
    *error = path + ": cannot read the image (" + (why ? why : "unknown reason") + ")";
    return false;
  }
  out->width = w;
  out->height = h;
  out->channels = channels;
  out->pixels.assign(data, data + static_cast<size_t>(w) * h * channels);
  stbi_image_free(data);
  return true;
}

namespace {

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  if (s.size() < n) return false;
  for (size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - n + i])) != suffix[i]) return false;
  return true;
}

}  // namespace

bool write_image(const std::string& path, const Image& image, std::string* error) {
  const std::string tmp = path + ".tmp";
  const bool jpeg = ends_with(path, ".jpg") || ends_with(path, ".jpeg");
  errno = 0;
  const int written =
      jpeg ? stbi_write_jpg(tmp.c_str(), image.width, image.height, image.channels,
                            image.pixels.data(), 90)
           : stbi_write_png(tmp.c_str(), image.width, image.height, image.channels,
                            image.pixels.data(), image.width * image.channels);
  if (!written) {
    *error = tmp + ": cannot write the " + (jpeg ? "JPEG" : "PNG") + " (" +
             (errno ? std::strerror(errno) : "stb_image_write failed") + ")";
    std::remove(tmp.c_str());
    return false;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "cannot rename " + tmp + " to " + path + ": " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

namespace {

void fill(Image* image, int x0, int y0, int x1, int y1, const uint8_t rgb[3]) {
  x0 = std::max(x0, 0);
  y0 = std::max(y0, 0);
  x1 = std::min(x1, image->width);
  y1 = std::min(y1, image->height);
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      uint8_t* p = image->pixels.data() + (static_cast<size_t>(y) * image->width + x) * image->channels;
      for (int c = 0; c < image->channels; ++c) p[c] = rgb[image->channels == 3 ? c : 1];
    }
}

// Pixel coordinate, clamped far enough out that the int conversion is defined.
int to_pixel(float v) {
  if (!(v > -1e6f)) return -1000000;
  if (v > 1e6f) return 1000000;
  return static_cast<int>(std::lround(v));
}

}  // namespace

void draw_box(Image* image, float x0, float y0, float x1, float y1, const uint8_t rgb[3],
              int thickness) {
  const int l = to_pixel(x0), t = to_pixel(y0), r = to_pixel(x1), b = to_pixel(y1);
  fill(image, l, t, r, t + thickness, rgb);
  fill(image, l, b - thickness, r, b, rgb);
  fill(image, l, t, l + thickness, b, rgb);
  fill(image, r - thickness, t, r, b, rgb);
}

void draw_dot(Image* image, float x, float y, int radius, const uint8_t rgb[3]) {
  const int cx = to_pixel(x), cy = to_pixel(y);
  fill(image, cx - radius, cy - radius, cx + radius + 1, cy + radius + 1, rgb);
}

}  // namespace samples
}  // namespace jet
