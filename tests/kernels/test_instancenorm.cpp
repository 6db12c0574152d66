// instancenorm_forward on every backend against the float64 reference: ranks 3..5, planes of one
// element, a large plane with a mean far from zero (catches E[x^2] - E[x]^2 variance), layouts,
// alpha/beta, in place, invalid input.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/util.h"

// ---- The float64 reference (ref::), written here because no other test uses it: naive instance
// normalization from the definition (ONNX InstanceNormalization), in double: per (n, c) plane,
// mean = sum / count, var = sum (x - mean)^2 / count.

namespace jet {
namespace ref {

// x: packed row-major with dims (N, C, spatial...); scale, bias: C values each. Returns
// scale[c] * (x - mean) / sqrt(var + epsilon) + bias[c], packed like x, with mean and the biased
// variance (divided by the count) of each (n, c) plane.
inline std::vector<double> instancenorm(const std::vector<int64_t>& dims,
                                        const std::vector<double>& x,
                                        const std::vector<double>& scale,
                                        const std::vector<double>& bias, double epsilon) {
  const int64_t n = dims[0], channels = dims[1];
  int64_t plane = 1;  // elements per (n, c): the product of the spatial dims
  for (size_t i = 2; i < dims.size(); ++i) plane *= dims[i];
  std::vector<double> y(x.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t c = 0; c < channels; ++c) {
      const size_t base = static_cast<size_t>((b * channels + c) * plane);
      double sum = 0.0;
      for (int64_t p = 0; p < plane; ++p) sum += x[base + static_cast<size_t>(p)];
      const double mean = sum / static_cast<double>(plane);
      double squares = 0.0;
      for (int64_t p = 0; p < plane; ++p) {
        const double d = x[base + static_cast<size_t>(p)] - mean;
        squares += d * d;
      }
      const double var = squares / static_cast<double>(plane);
      for (int64_t p = 0; p < plane; ++p) {
        const size_t i = base + static_cast<size_t>(p);
        y[i] = scale[c] * (x[i] - mean) / std::sqrt(var + epsilon) + bias[c];
      }
    }
  return y;
}

}  // namespace ref
}  // namespace jet

using namespace jet;
using namespace jet::test;

namespace {

// Per-channel parameters as the routine takes them (f32), plus float64 copies for the reference.
struct InParams {
  std::vector<float> scale, bias;

  explicit InParams(int64_t channels) {
    for (int64_t c = 0; c < channels; ++c) {
      scale.push_back(static_cast<float>(uniform(-1.5, 1.5)));
      bias.push_back(static_cast<float>(uniform(-1.0, 1.0)));
    }
  }
  static std::vector<double> wide(const std::vector<float>& v) { return {v.begin(), v.end()}; }
};

// Random values offset + uniform(-spread, spread), rounded to dtype t (packed, logical order).
std::vector<double> offset_values(DType t, const std::vector<int64_t>& dims, double offset,
                                  double spread) {
  HostTensor h(TensorDesc::packed(t, static_cast<int>(dims.size()), dims.data()));
  h.fill_random(offset - spread, offset + spread);
  return h.to_ref();
}

// One run on one backend: x (values given) in layout lx, y in layout ly, checked against the
// reference.
void run_case(const Handle& h, DType t, const std::vector<int64_t>& dims,
              const std::vector<double>& xv, Layout lx, Layout ly, float alpha, float beta,
              double eps) {
  CAPTURE(std::string(backend_name(h)));
  CAPTURE(std::string(dtype_name(t)));
  CAPTURE(dims_str(dims));
  CAPTURE(std::string(layout_name(lx)));
  CAPTURE(std::string(layout_name(ly)));
  CAPTURE(alpha);
  CAPTURE(beta);
  CAPTURE(eps);
  const InParams p(dims[1]);
  std::vector<double> xs = xv;
  if (specials_turn()) plant_specials(&xs);  // NaN and +-inf in, as ONNX gives them out
  const HostTensor x = tensor_with(make_desc(t, dims, lx), xs);
  HostTensor y(make_desc(t, dims, ly));
  if (beta == 0.f) y.poison(); else y.fill_random();
  const HostTensor before = y;
  Staging st(h);
  REQUIRE_OK(instancenorm_forward(h, alpha, beta, x.desc(), st.in(x), y.desc(), st.out(y),
                                  st.in(p.scale), st.in(p.bias), eps));
  st.finish();
  const auto op = ref::instancenorm(dims, xs, InParams::wide(p.scale), InParams::wide(p.bias), eps);
  check_output(y, before, blend(op, alpha, beta, before.to_ref()), tol_for(t));
}

}  // namespace

TEST_CASE("instancenorm_forward matches the float64 reference") {
  // Ranks 3, 4 and 5; planes of one element ({1, 1, 1}, {3, 5, 1, 1}), odd sizes, a 1-wide H.
  const std::vector<std::vector<int64_t>> shapes = {
      {1, 1, 1},       {2, 3, 7},          {1, 7, 3, 5}, {3, 5, 1, 1},
      {2, 3, 1, 4, 5}, {2, 130, 3},        {1, 1, 13, 1}, {2, 4, 3, 2, 3}};
  const std::pair<float, float> scalings[] = {{1.f, 0.f}, {0.5f, 0.25f}};
  const Layout layouts[] = {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED,
                            Layout::REVERSED};
  for (const Handle& h : test_handles())
    for (DType t : {DType::F32, DType::F16})
      for (const auto& dims : shapes)
        for (double eps : {1e-5, 0.1})
          for (Layout lx : layouts)
            for (Layout ly : layouts)
              for (const auto& scaling : scalings)
                run_case(h, t, dims, offset_values(t, dims, 0.0, 2.0), lx, ly, scaling.first,
                         scaling.second, eps);
}

TEST_CASE("instancenorm_forward on large planes with a mean far from zero") {
  // 300 x 301 planes of 100 + noise: a one-pass E[x^2] - E[x]^2 in f32 loses most digits of the
  // variance here. f32 also gets 1000 + 0.01 noise (a mean 10^5 times the spread); f16 cannot
  // store such data (its spacing at 1000 is 0.5).
  struct Large {
    std::vector<int64_t> dims;
    double offset, spread;
    bool f16;
  };
  const Large cases[] = {
      {{1, 2, 300, 301}, 100.0, 1.0, true},
      {{1, 2, 300, 301}, 1000.0, 0.01, false},
      {{2, 3, 37, 41}, -50.0, 3.0, true},
      {{2, 24, 4, 8, 16}, 0.0, 2.0, true},
      {{1, 3, 20001}, 10.0, 0.5, true},
  };
  for (const Handle& h : test_handles())
    for (const Large& c : cases)
      for (DType t : {DType::F32, DType::F16}) {
        if (t == DType::F16 && !c.f16) continue;
        const std::vector<double> xv = offset_values(t, c.dims, c.offset, c.spread);
        for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST}) {
          run_case(h, t, c.dims, xv, l, l, 1.f, 0.f, 1e-5);
          run_case(h, t, c.dims, xv, l, Layout::PADDED, 0.5f, 0.25f, 1e-5);
        }
      }
}

TEST_CASE("instancenorm_forward works in place") {
  for (const Handle& h : test_handles())
    for (DType t : {DType::F32, DType::F16})
      for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED}) {
        for (const std::vector<int64_t>& dims :
             {std::vector<int64_t>{2, 5, 3, 3}, std::vector<int64_t>{1, 2, 70, 90}}) {
          CAPTURE(std::string(backend_name(h)));
          CAPTURE(std::string(dtype_name(t)));
          CAPTURE(std::string(layout_name(l)));
          CAPTURE(dims_str(dims));
          const InParams p(dims[1]);
          HostTensor x = tensor_with(make_desc(t, dims, l), offset_values(t, dims, 3.0, 2.0));
          const HostTensor before = x;
          Staging st(h);
          void* xy = st.out(x);
          REQUIRE_OK(instancenorm_forward(h, 0.5f, 0.25f, x.desc(), xy, x.desc(), xy,
                                          st.in(p.scale), st.in(p.bias), 1e-3));
          st.finish();
          const auto op = ref::instancenorm(dims, before.to_ref(), InParams::wide(p.scale),
                                            InParams::wide(p.bias), 1e-3);
          check_output(x, before, blend(op, 0.5, 0.25, before.to_ref()), tol_for(t));
        }
      }
}

TEST_CASE("instancenorm_forward rejects invalid input") {
  const Handle h = Handle::cpu();
  const TensorDesc d = TensorDesc::nchw(DType::F32, 1, 2, 3, 3);
  const TensorDesc d_wider = TensorDesc::nchw(DType::F32, 1, 2, 3, 4);
  const TensorDesc d_3ch = TensorDesc::nchw(DType::F32, 1, 3, 3, 3);
  const TensorDesc d_nhwc = TensorDesc::nhwc(DType::F32, 1, 2, 3, 3);
  const TensorDesc d_zero = TensorDesc::nchw(DType::F32, 1, 0, 3, 3);
  HostTensor x(d), y(d);
  x.fill_random();
  const InParams p(2);
  const float* s = p.scale.data();
  const float* b = p.bias.data();
  const auto run = [&](const TensorDesc& xd, const void* xp, const TensorDesc& yd, void* yp,
                       const float* sp, const float* bp, double eps) {
    return instancenorm_forward(h, 1.f, 0.f, xd, xp, yd, yp, sp, bp, eps);
  };
  const StatusCode bad = StatusCode::BAD_PARAM;
  const double eps = 1e-5;
  REQUIRE_OK(run(d, x.data(), d, y.data(), s, b, eps));
  // Null pointers.
  CHECK_STATUS(run(d, nullptr, d, y.data(), s, b, eps), bad);
  CHECK_STATUS(run(d, x.data(), d, nullptr, s, b, eps), bad);
  CHECK_STATUS(run(d, x.data(), d, y.data(), nullptr, b, eps), bad);
  CHECK_STATUS(run(d, x.data(), d, y.data(), s, nullptr, eps), bad);
  // Mismatched dims (spatial, channels), dtype mix.
  CHECK_STATUS(run(d, x.data(), d_wider, y.data(), s, b, eps), bad);
  CHECK_STATUS(run(d, x.data(), d_3ch, y.data(), s, b, eps), bad);
  CHECK_STATUS(run(d, x.data(), d.with_dtype(DType::F16), y.data(), s, b, eps), bad);
  // Bad descriptors: rank 2 and rank 6 (not N, C, 1-3 spatial), zero dim, overlapping strides.
  const TensorDesc rank2 = TensorDesc::packed(DType::F32, {2, 9});
  CHECK_STATUS(run(rank2, x.data(), rank2, y.data(), s, b, eps), bad);
  const TensorDesc rank6 = TensorDesc::packed(DType::F32, {1, 2, 1, 3, 1, 3});
  CHECK_STATUS(run(rank6, x.data(), rank6, y.data(), s, b, eps), bad);
  CHECK_STATUS(run(d_zero, x.data(), d, y.data(), s, b, eps), bad);
  const TensorDesc overlapping = TensorDesc::strided(DType::F32, {1, 2, 3, 3}, {9, 1, 1, 1});
  CHECK_STATUS(run(overlapping, x.data(), d, y.data(), s, b, eps), bad);
  // In place with two different layouts.
  CHECK_STATUS(run(d, x.data(), d_nhwc, x.data(), s, b, eps), bad);
  // Epsilon must be finite and > 0.
  const StatusCode invalid = StatusCode::INVALID_VALUE;
  CHECK_STATUS(run(d, x.data(), d, y.data(), s, b, 0.0), invalid);
  CHECK_STATUS(run(d, x.data(), d, y.data(), s, b, -1e-5), invalid);
  CHECK_STATUS(run(d, x.data(), d, y.data(), s, b, std::nan("")), invalid);
  CHECK_STATUS(run(d, x.data(), d, y.data(), s, b, HUGE_VAL), invalid);
}
