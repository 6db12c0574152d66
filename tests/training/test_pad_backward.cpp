// pad_backward (CPU) against central differences of the float64 reference pad: constant,
// reflect and edge modes, positive and negative (cropping) pads, random ranks and layouts,
// alpha/beta != (1, 0), poisoned outputs; invalid input.
#include <string>

#include "reference/tensor_ops.h"
#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

TEST_CASE("pad_backward matches central differences") {
  const Handle h = Handle::cpu();
  for (PadMode mode : {PadMode::CONSTANT, PadMode::REFLECT, PadMode::EDGE}) {
    for (int round = 0; round < (reduced_tests() ? 4 : 12); ++round) {
      const int rank = static_cast<int>(uniform_int(1, 4));
      std::vector<int64_t> xd = random_dims(rank, 1, 5), begin(xd.size()), end(xd.size()), yd;
      for (size_t i = 0; i < xd.size(); ++i) {
        const int64_t limit = mode == PadMode::REFLECT ? xd[i] - 1 : 3;
        begin[i] = uniform_int(round % 3 == 2 ? -1 : 0, limit);
        end[i] = uniform_int(round % 3 == 2 ? -1 : 0, limit);
        if (xd[i] + begin[i] + end[i] < 1) begin[i] = end[i] = 0;
        if (mode == PadMode::REFLECT) {  // a crop still needs pads < the dim
          if (begin[i] >= xd[i]) begin[i] = 0;
          if (end[i] >= xd[i]) end[i] = 0;
        }
        yd.push_back(xd[i] + begin[i] + end[i]);
      }
      const float alpha = round % 2 ? 0.5f : 1.f, beta = round % 2 ? 0.25f : 0.f;
      CAPTURE(static_cast<int>(mode));
      CAPTURE(dims_str(xd));
      CAPTURE(dims_str(begin));
      CAPTURE(dims_str(end));
      const std::vector<double> xv = random_values(DType::F32, xd), dyv = random_values(DType::F32, yd);
      const Vjp want = numeric_vjp(
          [&](const std::vector<double>& x) { return ref::pad(mode, x, xd, begin, end, 0.5); },
          xv, dyv);
      const Layout l = rank >= 3 ? random_layout() : Layout::PADDED;
      const HostTensor dy = tensor_with(make_desc(DType::F32, yd, l), dyv);
      HostTensor dx(make_desc(DType::F32, xd, Layout::PADDED));
      if (beta == 0.f) dx.poison(); else dx.fill_random();
      const HostTensor before = dx;
      REQUIRE_OK(pad_backward(h, mode, begin.data(), end.data(), alpha, dy.desc(), dy.data(), beta,
                              dx.desc(), dx.data()));
      check_vjp(dx, before, want, alpha, beta);
    }
  }
}

TEST_CASE("pad_backward rejects bad input, naming it") {
  const Handle h = Handle::cpu();
  const TensorDesc x = TensorDesc::packed(DType::F32, {2, 3});
  const TensorDesc y = TensorDesc::packed(DType::F32, {2, 5});
  const int64_t begin[2] = {0, 1}, end[2] = {0, 1}, none[2] = {0, 0}, big[2] = {0, 3};
  float buf[32] = {};
  // dy is 5 wide but dx padded by (1, 0) is 4.
  CHECK_STATUS(pad_backward(h, PadMode::CONSTANT, begin, none, 1.f, y, buf, 0.f, x, buf + 16),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(pad_backward(h, PadMode::REFLECT, big, begin, 1.f,
                            TensorDesc::packed(DType::F32, {2, 7}), buf, 0.f, x, buf + 16),
               StatusCode::INVALID_VALUE);
  CHECK_STATUS(pad_backward(h, PadMode::EDGE, begin, end, 1.f, y, buf, 0.f, x, buf),
               StatusCode::BAD_PARAM);
}
