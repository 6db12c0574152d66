// pad_forward on every backend against the float64 reference (numpy.pad per axis, then crop).
#include <algorithm>
#include <cstdint>

#include "kernels/util.h"
#include "reference/tensor_ops.h"

using namespace jet;
using namespace jet::test;

namespace {

const Layout kLayouts[] = {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED,
                           Layout::REVERSED};
const std::pair<float, float> kScalings[] = {{1.f, 0.f}, {0.5f, 0.25f}};
const PadMode kModes[] = {PadMode::CONSTANT, PadMode::REFLECT, PadMode::EDGE};

const char* mode_name(PadMode m) {
  return m == PadMode::CONSTANT ? "constant" : (m == PadMode::REFLECT ? "reflect" : "edge");
}

// Random pads in [-2, 3] per side that keep every y dim >= 1 and, for REFLECT, each pad below
// the dim. Cropping a dim of 1 is impossible, so those get pads >= 0.
void random_pads(PadMode mode, const std::vector<int64_t>& x_dims, std::vector<int64_t>* begin,
                 std::vector<int64_t>* end) {
  begin->assign(x_dims.size(), 0);
  end->assign(x_dims.size(), 0);
  for (size_t i = 0; i < x_dims.size(); ++i) {
    const int64_t n = x_dims[i];
    const int64_t hi = mode == PadMode::REFLECT ? std::min<int64_t>(3, n - 1) : 3;
    do {
      (*begin)[i] = uniform_int(-2, hi);
      (*end)[i] = uniform_int(-2, hi);
    } while (n + (*begin)[i] + (*end)[i] < 1);
  }
}

}  // namespace

TEST_CASE("pad_forward matches the float64 reference") {
  for (const Handle& h : test_handles()) {
  const std::vector<std::vector<int64_t>> shapes = {
      {7}, {1, 13}, {3, 7, 5}, {2, 3, 7, 5}, {1, 3, 3, 7, 2}, {3, 1, 3}};
  for (const auto& x_dims : shapes) {
    for (PadMode mode : kModes) {
      for (DType t : {DType::F32, DType::F16}) {
        for (Layout lx : kLayouts) {
          for (Layout ly : kLayouts) {
            for (const auto& scaling : kScalings) {
              const float alpha = scaling.first, beta = scaling.second;
              std::vector<int64_t> begin, end;
              random_pads(mode, x_dims, &begin, &end);
              std::vector<int64_t> y_dims = x_dims;
              for (size_t i = 0; i < y_dims.size(); ++i) y_dims[i] += begin[i] + end[i];
              const double value = uniform(-2.0, 2.0);
              CAPTURE(std::string(backend_name(h)));
              CAPTURE(dims_str(x_dims));
              CAPTURE(std::string(mode_name(mode)));
              CAPTURE(dims_str(begin));
              CAPTURE(dims_str(end));
              CAPTURE(std::string(dtype_name(t)));
              CAPTURE(std::string(layout_name(lx)));
              CAPTURE(std::string(layout_name(ly)));
              CAPTURE(beta);
              HostTensor x(make_desc(t, x_dims, lx));
              x.fill_random();
              if (specials_turn()) x.plant_specials();  // NaN and +-inf in, as ONNX gives them out
              HostTensor y(make_desc(t, y_dims, ly));
              if (beta == 0.f) y.poison(); else y.fill_random();
              const HostTensor before = y;
              Staging st(h);
              REQUIRE_OK(pad_forward(h, mode, begin.data(), end.data(), static_cast<float>(value),
                                     alpha, x.desc(), st.in(x), beta, y.desc(), st.out(y)));
              st.finish();
              const auto ref = ref::pad(mode, x.to_ref(), x_dims, begin, end,
                                        static_cast<double>(static_cast<float>(value)));
              check_output(y, before, blend(ref, alpha, beta, before.to_ref()), tol_for(t));
            }
          }
        }
      }
    }
  }
  }
}

TEST_CASE("pad_forward on large tensors: spatial padding of NCHW and NHWC") {
  struct Case {
    PadMode mode;
    std::vector<int64_t> x_dims, begin, end;
  };
  const Case cases[] = {
      {PadMode::CONSTANT, {2, 32, 40, 36}, {0, 0, 1, 2}, {0, 0, 1, 2}},
      {PadMode::REFLECT, {2, 32, 40, 36}, {0, 0, 3, 3}, {0, 0, 2, 3}},
      {PadMode::EDGE, {2, 32, 40, 36}, {0, 1, -2, 4}, {0, 2, 3, -1}},
      {PadMode::CONSTANT, {100003}, {5}, {-7}},
  };
  for (const Handle& h : test_handles()) {
    for (const Case& c : cases) {
      for (DType t : {DType::F32, DType::F16}) {
        for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST}) {
          std::vector<int64_t> y_dims = c.x_dims;
          for (size_t i = 0; i < y_dims.size(); ++i) y_dims[i] += c.begin[i] + c.end[i];
          const float alpha = t == DType::F32 ? 1.f : 0.5f, beta = t == DType::F32 ? 0.f : 0.25f;
          CAPTURE(std::string(backend_name(h)));
          CAPTURE(std::string(mode_name(c.mode)));
          CAPTURE(dims_str(c.x_dims));
          CAPTURE(std::string(dtype_name(t)));
          CAPTURE(std::string(layout_name(l)));
          HostTensor x(make_desc(t, c.x_dims, l));
          x.fill_random();
          HostTensor y(make_desc(t, y_dims, l));
          if (beta == 0.f) y.poison(); else y.fill_random();
          const HostTensor before = y;
          Staging st(h);
          REQUIRE_OK(pad_forward(h, c.mode, c.begin.data(), c.end.data(), 0.5f, alpha, x.desc(),
                                 st.in(x), beta, y.desc(), st.out(y)));
          st.finish();
          const auto ref = ref::pad(c.mode, x.to_ref(), c.x_dims, c.begin, c.end, 0.5);
          check_output(y, before, blend(ref, alpha, beta, before.to_ref()), tol_for(t));
        }
      }
    }
  }
}

TEST_CASE("pad_forward: fixed cases, crops, pads at the limit and rank 8") {
  for (const Handle& h : test_handles()) {
  struct Case {
    PadMode mode;
    std::vector<int64_t> x_dims, begin, end;
  };
  const std::vector<Case> cases = {
      {PadMode::REFLECT, {7}, {6}, {6}},                       // the largest reflect pads
      {PadMode::REFLECT, {5}, {-3}, {4}},                      // reflect reaches into the crop
      {PadMode::EDGE, {3}, {-5}, {5}},                         // crop more than x on one side
      {PadMode::CONSTANT, {3}, {10}, {-5}},                    // all of y is padding
      {PadMode::CONSTANT, {4, 5}, {-1, 0}, {-2, 0}},           // a pure crop
      {PadMode::EDGE, {1, 1, 3}, {2, 0, 1}, {2, 3, 0}},        // dims of 1 grow
      {PadMode::REFLECT, {2, 3, 2, 3, 2, 3, 2, 3}, {1, -1, 0, 2, 1, 0, -1, 1}, {0, 2, 1, -1, 0, 1, 1, 2}},
      {PadMode::CONSTANT, {2, 1, 2, 3, 1, 3, 2, 3}, {1, 1, 0, 2, 0, 0, -1, 1}, {0, 2, 1, -1, 1, 1, 1, -2}},
  };
  for (const Case& c : cases) {
    for (DType t : {DType::F32, DType::F16}) {
      for (Layout ly : {Layout::PADDED, Layout::REVERSED}) {
        std::vector<int64_t> y_dims = c.x_dims;
        for (size_t i = 0; i < y_dims.size(); ++i) y_dims[i] += c.begin[i] + c.end[i];
        CAPTURE(std::string(backend_name(h)));
        CAPTURE(std::string(mode_name(c.mode)));
        CAPTURE(dims_str(c.x_dims));
        CAPTURE(dims_str(c.begin));
        CAPTURE(dims_str(c.end));
        CAPTURE(std::string(dtype_name(t)));
        HostTensor x(make_desc(t, c.x_dims, Layout::CHANNELS_LAST));
        x.fill_random();
        HostTensor y(make_desc(t, y_dims, ly));
        y.fill_random();
        const HostTensor before = y;
        Staging st(h);
        REQUIRE_OK(pad_forward(h, c.mode, c.begin.data(), c.end.data(), -0.75f, 0.5f, x.desc(),
                               st.in(x), 0.25f, y.desc(), st.out(y)));
        st.finish();
        const auto ref = ref::pad(c.mode, x.to_ref(), c.x_dims, c.begin, c.end, -0.75);
        check_output(y, before, blend(ref, 0.5, 0.25, before.to_ref()), tol_for(t));
      }
    }
  }
  }
}

TEST_CASE("pad_forward rejects invalid input") {
  const Handle h = Handle::cpu();
  const TensorDesc xd = TensorDesc::packed(DType::F32, {2, 3});
  const TensorDesc yd = TensorDesc::packed(DType::F32, {4, 4});
  HostTensor x(xd), y(yd);
  x.fill_random();
  const int64_t b[2] = {1, 0}, e[2] = {1, 1};
  const PadMode c = PadMode::CONSTANT;
  REQUIRE_OK(pad_forward(h, c, b, e, 0.f, 1.f, xd, x.data(), 0.f, yd, y.data()));
  CHECK_STATUS(pad_forward(h, c, nullptr, e, 0.f, 1.f, xd, x.data(), 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(pad_forward(h, c, b, nullptr, 0.f, 1.f, xd, x.data(), 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(pad_forward(h, c, b, e, 0.f, 1.f, xd, nullptr, 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(pad_forward(h, c, b, e, 0.f, 1.f, xd, x.data(), 0.f, yd, nullptr), StatusCode::BAD_PARAM);
  // y's dims disagree with x + pads; rank and dtype mismatches.
  CHECK_STATUS(pad_forward(h, c, b, e, 0.f, 1.f, xd, x.data(), 0.f, TensorDesc::packed(DType::F32, {4, 5}), y.data()),
               StatusCode::BAD_PARAM);
  const int64_t b3[3] = {0, 1, 0}, e3[3] = {0, 1, 1};
  CHECK_STATUS(pad_forward(h, c, b3, e3, 0.f, 1.f, xd, x.data(), 0.f, TensorDesc::packed(DType::F32, {1, 4, 4}), y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(pad_forward(h, c, b, e, 0.f, 1.f, xd, x.data(), 0.f, yd.with_dtype(DType::F16), y.data()),
               StatusCode::BAD_PARAM);
  // Unknown mode; bad descriptors; absurd pads.
  CHECK_STATUS(pad_forward(h, static_cast<PadMode>(3), b, e, 0.f, 1.f, xd, x.data(), 0.f, yd, y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(pad_forward(h, c, b, e, 0.f, 1.f, TensorDesc::packed(DType::F32, {2, 0}), x.data(), 0.f, yd, y.data()),
               StatusCode::BAD_PARAM);
  const int64_t huge_b[2] = {INT64_MAX, 0}, huge_e[2] = {INT64_MIN + 4, 1};
  CHECK_STATUS(pad_forward(h, c, huge_b, huge_e, 0.f, 1.f, xd, x.data(), 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  // REFLECT needs each pad < the dim: dim 0 of x is 2, a pad of 2 is too much.
  const int64_t rb[2] = {2, 0}, re[2] = {0, 1};
  CHECK_STATUS(pad_forward(h, PadMode::REFLECT, rb, re, 0.f, 1.f, xd, x.data(), 0.f, yd, y.data()),
               StatusCode::INVALID_VALUE);
  const int64_t rb2[2] = {0, 0}, re2[2] = {2, 1};
  CHECK_STATUS(pad_forward(h, PadMode::REFLECT, rb2, re2, 0.f, 1.f, xd, x.data(), 0.f, yd, y.data()),
               StatusCode::INVALID_VALUE);
  // The same pads are fine for EDGE.
  REQUIRE_OK(pad_forward(h, PadMode::EDGE, rb, re, 0.f, 1.f, xd, x.data(), 0.f, yd, y.data()));
}
