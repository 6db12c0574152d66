// lrn_cross_channel_backward (CPU) against central differences of the float64 reference LRN:
// odd and even windows, random shapes and layouts, alpha/beta != (1, 0), poisoned outputs;
// invalid input.
#include <string>

#include "reference/lrn.h"
#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

TEST_CASE("lrn_cross_channel_backward matches central differences") {
  const Handle h = Handle::cpu();
  for (int round = 0; round < (reduced_tests() ? 5 : 15); ++round) {
    LrnDesc lrn;
    lrn.n = uniform_int(1, 7);
    lrn.alpha = uniform(1e-4, 2.0);
    lrn.beta = uniform(0.1, 1.5);
    lrn.k = uniform(0.5, 2.0);
    const int rank = static_cast<int>(uniform_int(3, 5));
    const std::vector<int64_t> dims = random_dims(rank, 1, rank == 5 ? 3 : 6);
    std::vector<int64_t> d = dims;
    d[1] = uniform_int(1, 11);
    const float alpha = round % 2 ? 0.5f : 1.f, beta = round % 2 ? 0.25f : 0.f;
    CAPTURE(dims_str(d));
    CAPTURE(lrn.n);
    const std::vector<double> xv = random_values(DType::F32, d), dyv = random_values(DType::F32, d);
    const Vjp want = numeric_vjp(
        [&](const std::vector<double>& x) { return ref::lrn_cross_channel(lrn, d, x); }, xv, dyv);
    const HostTensor x = tensor_with(make_desc(DType::F32, d, random_layout()), xv);
    const HostTensor dy = tensor_with(make_desc(DType::F32, d, random_layout()), dyv);
    HostTensor dx(make_desc(DType::F32, d, random_layout()));
    if (beta == 0.f) dx.poison(); else dx.fill_random();
    const HostTensor before = dx;
    REQUIRE_OK(lrn_cross_channel_backward(h, lrn, alpha, x.desc(), x.data(), dy.desc(), dy.data(),
                                          beta, dx.desc(), dx.data()));
    check_vjp(dx, before, want, alpha, beta);
  }
}

TEST_CASE("lrn_cross_channel_backward rejects bad input, naming it") {
  const Handle h = Handle::cpu();
  const TensorDesc d = TensorDesc::nchw(DType::F32, 1, 4, 2, 2);
  float x[16] = {}, dy[16] = {}, dx[16] = {};
  LrnDesc bad;
  bad.n = 17;
  CHECK_STATUS(lrn_cross_channel_backward(h, bad, 1.f, d, x, d, dy, 0.f, d, dx),
               StatusCode::INVALID_VALUE);
  CHECK_STATUS(lrn_cross_channel_backward(h, LrnDesc{}, 1.f, d, x, d, dy, 0.f, d, dy),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(lrn_cross_channel_backward(h, LrnDesc{}, 1.f, d, x,
                                          TensorDesc::nchw(DType::F32, 1, 4, 4, 1), dy, 0.f, d, dx),
               StatusCode::BAD_PARAM);
}
