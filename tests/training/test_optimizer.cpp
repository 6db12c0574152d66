// The optimizer steps and the global-norm clip (CPU) against float64 implementations of
// PyTorch's formulas (torch.optim.SGD, Adam, AdamW, torch.nn.utils.clip_grad_norm_) over several
// steps; descriptor validation.
#include <cmath>
#include <string>

#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

namespace {

std::vector<float> random_floats(int64_t n, double lo, double hi) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>(uniform(lo, hi));
  return v;
}

// |got - want| <= tol * (|want| + rms(want)): a parameter that the steps bring near 0 is judged
// against the magnitude of the values it came from (f32 rounding there is absolute).
void check_close(const std::vector<float>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  double rms = 0.0;
  for (double w : want) rms += w * w;
  rms = std::sqrt(rms / static_cast<double>(want.size()));
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(std::fabs(got[i] - want[i]) <= tol * (std::fabs(want[i]) + rms));
  }
}

}  // namespace

TEST_CASE("sgd_step follows torch.optim.SGD") {
  const Handle h = Handle::cpu();
  const SgdDesc descs[] = {
      {0.1f, 0.f, 0.f, 0.f, false},
      {0.05f, 0.9f, 0.f, 1e-2f, false},
      {0.05f, 0.9f, 0.f, 1e-2f, true},
      {0.02f, 0.8f, 0.3f, 0.f, false},
  };
  for (const SgdDesc& s : descs) {
    CAPTURE(s.momentum);
    CAPTURE(s.nesterov);
    const int64_t n = uniform_int(1, 300);
    std::vector<float> p = random_floats(n, -1, 1), buf(static_cast<size_t>(n), 0.f);
    std::vector<double> pr(p.begin(), p.end()), br(static_cast<size_t>(n), 0.0);
    for (int step = 1; step <= 4; ++step) {
      const std::vector<float> g = random_floats(n, -1, 1);
      REQUIRE_OK(sgd_step(h, s, n, p.data(), g.data(), buf.data()));
      for (size_t i = 0; i < pr.size(); ++i) {
        double d = g[i] + s.weight_decay * pr[i];
        if (s.momentum != 0.f) {
          // PyTorch's first step: buf = d (buffers start at 0 here, the same when dampening is 0).
          br[i] = step == 1 && s.dampening == 0.f ? d : s.momentum * br[i] + (1.0 - s.dampening) * d;
          d = s.nesterov ? d + s.momentum * br[i] : br[i];
        }
        pr[i] -= s.lr * d;
      }
    }
    check_close(p, pr, 1e-5);
  }
}

TEST_CASE("adam_step follows torch.optim.Adam and AdamW") {
  const Handle h = Handle::cpu();
  for (bool decoupled : {false, true}) {
    for (float wd : {0.f, 0.05f}) {
      AdamDesc a;
      a.lr = 1e-2f;
      a.weight_decay = wd;
      a.decoupled_weight_decay = decoupled;
      CAPTURE(decoupled);
      CAPTURE(wd);
      const int64_t n = uniform_int(1, 300);
      std::vector<float> p = random_floats(n, -1, 1), m(static_cast<size_t>(n), 0.f),
                         v(static_cast<size_t>(n), 0.f);
      std::vector<double> pr(p.begin(), p.end()), mr(static_cast<size_t>(n), 0.0),
                          vr(static_cast<size_t>(n), 0.0);
      for (int step = 1; step <= 5; ++step) {
        const std::vector<float> g = random_floats(n, -1, 1);
        REQUIRE_OK(adam_step(h, a, step, n, p.data(), g.data(), m.data(), v.data()));
        for (size_t i = 0; i < pr.size(); ++i) {
          double gi = g[i];
          if (decoupled) pr[i] *= 1.0 - a.lr * wd; else gi += wd * pr[i];
          mr[i] = a.beta1 * mr[i] + (1.0 - a.beta1) * gi;
          vr[i] = a.beta2 * vr[i] + (1.0 - a.beta2) * gi * gi;
          const double mhat = mr[i] / (1.0 - std::pow(double(a.beta1), step));
          const double vhat = vr[i] / (1.0 - std::pow(double(a.beta2), step));
          pr[i] -= a.lr * mhat / (std::sqrt(vhat) + a.eps);
        }
      }
      check_close(p, pr, 1e-5);
    }
  }
}

TEST_CASE("clip_grad_norm follows torch.nn.utils.clip_grad_norm_") {
  const Handle h = Handle::cpu();
  for (float max_norm : {0.5f, 1e6f}) {  // clipping, and a norm below the limit (unchanged)
    std::vector<std::vector<float>> g = {random_floats(37, -1, 1), random_floats(5000, -0.1, 0.1),
                                         random_floats(1, -3, 3)};
    const std::vector<std::vector<float>> orig = g;
    float* ptrs[3] = {g[0].data(), g[1].data(), g[2].data()};
    const int64_t counts[3] = {37, 5000, 1};
    double sq = 0.0;
    for (const auto& t : orig)
      for (float x : t) sq += double(x) * x;
    const double total = std::sqrt(sq);
    const double coef = std::min(1.0, max_norm / (total + 1e-6));
    const size_t bytes = clip_grad_norm_workspace_size(3, counts);
    std::vector<unsigned char> ws(bytes);
    float norm = 0.f;
    REQUIRE_OK(clip_grad_norm(h, 3, ptrs, counts, max_norm, ws.data(), bytes, &norm));
    CHECK(norm == doctest::Approx(total).epsilon(1e-6));
    for (size_t t = 0; t < 3; ++t) {
      std::vector<double> want(orig[t].begin(), orig[t].end());
      for (double& x : want) x *= coef;
      check_close(g[t], want, 1e-6);
    }
  }
  // A NaN gradient makes the norm and every gradient NaN.
  std::vector<float> a = {1.f, std::nanf("")}, b = {2.f};
  float* ptrs[2] = {a.data(), b.data()};
  const int64_t counts[2] = {2, 1};
  std::vector<unsigned char> ws(clip_grad_norm_workspace_size(2, counts));
  float norm = 0.f;
  REQUIRE_OK(clip_grad_norm(h, 2, ptrs, counts, 1.f, ws.data(), ws.size(), &norm));
  CHECK(std::isnan(norm));
  CHECK(std::isnan(a[0]));
  CHECK(std::isnan(b[0]));
}

TEST_CASE("optimizer descriptors and arguments are validated") {
  const Handle h = Handle::cpu();
  float p[2] = {}, g[2] = {};
  SgdDesc s;
  s.nesterov = true;  // without momentum
  CHECK_STATUS(sgd_step(h, s, 2, p, g, nullptr), StatusCode::INVALID_VALUE);
  s = SgdDesc{};
  s.momentum = 0.9f;
  CHECK_STATUS(sgd_step(h, s, 2, p, g, nullptr), StatusCode::BAD_PARAM);
  CHECK_STATUS(sgd_step(h, SgdDesc{}, 0, p, g, nullptr), StatusCode::BAD_PARAM);
  AdamDesc a;
  a.beta2 = 1.f;
  CHECK_STATUS(adam_step(h, a, 1, 2, p, g, p, g), StatusCode::INVALID_VALUE);
  CHECK_STATUS(adam_step(h, AdamDesc{}, 0, 2, p, g, p, g), StatusCode::BAD_PARAM);
  float* ptrs[1] = {g};
  const int64_t counts[1] = {2};
  float ws[8];
  CHECK_STATUS(clip_grad_norm(h, 1, ptrs, counts, 0.f, ws, sizeof ws, nullptr),
               StatusCode::INVALID_VALUE);
  CHECK_STATUS(clip_grad_norm(h, 1, ptrs, counts, 1.f, ws, 4, nullptr), StatusCode::BAD_PARAM);
}
