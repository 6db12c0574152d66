// conv_backward_data (the transposed convolution) on every backend (CPU always, CUDA when a
// device is present) against the float64 scatter reference; the adjoint identity
// <conv(x, w), dy> == <x, conv_backward_data(dy, w)> tying it to conv_forward; the output size
// helper conv_transpose_output_dims; invalid input.
#include <cmath>
#include <string>

#include "kernels/util.h"
#include "reference/conv.h"
#include "reference/conv_backward_data.h"

using namespace jet;
using namespace jet::test;

namespace {

// A transposed convolution, described as the forward convolution dx -> dy it transposes.
struct BackwardCase {
  const char* name;
  std::vector<int64_t> dy_dims, w_dims;  // dy: N, K, out...; w: K, C / groups, window
  std::vector<int64_t> output_padding;   // picks dx's size among those whose convolution is dy
  ref::ConvParams p;
};

BackwardCase make_case(const char* name, std::vector<int64_t> dy, std::vector<int64_t> w,
                       std::vector<int64_t> pad_begin, std::vector<int64_t> pad_end,
                       std::vector<int64_t> stride, std::vector<int64_t> dilation,
                       std::vector<int64_t> output_padding, int64_t groups, bool flip) {
  BackwardCase c;
  c.name = name;
  c.dy_dims = std::move(dy);
  c.w_dims = std::move(w);
  c.output_padding = std::move(output_padding);
  c.p.pad_begin = std::move(pad_begin);
  c.p.pad_end = std::move(pad_end);
  c.p.stride = std::move(stride);
  c.p.dilation = std::move(dilation);
  c.p.groups = groups;
  c.p.flip = flip;
  return c;
}

int spatial_rank(const BackwardCase& c) { return static_cast<int>(c.dy_dims.size()) - 2; }

ConvDesc conv_desc(const BackwardCase& c) {
  return ConvDesc::make(spatial_rank(c), c.p.pad_begin.data(), c.p.pad_end.data(),
                        c.p.stride.data(), c.p.dilation.data(), c.p.groups,
                        c.p.flip ? ConvMode::CONVOLUTION : ConvMode::CROSS_CORRELATION);
}

FilterDesc filter_desc(DType t, FilterLayout layout, const std::vector<int64_t>& dims) {
  return FilterDesc::make(t, layout, static_cast<int>(dims.size()), dims.data());
}

// dx's dims written out from ONNX ConvTranspose's shape formula, independently of jet.
std::vector<int64_t> expected_dx_dims(const BackwardCase& c) {
  std::vector<int64_t> d = {c.dy_dims[0], c.w_dims[1] * c.p.groups};
  for (int i = 0; i < spatial_rank(c); ++i) {
    const size_t s = static_cast<size_t>(i);
    d.push_back((c.dy_dims[2 + s] - 1) * c.p.stride[s] - c.p.pad_begin[s] - c.p.pad_end[s] +
                c.p.dilation[s] * (c.w_dims[2 + s] - 1) + 1 + c.output_padding[s]);
  }
  return d;
}

// dx's dims from jet's helper, checked against the formula and against the forward convolution
// (the convolution of dx must be dy).
std::vector<int64_t> dx_dims_of(const BackwardCase& c) {
  int64_t dims[5] = {};
  const TensorDesc dy = make_desc(DType::F32, c.dy_dims, Layout::CHANNELS_FIRST);
  REQUIRE_OK(conv_transpose_output_dims(dy, filter_desc(DType::F32, FilterLayout::KCRS, c.w_dims),
                                        conv_desc(c), c.output_padding.data(), dims));
  const std::vector<int64_t> dx(dims, dims + c.dy_dims.size());
  CHECK(dx == expected_dx_dims(c));
  CHECK(ref::conv_output_dims(dx, c.w_dims, c.p) == c.dy_dims);
  return dx;
}

std::vector<BackwardCase> cases() {
  return {
      make_case("2d 3x3 stride 1 pad 1", {2, 4, 5, 6}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1},
                {1, 1}, {0, 0}, 1, false),
      make_case("2d 3x3 stride 2 pad 1 output_padding 1 (x2 upsampling)", {1, 5, 4, 5},
                {5, 3, 3, 3}, {1, 1}, {1, 1}, {2, 2}, {1, 1}, {1, 1}, 1, false),
      make_case("2d 4x4 stride 2 pad 1", {2, 3, 3, 4}, {3, 2, 4, 4}, {1, 1}, {1, 1}, {2, 2},
                {1, 1}, {0, 0}, 1, false),
      make_case("2d stride 3 output_padding 2/1, asymmetric pads, conv mode", {1, 3, 3, 4},
                {3, 2, 3, 2}, {0, 1}, {2, 0}, {3, 3}, {1, 1}, {2, 1}, 1, true),
      make_case("2d dilated 2x3, stride 2, output_padding 1/0", {1, 2, 4, 3}, {2, 3, 3, 2},
                {2, 1}, {1, 1}, {2, 2}, {2, 3}, {1, 0}, 1, false),
      make_case("2d 2 groups, stride 2 on H", {1, 4, 5, 5}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {2, 1},
                {1, 1}, {1, 0}, 2, false),
      make_case("2d depthwise stride 2, conv mode", {2, 5, 4, 4}, {5, 1, 3, 3}, {1, 1}, {1, 1},
                {2, 2}, {1, 1}, {1, 0}, 5, true),
      make_case("2d depthwise multiplier 2, asymmetric pads", {1, 6, 5, 5}, {6, 1, 3, 3}, {1, 0},
                {0, 1}, {1, 1}, {1, 1}, {0, 0}, 3, false),
      make_case("1d stride 3 dilation 2 output_padding 1", {2, 3, 5}, {3, 4, 3}, {1}, {2}, {3},
                {2}, {1}, 1, false),
      make_case("3d stride 2 on H, output_padding 1, conv mode", {1, 3, 3, 4, 3}, {3, 2, 2, 3, 1},
                {1, 1, 0}, {0, 1, 0}, {1, 2, 1}, {1, 1, 1}, {0, 1, 0}, 1, true),
      make_case("3d 2 groups, dilated W with stride 2", {2, 4, 2, 3, 3}, {4, 2, 1, 3, 3},
                {0, 1, 2}, {0, 1, 1}, {1, 1, 2}, {1, 1, 2}, {0, 0, 1}, 2, false),
      make_case("2d 1x1 stride 2 (dx positions no tap reaches)", {1, 4, 3, 4}, {4, 3, 1, 1},
                {0, 0}, {0, 0}, {2, 2}, {1, 1}, {1, 1}, 1, false),
      make_case("2d 1x2 stride 3 (window shorter than stride)", {1, 2, 3, 3}, {2, 3, 1, 2},
                {0, 1}, {1, 0}, {3, 3}, {1, 1}, {2, 0}, 1, false),
      make_case("pad >= kernel, conv mode", {1, 3, 7, 4}, {3, 2, 2, 2}, {3, 2}, {2, 3}, {1, 2},
                {1, 1}, {0, 1}, 1, true),
      make_case("all ones", {1, 1, 1, 1}, {1, 1, 1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}, {0, 0}, 1,
                false),
      make_case("40 channels per group (CPU channel blocks), 20 filters", {1, 20, 3, 4},
                {20, 40, 3, 3}, {1, 1}, {1, 1}, {2, 2}, {1, 1}, {0, 1}, 1, false),
      make_case("2 groups of 18 channels, 2x2 stride 2", {1, 6, 4, 3}, {6, 18, 2, 2}, {0, 0},
                {0, 0}, {2, 2}, {1, 1}, {1, 1}, 2, false),
  };
}

// One case on one backend: every dtype x (dx, dy) layout pair x filter layout x (alpha, beta),
// against the float64 scatter reference.
void sweep(const Handle& h, const BackwardCase& c,
           const std::vector<std::pair<Layout, Layout>>& dx_dy_layouts) {
  const ConvDesc conv = conv_desc(c);
  const std::vector<int64_t> dx_dims = dx_dims_of(c);
  const std::pair<float, float> scalings[] = {{1.f, 0.f}, {0.5f, 0.25f}};
  for (DType t : {DType::F32, DType::F16}) {
    std::vector<double> dyv = random_values(t, c.dy_dims);
    if (specials_turn()) plant_specials(&dyv);  // NaN and +-inf in, as ONNX gives them out
    const std::vector<double> wv = random_values(t, c.w_dims);
    const std::vector<double> ref_dx =
        ref::conv_backward_data(dyv, c.dy_dims, wv, c.w_dims, dx_dims, c.p);
    for (const auto& layouts : dx_dy_layouts) {
      for (FilterLayout wl : {FilterLayout::KCRS, FilterLayout::KRSC}) {
        for (const auto& scaling : scalings) {
          const float alpha = scaling.first, beta = scaling.second;
          CAPTURE(std::string(backend_name(h)));
          CAPTURE(std::string(c.name));
          CAPTURE(std::string(dtype_name(t)));
          CAPTURE(std::string(layout_name(layouts.first)));
          CAPTURE(std::string(layout_name(layouts.second)));
          CAPTURE(std::string(wl == FilterLayout::KCRS ? "KCRS" : "KRSC"));
          CAPTURE(alpha);
          CAPTURE(beta);
          const FilterDesc wd = filter_desc(t, wl, c.w_dims);
          const HostTensor w = tensor_with(wd.as_tensor(), wv);
          const HostTensor dy = tensor_with(make_desc(t, c.dy_dims, layouts.second), dyv);
          HostTensor dx(make_desc(t, dx_dims, layouts.first));
          if (beta == 0.f) dx.poison(); else dx.fill_random();
          const HostTensor before = dx;
          Staging st(h);
          const void* wp = st.in(w);
          const void* dyp = st.in(dy);
          void* dxp = st.out(dx);
          REQUIRE_OK(conv_backward_data(h, alpha, wd, wp, dy.desc(), dyp, conv, beta, dx.desc(),
                                        dxp));
          st.finish();
          check_output(dx, before, blend(ref_dx, alpha, beta, before.to_ref()), tol_for(t));
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("conv_backward_data matches the float64 scatter reference") {
  std::vector<std::pair<Layout, Layout>> layouts;
  for (Layout ldx : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED})
    for (Layout ldy : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED})
      layouts.push_back({ldx, ldy});
  const std::vector<std::pair<Layout, Layout>> reversed = {
      {Layout::REVERSED, Layout::CHANNELS_FIRST}, {Layout::CHANNELS_LAST, Layout::REVERSED}};
  for (const Handle& h : test_handles()) {
    const auto all = cases();
    for (const BackwardCase& c : all) sweep(h, c, layouts);
    for (size_t i : {size_t(1), size_t(3), size_t(6), size_t(9), size_t(16)})
      sweep(h, all[i], reversed);
  }
}

TEST_CASE("conv_backward_data on larger problems, NCHW and NHWC") {
  // Enough dx elements for many blocks of CUDA threads; a decoder-style x2 upsampling layer and a
  // depthwise one.
  const std::vector<BackwardCase> large = {
      make_case("x2 upsampling 3x3, 32 -> 16 channels", {2, 32, 12, 14}, {32, 16, 3, 3}, {1, 1},
                {1, 1}, {2, 2}, {1, 1}, {1, 1}, 1, false),
      make_case("depthwise 4x4 stride 2, 48 channels", {1, 48, 9, 11}, {48, 1, 4, 4}, {1, 1},
                {1, 1}, {2, 2}, {1, 1}, {0, 0}, 48, false),
  };
  for (const Handle& h : test_handles())
    for (const BackwardCase& c : large)
      sweep(h, c, {{Layout::CHANNELS_FIRST, Layout::CHANNELS_FIRST},
                   {Layout::CHANNELS_LAST, Layout::CHANNELS_LAST}});
}

TEST_CASE("conv_backward_data is the adjoint of conv_forward") {
  // <conv(x, w), dy> == <x, conv_backward_data(dy, w)> for any x and dy: ties the routine to
  // jet's own forward convolution (CPU backend) without going through either reference.
  for (const Handle& h : test_handles()) {
    for (const BackwardCase& c : cases()) {
      CAPTURE(std::string(backend_name(h)));
      CAPTURE(std::string(c.name));
      const DType t = DType::F32;
      const ConvDesc conv = conv_desc(c);
      const std::vector<int64_t> dx_dims = dx_dims_of(c);
      const FilterDesc wd = filter_desc(t, FilterLayout::KCRS, c.w_dims);
      HostTensor w(wd.as_tensor());
      w.fill_random();
      HostTensor x(make_desc(t, dx_dims, Layout::CHANNELS_FIRST));
      x.fill_random();
      HostTensor y(make_desc(t, c.dy_dims, Layout::CHANNELS_FIRST));
      y.poison();
      const Handle cpu = Handle::cpu();
      REQUIRE_OK(conv_forward(cpu, 1.f, x.desc(), x.data(), wd, w.data(), conv, ConvAlgo::DIRECT,
                              nullptr, 0, 0.f, y.desc(), y.data()));
      HostTensor dy(make_desc(t, c.dy_dims, Layout::CHANNELS_LAST));
      dy.fill_random();
      HostTensor dx(make_desc(t, dx_dims, Layout::PADDED));
      dx.poison();
      Staging st(h);
      const void* wp = st.in(w);
      const void* dyp = st.in(dy);
      void* dxp = st.out(dx);
      REQUIRE_OK(conv_backward_data(h, 1.f, wd, wp, dy.desc(), dyp, conv, 0.f, dx.desc(), dxp));
      st.finish();
      const auto dot = [](const std::vector<double>& a, const std::vector<double>& b) {
        double s = 0.0;
        for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
        return s;
      };
      const std::vector<double> xv = x.to_ref(), yv = y.to_ref(), dyv = dy.to_ref(),
                                dxv = dx.to_ref();
      const double lhs = dot(yv, dyv), rhs = dot(xv, dxv);
      // Cauchy-Schwarz bounds both products; f32 rounding in y and dx is far below 1e-5 of it.
      const double bound = std::sqrt(dot(yv, yv) * dot(dyv, dyv)) +
                           std::sqrt(dot(xv, xv) * dot(dxv, dxv));
      CAPTURE(lhs);
      CAPTURE(rhs);
      CHECK(std::fabs(lhs - rhs) <= 1e-5 * bound);
    }
  }
}

TEST_CASE("conv_transpose_output_dims gives ConvTranspose's output shape") {
  const DType f32 = DType::F32;
  int64_t dx[5] = {};
  // PyTorch ConvTranspose2d(16 -> 8, kernel 4, stride 2, padding 1): 7x9 -> 14x18.
  REQUIRE_OK(conv_transpose_output_dims(TensorDesc::nchw(f32, 2, 16, 7, 9),
                                        FilterDesc::kcrs(f32, 16, 8, 4, 4),
                                        ConvDesc::conv2d(1, 1, 2, 2), nullptr, dx));
  CHECK(dx[0] == 2);
  CHECK(dx[1] == 8);
  CHECK(dx[2] == 14);
  CHECK(dx[3] == 18);
  // Kernel 3, stride 2, padding 1, output_padding 1 (the usual x2 upsampling): 4x5 -> 8x10; with
  // 4 groups the filter holds 2 of the 8 output channels per group.
  const int64_t out_pad[2] = {1, 1};
  REQUIRE_OK(conv_transpose_output_dims(TensorDesc::nhwc(f32, 1, 8, 4, 5),
                                        FilterDesc::kcrs(f32, 8, 2, 3, 3),
                                        ConvDesc::conv2d(1, 1, 2, 2, 1, 1, 4), out_pad, dx));
  CHECK(dx[1] == 8);
  CHECK(dx[2] == 8);
  CHECK(dx[3] == 10);
  // 1D, kernel 3, stride 3, dilation 2, output_padding 2: (5 - 1) * 3 + 2 * 2 + 1 + 2 = 19.
  const int64_t stride3[1] = {3}, dil2[1] = {2}, pad2[1] = {2};
  REQUIRE_OK(conv_transpose_output_dims(TensorDesc::ncw(f32, 1, 3, 5),
                                        FilterDesc::make(f32, FilterLayout::KCRS, 3,
                                                         std::vector<int64_t>{3, 1, 3}.data()),
                                        ConvDesc::make(1, nullptr, nullptr, stride3, dil2), pad2,
                                        dx));
  CHECK(dx[2] == 19);

  // Invalid: output_padding >= stride or negative, dx empty, dy's channels not w's K, ranks,
  // null output.
  const TensorDesc dy = TensorDesc::nchw(f32, 1, 4, 3, 3);
  const FilterDesc w = FilterDesc::kcrs(f32, 4, 2, 3, 3);
  const int64_t too_big[2] = {2, 0}, negative[2] = {0, -1};
  const StatusCode bad = StatusCode::BAD_PARAM;
  CHECK_STATUS(conv_transpose_output_dims(dy, w, ConvDesc::conv2d(1, 1, 2, 2), too_big, dx), bad);
  CHECK_STATUS(conv_transpose_output_dims(dy, w, ConvDesc::conv2d(1, 1, 2, 2), negative, dx), bad);
  CHECK_STATUS(conv_transpose_output_dims(dy, w, ConvDesc::conv2d(1, 1), out_pad, dx), bad);
  CHECK_STATUS(conv_transpose_output_dims(TensorDesc::nchw(f32, 1, 1, 1, 1),
                                          FilterDesc::kcrs(f32, 1, 1, 1, 1),
                                          ConvDesc::conv2d(1, 0), nullptr, dx),
               bad);  // (1 - 1) - 2 + 1 = -1 rows
  CHECK_STATUS(conv_transpose_output_dims(TensorDesc::nchw(f32, 1, 5, 3, 3), w,
                                          ConvDesc::conv2d(1, 1), nullptr, dx),
               bad);
  CHECK_STATUS(conv_transpose_output_dims(TensorDesc::ncw(f32, 1, 4, 3), w,
                                          ConvDesc::conv2d(1, 1), nullptr, dx),
               bad);
  CHECK_STATUS(conv_transpose_output_dims(dy, w, ConvDesc::conv2d(1, 1), nullptr, nullptr), bad);
  CHECK_STATUS(conv_transpose_output_dims(dy, w, ConvDesc::conv2d(1, 1, 0, 1), nullptr, dx), bad);
}

TEST_CASE("conv_backward_data rejects invalid input") {
  const Handle h = Handle::cpu();
  const DType f32 = DType::F32;
  // The forward convolution 1x4x5x5 -> 1x6x5x5 (3x3, pad 1).
  const TensorDesc dx = TensorDesc::nchw(f32, 1, 4, 5, 5);
  const FilterDesc w = FilterDesc::kcrs(f32, 6, 4, 3, 3);
  const ConvDesc conv = ConvDesc::conv2d(1, 1);
  const TensorDesc dy = TensorDesc::nchw(f32, 1, 6, 5, 5);
  HostTensor dxt(dx), wt(w.as_tensor()), dyt(dy);
  wt.fill_random();
  dyt.fill_random();
  void* dxp = dxt.data();
  const void* wp = wt.data();
  const void* dyp = dyt.data();
  const auto run = [&](const TensorDesc& dxd, const FilterDesc& wd, const ConvDesc& cd,
                       const TensorDesc& dyd) {
    return conv_backward_data(h, 1.f, wd, wp, dyd, dyp, cd, 0.f, dxd, dxp);
  };
  const StatusCode bad = StatusCode::BAD_PARAM;
  REQUIRE_OK(run(dx, w, conv, dy));
  // dy is not the convolution of dx: wrong spatial size, channels or batch, or a dx one row
  // longer (with stride 1 that convolves to 6 rows; stride 2 below has two valid dx sizes).
  CHECK_STATUS(run(dx, w, conv, TensorDesc::nchw(f32, 1, 6, 5, 4)), bad);
  CHECK_STATUS(run(dx, w, conv, TensorDesc::nchw(f32, 1, 5, 5, 5)), bad);
  CHECK_STATUS(run(dx, w, conv, TensorDesc::nchw(f32, 2, 6, 5, 5)), bad);
  CHECK_STATUS(run(TensorDesc::nchw(f32, 1, 4, 6, 5), w, conv, dy), bad);
  // dx's channels vs w and groups; filters not a multiple of the groups.
  CHECK_STATUS(run(TensorDesc::nchw(f32, 1, 3, 5, 5), w, conv, dy), bad);
  CHECK_STATUS(run(dx, w, ConvDesc::conv2d(1, 1, 1, 1, 1, 1, 2), dy), bad);  // needs 8 channels
  CHECK_STATUS(run(TensorDesc::nchw(f32, 1, 6, 5, 5), FilterDesc::kcrs(f32, 5, 2, 3, 3),
                   ConvDesc::conv2d(1, 1, 1, 1, 1, 1, 3), TensorDesc::nchw(f32, 1, 5, 5, 5)),
               bad);
  // Spatial ranks disagree.
  const int64_t one[1] = {1};
  CHECK_STATUS(run(dx, w, ConvDesc::make(1, one, one, nullptr, nullptr), dy), bad);
  CHECK_STATUS(run(TensorDesc::ncdhw(f32, 1, 4, 1, 5, 5), w, conv, dy), bad);
  // Bad convolution parameters.
  CHECK_STATUS(run(dx, w, ConvDesc::conv2d(1, 1, 0, 1), dy), bad);
  CHECK_STATUS(run(dx, w, ConvDesc::conv2d(1, 1, 1, 1, 0, 1), dy), bad);
  CHECK_STATUS(run(dx, w, ConvDesc::conv2d(-1, 1), dy), bad);
  CHECK_STATUS(run(dx, w, ConvDesc::conv2d(1, 1, 1, 1, 1, 1, 0), dy), bad);
  CHECK_STATUS(run(dx, w, ConvDesc::conv2d(1, 1, 1, 1, 1, 1, 1, static_cast<ConvMode>(7)), dy),
               bad);
  // The dilated filter does not fit in dx plus padding (3 taps at dilation 4 span 9 > 5 + 2).
  CHECK_STATUS(run(dx, w, ConvDesc::conv2d(1, 1, 1, 1, 4, 1), TensorDesc::nchw(f32, 1, 6, 1, 5)),
               bad);
  // Bad descriptors: zero dims, rank 2, overlapping strides.
  CHECK_STATUS(run(TensorDesc::nchw(f32, 1, 4, 0, 5), w, conv, dy), bad);
  CHECK_STATUS(run(dx, FilterDesc::kcrs(f32, 6, 4, 0, 3), conv, dy), bad);
  CHECK_STATUS(run(dx, w, conv, TensorDesc::packed(f32, {6, 25})), bad);
  CHECK_STATUS(run(dx, w, conv, TensorDesc::strided(f32, {1, 6, 5, 5}, {150, 1, 5, 1})), bad);
  // Dtype mix.
  CHECK_STATUS(run(dx.with_dtype(DType::F16), w, conv, dy), bad);
  CHECK_STATUS(run(dx, FilterDesc::kcrs(DType::F16, 6, 4, 3, 3), conv, dy), bad);
  CHECK_STATUS(run(dx, w, conv, dy.with_dtype(DType::F16)), bad);
  // Null pointers, in place.
  CHECK_STATUS(conv_backward_data(h, 1.f, w, nullptr, dy, dyp, conv, 0.f, dx, dxp), bad);
  CHECK_STATUS(conv_backward_data(h, 1.f, w, wp, dy, nullptr, conv, 0.f, dx, dxp), bad);
  CHECK_STATUS(conv_backward_data(h, 1.f, w, wp, dy, dyp, conv, 0.f, dx, nullptr), bad);
  CHECK_STATUS(conv_backward_data(h, 1.f, FilterDesc::kcrs(f32, 4, 4, 3, 3), wp,
                                  TensorDesc::nchw(f32, 1, 4, 5, 5), dxp, conv, 0.f, dx, dxp),
               bad);
  // With stride 2, dx of 9 and of 10 rows both convolve to 5 rows: both are valid.
  {
    const ConvDesc s2 = ConvDesc::conv2d(1, 1, 2, 2);
    for (int64_t rows : {9, 10}) {
      HostTensor big(TensorDesc::nchw(f32, 1, 4, rows, 10));
      REQUIRE_OK(conv_backward_data(h, 1.f, w, wp, dy, dyp, s2, 0.f, big.desc(), big.data()));
    }
    HostTensor big(TensorDesc::nchw(f32, 1, 4, 11, 10));
    CHECK_STATUS(conv_backward_data(h, 1.f, w, wp, dy, dyp, s2, 0.f, big.desc(), big.data()), bad);
  }
}
