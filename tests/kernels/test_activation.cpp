// activation_forward on every backend against the float64 reference.
#include "kernels/util.h"
#include "reference/activation.h"

using namespace jet;
using namespace jet::test;

namespace {

// 1 / x near 0 overflows f16 where float64 does not (a finite reference, an infinite result):
// the sweep keeps |x| >= 1/64 for it.
void keep_away_from_poles(const ActivationDesc& act, HostTensor* x) {
  if (act.mode != ActivationMode::RECIPROCAL) return;
  std::vector<double> v = x->to_ref();
  for (double& e : v)
    if (std::fabs(e) < 1.0 / 64) e = e < 0 ? -1.0 / 64 : 1.0 / 64;
  x->from_ref(v);
}

}  // namespace

namespace {

double rms(const std::vector<double>& v) {
  double ss = 0;
  for (double e : v) ss += std::isfinite(e) ? e * e : 0.0;
  return v.empty() ? 0.0 : std::sqrt(ss / static_cast<double>(v.size()));
}

}  // namespace

TEST_CASE("activation_forward matches the float64 reference") {
  for (const Handle& h : test_handles()) {
  const std::vector<std::vector<int64_t>> shapes = {{1, 1, 1}, {2, 3, 7}, {3, 13, 5, 7}, {2, 3, 4, 5, 6}, {7}, {5, 1, 3, 1, 2, 3}};
  const std::pair<float, float> scalings[] = {{1.f, 0.f}, {0.5f, 0.25f}};
  for (DType t : {DType::F32, DType::F16}) {
    for (const ActivationDesc& act : ref::every_activation()) {
      for (const auto& dims : shapes) {
        for (Layout lx : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED}) {
          for (Layout ly : {Layout::CHANNELS_FIRST, Layout::PADDED, Layout::REVERSED}) {
            for (const auto& scaling : scalings) {
              const float alpha = scaling.first, beta = scaling.second;
              CAPTURE(std::string(backend_name(h)));
              CAPTURE(std::string(activation_mode_name(act.mode)));
              CAPTURE(std::string(dtype_name(t)));
              CAPTURE(dims_str(dims));
              CAPTURE(std::string(layout_name(lx)));
              CAPTURE(std::string(layout_name(ly)));
              CAPTURE(alpha);
              CAPTURE(beta);
              HostTensor x(make_desc(t, dims, lx));
              x.fill_random(-4.0, 4.0);
              keep_away_from_poles(act, &x);
              if (specials_turn()) x.plant_specials();  // NaN stays NaN, +-inf follow the formula
              HostTensor y(make_desc(t, dims, ly));
              if (beta == 0.f) y.poison(); else y.fill_random();
              const HostTensor before = y;
              Staging st(h);
              REQUIRE_OK(activation_forward(h, act, alpha, x.desc(), st.in(x), beta, y.desc(), st.out(y)));
              st.finish();
              const auto ref = blend(ref::activation(act, x.to_ref()), alpha, beta, before.to_ref());
              // Error scale: the output's and the prior y's magnitudes, and the input's: modes
              // such as hard_swish compute x * (x / 6 + 1/2), whose rounding error is relative to
              // x, not to the (possibly tiny, cancelled) result.
              check_output(y, before, ref, tol_for(t), rms(ref) + rms(before.to_ref()) + std::fabs(alpha) * rms(x.to_ref()));
            }
          }
        }
      }
    }
  }
  }
}

TEST_CASE("activation_forward works in place") {
  for (const Handle& h : test_handles())
  for (DType t : {DType::F32, DType::F16}) {
    CAPTURE(std::string(backend_name(h)));
    HostTensor x(make_desc(t, {2, 5, 3, 3}, Layout::CHANNELS_LAST));
    x.fill_random(-3, 3);
    const HostTensor before = x;
    const ActivationDesc act = ActivationDesc::elu(1.f);
    Staging st(h);
    void* xy = st.out(x);
    REQUIRE_OK(activation_forward(h, act, 0.5f, x.desc(), xy, 0.25f, x.desc(), xy));
    st.finish();
    check_output(x, before, blend(ref::activation(act, before.to_ref()), 0.5, 0.25, before.to_ref()),
                 tol_for(t));
  }
}

TEST_CASE("activation_forward rejects invalid input") {
  const Handle h = Handle::cpu();
  const TensorDesc d = TensorDesc::nchw(DType::F32, 1, 2, 3, 3);
  HostTensor x(d), y(d);
  x.fill_random();
  const ActivationDesc relu = ActivationDesc::relu();
  CHECK_STATUS(activation_forward(h, relu, 1.f, d, nullptr, 0.f, d, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(activation_forward(h, relu, 1.f, d, x.data(), 0.f, d, nullptr), StatusCode::BAD_PARAM);
  CHECK_STATUS(activation_forward(h, relu, 1.f, d, x.data(), 0.f, TensorDesc::nchw(DType::F32, 1, 2, 3, 4), y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(activation_forward(h, relu, 1.f, d, x.data(), 0.f, d.with_dtype(DType::F16), y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(activation_forward(h, relu, 1.f, TensorDesc::nchw(DType::F32, 1, 0, 3, 3), x.data(), 0.f, d, y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(activation_forward(h, {ActivationMode::CLIPPED_RELU, -1.f, 0.f}, 1.f, d, x.data(), 0.f, d, y.data()),
               StatusCode::INVALID_VALUE);
  CHECK_STATUS(activation_forward(h, {ActivationMode::CLIP, 2.f, 1.f}, 1.f, d, x.data(), 0.f, d, y.data()),
               StatusCode::INVALID_VALUE);
  CHECK_STATUS(activation_forward(h, {static_cast<ActivationMode>(99), 0.f, 0.f}, 1.f, d, x.data(), 0.f, d, y.data()),
               StatusCode::BAD_PARAM);
  // Overlapping strides: H and W share addresses.
  CHECK_STATUS(activation_forward(h, relu, 1.f, TensorDesc::strided(DType::F32, {1, 2, 3, 3}, {9, 1, 1, 1}), x.data(), 0.f, d, y.data()),
               StatusCode::BAD_PARAM);
}
