// Frame sources for the camera loop: one small interface, three implementations.
//
//   /dev/videoN          a V4L2 camera (mmap buffers; YUYV or MJPEG, converted to RGB here)
//   DIR or 'PATTERN*'    the images of a directory, or those a glob pattern matches (stb_image),
//                        decoded once at open and replayed in name order, round and round
//   synthetic[:WxH]      a moving test pattern (default 1280x720), for benchmarks
//
// Every source delivers packed RGB8 frames (rows of width * 3 bytes, no padding) into memory the
// caller owns (pinned or mapped host memory in the CUDA loop), at most max_width() x
// max_height(). read() allocates nothing, except MJPEG decoding (stb_image allocates inside
// each decode; see README.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "jet/dnn/common.h"

namespace jet {
namespace camera {

struct FrameSize {
  int width = 0;
  int height = 0;
};

class FrameSource {
 public:
  virtual ~FrameSource() = default;

  // "v4l2 /dev/video0 640x480 YUYV", "images 4 files in photos/ (largest 512x512)", ...
  virtual std::string describe() const = 0;
  // The largest frame read() can deliver: the caller's buffer holds max_width * max_height * 3.
  virtual int max_width() const = 0;
  virtual int max_height() const = 0;
  // Writes the next frame into `rgb` (capacity bytes) and its size into `size`. Blocks until a
  // camera frame is there (a V4L2 source waits at most 2 s, then fails saying so).
  virtual Status read(uint8_t* rgb, size_t capacity, FrameSize* size) = 0;
};

// Opens the source `spec` names (see above). Errors name the spec and the problem.
Status open_frame_source(const std::string& spec, std::unique_ptr<FrameSource>* out);

// The three kinds, for callers that know which they want.
Status open_image_source(const std::string& dir_or_pattern, std::unique_ptr<FrameSource>* out);
Status open_synthetic_source(int width, int height, std::unique_ptr<FrameSource>* out);
// `width`/`height` ask the driver for a size (0: keep the device's current one); the driver may
// pick the nearest it supports. YUYV is preferred over MJPEG (no decoding on the CPU).
Status open_v4l2_source(const std::string& device, int width, int height,
                        std::unique_ptr<FrameSource>* out);

// The synthetic pattern's frame `index`, for tests: the same index gives the same pixels.
void synthetic_frame(int width, int height, uint64_t index, uint8_t* rgb);

}  // namespace camera
}  // namespace jet
