// batchnorm_forward_training and batchnorm_backward (CPU): the forward (output, running-stat
// update, saved statistics) against a float64 reference; the backward (dx, dscale, dbias, with
// saved or recomputed statistics) against central differences of that reference; random
// shapes and layouts, alpha/beta != (1, 0), poisoned outputs; invalid input.
#include <cmath>
#include <string>

#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

namespace {

struct Stats {
  std::vector<double> mean, var;  // biased variance
};

// Per channel over N and the spatial dims of packed x.
Stats batch_stats(const std::vector<int64_t>& dims, const std::vector<double>& x) {
  const int64_t n = dims[0], c = dims[1], inner = count(dims) / n / c;
  Stats s;
  s.mean.assign(static_cast<size_t>(c), 0.0);
  s.var.assign(static_cast<size_t>(c), 0.0);
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum = 0.0, sq = 0.0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j) sum += x[static_cast<size_t>((i * c + ch) * inner + j)];
    const double mean = sum / static_cast<double>(n * inner);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j) {
        const double d = x[static_cast<size_t>((i * c + ch) * inner + j)] - mean;
        sq += d * d;
      }
    s.mean[static_cast<size_t>(ch)] = mean;
    s.var[static_cast<size_t>(ch)] = sq / static_cast<double>(n * inner);
  }
  return s;
}

std::vector<double> bn_train(const std::vector<int64_t>& dims, const std::vector<double>& x,
                             const std::vector<double>& scale, const std::vector<double>& bias,
                             double eps) {
  const Stats s = batch_stats(dims, x);
  const int64_t c = dims[1], inner = count(dims) / dims[0] / c;
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t ch = static_cast<size_t>(static_cast<int64_t>(i) / inner % c);
    y[i] = scale[ch] * (x[i] - s.mean[ch]) / std::sqrt(s.var[ch] + eps) + bias[ch];
  }
  return y;
}

std::vector<float> to_float(const std::vector<double>& v) { return {v.begin(), v.end()}; }

// A packed 1D tensor of C floats (the per-channel parameters as HostTensors).
HostTensor param_tensor(const std::vector<double>& v) {
  return tensor_with(TensorDesc::packed(DType::F32, {static_cast<int64_t>(v.size())}), v);
}

}  // namespace

TEST_CASE("batchnorm_forward_training matches the float64 reference, running stats included") {
  const Handle h = Handle::cpu();
  for (int round = 0; round < (reduced_tests() ? 4 : 12); ++round) {
    const int rank = static_cast<int>(uniform_int(3, 5));
    const std::vector<int64_t> dims = random_dims(rank, 1, rank == 5 ? 4 : 7);
    std::vector<int64_t> d = dims;
    if (count(d) / d[1] < 2) d[0] = 2;  // the running variance needs two values per channel
    const int64_t c = d[1], m = count(d) / c;
    const double eps = 1e-5, momentum = 0.1;
    std::vector<double> xv = random_values(DType::F32, d);
    for (double& v : xv) v = static_cast<float>(3.0 + 2.0 * v);  // a mean away from 0
    const std::vector<double> scale = random_values(DType::F32, {c}), bias = random_values(DType::F32, {c});
    const std::vector<double> rm0 = random_values(DType::F32, {c});
    std::vector<double> rv0 = random_values(DType::F32, {c});
    for (double& v : rv0) v = static_cast<float>(std::fabs(v) + 0.5);
    const float alpha = round % 2 ? 0.5f : 1.f, beta = round % 2 ? 0.25f : 0.f;
    CAPTURE(dims_str(d));
    const HostTensor x = tensor_with(make_desc(DType::F32, d, random_layout()), xv);
    HostTensor y(make_desc(DType::F32, d, random_layout()));
    if (beta == 0.f) y.poison(); else y.fill_random();
    const HostTensor before = y;
    std::vector<float> rm = to_float(rm0), rv = to_float(rv0), sm(static_cast<size_t>(c)),
                       si(static_cast<size_t>(c));
    const std::vector<float> sc = to_float(scale), bi = to_float(bias);
    REQUIRE_OK(batchnorm_forward_training(h, alpha, beta, x.desc(), x.data(), y.desc(), y.data(),
                                          sc.data(), bi.data(), momentum, rm.data(), rv.data(),
                                          eps, sm.data(), si.data()));
    check_output(y, before, blend(bn_train(d, xv, scale, bias, eps), alpha, beta, before.to_ref()),
                 1e-5);
    const Stats s = batch_stats(d, xv);
    for (int64_t ch = 0; ch < c; ++ch) {
      const size_t i = static_cast<size_t>(ch);
      const double unbiased = s.var[i] * static_cast<double>(m) / static_cast<double>(m - 1);
      CHECK(rm[i] == doctest::Approx((1 - momentum) * rm0[i] + momentum * s.mean[i]).epsilon(1e-6));
      CHECK(rv[i] == doctest::Approx((1 - momentum) * rv0[i] + momentum * unbiased).epsilon(1e-6));
      CHECK(sm[i] == doctest::Approx(s.mean[i]).epsilon(1e-6));
      CHECK(si[i] == doctest::Approx(1.0 / std::sqrt(s.var[i] + eps)).epsilon(1e-6));
    }
  }
}

TEST_CASE("batchnorm_backward matches central differences for x, scale and bias") {
  const Handle h = Handle::cpu();
  for (int round = 0; round < (reduced_tests() ? 4 : 12); ++round) {
    const int rank = static_cast<int>(uniform_int(3, 5));
    std::vector<int64_t> d = random_dims(rank, 1, rank == 5 ? 3 : 6);
    if (count(d) / d[1] < 2) d[0] = 2;
    const int64_t c = d[1];
    const double eps = 1e-3;
    const std::vector<double> xv = random_values(DType::F32, d), dyv = random_values(DType::F32, d);
    const std::vector<double> scale = random_values(DType::F32, {c}), bias = random_values(DType::F32, {c});
    const bool saved = round % 3 != 2;
    const float ad = round % 2 ? 0.5f : 1.f, bd = round % 2 ? -0.5f : 0.f;
    const float ap = round % 2 ? 2.f : 1.f, bp = round % 2 ? 0.75f : 0.f;
    CAPTURE(dims_str(d));
    CAPTURE(saved);
    const Vjp want_dx = numeric_vjp(
        [&](const std::vector<double>& x) { return bn_train(d, x, scale, bias, eps); }, xv, dyv);
    const Vjp want_ds = numeric_vjp(
        [&](const std::vector<double>& s) { return bn_train(d, xv, s, bias, eps); }, scale, dyv);
    const Vjp want_db = numeric_vjp(
        [&](const std::vector<double>& b) { return bn_train(d, xv, scale, b, eps); }, bias, dyv);
    const HostTensor x = tensor_with(make_desc(DType::F32, d, random_layout()), xv);
    const HostTensor dy = tensor_with(make_desc(DType::F32, d, random_layout()), dyv);
    HostTensor dx(make_desc(DType::F32, d, random_layout()));
    HostTensor ds = param_tensor(random_values(DType::F32, {c})), db = param_tensor(random_values(DType::F32, {c}));
    if (bd == 0.f) dx.poison(); else dx.fill_random();
    if (bp == 0.f) { ds.poison(); db.poison(); }
    const HostTensor dx0 = dx, ds0 = ds, db0 = db;
    // Saved statistics as the forward would store them (f32).
    const Stats s = batch_stats(d, xv);
    std::vector<float> sm(static_cast<size_t>(c)), si(static_cast<size_t>(c));
    for (size_t i = 0; i < sm.size(); ++i) {
      sm[i] = static_cast<float>(s.mean[i]);
      si[i] = static_cast<float>(1.0 / std::sqrt(s.var[i] + eps));
    }
    const std::vector<float> sc = to_float(scale);
    REQUIRE_OK(batchnorm_backward(h, ad, bd, ap, bp, x.desc(), x.data(), dy.desc(), dy.data(),
                                  dx.desc(), dx.data(), sc.data(), static_cast<float*>(ds.data()),
                                  static_cast<float*>(db.data()), eps, saved ? sm.data() : nullptr,
                                  saved ? si.data() : nullptr));
    // dx = k (dy - mean(dy) - xhat mean(dy xhat)), k = scale * inv_std: its terms cancel (fully
    // with 2 values per channel), so f32 rounding is judged against the size of k * dy.
    std::vector<double> kdy(dyv.size());
    const int64_t inner = count(d) / d[0] / c;
    for (size_t i = 0; i < kdy.size(); ++i) {
      const size_t ch = static_cast<size_t>(static_cast<int64_t>(i) / inner % c);
      kdy[i] = scale[ch] / std::sqrt(s.var[ch] + eps) * dyv[i];
    }
    check_vjp(dx, dx0, want_dx, ad, bd, 1e-5, rms(kdy));
    check_vjp(ds, ds0, want_ds, ap, bp);
    check_vjp(db, db0, want_db, ap, bp);
  }
}

TEST_CASE("batchnorm training routines reject bad input, naming it") {
  const Handle h = Handle::cpu();
  const TensorDesc d = TensorDesc::nchw(DType::F32, 2, 3, 2, 2);
  std::vector<float> x(24), y(24), p(3), q(3);
  CHECK_STATUS(batchnorm_forward_training(h, 1.f, 0.f, d, x.data(), d, y.data(), p.data(), p.data(),
                                          0.1, p.data(), nullptr, 1e-5, nullptr, nullptr),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(batchnorm_forward_training(h, 1.f, 0.f, d, x.data(), d, y.data(), p.data(), p.data(),
                                          1.5, nullptr, nullptr, 1e-5, nullptr, nullptr),
               StatusCode::INVALID_VALUE);
  CHECK_STATUS(batchnorm_forward_training(h, 1.f, 0.f, d, x.data(), d, y.data(), p.data(), p.data(),
                                          0.1, nullptr, nullptr, 0.0, nullptr, nullptr),
               StatusCode::INVALID_VALUE);
  const TensorDesc one = TensorDesc::nchw(DType::F32, 1, 3, 1, 1);
  CHECK_STATUS(batchnorm_forward_training(h, 1.f, 0.f, one, x.data(), one, y.data(), p.data(),
                                          p.data(), 0.1, p.data(), q.data(), 1e-5, nullptr, nullptr),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(batchnorm_backward(h, 1.f, 0.f, 1.f, 0.f, d, x.data(), d, y.data(), d, y.data(),
                                  p.data(), nullptr, nullptr, 1e-5, nullptr, nullptr),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(batchnorm_backward(h, 1.f, 0.f, 1.f, 0.f, d, x.data(), d, y.data(),
                                  TensorDesc::nchw(DType::F32, 2, 3, 2, 1), x.data(), p.data(),
                                  nullptr, nullptr, 1e-5, nullptr, nullptr),
               StatusCode::BAD_PARAM);
}

TEST_CASE("batchnorm training workspace: none on the CPU, checked where given") {
  const Handle h = Handle::cpu();
  const TensorDesc d = TensorDesc::nchw(DType::F32, 2, 3, 2, 2);
  size_t bytes = 1;
  REQUIRE_OK(batchnorm_training_workspace_size(h, d, &bytes));
  CHECK(bytes == 0);
  CHECK_STATUS(batchnorm_training_workspace_size(h, d, nullptr), StatusCode::BAD_PARAM);
  CHECK_STATUS(batchnorm_training_workspace_size(h, TensorDesc::packed(DType::F32, {2, 3}), &bytes),
               StatusCode::BAD_PARAM);
  std::vector<float> x(24, 1.f), y(24), y2(24), p(3, 1.f), q(3, 0.f), ws(4);
  for (int i = 0; i < 24; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i % 5);
  // A workspace the CPU does not need changes nothing; a null one with a size is refused.
  REQUIRE_OK(batchnorm_forward_training(h, 1.f, 0.f, d, x.data(), d, y.data(), p.data(), q.data(), 0.1, nullptr,
                                        nullptr, 1e-5, nullptr, nullptr));
  REQUIRE_OK(batchnorm_forward_training(h, 1.f, 0.f, d, x.data(), d, y2.data(), p.data(), q.data(), 0.1, nullptr,
                                        nullptr, 1e-5, nullptr, nullptr, ws.data(), 16));
  CHECK(y == y2);
  CHECK_STATUS(batchnorm_forward_training(h, 1.f, 0.f, d, x.data(), d, y2.data(), p.data(), q.data(), 0.1, nullptr,
                                          nullptr, 1e-5, nullptr, nullptr, nullptr, 16),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(batchnorm_backward(h, 1.f, 0.f, 1.f, 0.f, d, x.data(), d, y.data(), d, y2.data(), p.data(), nullptr,
                                  nullptr, 1e-5, nullptr, nullptr, nullptr, 16),
               StatusCode::BAD_PARAM);
}
