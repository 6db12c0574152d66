// The losses (CPU): softmax cross-entropy, MSE, BCE with logits. The loss against a float64
// reference, the gradient against central differences of it; random shapes and layouts,
// alpha/beta != (1, 0), poisoned outputs; numerical stability at large logits; bad labels give
// NaN; invalid input.
#include <cmath>
#include <string>

#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

namespace {

double ce_ref(const std::vector<double>& x, int64_t n, int64_t c, const std::vector<int32_t>& labels) {
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double m = x[static_cast<size_t>(i * c)];
    for (int64_t j = 1; j < c; ++j) m = std::max(m, x[static_cast<size_t>(i * c + j)]);
    double s = 0.0;
    for (int64_t j = 0; j < c; ++j) s += std::exp(x[static_cast<size_t>(i * c + j)] - m);
    total += m + std::log(s) - x[static_cast<size_t>(i * c + labels[static_cast<size_t>(i)])];
  }
  return total / static_cast<double>(n);
}

double elementwise_ref(bool mse, const std::vector<double>& x, const std::vector<double>& t) {
  double total = 0.0;
  for (size_t i = 0; i < x.size(); ++i)
    total += mse ? (x[i] - t[i]) * (x[i] - t[i])
                 : std::max(x[i], 0.0) - x[i] * t[i] + std::log1p(std::exp(-std::fabs(x[i])));
  return total / static_cast<double>(x.size());
}

TensorDesc matrix_desc(int64_t n, int64_t c, int layout) {
  switch (layout) {
    case 0: return TensorDesc::packed(DType::F32, {n, c});
    case 1: return TensorDesc::strided(DType::F32, {n, c}, {1, n});          // column-major
    default: return TensorDesc::strided(DType::F32, {n, c}, {c + 3, 1});     // padded rows
  }
}

}  // namespace

TEST_CASE("softmax_cross_entropy_loss: loss and gradient") {
  const Handle h = Handle::cpu();
  for (int round = 0; round < (reduced_tests() ? 4 : 12); ++round) {
    const int64_t n = uniform_int(1, 9), c = uniform_int(1, 13);
    std::vector<double> xv = random_values(DType::F32, {n, c});
    for (double& v : xv) v = static_cast<float>(v * 4.0);
    std::vector<int32_t> labels(static_cast<size_t>(n));
    for (auto& l : labels) l = static_cast<int32_t>(uniform_int(0, c - 1));
    const float alpha = round % 2 ? 0.5f : 1.f, beta = round % 2 ? 0.25f : 0.f;
    CAPTURE(n);
    CAPTURE(c);
    const auto f = [&](const std::vector<double>& x) {
      return std::vector<double>{ce_ref(x, n, c, labels)};
    };
    const Vjp want = numeric_vjp(f, xv, {1.0});
    const HostTensor x = tensor_with(matrix_desc(n, c, round % 3), xv);
    HostTensor dx(matrix_desc(n, c, (round + 1) % 3));
    if (beta == 0.f) dx.poison(); else dx.fill_random();
    const HostTensor before = dx;
    const size_t bytes = softmax_cross_entropy_workspace_size(n);
    CHECK(bytes >= sizeof(float));
    std::vector<unsigned char> ws(bytes);
    float loss = std::nanf("");
    REQUIRE_OK(softmax_cross_entropy_loss(h, x.desc(), x.data(), labels.data(), ws.data(), bytes,
                                          &loss, alpha, beta, dx.desc(), dx.data()));
    CHECK(loss == doctest::Approx(f(xv)[0]).epsilon(1e-6));
    check_vjp(dx, before, want, alpha, beta);
  }
}

TEST_CASE("softmax_cross_entropy_loss is stable for large logits and NaN for bad labels") {
  const Handle h = Handle::cpu();
  const TensorDesc d = TensorDesc::packed(DType::F32, {2, 3});
  const float x[6] = {1e4f, -1e4f, 0.f, 50.f, 100.f, 89.f};
  const int32_t labels[2] = {1, 2};
  float dx[6], loss = 0.f, ws[4];
  REQUIRE_OK(softmax_cross_entropy_loss(h, d, x, labels, ws, sizeof ws, &loss, 1.f, 0.f, d, dx));
  CHECK(loss == doctest::Approx((2e4 + (100.0 + std::log1p(std::exp(-11.0) + std::exp(-50.0)) - 89.0)) / 2));
  for (float v : dx) CHECK(std::isfinite(v));
  const int32_t bad[2] = {0, 3};
  REQUIRE_OK(softmax_cross_entropy_loss(h, d, x, bad, ws, sizeof ws, &loss, 1.f, 0.f, d, dx));
  CHECK(std::isnan(loss));
  for (int j = 0; j < 3; ++j) CHECK(std::isfinite(dx[j]));
  for (int j = 3; j < 6; ++j) CHECK(std::isnan(dx[j]));
}

TEST_CASE("mse_loss and bce_with_logits_loss: loss and gradient") {
  const Handle h = Handle::cpu();
  for (bool mse : {true, false}) {
    for (int round = 0; round < (reduced_tests() ? 3 : 8); ++round) {
      const std::vector<int64_t> dims = random_dims(static_cast<int>(uniform_int(1, 4)), 1, 6);
      std::vector<double> xv = random_values(DType::F32, dims), tv = random_values(DType::F32, dims);
      for (double& v : xv) v = static_cast<float>(v * 5.0);
      if (!mse)
        for (double& v : tv) v = static_cast<float>(0.5 + 0.5 * v);  // probabilities
      const float alpha = round % 2 ? 0.5f : 1.f, beta = round % 2 ? 0.25f : 0.f;
      CAPTURE(mse);
      CAPTURE(dims_str(dims));
      const auto f = [&](const std::vector<double>& x) {
        return std::vector<double>{elementwise_ref(mse, x, tv)};
      };
      const Vjp want = numeric_vjp(f, xv, {1.0});
      const Layout lx = dims.size() >= 3 ? random_layout() : Layout::CHANNELS_FIRST;
      const HostTensor x = tensor_with(make_desc(DType::F32, dims, lx), xv);
      const HostTensor t = tensor_with(make_desc(DType::F32, dims, Layout::PADDED), tv);
      HostTensor dx(make_desc(DType::F32, dims, Layout::PADDED));
      if (beta == 0.f) dx.poison(); else dx.fill_random();
      const HostTensor before = dx;
      const size_t bytes = elementwise_loss_workspace_size(count(dims));
      std::vector<unsigned char> ws(bytes);
      float loss = std::nanf("");
      const auto routine = mse ? mse_loss : bce_with_logits_loss;
      REQUIRE_OK(routine(h, x.desc(), x.data(), t.desc(), t.data(), ws.data(), bytes, &loss, alpha,
                         beta, dx.desc(), dx.data()));
      CHECK(loss == doctest::Approx(f(xv)[0]).epsilon(1e-6));
      check_vjp(dx, before, want, alpha, beta);
    }
  }
}

TEST_CASE("bce_with_logits_loss is stable at large logits; losses reject bad input") {
  const Handle h = Handle::cpu();
  const TensorDesc d = TensorDesc::packed(DType::F32, {4});
  const float x[4] = {100.f, -100.f, 90.f, -95.f}, t[4] = {1.f, 0.f, 0.f, 1.f};
  float loss = 0.f, ws[4], dx[4];
  REQUIRE_OK(bce_with_logits_loss(h, d, x, d, t, ws, sizeof ws, &loss, 1.f, 0.f, d, dx));
  CHECK(loss == doctest::Approx((90.0 + 95.0) / 4));
  CHECK(dx[2] == doctest::Approx(0.25));
  CHECK(dx[3] == doctest::Approx(-0.25));

  CHECK_STATUS(mse_loss(h, d, x, d, t, nullptr, 0, nullptr, 1.f, 0.f, d, nullptr),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(mse_loss(h, d, x, d, t, nullptr, 0, &loss, 1.f, 0.f, d, nullptr),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(mse_loss(h, d, x, TensorDesc::packed(DType::F32, {2, 2}), t, ws, sizeof ws, &loss,
                        1.f, 0.f, d, dx),
               StatusCode::BAD_PARAM);
  const int32_t labels[4] = {};
  CHECK_STATUS(softmax_cross_entropy_loss(h, TensorDesc::packed(DType::F32, {1, 2, 2}), x, labels,
                                          ws, sizeof ws, &loss, 1.f, 0.f, d, nullptr),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(softmax_cross_entropy_loss(h, TensorDesc::packed(DType::F32, {2, 2}), x, nullptr,
                                          ws, sizeof ws, &loss, 1.f, 0.f, d, nullptr),
               StatusCode::BAD_PARAM);
}
