// Image files and drawing for the samples (see image_io.h).
#include "image_io.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "jet/file_io.h"

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

namespace {

// stb_image_write's callback: the encoded bytes are collected in memory, then written in one go.
void append_bytes(void* context, void* data, int size) {
  auto* out = static_cast<std::vector<unsigned char>*>(context);
  const unsigned char* p = static_cast<const unsigned char*>(data);
  out->insert(out->end(), p, p + size);
}

}  // namespace

bool write_image(const std::string& path, const Image& image, std::string* error) {
  const bool jpeg = ends_with(path, ".jpg") || ends_with(path, ".jpeg");
  std::vector<unsigned char> bytes;
  const int encoded =
      jpeg ? stbi_write_jpg_to_func(append_bytes, &bytes, image.width, image.height, image.channels,
                                    image.pixels.data(), 90)
           : stbi_write_png_to_func(append_bytes, &bytes, image.width, image.height, image.channels,
                                    image.pixels.data(), image.width * image.channels);
  if (!encoded) {
    *error = path + ": cannot encode the " + (jpeg ? "JPEG" : "PNG") + " (stb_image_write failed)";
    return false;
  }
  // jet::write_file_atomically: a temporary file in the same directory, renamed into place, so a
  // failed write never destroys an existing image; links and devices are written through.
  const Status st = write_file_atomically(path, bytes.data(), bytes.size());
  if (!st.ok()) {
    *error = st.message();
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
