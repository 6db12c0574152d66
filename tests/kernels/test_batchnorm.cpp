// batchnorm_forward_inference on every backend against the float64 reference.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/util.h"

// ---- The float64 reference (ref::), written here because no other test uses it: naive batch
// normalization from the definition, in double.

namespace jet {
namespace ref {

// x: packed row-major with dims (N, C, spatial...); scale, bias, mean, var: C values each.
// Returns scale[c] * (x - mean[c]) / sqrt(var[c] + epsilon) + bias[c], packed like x.
inline std::vector<double> batchnorm_inference(const std::vector<int64_t>& dims,
                                               const std::vector<double>& x,
                                               const std::vector<double>& scale,
                                               const std::vector<double>& bias,
                                               const std::vector<double>& mean,
                                               const std::vector<double>& var, double epsilon) {
  const int64_t n = dims[0], channels = dims[1];
  int64_t plane = 1;  // elements per (n, c): the product of the spatial dims
  for (size_t i = 2; i < dims.size(); ++i) plane *= dims[i];
  std::vector<double> y(x.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t p = 0; p < plane; ++p) {
        const size_t i = static_cast<size_t>((b * channels + c) * plane + p);
        y[i] = scale[c] * (x[i] - mean[c]) / std::sqrt(var[c] + epsilon) + bias[c];
      }
  return y;
}

}  // namespace ref
}  // namespace jet

using namespace jet;
using namespace jet::test;

namespace {

// Per-channel parameters as the routine takes them (f32), plus float64 copies for the reference.
struct BnParams {
  std::vector<float> scale, bias, mean, var;

  explicit BnParams(int64_t channels) {
    for (int64_t c = 0; c < channels; ++c) {
      scale.push_back(static_cast<float>(uniform(-1.5, 1.5)));
      bias.push_back(static_cast<float>(uniform(-1.0, 1.0)));
      mean.push_back(static_cast<float>(uniform(-1.0, 1.0)));
      var.push_back(static_cast<float>(uniform(0.05, 2.0)));  // variances are positive
    }
  }
  static std::vector<double> wide(const std::vector<float>& v) { return {v.begin(), v.end()}; }

  // The largest magnitude of the terms an output sums, for x in [-lim, lim]: the result can cancel
  // to far below them (a single element gives check_output no rms to go by), while its rounding
  // error follows them.
  double terms(double lim, double eps) const {
    double t = 0;
    for (size_t c = 0; c < scale.size(); ++c)
      t = std::max(t, std::fabs(scale[c]) * (lim + std::fabs(mean[c])) / std::sqrt(var[c] + eps) +
                          std::fabs(bias[c]));
    return t;
  }
};

}  // namespace

TEST_CASE("batchnorm_forward_inference matches the float64 reference") {
  for (const Handle& h : test_handles()) {
  // {2, 130, 3} crosses the CPU backend's 128-channel block; rank 3, 4 and 5 all appear.
  const std::vector<std::vector<int64_t>> shapes = {
      {1, 1, 1},       {2, 3, 7},   {1, 7, 3, 5},  {3, 13, 1, 2},
      {2, 3, 1, 4, 5}, {2, 130, 3}, {1, 1, 13, 1}};
  const std::pair<float, float> scalings[] = {{1.f, 0.f}, {0.5f, 0.25f}};
  const Layout layouts[] = {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED,
                            Layout::REVERSED};
  for (DType t : {DType::F32, DType::F16}) {
    for (const auto& dims : shapes) {
      for (double eps : {1e-5, 0.1}) {
        for (Layout lx : layouts) {
          for (Layout ly : layouts) {
            for (const auto& scaling : scalings) {
              const float alpha = scaling.first, beta = scaling.second;
              CAPTURE(std::string(backend_name(h)));
              CAPTURE(std::string(dtype_name(t)));
              CAPTURE(dims_str(dims));
              CAPTURE(eps);
              CAPTURE(std::string(layout_name(lx)));
              CAPTURE(std::string(layout_name(ly)));
              CAPTURE(alpha);
              CAPTURE(beta);
              const BnParams p(dims[1]);
              HostTensor x(make_desc(t, dims, lx));
              x.fill_random(-2.0, 2.0);
              if (specials_turn()) x.plant_specials();  // NaN and +-inf in, as ONNX gives them out
              HostTensor y(make_desc(t, dims, ly));
              if (beta == 0.f) y.poison(); else y.fill_random();
              const HostTensor before = y;
              Staging st(h);
              REQUIRE_OK(batchnorm_forward_inference(h, alpha, beta, x.desc(), st.in(x), y.desc(),
                                                     st.out(y), st.in(p.scale), st.in(p.bias),
                                                     st.in(p.mean), st.in(p.var), eps));
              st.finish();
              const auto op = ref::batchnorm_inference(
                  dims, x.to_ref(), BnParams::wide(p.scale), BnParams::wide(p.bias),
                  BnParams::wide(p.mean), BnParams::wide(p.var), eps);
              // y before blending is within [-1, 1] (fill_random).
              check_output(y, before, blend(op, alpha, beta, before.to_ref()), tol_for(t),
                           alpha * p.terms(2.0, eps) + (beta != 0.f ? beta : 0.0));
            }
          }
        }
      }
    }
  }
  }
}

TEST_CASE("batchnorm_forward_inference on large tensors, NCHW and NHWC, many channels") {
  // Inner dims that are multiples of 8 (the CUDA vector loop) and odd ones (the scalar loop);
  // 2500 channels exceed the CUDA backend's shared-memory table of per-channel terms.
  const std::vector<std::vector<int64_t>> shapes = {
      {2, 64, 24, 32}, {2, 67, 15, 9}, {1, 2500, 4, 8}, {2, 24, 4, 8, 16}};
  for (const Handle& h : test_handles()) {
    for (DType t : {DType::F32, DType::F16}) {
      for (const auto& dims : shapes) {
        for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST}) {
          const float alpha = t == DType::F32 ? 1.f : 0.5f, beta = t == DType::F32 ? 0.f : 0.25f;
          CAPTURE(std::string(backend_name(h)));
          CAPTURE(std::string(dtype_name(t)));
          CAPTURE(dims_str(dims));
          CAPTURE(std::string(layout_name(l)));
          const BnParams p(dims[1]);
          HostTensor x(make_desc(t, dims, l));
          x.fill_random(-2.0, 2.0);
          HostTensor y(make_desc(t, dims, l));
          if (beta == 0.f) y.poison(); else y.fill_random();
          const HostTensor before = y;
          Staging st(h);
          REQUIRE_OK(batchnorm_forward_inference(h, alpha, beta, x.desc(), st.in(x), y.desc(),
                                                 st.out(y), st.in(p.scale), st.in(p.bias),
                                                 st.in(p.mean), st.in(p.var), 1e-5));
          st.finish();
          const auto op = ref::batchnorm_inference(
              dims, x.to_ref(), BnParams::wide(p.scale), BnParams::wide(p.bias),
              BnParams::wide(p.mean), BnParams::wide(p.var), 1e-5);
          check_output(y, before, blend(op, alpha, beta, before.to_ref()), tol_for(t));
        }
      }
    }
  }
}

TEST_CASE("batchnorm_forward_inference works in place") {
  for (const Handle& h : test_handles())
  for (DType t : {DType::F32, DType::F16}) {
    for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST}) {
      CAPTURE(std::string(backend_name(h)));
      CAPTURE(std::string(dtype_name(t)));
      CAPTURE(std::string(layout_name(l)));
      const std::vector<int64_t> dims = {2, 5, 3, 3};
      const BnParams p(dims[1]);
      HostTensor x(make_desc(t, dims, l));
      x.fill_random(-2, 2);
      const HostTensor before = x;
      Staging st(h);
      void* xy = st.out(x);
      REQUIRE_OK(batchnorm_forward_inference(h, 0.5f, 0.25f, x.desc(), xy, x.desc(), xy,
                                             st.in(p.scale), st.in(p.bias), st.in(p.mean),
                                             st.in(p.var), 1e-3));
      st.finish();
      const auto op = ref::batchnorm_inference(dims, before.to_ref(), BnParams::wide(p.scale),
                                               BnParams::wide(p.bias), BnParams::wide(p.mean),
                                               BnParams::wide(p.var), 1e-3);
      check_output(x, before, blend(op, 0.5, 0.25, before.to_ref()), tol_for(t));
    }
  }
}

TEST_CASE("batchnorm_forward_inference rejects invalid input") {
  const Handle h = Handle::cpu();
  const TensorDesc d = TensorDesc::nchw(DType::F32, 1, 2, 3, 3);
  const TensorDesc d_wider = TensorDesc::nchw(DType::F32, 1, 2, 3, 4);
  const TensorDesc d_3ch = TensorDesc::nchw(DType::F32, 1, 3, 3, 3);
  const TensorDesc d_nhwc = TensorDesc::nhwc(DType::F32, 1, 2, 3, 3);
  const TensorDesc d_zero = TensorDesc::nchw(DType::F32, 1, 0, 3, 3);
  HostTensor x(d), y(d);
  x.fill_random();
  const BnParams p(2);
  const float* s = p.scale.data();
  const float* b = p.bias.data();
  const float* m = p.mean.data();
  const float* v = p.var.data();
  const auto run = [&](const TensorDesc& xd, const void* xp, const TensorDesc& yd, void* yp,
                       const float* sp, const float* bp, const float* mp, const float* vp,
                       double eps) {
    return batchnorm_forward_inference(h, 1.f, 0.f, xd, xp, yd, yp, sp, bp, mp, vp, eps);
  };
  const StatusCode bad = StatusCode::BAD_PARAM;
  const double eps = 1e-5;
  CHECK(run(d, x.data(), d, y.data(), s, b, m, v, eps).ok());
  // Null pointers.
  CHECK_STATUS(run(d, nullptr, d, y.data(), s, b, m, v, eps), bad);
  CHECK_STATUS(run(d, x.data(), d, nullptr, s, b, m, v, eps), bad);
  CHECK_STATUS(run(d, x.data(), d, y.data(), nullptr, b, m, v, eps), bad);
  CHECK_STATUS(run(d, x.data(), d, y.data(), s, nullptr, m, v, eps), bad);
  CHECK_STATUS(run(d, x.data(), d, y.data(), s, b, nullptr, v, eps), bad);
  CHECK_STATUS(run(d, x.data(), d, y.data(), s, b, m, nullptr, eps), bad);
  // Mismatched dims (spatial, channels), dtype mix.
  CHECK_STATUS(run(d, x.data(), d_wider, y.data(), s, b, m, v, eps), bad);
  CHECK_STATUS(run(d, x.data(), d_3ch, y.data(), s, b, m, v, eps), bad);
  CHECK_STATUS(run(d, x.data(), d.with_dtype(DType::F16), y.data(), s, b, m, v, eps), bad);
  // Bad descriptors: rank 2 and rank 6 (not N, C, 1-3 spatial), zero dim, overlapping strides.
  const TensorDesc rank2 = TensorDesc::packed(DType::F32, {2, 9});
  CHECK_STATUS(run(rank2, x.data(), rank2, y.data(), s, b, m, v, eps), bad);
  const TensorDesc rank6 = TensorDesc::packed(DType::F32, {1, 2, 1, 3, 1, 3});
  CHECK_STATUS(run(rank6, x.data(), rank6, y.data(), s, b, m, v, eps), bad);
  CHECK_STATUS(run(d_zero, x.data(), d, y.data(), s, b, m, v, eps), bad);
  const TensorDesc overlapping = TensorDesc::strided(DType::F32, {1, 2, 3, 3}, {9, 1, 1, 1});
  CHECK_STATUS(run(overlapping, x.data(), d, y.data(), s, b, m, v, eps), bad);
  // In place with two different layouts.
  CHECK_STATUS(run(d, x.data(), d_nhwc, x.data(), s, b, m, v, eps), bad);
  // Epsilon must be finite and > 0.
  const StatusCode invalid = StatusCode::INVALID_VALUE;
  CHECK_STATUS(run(d, x.data(), d, y.data(), s, b, m, v, 0.0), invalid);
  CHECK_STATUS(run(d, x.data(), d, y.data(), s, b, m, v, -1e-5), invalid);
  CHECK_STATUS(run(d, x.data(), d, y.data(), s, b, m, v, std::nan("")), invalid);
  CHECK_STATUS(run(d, x.data(), d, y.data(), s, b, m, v, HUGE_VAL), invalid);
}
