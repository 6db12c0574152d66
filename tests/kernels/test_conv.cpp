// Convolution forward on every backend (CPU always, CUDA when a device is present) against the
// float64 reference: one test case per algorithm, each asserting exactly which problems the
// backend claims for it (so nothing is skipped silently) and checking every claimed one; the
// fused routine; algorithm choice; workspace queries; invalid input.
#include <algorithm>
#include <cstring>
#include <limits>
#include <cstdlib>
#include <string>

#include "../../kernels/common/fast_div.h"
#include "kernels/util.h"
#include "reference/activation.h"
#include "reference/conv.h"

using namespace jet;
using namespace jet::test;

namespace {

struct ConvCase {
  const char* name;
  std::vector<int64_t> x_dims, w_dims;  // x: N, C, spatial; w: K, C / groups, window
  ref::ConvParams p;
};

ConvCase make_case(const char* name, std::vector<int64_t> x, std::vector<int64_t> w,
                   std::vector<int64_t> pad_begin, std::vector<int64_t> pad_end,
                   std::vector<int64_t> stride, std::vector<int64_t> dilation, int64_t groups,
                   bool flip) {
  ConvCase c;
  c.name = name;
  c.x_dims = std::move(x);
  c.w_dims = std::move(w);
  c.p.pad_begin = std::move(pad_begin);
  c.p.pad_end = std::move(pad_end);
  c.p.stride = std::move(stride);
  c.p.dilation = std::move(dilation);
  c.p.groups = groups;
  c.p.flip = flip;
  return c;
}

ConvDesc conv_desc(const ConvCase& c) {
  return ConvDesc::make(static_cast<int>(c.x_dims.size()) - 2, c.p.pad_begin.data(),
                        c.p.pad_end.data(), c.p.stride.data(), c.p.dilation.data(), c.p.groups,
                        c.p.flip ? ConvMode::CONVOLUTION : ConvMode::CROSS_CORRELATION);
}

FilterDesc filter_desc(DType t, FilterLayout layout, const std::vector<int64_t>& dims) {
  return FilterDesc::make(t, layout, static_cast<int>(dims.size()), dims.data());
}

bool is_cuda(const Handle& h) { return h.backend() == Backend::CUDA; }

// Whether `h` claims `algo` for the problem: the CPU backend has the four GEMM-family and direct
// algorithms for every problem; CUDA has those plus WINOGRAD for 2D 3x3 filters with stride 1 and
// dilation 1 (any groups, pads, layouts, modes); FFT is reserved.
bool claims(const Handle& h, ConvAlgo algo, const ConvCase& c) {
  switch (algo) {
    case ConvAlgo::DIRECT:
    case ConvAlgo::IMPLICIT_GEMM:
    case ConvAlgo::IMPLICIT_PRECOMP_GEMM:
    case ConvAlgo::GEMM: return true;
    case ConvAlgo::WINOGRAD:
      return is_cuda(h) && c.x_dims.size() == 4 && c.w_dims[2] == 3 && c.w_dims[3] == 3 &&
             c.p.stride[0] == 1 && c.p.stride[1] == 1 && c.p.dilation[0] == 1 &&
             c.p.dilation[1] == 1;
    default: return false;
  }
}

// Asks the backend's workspace for algo; checks it agrees with claims(). True (with *bytes set)
// when the algorithm is claimed and should be run; otherwise checks that conv_forward refuses it
// too (NOT_SUPPORTED comes from the front end's workspace query before any pointer is touched,
// so the host pointers given here are never dereferenced on a CUDA handle).
bool claimed_workspace(const Handle& h, const ConvCase& c, ConvAlgo algo, const TensorDesc& x,
                       const FilterDesc& w, const ConvDesc& conv, const TensorDesc& y,
                       size_t* bytes) {
  const bool expect = claims(h, algo, c);
  *bytes = 0;
  const Status s = conv_forward_workspace_size(h, x, w, conv, y, algo, bytes);
  INFO(s.to_string());
  if (expect) {
    REQUIRE(s.ok());
    return true;
  }
  CHECK(s.code() == StatusCode::NOT_SUPPORTED);
  unsigned char dummy[16] = {};
  std::vector<unsigned char> ws(1 << 16);
  CHECK_STATUS(conv_forward(h, 1.f, x, dummy, w, dummy + 4, conv, algo, ws.data(), ws.size(), 0.f,
                            y, dummy + 8),
               StatusCode::NOT_SUPPORTED);
  return false;
}

// What one sweep of conv_forward covers besides the algorithm and the layouts.
struct SweepOpts {
  bool f32 = true, f16 = true;
  bool kcrs = true, krsc = true;
  bool plain = true;    // alpha 1, beta 0
  bool blended = true;  // alpha 0.5, beta 0.25
  int tactic = 0;       // ConvDesc::with_tactic (0: the heuristic's configuration)
  ConvMath math = ConvMath::EXACT;  // ConvDesc::with_math
  double f32_tol = 0;   // f32's tolerance when not tol_for(F32): an approximate tactic's
};

// The plain conv_forward sweep of one case with one algorithm on one backend: every dtype x
// layout combination x filter layout x (alpha, beta).
void sweep_conv_forward(const Handle& h, ConvAlgo algo, const ConvCase& c,
                        const std::vector<std::pair<Layout, Layout>>& xy_layouts,
                        const SweepOpts& opts = SweepOpts()) {
  const ConvDesc conv = conv_desc(c).with_tactic(opts.tactic).with_math(opts.math);
  const std::vector<int64_t> y_dims = ref::conv_output_dims(c.x_dims, c.w_dims, c.p);
  std::vector<DType> dtypes;
  if (opts.f32) dtypes.push_back(DType::F32);
  if (opts.f16) dtypes.push_back(DType::F16);
  std::vector<FilterLayout> filter_layouts;
  if (opts.kcrs) filter_layouts.push_back(FilterLayout::KCRS);
  if (opts.krsc) filter_layouts.push_back(FilterLayout::KRSC);
  std::vector<std::pair<float, float>> scalings;
  if (opts.plain) scalings.emplace_back(1.f, 0.f);
  if (opts.blended) scalings.emplace_back(0.5f, 0.25f);
  for (DType t : dtypes) {
    CAPTURE(backend_name(h));
    CAPTURE(c.name);
    CAPTURE(conv_algo_name(algo));
    CAPTURE(dtype_name(t));
    {
      // The claim does not depend on layouts: check it once per dtype, skip the data if refused.
      const FilterDesc wd = filter_desc(t, FilterLayout::KCRS, c.w_dims);
      size_t bytes = 0;
      if (!claimed_workspace(h, c, algo, make_desc(t, c.x_dims, Layout::CHANNELS_FIRST), wd, conv,
                             make_desc(t, y_dims, Layout::CHANNELS_FIRST), &bytes))
        continue;
    }
    std::vector<double> xv = random_values(t, c.x_dims);
    if (specials_turn()) plant_specials(&xv);  // NaN and +-inf in, as ONNX gives them out
    const std::vector<double> wv = random_values(t, c.w_dims);
    const std::vector<double> conv_ref = ref::conv_forward(xv, c.x_dims, wv, c.w_dims, c.p);
    for (const auto& xy : xy_layouts) {
      for (FilterLayout wl : filter_layouts) {
        for (const auto& scaling : scalings) {
          // Named copies: doctest's CAPTURE uses a lambda, which cannot capture a structured
          // binding before C++20.
          const float alpha = scaling.first, beta = scaling.second;
          CAPTURE(layout_name(xy.first));
          CAPTURE(layout_name(xy.second));
          CAPTURE(wl == FilterLayout::KCRS ? "KCRS" : "KRSC");
          CAPTURE(alpha);
          CAPTURE(beta);
          const FilterDesc wd = filter_desc(t, wl, c.w_dims);
          const HostTensor x = tensor_with(make_desc(t, c.x_dims, xy.first), xv);
          const HostTensor w = tensor_with(wd.as_tensor(), wv);
          HostTensor y(make_desc(t, y_dims, xy.second));
          if (beta == 0.f) y.poison(); else y.fill_random();
          const HostTensor before = y;
          size_t bytes = 0;
          REQUIRE(claimed_workspace(h, c, algo, x.desc(), wd, conv, y.desc(), &bytes));
          Staging st(h);
          const void* xp = st.in(x);
          const void* wp = st.in(w);
          void* yp = st.out(y);
          REQUIRE_OK(conv_forward(h, alpha, x.desc(), xp, wd, wp, conv, algo, st.scratch(bytes),
                                  bytes, beta, y.desc(), yp));
          st.finish();
          const double tol = t == DType::F32 && opts.f32_tol > 0 ? opts.f32_tol : tol_for(t);
          check_output(y, before, blend(conv_ref, alpha, beta, before.to_ref()), tol, -1.0,
                       algo == ConvAlgo::WINOGRAD ? InfRule::SPREAD_IN_TILE : InfRule::EXACT);
        }
      }
    }
  }
}

std::vector<std::pair<Layout, Layout>> all_xy_layouts() {
  std::vector<std::pair<Layout, Layout>> v;
  for (Layout lx : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED})
    for (Layout ly : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED})
      v.push_back({lx, ly});
  return v;
}

std::vector<ConvCase> small_cases() {
  return {
      make_case("2d 3x3 pad 1", {2, 3, 7, 7}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, false),
      make_case("2d 1x3 asymmetric pad, stride > kernel, conv mode", {1, 4, 13, 7}, {5, 4, 1, 3},
                {0, 2}, {1, 0}, {3, 4}, {1, 1}, 1, true),
      make_case("2d 3x2 dilated, asymmetric pad", {2, 2, 13, 13}, {3, 2, 3, 2}, {2, 1}, {1, 3},
                {1, 2}, {2, 3}, 1, false),
      make_case("2d 2 groups", {1, 6, 7, 5}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 2, false),
      make_case("2d depthwise stride 2, conv mode", {2, 5, 7, 7}, {5, 1, 3, 3}, {1, 1}, {1, 1},
                {2, 2}, {1, 1}, 5, true),
      make_case("2d depthwise multiplier 2", {1, 3, 7, 7}, {6, 1, 3, 3}, {1, 0}, {0, 1}, {1, 1},
                {1, 1}, 3, false),
      make_case("1d dilated stride 2, conv mode", {2, 3, 13}, {4, 3, 3}, {1}, {2}, {2}, {2}, 1, true),
      make_case("3d 2x3x1 stride 2 on H, conv mode", {1, 2, 3, 7, 5}, {3, 2, 2, 3, 1}, {1, 1, 0},
                {0, 1, 0}, {1, 2, 1}, {1, 1, 1}, 1, true),
      make_case("3d groups, dilated W", {2, 4, 3, 3, 3}, {4, 2, 1, 3, 3}, {0, 1, 2}, {0, 1, 1},
                {1, 1, 1}, {1, 1, 2}, 2, false),
      make_case("2d 1x1 (identity lowering)", {2, 8, 3, 7}, {13, 8, 1, 1}, {0, 0}, {0, 0}, {1, 1},
                {1, 1}, 1, false),
      make_case("2d 1x1 stride 2", {1, 7, 7, 7}, {3, 7, 1, 1}, {0, 0}, {0, 0}, {2, 2}, {1, 1}, 1,
                false),
      // Padding after only: the last windows lie past x's end (zeros), which a 1x1 lowering
      // without bounds tests must not read (conv_backward_data's TRANSPOSED_FORWARD phases).
      make_case("2d 1x1 padded after only, stride 2", {2, 5, 5, 4}, {6, 5, 1, 1}, {0, 0}, {2, 3},
                {2, 2}, {1, 1}, 1, false),
      make_case("2d 1x1 grouped (identity lowering)", {1, 6, 3, 3}, {9, 2, 1, 1}, {0, 0}, {0, 0},
                {1, 1}, {1, 1}, 3, false),
      make_case("all ones", {1, 1, 1, 1}, {1, 1, 1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}, 1, false),
      make_case("pad >= kernel", {1, 2, 3, 3}, {3, 2, 2, 2}, {3, 2}, {2, 3}, {1, 2}, {1, 1}, 1, true),
      make_case("1d 1x1 pad only", {3, 2, 1}, {7, 2, 1}, {2}, {1}, {1}, {1}, 1, false),
      // Winograd's tile edges (odd output sizes, asymmetric and large pads) and the CUDA
      // depthwise kernels' paths (channels-last vectors of 8, plane tiles with stride 1 and 2).
      make_case("2d 3x3 odd output, asymmetric pad, conv mode", {2, 4, 9, 11}, {6, 4, 3, 3},
                {2, 0}, {1, 1}, {1, 1}, {1, 1}, 1, true),
      make_case("2d 3x3 4 groups of 20 channels", {1, 80, 6, 5}, {8, 20, 3, 3}, {1, 1}, {1, 1},
                {1, 1}, {1, 1}, 4, false),
      make_case("2d 3x3 pad 3 (tiles entirely in the padding)", {1, 3, 2, 3}, {2, 3, 3, 3},
                {3, 1}, {2, 3}, {1, 1}, {1, 1}, 1, false),
      make_case("2d depthwise 16 channels, conv mode", {2, 16, 9, 13}, {16, 1, 3, 3}, {1, 1},
                {1, 1}, {1, 1}, {1, 1}, 16, true),
      make_case("2d depthwise stride 2, 13 columns out", {1, 8, 25, 27}, {8, 1, 3, 3}, {1, 1},
                {0, 1}, {2, 2}, {1, 1}, 8, false),
      make_case("2d depthwise dilated", {1, 8, 11, 30}, {8, 1, 3, 3}, {2, 2}, {2, 2}, {1, 1},
                {2, 2}, 8, false),
  };
}

// Shapes large enough to exercise the CUDA fast paths and their tiles' edges; the CPU backend's
// copies of these run in the other sections (their cost would only slow CI down).
std::vector<ConvCase> cuda_large_cases() {
  // Reduced (sanitizer runs): the first case at a quarter of its size (still several tiles).
  const std::vector<int64_t> first_x = reduced_tests() ? std::vector<int64_t>{1, 64, 16, 16}
                                                       : std::vector<int64_t>{2, 64, 32, 32};
  return {
      make_case(reduced_tests() ? "N=1 16x16 C=K=64 3x3" : "N=2 32x32 C=K=64 3x3", first_x, {64, 64, 3, 3},
                {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, false),
      make_case("MobileNetV2 dw 112x112x32 s1", {1, 32, 112, 112}, {32, 1, 3, 3}, {1, 1}, {1, 1},
                {1, 1}, {1, 1}, 32, false),
      make_case("MobileNetV2 dw 56x56x144 s2", {1, 144, 56, 56}, {144, 1, 3, 3}, {1, 1}, {1, 1},
                {2, 2}, {1, 1}, 144, false),
      make_case("MobileNetV2 dw 14x14x576 s1", {1, 576, 14, 14}, {576, 1, 3, 3}, {1, 1}, {1, 1},
                {1, 1}, {1, 1}, 576, false),
      make_case("MobileNetV2 dw 7x7x960 s1", {1, 960, 7, 7}, {960, 1, 3, 3}, {1, 1}, {1, 1},
                {1, 1}, {1, 1}, 960, false),
      make_case("3x3 C=36 K=70 groups 2, 19x23", {3, 36, 19, 23}, {70, 18, 3, 3}, {1, 0}, {0, 1},
                {1, 1}, {1, 1}, 2, true),
  };
}

// Every section of the conv_forward suite for one algorithm, on every backend.
void conv_forward_suite(ConvAlgo algo) {
  for (const Handle& h : test_handles()) {
    // Reduced (sanitizer runs): two layout pairs instead of all nine for the small cases.
    const auto layouts = reduced_tests() ? std::vector<std::pair<Layout, Layout>>{
                                               {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST},
                                               {Layout::PADDED, Layout::CHANNELS_FIRST}}
                                         : all_xy_layouts();
    for (const ConvCase& c : small_cases()) sweep_conv_forward(h, algo, c, layouts);

    // Reversed layouts (W slowest).
    const std::vector<std::pair<Layout, Layout>> reversed = {
        {Layout::REVERSED, Layout::CHANNELS_FIRST}, {Layout::CHANNELS_LAST, Layout::REVERSED}};
    const auto cases = small_cases();
    for (size_t i : {size_t(0), size_t(1), size_t(3), size_t(7), size_t(9), size_t(18)})
      sweep_conv_forward(h, algo, cases[i], reversed);

    // Problems larger than the CPU GEMM's cache blocks. Reduced (sanitizer runs): CPU only, they
    // are there for the CPU's blocking; the CUDA tiles' edges are covered by cuda_large_cases.
    const bool blocked_cases = !(reduced_tests() && is_cuda(h));
    // depth 40 * 9 = 360 > KC, 150 filters > NC, 2 * 13 * 13 = 338 rows > MC.
    const std::vector<std::pair<Layout, Layout>> two = {
        {Layout::CHANNELS_FIRST, Layout::CHANNELS_FIRST}, {Layout::CHANNELS_LAST, Layout::PADDED}};
    if (blocked_cases) {
      sweep_conv_forward(h, algo, make_case("blocked 3x3", {2, 40, 13, 13}, {150, 40, 3, 3}, {1, 1},
                                            {1, 1}, {1, 1}, {1, 1}, 1, false),
                         two);
      // 64 * 9 = 576 taps: GEMM lowers 2 MiB of rows at a time, 840 of the 1600 rows.
      sweep_conv_forward(h, algo, make_case("GEMM im2col in two chunks", {1, 64, 40, 40},
                                            {8, 64, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, false),
                         two);
      sweep_conv_forward(h, algo, make_case("blocked grouped 1x1", {1, 300, 9, 7}, {140, 150, 1, 1},
                                            {0, 0}, {0, 0}, {1, 1}, {1, 1}, 2, false),
                         two);
    }

    if (is_cuda(h)) {
      SweepOpts opts;  // NHWC with KRSC filters, plain scaling
      opts.blended = false;
      opts.kcrs = false;
      const std::vector<std::pair<Layout, Layout>> nhwc = {
          {Layout::CHANNELS_LAST, Layout::CHANNELS_LAST}};
      const std::vector<std::pair<Layout, Layout>> nchw = {
          {Layout::CHANNELS_FIRST, Layout::CHANNELS_FIRST}};
      for (const ConvCase& c : cuda_large_cases()) {
        sweep_conv_forward(h, algo, c, nhwc, opts);
        if (reduced_tests()) continue;  // sanitizer runs: the NHWC fast paths only
        SweepOpts o2;  // NCHW with KCRS filters, blended into y
        o2.plain = false;
        o2.krsc = false;
        sweep_conv_forward(h, algo, c, nchw, o2);
      }
    }
  }
}

enum class Residual { NONE, SEPARATE, ALIAS_Y };

// conv_bias_act_forward for one algorithm on every backend: bias, residual (z separate or
// aliasing y) and activation, over layouts and filter layouts.
void fused_suite(ConvAlgo algo) {
  const std::vector<ActivationDesc> acts = {
      ActivationDesc::identity(),        ActivationDesc::relu(),    ActivationDesc::leaky_relu(0.1f),
      ActivationDesc::silu(),            ActivationDesc::clip(-0.3f, 0.6f), ActivationDesc::sigmoid(),
      ActivationDesc::elu(0.7f),         ActivationDesc::hard_swish(), ActivationDesc::mish(),
      // exp (detection heads' box decoding), sin (its out-of-line call in device epilogues).
      ActivationDesc::of(ActivationMode::EXP), ActivationDesc::of(ActivationMode::SIN)};
  const std::vector<ConvCase> cases = {
      make_case("2d groups, asymmetric pad", {2, 4, 7, 5}, {6, 2, 3, 2}, {1, 0}, {0, 1}, {1, 2},
                {1, 1}, 2, false),
      make_case("1d dilated conv mode", {1, 3, 13}, {5, 3, 3}, {2}, {1}, {1}, {2}, 1, true),
      make_case("3d", {1, 2, 3, 5, 3}, {3, 2, 2, 3, 3}, {1, 1, 1}, {0, 1, 1}, {1, 1, 2},
                {1, 1, 1}, 1, false),
      make_case("2d 1x1", {1, 5, 3, 7}, {7, 5, 1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}, 1, false),
      make_case("2d 3x3 groups, odd output", {1, 6, 5, 7}, {4, 3, 3, 3}, {1, 0}, {1, 1}, {1, 1},
                {1, 1}, 2, true),
      make_case("2d depthwise 3x3", {1, 8, 6, 13}, {8, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 8,
                false),
  };
  const float alpha1 = 0.7f, alpha2 = 0.4f;
  for (const Handle& h : test_handles()) {
    for (const ConvCase& c : cases) {
      const ConvDesc conv = conv_desc(c);
      const std::vector<int64_t> y_dims = ref::conv_output_dims(c.x_dims, c.w_dims, c.p);
      std::vector<int64_t> bias_dims(y_dims.size(), 1);
      bias_dims[1] = y_dims[1];
      for (DType t : {DType::F32, DType::F16}) {
        CAPTURE(backend_name(h));
        CAPTURE(c.name);
        CAPTURE(conv_algo_name(algo));
        CAPTURE(dtype_name(t));
        {
          size_t bytes = 0;
          if (!claimed_workspace(h, c, algo, make_desc(t, c.x_dims, Layout::CHANNELS_FIRST),
                                 filter_desc(t, FilterLayout::KCRS, c.w_dims), conv,
                                 make_desc(t, y_dims, Layout::CHANNELS_FIRST), &bytes))
            continue;
        }
        std::vector<double> xv = random_values(t, c.x_dims);
        if (specials_turn()) plant_specials(&xv);  // NaN and +-inf through the fused epilogue too
        const std::vector<double> wv = random_values(t, c.w_dims);
        const std::vector<double> conv_ref = ref::conv_forward(xv, c.x_dims, wv, c.w_dims, c.p);
        for (size_t ai = 0; ai < acts.size(); ++ai) {
          for (bool with_bias : {false, true}) {
            for (Residual res : {Residual::NONE, Residual::SEPARATE, Residual::ALIAS_Y}) {
              // Reduced (sanitizer runs): a third of the combinations, every activation and
              // every residual kind still among them.
              if (reduced_tests() && (ai + (with_bias ? 1 : 0) + static_cast<size_t>(res)) % 3 != 0) continue;
              const ActivationDesc& act = acts[ai];
              CAPTURE(activation_mode_name(act.mode));
              CAPTURE(with_bias);
              CAPTURE(static_cast<int>(res));
              // Vary the layouts along the sweep.
              const Layout lx = ai % 3 == 0 ? Layout::CHANNELS_FIRST
                                            : (ai % 3 == 1 ? Layout::CHANNELS_LAST : Layout::PADDED);
              const Layout ly = ai % 2 == 0 ? Layout::PADDED : Layout::CHANNELS_LAST;
              const FilterLayout wl = ai % 2 == 0 ? FilterLayout::KRSC : FilterLayout::KCRS;
              const FilterDesc wd = filter_desc(t, wl, c.w_dims);
              const HostTensor x = tensor_with(make_desc(t, c.x_dims, lx), xv);
              const HostTensor w = tensor_with(wd.as_tensor(), wv);
              HostTensor bias(make_desc(t, bias_dims, Layout::PADDED));
              bias.fill_random();
              HostTensor y(make_desc(t, y_dims, ly));
              HostTensor z(make_desc(t, y_dims, Layout::CHANNELS_FIRST));
              z.fill_random();
              if (res == Residual::ALIAS_Y) y.fill_random(); else y.poison();
              const HostTensor before = y;
              std::vector<double> z_ref;
              if (res == Residual::SEPARATE) z_ref = z.to_ref();
              if (res == Residual::ALIAS_Y) z_ref = before.to_ref();
              size_t bytes = 0;
              REQUIRE(claimed_workspace(h, c, algo, x.desc(), wd, conv, y.desc(), &bytes));
              Staging st(h);
              const void* xp = st.in(x);
              const void* wp = st.in(w);
              const void* bp = st.in(bias);
              const void* zp = res == Residual::SEPARATE ? st.in(z) : nullptr;
              void* yp = st.out(y);
              if (res == Residual::ALIAS_Y) zp = yp;
              const TensorDesc& z_desc = res == Residual::SEPARATE ? z.desc() : y.desc();
              REQUIRE_OK(conv_bias_act_forward(h, alpha1, x.desc(), xp, wd, wp, conv, algo,
                                               st.scratch(bytes), bytes, alpha2, z_desc, zp,
                                               bias.desc(), with_bias ? bp : nullptr, act,
                                               y.desc(), yp));
              st.finish();
              const std::vector<double> ref =
                  ref::conv_bias_act(conv_ref, y_dims, alpha1, z_ref, alpha2,
                                     with_bias ? bias.to_ref() : std::vector<double>(), act);
              check_output(y, before, ref, tol_for(t), -1.0,
                           algo == ConvAlgo::WINOGRAD ? InfRule::SPREAD_IN_TILE : InfRule::EXACT);
            }
          }
        }
      }
    }
  }
}

}  // namespace

// One test case per algorithm so that a failure names its algorithm (doctest -tc filters).
// The CUDA GEMM loaders' index math divides output rows by the extents with FastDiv (the same
// header on host and device): exact against / and % for every n < 2^31, here on the divisors
// and dividends where the round-up method could go wrong (powers of two and their neighbours,
// the largest n) and on random ones.
TEST_CASE("FastDiv matches integer division") {
  std::vector<int> divisors;
  for (int d = 1; d <= 300; ++d) divisors.push_back(d);
  for (int b = 9; b <= 30; ++b)
    for (int off = -1; off <= 1; ++off) divisors.push_back((1 << b) + off);
  divisors.push_back(std::numeric_limits<int>::max());
  std::uniform_int_distribution<int> any_n(0, std::numeric_limits<int>::max());
  std::uniform_int_distribution<int> any_d(1, std::numeric_limits<int>::max());
  for (int i = 0; i < 200; ++i) divisors.push_back(any_d(rng()));
  for (int d : divisors) {
    CAPTURE(d);
    const jet::FastDiv f = jet::FastDiv::make(d);
    std::vector<int> ns = {0, 1, d - 1, d, std::numeric_limits<int>::max(),
                           std::numeric_limits<int>::max() - 1};
    if (d < std::numeric_limits<int>::max()) ns.push_back(d + 1);
    for (int k = 1; k < 8; ++k) ns.push_back(static_cast<int>(std::min<int64_t>(
                                     int64_t(d) * (int64_t(1) << (k * 4)) - 1,
                                     std::numeric_limits<int>::max())));
    for (int i = 0; i < 200; ++i) ns.push_back(any_n(rng()));
    int wrong = 0, first_wrong = -1;
    for (int n : ns) {
      int rem = -1;
      const int q = f.divmod(n, &rem);
      if (q != n / d || rem != n % d) {
        if (wrong++ == 0) first_wrong = n;
      }
    }
    CAPTURE(first_wrong);
    CHECK(wrong == 0);
    // div(): 64-bit operands fall back to a 64-bit division.
    for (int64_t n : {int64_t(1) << 31, (int64_t(1) << 40) + 12345, int64_t(1) << 62})
      CHECK(f.div(n) == n / d);
  }
}

TEST_CASE("conv_forward DIRECT") {
  conv_forward_suite(ConvAlgo::DIRECT);
  fused_suite(ConvAlgo::DIRECT);
}

TEST_CASE("conv_forward IMPLICIT_GEMM") {
  conv_forward_suite(ConvAlgo::IMPLICIT_GEMM);
  fused_suite(ConvAlgo::IMPLICIT_GEMM);
}

TEST_CASE("conv_forward IMPLICIT_PRECOMP_GEMM") {
  conv_forward_suite(ConvAlgo::IMPLICIT_PRECOMP_GEMM);
  fused_suite(ConvAlgo::IMPLICIT_PRECOMP_GEMM);
}

TEST_CASE("conv_forward GEMM") {
  conv_forward_suite(ConvAlgo::GEMM);
  fused_suite(ConvAlgo::GEMM);
}

// Every tactic of the GEMM family (tensor-core tile x split-K factor) run directly, not only the
// heuristic's, on channels-last problems (f32 also channels-first) with KRSC filters: depths with a partial last tile
// and enough depth tiles (48 of 64, the split granule) for every split factor, odd M and N against every tile, groups, a
// 3D problem, the smallest channel count (8). Odd tactics run the fused routine (bias, residual
// aliasing y, ReLU), even ones conv_forward with alpha/beta. The CPU backend has no tactics.
// Reduced (sanitizer runs): every tile, each with split-K factors 1, 2 and one more that rotates
// over the cases and tiles.
namespace {
constexpr int kMmaTiles = 17;  // kernels/cuda/gemm_mma.cuh MmaTileId::COUNT
// MmaTileId::T128x128H .. T128x64H: the Hopper tiles, run where hopper_mma_available().
constexpr int kHopperTiles = 4;
bool is_hopper_tile(int tile) { return tile >= 13 && tile < 13 + kHopperTiles; }
constexpr int kF32Tiles = 6;  // kernels/cuda/gemm_core.cuh F32TileId::COUNT
// F32TileId::T128x128X3 .. T64x64X3: f32 on tensor cores (3xTF32), run on sm_80+.
constexpr int kF32X3Tiles = 3;
bool is_f32x3_tile(int tile) { return tile >= 3 && tile < 3 + kF32X3Tiles; }

// x in `x_layout`; sm72: on CUDA handles limited to sm_72's code paths (Xavier's register-staged
// f32 kernel) instead of the test handles.
void check_every_tactic(DType t, Layout x_layout, bool sm72) {
  const std::vector<ConvCase> cases = {
      make_case("3x3 C=336 K=40 9x11 (depth 3024)", {1, 336, 9, 11}, {40, 336, 3, 3}, {1, 1},
                {1, 1}, {1, 1}, {1, 1}, 1, false),
      make_case("1x1 C=3064 K=72 5x7 (depth 3064)", {1, 3064, 5, 7}, {72, 3064, 1, 1}, {0, 0},
                {0, 0}, {1, 1}, {1, 1}, 1, false),
      make_case("3x3 stride 2 groups 2 conv mode, asymmetric pad", {2, 32, 13, 10},
                {24, 16, 3, 3}, {1, 0}, {0, 1}, {2, 2}, {1, 1}, 2, true),
      make_case("5x3 dilated C=8 K=16", {1, 8, 17, 9}, {16, 8, 5, 3}, {4, 2}, {4, 2}, {1, 1},
                {2, 1}, 1, false),
      make_case("3d 3x3x3 C=16 K=8", {1, 16, 5, 6, 7}, {8, 16, 3, 3, 3}, {1, 1, 1}, {1, 1, 1},
                {1, 1, 1}, {1, 1, 1}, 1, false),
      // C % 8 != 0: f16 IMPLICIT_PRECOMP_GEMM pads the channels to 8 in its workspace.
      make_case("7x7 stride 2 C=3 K=24 (the stem), conv mode", {2, 3, 23, 19}, {24, 3, 7, 7},
                {3, 3}, {3, 2}, {2, 2}, {1, 1}, 1, true),
      make_case("3x3 C=12 K=8", {1, 12, 9, 10}, {8, 12, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1,
                false),
      // One output row (M = 1): a squeeze-and-excitation layer, 1x1 on a 1x1 map. GEMM reads x
      // as a single row, which must still take the tensor-core engine.
      make_case("1x1 on a 1x1 map C=96 K=24 (M = 1)", {1, 96, 1, 1}, {24, 96, 1, 1}, {0, 0},
                {0, 0}, {1, 1}, {1, 1}, 1, false),
      // M = 323 and N = 264: more than two blocks each way on every tile, the last partial.
      make_case("3x3 C=32 K=264 19x17", {1, 32, 19, 17}, {264, 32, 3, 3}, {1, 1}, {1, 1},
                {1, 1}, {1, 1}, 1, false),
  };
  const ConvAlgo algos[] = {ConvAlgo::IMPLICIT_GEMM, ConvAlgo::IMPLICIT_PRECOMP_GEMM,
                            ConvAlgo::GEMM};
  // f32 runs on sm_80+ in the pipelined kernel (cp.async); a handle limited to sm_72's code paths
  // runs Xavier's register-staged one on the same GPU. x channels-last and channels-first: the
  // operand loaders walk the depth or the pixels.
  std::vector<Handle> handles;
  for (const Handle& h : test_handles()) {
    if (!sm72) {
      handles.push_back(h);
    } else if (is_cuda(h) && h.compute_capability() > 72) {
      Handle limited = h;
      limited.limit_code_paths(72);
      handles.push_back(limited);
    }
  }
  for (const Handle& h : handles) {
    CAPTURE(backend_name(h));
    CAPTURE(h.compute_capability());
    CAPTURE(dtype_name(t));
    CAPTURE(static_cast<int>(x_layout));
    for (size_t ci = 0; ci < cases.size(); ++ci) {
      const ConvCase& c = cases[ci];
      CAPTURE(c.name);
      const ConvDesc conv = conv_desc(c);
      const std::vector<int64_t> y_dims = ref::conv_output_dims(c.x_dims, c.w_dims, c.p);
      std::vector<int64_t> bias_dims(y_dims.size(), 1);
      bias_dims[1] = y_dims[1];
      const FilterDesc wd = filter_desc(t, FilterLayout::KRSC, c.w_dims);
      const TensorDesc xd = make_desc(t, c.x_dims, x_layout);
      const TensorDesc yd = make_desc(t, y_dims, x_layout);
      const std::vector<double> xv = random_values(t, c.x_dims);
      const std::vector<double> wv = random_values(t, c.w_dims);
      const std::vector<double> conv_ref = ref::conv_forward(xv, c.x_dims, wv, c.w_dims, c.p);
      const HostTensor x = tensor_with(xd, xv);
      const HostTensor w = tensor_with(wd.as_tensor(), wv);
      HostTensor bias(make_desc(t, bias_dims, Layout::PADDED));
      bias.fill_random();
      for (ConvAlgo algo : algos) {
        CAPTURE(conv_algo_name(algo));
        // Tiles of the engine: f32 on the FMA engine; f16 on the tensor-core core (sm_80+), for
        // channel counts that are not a multiple of 8 only with IMPLICIT_PRECOMP_GEMM's padding.
        int tiles = 0;
        if (is_cuda(h) && t == DType::F32) tiles = kF32Tiles;
        if (is_cuda(h) && t == DType::F16 && h.compute_capability() >= 80)
          tiles = c.w_dims[1] % 8 == 0 || algo == ConvAlgo::IMPLICIT_PRECOMP_GEMM ? kMmaTiles : 0;
        int count = -1;
        REQUIRE_OK(conv_forward_tactic_count(h, xd, wd, conv, yd, algo, &count));
        if (tiles == 0) {
          CHECK(count == 0);
          size_t bytes = 0;
          CHECK_STATUS(conv_forward_workspace_size(h, xd, wd, conv.with_tactic(1), yd, algo,
                                                   &bytes),
                       StatusCode::NOT_SUPPORTED);
          continue;
        }
        REQUIRE(count == tiles * 8);  // tiles x 8 split-K factors
        // The Hopper tiles are in the count everywhere and refused where they cannot run.
        const bool hopper = t == DType::F16 && hopper_mma_available(h);
        // gpu-check builds sm_90a code and says so: there an sm_90 GPU must run them.
        if (t == DType::F16 && is_cuda(h) && h.compute_capability() == 90 &&
            std::getenv("JET_EXPECT_HOPPER_TILES") != nullptr)
          CHECK(hopper);
        // The X3 tiles likewise: in the count, refused where sm_80's mma cannot run.
        const bool x3 = t == DType::F32 && is_cuda(h) && !sm72 && h.compute_capability() >= 80;
        int tiles_run = t == DType::F16 && !hopper ? tiles - kHopperTiles : tiles;
        if (t == DType::F32 && !x3) tiles_run -= kF32X3Tiles;
        int ran = 0, split_ran = 0, tried = 0;
        for (int tactic = 1; tactic <= count; ++tactic) {
          CAPTURE(tactic);
          const int tile = (tactic - 1) / 8, factor = (tactic - 1) % 8;
          if (reduced_tests() && factor > 1 &&
              factor != 2 + static_cast<int>(ci + static_cast<size_t>(tile)) % 6)
            continue;
          ++tried;
          const ConvDesc ct = conv.with_tactic(tactic);
          size_t bytes = 0;
          const Status ws = conv_forward_workspace_size(h, xd, wd, ct, yd, algo, &bytes);
          // A tactic is refused only for a split-K factor: on IMPLICIT_GEMM (no workspace) or
          // one that leaves splits without depth. tile (t - 1) / 8, factor (t - 1) % 8.
          if (!ws.ok()) {
            INFO(ws.to_string());
            CHECK(ws.code() == StatusCode::NOT_SUPPORTED);
            if ((t == DType::F16 && is_hopper_tile(tile) && !hopper) ||
                (t == DType::F32 && is_f32x3_tile(tile) && !x3)) {
              --tried;
              continue;
            }
            CHECK((tactic - 1) % 8 != 0);
            continue;
          }
          ++ran;
          if ((tactic - 1) % 8 != 0) ++split_ran;
          const bool fused = tactic % 2 == 1;
          const float alpha = fused ? 0.7f : 0.5f, beta = tactic % 4 == 0 ? 0.f : 0.25f;
          HostTensor y(yd);
          y.fill_random();  // the residual (fused) or the blended y
          if (!fused && beta == 0.f) y.poison();  // must not be read
          const HostTensor before = y;
          Staging st(h);
          const void* xp = st.in(x);
          const void* wp = st.in(w);
          const void* bp = st.in(bias);
          void* yp = st.out(y);
          std::vector<double> ref;
          if (fused) {
            REQUIRE_OK(conv_bias_act_forward(h, alpha, xd, xp, wd, wp, ct, algo,
                                             st.scratch(bytes), bytes, 0.4f, yd, yp, bias.desc(),
                                             bp, ActivationDesc::relu(), yd, yp));
            ref = ref::conv_bias_act(conv_ref, y_dims, alpha, before.to_ref(), 0.4f,
                                     bias.to_ref(), ActivationDesc::relu());
          } else {
            REQUIRE_OK(conv_forward(h, alpha, xd, xp, wd, wp, ct, algo, st.scratch(bytes), bytes,
                                    beta, yd, yp));
            ref = blend(conv_ref, alpha, beta, before.to_ref());
          }
          st.finish();
          check_output(y, before, ref, tol_for(t));
        }
        // Every tile ran without split-K; with workspace some factors ran (2 splits always: every
        // depth here is over 64), and on the depths of 48 tiles (3024, 3064) every one tried.
        CHECK(ran - split_ran == tiles_run);
        if (algo == ConvAlgo::IMPLICIT_GEMM) {
          CHECK(split_ran == 0);
        } else {
          CHECK(split_ran >= tiles_run);
          if (std::string(c.name).find("(depth 30") != std::string::npos) CHECK(ran == tried);
        }
      }
    }
  }
}
}  // namespace

// Several test cases: gpu-check's sanitizer step runs test cases as separate jobs, and racecheck
// of the whole f32 sweep outran its 400 s (2026-11-27). f32 takes both layout families of x and
// also sm_72's code paths; f16 channels-last x. No commas in the names: doctest's -tc filter
// splits at them.
TEST_CASE("conv_forward tactics: every tile and split-K factor (f16)") {
  check_every_tactic(DType::F16, Layout::CHANNELS_LAST, false);
}
TEST_CASE("conv_forward tactics: every tile and split-K factor (f32 channels-last)") {
  check_every_tactic(DType::F32, Layout::CHANNELS_LAST, false);
}
TEST_CASE("conv_forward tactics: every tile and split-K factor (f32 channels-first)") {
  check_every_tactic(DType::F32, Layout::CHANNELS_FIRST, false);
}
TEST_CASE("conv_forward tactics: every tile and split-K factor (f32 channels-last on sm_72 paths)") {
  check_every_tactic(DType::F32, Layout::CHANNELS_LAST, true);
}
TEST_CASE("conv_forward tactics: every tile and split-K factor (f32 channels-first on sm_72 paths)") {
  check_every_tactic(DType::F32, Layout::CHANNELS_FIRST, true);
}


TEST_CASE("conv_forward WINOGRAD") {
  conv_forward_suite(ConvAlgo::WINOGRAD);
  fused_suite(ConvAlgo::WINOGRAD);
}

// WINOGRAD's tactics (CUDA: F(2x2, 3x3) with the transformed GEMM on 64 x 64 or 128 x 128 tiles,
// then F(4x4, 3x3) with each, then both with 64 x 128 tiles) each run directly,
// on both layout families, with more than one block of each tile each way and partial edges
// (K = 130 over 128 and 64 rows; 512 F(2x2) and 128 F(4x4) tiles of the 32 x 32 maps, partial edge
// tiles on the 19 x 23 one), groups, depth not a multiple of the 8- and 16-deep steps, a flipped
// filter.
TEST_CASE("conv_forward WINOGRAD tactics: each GEMM tile") {
  const std::vector<ConvCase> cases = {
      make_case("N=2 32x32 C=20 K=130 3x3", {2, 20, 32, 32}, {130, 20, 3, 3}, {1, 1}, {1, 1},
                {1, 1}, {1, 1}, 1, false),
      make_case("3x3 C=36 K=70 groups 2, 19x23", {3, 36, 19, 23}, {70, 18, 3, 3}, {1, 0}, {0, 1},
                {1, 1}, {1, 1}, 2, true),
  };
  const std::vector<std::pair<Layout, Layout>> layouts = {
      {Layout::CHANNELS_FIRST, Layout::CHANNELS_FIRST}, {Layout::CHANNELS_LAST, Layout::CHANNELS_LAST}};
  for (const Handle& h : test_handles()) {
    if (!is_cuda(h)) continue;  // the CPU backend has no WINOGRAD
    for (int tactic = 1; tactic <= 6; ++tactic) {
      CAPTURE(tactic);
      SweepOpts opts;
      opts.tactic = tactic;
      const bool f4x4 = tactic == 3 || tactic == 4 || tactic == 6;
      // F(4x4, 3x3) in f32: up to 1.6e-5 of (|y| + rms y) measured on these cases (H200), against
      // tol_for(F32) = 1e-5 for the exact algorithms (conv_forward_tactic_is_approximate).
      CHECK(conv_forward_tactic_is_approximate(ConvAlgo::WINOGRAD, tactic) == f4x4);
      if (f4x4) opts.f32_tol = 5e-5;
      for (const ConvCase& c : cases) sweep_conv_forward(h, ConvAlgo::WINOGRAD, c, layouts, opts);
    }
    // ConvMath::ALLOW_APPROXIMATE: tactic 0 runs F(4x4) (its workspace is tactic 3's, not
    // F(2x2)'s), within the approximate tactics' tolerance, and find measures those tactics.
    {
      SweepOpts opts;
      opts.math = ConvMath::ALLOW_APPROXIMATE;
      opts.f32_tol = 5e-5;
      for (const ConvCase& c : cases) sweep_conv_forward(h, ConvAlgo::WINOGRAD, c, layouts, opts);
      const ConvCase& c = cases[0];
      const std::vector<int64_t> y_dims = ref::conv_output_dims(c.x_dims, c.w_dims, c.p);
      const TensorDesc xd = make_desc(DType::F32, c.x_dims, Layout::CHANNELS_FIRST);
      const TensorDesc yd = make_desc(DType::F32, y_dims, Layout::CHANNELS_FIRST);
      const FilterDesc wd = filter_desc(DType::F32, FilterLayout::KCRS, c.w_dims);
      const ConvDesc approx = conv_desc(c).with_math(ConvMath::ALLOW_APPROXIMATE);
      size_t exact_bytes = 0, approx_bytes = 0, f4_bytes = 0;
      REQUIRE_OK(conv_forward_workspace_size(h, xd, wd, conv_desc(c), yd, ConvAlgo::WINOGRAD, &exact_bytes));
      REQUIRE_OK(conv_forward_workspace_size(h, xd, wd, approx, yd, ConvAlgo::WINOGRAD, &approx_bytes));
      REQUIRE_OK(conv_forward_workspace_size(h, xd, wd, conv_desc(c).with_tactic(3), yd, ConvAlgo::WINOGRAD,
                                             &f4_bytes));
      CHECK(approx_bytes == f4_bytes);
      CHECK(approx_bytes != exact_bytes);
      const HostTensor x = tensor_with(xd, random_values(DType::F32, c.x_dims));
      const HostTensor w = tensor_with(wd.as_tensor(), random_values(DType::F32, c.w_dims));
      HostTensor y(yd);
      std::vector<ConvAlgoPerf> results(64);
      int returned = 0;
      const size_t ws = std::max(exact_bytes, size_t(64) << 20);
      Staging st(h);
      REQUIRE_OK(find_conv_forward_algo(h, xd, st.in(x), wd, st.in(w), approx, yd, st.out(y), st.scratch(ws), ws,
                                        64, &returned, results.data()));
      st.finish();
      bool found = false;
      for (int i = 0; i < returned; ++i)
        found |= results[i].status.ok() && conv_forward_tactic_is_approximate(results[i].algo, results[i].tactic);
      CHECK(found);
    }
    // The count, and a tactic past it refused.
    const ConvCase& c = cases[0];
    const std::vector<int64_t> y_dims = ref::conv_output_dims(c.x_dims, c.w_dims, c.p);
    const TensorDesc xd = make_desc(DType::F32, c.x_dims, Layout::CHANNELS_FIRST);
    const TensorDesc yd = make_desc(DType::F32, y_dims, Layout::CHANNELS_FIRST);
    const FilterDesc wd = filter_desc(DType::F32, FilterLayout::KCRS, c.w_dims);
    int count = -1;
    REQUIRE_OK(conv_forward_tactic_count(h, xd, wd, conv_desc(c), yd, ConvAlgo::WINOGRAD, &count));
    CHECK(count == 6);
    size_t bytes = 0;
    CHECK_STATUS(conv_forward_workspace_size(h, xd, wd, conv_desc(c).with_tactic(7), yd, ConvAlgo::WINOGRAD,
                                             &bytes),
                 StatusCode::NOT_SUPPORTED);
  }
}

// F(4x4) with f32 NCHW outputs whose width is a multiple of 4 writes each tile row with one
// 16-byte access (conv_store4), epilogue included: tactics 4 and 6 (both GEMM tiles) with bias,
// a residual (separate, then aliasing y), ReLU and the unfused blend, against the float64
// reference; and a width of 14, whose edge tiles take the element path.
TEST_CASE("conv_bias_act_forward WINOGRAD F(4x4): 16-byte output rows, epilogue included") {
  const std::vector<ConvCase> cases = {
      make_case("N=2 C=12 K=20 16x24", {2, 12, 16, 24}, {20, 12, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, false),
      make_case("N=1 C=8 K=6 10x14", {1, 8, 10, 14}, {6, 8, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, true),
  };
  for (const Handle& h : test_handles()) {
    if (!is_cuda(h)) continue;  // the CPU backend has no WINOGRAD
    for (const ConvCase& c : cases) {
      for (int tactic : {4, 6}) {
        const ConvDesc conv = conv_desc(c).with_tactic(tactic);
        const std::vector<int64_t> y_dims = ref::conv_output_dims(c.x_dims, c.w_dims, c.p);
        std::vector<int64_t> bias_dims(y_dims.size(), 1);
        bias_dims[1] = y_dims[1];
        const std::vector<double> xv = random_values(DType::F32, c.x_dims);
        const std::vector<double> wv = random_values(DType::F32, c.w_dims);
        const std::vector<double> conv_ref = ref::conv_forward(xv, c.x_dims, wv, c.w_dims, c.p);
        const FilterDesc wd = filter_desc(DType::F32, FilterLayout::KCRS, c.w_dims);
        const HostTensor x = tensor_with(make_desc(DType::F32, c.x_dims, Layout::CHANNELS_FIRST), xv);
        const HostTensor w = tensor_with(wd.as_tensor(), wv);
        HostTensor bias(make_desc(DType::F32, bias_dims, Layout::PADDED));
        bias.fill_random();
        for (Residual res : {Residual::SEPARATE, Residual::ALIAS_Y}) {
          CAPTURE(c.name);
          CAPTURE(tactic);
          CAPTURE(static_cast<int>(res));
          HostTensor y(make_desc(DType::F32, y_dims, Layout::CHANNELS_FIRST));
          HostTensor z(make_desc(DType::F32, y_dims, Layout::CHANNELS_FIRST));
          z.fill_random();
          if (res == Residual::ALIAS_Y) y.fill_random(); else y.poison();
          const HostTensor before = y;
          const std::vector<double> z_ref = res == Residual::SEPARATE ? z.to_ref() : before.to_ref();
          size_t bytes = 0;
          REQUIRE(claimed_workspace(h, c, ConvAlgo::WINOGRAD, x.desc(), wd, conv, y.desc(), &bytes));
          Staging st(h);
          const void* xp = st.in(x);
          const void* wp = st.in(w);
          const void* bp = st.in(bias);
          void* yp = st.out(y);
          const void* zp = res == Residual::SEPARATE ? st.in(z) : yp;
          REQUIRE_OK(conv_bias_act_forward(h, 0.7f, x.desc(), xp, wd, wp, conv, ConvAlgo::WINOGRAD, st.scratch(bytes),
                                           bytes, 0.4f, res == Residual::SEPARATE ? z.desc() : y.desc(), zp,
                                           bias.desc(), bp, ActivationDesc::relu(), y.desc(), yp));
          st.finish();
          check_output(y, before, ref::conv_bias_act(conv_ref, y_dims, 0.7f, z_ref, 0.4f, bias.to_ref(),
                                                     ActivationDesc::relu()),
                       5e-5);
        }
        // The unfused blend reads y's old values through the same 16-byte rows.
        SweepOpts opts;
        opts.tactic = tactic;
        opts.f16 = false;
        opts.krsc = false;
        opts.f32_tol = 5e-5;
        sweep_conv_forward(h, ConvAlgo::WINOGRAD, c, {{Layout::CHANNELS_FIRST, Layout::CHANNELS_FIRST}}, opts);
      }
    }
  }
}

TEST_CASE("conv_forward FFT (claimed by no backend)") {
  for (const Handle& h : test_handles()) {
    for (const ConvCase& c : small_cases()) {
      CAPTURE(backend_name(h));
      CAPTURE(c.name);
      const std::vector<int64_t> y_dims = ref::conv_output_dims(c.x_dims, c.w_dims, c.p);
      size_t bytes = 0;
      CHECK_FALSE(claimed_workspace(h, c, ConvAlgo::FFT,
                                    make_desc(DType::F32, c.x_dims, Layout::CHANNELS_FIRST),
                                    filter_desc(DType::F32, FilterLayout::KCRS, c.w_dims),
                                    conv_desc(c),
                                    make_desc(DType::F32, y_dims, Layout::CHANNELS_FIRST), &bytes));
    }
  }
}

TEST_CASE("conv workspace sizes and unsupported algorithms") {
  const Handle h = Handle::cpu();
  const TensorDesc x = TensorDesc::nchw(DType::F32, 1, 8, 13, 13);
  const FilterDesc w = FilterDesc::kcrs(DType::F32, 16, 8, 3, 3);
  const ConvDesc conv = ConvDesc::conv2d(1, 1);
  const TensorDesc y = TensorDesc::nchw(DType::F32, 1, 16, 13, 13);
  size_t bytes = 12345;
  REQUIRE_OK(conv_forward_workspace_size(h, x, w, conv, y, ConvAlgo::DIRECT, &bytes));
  CHECK(bytes == 0);
  REQUIRE_OK(conv_forward_workspace_size(h, x, w, conv, y, ConvAlgo::IMPLICIT_GEMM, &bytes));
  CHECK(bytes == 0);
  REQUIRE_OK(conv_forward_workspace_size(h, x, w, conv, y, ConvAlgo::IMPLICIT_PRECOMP_GEMM, &bytes));
  CHECK(bytes > 0);
  REQUIRE_OK(conv_forward_workspace_size(h, x, w, conv, y, ConvAlgo::GEMM, &bytes));
  // At least the lowered input (169 rows x 72 taps) and the filters, in f32.
  CHECK(bytes >= (169 * 72 + 16 * 72) * 4);
  for (ConvAlgo a : {ConvAlgo::WINOGRAD, ConvAlgo::FFT}) {
    CHECK_STATUS(conv_forward_workspace_size(h, x, w, conv, y, a, &bytes), StatusCode::NOT_SUPPORTED);
    HostTensor xt(x), yt(y), wt(w.as_tensor());
    xt.fill_random();
    wt.fill_random();
    std::vector<unsigned char> ws(1 << 20);
    CHECK_STATUS(conv_forward(h, 1.f, x, xt.data(), w, wt.data(), conv, a, ws.data(), ws.size(),
                              0.f, y, yt.data()),
                 StatusCode::NOT_SUPPORTED);
  }
  CHECK_STATUS(conv_forward_workspace_size(h, x, w, conv, y, ConvAlgo::COUNT, &bytes),
               StatusCode::BAD_PARAM);

  // CUDA: DIRECT and IMPLICIT_GEMM need none; WINOGRAD needs its f32 transforms (at least the
  // 16 transformed filters and the 16 x 49 tiles of input and output), and only for 3x3 stride 1.
  for (const Handle& hc : test_handles()) {
    if (!is_cuda(hc)) continue;
    REQUIRE_OK(conv_forward_workspace_size(hc, x, w, conv, y, ConvAlgo::DIRECT, &bytes));
    CHECK(bytes == 0);
    REQUIRE_OK(conv_forward_workspace_size(hc, x, w, conv, y, ConvAlgo::IMPLICIT_GEMM, &bytes));
    CHECK(bytes == 0);
    REQUIRE_OK(conv_forward_workspace_size(hc, x, w, conv, y, ConvAlgo::WINOGRAD, &bytes));
    CHECK(bytes >= (16 * 16 * 8 + 16 * 8 * 49 + 16 * 16 * 49) * 4);
    CHECK_STATUS(conv_forward_workspace_size(hc, x, w, ConvDesc::conv2d(1, 1, 2, 2),
                                             TensorDesc::nchw(DType::F32, 1, 16, 7, 7),
                                             ConvAlgo::WINOGRAD, &bytes),
                 StatusCode::NOT_SUPPORTED);
    CHECK_STATUS(conv_forward_workspace_size(hc, x, FilterDesc::kcrs(DType::F32, 16, 8, 5, 5),
                                             ConvDesc::conv2d(2, 2), y, ConvAlgo::WINOGRAD, &bytes),
                 StatusCode::NOT_SUPPORTED);
    CHECK_STATUS(conv_forward_workspace_size(hc, x, w, conv, y, ConvAlgo::FFT, &bytes),
                 StatusCode::NOT_SUPPORTED);
  }
}

TEST_CASE("choose_conv_forward_algo: the chosen algorithm runs within its workspace") {
  const std::vector<ConvCase> cases = {
      make_case("3x3", {1, 16, 13, 13}, {32, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, false),
      make_case("1x1", {2, 32, 7, 7}, {16, 32, 1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}, 1, false),
      make_case("depthwise", {1, 8, 13, 13}, {8, 1, 3, 3}, {1, 1}, {1, 1}, {2, 2}, {1, 1}, 8, false),
      make_case("1d", {1, 3, 13}, {7, 3, 5}, {2}, {2}, {1}, {1}, 1, false),
  };
  for (const Handle& h : test_handles()) {
    for (const ConvCase& c : cases) {
      const ConvDesc conv = conv_desc(c);
      const std::vector<int64_t> y_dims = ref::conv_output_dims(c.x_dims, c.w_dims, c.p);
      const DType t = DType::F32;
      const FilterDesc wd = filter_desc(t, FilterLayout::KCRS, c.w_dims);
      HostTensor x(make_desc(t, c.x_dims, Layout::CHANNELS_FIRST));
      HostTensor w(wd.as_tensor());
      x.fill_random();
      w.fill_random();
      const std::vector<double> conv_ref = ref::conv_forward(x.to_ref(), c.x_dims, w.to_ref(), c.w_dims, c.p);
      size_t gemm_bytes = 0;
      HostTensor y(make_desc(t, y_dims, Layout::CHANNELS_FIRST));
      REQUIRE_OK(conv_forward_workspace_size(h, x.desc(), wd, conv, y.desc(), ConvAlgo::GEMM, &gemm_bytes));
      struct Choice {
        ConvPreference pref;
        size_t limit;
      };
      const Choice choices[] = {{ConvPreference::PREFER_FASTEST, 0},
                                {ConvPreference::NO_WORKSPACE, std::numeric_limits<size_t>::max()},
                                {ConvPreference::SPECIFY_WORKSPACE_LIMIT, 0},
                                {ConvPreference::SPECIFY_WORKSPACE_LIMIT, gemm_bytes > 0 ? gemm_bytes - 1 : 0},
                                {ConvPreference::SPECIFY_WORKSPACE_LIMIT, gemm_bytes},
                                {ConvPreference::SPECIFY_WORKSPACE_LIMIT, std::numeric_limits<size_t>::max()}};
      for (const Choice& ch : choices) {
        CAPTURE(backend_name(h));
        CAPTURE(c.name);
        CAPTURE(static_cast<int>(ch.pref));
        CAPTURE(ch.limit);
        ConvAlgo algo = ConvAlgo::COUNT;
        REQUIRE_OK(choose_conv_forward_algo(h, x.desc(), wd, conv, y.desc(), ch.pref, ch.limit, &algo));
        CAPTURE(conv_algo_name(algo));
        size_t bytes = 0;
        REQUIRE_OK(conv_forward_workspace_size(h, x.desc(), wd, conv, y.desc(), algo, &bytes));
        if (ch.pref == ConvPreference::NO_WORKSPACE) CHECK(bytes == 0);
        if (ch.pref == ConvPreference::SPECIFY_WORKSPACE_LIMIT) CHECK(bytes <= ch.limit);
        y.poison();
        const HostTensor before = y;
        Staging st(h);
        const void* xp = st.in(x);
        const void* wp = st.in(w);
        void* yp = st.out(y);
        REQUIRE_OK(conv_forward(h, 1.f, x.desc(), xp, wd, wp, conv, algo, st.scratch(bytes), bytes,
                                0.f, y.desc(), yp));
        st.finish();
        check_output(y, before, conv_ref, tol_for(t));
      }
      // On the CPU, for a layer with enough filters, the fastest choice is a GEMM algorithm.
      if (!is_cuda(h) && c.w_dims[0] / c.p.groups >= 16) {
        ConvAlgo algo = ConvAlgo::COUNT;
        REQUIRE_OK(choose_conv_forward_algo(h, x.desc(), wd, conv, y.desc(),
                                            ConvPreference::PREFER_FASTEST, 0, &algo));
        CHECK(algo == ConvAlgo::GEMM);
      }
    }
  }
}

TEST_CASE("conv routines reject invalid input") {
  const Handle h = Handle::cpu();
  const DType f32 = DType::F32;
  const TensorDesc x = TensorDesc::nchw(f32, 1, 4, 5, 5);
  const FilterDesc w = FilterDesc::kcrs(f32, 6, 4, 3, 3);
  const ConvDesc conv = ConvDesc::conv2d(1, 1);
  const TensorDesc y = TensorDesc::nchw(f32, 1, 6, 5, 5);
  HostTensor xt(x), wt(w.as_tensor()), yt(y);
  xt.fill_random();
  wt.fill_random();
  void* yp = yt.data();
  const void* xp = xt.data();
  const void* wp = wt.data();
  const ConvAlgo direct = ConvAlgo::DIRECT;
  auto run = [&](const TensorDesc& xd, const FilterDesc& wd, const ConvDesc& cd, const TensorDesc& yd) {
    return conv_forward(h, 1.f, xd, xp, wd, wp, cd, direct, nullptr, 0, 0.f, yd, yp);
  };
  REQUIRE_OK(run(x, w, conv, y));
  // The math: either value runs (the CPU backend has nothing approximate); an out-of-range one
  // is named.
  REQUIRE_OK(run(x, w, conv.with_math(ConvMath::ALLOW_APPROXIMATE), y));
  {
    const Status bad_math = run(x, w, conv.with_math(static_cast<ConvMath>(7)), y);
    CHECK(bad_math.code() == StatusCode::BAD_PARAM);
    CHECK(bad_math.message().find("math 7") != std::string::npos);
  }

  // Mismatched dims: y wrong, channels vs groups, filters vs groups, spatial ranks.
  CHECK_STATUS(run(x, w, conv, TensorDesc::nchw(f32, 1, 6, 5, 4)), StatusCode::BAD_PARAM);
  CHECK_STATUS(run(x, w, conv, TensorDesc::nchw(f32, 1, 5, 5, 5)), StatusCode::BAD_PARAM);
  CHECK_STATUS(run(x, FilterDesc::kcrs(f32, 6, 3, 3, 3), conv, y), StatusCode::BAD_PARAM);
  CHECK_STATUS(run(TensorDesc::nchw(f32, 1, 6, 5, 5), FilterDesc::kcrs(f32, 6, 4, 3, 3),
                   ConvDesc::conv2d(1, 1, 1, 1, 1, 1, 2), y),
               StatusCode::BAD_PARAM);  // groups 2: x needs 8 channels
  CHECK_STATUS(run(TensorDesc::nchw(f32, 1, 6, 5, 5), FilterDesc::kcrs(f32, 5, 2, 3, 3),
                   ConvDesc::conv2d(1, 1, 1, 1, 1, 1, 3), TensorDesc::nchw(f32, 1, 5, 5, 5)),
               StatusCode::BAD_PARAM);  // 5 filters, 3 groups
  const int64_t one[1] = {1};
  CHECK_STATUS(run(x, w, ConvDesc::make(1, one, one, nullptr, nullptr), y), StatusCode::BAD_PARAM);
  // Bad convolution parameters.
  CHECK_STATUS(run(x, w, ConvDesc::conv2d(1, 1, 0, 1), y), StatusCode::BAD_PARAM);
  CHECK_STATUS(run(x, w, ConvDesc::conv2d(1, 1, 1, 1, 0, 1), y), StatusCode::BAD_PARAM);
  CHECK_STATUS(run(x, w, ConvDesc::conv2d(-1, 1), y), StatusCode::BAD_PARAM);
  CHECK_STATUS(run(x, w, ConvDesc::conv2d(1, 1, 1, 1, 1, 1, 0), y), StatusCode::BAD_PARAM);
  CHECK_STATUS(run(x, w, ConvDesc::make(4, nullptr, nullptr, nullptr, nullptr), y), StatusCode::BAD_PARAM);
  CHECK_STATUS(run(x, w, ConvDesc::conv2d(1, 1, 1, 1, 1, 1, 1, static_cast<ConvMode>(7)), y),
               StatusCode::BAD_PARAM);
  // Filter larger than the padded input (dilation 4: the 3 taps span 9 > 5 + 2).
  CHECK_STATUS(run(x, w, ConvDesc::conv2d(1, 1, 1, 1, 4, 1), TensorDesc::nchw(f32, 1, 6, 1, 5)),
               StatusCode::BAD_PARAM);
  // Large pads are allowed (ONNX), the output grows (into a buffer of its own: 6 x 11 x 3
  // elements do not fit in yt).
  {
    const TensorDesc big_y = TensorDesc::nchw(f32, 1, 6, 11, 3);
    HostTensor big(big_y);
    REQUIRE_OK(conv_forward(h, 1.f, x, xp, w, wp, ConvDesc::conv2d(4, 0), direct, nullptr, 0, 0.f,
                            big_y, big.data()));
  }
  // Bad descriptors.
  CHECK_STATUS(run(TensorDesc::nchw(f32, 1, 4, 0, 5), w, conv, y), StatusCode::BAD_PARAM);
  CHECK_STATUS(run(x, FilterDesc::kcrs(f32, 6, 4, 0, 3), conv, y), StatusCode::BAD_PARAM);
  // Dtype mix.
  CHECK_STATUS(run(x.with_dtype(DType::F16), w, conv, y), StatusCode::BAD_PARAM);
  CHECK_STATUS(run(x, FilterDesc::kcrs(DType::F16, 6, 4, 3, 3), conv, y), StatusCode::BAD_PARAM);
  CHECK_STATUS(run(x, w, conv, y.with_dtype(DType::F16)), StatusCode::BAD_PARAM);
  // Null pointers, in place.
  CHECK_STATUS(conv_forward(h, 1.f, x, nullptr, w, wp, conv, direct, nullptr, 0, 0.f, y, yp), StatusCode::BAD_PARAM);
  CHECK_STATUS(conv_forward(h, 1.f, x, xp, w, nullptr, conv, direct, nullptr, 0, 0.f, y, yp), StatusCode::BAD_PARAM);
  CHECK_STATUS(conv_forward(h, 1.f, x, xp, w, wp, conv, direct, nullptr, 0, 0.f, y, nullptr), StatusCode::BAD_PARAM);
  CHECK_STATUS(conv_forward(h, 1.f, TensorDesc::nchw(f32, 1, 4, 5, 5), yp, FilterDesc::kcrs(f32, 4, 4, 3, 3), wp,
                            conv, direct, nullptr, 0, 0.f, TensorDesc::nchw(f32, 1, 4, 5, 5), yp),
               StatusCode::BAD_PARAM);
  // Algorithms: unknown, unsupported, workspace too small or missing.
  CHECK_STATUS(conv_forward(h, 1.f, x, xp, w, wp, conv, static_cast<ConvAlgo>(42), nullptr, 0, 0.f, y, yp),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(conv_forward(h, 1.f, x, xp, w, wp, conv, ConvAlgo::WINOGRAD, nullptr, 0, 0.f, y, yp),
               StatusCode::NOT_SUPPORTED);
  for (ConvAlgo a : {ConvAlgo::GEMM, ConvAlgo::IMPLICIT_PRECOMP_GEMM}) {
    size_t need = 0;
    REQUIRE_OK(conv_forward_workspace_size(h, x, w, conv, y, a, &need));
    std::vector<unsigned char> ws(need);
    CHECK_STATUS(conv_forward(h, 1.f, x, xp, w, wp, conv, a, ws.data(), need - 1, 0.f, y, yp),
                 StatusCode::BAD_PARAM);
    CHECK_STATUS(conv_forward(h, 1.f, x, xp, w, wp, conv, a, nullptr, need, 0.f, y, yp),
                 StatusCode::BAD_PARAM);
    REQUIRE_OK(conv_forward(h, 1.f, x, xp, w, wp, conv, a, ws.data(), need, 0.f, y, yp));
  }
  // Queries.
  size_t bytes = 0;
  ConvAlgo algo = ConvAlgo::DIRECT;
  int64_t out_dims[5];
  CHECK_STATUS(conv_forward_workspace_size(h, x, w, conv, y, ConvAlgo::GEMM, nullptr), StatusCode::BAD_PARAM);
  CHECK_STATUS(conv_forward_workspace_size(h, x, w, conv, TensorDesc::nchw(f32, 1, 6, 4, 5), ConvAlgo::GEMM, &bytes),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(choose_conv_forward_algo(h, x, w, conv, y, ConvPreference::PREFER_FASTEST, 0, nullptr),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(choose_conv_forward_algo(h, x, w, conv, y, static_cast<ConvPreference>(9), 0, &algo),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(choose_conv_forward_algo(h, x, FilterDesc::kcrs(f32, 6, 3, 3, 3), conv, y,
                                        ConvPreference::PREFER_FASTEST, 0, &algo),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(conv_output_dims(x, w, conv, nullptr), StatusCode::BAD_PARAM);
  CHECK_STATUS(conv_output_dims(x, FilterDesc::kcrs(f32, 6, 2, 3, 3), conv, out_dims), StatusCode::BAD_PARAM);
  REQUIRE_OK(conv_output_dims(x, w, ConvDesc::conv2d(0, 2, 2, 1, 1, 2), out_dims));
  CHECK(out_dims[0] == 1);
  CHECK(out_dims[1] == 6);
  CHECK(out_dims[2] == 2);  // (5 - 3) / 2 + 1
  CHECK(out_dims[3] == 5);  // 5 + 4 - 5 + 1

  // The fused routine: bias, residual and activation checks.
  const TensorDesc bias = TensorDesc::nchw(f32, 1, 6, 1, 1);
  HostTensor bt(bias), zt(y);
  bt.fill_random();
  zt.fill_random();
  auto fused = [&](const TensorDesc& zd, const void* z, const TensorDesc& bd, const void* b,
                   const ActivationDesc& act) {
    return conv_bias_act_forward(h, 1.f, x, xp, w, wp, conv, direct, nullptr, 0, 1.f, zd, z, bd,
                                 b, act, y, yp);
  };
  const ActivationDesc relu = ActivationDesc::relu();
  REQUIRE_OK(fused(y, zt.data(), bias, bt.data(), relu));
  REQUIRE_OK(fused(TensorDesc(), nullptr, TensorDesc(), nullptr, relu));  // descs unused
  CHECK_STATUS(fused(y, zt.data(), TensorDesc::nchw(f32, 1, 7, 1, 1), bt.data(), relu), StatusCode::BAD_PARAM);
  CHECK_STATUS(fused(y, zt.data(), TensorDesc::nchw(f32, 1, 6, 1, 2), bt.data(), relu), StatusCode::BAD_PARAM);
  CHECK_STATUS(fused(y, zt.data(), TensorDesc::packed(f32, {6}), bt.data(), relu), StatusCode::BAD_PARAM);
  CHECK_STATUS(fused(y, zt.data(), bias.with_dtype(DType::F16), bt.data(), relu), StatusCode::BAD_PARAM);
  CHECK_STATUS(fused(TensorDesc::nchw(f32, 1, 6, 5, 4), zt.data(), bias, bt.data(), relu), StatusCode::BAD_PARAM);
  CHECK_STATUS(fused(y.with_dtype(DType::F16), zt.data(), bias, bt.data(), relu), StatusCode::BAD_PARAM);
  CHECK_STATUS(fused(TensorDesc::nhwc(f32, 1, 6, 5, 5), yp, bias, bt.data(), relu), StatusCode::BAD_PARAM);
  CHECK_STATUS(fused(y, zt.data(), bias, bt.data(), ActivationDesc{ActivationMode::CLIPPED_RELU, -1.f, 0.f}),
               StatusCode::INVALID_VALUE);
  CHECK_STATUS(fused(y, zt.data(), bias, bt.data(), ActivationDesc{static_cast<ActivationMode>(77), 0.f, 0.f}),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(conv_bias_act_forward(h, 1.f, x, xp, w, wp, conv, ConvAlgo::FFT, nullptr, 0, 1.f, y,
                                     nullptr, bias, nullptr, relu, y, yp),
               StatusCode::NOT_SUPPORTED);
}
