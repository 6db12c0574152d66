// softmax_backward (CPU) against central differences of the float64 reference softmax, for the
// accurate and log algorithms, both modes, random shapes and layouts, alpha/beta != (1, 0),
// poisoned outputs; in place; invalid input.
#include <string>

#include "reference/softmax.h"
#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

TEST_CASE("softmax_backward matches central differences") {
  const Handle h = Handle::cpu();
  const int rounds = reduced_tests() ? 2 : 5;
  for (SoftmaxAlgo algo : {SoftmaxAlgo::ACCURATE, SoftmaxAlgo::FAST, SoftmaxAlgo::LOG}) {
    for (SoftmaxMode mode : {SoftmaxMode::INSTANCE, SoftmaxMode::CHANNEL}) {
      for (int round = 0; round < rounds; ++round) {
        const int rank = static_cast<int>(uniform_int(3, 5));
        const std::vector<int64_t> dims = random_dims(rank, 1, rank == 5 ? 3 : 5);
        const Layout ly = random_layout(), ldy = random_layout(), ldx = random_layout();
        const float alpha = round % 2 ? 0.5f : 1.f, beta = round % 2 ? 0.25f : 0.f;
        CAPTURE(static_cast<int>(algo));
        CAPTURE(static_cast<int>(mode));
        CAPTURE(dims_str(dims));
        CAPTURE(std::string(layout_name(ly)) + " " + layout_name(ldy) + " " + layout_name(ldx));
        CAPTURE(alpha);
        CAPTURE(beta);
        std::vector<double> xv = random_values(DType::F32, dims);
        for (double& v : xv) v *= 3.0;
        const std::vector<double> dyv = random_values(DType::F32, dims);
        const auto f = [&](const std::vector<double>& x) {
          return ref::softmax_forward(algo, mode, dims, x);
        };
        const Vjp want = numeric_vjp(f, xv, dyv);
        // The routine takes the forward output y (rounded to f32 when stored).
        const HostTensor y = tensor_with(make_desc(DType::F32, dims, ly), f(xv));
        const HostTensor dy = tensor_with(make_desc(DType::F32, dims, ldy), dyv);
        HostTensor dx(make_desc(DType::F32, dims, ldx));
        if (beta == 0.f) dx.poison(); else dx.fill_random();
        const HostTensor before = dx;
        REQUIRE_OK(softmax_backward(h, algo, mode, alpha, y.desc(), y.data(), dy.desc(), dy.data(),
                                    beta, dx.desc(), dx.data()));
        check_vjp(dx, before, want, alpha, beta);
      }
    }
  }
}

TEST_CASE("softmax_backward in place over dy, and invalid input") {
  const Handle h = Handle::cpu();
  const std::vector<int64_t> dims = {2, 5, 3};
  const TensorDesc d = make_desc(DType::F32, dims, Layout::CHANNELS_LAST);
  HostTensor y(d), g(d), separate(d);
  y.fill_random(0.0, 0.5);
  g.fill_random();
  separate.poison();
  REQUIRE_OK(softmax_backward(h, SoftmaxAlgo::ACCURATE, SoftmaxMode::CHANNEL, 1.f, d, y.data(), d,
                              g.data(), 0.f, d, separate.data()));
  HostTensor in_place = g;
  REQUIRE_OK(softmax_backward(h, SoftmaxAlgo::ACCURATE, SoftmaxMode::CHANNEL, 1.f, d, y.data(), d,
                              in_place.data(), 0.f, d, in_place.data()));
  check_output(in_place, g, separate.to_ref(), 0.0, 1.0);

  float buf[30] = {};
  const TensorDesc p = TensorDesc::packed(DType::F32, {2, 5, 3});
  CHECK_STATUS(softmax_backward(h, static_cast<SoftmaxAlgo>(7), SoftmaxMode::CHANNEL, 1.f, p, buf,
                                p, buf, 0.f, p, buf),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(softmax_backward(h, SoftmaxAlgo::LOG, SoftmaxMode::CHANNEL, 1.f, p, buf,
                                TensorDesc::packed(DType::F32, {2, 3, 5}), buf, 0.f, p, buf),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(softmax_backward(h, SoftmaxAlgo::LOG, SoftmaxMode::CHANNEL, 1.f,
                                TensorDesc::packed(DType::F32, {30}), buf,
                                TensorDesc::packed(DType::F32, {30}), buf, 0.f,
                                TensorDesc::packed(DType::F32, {30}), buf),
               StatusCode::BAD_PARAM);
}
