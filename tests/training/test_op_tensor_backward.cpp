// op_tensor_backward and reduce_backward (CPU) against central differences of the float64
// references: every op, broadcasting both ways (lower ranks included), random layouts,
// alpha1/alpha2 scaling, alpha/beta != (1, 0), poisoned outputs; MAX/MIN ties; POW's zeros;
// invalid input.
#include <cmath>
#include <string>

#include "reference/tensor_math.h"
#include "reference/tensor_ops.h"
#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

namespace {

const TensorOp kOps[] = {TensorOp::ADD, TensorOp::SUB, TensorOp::MUL, TensorOp::DIV,
                         TensorOp::MIN, TensorOp::MAX, TensorOp::POW, TensorOp::MOD, TensorOp::MOD_FLOOR};

// dims with some entries set to 1 (broadcast), possibly with leading dims dropped.
std::vector<int64_t> broadcast_dims(const std::vector<int64_t>& c, bool drop_leading) {
  std::vector<int64_t> d = c;
  for (auto& v : d)
    if (uniform_int(0, 2) == 0) v = 1;
  if (drop_leading && d.size() > 1) d.erase(d.begin());
  return d;
}

}  // namespace

TEST_CASE("op_tensor_backward matches central differences for every op") {
  const Handle h = Handle::cpu();
  for (TensorOp op : kOps) {
    for (int round = 0; round < (reduced_tests() ? 3 : 8); ++round) {
      const std::vector<int64_t> cd = random_dims(static_cast<int>(uniform_int(2, 4)), 1, 5);
      const std::vector<int64_t> ad = broadcast_dims(cd, round % 4 == 1),
                                 bd = broadcast_dims(cd, round % 4 == 2);
      const float alpha1 = round % 2 ? 1.5f : 1.f, alpha2 = round % 3 ? -0.75f : 1.f;
      std::vector<double> av = random_values(DType::F32, ad), bv = random_values(DType::F32, bd);
      if (op == TensorOp::DIV)  // keep the divisor away from 0
        for (double& v : bv) v = static_cast<float>(v >= 0 ? 0.5 + v : v - 0.5);
      if (op == TensorOp::POW)  // a positive base (log u), exponents in [-1, 1]
        for (double& v : av) v = static_cast<float>(0.5 + std::fabs(v));
      // MOD: no quotient u / v within 1e-3 of an integer, where fmod jumps (central differences
      // would straddle it), and divisors away from 0.
      while (op == TensorOp::MOD || op == TensorOp::MOD_FLOOR) {
        for (double& v : bv) v = static_cast<float>(v >= 0 ? 0.5 + v : v - 0.5);
        const std::vector<double> q = ref::op_tensor(TensorOp::DIV, alpha1, ad, av, alpha2, bd, bv, cd);
        bool close = false;
        for (double v : q) close = close || std::fabs(v - std::round(v)) < 1e-3;
        if (!close) break;
        av = random_values(DType::F32, ad);
        bv = random_values(DType::F32, bd);
      }
      // MIN / MAX: no pair within 1e-3 of a tie, where central differences straddle the kink
      // (random f32 values tie exactly now and then; ties have their own test case below).
      while (op == TensorOp::MIN || op == TensorOp::MAX) {
        const std::vector<double> gap =
            ref::op_tensor(TensorOp::SUB, alpha1, ad, av, alpha2, bd, bv, cd);
        bool close = false;
        for (double g : gap) close = close || std::fabs(g) < 1e-3;
        if (!close) break;
        av = random_values(DType::F32, ad);
        bv = random_values(DType::F32, bd);
      }
      const std::vector<double> dcv = random_values(DType::F32, cd);
      const float alpha = round % 2 ? 0.5f : 1.f, beta = round % 2 ? 0.25f : 0.f;
      CAPTURE(static_cast<int>(op));
      CAPTURE(dims_str(cd));
      CAPTURE(dims_str(ad));
      CAPTURE(dims_str(bd));
      const Vjp want_a = numeric_vjp(
          [&](const std::vector<double>& x) {
            return ref::op_tensor(op, alpha1, ad, x, alpha2, bd, bv, cd);
          },
          av, dcv);
      const Vjp want_b = numeric_vjp(
          [&](const std::vector<double>& x) {
            return ref::op_tensor(op, alpha1, ad, av, alpha2, bd, x, cd);
          },
          bv, dcv);
      const HostTensor a = tensor_with(make_desc(DType::F32, ad, Layout::PADDED), av);
      const HostTensor b = tensor_with(make_desc(DType::F32, bd, Layout::REVERSED), bv);
      const HostTensor dc = tensor_with(make_desc(DType::F32, cd, random_layout()), dcv);
      HostTensor da(make_desc(DType::F32, ad, Layout::REVERSED)),
          db(make_desc(DType::F32, bd, Layout::PADDED));
      for (HostTensor* t : {&da, &db}) {
        if (beta == 0.f) t->poison(); else t->fill_random();
      }
      const HostTensor da0 = da, db0 = db;
      REQUIRE_OK(op_tensor_backward(h, op, alpha1, a.desc(), a.data(), alpha2, b.desc(), b.data(),
                                    dc.desc(), dc.data(), alpha, beta, da.desc(), da.data(),
                                    db.desc(), db.data()));
      check_vjp(da, da0, want_a, alpha, beta);
      check_vjp(db, db0, want_b, alpha, beta);
    }
  }
}

TEST_CASE("op_tensor_backward: MAX and MIN split ties, invalid input is rejected") {
  const Handle h = Handle::cpu();
  const TensorDesc d = TensorDesc::packed(DType::F32, {3});
  const float a[3] = {1.f, 2.f, 3.f}, b[3] = {2.f, 2.f, 1.f}, dc[3] = {4.f, 4.f, 4.f};
  float da[3], db[3];
  REQUIRE_OK(op_tensor_backward(h, TensorOp::MAX, 1.f, d, a, 1.f, d, b, d, dc, 1.f, 0.f, d, da, d,
                                db));
  CHECK(da[0] == 0.f);
  CHECK(db[0] == 4.f);
  CHECK(da[1] == 2.f);
  CHECK(db[1] == 2.f);
  CHECK(da[2] == 4.f);
  CHECK(db[2] == 0.f);
  REQUIRE_OK(op_tensor_backward(h, TensorOp::MIN, 1.f, d, a, 1.f, d, b, d, dc, 1.f, 0.f, d, da, d,
                                db));
  CHECK(da[0] == 4.f);
  CHECK(db[0] == 0.f);
  CHECK(da[1] == 2.f);

  // POW at 0: du is 0 where the exponent is 0 (not 0 * inf), dv is 0 where the base is 0 and the
  // exponent >= 0 (not 0 * -inf), as torch.pow; a negative base's dv is NaN (log).
  {
    const float pa[3] = {0.f, 0.f, -2.f}, pb[3] = {0.f, 2.f, 3.f};
    REQUIRE_OK(op_tensor_backward(h, TensorOp::POW, 1.f, d, pa, 1.f, d, pb, d, dc, 1.f, 0.f, d, da,
                                  d, db));
    CHECK(da[0] == 0.f);
    CHECK(db[0] == 0.f);
    CHECK(da[1] == 0.f);  // 2 * 0^1 * 4
    CHECK(db[1] == 0.f);
    CHECK(da[2] == doctest::Approx(4.f * 3.f * 4.f));  // 3 (-2)^2 * 4
    CHECK(std::isnan(db[2]));
  }
  CHECK_STATUS(op_tensor_backward(h, TensorOp::ADD, 1.f, d, a, 1.f, d, b, d, dc, 1.f, 0.f, d,
                                  nullptr, d, nullptr),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(op_tensor_backward(h, TensorOp::ADD, 1.f, TensorDesc::packed(DType::F32, {2}), a,
                                  1.f, d, b, d, dc, 1.f, 0.f, d, da, d, nullptr),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(op_tensor_backward(h, TensorOp::ADD, 1.f, d, a, 1.f, d, b, d, dc, 1.f, 0.f, d, da, d,
                                  da),
               StatusCode::BAD_PARAM);
}

TEST_CASE("reduce_backward (SUM, MEAN) matches central differences") {
  const Handle h = Handle::cpu();
  for (ReduceOp op : {ReduceOp::SUM, ReduceOp::MEAN}) {
    for (int round = 0; round < (reduced_tests() ? 3 : 8); ++round) {
      const std::vector<int64_t> xd = random_dims(static_cast<int>(uniform_int(1, 4)), 1, 5);
      std::vector<int64_t> yd = xd;
      for (auto& v : yd)
        if (uniform_int(0, 1) == 0) v = 1;
      const std::vector<double> xv = random_values(DType::F32, xd), dyv = random_values(DType::F32, yd);
      const float alpha = round % 2 ? 0.5f : 1.f, beta = round % 2 ? 0.25f : 0.f;
      CAPTURE(dims_str(xd));
      CAPTURE(dims_str(yd));
      const Vjp want = numeric_vjp(
          [&](const std::vector<double>& x) { return ref::reduce(op, x, xd, yd); }, xv, dyv);
      const HostTensor dy = tensor_with(make_desc(DType::F32, yd, Layout::PADDED), dyv);
      HostTensor dx(make_desc(DType::F32, xd, xd.size() >= 3 ? random_layout() : Layout::PADDED));
      if (beta == 0.f) dx.poison(); else dx.fill_random();
      const HostTensor before = dx;
      REQUIRE_OK(reduce_backward(h, op, alpha, dy.desc(), dy.data(), beta, dx.desc(), dx.data()));
      check_vjp(dx, before, want, alpha, beta);
    }
  }
  float buf[8] = {};
  const TensorDesc d = TensorDesc::packed(DType::F32, {2, 2});
  CHECK_STATUS(reduce_backward(h, ReduceOp::MAX, 1.f, d, buf, 0.f, d, buf + 4),
               StatusCode::NOT_SUPPORTED);
}
