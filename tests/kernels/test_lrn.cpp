// lrn_cross_channel_forward on every backend against the float64 reference.
#include <cmath>
#include <limits>

#include "kernels/util.h"
#include "reference/lrn.h"

using namespace jet;
using namespace jet::test;

namespace {

LrnDesc make_lrn(int64_t n, double alpha, double beta, double k) {
  LrnDesc d;
  d.n = n;
  d.alpha = alpha;
  d.beta = beta;
  d.k = k;
  return d;
}

}  // namespace

TEST_CASE("lrn reference gives hand-computed values") {
  // C = 4, x = 1, 2, 3, 4, n = 2: windows {c, c + 1} -> sums of squares 5, 13, 25, 16.
  // With alpha = n = 2, beta = 1, k = 1: y = x / (1 + sum).
  const LrnDesc even = make_lrn(2, 2.0, 1.0, 1.0);
  const std::vector<double> x = {1, 2, 3, 4};
  const auto y = ref::lrn_cross_channel(even, {1, 4, 1}, x);
  CHECK(y[0] == doctest::Approx(1.0 / 6));
  CHECK(y[1] == doctest::Approx(2.0 / 14));
  CHECK(y[2] == doctest::Approx(3.0 / 26));
  CHECK(y[3] == doctest::Approx(4.0 / 17));
  // n = 3: windows {c - 1, c, c + 1} -> sums 5, 14, 29, 25; alpha = 3.
  const LrnDesc odd = make_lrn(3, 3.0, 1.0, 1.0);
  const auto y3 = ref::lrn_cross_channel(odd, {1, 4, 1}, x);
  CHECK(y3[0] == doctest::Approx(1.0 / 6));
  CHECK(y3[1] == doctest::Approx(2.0 / 15));
  CHECK(y3[2] == doctest::Approx(3.0 / 30));
  CHECK(y3[3] == doctest::Approx(4.0 / 26));
  // The kernels agree.
  const TensorDesc d = TensorDesc::ncw(DType::F32, 1, 4, 1);
  HostTensor xt(d);
  xt.from_ref(x);
  for (const Handle& h : test_handles()) {
    CAPTURE(std::string(backend_name(h)));
    const std::pair<const LrnDesc*, const std::vector<double>*> cases[] = {{&even, &y}, {&odd, &y3}};
    for (const auto& c : cases) {
      HostTensor yt(d);
      yt.poison();
      Staging st(h);
      REQUIRE_OK(lrn_cross_channel_forward(h, *c.first, 1.f, d, st.in(xt), 0.f, d, st.out(yt)));
      st.finish();
      const std::vector<double> got = yt.to_ref();
      for (int i = 0; i < 4; ++i) CHECK(got[i] == doctest::Approx((*c.second)[i]));
    }
  }
}

TEST_CASE("lrn_cross_channel_forward matches the float64 reference") {
  for (const Handle& h : test_handles()) {
  const std::vector<std::vector<int64_t>> shapes = {
      {1, 1, 1}, {2, 3, 7}, {1, 13, 3, 5}, {2, 7, 2, 3, 2}, {1, 20, 1, 3}};
  // (alpha, beta, k): AlexNet's, a strong normalization, and cuDNN's smallest k and beta.
  const double params[][3] = {{1e-4, 0.75, 2.0}, {3.0, 0.5, 1.0}, {1.5, 1.25, 0.5}, {0.7, 0.01, 1e-5}};
  const std::pair<float, float> scalings[] = {{1.f, 0.f}, {0.5f, 0.25f}};
  for (DType t : {DType::F32, DType::F16})
    for (int64_t n : {1, 2, 3, 4, 5, 8, 13, 16})
      for (const auto& p : params)
        for (const auto& dims : shapes)
          for (Layout lx : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED})
            for (Layout ly : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED, Layout::REVERSED})
              for (const auto& scaling : scalings) {
                // Plain copies: lambdas (CAPTURE) may not capture structured bindings in C++17.
                const float alpha = scaling.first, beta = scaling.second;
                const LrnDesc lrn = make_lrn(n, p[0], p[1], p[2]);
                CAPTURE(std::string(backend_name(h)));
                CAPTURE(n);
                CAPTURE(p[0]);
                CAPTURE(p[1]);
                CAPTURE(p[2]);
                CAPTURE(std::string(dtype_name(t)));
                CAPTURE(dims_str(dims));
                CAPTURE(std::string(layout_name(lx)));
                CAPTURE(std::string(layout_name(ly)));
                CAPTURE(alpha);
                CAPTURE(beta);
                HostTensor x(make_desc(t, dims, lx));
                x.fill_random(-2.0, 2.0);
                if (specials_turn()) x.plant_specials();  // NaN and +-inf in, as ONNX gives them out
                HostTensor y(make_desc(t, dims, ly));
                if (beta == 0.f) y.poison(); else y.fill_random();
                const HostTensor before = y;
                Staging st(h);
                REQUIRE_OK(lrn_cross_channel_forward(h, lrn, alpha, x.desc(), st.in(x), beta, y.desc(), st.out(y)));
                st.finish();
                const auto ref = ref::lrn_cross_channel(lrn, dims, x.to_ref());
                check_output(y, before, blend(ref, alpha, beta, before.to_ref()), tol_for(t));
              }
  }
}

TEST_CASE("lrn_cross_channel_forward on large shapes") {
  // AlexNet's first LRN (96 channels of 55x55) in NCHW and NHWC, out of place and in place
  // (on CUDA: one thread per element, or one per position with a ring of inputs).
  const std::vector<int64_t> dims = {2, 96, 55, 55};
  const LrnDesc lrn = make_lrn(5, 1e-4, 0.75, 2.0);
  const LrnDesc strong = make_lrn(16, 2.0, 0.75, 1.0);
  for (const Handle& h : test_handles())
    for (DType t : {DType::F32, DType::F16})
      for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST})
        for (const LrnDesc* d : {&lrn, &strong})
          for (bool in_place : {false, true}) {
            CAPTURE(std::string(backend_name(h)));
            CAPTURE(std::string(dtype_name(t)));
            CAPTURE(std::string(layout_name(l)));
            CAPTURE(d->n);
            CAPTURE(in_place);
            HostTensor x(make_desc(t, dims, l));
            x.fill_random(-2.0, 2.0);
            HostTensor y(make_desc(t, dims, l));
            y.fill_random();
            const HostTensor before = in_place ? x : y;
            Staging st(h);
            if (in_place) {
              void* xy = st.out(x);
              REQUIRE_OK(lrn_cross_channel_forward(h, *d, 0.5f, x.desc(), xy, 0.25f, x.desc(), xy));
            } else {
              REQUIRE_OK(lrn_cross_channel_forward(h, *d, 0.5f, x.desc(), st.in(x), 0.25f, y.desc(), st.out(y)));
            }
            st.finish();
            const auto ref = ref::lrn_cross_channel(*d, dims, in_place ? before.to_ref() : x.to_ref());
            check_output(in_place ? x : y, before, blend(ref, 0.5, 0.25, before.to_ref()), tol_for(t));
          }
}

TEST_CASE("lrn_cross_channel_forward works in place") {
  for (const Handle& h : test_handles())
  for (DType t : {DType::F32, DType::F16})
    for (int64_t n : {2, 5, 16}) {
      CAPTURE(std::string(backend_name(h)));
      CAPTURE(std::string(dtype_name(t)));
      CAPTURE(n);
      const std::vector<int64_t> dims = {2, 19, 3, 2};
      HostTensor x(make_desc(t, dims, Layout::CHANNELS_FIRST));
      x.fill_random(-2, 2);
      const HostTensor before = x;
      const LrnDesc lrn = make_lrn(n, 2.0, 0.75, 1.0);
      Staging st(h);
      void* xy = st.out(x);
      REQUIRE_OK(lrn_cross_channel_forward(h, lrn, 0.5f, x.desc(), xy, 0.25f, x.desc(), xy));
      st.finish();
      const auto ref = ref::lrn_cross_channel(lrn, dims, before.to_ref());
      check_output(x, before, blend(ref, 0.5, 0.25, before.to_ref()), tol_for(t));
    }
}

TEST_CASE("lrn_cross_channel_forward rejects invalid input") {
  const Handle h = Handle::cpu();
  const TensorDesc d = TensorDesc::nchw(DType::F32, 1, 4, 3, 3);
  HostTensor x(d), y(d);
  x.fill_random();
  const LrnDesc ok = make_lrn(5, 1e-4, 0.75, 2.0);
  REQUIRE_OK(lrn_cross_channel_forward(h, ok, 1.f, d, x.data(), 0.f, d, y.data()));
  // Null pointers.
  CHECK_STATUS(lrn_cross_channel_forward(h, ok, 1.f, d, nullptr, 0.f, d, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(lrn_cross_channel_forward(h, ok, 1.f, d, x.data(), 0.f, d, nullptr), StatusCode::BAD_PARAM);
  // Mismatched dims, dtype mix, bad rank, bad strides.
  CHECK_STATUS(lrn_cross_channel_forward(h, ok, 1.f, d, x.data(), 0.f, TensorDesc::nchw(DType::F32, 1, 5, 3, 3), y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(lrn_cross_channel_forward(h, ok, 1.f, d, x.data(), 0.f, d.with_dtype(DType::F16), y.data()), StatusCode::BAD_PARAM);
  const TensorDesc r2 = TensorDesc::packed(DType::F32, {4, 9});
  CHECK_STATUS(lrn_cross_channel_forward(h, ok, 1.f, r2, x.data(), 0.f, r2, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(lrn_cross_channel_forward(h, ok, 1.f, TensorDesc::strided(DType::F32, {1, 4, 3, 3}, {36, 1, 1, 3}), x.data(), 0.f, d, y.data()),
               StatusCode::BAD_PARAM);
  // cuDNN's limits, each reported as INVALID_VALUE naming the limit.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const LrnDesc bad[] = {make_lrn(0, 1e-4, 0.75, 2.0),  make_lrn(17, 1e-4, 0.75, 2.0),
                         make_lrn(5, 1e-4, 0.75, 9e-6), make_lrn(5, 1e-4, 0.009, 2.0),
                         make_lrn(5, nan, 0.75, 2.0),   make_lrn(5, 1e-4, nan, 2.0),
                         make_lrn(5, 1e-4, 0.75, nan),  make_lrn(-3, 1e-4, 0.75, 2.0)};
  for (const LrnDesc& b : bad) {
    CHECK_STATUS(b.validate(), StatusCode::INVALID_VALUE);
    CHECK_STATUS(lrn_cross_channel_forward(h, b, 1.f, d, x.data(), 0.f, d, y.data()), StatusCode::INVALID_VALUE);
  }
  CHECK(make_lrn(17, 1e-4, 0.75, 2.0).validate().message().find("[1, 16]") != std::string::npos);
  CHECK(make_lrn(5, 1e-4, 0.75, 1e-6).validate().message().find(">= 1e-5") != std::string::npos);
  CHECK(make_lrn(5, 1e-4, 0.001, 2.0).validate().message().find(">= 0.01") != std::string::npos);
  // The limits themselves are allowed.
  REQUIRE_OK(make_lrn(1, 0.0, 0.01, 1e-5).validate());
  REQUIRE_OK(make_lrn(16, -1.0, 5.0, 1e-5).validate());
}
