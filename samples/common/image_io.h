// Image files for the samples: PNG/JPEG/BMP... in through stb_image, PNG out through
// stb_image_write (Debian's libstb-dev), and boxes and dots drawn on 8-bit RGB images.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace jet {
namespace samples {

// An 8-bit interleaved image, rows packed (row_bytes = width * channels).
struct Image {
  int width = 0, height = 0, channels = 0;
  std::vector<uint8_t> pixels;
};

// Reads `path` as `channels` channels (3: RGB, 1: grey; stb converts). False with *error naming
// the file and stb's reason.
bool load_image(const std::string& path, int channels, Image* out, std::string* error);

// Writes a PNG, or a JPEG (quality 90) when `path` ends in .jpg or .jpeg, encoded in memory and
// written by jet::write_file_atomically (jet/file_io.h), so that a failed write never destroys an
// existing file. False with *error naming the problem.
bool write_image(const std::string& path, const Image& image, std::string* error);

// Outline of the box [x0, x1) x [y0, y1) (pixels, clipped to the image), `thickness` pixels
// wide inwards; a filled square of side 2 * radius + 1 around (x, y).
void draw_box(Image* image, float x0, float y0, float x1, float y1, const uint8_t rgb[3],
              int thickness);
void draw_dot(Image* image, float x, float y, int radius, const uint8_t rgb[3]);

}  // namespace samples
}  // namespace jet
