// conv_backward_data with an algorithm (jet/dnn/training.h): TRANSPOSED_FORWARD on every backend
// present (CPU here, CUDA too on a GPU machine) against the float64 scatter reference of
// tests/reference/conv_backward_data, over stride-1 problems and strided ones (phases: strides 2
// and 3, phases no tap reaches, dilations sharing a factor with the stride, pads beyond the
// window's reach, dx longer than the stride covers) with groups, depthwise, dilation, asymmetric
// pads, both modes, 1D to 3D, f32 and f16, every layout of dx, dy and the filter, alpha/beta !=
// (1, 0) and beta = 1, poisoned dx; the problems it refuses (NOT_SUPPORTED, naming GATHER);
// GATHER through the same entry point.
#include <algorithm>
#include <cmath>
#include <string>

#include "reference/conv.h"
#include "reference/conv_backward_data.h"
#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

namespace {

struct Case {
  const char* name;
  std::vector<int64_t> x_dims, w_dims;  // the forward convolution's x (= dx) and filter
  ref::ConvParams p;
};

Case make(const char* name, std::vector<int64_t> x, std::vector<int64_t> w, std::vector<int64_t> pad_begin,
          std::vector<int64_t> pad_end, std::vector<int64_t> dilation, int64_t groups, bool flip,
          std::vector<int64_t> stride = {}) {
  Case c{name, std::move(x), std::move(w), {}};
  c.p.pad_begin = std::move(pad_begin);
  c.p.pad_end = std::move(pad_end);
  c.p.stride = stride.empty() ? std::vector<int64_t>(c.p.pad_begin.size(), 1) : std::move(stride);
  c.p.dilation = std::move(dilation);
  c.p.groups = groups;
  c.p.flip = flip;
  return c;
}

ConvDesc conv_desc(const ref::ConvParams& p) {
  return ConvDesc::make(static_cast<int>(p.pad_begin.size()), p.pad_begin.data(), p.pad_end.data(), p.stride.data(),
                        p.dilation.data(), p.groups, p.flip ? ConvMode::CONVOLUTION : ConvMode::CROSS_CORRELATION);
}

FilterDesc filter_desc(DType t, FilterLayout layout, const std::vector<int64_t>& dims) {
  return FilterDesc::make(t, layout, static_cast<int>(dims.size()), dims.data());
}

}  // namespace

TEST_CASE("conv_backward_data TRANSPOSED_FORWARD matches the float64 reference") {
  const std::vector<Case> cases = {
      make("3x3 pad 1 (ResNet's 3x3)", {2, 3, 5, 6}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false),
      make("1x1 (ResNet's 1x1)", {2, 6, 3, 4}, {8, 6, 1, 1}, {0, 0}, {0, 0}, {1, 1}, 1, false),
      make("2 groups, conv mode, pad 0", {1, 4, 5, 5}, {6, 2, 3, 3}, {0, 0}, {0, 0}, {1, 1}, 2, true),
      make("depthwise multiplier 2, asymmetric pads", {1, 3, 5, 5}, {6, 1, 3, 3}, {1, 0}, {0, 1}, {1, 1}, 3, false),
      make("dilated 2x3, pads 2/1 and 1/1", {1, 3, 7, 6}, {2, 3, 3, 2}, {2, 1}, {1, 1}, {2, 3}, 1, false),
      make("1d dilation 2", {2, 4, 9}, {3, 4, 3}, {1}, {2}, {2}, 1, false),
      make("3d conv mode", {1, 2, 3, 4, 3}, {3, 2, 2, 3, 1}, {1, 1, 0}, {0, 1, 0}, {1, 1, 1}, 1, true),
      make("40 channels per group, 20 filters, 7x7 pad 3", {1, 40, 8, 7}, {20, 40, 7, 7}, {3, 3}, {3, 3}, {1, 1}, 1,
           false),
      // Strided: one stride-1 convolution per output phase.
      make("3x3/2 pad 1 (ResNet's downsampling 3x3)", {2, 3, 7, 6}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false,
           {2, 2}),
      make("1x1/2 (3 of 4 phases no tap reaches)", {2, 5, 5, 6}, {3, 5, 1, 1}, {0, 0}, {0, 0}, {1, 1}, 1, false,
           {2, 2}),
      make("7x7/2 pad 3 (ResNet's conv1)", {1, 3, 11, 9}, {4, 3, 7, 7}, {3, 3}, {3, 3}, {1, 1}, 1, false, {2, 2}),
      make("stride 3 dilation 2, conv mode, asymmetric pads", {1, 4, 10, 11}, {3, 4, 3, 2}, {2, 0}, {1, 2}, {2, 2},
           1, true, {3, 3}),
      make("stride 2 dilation 2 (odd phases empty), 2 groups", {1, 4, 9, 8}, {6, 2, 3, 2}, {2, 1}, {2, 0}, {2, 2}, 2,
           false, {2, 2}),
      make("stride 2 by 3, pads beyond the reach, depthwise", {1, 3, 8, 9}, {3, 1, 2, 3}, {3, 0}, {2, 4}, {1, 1}, 3,
           false, {2, 3}),
      make("1d stride 3 (dx 2 longer than the stride covers)", {2, 3, 13}, {2, 3, 4}, {1}, {0}, {1}, 1, false, {3}),
      make("3d strides 2, 1, 3, conv mode", {1, 2, 5, 3, 7}, {3, 2, 3, 2, 2}, {1, 0, 1}, {0, 1, 0}, {1, 1, 1}, 1, true,
           {2, 1, 3}),
      make("stride 3 beyond dx's extent (2 phases of 3)", {1, 2, 2, 4}, {2, 2, 1, 1}, {0, 0}, {0, 0}, {1, 1}, 1, false,
           {3, 2}),
  };
  const std::pair<float, float> scalings[] = {{1.f, 0.f}, {0.5f, 0.25f}, {-1.f, 1.f}};
  for (const Handle& h : test_handles()) {
    for (const Case& c : cases) {
      const std::vector<int64_t> dy_dims = ref::conv_output_dims(c.x_dims, c.w_dims, c.p);
      const ConvDesc conv = conv_desc(c.p);
      for (DType t : {DType::F32, DType::F16}) {
        const std::vector<double> dyv = random_values(t, dy_dims), wv = random_values(t, c.w_dims);
        const std::vector<double> want = ref::conv_backward_data(dyv, dy_dims, wv, c.w_dims, c.x_dims, c.p);
        for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED}) {
          for (FilterLayout wl : {FilterLayout::KCRS, FilterLayout::KRSC}) {
            for (const auto& scaling : scalings) {
              const float alpha = scaling.first, beta = scaling.second;
              CAPTURE(std::string(backend_name(h)));
              CAPTURE(std::string(c.name));
              CAPTURE(std::string(dtype_name(t)));
              CAPTURE(std::string(layout_name(l)));
              CAPTURE(static_cast<int>(wl));
              CAPTURE(alpha);
              const FilterDesc wd = filter_desc(t, wl, c.w_dims);
              const HostTensor w = tensor_with(wd.as_tensor(), wv);
              const HostTensor dy = tensor_with(make_desc(t, dy_dims, l), dyv);
              HostTensor dx(make_desc(t, c.x_dims, l == Layout::PADDED ? Layout::CHANNELS_LAST : l));
              if (beta == 0.f) dx.poison(); else dx.fill_random();
              const HostTensor before = dx;
              size_t bytes = 0;
              REQUIRE_OK(conv_backward_data_workspace_size(h, wd, dy.desc(), conv, dx.desc(),
                                                           ConvBwdDataAlgo::TRANSPOSED_FORWARD, &bytes));
              // The transposed filter (every tap in one phase or another, when every phase reads dy).
              if (std::all_of(c.p.stride.begin(), c.p.stride.end(), [](int64_t v) { return v == 1; }))
                CHECK(bytes >= static_cast<size_t>(wd.elements()) * dtype_size(t));
              HostTensor ws(TensorDesc::packed(DType::F32, {static_cast<int64_t>(bytes / 4 + 1)}));
              Staging st(h);
              const void* wp = st.in(w);
              const void* dyp = st.in(dy);
              void* dxp = st.out(dx);
              void* wsp = st.out(ws);
              REQUIRE_OK(conv_backward_data(h, alpha, wd, wp, dy.desc(), dyp, conv,
                                            ConvBwdDataAlgo::TRANSPOSED_FORWARD, wsp, bytes, beta, dx.desc(), dxp));
              st.finish();
              check_output(dx, before, blend(want, alpha, beta, before.to_ref()), tol_for(t));
            }
          }
        }
      }
    }
  }
}

TEST_CASE("conv_backward_data TRANSPOSED_FORWARD passes ConvMath::ALLOW_APPROXIMATE to its forward convolutions") {
  // A 3x3 stride-1 layer at a batch where the CUDA heuristic takes WINOGRAD for the transposed
  // problem: with the math allowed its tactic 0 runs F(4x4) (a workspace of another size), within
  // the approximate tactics' tolerance; EXACT stays F(2x2) within f32's. The CPU has nothing
  // approximate: the same workspace and the exact tolerance.
  const std::vector<int64_t> x_dims = {8, 32, 20, 18}, w_dims = {32, 32, 3, 3};
  const Case c = make("3x3 pad 1, 32 channels", x_dims, w_dims, {1, 1}, {1, 1}, {1, 1}, 1, false);
  const std::vector<int64_t> dy_dims = ref::conv_output_dims(c.x_dims, c.w_dims, c.p);
  const std::vector<double> dyv = random_values(DType::F32, dy_dims), wv = random_values(DType::F32, c.w_dims);
  const std::vector<double> want = ref::conv_backward_data(dyv, dy_dims, wv, c.w_dims, c.x_dims, c.p);
  for (const Handle& h : test_handles()) {
    CAPTURE(std::string(backend_name(h)));
    const FilterDesc wd = filter_desc(DType::F32, FilterLayout::KCRS, c.w_dims);
    const HostTensor w = tensor_with(wd.as_tensor(), wv);
    const HostTensor dy = tensor_with(make_desc(DType::F32, dy_dims, Layout::CHANNELS_FIRST), dyv);
    // The transposed problem's forward algorithm (dy as x, the K <-> C transposed filter).
    ConvAlgo inner = ConvAlgo::DIRECT;
    REQUIRE_OK(choose_conv_forward_algo(h, dy.desc(), filter_desc(DType::F32, FilterLayout::KCRS, {32, 32, 3, 3}),
                                        ConvDesc::conv2d(1, 1, 1, 1, 1, 1, 1, ConvMode::CONVOLUTION),
                                        make_desc(DType::F32, c.x_dims, Layout::CHANNELS_FIRST),
                                        ConvPreference::PREFER_FASTEST, 0, &inner));
    size_t exact_bytes = 0, approx_bytes = 0;
    for (ConvMath math : {ConvMath::EXACT, ConvMath::ALLOW_APPROXIMATE}) {
      CAPTURE(static_cast<int>(math));
      const ConvDesc conv = conv_desc(c.p).with_math(math);
      HostTensor dx(make_desc(DType::F32, c.x_dims, Layout::CHANNELS_FIRST));
      dx.poison();
      const HostTensor before = dx;
      size_t bytes = 0;
      REQUIRE_OK(conv_backward_data_workspace_size(h, wd, dy.desc(), conv, dx.desc(),
                                                   ConvBwdDataAlgo::TRANSPOSED_FORWARD, &bytes));
      (math == ConvMath::EXACT ? exact_bytes : approx_bytes) = bytes;
      HostTensor ws(TensorDesc::packed(DType::F32, {static_cast<int64_t>(bytes / 4 + 1)}));
      Staging st(h);
      const void* wp = st.in(w);
      const void* dyp = st.in(dy);
      void* dxp = st.out(dx);
      void* wsp = st.out(ws);
      REQUIRE_OK(conv_backward_data(h, 1.f, wd, wp, dy.desc(), dyp, conv, ConvBwdDataAlgo::TRANSPOSED_FORWARD, wsp,
                                    bytes, 0.f, dx.desc(), dxp));
      st.finish();
      check_output(dx, before, want, math == ConvMath::EXACT ? tol_for(DType::F32) : 5e-5);
    }
    if (h.backend() == Backend::CUDA && inner == ConvAlgo::WINOGRAD) CHECK(approx_bytes != exact_bytes);
    if (h.backend() == Backend::CPU) CHECK(approx_bytes == exact_bytes);
  }
}

TEST_CASE("conv_backward_data with an algorithm: GATHER, and what TRANSPOSED_FORWARD refuses") {
  const Handle h = Handle::cpu();
  const TensorDesc dx = TensorDesc::nchw(DType::F32, 1, 2, 5, 5);
  const FilterDesc w = FilterDesc::kcrs(DType::F32, 3, 2, 3, 3);
  size_t bytes = 1;
  // Strides of more than 64 phases: only GATHER.
  const ConvDesc strided = ConvDesc::conv2d(1, 1, 2, 2);
  const TensorDesc dy2 = TensorDesc::nchw(DType::F32, 1, 3, 3, 3);
  const Status many = conv_backward_data_workspace_size(h, w, TensorDesc::nchw(DType::F32, 1, 3, 1, 1),
                                                        ConvDesc::conv2d(1, 1, 9, 8), dx,
                                                        ConvBwdDataAlgo::TRANSPOSED_FORWARD, &bytes);
  CHECK_STATUS(many, StatusCode::NOT_SUPPORTED);
  CHECK(many.message().find("gather") != std::string::npos);
  REQUIRE_OK(conv_backward_data_workspace_size(h, w, dy2, strided, dx, ConvBwdDataAlgo::GATHER, &bytes));
  CHECK(bytes == 0);
  // dy's dims must be the convolution's of dx.
  CHECK_STATUS(conv_backward_data_workspace_size(h, w, TensorDesc::nchw(DType::F32, 1, 3, 4, 3), strided, dx,
                                                 ConvBwdDataAlgo::TRANSPOSED_FORWARD, &bytes),
               StatusCode::BAD_PARAM);
  // GATHER through the algorithm entry point is conv_backward_data.
  std::vector<float> wv(54, 0.5f), dyv(27, 1.f), a(50, 0.f), b(50, 0.f);
  REQUIRE_OK(conv_backward_data(h, 1.f, w, wv.data(), dy2, dyv.data(), strided, ConvBwdDataAlgo::GATHER, nullptr, 0,
                                0.f, dx, a.data()));
  REQUIRE_OK(conv_backward_data(h, 1.f, w, wv.data(), dy2, dyv.data(), strided, 0.f, dx, b.data()));
  CHECK(a == b);
  CHECK(a[6] != 0.f);
  // TRANSPOSED_FORWARD without its workspace.
  const ConvDesc same = ConvDesc::conv2d(1, 1);
  const TensorDesc dy1 = TensorDesc::nchw(DType::F32, 1, 3, 5, 5);
  std::vector<float> dy1v(75, 1.f);
  CHECK_STATUS(conv_backward_data(h, 1.f, w, wv.data(), dy1, dy1v.data(), same, ConvBwdDataAlgo::TRANSPOSED_FORWARD,
                                  nullptr, 0, 0.f, dx, a.data()),
               StatusCode::BAD_PARAM);
}
