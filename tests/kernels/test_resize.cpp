// resize_forward on every backend: against the float64 reference for every mode, coordinate
// transformation and rounding, and against values worked out by hand from the ONNX spec.
#include <cmath>
#include <limits>

#include "kernels/util.h"
#include "reference/tensor_ops.h"

using namespace jet;
using namespace jet::test;

namespace {

const std::pair<float, float> kScalings[] = {{1.f, 0.f}, {0.5f, 0.25f}};
const ResizeCoord kCoords[] = {ResizeCoord::HALF_PIXEL, ResizeCoord::ALIGN_CORNERS,
                               ResizeCoord::ASYMMETRIC, ResizeCoord::PYTORCH_HALF_PIXEL,
                               ResizeCoord::TF_HALF_PIXEL_FOR_NN};
const ResizeNearest kNearest[] = {ResizeNearest::ROUND_PREFER_FLOOR,
                                  ResizeNearest::ROUND_PREFER_CEIL, ResizeNearest::FLOOR,
                                  ResizeNearest::CEIL};

const char* coord_name(ResizeCoord c) {
  switch (c) {
    case ResizeCoord::HALF_PIXEL: return "half_pixel";
    case ResizeCoord::ALIGN_CORNERS: return "align_corners";
    case ResizeCoord::ASYMMETRIC: return "asymmetric";
    case ResizeCoord::PYTORCH_HALF_PIXEL: return "pytorch_half_pixel";
    case ResizeCoord::TF_HALF_PIXEL_FOR_NN: return "tf_half_pixel_for_nn";
  }
  return "?";
}

const char* nearest_name(ResizeNearest n) {
  switch (n) {
    case ResizeNearest::ROUND_PREFER_FLOOR: return "round_prefer_floor";
    case ResizeNearest::ROUND_PREFER_CEIL: return "round_prefer_ceil";
    case ResizeNearest::FLOOR: return "floor";
    case ResizeNearest::CEIL: return "ceil";
  }
  return "?";
}

// Every (mode, coord, nearest) combination; nearest only matters for NEAREST.
std::vector<ResizeDesc> all_resize_modes() {
  std::vector<ResizeDesc> out;
  for (ResizeCoord c : kCoords) {
    for (ResizeNearest n : kNearest) {
      ResizeDesc r;
      r.mode = ResizeMode::NEAREST;
      r.coord = c;
      r.nearest = n;
      out.push_back(r);
    }
    ResizeDesc r;
    r.mode = ResizeMode::LINEAR;
    r.coord = c;
    out.push_back(r);
    // CUBIC: ONNX's default a = -0.75 with edge taps, and a = -0.5 with exclude_outside.
    r.mode = ResizeMode::CUBIC;
    out.push_back(r);
    r.cubic_coeff_a = -0.5f;
    r.exclude_outside = true;
    out.push_back(r);
  }
  return out;
}

std::string mode_name(const ResizeDesc& r) {
  switch (r.mode) {
    case ResizeMode::NEAREST: return nearest_name(r.nearest);
    case ResizeMode::LINEAR: return "linear";
    case ResizeMode::CUBIC:
      return std::string("cubic a=") + std::to_string(r.cubic_coeff_a) + (r.exclude_outside ? " exclude_outside" : "");
  }
  return "?";
}

struct Case {
  std::vector<int64_t> x_dims;
  std::vector<float> scales;     // per spatial dim; empty: all 0 (out / in)
  std::vector<int64_t> y_dims;   // when scales is empty
};

// y dims: given, or floor(in * scale) as ONNX computes them from scales.
std::vector<int64_t> output_dims(const Case& c) {
  if (c.scales.empty()) return c.y_dims;
  std::vector<int64_t> y = c.x_dims;
  for (size_t k = 0; k < c.scales.size(); ++k)
    y[2 + k] = static_cast<int64_t>(std::floor(static_cast<double>(c.x_dims[2 + k]) * c.scales[k]));
  return y;
}

// Runs a rank-4 f32 NCHW resize of a 1x1xHxW image on `handle` and returns the packed output.
std::vector<double> resize_image(const Handle& handle, const ResizeDesc& r,
                                 const std::vector<float>& image, int64_t h, int64_t w, int64_t oh,
                                 int64_t ow) {
  HostTensor x(TensorDesc::nchw(DType::F32, 1, 1, h, w));
  x.from_ref(std::vector<double>(image.begin(), image.end()));
  HostTensor y(TensorDesc::nchw(DType::F32, 1, 1, oh, ow));
  y.poison();
  Staging st(handle);
  const Status s = resize_forward(handle, r, 1.f, x.desc(), st.in(x), 0.f, y.desc(), st.out(y));
  INFO(s.to_string());
  CHECK(s.ok());
  st.finish();
  return y.to_ref();
}

void check_values(const std::vector<double>& got, const std::vector<double>& expected) {
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i] == doctest::Approx(expected[i]).epsilon(1e-5));
  }
}

// resize_image on every backend, each checked against `expected`.
void check_everywhere(const ResizeDesc& r, const std::vector<float>& image, int64_t h, int64_t w,
                      int64_t oh, int64_t ow, const std::vector<double>& expected) {
  for (const Handle& handle : test_handles()) {
    CAPTURE(std::string(backend_name(handle)));
    check_values(resize_image(handle, r, image, h, w, oh, ow), expected);
  }
}

}  // namespace

TEST_CASE("resize_forward matches the float64 reference") {
  const std::vector<Case> cases = {
      {{2, 3, 7}, {}, {2, 3, 13}},
      {{1, 2, 13}, {}, {1, 2, 3}},
      {{2, 1, 1}, {}, {2, 1, 7}},
      {{1, 3, 7}, {}, {1, 3, 1}},
      {{2, 2, 5}, {2.f}, {}},       // asymmetric hits exact .5 ties
      {{2, 2, 7}, {0.5f}, {}},      // out = 3, not 3.5: the scale, not out / in, maps
      {{1, 3, 7, 5}, {}, {1, 3, 13, 3}},
      {{2, 2, 3, 3}, {2.f, 3.f}, {}},
      {{1, 2, 13, 7}, {0.6f, 1.5f}, {}},
      {{2, 1, 1, 3}, {}, {2, 1, 3, 1}},
      {{1, 2, 3, 5, 7}, {}, {1, 2, 7, 3, 13}},
      {{1, 1, 4, 3, 2}, {0.5f, 2.f, 1.5f}, {}},
      {{1, 2, 1, 1, 1}, {}, {1, 2, 3, 1, 2}},
      // Rows longer than the backend's chunk of precomputed columns (256).
      {{1, 2, 151}, {}, {1, 2, 601}},
      {{1, 1, 3, 601}, {}, {1, 1, 2, 263}},
      // Rows and channels of 16+ (CUDA's tiled kernel: a warp across the fastest y dim), with
      // exact scale-2 ties and a non-integer scale.
      {{1, 19, 5, 17}, {2.f, 2.f}, {}},
      {{2, 24, 3, 4, 21}, {}, {2, 24, 5, 7, 40}},
      {{1, 17, 9, 33}, {1.7f, 0.55f}, {}},
  };
  const std::pair<Layout, Layout> layouts[] = {{Layout::CHANNELS_FIRST, Layout::CHANNELS_FIRST},
                                               {Layout::CHANNELS_LAST, Layout::CHANNELS_LAST},
                                               {Layout::PADDED, Layout::REVERSED},
                                               {Layout::REVERSED, Layout::CHANNELS_LAST},
                                               {Layout::CHANNELS_LAST, Layout::PADDED}};
  // Reduced (sanitizer runs): one layout pair per (case, mode, type), rotating, so that every
  // pair still meets every case and mode.
  const size_t n_layouts = sizeof(layouts) / sizeof(layouts[0]);
  for (const Handle& h : test_handles())
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    const std::vector<int64_t> y_dims = output_dims(c);
    const std::vector<ResizeDesc> modes = all_resize_modes();
    for (size_t mi = 0; mi < modes.size(); ++mi) {
      ResizeDesc r = modes[mi];
      for (size_t k = 0; k < c.scales.size(); ++k) r.scales[k] = c.scales[k];
      for (DType t : {DType::F32, DType::F16}) {
        for (size_t li = 0; li < n_layouts; ++li) {
          if (reduced_tests() && (ci + mi + (t == DType::F16 ? 1 : 0) + li) % n_layouts != 0)
            continue;
          // CUBIC (16 to 64 taps per element, CI time): two layout pairs per (case, mode, type),
          // rotating, so that every pair still meets every case.
          if (r.mode == ResizeMode::CUBIC && (ci + mi + li) % n_layouts > 1) continue;
          const Layout lx = layouts[li].first, ly = layouts[li].second;
          for (const auto& scaling : kScalings) {
            const float alpha = scaling.first, beta = scaling.second;
            // CUBIC: alpha / beta != (1, 0) on alternate layouts (the blend is every mode's).
            if (r.mode == ResizeMode::CUBIC && beta != 0.f && (ci + li) % 2 == 0) continue;
            CAPTURE(std::string(backend_name(h)));
            CAPTURE(dims_str(c.x_dims));
            CAPTURE(dims_str(y_dims));
            CAPTURE(r.scales[0]);
            CAPTURE(r.scales[1]);
            CAPTURE(r.scales[2]);
            CAPTURE(mode_name(r));
            CAPTURE(std::string(coord_name(r.coord)));
            CAPTURE(std::string(dtype_name(t)));
            CAPTURE(std::string(layout_name(lx)));
            CAPTURE(std::string(layout_name(ly)));
            CAPTURE(beta);
            HostTensor x(make_desc(t, c.x_dims, lx));
            x.fill_random();
            if (specials_turn()) x.plant_specials();  // NaN and +-inf in, as ONNX gives them out
            HostTensor y(make_desc(t, y_dims, ly));
            if (beta == 0.f) y.poison(); else y.fill_random();
            const HostTensor before = y;
            Staging st(h);
            REQUIRE_OK(resize_forward(h, r, alpha, x.desc(), st.in(x), beta, y.desc(), st.out(y)));
            st.finish();
            const auto ref = ref::resize(r, x.to_ref(), c.x_dims, y_dims);
            check_output(y, before, blend(ref, alpha, beta, before.to_ref()), tol_for(t));
          }
        }
      }
    }
  }
}

TEST_CASE("resize_forward on large images") {
  // A 2x upsample of a feature map (FPN / segmentation decoders) and a downsample, NCHW and
  // NHWC, with the modes networks use.
  struct Big {
    std::vector<int64_t> x_dims, y_dims;
    float scale;  // both spatial scales; 0: out / in
  };
  const std::vector<Big> bigs = {{{1, 32, 56, 56}, {1, 32, 112, 112}, 2.f},
                                 {{2, 16, 75, 100}, {2, 16, 33, 41}, 0.f}};
  std::vector<ResizeDesc> modes(4);
  modes[0].mode = ResizeMode::NEAREST;  // half_pixel, round_prefer_floor
  modes[1].mode = ResizeMode::NEAREST;
  modes[1].coord = ResizeCoord::ASYMMETRIC;
  modes[1].nearest = ResizeNearest::FLOOR;
  modes[2].mode = ResizeMode::LINEAR;  // half_pixel
  modes[3].mode = ResizeMode::LINEAR;
  modes[3].coord = ResizeCoord::ALIGN_CORNERS;
  modes.emplace_back();
  modes[4].mode = ResizeMode::CUBIC;  // half_pixel, a = -0.75
  for (const Handle& h : test_handles())
    for (const Big& b : bigs)
      for (ResizeDesc r : modes)
        for (DType t : {DType::F32, DType::F16})
          for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST}) {
            r.scales[0] = r.scales[1] = b.scale;
            CAPTURE(std::string(backend_name(h)));
            CAPTURE(dims_str(b.x_dims));
            CAPTURE(dims_str(b.y_dims));
            CAPTURE(mode_name(r));
            CAPTURE(std::string(coord_name(r.coord)));
            CAPTURE(std::string(dtype_name(t)));
            CAPTURE(std::string(layout_name(l)));
            HostTensor x(make_desc(t, b.x_dims, l));
            x.fill_random();
            HostTensor y(make_desc(t, b.y_dims, l));
            y.poison();
            const HostTensor before = y;
            Staging st(h);
            REQUIRE_OK(resize_forward(h, r, 1.f, x.desc(), st.in(x), 0.f, y.desc(), st.out(y)));
            st.finish();
            check_output(y, before, ref::resize(r, x.to_ref(), b.x_dims, b.y_dims), tol_for(t));
          }
}

// Values worked out by hand from the ONNX Resize definition (the same inputs as ONNX's own
// backend tests), so that the reference and the kernel cannot share a misreading of the spec.
TEST_CASE("resize_forward reproduces the ONNX spec's examples") {
  const std::vector<float> two_by_two = {1, 2, 3, 4};
  const std::vector<float> two_by_four = {1, 2, 3, 4, 5, 6, 7, 8};
  ResizeDesc r;
  SUBCASE("nearest, half_pixel, upsample by 2 x 3") {
    r.mode = ResizeMode::NEAREST;
    check_everywhere(r, two_by_two, 2, 2, 4, 6,
                     {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
  }
  SUBCASE("nearest, half_pixel, downsample by 0.6") {
    r.mode = ResizeMode::NEAREST;
    r.scales[0] = r.scales[1] = 0.6f;
    check_everywhere(r, two_by_four, 2, 4, 1, 2, {1, 3});
  }
  SUBCASE("linear, half_pixel, downsample by 0.6") {
    r.mode = ResizeMode::LINEAR;
    r.scales[0] = r.scales[1] = 0.6f;
    check_everywhere(r, two_by_four, 2, 4, 1, 2, {8.0 / 3.0, 13.0 / 3.0});
  }
  SUBCASE("linear, half_pixel, upsample by 2 (edges clamp)") {
    r.mode = ResizeMode::LINEAR;
    check_everywhere(r, two_by_two, 2, 2, 4, 4,
                     {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4});
  }
  SUBCASE("linear, align_corners, upsample by 2") {
    r.mode = ResizeMode::LINEAR;
    r.coord = ResizeCoord::ALIGN_CORNERS;
    const double t = 1.0 / 3.0;
    check_everywhere(r, two_by_two, 2, 2, 4, 4,
                     {1, 1 + t, 1 + 2 * t, 2, 1 + 2 * t, 2, 2 + t, 2 + 2 * t, 2 + t, 2 + 2 * t, 3,
                      3 + t, 3, 3 + t, 3 + 2 * t, 4});
  }
  SUBCASE("linear, align_corners, downsample with given scales (ONNX divides by in * scale - 1)") {
    // ONNX's test_resize_downsample_scales_linear_align_corners: scale 0.6 on 2x4 gives 1x2;
    // along W the coordinate of o = 1 is 1 * 3 / (2.4 - 1) = 2.142857, not 3 / (2 - 1).
    r.mode = ResizeMode::LINEAR;
    r.coord = ResizeCoord::ALIGN_CORNERS;
    r.scales[0] = r.scales[1] = 0.6f;
    const std::vector<float> two_rows = {1, 2, 3, 4, 5, 6, 7, 8};
    check_everywhere(r, two_rows, 2, 4, 1, 2, {1, 1 + 3.0 / (4 * double(0.6f) - 1)});
  }
  SUBCASE("nearest rounding on one row of 4 -> 8") {
    const std::vector<float> row = {1, 2, 3, 4};
    r.mode = ResizeMode::NEAREST;
    r.coord = ResizeCoord::ALIGN_CORNERS;  // o * 3 / 7
    r.nearest = ResizeNearest::FLOOR;
    check_everywhere(r, row, 1, 4, 1, 8, {1, 1, 1, 2, 2, 3, 3, 4});
    r.coord = ResizeCoord::ASYMMETRIC;  // o / 2: ties at every odd o
    r.nearest = ResizeNearest::ROUND_PREFER_CEIL;
    check_everywhere(r, row, 1, 4, 1, 8, {1, 2, 2, 3, 3, 4, 4, 4});
    r.nearest = ResizeNearest::ROUND_PREFER_FLOOR;
    check_everywhere(r, row, 1, 4, 1, 8, {1, 1, 2, 2, 3, 3, 4, 4});
    r.nearest = ResizeNearest::CEIL;
    r.coord = ResizeCoord::TF_HALF_PIXEL_FOR_NN;  // (o + 0.5) / 2 = 0.25, 0.75, ...
    check_everywhere(r, row, 1, 4, 1, 8, {2, 2, 3, 3, 4, 4, 4, 4});
    r.coord = ResizeCoord::PYTORCH_HALF_PIXEL;  // one output: coordinate 0
    r.nearest = ResizeNearest::ROUND_PREFER_FLOOR;
    check_everywhere(r, row, 1, 4, 1, 1, {1});
  }
}

TEST_CASE("resize_forward rejects invalid input") {
  const Handle h = Handle::cpu();
  const TensorDesc xd = TensorDesc::nchw(DType::F32, 1, 2, 3, 3);
  const TensorDesc yd = TensorDesc::nchw(DType::F32, 1, 2, 6, 6);
  HostTensor x(xd), y(yd);
  x.fill_random();
  const ResizeDesc ok;
  REQUIRE_OK(resize_forward(h, ok, 1.f, xd, x.data(), 0.f, yd, y.data()));
  CHECK_STATUS(resize_forward(h, ok, 1.f, xd, nullptr, 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(resize_forward(h, ok, 1.f, xd, x.data(), 0.f, yd, nullptr), StatusCode::BAD_PARAM);
  // N or C changes; rank differs; rank outside 3..5; dtype differs.
  CHECK_STATUS(resize_forward(h, ok, 1.f, xd, x.data(), 0.f, TensorDesc::nchw(DType::F32, 1, 3, 6, 6), y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(resize_forward(h, ok, 1.f, xd, x.data(), 0.f, TensorDesc::nchw(DType::F32, 2, 2, 6, 6), y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(resize_forward(h, ok, 1.f, xd, x.data(), 0.f, TensorDesc::ncdhw(DType::F32, 1, 2, 1, 6, 6), y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(resize_forward(h, ok, 1.f, TensorDesc::packed(DType::F32, {2, 9}), x.data(), 0.f,
                              TensorDesc::packed(DType::F32, {2, 18}), y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(resize_forward(h, ok, 1.f, xd, x.data(), 0.f, yd.with_dtype(DType::F16), y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(resize_forward(h, ok, 1.f, xd, x.data(), 0.f, TensorDesc::nchw(DType::F32, 1, 2, 0, 6), y.data()),
               StatusCode::BAD_PARAM);
  // Scales: negative, NaN, infinite.
  for (float bad : {-1.f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    ResizeDesc r;
    r.scales[1] = bad;
    CAPTURE(bad);
    CHECK_STATUS(resize_forward(h, r, 1.f, xd, x.data(), 0.f, yd, y.data()), StatusCode::INVALID_VALUE);
  }
  // Unknown enums.
  ResizeDesc bad_mode;
  bad_mode.mode = static_cast<ResizeMode>(EnumCount<ResizeMode>::value);
  CHECK_STATUS(resize_forward(h, bad_mode, 1.f, xd, x.data(), 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  ResizeDesc bad_cubic;  // a non-finite cubic coefficient
  bad_cubic.mode = ResizeMode::CUBIC;
  bad_cubic.cubic_coeff_a = std::numeric_limits<float>::infinity();
  CHECK_STATUS(resize_forward(h, bad_cubic, 1.f, xd, x.data(), 0.f, yd, y.data()), StatusCode::INVALID_VALUE);
  ResizeDesc bad_coord;
  bad_coord.coord = static_cast<ResizeCoord>(5);
  CHECK_STATUS(resize_forward(h, bad_coord, 1.f, xd, x.data(), 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  ResizeDesc bad_nearest;
  bad_nearest.nearest = static_cast<ResizeNearest>(-1);
  CHECK_STATUS(resize_forward(h, bad_nearest, 1.f, xd, x.data(), 0.f, yd, y.data()), StatusCode::BAD_PARAM);
}
