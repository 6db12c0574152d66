// pool_backward (CPU) against central differences of the float64 reference pooling: max and both
// averages, 1D/2D/3D, padding, strides, dilation, ceil_mode, global pooling, random layouts,
// alpha/beta != (1, 0), poisoned outputs; max's tie and NaN rules; invalid input.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "reference/pool.h"
#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

namespace {

const char* mode_name(PoolMode m) {
  return m == PoolMode::MAX ? "max" : (m == PoolMode::AVG_INCLUDE_PAD ? "avg_incl" : "avg_excl");
}

// A random pooling problem: spatial rank 1..3, window up to 3, stride up to 3, padding below
// the window, dilation 2 only without padding (so every window holds a tap of x).
PoolDesc random_pool(PoolMode mode, int spatial, bool global) {
  if (global) return PoolDesc::global(mode, spatial);
  int64_t window[3], pb[3], pe[3], stride[3], dil[3];
  for (int i = 0; i < spatial; ++i) {
    window[i] = uniform_int(1, 3);
    stride[i] = uniform_int(1, 3);
    dil[i] = window[i] > 1 && uniform_int(0, 3) == 0 ? 2 : 1;
    pb[i] = dil[i] == 1 ? uniform_int(0, window[i] - 1) : 0;
    pe[i] = dil[i] == 1 ? uniform_int(0, window[i] - 1) : 0;
  }
  return PoolDesc::make(mode, spatial, window, pb, pe, stride, dil, uniform_int(0, 1) == 1);
}

// Values that differ pairwise by at least 2 / count: no two elements of a max window within the
// finite-difference step of each other (a near tie would make the max's derivative ill-defined).
std::vector<double> distinct_values(int64_t count) {
  std::vector<int64_t> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng());
  std::vector<double> v(order.size());
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(-1.0 + 2.0 * static_cast<double>(order[i]) / static_cast<double>(count));
  return v;
}

}  // namespace

TEST_CASE("pool_backward matches central differences") {
  const Handle h = Handle::cpu();
  const int rounds = reduced_tests() ? 4 : 14;
  for (PoolMode mode : {PoolMode::MAX, PoolMode::AVG_INCLUDE_PAD, PoolMode::AVG_EXCLUDE_PAD}) {
    for (int round = 0; round < rounds; ++round) {
      const int spatial = static_cast<int>(uniform_int(1, 3));
      const bool global = round % 7 == 6;
      PoolDesc pool;
      std::vector<int64_t> dims;
      TensorDesc xd;
      int64_t out[5];
      do {  // until the (dilated) window fits
        pool = random_pool(mode, spatial, global);
        dims = {uniform_int(1, 2), uniform_int(1, 3)};
        for (int i = 0; i < spatial; ++i)
          dims.push_back(uniform_int(spatial == 3 ? 3 : 4, spatial == 3 ? 5 : 8));
        xd = make_desc(DType::F32, dims, random_layout());
      } while (!pool_output_dims(xd, pool, out).ok());
      const std::vector<int64_t> ydims(out, out + dims.size());
      const float alpha = round % 2 ? -0.5f : 1.f, beta = round % 2 ? 0.25f : 0.f;
      CAPTURE(mode_name(mode));
      CAPTURE(dims_str(dims));
      CAPTURE(dims_str(ydims));
      CAPTURE(global);
      CAPTURE(pool.ceil_mode());
      CAPTURE(alpha);
      const std::vector<double> xv = distinct_values(count(dims));
      const std::vector<double> dyv = random_values(DType::F32, ydims);
      const Vjp want = numeric_vjp(
          [&](const std::vector<double>& x) { return ref::pool_forward(pool, dims, x); }, xv, dyv);
      const HostTensor x = tensor_with(xd, xv);
      const HostTensor dy = tensor_with(make_desc(DType::F32, ydims, random_layout()), dyv);
      HostTensor dx(make_desc(DType::F32, dims, random_layout()));
      if (beta == 0.f) dx.poison(); else dx.fill_random();
      const HostTensor before = dx;
      REQUIRE_OK(pool_backward(h, pool, alpha, x.desc(), x.data(), dy.desc(), dy.data(), beta,
                               dx.desc(), dx.data()));
      check_vjp(dx, before, want, alpha, beta);
    }
  }
}

TEST_CASE("max pool_backward: ties go to the first maximum, NaN windows to their NaN") {
  const Handle h = Handle::cpu();
  const TensorDesc xd = TensorDesc::ncw(DType::F32, 1, 1, 4);
  const TensorDesc yd = TensorDesc::ncw(DType::F32, 1, 1, 2);
  const int64_t window = 2, stride = 2;
  const PoolDesc pool = PoolDesc::make(PoolMode::MAX, 1, &window, nullptr, nullptr, &stride);
  const float nan = std::nanf("");
  const float x[4] = {3.f, 3.f, 1.f, nan};
  const float dy[2] = {5.f, 7.f};
  float dx[4];
  REQUIRE_OK(pool_backward(h, pool, 1.f, xd, x, yd, dy, 0.f, xd, dx));
  CHECK(dx[0] == 5.f);
  CHECK(dx[1] == 0.f);
  CHECK(dx[2] == 0.f);
  CHECK(dx[3] == 7.f);
}

TEST_CASE("pool_backward rejects bad input, naming it") {
  const Handle h = Handle::cpu();
  const TensorDesc xd = TensorDesc::nchw(DType::F32, 1, 2, 4, 4);
  const TensorDesc yd = TensorDesc::nchw(DType::F32, 1, 2, 2, 2);
  const PoolDesc pool = PoolDesc::pool2d(PoolMode::MAX, 2, 2, 0, 0, 2, 2);
  float x[32] = {}, dy[8] = {}, dx[32] = {};
  CHECK_STATUS(pool_backward(h, pool, 1.f, xd, x, xd, dy, 0.f, xd, dx), StatusCode::BAD_PARAM);
  CHECK_STATUS(pool_backward(h, pool, 1.f, xd, x, yd, dy, 0.f, yd, dx), StatusCode::BAD_PARAM);
  CHECK_STATUS(pool_backward(h, pool, 1.f, xd, x, yd, dy, 0.f, xd, x), StatusCode::BAD_PARAM);
  CHECK_STATUS(pool_backward(h, pool, 1.f, xd, x, yd, nullptr, 0.f, xd, dx), StatusCode::BAD_PARAM);
  CHECK_STATUS(pool_backward(h, PoolDesc::pool2d(PoolMode::MAX, 0, 2), 1.f, xd, x, yd, dy, 0.f, xd,
                             dx),
               StatusCode::BAD_PARAM);
}
