// pool_forward and pool_output_dims on every backend against the float64 reference.
#include <cmath>

#include "kernels/util.h"
#include "reference/pool.h"

using namespace jet;
using namespace jet::test;

namespace {

// One pooling problem: x's spatial dims and the window parameters per spatial axis.
struct PoolCase {
  std::vector<int64_t> x_spatial;
  std::vector<int64_t> window, pad_begin, pad_end, stride, dilation;
  bool ceil_mode = false;
  bool global = false;

  PoolDesc desc(PoolMode mode) const {
    const int r = static_cast<int>(x_spatial.size());
    if (global) return PoolDesc::global(mode, r);
    return PoolDesc::make(mode, r, window.data(), pad_begin.data(), pad_end.data(),
                          stride.data(), dilation.data(), ceil_mode);
  }
  std::string str() const {
    if (global) return "global x" + dims_str(x_spatial);
    return "x" + dims_str(x_spatial) + " win" + dims_str(window) + " pad" + dims_str(pad_begin) +
           "/" + dims_str(pad_end) + " stride" + dims_str(stride) + " dil" + dims_str(dilation) +
           (ceil_mode ? " ceil" : " floor");
  }
};

const char* mode_name(PoolMode m) {
  switch (m) {
    case PoolMode::MAX: return "max";
    case PoolMode::AVG_INCLUDE_PAD: return "avg_include_pad";
    case PoolMode::AVG_EXCLUDE_PAD: return "avg_exclude_pad";
  }
  return "?";
}

// Runs pool_forward once on fresh random data and checks it against the reference.
void run_pool(const Handle& h, const PoolCase& pc, PoolMode mode, DType t, int64_t n, int64_t c,
              Layout lx, Layout ly, float alpha, float beta) {
  const PoolDesc pool = pc.desc(mode);
  std::vector<int64_t> x_dims = {n, c};
  x_dims.insert(x_dims.end(), pc.x_spatial.begin(), pc.x_spatial.end());
  CAPTURE(std::string(backend_name(h)));
  CAPTURE(pc.str());
  CAPTURE(std::string(mode_name(mode)));
  CAPTURE(std::string(dtype_name(t)));
  CAPTURE(dims_str(x_dims));
  CAPTURE(std::string(layout_name(lx)));
  CAPTURE(std::string(layout_name(ly)));
  CAPTURE(alpha);
  CAPTURE(beta);
  const std::vector<int64_t> y_dims = ref::pool_output_dims(pool, x_dims);
  REQUIRE(!y_dims.empty());
  HostTensor x(make_desc(t, x_dims, lx));
  x.fill_random(-2.0, 2.0);
  if (specials_turn()) x.plant_specials();  // NaN and +-inf in, as ONNX gives them out
  int64_t got_dims[5] = {};
  REQUIRE_OK(pool_output_dims(x.desc(), pool, got_dims));
  CHECK(std::vector<int64_t>(got_dims, got_dims + x_dims.size()) == y_dims);
  HostTensor y(make_desc(t, y_dims, ly));
  if (beta == 0.f) y.poison(); else y.fill_random();
  const HostTensor before = y;
  Staging st(h);
  REQUIRE_OK(pool_forward(h, pool, alpha, x.desc(), st.in(x), beta, y.desc(), st.out(y)));
  st.finish();
  const std::vector<double> ref = ref::pool_forward(pool, x_dims, x.to_ref());
  check_output(y, before, blend(ref, alpha, beta, before.to_ref()), tol_for(t));
}

const PoolMode kModes[] = {PoolMode::MAX, PoolMode::AVG_INCLUDE_PAD, PoolMode::AVG_EXCLUDE_PAD};

}  // namespace

TEST_CASE("pooling reference and kernel give hand-computed values") {
  // x = 1..6 along one axis. Window 3, stride 2, pad 1 + 1, ceil_mode: windows start at -1, 1,
  // 3, 5; the last one covers {5, 6, 7}, of which 5 is in x, 6 in the end padding, 7 beyond it.
  const int64_t win = 3, pad = 1, stride = 2;
  const PoolDesc max_p = PoolDesc::make(PoolMode::MAX, 1, &win, &pad, &pad, &stride, nullptr, true);
  const PoolDesc inc_p = PoolDesc::make(PoolMode::AVG_INCLUDE_PAD, 1, &win, &pad, &pad, &stride, nullptr, true);
  const PoolDesc exc_p = PoolDesc::make(PoolMode::AVG_EXCLUDE_PAD, 1, &win, &pad, &pad, &stride, nullptr, true);
  const std::vector<double> xv = {1, 2, 3, 4, 5, 6};
  const std::vector<double> want_max = {2, 4, 6, 6};
  const std::vector<double> want_inc = {1, 3, 5, 3};  // (0+1+2)/3, 9/3, 15/3, (6+0)/2 (PyTorch)
  const std::vector<double> want_exc = {1.5, 3, 5, 6};
  CHECK(ref::pool_output_dims(max_p, {1, 1, 6}) == std::vector<int64_t>{1, 1, 4});
  CHECK(ref::pool_forward(max_p, {1, 1, 6}, xv) == want_max);
  CHECK(ref::pool_forward(inc_p, {1, 1, 6}, xv) == want_inc);
  CHECK(ref::pool_forward(exc_p, {1, 1, 6}, xv) == want_exc);
  const TensorDesc xd = TensorDesc::ncw(DType::F32, 1, 1, 6), yd = TensorDesc::ncw(DType::F32, 1, 1, 4);
  HostTensor x(xd);
  x.from_ref(xv);
  const std::pair<const PoolDesc*, const std::vector<double>*> cases[] = {
      {&max_p, &want_max}, {&inc_p, &want_inc}, {&exc_p, &want_exc}};
  for (const Handle& h : test_handles())
  for (const auto& pc : cases) {
    const PoolDesc* pool = pc.first;
    const std::vector<double>* want = pc.second;
    CAPTURE(std::string(backend_name(h)));
    HostTensor y(yd);
    y.poison();
    Staging st(h);
    REQUIRE_OK(pool_forward(h, *pool, 1.f, xd, st.in(x), 0.f, yd, st.out(y)));
    st.finish();
    const std::vector<double> got = y.to_ref();
    for (int i = 0; i < 4; ++i) CHECK(got[i] == doctest::Approx((*want)[i]));
  }
  // 2D max with dilation 2: the window {0, 2} x {0, 2} of a 3x3 input.
  HostTensor x2(TensorDesc::nchw(DType::F32, 1, 1, 3, 3));
  x2.from_ref({1, 9, 2, 8, 7, 6, 3, 5, 4});
  const int64_t w2[2] = {2, 2}, d2[2] = {2, 2};
  const PoolDesc dil = PoolDesc::make(PoolMode::MAX, 2, w2, nullptr, nullptr, nullptr, d2);
  for (const Handle& h : test_handles()) {
    CAPTURE(std::string(backend_name(h)));
    HostTensor y2(TensorDesc::nchw(DType::F32, 1, 1, 1, 1));
    y2.poison();
    Staging st(h);
    REQUIRE_OK(pool_forward(h, dil, 1.f, x2.desc(), st.in(x2), 0.f, y2.desc(), st.out(y2)));
    st.finish();
    CHECK(y2.to_ref()[0] == 4.0);  // max of 1, 2, 3, 4 (the 9 and 8 are skipped by the dilation)
  }
}

TEST_CASE("pool_output_dims follows the PyTorch rules") {
  const TensorDesc x1 = TensorDesc::ncw(DType::F32, 2, 3, 5);
  int64_t d[5];
  const int64_t two = 2, one = 1, three = 3;
  // floor((5 + 2 - 2) / 2) + 1 = 3; ceil gives 4 but the 4th window would start at 5 = in + pad.
  REQUIRE_OK(pool_output_dims(x1, PoolDesc::make(PoolMode::MAX, 1, &two, &one, &one, &two, nullptr, false), d));
  CHECK(d[2] == 3);
  REQUIRE_OK(pool_output_dims(x1, PoolDesc::make(PoolMode::MAX, 1, &two, &one, &one, &two, nullptr, true), d));
  CHECK(d[2] == 3);
  // 5 with window 2, stride 2: floor 2, ceil 3 (last window {4, 5} half outside).
  REQUIRE_OK(pool_output_dims(x1, PoolDesc::make(PoolMode::MAX, 1, &two, nullptr, nullptr, &two, nullptr, false), d));
  CHECK(d[2] == 2);
  REQUIRE_OK(pool_output_dims(x1, PoolDesc::make(PoolMode::MAX, 1, &two, nullptr, nullptr, &two, nullptr, true), d));
  CHECK(d[2] == 3);
  // Dilation 2 makes window 3 span 5: exactly one output.
  REQUIRE_OK(pool_output_dims(x1, PoolDesc::make(PoolMode::MAX, 1, &three, nullptr, nullptr, nullptr, &two), d));
  CHECK(d[0] == 2);
  CHECK(d[1] == 3);
  CHECK(d[2] == 1);
  // Global: 1x1x1 whatever the input.
  REQUIRE_OK(pool_output_dims(TensorDesc::ncdhw(DType::F16, 1, 4, 3, 7, 2), PoolDesc::global(PoolMode::AVG_EXCLUDE_PAD, 3), d));
  CHECK(d[1] == 4);
  CHECK(d[2] == 1);
  CHECK(d[3] == 1);
  CHECK(d[4] == 1);
  // 224 -> 112 with the ResNet stem pool (3x3, stride 2, pad 1).
  REQUIRE_OK(pool_output_dims(TensorDesc::nchw(DType::F32, 1, 64, 112, 112), PoolDesc::pool2d(PoolMode::MAX, 3, 3, 1, 1, 2, 2), d));
  CHECK(d[2] == 56);
  CHECK(d[3] == 56);
}

TEST_CASE("pool_forward matches the float64 reference") {
  std::vector<PoolCase> cases = {
      // 2D, non-square window, asymmetric pads, ceil_mode.
      {{7, 13}, {3, 2}, {1, 0}, {2, 1}, {2, 3}, {1, 1}, true},
      // 2D, ceil_mode windows that run past the end padding (AVG_INCLUDE_PAD divisor clipped).
      {{6, 7}, {3, 2}, {1, 0}, {1, 0}, {2, 3}, {1, 1}, true},
      // 2D, stride larger than the window (gaps between windows).
      {{13, 7}, {2, 3}, {0, 1}, {1, 0}, {3, 4}, {1, 1}, false},
      {{13, 7}, {2, 3}, {0, 1}, {1, 0}, {3, 4}, {1, 1}, true},
      // 2D dilation with the largest allowed pads.
      {{7, 7}, {3, 2}, {4, 1}, {2, 0}, {1, 2}, {2, 2}, false},
      // 2D, pad = window - 1 on a tiny input.
      {{3, 3}, {3, 3}, {2, 2}, {2, 2}, {2, 2}, {1, 1}, true},
      // 1D.
      {{13}, {4}, {3}, {0}, {2}, {1}, true},
      {{1}, {1}, {0}, {0}, {1}, {1}, false},
      {{7}, {3}, {1}, {1}, {1}, {3}, false},
      // 3D.
      {{3, 7, 5}, {2, 3, 2}, {1, 0, 1}, {0, 2, 1}, {2, 1, 3}, {1, 1, 1}, true},
      {{1, 3, 7}, {1, 3, 2}, {0, 1, 0}, {0, 1, 1}, {1, 2, 2}, {1, 1, 3}, false},
  };
  PoolCase g1, g2, g3;
  g1.x_spatial = {13};
  g2.x_spatial = {7, 3};
  g3.x_spatial = {3, 1, 7};
  g1.global = g2.global = g3.global = true;
  cases.push_back(g1);
  cases.push_back(g2);
  cases.push_back(g3);
  const std::pair<float, float> scalings[] = {{1.f, 0.f}, {0.5f, 0.25f}};
  for (const Handle& h : test_handles())
  for (const PoolCase& pc : cases)
    for (PoolMode mode : kModes)
      for (DType t : {DType::F32, DType::F16})
        for (Layout lx : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED})
          for (Layout ly : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED})
            for (auto [alpha, beta] : scalings) run_pool(h, pc, mode, t, 2, 3, lx, ly, alpha, beta);
  // 16 channels, channels-last: CUDA reads 8 (f16) or 4 (f32) channels a load.
  for (const Handle& h : test_handles())
    for (const PoolCase& pc : cases)
      for (PoolMode mode : kModes)
        for (DType t : {DType::F32, DType::F16})
          for (auto [alpha, beta] : scalings)
            run_pool(h, pc, mode, t, 2, 16, Layout::CHANNELS_LAST, Layout::CHANNELS_LAST, alpha,
                     beta);
}

TEST_CASE("pool_forward on large shapes") {
  // The shapes of real networks, in NCHW and NHWC: global pooling (a block-wide reduction per
  // (n, c) on CUDA), the ResNet stem pool, a 7x7 window that is the whole input (also a
  // reduction), a long non-global window (compensated per-thread sums) and grid-stride loops.
  struct Big {
    PoolCase pc;
    int64_t n, c;
  };
  PoolCase global56;
  global56.x_spatial = {56, 56};
  global56.global = true;
  const std::vector<Big> bigs = {
      {global56, 1, 512},
      {{{112, 112}, {3, 3}, {1, 1}, {1, 1}, {2, 2}, {1, 1}, false}, 2, 64},
      {{{7, 7}, {7, 7}, {0, 0}, {0, 0}, {1, 1}, {1, 1}, false}, 2, 1024},
      {{{60, 61}, {56, 56}, {0, 1}, {0, 2}, {2, 3}, {1, 1}, true}, 1, 8},
      {{{27, 27}, {3, 3}, {0, 0}, {0, 0}, {2, 2}, {1, 1}, true}, 3, 96},
  };
  for (const Handle& h : test_handles())
  for (const Big& b : bigs)
    for (PoolMode mode : kModes)
      for (DType t : {DType::F32, DType::F16})
        for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST})
          run_pool(h, b.pc, mode, t, b.n, b.c, l, l, mode == PoolMode::MAX ? 1.f : 0.5f,
                   mode == PoolMode::MAX ? 0.f : 0.25f);
}

TEST_CASE("pool_forward on random configurations") {
  // Random windows, pads, strides and dilations; any configuration that the reference finds
  // windows with no input element in (dilation) must be rejected with BAD_PARAM.
  const int64_t sizes[] = {1, 3, 7, 13};
  const Layout layouts[] = {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED, Layout::REVERSED};
  const std::vector<Handle> handles = test_handles();
  int ran = 0, rejected = 0;
  for (int iter = 0; iter < 400; ++iter) {
    PoolCase pc;
    const int r = static_cast<int>(uniform_int(1, 3));
    for (int i = 0; i < r; ++i) {
      pc.x_spatial.push_back(sizes[uniform_int(0, 3)]);
      const int64_t w = uniform_int(1, 4), d = uniform_int(0, 3) == 0 ? uniform_int(2, 3) : 1;
      const int64_t extent = (w - 1) * d + 1;
      pc.window.push_back(w);
      pc.dilation.push_back(d);
      pc.stride.push_back(uniform_int(1, 4));
      pc.pad_begin.push_back(uniform_int(0, extent - 1));
      pc.pad_end.push_back(uniform_int(0, extent - 1));
    }
    pc.ceil_mode = uniform_int(0, 1) == 1;
    const PoolMode mode = kModes[uniform_int(0, 2)];
    const DType t = uniform_int(0, 1) ? DType::F32 : DType::F16;
    const int64_t n = uniform_int(1, 2), c = uniform_int(1, 5);
    std::vector<int64_t> x_dims = {n, c};
    x_dims.insert(x_dims.end(), pc.x_spatial.begin(), pc.x_spatial.end());
    const PoolDesc pool = pc.desc(mode);
    const std::vector<int64_t> y_dims = ref::pool_output_dims(pool, x_dims);
    const TensorDesc xd = make_desc(t, x_dims, layouts[uniform_int(0, 3)]);
    int64_t got[5];
    if (y_dims.empty()) {  // the window does not fit in the padded input
      CAPTURE(pc.str());
      CHECK_STATUS(pool_output_dims(xd, pool, got), StatusCode::BAD_PARAM);
      continue;
    }
    // Windows without any input element: the reference gives NaN there (x has no NaN).
    std::vector<double> probe(static_cast<size_t>(count(x_dims)), 1.0);
    bool empty_window = false;
    for (double v : ref::pool_forward(pool, x_dims, probe)) empty_window = empty_window || std::isnan(v);
    if (empty_window) {
      CAPTURE(pc.str());
      HostTensor x(xd), y(make_desc(t, y_dims, Layout::CHANNELS_FIRST));
      CHECK_STATUS(pool_forward(Handle::cpu(), pool, 1.f, x.desc(), x.data(), 0.f, y.desc(), y.data()),
                   StatusCode::BAD_PARAM);
      ++rejected;
      continue;
    }
    const bool blend_y = uniform_int(0, 1) == 1;
    const Layout lx = layouts[uniform_int(0, 3)], ly = layouts[uniform_int(0, 3)];
    for (const Handle& h : handles)
      run_pool(h, pc, mode, t, n, c, lx, ly, blend_y ? 0.5f : 1.f, blend_y ? 0.25f : 0.f);
    ++ran;
  }
  MESSAGE("random pooling configurations: " << ran << " run, " << rejected << " rejected (empty dilated windows)");
  CHECK(ran > 200);
}

TEST_CASE("pool_forward propagates NaN through max pooling") {
  const double nan = std::nan("");
  HostTensor x(TensorDesc::nchw(DType::F32, 1, 1, 1, 4));
  x.from_ref({1.0, nan, 3.0, 2.0});
  for (const Handle& h : test_handles()) {
    CAPTURE(std::string(backend_name(h)));
    HostTensor y(TensorDesc::nchw(DType::F32, 1, 1, 1, 2));
    y.fill(0.0);
    Staging st(h);
    REQUIRE_OK(pool_forward(h, PoolDesc::pool2d(PoolMode::MAX, 1, 2, 0, 0, 1, 2), 1.f, x.desc(),
                            st.in(x), 0.f, y.desc(), st.out(y)));
    st.finish();
    const std::vector<double> got = y.to_ref();
    CHECK(std::isnan(got[0]));
    CHECK(got[1] == 3.0);
  }
  // Global max pooling (the reduction path on CUDA) propagates NaN too, wherever it sits.
  for (const Handle& h : test_handles())
    for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST}) {
      CAPTURE(std::string(backend_name(h)));
      CAPTURE(std::string(layout_name(l)));
      HostTensor xg(make_desc(DType::F32, {2, 3, 9, 11}, l));
      xg.fill_random();
      const int64_t at[4] = {1, 2, 7, 5};
      xg.set(at, nan);
      HostTensor y(make_desc(DType::F32, {2, 3, 1, 1}, l));
      y.poison();
      const HostTensor before = y;
      const PoolDesc g = PoolDesc::global(PoolMode::MAX, 2);
      Staging st(h);
      REQUIRE_OK(pool_forward(h, g, 1.f, xg.desc(), st.in(xg), 0.f, y.desc(), st.out(y)));
      st.finish();
      check_output(y, before, ref::pool_forward(g, {2, 3, 9, 11}, xg.to_ref()), 1e-6);
    }
}

TEST_CASE("pool_forward rejects invalid input") {
  const Handle h = Handle::cpu();
  const TensorDesc xd = TensorDesc::nchw(DType::F32, 2, 3, 7, 7);
  const PoolDesc p = PoolDesc::pool2d(PoolMode::MAX, 3, 3, 1, 1, 2, 2);  // 7 -> 4
  const TensorDesc yd = TensorDesc::nchw(DType::F32, 2, 3, 4, 4);
  HostTensor x(xd), y(yd);
  x.fill_random();
  REQUIRE_OK(pool_forward(h, p, 1.f, xd, x.data(), 0.f, yd, y.data()));
  // Null pointers.
  CHECK_STATUS(pool_forward(h, p, 1.f, xd, nullptr, 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(pool_forward(h, p, 1.f, xd, x.data(), 0.f, yd, nullptr), StatusCode::BAD_PARAM);
  CHECK_STATUS(pool_output_dims(xd, p, nullptr), StatusCode::BAD_PARAM);
  // Mismatched dims: spatial, channels, batch, rank.
  {
    const Status s = pool_forward(h, p, 1.f, xd, x.data(), 0.f, TensorDesc::nchw(DType::F32, 2, 3, 3, 4), y.data());
    CHECK(s.code() == StatusCode::BAD_PARAM);
    CHECK(s.message().find("pool_forward: y has dims [2, 3, 3, 4] but pooling x gives [2, 3, 4, 4]") != std::string::npos);
  }
  CHECK_STATUS(pool_forward(h, p, 1.f, xd, x.data(), 0.f, TensorDesc::nchw(DType::F32, 2, 2, 4, 4), y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(pool_forward(h, p, 1.f, xd, x.data(), 0.f, TensorDesc::nchw(DType::F32, 1, 3, 4, 4), y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(pool_forward(h, p, 1.f, xd, x.data(), 0.f, TensorDesc::ncdhw(DType::F32, 2, 3, 1, 4, 4), y.data()), StatusCode::BAD_PARAM);
  // Descriptor rank vs x's spatial rank; x of rank 2 and 6.
  CHECK_STATUS(pool_forward(h, PoolDesc::global(PoolMode::MAX, 3), 1.f, xd, x.data(), 0.f, TensorDesc::nchw(DType::F32, 2, 3, 1, 1), y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(pool_output_dims(TensorDesc::packed(DType::F32, {2, 3}), PoolDesc::global(PoolMode::MAX, 1), nullptr), StatusCode::BAD_PARAM);
  int64_t d[8];
  CHECK_STATUS(pool_output_dims(TensorDesc::packed(DType::F32, {2, 3}), PoolDesc::global(PoolMode::MAX, 1), d), StatusCode::BAD_PARAM);
  CHECK_STATUS(pool_output_dims(TensorDesc::packed(DType::F32, {1, 1, 1, 1, 1, 2}), PoolDesc::global(PoolMode::MAX, 3), d), StatusCode::BAD_PARAM);
  // Wrong dtype mix.
  CHECK_STATUS(pool_forward(h, p, 1.f, xd, x.data(), 0.f, yd.with_dtype(DType::F16), y.data()), StatusCode::BAD_PARAM);
  // Bad parameters: pad >= window, negative pad, zero window / stride / dilation.
  CHECK_STATUS(pool_forward(h, PoolDesc::pool2d(PoolMode::AVG_INCLUDE_PAD, 3, 3, 3, 1, 2, 2), 1.f, xd, x.data(), 0.f, yd, y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(pool_forward(h, PoolDesc::pool2d(PoolMode::MAX, 2, 2, 0, -1), 1.f, xd, x.data(), 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(pool_forward(h, PoolDesc::pool2d(PoolMode::MAX, 0, 2), 1.f, xd, x.data(), 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(pool_forward(h, PoolDesc::pool2d(PoolMode::MAX, 2, 2, 0, 0, 1, 0), 1.f, xd, x.data(), 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  {
    const int64_t w[2] = {2, 2}, dil[2] = {1, 0};
    CHECK_STATUS(PoolDesc::make(PoolMode::MAX, 2, w, nullptr, nullptr, nullptr, dil).validate(), StatusCode::BAD_PARAM);
    // End pad as large as the window.
    const int64_t pe[2] = {0, 2};
    CHECK_STATUS(PoolDesc::make(PoolMode::MAX, 2, w, nullptr, pe, nullptr).validate(), StatusCode::BAD_PARAM);
    // Window 2 with dilation 2 spans 3 elements: pad 3 would make the first window all padding.
    const int64_t dil2[2] = {2, 2}, pad3[2] = {3, 0}, pad2[2] = {2, 0};
    CHECK_STATUS(PoolDesc::make(PoolMode::MAX, 2, w, pad3, nullptr, nullptr, dil2).validate(), StatusCode::BAD_PARAM);
    REQUIRE_OK(PoolDesc::make(PoolMode::MAX, 2, w, pad2, nullptr, nullptr, dil2).validate());
    // No window array.
    CHECK_STATUS(PoolDesc::make(PoolMode::MAX, 2, nullptr, nullptr, nullptr, nullptr).validate(), StatusCode::BAD_PARAM);
    // Spatial rank out of range; unknown mode.
    CHECK_STATUS(PoolDesc::make(PoolMode::MAX, 4, w, nullptr, nullptr, nullptr).validate(), StatusCode::BAD_PARAM);
    CHECK_STATUS(PoolDesc::global(PoolMode::MAX, 0).validate(), StatusCode::BAD_PARAM);
    CHECK_STATUS(PoolDesc::pool2d(static_cast<PoolMode>(7), 2, 2).validate(), StatusCode::BAD_PARAM);
    CHECK_STATUS(pool_forward(h, PoolDesc::pool2d(static_cast<PoolMode>(-1), 2, 2), 1.f, xd, x.data(), 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  }
  // Window larger than the padded input.
  CHECK_STATUS(pool_output_dims(xd, PoolDesc::pool2d(PoolMode::MAX, 9, 2), d), StatusCode::BAD_PARAM);
  CHECK_STATUS(pool_forward(h, PoolDesc::pool2d(PoolMode::MAX, 9, 2), 1.f, xd, x.data(), 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  // A dilated window whose taps all miss x: extent 1, window 2, dilation 2, pads 1 -> taps -1, 1.
  {
    const int64_t w = 2, dil = 2, pad = 1;
    const PoolDesc holes = PoolDesc::make(PoolMode::MAX, 1, &w, &pad, &pad, nullptr, &dil);
    REQUIRE_OK(holes.validate());
    const TensorDesc x1 = TensorDesc::ncw(DType::F32, 1, 1, 1);
    REQUIRE_OK(pool_output_dims(x1, holes, d));
    REQUIRE(d[2] == 1);
    CHECK_STATUS(pool_forward(h, holes, 1.f, x1, x.data(), 0.f, TensorDesc::ncw(DType::F32, 1, 1, 1), y.data()), StatusCode::BAD_PARAM);
  }
  // Invalid tensor descriptors.
  CHECK_STATUS(pool_forward(h, p, 1.f, TensorDesc::nchw(DType::F32, 2, 3, 0, 7), x.data(), 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(pool_forward(h, p, 1.f, xd, x.data(), 0.f, TensorDesc::strided(DType::F32, {2, 3, 4, 4}, {48, 16, 1, 1}), y.data()),
               StatusCode::BAD_PARAM);
}
