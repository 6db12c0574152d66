// layernorm_backward (CPU): dx, dscale and dbias against central differences of the float64
// reference (tests/reference/layernorm), every axis, random shapes and layouts, with and without
// scale, alpha/beta != (1, 0), poisoned outputs; each gradient alone; invalid input.
#include <cmath>
#include <cstring>
#include <string>

#include "reference/layernorm.h"
#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

namespace {

// The whole span unchanged, byte for byte (a gradient that was not asked for).
bool untouched(const HostTensor& a, const HostTensor& before) {
  return std::memcmp(a.data(), before.data(), a.desc().span_bytes()) == 0;
}

HostTensor param_tensor(const std::vector<double>& v) {
  return tensor_with(TensorDesc::packed(DType::F32, {static_cast<int64_t>(v.size())}), v);
}

}  // namespace

TEST_CASE("layernorm_backward matches central differences for x, scale and bias") {
  const Handle h = Handle::cpu();
  for (int round = 0; round < (reduced_tests() ? 6 : 16); ++round) {
    const int rank = static_cast<int>(uniform_int(1, 5));
    std::vector<int64_t> d = random_dims(rank, 1, rank >= 4 ? 4 : 6);
    const int axis = static_cast<int>(uniform_int(0, rank - 1));
    int64_t inner = 1;
    for (int i = axis; i < rank; ++i) inner *= d[static_cast<size_t>(i)];
    if (inner < 2) {  // a group of one element normalizes to 0: nothing to differentiate
      d.back() += 2;
      inner *= 3;
    }
    const double eps = 1e-3;
    const bool with_scale = round % 4 != 3;
    std::vector<double> xv = random_values(DType::F32, d);
    for (double& v : xv) v = static_cast<float>(2.0 + 3.0 * v);  // a mean away from 0
    const std::vector<double> dyv = random_values(DType::F32, d);
    const std::vector<double> scale = with_scale ? random_values(DType::F32, {inner}) : std::vector<double>();
    const std::vector<double> bias = random_values(DType::F32, {inner});
    const float ad = round % 2 ? 0.5f : 1.f, bd = round % 2 ? -0.5f : 0.f;
    const float ap = round % 2 ? 2.f : 1.f, bp = round % 2 ? 0.75f : 0.f;
    CAPTURE(dims_str(d));
    CAPTURE(axis);
    CAPTURE(with_scale);
    auto f = [&](const std::vector<double>& x, const std::vector<double>& s, const std::vector<double>& b) {
      return ref::layernorm(d, axis, x, s, b, eps);
    };
    const Vjp want_dx = numeric_vjp([&](const std::vector<double>& x) { return f(x, scale, bias); }, xv, dyv);
    const Vjp want_db = numeric_vjp([&](const std::vector<double>& b) { return f(xv, scale, b); }, bias, dyv);
    // dscale is the gradient of the scale, which exists whether or not the op has one (1s).
    const std::vector<double> s1 = with_scale ? scale : std::vector<double>(static_cast<size_t>(inner), 1.0);
    const Vjp want_ds = numeric_vjp([&](const std::vector<double>& s) { return f(xv, s, bias); }, s1, dyv);
    const HostTensor x = tensor_with(make_desc(DType::F32, d, random_layout()), xv);
    const HostTensor dy = tensor_with(make_desc(DType::F32, d, random_layout()), dyv);
    HostTensor dx(make_desc(DType::F32, d, random_layout()));
    HostTensor ds = param_tensor(random_values(DType::F32, {inner})), db = param_tensor(random_values(DType::F32, {inner}));
    if (bd == 0.f) dx.poison(); else dx.fill_random();
    if (bp == 0.f) { ds.poison(); db.poison(); }
    const HostTensor dx0 = dx, ds0 = ds, db0 = db;
    const std::vector<float> sc(scale.begin(), scale.end());
    std::vector<double> ws(layernorm_backward_workspace_size(x.desc(), axis) / sizeof(double) + 1);
    // Each gradient alone in some rounds (the others null), all three in the rest.
    const int only = round % 5 == 4 ? static_cast<int>(uniform_int(0, 2)) : -1;
    void* dxp = only < 0 || only == 0 ? dx.data() : nullptr;
    float* dsp = only < 0 || only == 1 ? static_cast<float*>(ds.data()) : nullptr;
    float* dbp = only < 0 || only == 2 ? static_cast<float*>(db.data()) : nullptr;
    CAPTURE(only);
    REQUIRE_OK(layernorm_backward(h, axis, ad, bd, ap, bp, x.desc(), x.data(), dy.desc(), dy.data(), dx.desc(), dxp,
                                  with_scale ? sc.data() : nullptr, dsp, dbp, eps, ws.data(),
                                  ws.size() * sizeof(double)));
    // dx = inv_std (g - mean(g) - xhat mean(g xhat)): its terms cancel (fully in a group of 2),
    // so f32 rounding is judged against the size of inv_std * g.
    std::vector<double> kdy(dyv.size());
    {
      const size_t m = static_cast<size_t>(inner);
      for (size_t gi = 0; gi < xv.size() / m; ++gi) {
        double mean = 0, var = 0;
        for (size_t i = 0; i < m; ++i) mean += xv[gi * m + i] / static_cast<double>(m);
        for (size_t i = 0; i < m; ++i) var += (xv[gi * m + i] - mean) * (xv[gi * m + i] - mean) / static_cast<double>(m);
        for (size_t i = 0; i < m; ++i) kdy[gi * m + i] = s1[i] / std::sqrt(var + eps) * dyv[gi * m + i];
      }
    }
    if (dxp) check_vjp(dx, dx0, want_dx, ad, bd, 1e-5, rms(kdy)); else CHECK(untouched(dx, dx0));
    if (dsp) check_vjp(ds, ds0, want_ds, ap, bp); else CHECK(untouched(ds, ds0));
    if (dbp) check_vjp(db, db0, want_db, ap, bp); else CHECK(untouched(db, db0));
  }
}

TEST_CASE("layernorm_backward rejects bad input, naming it") {
  const Handle h = Handle::cpu();
  const TensorDesc d = TensorDesc::packed(DType::F32, {3, 4});
  std::vector<float> x(12), dy(12), dx(12), p(4), q(4);
  std::vector<double> ws(8);
  const size_t wb = ws.size() * sizeof(double);
  CHECK(layernorm_backward_workspace_size(d, 1) == 3 * 2 * sizeof(double));
  CHECK_STATUS(layernorm_backward(h, 2, 1.f, 0.f, 1.f, 0.f, d, x.data(), d, dy.data(), d, dx.data(), p.data(),
                                  nullptr, nullptr, 1e-5, nullptr, 0),
               StatusCode::BAD_PARAM);  // axis
  CHECK_STATUS(layernorm_backward(h, 1, 1.f, 0.f, 1.f, 0.f, d, x.data(), d, dy.data(), d, dx.data(), p.data(),
                                  nullptr, nullptr, 0.0, nullptr, 0),
               StatusCode::INVALID_VALUE);  // epsilon
  CHECK_STATUS(layernorm_backward(h, 1, 1.f, 0.f, 1.f, 0.f, d, x.data(), d, dy.data(), d, nullptr, p.data(),
                                  nullptr, nullptr, 1e-5, ws.data(), wb),
               StatusCode::BAD_PARAM);  // nothing asked
  CHECK_STATUS(layernorm_backward(h, 1, 1.f, 0.f, 1.f, 0.f, d, x.data(), d, dy.data(), d, dy.data(), p.data(),
                                  nullptr, nullptr, 1e-5, nullptr, 0),
               StatusCode::BAD_PARAM);  // dx == dy
  CHECK_STATUS(layernorm_backward(h, 1, 1.f, 0.f, 1.f, 0.f, d, x.data(), d, dy.data(), d, dx.data(), p.data(),
                                  q.data(), nullptr, 1e-5, ws.data(), 8),
               StatusCode::BAD_PARAM);  // workspace too small
  CHECK_STATUS(layernorm_backward(h, 1, 1.f, 0.f, 1.f, 0.f, d, x.data(), TensorDesc::packed(DType::F32, {4, 3}),
                                  dy.data(), d, dx.data(), p.data(), nullptr, nullptr, 1e-5, nullptr, 0),
               StatusCode::BAD_PARAM);  // dy's dims
}
