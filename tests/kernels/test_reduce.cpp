// reduce_forward on every backend against the float64 reference: every subset of reduced
// dims, all ops, layouts and dtypes, and long reductions that expose a low-precision accumulator.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/util.h"
#include "reference/tensor_ops.h"

using namespace jet;
using namespace jet::test;

namespace {

const Layout kLayouts[] = {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED,
                           Layout::REVERSED};
const std::pair<float, float> kScalings[] = {{1.f, 0.f}, {0.5f, 0.25f}};
const ReduceOp kOps[] = {ReduceOp::SUM, ReduceOp::MEAN, ReduceOp::MAX, ReduceOp::MIN};

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM: return "sum";
    case ReduceOp::MEAN: return "mean";
    case ReduceOp::MAX: return "max";
    case ReduceOp::MIN: return "min";
  }
  return "?";
}

// x's dims with the dims in `mask` (bit i: dim i) set to 1.
std::vector<int64_t> reduced_dims(const std::vector<int64_t>& x_dims, unsigned mask) {
  std::vector<int64_t> y = x_dims;
  for (size_t i = 0; i < y.size(); ++i)
    if (mask & (1u << i)) y[i] = 1;
  return y;
}

// The error scale check_output judges a reduction against. A sum of terms of both signs can
// cancel to far less than the terms: an f32 accumulator (allowed: "at least f32") is then
// accurate relative to the sum of |terms|, not to the result. So for SUM and MEAN the scale is
// alpha * (largest reduction of |x|) plus the prior y's magnitude; MAX and MIN keep the default.
double reduce_scale(ReduceOp op, const HostTensor& x, const std::vector<int64_t>& x_dims,
                    const std::vector<int64_t>& y_dims, double alpha, const HostTensor& before) {
  if (op != ReduceOp::SUM && op != ReduceOp::MEAN) return -1.0;
  std::vector<double> ax = x.to_ref();
  for (double& v : ax) v = std::fabs(v);
  double mag = 0.0;
  for (double v : ref::reduce(op, ax, x_dims, y_dims)) mag = std::max(mag, v);
  double prior = 0.0;
  for (double v : before.to_ref())
    if (std::isfinite(v)) prior = std::max(prior, std::fabs(v));
  return std::fabs(alpha) * mag + prior;
}

}  // namespace

TEST_CASE("reduce_forward matches the float64 reference over every set of axes") {
  for (const Handle& h : test_handles()) {
  const std::vector<std::vector<int64_t>> shapes = {
      {13}, {7, 3}, {3, 1, 7}, {2, 3, 7, 5}, {3, 2, 1, 5, 7}};
  for (const auto& x_dims : shapes) {
    const unsigned masks = 1u << x_dims.size();
    for (unsigned mask = 0; mask < masks; ++mask) {
      const std::vector<int64_t> y_dims = reduced_dims(x_dims, mask);
      for (ReduceOp op : kOps) {
        for (DType t : {DType::F32, DType::F16}) {
          for (Layout lx : kLayouts) {
            // Two y layouts per x layout keep the sweep small but cover every pairing kind.
            for (Layout ly : {kLayouts[(static_cast<int>(lx) + 1) % 4], Layout::PADDED}) {
              for (const auto& scaling : kScalings) {
                const float alpha = scaling.first, beta = scaling.second;
                CAPTURE(std::string(backend_name(h)));
                CAPTURE(dims_str(x_dims));
                CAPTURE(dims_str(y_dims));
                CAPTURE(std::string(op_name(op)));
                CAPTURE(std::string(dtype_name(t)));
                CAPTURE(std::string(layout_name(lx)));
                CAPTURE(std::string(layout_name(ly)));
                CAPTURE(beta);
                HostTensor x(make_desc(t, x_dims, lx));
                x.fill_random(-2.0, 2.0);
                if (specials_turn()) x.plant_specials();  // NaN and +-inf in, as ONNX gives them out
                HostTensor y(make_desc(t, y_dims, ly));
                if (beta == 0.f) y.poison(); else y.fill_random();
                const HostTensor before = y;
                Staging st(h);
                REQUIRE_OK(reduce_forward(h, op, alpha, x.desc(), st.in(x), beta, y.desc(), st.out(y)));
                st.finish();
                const auto ref = ref::reduce(op, x.to_ref(), x_dims, y_dims);
                check_output(y, before, blend(ref, alpha, beta, before.to_ref()), tol_for(t),
                             reduce_scale(op, x, x_dims, y_dims, alpha, before));
              }
            }
          }
        }
      }
    }
  }
  }
}

TEST_CASE("reduce_forward handles rank 8 and non-adjacent axes") {
  const std::vector<int64_t> x_dims = {2, 3, 1, 2, 3, 2, 1, 3};
  const unsigned masks[] = {0x01u, 0x12u, 0xA5u, 0xFFu, 0x80u, 0x54u};
  for (const Handle& h : test_handles())
  for (unsigned mask : masks) {
    const std::vector<int64_t> y_dims = reduced_dims(x_dims, mask);
    for (ReduceOp op : kOps) {
      for (DType t : {DType::F32, DType::F16}) {
        CAPTURE(std::string(backend_name(h)));
        CAPTURE(mask);
        CAPTURE(std::string(op_name(op)));
        CAPTURE(std::string(dtype_name(t)));
        HostTensor x(make_desc(t, x_dims, Layout::REVERSED));
        x.fill_random();
        HostTensor y(make_desc(t, y_dims, Layout::PADDED));
        y.fill_random();
        const HostTensor before = y;
        Staging st(h);
        REQUIRE_OK(reduce_forward(h, op, 0.5f, x.desc(), st.in(x), 0.25f, y.desc(), st.out(y)));
        st.finish();
        const auto ref = ref::reduce(op, x.to_ref(), x_dims, y_dims);
        check_output(y, before, blend(ref, 0.5, 0.25, before.to_ref()), tol_for(t),
                     reduce_scale(op, x, x_dims, y_dims, 0.5, before));
      }
    }
  }
}

TEST_CASE("reduce_forward stays precise on long reductions") {
  // Hundreds of thousands of positive terms per output: an f32 running sum drifts by far more
  // than 1e-5 relative here, a double (CPU) or compensated tree (CUDA) one does not.
  struct Case {
    std::vector<int64_t> x_dims, y_dims;
  };
  const std::vector<Case> cases = {
      {{1 << 20}, {1}},
      {{64, 3, 64, 5, 64}, {1, 3, 1, 5, 1}},  // three non-adjacent reduced axes
      {{1000, 1000}, {1, 1000}},              // over the outer axis: threads across the inner one
      {{3, 1 << 18}, {3, 1}},                 // a few long rows
  };
  for (const Handle& h : test_handles())
  for (const Case& c : cases) {
    for (ReduceOp op : {ReduceOp::SUM, ReduceOp::MEAN}) {
      for (Layout lx : {Layout::CHANNELS_FIRST, Layout::REVERSED}) {
        CAPTURE(std::string(backend_name(h)));
        CAPTURE(dims_str(c.x_dims));
        CAPTURE(std::string(op_name(op)));
        CAPTURE(std::string(layout_name(lx)));
        HostTensor x(make_desc(DType::F32, c.x_dims, lx));
        x.fill_random(0.5, 1.5);
        HostTensor y(make_desc(DType::F32, c.y_dims, Layout::CHANNELS_FIRST));
        y.poison();
        const HostTensor before = y;
        Staging st(h);
        REQUIRE_OK(reduce_forward(h, op, 1.f, x.desc(), st.in(x), 0.f, y.desc(), st.out(y)));
        st.finish();
        const auto ref = ref::reduce(op, x.to_ref(), c.x_dims, c.y_dims);
        // Judge each output against its own magnitude only (scale 0): 1e-5 relative.
        check_output(y, before, ref, 1e-5, 0.0);
      }
    }
  }
}

TEST_CASE("reduce_forward propagates NaN through MAX and MIN") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const Handle& h : test_handles())
  for (ReduceOp op : {ReduceOp::MAX, ReduceOp::MIN, ReduceOp::SUM}) {
    for (int where = 0; where < 3; ++where) {
      const float xs[3] = {1.f, -2.f, 3.f};
      HostTensor x(TensorDesc::packed(DType::F32, {3}));
      for (int64_t i = 0; i < 3; ++i) x.set(&i, i == where ? nan : xs[i]);
      HostTensor y(TensorDesc::packed(DType::F32, {1}));
      y.fill(0.0);
      Staging st(h);
      REQUIRE_OK(reduce_forward(h, op, 1.f, x.desc(), st.in(x), 0.f, y.desc(), st.out(y)));
      st.finish();
      CAPTURE(std::string(backend_name(h)));
      CAPTURE(std::string(op_name(op)));
      CAPTURE(where);
      const int64_t zero = 0;
      CHECK(std::isnan(y.get(&zero)));
    }
  }
  // A NaN deep inside long reductions (one block-wide tree per output on CUDA), inner and outer.
  for (const Handle& h : test_handles())
  for (ReduceOp op : {ReduceOp::MAX, ReduceOp::MIN}) {
    for (Layout lx : {Layout::CHANNELS_FIRST, Layout::REVERSED}) {
      CAPTURE(std::string(backend_name(h)));
      CAPTURE(std::string(op_name(op)));
      CAPTURE(std::string(layout_name(lx)));
      const std::vector<int64_t> x_dims = {4, 5000}, y_dims = {4, 1};
      HostTensor x(make_desc(DType::F32, x_dims, lx));
      x.fill_random();
      const int64_t at[2] = {2, 3777};
      x.set(at, nan);
      HostTensor y(make_desc(DType::F32, y_dims, Layout::CHANNELS_FIRST));
      y.poison();
      const HostTensor before = y;
      Staging st(h);
      REQUIRE_OK(reduce_forward(h, op, 1.f, x.desc(), st.in(x), 0.f, y.desc(), st.out(y)));
      st.finish();
      // Row 2 holds the NaN (the reference itself does not model NaN).
      std::vector<double> want = ref::reduce(op, x.to_ref(), x_dims, y_dims);
      want[2] = std::numeric_limits<double>::quiet_NaN();
      check_output(y, before, want, 1e-6);
    }
  }
}

TEST_CASE("reduce_forward on large tensors") {
  // Shapes that exercise every thread arrangement and grid-stride loops: NCHW and NHWC
  // global-pool-like reductions, a reduction over N, and a reduction to a scalar.
  struct Case {
    std::vector<int64_t> x_dims, y_dims;
  };
  const std::vector<Case> cases = {
      {{4, 256, 28, 28}, {4, 256, 1, 1}},
      {{64, 8, 32, 32}, {1, 8, 32, 32}},
      {{8, 32, 1000}, {8, 1, 1000}},
      {{1000003}, {1}},
      // Enough contiguous kept outputs for the CUDA engine's vector kernel (8 or 4 outputs a
      // thread, used where they fill 32 per block on every SM: >= 4224 vectors on an H100).
      {{3, 40000}, {1, 40000}},
  };
  for (const Handle& h : test_handles())
  for (const Case& c : cases)
    for (ReduceOp op : kOps)
      for (DType t : {DType::F32, DType::F16})
        for (Layout lx : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST}) {
          CAPTURE(std::string(backend_name(h)));
          CAPTURE(dims_str(c.x_dims));
          CAPTURE(std::string(op_name(op)));
          CAPTURE(std::string(dtype_name(t)));
          CAPTURE(std::string(layout_name(lx)));
          HostTensor x(make_desc(t, c.x_dims, lx));
          x.fill_random(-1.0, 1.0);
          HostTensor y(make_desc(t, c.y_dims, lx));
          y.fill_random();
          const HostTensor before = y;
          Staging st(h);
          REQUIRE_OK(reduce_forward(h, op, 0.75f, x.desc(), st.in(x), 0.5f, y.desc(), st.out(y)));
          st.finish();
          const auto ref = ref::reduce(op, x.to_ref(), c.x_dims, c.y_dims);
          check_output(y, before, blend(ref, 0.75, 0.5, before.to_ref()), tol_for(t),
                       reduce_scale(op, x, c.x_dims, c.y_dims, 0.75, before));
        }
}

TEST_CASE("reduce_forward rejects invalid input") {
  const Handle h = Handle::cpu();
  const TensorDesc xd = TensorDesc::packed(DType::F32, {2, 3, 4});
  const TensorDesc yd = TensorDesc::packed(DType::F32, {2, 1, 4});
  HostTensor x(xd), y(yd);
  x.fill_random();
  const ReduceOp s = ReduceOp::SUM;
  REQUIRE_OK(reduce_forward(h, s, 1.f, xd, x.data(), 0.f, yd, y.data()));
  CHECK_STATUS(reduce_forward(h, s, 1.f, xd, nullptr, 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(reduce_forward(h, s, 1.f, xd, x.data(), 0.f, yd, nullptr), StatusCode::BAD_PARAM);
  // A y dim that is neither 1 nor x's; a rank mismatch; a dtype mismatch.
  CHECK_STATUS(reduce_forward(h, s, 1.f, xd, x.data(), 0.f, TensorDesc::packed(DType::F32, {2, 1, 2}), y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(reduce_forward(h, s, 1.f, xd, x.data(), 0.f, TensorDesc::packed(DType::F32, {2, 3, 4, 1}), y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(reduce_forward(h, s, 1.f, xd, x.data(), 0.f, TensorDesc::packed(DType::F32, {2, 4}), y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(reduce_forward(h, s, 1.f, xd, x.data(), 0.f, yd.with_dtype(DType::F16), y.data()),
               StatusCode::BAD_PARAM);
  // y larger than x along a dim is not a broadcast reduce.
  CHECK_STATUS(reduce_forward(h, s, 1.f, TensorDesc::packed(DType::F32, {2, 1, 4}), x.data(), 0.f, xd, y.data()),
               StatusCode::BAD_PARAM);
  // Bad descriptors and op.
  CHECK_STATUS(reduce_forward(h, s, 1.f, TensorDesc::packed(DType::F32, {2, 0, 4}), x.data(), 0.f, yd, y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(reduce_forward(h, s, 1.f, xd, x.data(), 0.f, TensorDesc::strided(DType::F32, {2, 1, 4}, {1, 1, 1}), y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(reduce_forward(h, static_cast<ReduceOp>(4), 1.f, xd, x.data(), 0.f, yd, y.data()),
               StatusCode::BAD_PARAM);
}
