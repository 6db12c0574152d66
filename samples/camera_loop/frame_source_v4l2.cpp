// The V4L2 camera source: memory-mapped driver buffers (VIDIOC_REQBUFS with V4L2_MEMORY_MMAP),
// YUYV preferred, MJPEG otherwise. Each read() dequeues the newest filled buffer, converts it into
// the caller's RGB buffer and gives it back to the driver. No camera is attached to the machines
// this project is tested on: the format conversions are unit-tested (tests/samples), this file is
// compiled and its error paths run (README.md says so).
#include "frame_source.h"

#if defined(__linux__)

#include <cerrno>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pixel_convert.h"

namespace jet {
namespace camera {

namespace {

constexpr int kBufferCount = 4;
constexpr int kWaitMs = 2000;

int xioctl(int fd, unsigned long request, void* arg) {
  int rc;
  do {
    rc = ::ioctl(fd, request, arg);
  } while (rc == -1 && errno == EINTR);
  return rc;
}

std::string fourcc_name(uint32_t f) {
  char s[5] = {static_cast<char>(f & 255), static_cast<char>((f >> 8) & 255),
               static_cast<char>((f >> 16) & 255), static_cast<char>((f >> 24) & 255), 0};
  return s;
}

class V4l2Source : public FrameSource {
 public:
  explicit V4l2Source(std::string path) : path_(std::move(path)) {}
  ~V4l2Source() override {
    if (fd_ >= 0) {
      v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
      if (streaming_) xioctl(fd_, VIDIOC_STREAMOFF, &type);
      for (const Mapping& m : maps_) ::munmap(m.start, m.length);
      ::close(fd_);
    }
  }

  Status fail(const std::string& what) const {
    return Status(StatusCode::EXECUTION_FAILED, path_ + ": " + what + ": " + std::strerror(errno));
  }

  Status open(int width, int height) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) return Status(StatusCode::BAD_PARAM, path_ + ": cannot open: " + std::strerror(errno));
    v4l2_capability cap{};
    if (xioctl(fd_, VIDIOC_QUERYCAP, &cap) != 0) {
      return Status(StatusCode::BAD_PARAM, path_ + ": not a V4L2 device (VIDIOC_QUERYCAP: " +
                                               std::strerror(errno) + ")");
    }
    const uint32_t caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps : cap.capabilities;
    if (!(caps & V4L2_CAP_VIDEO_CAPTURE) || !(caps & V4L2_CAP_STREAMING)) {
      return Status(StatusCode::NOT_SUPPORTED,
                    path_ + ": not a streaming video capture device (single-planar capture and "
                            "streaming I/O are needed)");
    }
    v4l2_format fmt{};
    fmt.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (xioctl(fd_, VIDIOC_G_FMT, &fmt) != 0) return fail("VIDIOC_G_FMT");
    if (width > 0 && height > 0) {
      fmt.fmt.pix.width = static_cast<uint32_t>(width);
      fmt.fmt.pix.height = static_cast<uint32_t>(height);
    }
    fmt.fmt.pix.field = V4L2_FIELD_NONE;
    bool negotiated = false;
    for (uint32_t want : {V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_MJPEG}) {
      fmt.fmt.pix.pixelformat = want;
      if (xioctl(fd_, VIDIOC_S_FMT, &fmt) == 0 && fmt.fmt.pix.pixelformat == want) {
        negotiated = true;
        break;
      }
    }
    if (!negotiated) {
      return Status(StatusCode::NOT_SUPPORTED, path_ + ": the device offers neither YUYV nor MJPEG (its format: " +
                                                   fourcc_name(fmt.fmt.pix.pixelformat) + ")");
    }
    pixelformat_ = fmt.fmt.pix.pixelformat;
    width_ = static_cast<int>(fmt.fmt.pix.width);
    height_ = static_cast<int>(fmt.fmt.pix.height);
    bytes_per_line_ = fmt.fmt.pix.bytesperline;
    if (width_ <= 0 || height_ <= 0 || width_ > 16384 || height_ > 16384 ||
        (pixelformat_ == V4L2_PIX_FMT_YUYV && (width_ % 2 != 0 || bytes_per_line_ < 2u * width_))) {
      return Status(StatusCode::NOT_SUPPORTED, path_ + ": unusable format " + fourcc_name(pixelformat_) + " " +
                                                   std::to_string(width_) + "x" + std::to_string(height_) +
                                                   " (" + std::to_string(bytes_per_line_) + " bytes per line)");
    }

    v4l2_requestbuffers req{};
    req.count = kBufferCount;
    req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    req.memory = V4L2_MEMORY_MMAP;
    if (xioctl(fd_, VIDIOC_REQBUFS, &req) != 0) return fail("VIDIOC_REQBUFS (mmap buffers)");
    if (req.count < 2) return Status(StatusCode::ALLOC_FAILED, path_ + ": the driver gave fewer than 2 buffers");
    for (uint32_t i = 0; i < req.count; ++i) {
      v4l2_buffer buf{};
      buf.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
      buf.memory = V4L2_MEMORY_MMAP;
      buf.index = i;
      if (xioctl(fd_, VIDIOC_QUERYBUF, &buf) != 0) return fail("VIDIOC_QUERYBUF");
      void* p = ::mmap(nullptr, buf.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, buf.m.offset);
      if (p == MAP_FAILED) return fail("mmap of a driver buffer");
      maps_.push_back(Mapping{p, buf.length});
      if (xioctl(fd_, VIDIOC_QBUF, &buf) != 0) return fail("VIDIOC_QBUF");
    }
    if (pixelformat_ == V4L2_PIX_FMT_MJPEG) {
      size_t largest = 0;
      for (const Mapping& m : maps_) largest = largest > m.length ? largest : m.length;
      Status st = mjpeg_.init(largest);
      if (!st.ok()) return st;
    }
    v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (xioctl(fd_, VIDIOC_STREAMON, &type) != 0) return fail("VIDIOC_STREAMON");
    streaming_ = true;
    return Status::success();
  }

  std::string describe() const override {
    return "v4l2 " + path_ + " " + std::to_string(width_) + "x" + std::to_string(height_) + " " +
           fourcc_name(pixelformat_);
  }
  int max_width() const override { return width_; }
  int max_height() const override { return height_; }

  Status read(uint8_t* rgb, size_t capacity, FrameSize* size) override {
    const size_t need = static_cast<size_t>(width_) * static_cast<size_t>(height_) * 3;
    if (rgb == nullptr || capacity < need) {
      return Status(StatusCode::BAD_PARAM, path_ + ": the frame buffer holds " + std::to_string(capacity) +
                                               " bytes, a frame needs " + std::to_string(need));
    }
    v4l2_buffer buf{};
    Status st = dequeue(&buf);
    if (!st.ok()) return st;
    // Drop frames that queued up while the pipeline was busy: a robot wants the newest one.
    v4l2_buffer newer{};
    while (try_dequeue(&newer)) {
      xioctl(fd_, VIDIOC_QBUF, &buf);
      buf = newer;
    }
    const uint8_t* data = static_cast<const uint8_t*>(maps_[buf.index].start);
    if (pixelformat_ == V4L2_PIX_FMT_YUYV) {
      if (buf.bytesused != 0 && buf.bytesused < bytes_per_line_ * static_cast<size_t>(height_)) {
        st = Status(StatusCode::EXECUTION_FAILED, path_ + ": short YUYV frame (" + std::to_string(buf.bytesused) + " bytes)");
      } else {
        yuyv_to_rgb(data, width_, height_, bytes_per_line_, rgb, static_cast<size_t>(width_) * 3);
      }
    } else {
      st = mjpeg_.decode(data, buf.bytesused, width_, height_, rgb);
    }
    if (xioctl(fd_, VIDIOC_QBUF, &buf) != 0 && st.ok()) st = fail("VIDIOC_QBUF");
    if (!st.ok()) return st;
    size->width = width_;
    size->height = height_;
    return Status::success();
  }

 private:
  struct Mapping {
    void* start;
    size_t length;
  };

  bool try_dequeue(v4l2_buffer* buf) {
    *buf = v4l2_buffer{};
    buf->type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    buf->memory = V4L2_MEMORY_MMAP;
    return xioctl(fd_, VIDIOC_DQBUF, buf) == 0;
  }

  Status dequeue(v4l2_buffer* buf) {
    for (;;) {
      if (try_dequeue(buf)) return Status::success();
      if (errno != EAGAIN) return fail("VIDIOC_DQBUF");
      pollfd p{fd_, POLLIN, 0};
      const int rc = ::poll(&p, 1, kWaitMs);
      if (rc == 0) return Status(StatusCode::EXECUTION_FAILED, path_ + ": no frame within 2 s");
      if (rc < 0 && errno != EINTR) return fail("poll");
      // EINTR (Ctrl-C): keep waiting; the loop stops after this frame.
    }
  }

  std::string path_;
  int fd_ = -1;
  bool streaming_ = false;
  uint32_t pixelformat_ = 0;
  int width_ = 0, height_ = 0;
  uint32_t bytes_per_line_ = 0;
  std::vector<Mapping> maps_;
  MjpegDecoder mjpeg_;
};

}  // namespace

Status open_v4l2_source(const std::string& device, int width, int height, std::unique_ptr<FrameSource>* out) {
  std::unique_ptr<V4l2Source> source(new V4l2Source(device));
  Status st = source->open(width, height);
  if (!st.ok()) return st;
  *out = std::move(source);
  return Status::success();
}

}  // namespace camera
}  // namespace jet

#else  // not Linux: no V4L2

namespace jet {
namespace camera {
Status open_v4l2_source(const std::string& device, int, int, std::unique_ptr<FrameSource>*) {
  return Status(StatusCode::NOT_SUPPORTED, device + ": V4L2 cameras exist on Linux only");
}
}  // namespace camera
}  // namespace jet

#endif
