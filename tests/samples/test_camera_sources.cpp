// samples/camera_loop's frame sources and timing rings: the V4L2 pixel conversions against a
// float64 reference (no camera exists on the test machines: the conversions are what can be
// checked), MJPEG decoding, the image-directory and synthetic sources, the V4L2 source's error
// paths, and the percentiles of StageTimes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <stb_image_write.h>
#include <sys/stat.h>

#include "frame_source.h"
#include "kernels/util.h"
#include "pixel_convert.h"
#include "stage_times.h"

using namespace jet;
using namespace jet::camera;
using jet::test::uniform_int;

namespace {

// BT.601 limited range, straight from the definition: E'y = (Y - 16) / 219, the colour
// differences (Cb, Cr - 128) / 224, R = E'y + 2 (1 - Kr) Cr, B = E'y + 2 (1 - Kb) Cb,
// G = (E'y - Kr R - Kb B) / Kg; scaled to [0, 255], rounded, clamped.
void ref_yuv_to_rgb(double y, double u, double v, double out[3]) {
  const double kr = 0.299, kb = 0.114, kg = 1.0 - kr - kb;
  const double ey = (y - 16.0) / 219.0, cb = (u - 128.0) / 224.0, cr = (v - 128.0) / 224.0;
  const double r = ey + 2.0 * (1.0 - kr) * cr;
  const double b = ey + 2.0 * (1.0 - kb) * cb;
  const double g = (ey - kr * r - kb * b) / kg;
  const double rgb[3] = {r, g, b};
  for (int c = 0; c < 3; ++c) out[c] = std::min(255.0, std::max(0.0, std::round(rgb[c] * 255.0)));
}

std::string scratch_dir(const std::string& name) {
  const std::string dir = std::string(JET_TEST_SCRATCH_DIR) + "/" + name;
  ::mkdir(JET_TEST_SCRATCH_DIR, 0755);
  ::mkdir(dir.c_str(), 0755);
  return dir;
}

std::vector<uint8_t> random_bytes(size_t n) {
  std::vector<uint8_t> v(n);
  for (uint8_t& b : v) b = static_cast<uint8_t>(uniform_int(0, 255));
  return v;
}

void write_png(const std::string& path, int w, int h, int channels, const std::vector<uint8_t>& pixels) {
  REQUIRE(stbi_write_png(path.c_str(), w, h, channels, pixels.data(), w * channels) != 0);
}

void append_bytes(void* context, void* data, int size) {
  auto* out = static_cast<std::vector<uint8_t>*>(context);
  out->insert(out->end(), static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
}

}  // namespace

TEST_CASE("yuyv_to_rgb matches the BT.601 float64 reference, padded rows, nothing outside written") {
  for (const int width : {2, 6, 34, 640}) {
    for (const int height : {1, 3, 17}) {
      CAPTURE(width);
      CAPTURE(height);
      const size_t in_row = static_cast<size_t>(width) * 2 + static_cast<size_t>(uniform_int(0, 9)) * 2;
      const size_t out_row = static_cast<size_t>(width) * 3 + static_cast<size_t>(uniform_int(0, 7));
      std::vector<uint8_t> yuyv = random_bytes(in_row * static_cast<size_t>(height));
      // Corners of the colour cube (clamping) in the first pixel pairs.
      const uint8_t extremes[][4] = {{0, 0, 0, 0}, {255, 255, 255, 255}, {16, 128, 235, 128}, {255, 0, 0, 255}};
      for (int k = 0; k < 4 && 2 * k + 1 < width; ++k) std::copy(extremes[k], extremes[k] + 4, &yuyv[4 * static_cast<size_t>(k)]);
      const uint8_t poison = 0xA5;
      std::vector<uint8_t> rgb(out_row * static_cast<size_t>(height), poison);
      yuyv_to_rgb(yuyv.data(), width, height, in_row, rgb.data(), out_row);
      int worst = 0;
      size_t exact = 0, total = 0;
      for (int r = 0; r < height; ++r) {
        for (int x = 0; x < width; ++x) {
          const uint8_t* p = &yuyv[static_cast<size_t>(r) * in_row + static_cast<size_t>(x / 2) * 4];
          double ref[3];
          ref_yuv_to_rgb(p[(x % 2) * 2], p[1], p[3], ref);
          for (int c = 0; c < 3; ++c) {
            const int got = rgb[static_cast<size_t>(r) * out_row + static_cast<size_t>(x) * 3 + static_cast<size_t>(c)];
            const int diff = std::abs(got - static_cast<int>(ref[c]));
            worst = std::max(worst, diff);
            exact += diff == 0;
            ++total;
          }
        }
        for (size_t b = static_cast<size_t>(width) * 3; b < out_row; ++b) {
          CHECK(rgb[static_cast<size_t>(r) * out_row + b] == poison);  // row padding untouched
        }
      }
      // 16-bit fixed point: at most one step away where the exact value is within 1/128 of a
      // rounding boundary, and that rarely.
      CHECK(worst <= 1);
      CHECK(static_cast<double>(exact) >= 0.97 * static_cast<double>(total));
    }
  }
}

// A JPEG's bytes without its DHT segments: what UVC cameras that rely on the standard tables send.
std::vector<uint8_t> without_huffman_tables(const std::vector<uint8_t>& jpeg) {
  std::vector<uint8_t> out(jpeg.begin(), jpeg.begin() + 2);
  size_t at = 2;
  while (at + 4 <= jpeg.size() && jpeg[at] == 0xFF && jpeg[at + 1] != 0xDA) {
    const size_t length = (static_cast<size_t>(jpeg[at + 2]) << 8) | jpeg[at + 3];
    if (jpeg[at + 1] != 0xC4) out.insert(out.end(), jpeg.begin() + static_cast<std::ptrdiff_t>(at),
                                         jpeg.begin() + static_cast<std::ptrdiff_t>(at + 2 + length));
    at += 2 + length;
  }
  out.insert(out.end(), jpeg.begin() + static_cast<std::ptrdiff_t>(at), jpeg.end());
  return out;
}

TEST_CASE("MjpegDecoder decodes a JPEG of the negotiated size, and names what is wrong otherwise") {
  const int w = 64, h = 48;
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
  // A smooth image (JPEG's lossy step keeps it close) with a random tint.
  const int tint = static_cast<int>(uniform_int(0, 60));
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &rgb[(static_cast<size_t>(y) * w + static_cast<size_t>(x)) * 3];
      p[0] = static_cast<uint8_t>(x * 3 + tint);
      p[1] = static_cast<uint8_t>(y * 4);
      p[2] = static_cast<uint8_t>(200 - x - y + tint);
    }
  }
  std::vector<uint8_t> jpeg;
  REQUIRE(stbi_write_jpg_to_func(append_bytes, &jpeg, w, h, 3, rgb.data(), 95) != 0);
  MjpegDecoder decoder;
  REQUIRE(decoder.init(jpeg.size()).ok());
  std::vector<uint8_t> out(rgb.size(), 0);
  REQUIRE(decoder.decode(jpeg.data(), jpeg.size(), w, h, out.data()).ok());
  double sum = 0;
  int worst = 0;
  for (size_t i = 0; i < rgb.size(); ++i) {
    const int d = std::abs(static_cast<int>(out[i]) - static_cast<int>(rgb[i]));
    sum += d;
    worst = std::max(worst, d);
  }
  CHECK(sum / static_cast<double>(rgb.size()) < 3.0);
  CHECK(worst < 40);

  Status st = decoder.decode(jpeg.data(), jpeg.size(), w + 2, h, out.data());
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(st.message().find("decoded 64x48") != std::string::npos);
  std::vector<uint8_t> garbage = random_bytes(500);
  garbage[0] = 0xFF;
  garbage[1] = 0xD8;  // a JPEG start marker, then noise
  st = decoder.decode(garbage.data(), garbage.size(), w, h, out.data());
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(st.message().find("cannot decode") != std::string::npos);
  std::vector<uint8_t> truncated(jpeg.begin(), jpeg.begin() + static_cast<std::ptrdiff_t>(jpeg.size() / 3));
  CHECK_FALSE(decoder.decode(truncated.data(), truncated.size(), w, h, out.data()).ok());
  CHECK(decoder.decode(nullptr, 0, w, h, out.data()).code() == StatusCode::BAD_PARAM);
}

TEST_CASE("MJPEG frames without Huffman tables decode with the standard ones, as the full JPEG does") {
  const int w = 40, h = 24;
  const std::vector<uint8_t> rgb = random_bytes(static_cast<size_t>(w) * h * 3);
  std::vector<uint8_t> jpeg;
  REQUIRE(stbi_write_jpg_to_func(append_bytes, &jpeg, w, h, 3, rgb.data(), 80) != 0);
  const std::vector<uint8_t> bare = without_huffman_tables(jpeg);
  REQUIRE(bare.size() < jpeg.size());
  size_t scan = 0;
  CHECK_FALSE(jpeg_lacks_huffman_tables(jpeg.data(), jpeg.size(), &scan));
  REQUIRE(jpeg_lacks_huffman_tables(bare.data(), bare.size(), &scan));
  CHECK(bare[scan] == 0xFF);
  CHECK(bare[scan + 1] == 0xDA);
  // (stb_image alone must never see the bare frame: Debian's libstb, built with assertions,
  // aborts in stbi__jpeg_huff_decode on a scan without tables, or decodes garbage.)
  MjpegDecoder decoder;
  REQUIRE(decoder.init(jpeg.size()).ok());
  std::vector<uint8_t> from_full(rgb.size(), 1), from_bare(rgb.size(), 2);
  REQUIRE(decoder.decode(jpeg.data(), jpeg.size(), w, h, from_full.data()).ok());
  const Status st = decoder.decode(bare.data(), bare.size(), w, h, from_bare.data());
  INFO(st.to_string());
  REQUIRE(st.ok());
  CHECK(from_bare == from_full);
  // Not a JPEG at all, or a marker walk that runs off the end: left to stb_image to refuse.
  const std::vector<uint8_t> noise = random_bytes(64);
  CHECK_FALSE(jpeg_lacks_huffman_tables(noise.data(), noise.size(), &scan));
  CHECK_FALSE(jpeg_lacks_huffman_tables(bare.data(), 20, &scan));
}

TEST_CASE("the image source replays a directory's images in name order, round and round") {
  const std::string dir = scratch_dir("camera_sources_images");
  const int sizes[3][3] = {{37, 21, 3}, {16, 40, 1}, {50, 50, 4}};  // w, h, channels (grey, RGBA)
  std::vector<std::vector<uint8_t>> pixels;
  for (int i = 0; i < 3; ++i) {
    pixels.push_back(random_bytes(static_cast<size_t>(sizes[i][0]) * sizes[i][1] * sizes[i][2]));
    write_png(dir + "/img" + std::to_string(i) + ".png", sizes[i][0], sizes[i][1], sizes[i][2], pixels.back());
  }
  { std::FILE* f = std::fopen((dir + "/notes.txt").c_str(), "w"); REQUIRE(f); std::fclose(f); }  // ignored

  std::unique_ptr<FrameSource> src;
  REQUIRE(open_frame_source(dir, &src).ok());
  CHECK(src->max_width() == 50);
  CHECK(src->max_height() == 50);
  CHECK(src->describe().find("3 from") != std::string::npos);
  std::vector<uint8_t> frame(50 * 50 * 3);
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 3; ++i) {
      FrameSize size;
      REQUIRE(src->read(frame.data(), frame.size(), &size).ok());
      CHECK(size.width == sizes[i][0]);
      CHECK(size.height == sizes[i][1]);
      bool same = true;
      const int ch = sizes[i][2];
      for (int p = 0; p < size.width * size.height; ++p) {
        for (int c = 0; c < 3; ++c) {
          const uint8_t want = ch == 1 ? pixels[i][static_cast<size_t>(p)] : pixels[i][static_cast<size_t>(p) * ch + c];
          same = same && frame[static_cast<size_t>(p) * 3 + c] == want;
        }
      }
      CHECK(same);
    }
  }
  FrameSize size;
  CHECK(src->read(frame.data(), 10, &size).code() == StatusCode::BAD_PARAM);  // buffer too small

  // A glob pattern takes the matching files only.
  REQUIRE(open_frame_source(dir + "/img[02].png", &src).ok());
  CHECK(src->describe().find("images: 2 from") != std::string::npos);

  // Errors name the path.
  Status st = open_frame_source(dir + "/nothing*.png", &src);
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(st.message().find("nothing*.png") != std::string::npos);
  const std::string empty = scratch_dir("camera_sources_empty");
  CHECK(open_frame_source(empty, &src).message().find("no image files") != std::string::npos);
  const std::string bad = scratch_dir("camera_sources_bad");
  { std::FILE* f = std::fopen((bad + "/broken.png").c_str(), "w"); REQUIRE(f); std::fputs("not a png", f); std::fclose(f); }
  st = open_frame_source(bad, &src);
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(st.message().find("broken.png") != std::string::npos);
}

TEST_CASE("the synthetic source: deterministic frames that move") {
  std::unique_ptr<FrameSource> src;
  REQUIRE(open_frame_source("synthetic:64x48", &src).ok());
  CHECK(src->max_width() == 64);
  CHECK(src->max_height() == 48);
  std::vector<uint8_t> a(64 * 48 * 3), b(a.size()), expect(a.size());
  FrameSize size;
  REQUIRE(src->read(a.data(), a.size(), &size).ok());
  REQUIRE(src->read(b.data(), b.size(), &size).ok());
  CHECK(size.width == 64);
  CHECK(size.height == 48);
  synthetic_frame(64, 48, 0, expect.data());
  CHECK(a == expect);
  synthetic_frame(64, 48, 1, expect.data());
  CHECK(b == expect);
  CHECK(a != b);
  REQUIRE(open_frame_source("synthetic", &src).ok());
  CHECK(src->max_width() == 1280);
  CHECK(src->max_height() == 720);
  CHECK(src->read(a.data(), a.size(), &size).code() == StatusCode::BAD_PARAM);  // too small
  for (const char* spec : {"synthetic:", "synthetic:64", "synthetic:x48", "synthetic:64x48x2", "synthetic:8x8",
                           "synthetic:99999x10"}) {
    CAPTURE(spec);
    CHECK(open_frame_source(spec, &src).code() == StatusCode::BAD_PARAM);
  }
}

TEST_CASE("the V4L2 source fails cleanly without a camera") {
  std::unique_ptr<FrameSource> src;
  Status st = open_frame_source("/dev/video987", &src);
  CHECK_FALSE(st.ok());
  CHECK(st.message().find("/dev/video987") != std::string::npos);
  CHECK(st.message().find("cannot open") != std::string::npos);
  CHECK(open_frame_source("/dev/video0:64", &src).code() == StatusCode::BAD_PARAM);
  // A file that is no video device.
  st = open_v4l2_source("/dev/null", 0, 0, &src);
  CHECK_FALSE(st.ok());
  CHECK(st.message().find("not a V4L2 device") != std::string::npos);
}

TEST_CASE("StageTimes: nearest-rank percentiles over the newest samples") {
  StageTimes t(100);
  std::vector<double> values;
  for (int i = 1; i <= 100; ++i) values.push_back(i);
  std::shuffle(values.begin(), values.end(), jet::test::rng());
  for (double v : values) t.add(Stage::INFERENCE, v);
  StageSummary s = t.summary(Stage::INFERENCE);
  CHECK(s.count == 100);
  CHECK(s.p50 == 50);
  CHECK(s.p90 == 90);
  CHECK(s.p99 == 99);
  CHECK(s.min == 1);
  CHECK(s.max == 100);
  CHECK(s.mean == doctest::Approx(50.5));
  CHECK(s.stddev == doctest::Approx(std::sqrt((100.0 * 100.0 - 1.0) / 12.0)));
  CHECK(t.summary(Stage::CAPTURE).count == 0);
  // The ring keeps the newest 100: 50 more samples of 1000 replace the 50 oldest.
  for (int i = 0; i < 50; ++i) t.add(Stage::INFERENCE, 1000);
  s = t.summary(Stage::INFERENCE);
  double newest = 50 * 1000.0;
  for (size_t i = 50; i < 100; ++i) newest += values[i];
  CHECK(s.count == 100);
  CHECK(s.max == 1000);
  CHECK(s.p99 == 1000);
  CHECK(s.mean == doctest::Approx(newest / 100));
  t.clear();
  CHECK(t.summary(Stage::INFERENCE).count == 0);
}
