// tools/image_input: image files (stb_image) and the model's preprocessing applied through
// jet::image_preprocess, checked on sizes where the expected tensor is plain arithmetic on the
// pixels: identity-size stretch, a centre crop that needs no resampling, a letterbox whose scale
// is 1, each in NCHW and NHWC, RGB and BGR, f32 and f16.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cli_common.h"
#include "image_input.h"

using jet::DType;
using jet::ImagePreprocessing;
using jet::TensorInfo;
using namespace jet::tools;

namespace {

RgbImage test_image(int64_t w, int64_t h) {
  RgbImage im;
  im.width = w;
  im.height = h;
  for (int64_t i = 0; i < w * h * 3; ++i) im.pixels.push_back(static_cast<uint8_t>((i * 37 + 11) % 256));
  return im;
}

TensorInfo input(DType dtype, std::vector<int64_t> dims) {
  TensorInfo t;
  t.name = "image";
  t.dtype = dtype;
  t.dims = dims;
  t.bytes = static_cast<size_t>(element_count(dims)) * jet::dtype_size(dtype);
  return t;
}

ImagePreprocessing pre(int h, int w, bool nhwc, bool bgr) {
  ImagePreprocessing p;
  p.height = h;
  p.width = w;
  p.nhwc = nhwc;
  p.bgr = bgr;
  p.mean = {0.485f, 0.456f, 0.406f};
  p.std = {0.229f, 0.224f, 0.225f};
  return p;
}

// The tensor value at (c, y, x) of the packed NCHW or NHWC bytes.
float at(const TensorInfo& t, const std::vector<uint8_t>& bytes, bool nhwc, int64_t c, int64_t y, int64_t x) {
  std::vector<float> v;
  tensor_bytes_to_packed(t, bytes, nullptr, &v);
  const int64_t h = nhwc ? t.dims[1] : t.dims[2], w = nhwc ? t.dims[2] : t.dims[3];
  return v[static_cast<size_t>(nhwc ? (y * w + x) * 3 + c : (c * h + y) * w + x)];
}

// (pixel / 255 - mean) / std of source pixel (sx, sy), channel c of the model's order.
float want(const RgbImage& im, const ImagePreprocessing& p, int64_t c, int64_t sx, int64_t sy) {
  const int64_t source_c = p.bgr ? 2 - c : c;
  const float pixel = im.pixels[static_cast<size_t>((sy * im.width + sx) * 3 + source_c)];
  return (pixel / 255.0f - p.mean[static_cast<size_t>(c)]) / p.std[static_cast<size_t>(c)];
}

}  // namespace

TEST_CASE("image_to_tensor_bytes: same-size stretch, centre crop and letterbox, both layouts, f32 and f16") {
  for (DType dtype : {DType::F32, DType::F16}) {
    const double tol = dtype == DType::F32 ? 1e-5 : 1e-2;
    for (bool nhwc : {false, true}) {
      for (bool bgr : {false, true}) {
        INFO(jet::dtype_name(dtype) << (nhwc ? " nhwc" : " nchw") << (bgr ? " bgr" : " rgb"));
        const auto dims = [&](int64_t h, int64_t w) {
          return nhwc ? std::vector<int64_t>{1, h, w, 3} : std::vector<int64_t>{1, 3, h, w};
        };
        // Stretch, the image already the input's size: every pixel as it is.
        {
          const RgbImage im = test_image(5, 3);
          const TensorInfo t = input(dtype, dims(3, 5));
          std::vector<uint8_t> bytes;
          REQUIRE(image_to_tensor_bytes(im, pre(3, 5, nhwc, bgr), t, &bytes).ok());
          REQUIRE(bytes.size() == t.bytes);
          for (int64_t c = 0; c < 3; ++c)
            for (int64_t y = 0; y < 3; ++y)
              for (int64_t x = 0; x < 5; ++x)
                CHECK(at(t, bytes, nhwc, c, y, x) == doctest::Approx(want(im, pre(3, 5, nhwc, bgr), c, x, y)).epsilon(tol));
        }
        // Centre crop of an 8x4 image for a 2x2 input, fraction 0.5: the 2x2 pixels at (3, 1).
        {
          const RgbImage im = test_image(8, 4);
          ImagePreprocessing p = pre(2, 2, nhwc, bgr);
          p.resize = ImagePreprocessing::Resize::CENTER_CROP;
          p.crop_fraction = 0.5f;
          const TensorInfo t = input(dtype, dims(2, 2));
          std::vector<uint8_t> bytes;
          REQUIRE(image_to_tensor_bytes(im, p, t, &bytes).ok());
          for (int64_t c = 0; c < 3; ++c)
            for (int64_t y = 0; y < 2; ++y)
              for (int64_t x = 0; x < 2; ++x)
                CHECK(at(t, bytes, nhwc, c, y, x) == doctest::Approx(want(im, p, c, 3 + x, 1 + y)).epsilon(tol));
        }
        // Letterbox of a 4x2 image into 4x4: scale 1, one padded row above and below.
        {
          const RgbImage im = test_image(4, 2);
          ImagePreprocessing p = pre(4, 4, nhwc, bgr);
          p.resize = ImagePreprocessing::Resize::LETTERBOX;
          p.pad_value = 114.0f;
          const TensorInfo t = input(dtype, dims(4, 4));
          std::vector<uint8_t> bytes;
          REQUIRE(image_to_tensor_bytes(im, p, t, &bytes).ok());
          for (int64_t c = 0; c < 3; ++c) {
            const float pad = (114.0f / 255.0f - p.mean[static_cast<size_t>(c)]) / p.std[static_cast<size_t>(c)];
            for (int64_t x = 0; x < 4; ++x) {
              CHECK(at(t, bytes, nhwc, c, 0, x) == doctest::Approx(pad).epsilon(tol));
              CHECK(at(t, bytes, nhwc, c, 3, x) == doctest::Approx(pad).epsilon(tol));
              for (int64_t y = 1; y < 3; ++y)
                CHECK(at(t, bytes, nhwc, c, y, x) == doctest::Approx(want(im, p, c, x, y - 1)).epsilon(tol));
            }
          }
        }
      }
    }
  }
}

TEST_CASE("image_to_tensor_bytes: a batch, a wrong size or a non-image input is refused") {
  const RgbImage im = test_image(4, 4);
  std::vector<uint8_t> bytes;
  CHECK_FALSE(image_to_tensor_bytes(im, pre(4, 4, false, false), input(DType::F32, {2, 3, 4, 4}), &bytes).ok());
  CHECK_FALSE(image_to_tensor_bytes(im, pre(4, 4, false, false), input(DType::F32, {1, 3, 5, 4}), &bytes).ok());
  CHECK_FALSE(image_to_tensor_bytes(im, pre(4, 4, false, false), input(DType::F32, {1, 4, 4, 4}), &bytes).ok());
  CHECK_FALSE(image_to_tensor_bytes(im, pre(4, 4, false, false), input(DType::F32, {3, 4, 4}), &bytes).ok());
}

TEST_CASE("read_image: a PPM decodes; a FIFO, a directory and garbage are errors naming the path") {
  char tmpl[] = "/tmp/jet_image_test_XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  CHECK(is_image_file("a/photo.PNG"));
  CHECK(is_image_file("x.jpeg"));
  CHECK_FALSE(is_image_file("x.npy"));
  CHECK_FALSE(is_image_file("dir.png/x"));

  const std::string ppm = dir + "/two.ppm";
  FILE* f = std::fopen(ppm.c_str(), "wb");
  REQUIRE(f != nullptr);
  const unsigned char pixels[6] = {10, 20, 30, 200, 100, 0};
  std::fprintf(f, "P6\n2 1\n255\n");
  std::fwrite(pixels, 1, 6, f);
  std::fclose(f);
  RgbImage im;
#if JET_TEST_HAVE_STB
  REQUIRE(read_image(ppm, &im).ok());
  CHECK(im.width == 2);
  CHECK(im.height == 1);
  CHECK(im.pixels == std::vector<uint8_t>(pixels, pixels + 6));

  const std::string garbage = dir + "/garbage.png";
  f = std::fopen(garbage.c_str(), "wb");
  REQUIRE(f != nullptr);
  std::fprintf(f, "not a png at all");
  std::fclose(f);
  jet::Status st = read_image(garbage, &im);
  CHECK_FALSE(st.ok());
  CHECK(st.message().find(garbage) != std::string::npos);
  const std::string fifo = dir + "/fifo.png";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  st = read_image(fifo, &im);  // must not block
  CHECK(st.message().find("not a regular file") != std::string::npos);
  st = read_image(dir, &im);
  CHECK(st.message().find("not a regular file") != std::string::npos);
  std::remove(garbage.c_str());
  std::remove(fifo.c_str());
#else
  const jet::Status st = read_image(ppm, &im);
  CHECK(st.code() == jet::StatusCode::NOT_SUPPORTED);
#endif
  std::remove(ppm.c_str());
  rmdir(dir.c_str());
}
