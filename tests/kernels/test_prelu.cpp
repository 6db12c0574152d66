// prelu_forward on every backend against the float64 reference.
#include <string>

#include "kernels/util.h"
#include "reference/prelu.h"

using namespace jet;
using namespace jet::test;

namespace {

// The slope shapes PReLU meets: scalar (all ones), per channel (dim 1 kept; dim 0 at rank 1),
// one row (last dim kept) and the full shape of x.
std::vector<std::vector<int64_t>> slope_shapes(const std::vector<int64_t>& x_dims) {
  const size_t rank = x_dims.size();
  std::vector<int64_t> scalar(rank, 1), channel(rank, 1), row(rank, 1);
  channel[rank >= 2 ? 1 : 0] = x_dims[rank >= 2 ? 1 : 0];
  row[rank - 1] = x_dims[rank - 1];
  return {scalar, channel, row, x_dims};
}

}  // namespace

TEST_CASE("prelu_forward matches the float64 reference") {
  for (const Handle& h : test_handles()) {
  const std::vector<std::vector<int64_t>> shapes = {
      {7},          {3, 13},          {2, 3, 7},             {3, 13, 5, 7},
      {2, 3, 1, 4, 5}, {1, 3, 2, 1, 2, 3}, {2, 1, 3, 1, 2, 1, 3}, {1, 2, 1, 3, 1, 2, 1, 3}};
  const std::pair<float, float> scalings[] = {{1.f, 0.f}, {0.5f, 0.25f}};
  for (DType t : {DType::F32, DType::F16}) {
    for (const auto& dims : shapes) {
      for (const auto& sdims : slope_shapes(dims)) {
        for (Layout lx : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED}) {
          for (Layout ls : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED}) {
            for (Layout ly : {Layout::CHANNELS_FIRST, Layout::PADDED, Layout::REVERSED}) {
              for (const auto& scaling : scalings) {
                const float alpha = scaling.first, beta = scaling.second;
                CAPTURE(std::string(backend_name(h)));
                CAPTURE(std::string(dtype_name(t)));
                CAPTURE(dims_str(dims));
                CAPTURE(dims_str(sdims));
                CAPTURE(std::string(layout_name(lx)));
                CAPTURE(std::string(layout_name(ls)));
                CAPTURE(std::string(layout_name(ly)));
                CAPTURE(alpha);
                CAPTURE(beta);
                HostTensor x(make_desc(t, dims, lx));
                x.fill_random(-2.0, 2.0);
                if (specials_turn()) x.plant_specials();  // NaN and +-inf in, as ONNX gives them out
                HostTensor slope(make_desc(t, sdims, ls));
                slope.fill_random(-1.0, 1.0);
                HostTensor y(make_desc(t, dims, ly));
                if (beta == 0.f) y.poison(); else y.fill_random();
                const HostTensor before = y;
                Staging st(h);
                REQUIRE_OK(prelu_forward(h, alpha, x.desc(), st.in(x), slope.desc(), st.in(slope),
                                         beta, y.desc(), st.out(y)));
                st.finish();
                const auto op = ref::prelu(dims, x.to_ref(), sdims, slope.to_ref());
                check_output(y, before, blend(op, alpha, beta, before.to_ref()), tol_for(t));
              }
            }
          }
        }
      }
    }
  }
  }
}

TEST_CASE("prelu_forward on large tensors: per-channel, scalar and full slopes, NCHW and NHWC") {
  // Inner dims that are multiples of 8 (the CUDA vector loop) and odd ones (the scalar loop).
  struct Case {
    std::vector<int64_t> x, slope;
  };
  const Case cases[] = {
      {{2, 64, 24, 32}, {1, 64, 1, 1}}, {{2, 64, 24, 32}, {1, 1, 1, 1}},
      {{2, 64, 24, 32}, {1, 1, 1, 32}}, {{2, 64, 24, 32}, {2, 64, 24, 32}},
      {{2, 67, 15, 9}, {1, 67, 1, 1}},  {{2, 67, 15, 9}, {2, 67, 15, 9}},
      {{100003}, {1}},                  {{100003}, {100003}},
  };
  for (const Handle& h : test_handles()) {
    for (DType t : {DType::F32, DType::F16}) {
      for (const Case& c : cases) {
        for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST}) {
          const float alpha = t == DType::F32 ? 1.f : 0.5f, beta = t == DType::F32 ? 0.f : 0.25f;
          CAPTURE(std::string(backend_name(h)));
          CAPTURE(std::string(dtype_name(t)));
          CAPTURE(dims_str(c.x));
          CAPTURE(dims_str(c.slope));
          CAPTURE(std::string(layout_name(l)));
          HostTensor x(make_desc(t, c.x, l));
          x.fill_random(-2.0, 2.0);
          if (specials_turn()) x.plant_specials();  // NaN and +-inf in, as ONNX gives them out
          HostTensor slope(make_desc(t, c.slope, l));
          slope.fill_random(-1.0, 1.0);
          HostTensor y(make_desc(t, c.x, l));
          if (beta == 0.f) y.poison(); else y.fill_random();
          const HostTensor before = y;
          Staging st(h);
          REQUIRE_OK(prelu_forward(h, alpha, x.desc(), st.in(x), slope.desc(), st.in(slope), beta,
                                   y.desc(), st.out(y)));
          st.finish();
          const auto op = ref::prelu(c.x, x.to_ref(), c.slope, slope.to_ref());
          check_output(y, before, blend(op, alpha, beta, before.to_ref()), tol_for(t));
        }
      }
    }
  }
}

TEST_CASE("prelu_forward takes a stride-0 broadcast slope and works in place") {
  for (const Handle& h : test_handles())
  for (DType t : {DType::F32, DType::F16}) {
    CAPTURE(std::string(backend_name(h)));
    CAPTURE(std::string(dtype_name(t)));
    const std::vector<int64_t> dims = {2, 5, 3, 3};
    HostTensor x(make_desc(t, dims, Layout::CHANNELS_LAST));
    x.fill_random(-2, 2);
    // Per-channel slope described as a view with stride 0 on its size-1 dims.
    HostTensor slope(TensorDesc::strided(t, {1, 5, 1, 1}, {0, 1, 0, 0}));
    slope.fill_random(-1, 1);
    const HostTensor before = x;
    Staging st(h);
    void* xy = st.out(x);
    REQUIRE_OK(prelu_forward(h, 0.5f, x.desc(), xy, slope.desc(), st.in(slope), 0.25f, x.desc(),
                             xy));
    st.finish();
    const auto op = ref::prelu(dims, before.to_ref(), {1, 5, 1, 1}, slope.to_ref());
    check_output(x, before, blend(op, 0.5, 0.25, before.to_ref()), tol_for(t));
  }
}

TEST_CASE("prelu_forward rejects invalid input") {
  const Handle h = Handle::cpu();
  const TensorDesc d = TensorDesc::nchw(DType::F32, 1, 2, 3, 3);
  const TensorDesc sd = TensorDesc::packed(DType::F32, {1, 2, 1, 1});
  HostTensor x(d), y(d), s(sd);
  x.fill_random();
  s.fill_random();
  const auto run = [&](const TensorDesc& xd, const void* xp, const TensorDesc& sdd,
                       const void* sp, const TensorDesc& yd, void* yp) {
    return prelu_forward(h, 1.f, xd, xp, sdd, sp, 0.f, yd, yp);
  };
  const auto f32 = [](std::initializer_list<int64_t> dims) {
    return TensorDesc::packed(DType::F32, dims);
  };
  const StatusCode bad = StatusCode::BAD_PARAM;
  CHECK(run(d, x.data(), sd, s.data(), d, y.data()).ok());
  // Null pointers.
  CHECK_STATUS(run(d, nullptr, sd, s.data(), d, y.data()), bad);
  CHECK_STATUS(run(d, x.data(), sd, nullptr, d, y.data()), bad);
  CHECK_STATUS(run(d, x.data(), sd, s.data(), d, nullptr), bad);
  // Mismatched dims between x and y.
  CHECK_STATUS(run(d, x.data(), sd, s.data(), f32({1, 2, 3, 4}), y.data()), bad);
  // Slope that does not broadcast: wrong channel count, wrong rank.
  CHECK_STATUS(run(d, x.data(), f32({1, 3, 1, 1}), s.data(), d, y.data()), bad);
  CHECK_STATUS(run(d, x.data(), f32({2, 1, 1}), s.data(), d, y.data()), bad);
  // Dtype mixes.
  CHECK_STATUS(run(d, x.data(), sd, s.data(), d.with_dtype(DType::F16), y.data()), bad);
  CHECK_STATUS(run(d, x.data(), sd.with_dtype(DType::F16), s.data(), d, y.data()), bad);
  // Bad descriptors: zero dim, stride 0 on a dim of size 2, rank 9.
  CHECK_STATUS(run(f32({1, 0, 3, 3}), x.data(), sd, s.data(), d, y.data()), bad);
  const TensorDesc zero_stride = TensorDesc::strided(DType::F32, {1, 2, 1, 1}, {1, 0, 1, 1});
  CHECK_STATUS(run(d, x.data(), zero_stride, s.data(), d, y.data()), bad);
  const int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  const TensorDesc r9 = TensorDesc::packed(DType::F32, 9, nine);
  CHECK_STATUS(run(r9, x.data(), r9, s.data(), r9, y.data()), bad);
  // In place with two different layouts.
  CHECK_STATUS(run(d, x.data(), sd, s.data(), TensorDesc::nhwc(DType::F32, 1, 2, 3, 3), x.data()),
               bad);
}
