// prelu_backward (CPU): dx and dslope against central differences of the float64 reference PReLU,
// for scalar, per-channel and full slopes, random shapes and layouts, alpha/beta != (1, 0),
// poisoned outputs; in place over dy; invalid input.
#include <cmath>
#include <string>

#include "reference/prelu.h"
#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

TEST_CASE("prelu_backward matches central differences") {
  const Handle h = Handle::cpu();
  for (int round = 0; round < (reduced_tests() ? 6 : 18); ++round) {
    const int rank = static_cast<int>(uniform_int(2, 4));
    const std::vector<int64_t> dims = random_dims(rank, 1, 6);
    std::vector<int64_t> sdims(dims.size(), 1);
    if (round % 3 == 1) sdims[1] = dims[1];  // per channel
    if (round % 3 == 2) sdims = dims;         // full
    std::vector<double> xv = random_values(DType::F32, dims);
    for (double& v : xv)  // off the kink at 0
      if (std::fabs(v) < 1e-3) v = 2e-3;
    const std::vector<double> sv = random_values(DType::F32, sdims), dyv = random_values(DType::F32, dims);
    const float alpha = round % 2 ? 0.5f : 1.f, beta = round % 2 ? 0.25f : 0.f;
    const float ap = round % 2 ? 2.f : 1.f, bp = round % 2 ? -0.5f : 0.f;
    CAPTURE(dims_str(dims));
    CAPTURE(dims_str(sdims));
    const Vjp want_dx = numeric_vjp(
        [&](const std::vector<double>& x) { return ref::prelu(dims, x, sdims, sv); }, xv, dyv);
    const Vjp want_ds = numeric_vjp(
        [&](const std::vector<double>& s) { return ref::prelu(dims, xv, sdims, s); }, sv, dyv);
    const Layout lx = rank >= 3 ? random_layout() : Layout::CHANNELS_FIRST;
    const HostTensor x = tensor_with(make_desc(DType::F32, dims, lx), xv);
    const HostTensor s = tensor_with(make_desc(DType::F32, sdims, Layout::PADDED), sv);
    const HostTensor dy = tensor_with(make_desc(DType::F32, dims, Layout::PADDED), dyv);
    HostTensor dx(make_desc(DType::F32, dims, lx)), ds(make_desc(DType::F32, sdims, Layout::PADDED));
    if (beta == 0.f) dx.poison(); else dx.fill_random();
    if (bp == 0.f) ds.poison(); else ds.fill_random();
    const HostTensor dx0 = dx, ds0 = ds;
    REQUIRE_OK(prelu_backward(h, alpha, x.desc(), x.data(), s.desc(), s.data(), dy.desc(),
                              dy.data(), beta, dx.desc(), dx.data(), ap, bp, ds.desc(), ds.data()));
    check_vjp(dx, dx0, want_dx, alpha, beta);
    check_vjp(ds, ds0, want_ds, ap, bp);
  }
}

TEST_CASE("prelu_backward in place over dy, and invalid input") {
  const Handle h = Handle::cpu();
  const TensorDesc d = TensorDesc::packed(DType::F32, {2, 3, 4});
  const TensorDesc sd = TensorDesc::packed(DType::F32, {1, 3, 1});
  HostTensor x(d), s(sd), g(d), ds(sd), ds2(sd), separate(d);
  x.fill_random();
  s.fill_random();
  g.fill_random();
  separate.poison();
  ds.poison();
  ds2.poison();
  REQUIRE_OK(prelu_backward(h, 1.f, d, x.data(), sd, s.data(), d, g.data(), 0.f, d,
                            separate.data(), 1.f, 0.f, sd, ds.data()));
  HostTensor in_place = g;
  REQUIRE_OK(prelu_backward(h, 1.f, d, x.data(), sd, s.data(), d, in_place.data(), 0.f, d,
                            in_place.data(), 1.f, 0.f, sd, ds2.data()));
  check_output(in_place, g, separate.to_ref(), 0.0, 1.0);
  check_output(ds2, ds2, ds.to_ref(), 0.0, 1.0);

  float buf[64] = {};
  CHECK_STATUS(prelu_backward(h, 1.f, d, buf, sd, buf, d, buf, 0.f, d, nullptr, 1.f, 0.f, sd,
                              nullptr),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(prelu_backward(h, 1.f, d, buf, TensorDesc::packed(DType::F32, {1, 2, 1}), buf, d,
                              buf, 0.f, d, buf + 24, 1.f, 0.f, sd, nullptr),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(prelu_backward(h, 1.f, d, buf, sd, buf, d, buf + 24, 0.f, d, nullptr, 1.f, 0.f, sd,
                              buf + 24),
               StatusCode::BAD_PARAM);
}
