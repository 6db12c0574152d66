// The image and synthetic sources and the factory; the V4L2 source is in frame_source_v4l2.cpp.
#include "frame_source.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <dirent.h>
#include <glob.h>
#include <sys/stat.h>

#include <stb_image.h>

namespace jet {
namespace camera {

namespace {

// Decoded images are held in memory so that read() is a copy; this bounds what a directory may
// hold (a mistyped path to a photo archive fails here instead of exhausting memory).
constexpr size_t kMaxImageBytes = size_t(2) << 30;
constexpr int kMaxSide = 16384;

Status bad(const std::string& message) { return Status(StatusCode::BAD_PARAM, message); }

bool has_image_extension(const std::string& name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos) return false;
  std::string ext = name.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  for (const char* known : {"png", "jpg", "jpeg", "bmp", "ppm", "pgm", "tga"}) {
    if (ext == known) return true;
  }
  return false;
}

class ImageSource : public FrameSource {
 public:
  struct Image {
    std::string path;
    int width = 0, height = 0;
    size_t offset = 0;  // into pixels_
  };

  Status add(const std::string& path) {
    int w = 0, h = 0, channels = 0;
    uint8_t* p = stbi_load(path.c_str(), &w, &h, &channels, 3);
    if (p == nullptr) {
      const char* why = stbi_failure_reason();
      return bad(path + ": cannot decode image (stb_image: " + (why ? why : "unknown") + ")");
    }
    const size_t bytes = static_cast<size_t>(w) * static_cast<size_t>(h) * 3;
    if (w > kMaxSide || h > kMaxSide || pixels_.size() + bytes > kMaxImageBytes) {
      stbi_image_free(p);
      return bad(path + ": " + std::to_string(w) + "x" + std::to_string(h) +
                 (w > kMaxSide || h > kMaxSide ? " is larger than 16384 pixels a side"
                                               : " takes the images past 2 GiB decoded"));
    }
    Image img;
    img.path = path;
    img.width = w;
    img.height = h;
    img.offset = pixels_.size();
    pixels_.insert(pixels_.end(), p, p + bytes);
    stbi_image_free(p);
    images_.push_back(img);
    max_width_ = std::max(max_width_, w);
    max_height_ = std::max(max_height_, h);
    return Status::success();
  }

  void set_origin(const std::string& origin) { origin_ = origin; }
  size_t count() const { return images_.size(); }

  std::string describe() const override {
    return "images: " + std::to_string(images_.size()) + " from " + origin_ + " (largest " +
           std::to_string(max_width_) + "x" + std::to_string(max_height_) + ")";
  }
  int max_width() const override { return max_width_; }
  int max_height() const override { return max_height_; }

  Status read(uint8_t* rgb, size_t capacity, FrameSize* size) override {
    const Image& img = images_[next_];
    const size_t bytes = static_cast<size_t>(img.width) * static_cast<size_t>(img.height) * 3;
    if (rgb == nullptr || capacity < bytes) {
      return bad("image source: the frame buffer holds " + std::to_string(capacity) + " bytes, " +
                 img.path + " needs " + std::to_string(bytes));
    }
    std::memcpy(rgb, pixels_.data() + img.offset, bytes);
    size->width = img.width;
    size->height = img.height;
    next_ = (next_ + 1) % images_.size();
    return Status::success();
  }

 private:
  std::string origin_;
  std::vector<Image> images_;
  std::vector<uint8_t> pixels_;
  size_t next_ = 0;
  int max_width_ = 0, max_height_ = 0;
};

class SyntheticSource : public FrameSource {
 public:
  SyntheticSource(int width, int height) : width_(width), height_(height) {}
  std::string describe() const override {
    return "synthetic " + std::to_string(width_) + "x" + std::to_string(height_);
  }
  int max_width() const override { return width_; }
  int max_height() const override { return height_; }
  Status read(uint8_t* rgb, size_t capacity, FrameSize* size) override {
    const size_t bytes = static_cast<size_t>(width_) * static_cast<size_t>(height_) * 3;
    if (rgb == nullptr || capacity < bytes) {
      return bad("synthetic source: the frame buffer holds " + std::to_string(capacity) +
                 " bytes, a frame needs " + std::to_string(bytes));
    }
    synthetic_frame(width_, height_, index_++, rgb);
    size->width = width_;
    size->height = height_;
    return Status::success();
  }

 private:
  int width_, height_;
  uint64_t index_ = 0;
};

bool parse_size(const std::string& text, int* w, int* h) {
  const size_t x = text.find('x');
  if (x == std::string::npos || x == 0 || x + 1 >= text.size()) return false;
  long values[2] = {0, 0};
  const std::string parts[2] = {text.substr(0, x), text.substr(x + 1)};
  for (int i = 0; i < 2; ++i) {
    if (parts[i].size() > 5) return false;
    for (char c : parts[i]) {
      if (c < '0' || c > '9') return false;
      values[i] = values[i] * 10 + (c - '0');
    }
  }
  *w = static_cast<int>(values[0]);
  *h = static_cast<int>(values[1]);
  return true;
}

}  // namespace

void synthetic_frame(int width, int height, uint64_t index, uint8_t* rgb) {
  // A diagonal gradient drifting one pixel per frame, and a light disc (a face-sized blob) that
  // moves across the frame and back: enough structure that the pipeline does real work, and every
  // frame differs from the last.
  const int drift = static_cast<int>(index % 256);
  const int span = std::max(1, width - height / 3);
  const int phase = static_cast<int>((index * 7) % static_cast<uint64_t>(2 * span));
  const int cx = height / 6 + (phase < span ? phase : 2 * span - phase);
  const int cy = height / 2;
  const int r = height / 6;
  for (int y = 0; y < height; ++y) {
    uint8_t* row = rgb + static_cast<size_t>(y) * static_cast<size_t>(width) * 3;
    const int dy = y - cy;
    for (int x = 0; x < width; ++x) {
      const int dx = x - cx;
      uint8_t* px = row + static_cast<size_t>(x) * 3;
      if (dx * dx + dy * dy <= r * r) {
        px[0] = 224;
        px[1] = 172;
        px[2] = 140;
      } else {
        px[0] = static_cast<uint8_t>((x + drift) & 255);
        px[1] = static_cast<uint8_t>((y + drift) & 255);
        px[2] = static_cast<uint8_t>(((x + y) >> 2) & 255);
      }
    }
  }
}

Status open_synthetic_source(int width, int height, std::unique_ptr<FrameSource>* out) {
  if (width < 16 || height < 16 || width > kMaxSide || height > kMaxSide) {
    return bad("synthetic source: " + std::to_string(width) + "x" + std::to_string(height) +
               " is outside 16x16 .. 16384x16384");
  }
  out->reset(new SyntheticSource(width, height));
  return Status::success();
}

Status open_image_source(const std::string& dir_or_pattern, std::unique_ptr<FrameSource>* out) {
  std::vector<std::string> paths;
  struct stat st {};
  const bool is_dir = ::stat(dir_or_pattern.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  if (is_dir) {
    DIR* dir = ::opendir(dir_or_pattern.c_str());
    if (dir == nullptr) return bad(dir_or_pattern + ": cannot open directory: " + std::strerror(errno));
    while (const dirent* e = ::readdir(dir)) {
      const std::string name = e->d_name;
      if (name[0] != '.' && has_image_extension(name)) paths.push_back(dir_or_pattern + "/" + name);
    }
    ::closedir(dir);
  } else {
    glob_t g{};
    const int rc = ::glob(dir_or_pattern.c_str(), 0, nullptr, &g);
    if (rc == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) paths.push_back(g.gl_pathv[i]);
    }
    ::globfree(&g);
    if (rc != 0 && rc != GLOB_NOMATCH) return bad(dir_or_pattern + ": glob failed");
  }
  if (paths.empty()) {
    return bad(dir_or_pattern + (is_dir ? ": no image files (png, jpg, jpeg, bmp, ppm, pgm, tga)"
                                        : ": neither a directory nor a pattern matching any file"));
  }
  std::sort(paths.begin(), paths.end());
  std::unique_ptr<ImageSource> source(new ImageSource());
  source->set_origin(dir_or_pattern);
  for (const std::string& p : paths) {
    Status s = source->add(p);
    if (!s.ok()) return s;
  }
  *out = std::move(source);
  return Status::success();
}

Status open_frame_source(const std::string& spec, std::unique_ptr<FrameSource>* out) {
  if (spec.empty()) return bad("frame source: empty (a /dev/videoN, a directory, a pattern or synthetic[:WxH])");
  if (spec == "synthetic") return open_synthetic_source(1280, 720, out);
  if (spec.compare(0, 10, "synthetic:") == 0) {
    int w = 0, h = 0;
    if (!parse_size(spec.substr(10), &w, &h)) {
      return bad("frame source " + spec + ": expected synthetic:WIDTHxHEIGHT, e.g. synthetic:1280x720");
    }
    return open_synthetic_source(w, h, out);
  }
  if (spec.compare(0, 10, "/dev/video") == 0) {
    // /dev/video0 or /dev/video0:640x480
    const size_t colon = spec.find(':');
    int w = 0, h = 0;
    if (colon != std::string::npos && !parse_size(spec.substr(colon + 1), &w, &h)) {
      return bad("frame source " + spec + ": expected /dev/videoN or /dev/videoN:WIDTHxHEIGHT");
    }
    return open_v4l2_source(spec.substr(0, colon), w, h, out);
  }
  return open_image_source(spec, out);
}

}  // namespace camera
}  // namespace jet
