// resize_backward (CPU) against central differences of the float64 reference resize: nearest
// (every rounding) and linear, every coordinate mode, up- and downsampling, given scales, 1D to
// 3D, random layouts, alpha/beta != (1, 0), poisoned outputs; invalid input.
#include <string>

#include "reference/tensor_ops.h"
#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

TEST_CASE("resize_backward matches central differences") {
  const Handle h = Handle::cpu();
  const ResizeCoord coords[] = {ResizeCoord::HALF_PIXEL, ResizeCoord::ALIGN_CORNERS,
                                ResizeCoord::ASYMMETRIC, ResizeCoord::PYTORCH_HALF_PIXEL,
                                ResizeCoord::TF_HALF_PIXEL_FOR_NN};
  for (ResizeMode mode : {ResizeMode::NEAREST, ResizeMode::LINEAR}) {
    for (ResizeCoord coord : coords) {
      for (int round = 0; round < (reduced_tests() ? 2 : 5); ++round) {
        ResizeDesc r;
        r.mode = mode;
        r.coord = coord;
        r.nearest = static_cast<ResizeNearest>(uniform_int(0, 3));
        const int spatial = static_cast<int>(uniform_int(1, 3));
        std::vector<int64_t> xd = {uniform_int(1, 2), uniform_int(1, 3)}, yd = xd;
        for (int k = 0; k < spatial; ++k) {
          xd.push_back(uniform_int(1, spatial == 3 ? 3 : 5));
          yd.push_back(uniform_int(1, spatial == 3 ? 4 : 9));
          if (round % 2 == 1)  // given scales, as ONNX models with `scales` pass them
            r.scales[k] = static_cast<float>(yd.back()) / static_cast<float>(xd.back());
        }
        const float alpha = round % 2 ? 0.5f : 1.f, beta = round % 2 ? 0.25f : 0.f;
        CAPTURE(static_cast<int>(mode));
        CAPTURE(static_cast<int>(coord));
        CAPTURE(static_cast<int>(r.nearest));
        CAPTURE(dims_str(xd));
        CAPTURE(dims_str(yd));
        const std::vector<double> xv = random_values(DType::F32, xd), dyv = random_values(DType::F32, yd);
        const Vjp want = numeric_vjp(
            [&](const std::vector<double>& x) { return ref::resize(r, x, xd, yd); }, xv, dyv);
        const HostTensor dy = tensor_with(make_desc(DType::F32, yd, random_layout()), dyv);
        HostTensor dx(make_desc(DType::F32, xd, random_layout()));
        if (beta == 0.f) dx.poison(); else dx.fill_random();
        const HostTensor before = dx;
        REQUIRE_OK(resize_backward(h, r, alpha, dy.desc(), dy.data(), beta, dx.desc(), dx.data()));
        check_vjp(dx, before, want, alpha, beta);
      }
    }
  }
}

TEST_CASE("resize_backward rejects bad input, naming it") {
  const Handle h = Handle::cpu();
  float buf[64] = {};
  const TensorDesc x = TensorDesc::nchw(DType::F32, 1, 2, 2, 2), y = TensorDesc::nchw(DType::F32, 1, 3, 4, 4);
  CHECK_STATUS(resize_backward(h, ResizeDesc{}, 1.f, y, buf, 0.f, x, buf + 48), StatusCode::BAD_PARAM);
  ResizeDesc bad;
  bad.scales[0] = -1.f;
  CHECK_STATUS(resize_backward(h, bad, 1.f, TensorDesc::nchw(DType::F32, 1, 2, 4, 4), buf, 0.f, x,
                               buf + 48),
               StatusCode::INVALID_VALUE);
}
