// image_preprocess on every backend: against the float64 reference (below) for every pixel
// format, fit, resize mode, channel order, output layout and dtype, odd sizes and padded rows;
// worked examples from the definitions; bad input.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#if defined(JET_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

#include "kernels/util.h"
#include "jet/dnn/image_preprocess.h"

// ---- The float64 reference (ref::), written here because no other test uses it: letterbox
// geometry and half-pixel sampling written from their definitions (continuous coordinates in
// double), independent of the backends' integer arithmetic.

namespace jet {
namespace ref {

// Helpers of the definitions below.
namespace detail {

// Source position sampled by output pixel u of an axis whose image covers `resized` output
// pixels: pixel centres map onto pixel centres, (u + 0.5) * in / resized - 0.5, clamped to the
// outermost centres.
inline double centre(int64_t u, int64_t in, int64_t resized) {
  const double s = (static_cast<double>(u) + 0.5) * static_cast<double>(in) /
                       static_cast<double>(resized) - 0.5;
  return std::min(std::max(s, 0.0), static_cast<double>(in - 1));
}

// NEAREST: the source pixel whose extent [i, i + 1) holds the output pixel's centre.
inline int64_t nearest(int64_t u, int64_t in, int64_t resized) {
  const double s = (static_cast<double>(u) + 0.5) * static_cast<double>(in) / static_cast<double>(resized);
  return std::min(static_cast<int64_t>(std::floor(s)), in - 1);
}

}  // namespace detail

// The packed [1, channels, out_h, out_w] output of preprocessing `image` (bytes laid out as
// `src` says). *transform receives where the image landed.
inline std::vector<double> image_preprocess(const ImagePreprocessDesc& desc, const ImageDesc& src,
                                            const std::vector<uint8_t>& image, int64_t channels,
                                            int64_t out_h, int64_t out_w, ImageTransform* transform) {
  // Geometry: STRETCH fills the output; LETTERBOX scales by the smaller ratio, rounds the other
  // side to the detail::nearest pixel and centres the image (floor of half the slack before it).
  int64_t rw = out_w, rh = out_h;
  if (desc.fit == ImageFit::LETTERBOX) {
    const double sx = static_cast<double>(out_w) / static_cast<double>(src.width);
    const double sy = static_cast<double>(out_h) / static_cast<double>(src.height);
    if (sx <= sy)
      rh = static_cast<int64_t>(std::round(static_cast<double>(src.height * out_w) / static_cast<double>(src.width)));
    else
      rw = static_cast<int64_t>(std::round(static_cast<double>(src.width * out_h) / static_cast<double>(src.height)));
    rw = std::min(std::max<int64_t>(rw, 1), out_w);
    rh = std::min(std::max<int64_t>(rh, 1), out_h);
  }
  const int64_t px = (out_w - rw) / 2, py = (out_h - rh) / 2;
  transform->scale_x = static_cast<double>(rw) / static_cast<double>(src.width);
  transform->scale_y = static_cast<double>(rh) / static_cast<double>(src.height);
  transform->offset_x = static_cast<double>(px);
  transform->offset_y = static_cast<double>(py);
  transform->resized_width = rw;
  transform->resized_height = rh;

  // Which byte of a pixel holds red, green, blue.
  const int bytes = pixel_format_channels(src.format);
  int red = 0, green = 1, blue = 2;
  if (src.format == PixelFormat::BGR8 || src.format == PixelFormat::BGRA8) std::swap(red, blue);
  if (src.format == PixelFormat::GRAY8) red = green = blue = 0;
  int byte_of[3] = {red, green, blue};
  if (desc.order == ChannelOrder::BGR && channels == 3) std::swap(byte_of[0], byte_of[2]);

  auto pixel = [&](int64_t row, int64_t col, int c) -> double {
    return image[static_cast<size_t>(row * src.row_bytes + col * bytes + byte_of[c])];
  };
  std::vector<double> out(static_cast<size_t>(channels * out_h * out_w));
  for (int64_t c = 0; c < channels; ++c) {
    const double scale = desc.scale[c], offset = desc.offset[c];
    for (int64_t oy = 0; oy < out_h; ++oy) {
      for (int64_t ox = 0; ox < out_w; ++ox) {
        const int64_t u = ox - px, v = oy - py;
        double value;
        if (u < 0 || u >= rw || v < 0 || v >= rh) {
          value = static_cast<double>(desc.pad_value);
        } else if (desc.resize == ImageResize::NEAREST) {
          value = pixel(detail::nearest(v, src.height, rh), detail::nearest(u, src.width, rw),
                        static_cast<int>(c));
        } else {
          const double sx = detail::centre(u, src.width, rw), sy = detail::centre(v, src.height, rh);
          const int64_t x0 = static_cast<int64_t>(std::floor(sx)), y0 = static_cast<int64_t>(std::floor(sy));
          const int64_t x1 = std::min(x0 + 1, src.width - 1), y1 = std::min(y0 + 1, src.height - 1);
          const double wx = sx - static_cast<double>(x0), wy = sy - static_cast<double>(y0);
          const int ci = static_cast<int>(c);
          value = (1 - wy) * ((1 - wx) * pixel(y0, x0, ci) + wx * pixel(y0, x1, ci)) +
                  wy * ((1 - wx) * pixel(y1, x0, ci) + wx * pixel(y1, x1, ci));
        }
        out[static_cast<size_t>((c * out_h + oy) * out_w + ox)] = value * scale + offset;
      }
    }
  }
  return out;
}

}  // namespace ref
}  // namespace jet

using namespace jet;
using namespace jet::test;

namespace {

const PixelFormat kFormats[] = {PixelFormat::RGB8, PixelFormat::BGR8, PixelFormat::RGBA8,
                                PixelFormat::BGRA8, PixelFormat::GRAY8};

// A random image of `format` whose rows are `row_bytes` long (the bytes past the pixels random
// too: a routine reading them would be caught by the reference comparison only by chance, but
// reading past the last row is caught by the sanitizers).
std::vector<uint8_t> random_image(const ImageDesc& d) {
  std::vector<uint8_t> bytes(static_cast<size_t>(d.row_bytes * (d.height - 1) +
                                                 d.width * pixel_format_channels(d.format)));
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(uniform_int(0, 255));
  return bytes;
}

// The image where the handle's routines can read it: the host bytes, or a device copy.
const void* stage_image(const Handle& h, Staging* st, const std::vector<uint8_t>& bytes) {
  if (h.backend() == Backend::CPU) return bytes.data();
  void* d = st->scratch(bytes.size());
#if defined(JET_HAVE_CUDA)
  const cudaError_t e = cudaMemcpy(d, bytes.data(), bytes.size(), cudaMemcpyHostToDevice);
  INFO(cudaGetErrorString(e));
  REQUIRE(e == cudaSuccess);
#endif
  return d;
}

struct Size {
  int64_t in_w, in_h, out_w, out_h;
};

void check_same_transform(const ImageTransform& got, const ImageTransform& want) {
  CHECK(got.scale_x == want.scale_x);
  CHECK(got.scale_y == want.scale_y);
  CHECK(got.offset_x == want.offset_x);
  CHECK(got.offset_y == want.offset_y);
  CHECK(got.resized_width == want.resized_width);
  CHECK(got.resized_height == want.resized_height);
}

// Runs image_preprocess of a whole (unpadded) RGB8 image into a packed f32 NCHW y on `h`.
std::vector<double> run_rgb(const Handle& h, const ImagePreprocessDesc& desc,
                            const std::vector<uint8_t>& rgb, int64_t w, int64_t hgt, int64_t out_w,
                            int64_t out_h, ImageTransform* transform) {
  ImageDesc src;
  src.format = PixelFormat::RGB8;
  src.width = w;
  src.height = hgt;
  src.row_bytes = 3 * w;
  HostTensor y(TensorDesc::nchw(DType::F32, 1, 3, out_h, out_w));
  y.poison();
  Staging st(h);
  const void* image = stage_image(h, &st, rgb);
  REQUIRE_OK(image_preprocess(h, desc, src, image, 1.f, 0.f, y.desc(), st.out(y), transform));
  st.finish();
  return y.to_ref();
}

}  // namespace

TEST_CASE("image_preprocess matches the float64 reference") {
  const std::vector<Size> sizes = {
      {7, 5, 13, 11},     // upsampling, letterbox bars left and right
      {37, 23, 8, 16},    // downsampling into a tall output
      {1, 1, 5, 3},       // one pixel
      {3, 100, 9, 9},     // a tall image: bars left and right
      {100, 3, 16, 7},    // a wide image: bars above and below
      {4, 3, 6, 6},       // a rounding tie: 3 * 6 / 4 = 4.5 rows
      {640, 480, 128, 128},  // a camera frame into a detector
      {513, 257, 127, 33},   // odd everything, width past the CPU's 256-column chunk
  };
  const std::pair<Layout, DType> outputs[] = {
      {Layout::CHANNELS_FIRST, DType::F32}, {Layout::CHANNELS_LAST, DType::F32},
      {Layout::PADDED, DType::F16},         {Layout::REVERSED, DType::F32},
      {Layout::CHANNELS_LAST, DType::F16},  {Layout::PADDED, DType::F32}};
  const std::pair<float, float> scalings[] = {{1.f, 0.f}, {0.5f, 0.25f}};
  int variant = 0;
  for (const Handle& h : test_handles())
  for (const Size& size : sizes)
  for (PixelFormat format : kFormats)
  for (int64_t channels : {int64_t(3), int64_t(1)}) {
    if (channels == 1 && format != PixelFormat::GRAY8) continue;
    for (ImageFit fit : {ImageFit::STRETCH, ImageFit::LETTERBOX})
    for (ImageResize resize : {ImageResize::BILINEAR, ImageResize::NEAREST})
    for (const auto& output : outputs) {
      ++variant;
      const Layout layout = output.first;
      const DType t = output.second;
      const auto& scaling = scalings[variant % 2];
      const float alpha = scaling.first, beta = scaling.second;
      ImageDesc src;
      src.format = format;
      src.width = size.in_w;
      src.height = size.in_h;
      // Rows padded by 0 to 7 bytes.
      src.row_bytes = size.in_w * pixel_format_channels(format) + uniform_int(0, 7);
      ImagePreprocessDesc desc;
      desc.fit = fit;
      desc.resize = resize;
      desc.order = variant % 3 == 0 ? ChannelOrder::BGR : ChannelOrder::RGB;
      for (int c = 0; c < 3; ++c) {
        desc.scale[c] = static_cast<float>(uniform(-0.02, 0.02));
        desc.offset[c] = static_cast<float>(uniform(-1.0, 1.0));
      }
      desc.pad_value = static_cast<float>(uniform(0.0, 255.0));
      CAPTURE(std::string(backend_name(h)));
      CAPTURE(size.in_w);
      CAPTURE(size.in_h);
      CAPTURE(size.out_w);
      CAPTURE(size.out_h);
      CAPTURE(src.row_bytes);
      CAPTURE(std::string(pixel_format_name(format)));
      CAPTURE(channels);
      CAPTURE(std::string(fit == ImageFit::LETTERBOX ? "letterbox" : "stretch"));
      CAPTURE(std::string(resize == ImageResize::BILINEAR ? "bilinear" : "nearest"));
      CAPTURE(std::string(desc.order == ChannelOrder::BGR ? "bgr" : "rgb"));
      CAPTURE(std::string(layout_name(layout)));
      CAPTURE(std::string(dtype_name(t)));
      CAPTURE(beta);
      const std::vector<uint8_t> image = random_image(src);
      HostTensor y(make_desc(t, {1, channels, size.out_h, size.out_w}, layout));
      if (beta == 0.f) y.poison(); else y.fill_random();
      const HostTensor before = y;
      ImageTransform got;
      got.scale_x = std::numeric_limits<double>::quiet_NaN();
      Staging st(h);
      const void* image_arg = stage_image(h, &st, image);
      REQUIRE_OK(image_preprocess(h, desc, src, image_arg, alpha, beta, y.desc(), st.out(y), &got));
      st.finish();
      ImageTransform want;
      const std::vector<double> ref = ref::image_preprocess(desc, src, image, channels,
                                                            size.out_h, size.out_w, &want);
      check_same_transform(got, want);
      ImageTransform queried;
      REQUIRE_OK(image_preprocess_transform(desc, src, y.desc(), &queried));
      check_same_transform(queried, want);
      check_output(y, before, blend(ref, alpha, beta, before.to_ref()), tol_for(t));
    }
  }
}

TEST_CASE("image_preprocess worked examples") {
  // Two pixels, red 0 and 100 (green 10, 20; blue 200, 250), stretched to four columns:
  // output centres 0.5, 1.5, 2.5, 3.5 map to source positions -0.25 (clamped to 0), 0.25, 0.75,
  // 1.25 (clamped to 1), so red is 0, 25, 75, 100.
  const std::vector<uint8_t> two = {0, 10, 200, 100, 20, 250};
  ImagePreprocessDesc stretch;
  stretch.fit = ImageFit::STRETCH;
  for (const Handle& h : test_handles()) {
    CAPTURE(std::string(backend_name(h)));
    ImageTransform t;
    const std::vector<double> y = run_rgb(h, stretch, two, 2, 1, 4, 1, &t);
    const double want[12] = {0, 25, 75, 100, 10, 12.5, 17.5, 20, 200, 212.5, 237.5, 250};
    for (int i = 0; i < 12; ++i) {
      CAPTURE(i);
      CHECK(y[i] == doctest::Approx(want[i]).epsilon(1e-6));
    }
    CHECK(t.scale_x == 2.0);
    CHECK(t.offset_x == 0.0);

    // NEAREST, BGR output, [-1, 1]: column u reads source floor((u + 0.5) / 2): 0, 0, 1, 1.
    ImagePreprocessDesc nearest = stretch;
    nearest.resize = ImageResize::NEAREST;
    nearest.order = ChannelOrder::BGR;
    for (int c = 0; c < 3; ++c) {
      nearest.scale[c] = 2.f / 255.f;
      nearest.offset[c] = -1.f;
    }
    const std::vector<double> yn = run_rgb(h, nearest, two, 2, 1, 4, 1, &t);
    const double blue[4] = {200, 200, 250, 250}, red[4] = {0, 0, 100, 100};
    for (int i = 0; i < 4; ++i) {
      CAPTURE(i);
      CHECK(yn[i] == doctest::Approx(blue[i] * 2.0 / 255.0 - 1.0).epsilon(1e-6));
      CHECK(yn[8 + i] == doctest::Approx(red[i] * 2.0 / 255.0 - 1.0).epsilon(1e-6));
    }

    // Letterbox of a 640x480 frame into 128x128: scaled by 0.2 to 128x96, 16 rows of padding
    // above and below. The padding is pad_value normalized like the image.
    std::vector<uint8_t> frame(640 * 480 * 3, 50);
    ImagePreprocessDesc box;
    box.pad_value = 114.f;
    for (int c = 0; c < 3; ++c) box.scale[c] = 1.f / 255.f;
    const std::vector<double> yl = run_rgb(h, box, frame, 640, 480, 128, 128, &t);
    CHECK(t.scale_x == 0.2);
    CHECK(t.scale_y == 0.2);
    CHECK(t.offset_x == 0.0);
    CHECK(t.offset_y == 16.0);
    CHECK(t.resized_width == 128);
    CHECK(t.resized_height == 96);
    CHECK(t.source_x(64.0) == doctest::Approx(320.0));
    CHECK(t.source_y(16.0 + 48.0) == doctest::Approx(240.0));
    for (int64_t c = 0; c < 3; ++c) {
      for (int64_t row : {int64_t(0), int64_t(15), int64_t(16), int64_t(111), int64_t(112), int64_t(127)}) {
        CAPTURE(c);
        CAPTURE(row);
        const double want_value = (row >= 16 && row < 112 ? 50.0 : 114.0) / 255.0;
        CHECK(yl[static_cast<size_t>((c * 128 + row) * 128 + 5)] == doctest::Approx(want_value).epsilon(1e-6));
      }
    }
  }
}

TEST_CASE("image_preprocess rejects bad input with a message") {
  const Handle h = Handle::cpu();
  std::vector<uint8_t> image(64 * 64 * 4, 0);
  std::vector<float> y(3 * 16 * 16);
  ImageDesc src;
  src.format = PixelFormat::RGB8;
  src.width = 64;
  src.height = 64;
  src.row_bytes = 64 * 3;
  const TensorDesc yd = TensorDesc::nchw(DType::F32, 1, 3, 16, 16);
  ImagePreprocessDesc desc;
  ImageTransform t;
  REQUIRE_OK(image_preprocess(h, desc, src, image.data(), 1.f, 0.f, yd, y.data(), nullptr));

  CHECK_STATUS(image_preprocess(h, desc, src, nullptr, 1.f, 0.f, yd, y.data(), &t), StatusCode::BAD_PARAM);
  CHECK_STATUS(image_preprocess(h, desc, src, image.data(), 1.f, 0.f, yd, nullptr, &t), StatusCode::BAD_PARAM);
  CHECK_STATUS(image_preprocess_transform(desc, src, yd, nullptr), StatusCode::BAD_PARAM);
  ImageDesc bad = src;
  bad.row_bytes = 64 * 3 - 1;
  CHECK_STATUS(image_preprocess(h, desc, bad, image.data(), 1.f, 0.f, yd, y.data(), &t), StatusCode::BAD_PARAM);
  bad = src;
  bad.width = 0;
  CHECK_STATUS(image_preprocess(h, desc, bad, image.data(), 1.f, 0.f, yd, y.data(), &t), StatusCode::BAD_PARAM);
  bad = src;
  bad.height = int64_t(1) << 21;
  CHECK_STATUS(image_preprocess(h, desc, bad, image.data(), 1.f, 0.f, yd, y.data(), &t), StatusCode::BAD_PARAM);
  bad = src;
  bad.format = static_cast<PixelFormat>(9);
  CHECK_STATUS(image_preprocess(h, desc, bad, image.data(), 1.f, 0.f, yd, y.data(), &t), StatusCode::BAD_PARAM);

  ImagePreprocessDesc bad_desc = desc;
  bad_desc.resize = static_cast<ImageResize>(5);
  CHECK_STATUS(image_preprocess(h, bad_desc, src, image.data(), 1.f, 0.f, yd, y.data(), &t), StatusCode::BAD_PARAM);
  bad_desc = desc;
  bad_desc.fit = static_cast<ImageFit>(-1);
  CHECK_STATUS(image_preprocess(h, bad_desc, src, image.data(), 1.f, 0.f, yd, y.data(), &t), StatusCode::BAD_PARAM);
  bad_desc = desc;
  bad_desc.order = static_cast<ChannelOrder>(2);
  CHECK_STATUS(image_preprocess(h, bad_desc, src, image.data(), 1.f, 0.f, yd, y.data(), &t), StatusCode::BAD_PARAM);
  bad_desc = desc;
  bad_desc.scale[1] = std::numeric_limits<float>::infinity();
  CHECK_STATUS(image_preprocess(h, bad_desc, src, image.data(), 1.f, 0.f, yd, y.data(), &t), StatusCode::INVALID_VALUE);
  bad_desc = desc;
  bad_desc.pad_value = std::numeric_limits<float>::quiet_NaN();
  CHECK_STATUS(image_preprocess(h, bad_desc, src, image.data(), 1.f, 0.f, yd, y.data(), &t), StatusCode::INVALID_VALUE);

  // y must be [1, C, H, W] with C = 1 or 3; C = 1 only from grey images.
  CHECK_STATUS(image_preprocess(h, desc, src, image.data(), 1.f, 0.f, TensorDesc::nchw(DType::F32, 2, 3, 4, 4),
                                y.data(), &t), StatusCode::BAD_PARAM);
  CHECK_STATUS(image_preprocess(h, desc, src, image.data(), 1.f, 0.f, TensorDesc::nchw(DType::F32, 1, 2, 4, 4),
                                y.data(), &t), StatusCode::BAD_PARAM);
  CHECK_STATUS(image_preprocess(h, desc, src, image.data(), 1.f, 0.f, TensorDesc::packed(DType::F32, {3, 16, 16}),
                                y.data(), &t), StatusCode::BAD_PARAM);
  CHECK_STATUS(image_preprocess(h, desc, src, image.data(), 1.f, 0.f, TensorDesc::nchw(DType::F32, 1, 1, 4, 4),
                                y.data(), &t), StatusCode::NOT_SUPPORTED);
  const int64_t overlapping[4] = {1, 1, 1, 1};
  const int64_t dims[4] = {1, 3, 4, 4};
  CHECK_STATUS(image_preprocess(h, desc, src, image.data(), 1.f, 0.f,
                                TensorDesc::strided(DType::F32, 4, dims, overlapping), y.data(), &t),
               StatusCode::BAD_PARAM);
}
