// layernorm_forward on every backend against the float64 reference: ranks 1..5, every axis,
// groups of one element, a long group with a mean far from zero (catches E[x^2] - E[x]^2),
// layouts, alpha/beta, scale and bias present or not, in place, invalid input.
#include <cmath>
#include <string>

#include "kernels/util.h"
#include "reference/layernorm.h"

using namespace jet;
using namespace jet::test;

namespace {

// Per-element parameters as the routine takes them (f32), or empty.
struct LnParams {
  std::vector<float> scale, bias;

  LnParams(int64_t inner, bool with_scale, bool with_bias) {
    for (int64_t i = 0; i < inner; ++i) {
      if (with_scale) scale.push_back(static_cast<float>(uniform(-1.5, 1.5)));
      if (with_bias) bias.push_back(static_cast<float>(uniform(-1.0, 1.0)));
    }
  }
  static std::vector<double> wide(const std::vector<float>& v) { return {v.begin(), v.end()}; }
};

int64_t inner_of(const std::vector<int64_t>& dims, int axis) {
  int64_t n = 1;
  for (size_t d = static_cast<size_t>(axis); d < dims.size(); ++d) n *= dims[d];
  return n;
}

std::vector<double> offset_values(DType t, const std::vector<int64_t>& dims, double offset,
                                  double spread) {
  HostTensor h(TensorDesc::packed(t, static_cast<int>(dims.size()), dims.data()));
  h.fill_random(offset - spread, offset + spread);
  return h.to_ref();
}

void run_case(const Handle& h, DType t, const std::vector<int64_t>& dims, int axis,
              const std::vector<double>& xv, Layout lx, Layout ly, float alpha, float beta,
              double eps, bool with_scale, bool with_bias) {
  CAPTURE(std::string(backend_name(h)));
  CAPTURE(std::string(dtype_name(t)));
  CAPTURE(dims_str(dims));
  CAPTURE(axis);
  CAPTURE(std::string(layout_name(lx)));
  CAPTURE(std::string(layout_name(ly)));
  CAPTURE(alpha);
  CAPTURE(beta);
  CAPTURE(eps);
  CAPTURE(with_scale);
  CAPTURE(with_bias);
  const LnParams p(inner_of(dims, axis), with_scale, with_bias);
  std::vector<double> xs = xv;
  if (specials_turn()) plant_specials(&xs);
  const HostTensor x = tensor_with(make_desc(t, dims, lx), xs);
  HostTensor y(make_desc(t, dims, ly));
  if (beta == 0.f) y.poison(); else y.fill_random();
  const HostTensor before = y;
  Staging st(h);
  REQUIRE_OK(layernorm_forward(h, axis, alpha, beta, x.desc(), st.in(x), y.desc(), st.out(y),
                               with_scale ? st.in(p.scale) : nullptr,
                               with_bias ? st.in(p.bias) : nullptr, eps));
  st.finish();
  const auto op = ref::layernorm(dims, axis, xs, LnParams::wide(p.scale), LnParams::wide(p.bias), eps);
  check_output(y, before, blend(op, alpha, beta, before.to_ref()), tol_for(t));
}

}  // namespace

TEST_CASE("layernorm_forward matches the float64 reference") {
  const std::vector<std::vector<int64_t>> shapes = {
      {7}, {1, 1}, {3, 13}, {2, 3, 7}, {2, 5, 1, 3}, {3, 1, 4, 2, 3}, {2, 130}};
  const std::pair<float, float> scalings[] = {{1.f, 0.f}, {0.5f, 0.25f}};
  const Layout layouts[] = {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED,
                            Layout::REVERSED};
  int round = 0;
  for (const Handle& h : test_handles())
    for (DType t : {DType::F32, DType::F16})
      for (const auto& dims : shapes)
        for (int axis = 0; axis < static_cast<int>(dims.size()); ++axis)
          for (Layout lx : layouts)
            for (Layout ly : layouts)
              for (const auto& scaling : scalings) {
                ++round;
                run_case(h, t, dims, axis, offset_values(t, dims, 0.0, 2.0), lx, ly,
                         scaling.first, scaling.second, round % 2 ? 1e-5 : 0.1, round % 3 != 0,
                         round % 5 != 0);
              }
}

TEST_CASE("layernorm_forward on long groups with a mean far from zero") {
  struct Large {
    std::vector<int64_t> dims;
    int axis;
    double offset, spread;
    bool f16;
  };
  const Large cases[] = {
      {{4, 50, 768}, 2, 100.0, 1.0, true},
      {{2, 300, 301}, 1, 1000.0, 0.01, false},
      {{3, 20001}, 1, 10.0, 0.5, true},
      {{2, 3, 8, 64}, 2, -50.0, 3.0, true},
  };
  for (const Handle& h : test_handles())
    for (const Large& c : cases)
      for (DType t : {DType::F32, DType::F16}) {
        if (t == DType::F16 && !c.f16) continue;
        const std::vector<double> xv = offset_values(t, c.dims, c.offset, c.spread);
        run_case(h, t, c.dims, c.axis, xv, Layout::CHANNELS_FIRST, Layout::CHANNELS_FIRST, 1.f,
                 0.f, 1e-5, true, true);
        run_case(h, t, c.dims, c.axis, xv, Layout::CHANNELS_LAST, Layout::PADDED, 0.5f, 0.25f,
                 1e-5, true, false);
      }
}

TEST_CASE("layernorm_forward works in place") {
  for (const Handle& h : test_handles())
    for (DType t : {DType::F32, DType::F16})
      for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED}) {
        const std::vector<int64_t> dims = {2, 5, 96};
        CAPTURE(std::string(backend_name(h)));
        CAPTURE(std::string(dtype_name(t)));
        CAPTURE(std::string(layout_name(l)));
        const LnParams p(96, true, true);
        HostTensor x = tensor_with(make_desc(t, dims, l), offset_values(t, dims, 3.0, 2.0));
        const HostTensor before = x;
        Staging st(h);
        void* xy = st.out(x);
        REQUIRE_OK(layernorm_forward(h, 2, 0.5f, 0.25f, x.desc(), xy, x.desc(), xy,
                                     st.in(p.scale), st.in(p.bias), 1e-3));
        st.finish();
        const auto op = ref::layernorm(dims, 2, before.to_ref(), LnParams::wide(p.scale),
                                       LnParams::wide(p.bias), 1e-3);
        check_output(x, before, blend(op, 0.5, 0.25, before.to_ref()), tol_for(t));
      }
}

TEST_CASE("layernorm_forward rejects invalid input") {
  const Handle h = Handle::cpu();
  const TensorDesc d = TensorDesc::packed(DType::F32, {2, 3, 4});
  HostTensor x(d), y(d);
  x.fill_random();
  const LnParams p(4, true, true);
  const auto run = [&](int axis, const TensorDesc& xd, const void* xp, const TensorDesc& yd,
                       void* yp, double eps) {
    return layernorm_forward(h, axis, 1.f, 0.f, xd, xp, yd, yp, p.scale.data(), p.bias.data(), eps);
  };
  const StatusCode bad = StatusCode::BAD_PARAM;
  REQUIRE_OK(run(2, d, x.data(), d, y.data(), 1e-5));
  CHECK_STATUS(run(2, d, nullptr, d, y.data(), 1e-5), bad);
  CHECK_STATUS(run(2, d, x.data(), d, nullptr, 1e-5), bad);
  CHECK_STATUS(run(3, d, x.data(), d, y.data(), 1e-5), bad);
  CHECK_STATUS(run(-1, d, x.data(), d, y.data(), 1e-5), bad);
  CHECK_STATUS(run(2, d, x.data(), TensorDesc::packed(DType::F32, {2, 3, 5}), y.data(), 1e-5), bad);
  CHECK_STATUS(run(2, d, x.data(), d.with_dtype(DType::F16), y.data(), 1e-5), bad);
  CHECK_STATUS(run(2, d, x.data(), d, y.data(), 0.0), StatusCode::INVALID_VALUE);
  CHECK_STATUS(run(2, d, x.data(), d, y.data(), NAN), StatusCode::INVALID_VALUE);
  CHECK_STATUS(run(2, d, x.data(), d, y.data(), INFINITY), StatusCode::INVALID_VALUE);
}
