// gemm_backward (CPU) against central differences of the float64 reference GEMM: transposes,
// batches, bias shapes, strided operands, alpha/beta != (1, 0), poisoned outputs; invalid input.
#include <string>

#include "reference/gemm.h"
#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

namespace {

std::vector<int64_t> operand_dims(bool batched, int64_t batch, int64_t rows, int64_t cols,
                                  bool trans) {
  std::vector<int64_t> d;
  if (batched) d.push_back(batch);
  d.push_back(trans ? cols : rows);
  d.push_back(trans ? rows : cols);
  return d;
}

// Packed, or with padded row strides.
TensorDesc operand_desc(const std::vector<int64_t>& dims, bool padded) {
  const int r = static_cast<int>(dims.size());
  int64_t strides[3];
  int64_t s = 1;
  for (int i = r - 1; i >= 0; --i) {
    strides[i] = s;
    s *= dims[static_cast<size_t>(i)] + (padded && i == r - 1 ? 2 : 0);
  }
  return TensorDesc::strided(DType::F32, r, dims.data(), strides);
}

}  // namespace

TEST_CASE("gemm_backward matches central differences") {
  const Handle h = Handle::cpu();
  for (int round = 0; round < (reduced_tests() ? 8 : 24); ++round) {
    const bool batched = round % 3 == 2, ta = round % 2 == 1, tb = (round / 2) % 2 == 1;
    const int64_t batch = uniform_int(1, 3), m = uniform_int(1, 6), k = uniform_int(1, 7),
                  n = uniform_int(1, 6);
    const std::vector<int64_t> ad = operand_dims(batched, batch, m, k, ta),
                               bd = operand_dims(batched, batch, k, n, tb),
                               yd = operand_dims(batched, batch, m, n, false);
    std::vector<int64_t> biasd = yd;
    biasd[biasd.size() - 2] = 1;  // a fully connected layer's per-column bias
    if (batched) biasd[0] = 1;
    const std::vector<double> av = random_values(DType::F32, ad), bv = random_values(DType::F32, bd),
                              biasv = random_values(DType::F32, biasd),
                              dyv = random_values(DType::F32, yd);
    const float alpha = round % 2 ? 0.5f : 1.f, beta = round % 4 == 3 ? 0.25f : 0.f;
    CAPTURE(ta);
    CAPTURE(tb);
    CAPTURE(dims_str(ad));
    CAPTURE(dims_str(bd));
    const auto fa = [&](const std::vector<double>& x) {
      return ref::gemm(x, ad, ta, bv, bd, tb, biasv, biasd, yd);
    };
    const auto fb = [&](const std::vector<double>& x) {
      return ref::gemm(av, ad, ta, x, bd, tb, biasv, biasd, yd);
    };
    const auto fbias = [&](const std::vector<double>& x) {
      return ref::gemm(av, ad, ta, bv, bd, tb, x, biasd, yd);
    };
    const HostTensor a = tensor_with(operand_desc(ad, round % 5 == 1), av);
    const HostTensor b = tensor_with(operand_desc(bd, round % 5 == 2), bv);
    const HostTensor dy = tensor_with(operand_desc(yd, round % 5 == 3), dyv);
    HostTensor da(operand_desc(ad, round % 5 == 4)), db(operand_desc(bd, false)),
        dbias(operand_desc(biasd, false));
    for (HostTensor* t : {&da, &db, &dbias}) {
      if (beta == 0.f) t->poison(); else t->fill_random();
    }
    const HostTensor da0 = da, db0 = db, dbias0 = dbias;
    REQUIRE_OK(gemm_backward(h, GemmDesc{ta, tb}, alpha, a.desc(), a.data(), b.desc(), b.data(),
                             dy.desc(), dy.data(), beta, da.desc(), da.data(), db.desc(),
                             db.data(), dbias.desc(), dbias.data()));
    check_vjp(da, da0, numeric_vjp(fa, av, dyv), alpha, beta);
    check_vjp(db, db0, numeric_vjp(fb, bv, dyv), alpha, beta);
    check_vjp(dbias, dbias0, numeric_vjp(fbias, biasv, dyv), alpha, beta);
  }
}

TEST_CASE("gemm_backward rejects bad input, naming it") {
  const Handle h = Handle::cpu();
  float buf[64] = {};
  const TensorDesc a = TensorDesc::packed(DType::F32, {1, 2, 3}), b = TensorDesc::packed(DType::F32, {2, 3, 4}),
                   y = TensorDesc::packed(DType::F32, {2, 2, 4});
  // a broadcasts its batch: its gradient would be a sum over the batch.
  CHECK_STATUS(gemm_backward(h, GemmDesc{}, 1.f, a, buf, b, buf, y, buf, 0.f, a, buf + 32,
                             TensorDesc(), nullptr, TensorDesc(), nullptr),
               StatusCode::NOT_SUPPORTED);
  CHECK_STATUS(gemm_backward(h, GemmDesc{}, 1.f, a, buf, b, buf, y, buf, 0.f, TensorDesc(),
                             nullptr, TensorDesc(), nullptr, TensorDesc(), nullptr),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(gemm_backward(h, GemmDesc{}, 1.f, b, buf, b, buf, y, buf, 0.f, TensorDesc(), nullptr,
                             TensorDesc::packed(DType::F32, {2, 4, 3}), buf + 32, TensorDesc(),
                             nullptr),
               StatusCode::BAD_PARAM);
}
