#include "image_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "cli_common.h"
#include "jet/dnn.h"

#if JET_HAVE_STB
#include <stb_image.h>
#endif

namespace jet {
namespace tools {
namespace {

constexpr size_t kMaxImageFileBytes = size_t(256) << 20;
constexpr int64_t kMaxImagePixels = int64_t(1) << 28;

std::string lower(std::string s) {
  for (char& c : s) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return s;
}


}  // namespace

bool is_image_file(const std::string& path) {
  const size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || path.find('/', dot) != std::string::npos) return false;
  const std::string ext = lower(path.substr(dot + 1));
  return ext == "png" || ext == "jpg" || ext == "jpeg" || ext == "bmp" || ext == "tga" || ext == "ppm" ||
         ext == "pgm" || ext == "gif";
}

Status read_image(const std::string& path, RgbImage* out) {
#if JET_HAVE_STB
  // A regular file only, read whole: a FIFO or device is refused without reading from it.
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Status(StatusCode::BAD_PARAM, path + ": cannot open: " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Status(StatusCode::BAD_PARAM, path + ": not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxImageFileBytes) {
    close(fd);
    return Status(StatusCode::BAD_PARAM, path + ": " + std::to_string(static_cast<long long>(st.st_size)) +
                                             " bytes; image files of at most " + std::to_string(kMaxImageFileBytes) +
                                             " bytes are read");
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  if (got != bytes.size() || bytes.empty() || bytes.size() > static_cast<size_t>(INT32_MAX)) {
    return Status(StatusCode::BAD_PARAM, path + ": cannot read the file (or it is empty)");
  }
  int w = 0, h = 0, channels = 0;
  if (!stbi_info_from_memory(bytes.data(), static_cast<int>(bytes.size()), &w, &h, &channels)) {
    return Status(StatusCode::BAD_PARAM, path + ": not an image stb_image can decode (" + stbi_failure_reason() + ")");
  }
  if (w < 1 || h < 1 || static_cast<int64_t>(w) * h > kMaxImagePixels) {
    return Status(StatusCode::BAD_PARAM, path + ": the image is " + std::to_string(w) + "x" + std::to_string(h) +
                                             " pixels; at most " + std::to_string(kMaxImagePixels) + " are decoded");
  }
  stbi_uc* pixels = stbi_load_from_memory(bytes.data(), static_cast<int>(bytes.size()), &w, &h, &channels, 3);
  if (pixels == nullptr) {
    return Status(StatusCode::BAD_PARAM, path + ": cannot decode the image (" + stbi_failure_reason() + ")");
  }
  out->width = w;
  out->height = h;
  out->pixels.assign(pixels, pixels + static_cast<size_t>(w) * static_cast<size_t>(h) * 3);
  stbi_image_free(pixels);
  return Status::success();
#else
  (void)out;
  return Status(StatusCode::NOT_SUPPORTED, path + ": this build reads no image files (libstb-dev was not found)");
#endif
}

Status image_to_tensor_bytes(const RgbImage& image, const ImagePreprocessing& pre, const TensorInfo& info,
                             std::vector<uint8_t>* out) {
  const size_t channel_dim = pre.nhwc ? 3 : 1;
  if (info.dims.size() != 4 || info.dims[channel_dim] != 3 || info.dims[pre.nhwc ? 1 : 2] != pre.height ||
      info.dims[pre.nhwc ? 2 : 3] != pre.width) {
    return Status(StatusCode::BAD_PARAM, "input '" + info.name + "' " + format_dims(info.dims) +
                                             " is not the 3-channel " + std::to_string(pre.height) + "x" +
                                             std::to_string(pre.width) + " image its preprocessing describes");
  }
  if (info.dims[0] != 1) {
    return Status(StatusCode::BAD_PARAM, "input '" + info.name + "' " + format_dims(info.dims) + " holds a batch of " +
                                             std::to_string(info.dims[0]) +
                                             " images; an image file fills a batch of 1 (give a .npy for larger batches)");
  }
  if (pre.mean.size() != 3 && !pre.mean.empty()) {
    return Status(StatusCode::BAD_PARAM, "input '" + info.name + "': preprocessing has " +
                                             std::to_string(pre.mean.size()) + " means for 3 channels");
  }
  // Graph inputs are packed: [1, 3, H, W] is jet's NCHW, [1, H, W, 3] its NHWC (dims N, C, H, W).
  const TensorDesc y = pre.nhwc ? TensorDesc::nhwc(info.dtype, 1, 3, pre.height, pre.width)
                                : TensorDesc::nchw(info.dtype, 1, 3, pre.height, pre.width);
  ImagePreprocessDesc desc;
  desc.resize = ImageResize::BILINEAR;
  desc.fit = pre.resize == ImagePreprocessing::Resize::LETTERBOX ? ImageFit::LETTERBOX : ImageFit::STRETCH;
  desc.order = pre.bgr ? ChannelOrder::BGR : ChannelOrder::RGB;
  desc.pad_value = pre.pad_value;
  if (pre.mean.empty()) {
    for (int c = 0; c < 3; ++c) desc.scale[c] = 1.0f / 255.0f;
  } else {
    desc.set_mean_std(pre.mean.data(), pre.std.data());
  }
  ImageDesc src;
  src.format = PixelFormat::RGB8;
  src.width = image.width;
  src.height = image.height;
  src.row_bytes = image.width * 3;
  const uint8_t* origin = image.pixels.data();
  if (pre.resize == ImagePreprocessing::Resize::CENTER_CROP) {
    // The largest centred region with the input's aspect ratio, times crop_fraction, in whole pixels.
    const double aspect = static_cast<double>(pre.width) / pre.height;
    double crop_w = static_cast<double>(image.width), crop_h = crop_w / aspect;
    if (crop_h > image.height) {
      crop_h = static_cast<double>(image.height);
      crop_w = crop_h * aspect;
    }
    const int64_t w = std::max<int64_t>(1, std::llround(crop_w * pre.crop_fraction));
    const int64_t h = std::max<int64_t>(1, std::llround(crop_h * pre.crop_fraction));
    const int64_t left = (image.width - std::min(w, image.width)) / 2, top = (image.height - std::min(h, image.height)) / 2;
    src.width = std::min(w, image.width);
    src.height = std::min(h, image.height);
    origin += top * src.row_bytes + left * 3;
  }
  std::vector<uint8_t> packed(y.span_bytes());
  Status st = image_preprocess(Handle::cpu(), desc, src, origin, 1.0f, 0.0f, y, packed.data(), nullptr);
  if (!st.ok()) return Status(st.code(), "input '" + info.name + "': " + st.message());
  if (packed.size() != info.bytes) {
    return Status(StatusCode::INTERNAL_ERROR, "input '" + info.name + "': " + std::to_string(info.bytes) +
                                                  " bytes, but the preprocessed image has " + std::to_string(packed.size()));
  }
  *out = std::move(packed);
  return Status::success();
}

const ImagePreprocessing* find_preprocessing(const Engine& engine, int input) {
  for (const ImagePreprocessing& p : engine.summary().preprocessing) {
    if (p.input == input) return &p;
  }
  return nullptr;
}

}  // namespace tools
}  // namespace jet
