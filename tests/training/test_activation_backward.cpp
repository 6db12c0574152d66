// activation_backward (CPU) for every mode against central differences of the float64 reference
// activation, over random shapes and layouts, alpha/beta != (1, 0), poisoned outputs; NaN
// propagation; in place; invalid input.
#include <cmath>
#include <string>

#include "reference/activation.h"
#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

namespace {

// Where each mode has a kink (central differences straddling one are meaningless).
std::vector<double> kinks(const ActivationDesc& a) {
  switch (a.mode) {
    case ActivationMode::RELU:
    case ActivationMode::LEAKY_RELU:
    case ActivationMode::ELU:
    case ActivationMode::SELU: return {0.0};
    case ActivationMode::CLIPPED_RELU: return {0.0, a.alpha};
    case ActivationMode::HARD_SWISH: return {-3.0, 3.0};
    case ActivationMode::HARD_SIGMOID: return {-a.beta / a.alpha, (1.0 - a.beta) / a.alpha};
    case ActivationMode::CLIP: return {a.alpha, a.beta};
    case ActivationMode::ABS:
    case ActivationMode::SIGN: return {0.0};
    case ActivationMode::FLOOR:
    case ActivationMode::CEIL: return {-4, -3, -2, -1, 0, 1, 2, 3, 4};
    case ActivationMode::ROUND: return {-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5};
    default: return {};
  }
}

// x in [-4, 4] mapped into the mode's domain, away from its poles (log, sqrt: x > 0; 1 / x:
// |x| >= 0.1; tan: |x| < 1.4, short of pi / 2).
double in_domain(const ActivationDesc& a, double v) {
  switch (a.mode) {
    case ActivationMode::LOG:
    case ActivationMode::SQRT: return std::fabs(v) + 0.1;
    case ActivationMode::RECIPROCAL: return v < 0 ? v - 0.1 : v + 0.1;
    case ActivationMode::TAN: return v * 0.35;
    default: return v;
  }
}

}  // namespace

TEST_CASE("activation_backward matches central differences for every mode") {
  const Handle h = Handle::cpu();
  const int rounds = reduced_tests() ? 2 : 6;
  for (const ActivationDesc& act : ref::every_activation()) {
    for (int round = 0; round < rounds; ++round) {
      const std::vector<int64_t> dims = random_dims(static_cast<int>(uniform_int(3, 4)), 1, 7);
      const Layout lx = random_layout(), ldy = random_layout(), ldx = random_layout();
      const float alpha = round % 2 ? 0.5f : 1.f, beta = round % 2 ? -0.75f : 0.f;
      CAPTURE(std::string(activation_mode_name(act.mode)));
      CAPTURE(dims_str(dims));
      CAPTURE(std::string(layout_name(lx)) + " " + layout_name(ldy) + " " + layout_name(ldx));
      CAPTURE(alpha);
      CAPTURE(beta);
      // x in [-4, 4] (every branch of every mode), moved off the kinks.
      std::vector<double> xv = random_values(DType::F32, dims);
      for (double& v : xv) {
        v = in_domain(act, v * 4.0);
        for (double k : kinks(act))
          if (std::fabs(v - k) < 1e-3) v = k + 2e-3;
        v = static_cast<float>(v);
      }
      const std::vector<double> dyv = random_values(DType::F32, dims);
      const Vjp want = numeric_vjp(
          [&](const std::vector<double>& x) { return ref::activation(act, x); }, xv, dyv);
      const HostTensor x = tensor_with(make_desc(DType::F32, dims, lx), xv);
      const HostTensor dy = tensor_with(make_desc(DType::F32, dims, ldy), dyv);
      HostTensor dx(make_desc(DType::F32, dims, ldx));
      if (beta == 0.f) dx.poison(); else dx.fill_random();
      const HostTensor before = dx;
      REQUIRE_OK(activation_backward(h, act, alpha, x.desc(), x.data(), dy.desc(), dy.data(), beta,
                                     dx.desc(), dx.data()));
      check_vjp(dx, before, want, alpha, beta);
    }
  }
}

TEST_CASE("activation_backward propagates NaN from x and from dy") {
  const Handle h = Handle::cpu();
  const TensorDesc d = TensorDesc::packed(DType::F32, {4});
  const float nan = std::nanf("");
  for (const ActivationDesc& act : ref::every_activation()) {
    CAPTURE(std::string(activation_mode_name(act.mode)));
    // x = NaN with a finite dy; then a NaN dy where the derivative is 0 or 1.
    const float x[4] = {nan, -10.f, 10.f, 0.25f};
    const float dy[4] = {1.f, nan, nan, nan};
    float dx[4] = {0.f, 0.f, 0.f, 0.f};
    REQUIRE_OK(activation_backward(h, act, 1.f, d, x, d, dy, 0.f, d, dx));
    for (float v : dx) CHECK(std::isnan(v));
  }
}

TEST_CASE("activation_backward in place over dy") {
  const Handle h = Handle::cpu();
  const std::vector<int64_t> dims = {2, 3, 5};
  const TensorDesc d = make_desc(DType::F32, dims, Layout::PADDED);
  HostTensor x(d), g(d);
  x.fill_random(-2.0, 2.0);
  g.fill_random();
  HostTensor separate(d);
  separate.poison();
  const HostTensor before = separate;
  const ActivationDesc act = ActivationDesc::mish();
  REQUIRE_OK(activation_backward(h, act, 1.f, d, x.data(), d, g.data(), 0.f, d, separate.data()));
  HostTensor in_place = g;
  REQUIRE_OK(activation_backward(h, act, 1.f, d, x.data(), d, in_place.data(), 0.f, d,
                                 in_place.data()));
  check_output(in_place, g, separate.to_ref(), 0.0, 1.0);
}

TEST_CASE("activation_backward rejects bad input, naming it") {
  const Handle h = Handle::cpu();
  const TensorDesc d = TensorDesc::packed(DType::F32, {2, 3});
  float x[6] = {}, dy[6] = {}, dx[6] = {};
  const ActivationDesc relu = ActivationDesc::relu();
  CHECK_STATUS(activation_backward(h, relu, 1.f, d, nullptr, d, dy, 0.f, d, dx),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(activation_backward(h, relu, 1.f, d, x, TensorDesc::packed(DType::F32, {3, 2}), dy,
                                   0.f, d, dx),
               StatusCode::BAD_PARAM);
  const TensorDesc h16 = TensorDesc::packed(DType::F16, {2, 3});
  CHECK_STATUS(activation_backward(h, relu, 1.f, h16, x, h16, dy, 0.f, h16, dx),
               StatusCode::NOT_SUPPORTED);
  CHECK_STATUS(activation_backward(h, ActivationDesc::clip(1.f, 0.f), 1.f, d, x, d, dy, 0.f, d, dx),
               StatusCode::INVALID_VALUE);
  // In place over dy with another layout.
  const TensorDesc t = TensorDesc::strided(DType::F32, {2, 3}, {1, 2});
  CHECK_STATUS(activation_backward(h, relu, 1.f, d, x, d, dy, 0.f, t, dy), StatusCode::BAD_PARAM);
}
