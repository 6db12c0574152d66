// softmax_forward on every backend against the float64 reference.
#include <cmath>

#include "kernels/util.h"
#include "reference/softmax.h"

using namespace jet;
using namespace jet::test;

namespace {

const char* algo_name(SoftmaxAlgo a) {
  switch (a) {
    case SoftmaxAlgo::FAST: return "fast";
    case SoftmaxAlgo::ACCURATE: return "accurate";
    case SoftmaxAlgo::LOG: return "log";
  }
  return "?";
}

const char* mode_name(SoftmaxMode m) { return m == SoftmaxMode::INSTANCE ? "instance" : "channel"; }

// ref::softmax_forward, with CHANNEL problems handed to it as (N * spatial, C, 1) rows: it
// enumerates the whole (c, s) plane for every group, which is quadratic in the spatial size.
std::vector<double> reference(SoftmaxAlgo algo, SoftmaxMode mode, const std::vector<int64_t>& dims,
                              const std::vector<double>& x) {
  if (mode == SoftmaxMode::INSTANCE) return ref::softmax_forward(algo, mode, dims, x);
  int64_t spatial = 1;
  for (size_t i = 2; i < dims.size(); ++i) spatial *= dims[i];
  const int64_t n_count = dims[0], channels = dims[1];
  std::vector<double> rows(x.size());
  for (int64_t n = 0; n < n_count; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t sp = 0; sp < spatial; ++sp)
        rows[static_cast<size_t>((n * spatial + sp) * channels + c)] =
            x[static_cast<size_t>((n * channels + c) * spatial + sp)];
  const std::vector<double> r = ref::softmax_forward(algo, mode, {n_count * spatial, channels, 1}, rows);
  std::vector<double> out(x.size());
  for (int64_t n = 0; n < n_count; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t sp = 0; sp < spatial; ++sp)
        out[static_cast<size_t>((n * channels + c) * spatial + sp)] =
            r[static_cast<size_t>((n * spatial + sp) * channels + c)];
  return out;
}

void run_softmax(const Handle& h, SoftmaxAlgo algo, SoftmaxMode mode, DType t,
                 const std::vector<int64_t>& dims, Layout lx, Layout ly, float alpha, float beta,
                 double lo, double hi) {
  CAPTURE(std::string(backend_name(h)));
  CAPTURE(std::string(algo_name(algo)));
  CAPTURE(std::string(mode_name(mode)));
  CAPTURE(std::string(dtype_name(t)));
  CAPTURE(dims_str(dims));
  CAPTURE(std::string(layout_name(lx)));
  CAPTURE(std::string(layout_name(ly)));
  CAPTURE(alpha);
  CAPTURE(beta);
  CAPTURE(lo);
  CAPTURE(hi);
  HostTensor x(make_desc(t, dims, lx));
  x.fill_random(lo, hi);
  if (specials_turn()) x.plant_specials();  // NaN and +-inf in, as ONNX gives them out
  HostTensor y(make_desc(t, dims, ly));
  if (beta == 0.f) y.poison(); else y.fill_random();
  const HostTensor before = y;
  Staging st(h);
  REQUIRE_OK(softmax_forward(h, algo, mode, alpha, x.desc(), st.in(x), beta, y.desc(), st.out(y)));
  st.finish();
  const auto ref = reference(algo, mode, dims, x.to_ref());
  check_output(y, before, blend(ref, alpha, beta, before.to_ref()), tol_for(t));
}

const SoftmaxAlgo kAlgos[] = {SoftmaxAlgo::FAST, SoftmaxAlgo::ACCURATE, SoftmaxAlgo::LOG};
const SoftmaxMode kModes[] = {SoftmaxMode::INSTANCE, SoftmaxMode::CHANNEL};

}  // namespace

TEST_CASE("softmax reference gives hand-computed values") {
  // Two channels at one position: softmax(0, ln 3) = (1/4, 3/4).
  const std::vector<double> x = {0.0, std::log(3.0)};
  const auto acc = ref::softmax_forward(SoftmaxAlgo::ACCURATE, SoftmaxMode::CHANNEL, {1, 2, 1}, x);
  CHECK(acc[0] == doctest::Approx(0.25));
  CHECK(acc[1] == doctest::Approx(0.75));
  const auto lg = ref::softmax_forward(SoftmaxAlgo::LOG, SoftmaxMode::INSTANCE, {1, 2, 1}, x);
  CHECK(lg[0] == doctest::Approx(std::log(0.25)));
  CHECK(lg[1] == doctest::Approx(std::log(0.75)));
  // CHANNEL over (N=1, C=2, W=2) groups elements 0 & 2 and 1 & 3; INSTANCE groups all four.
  const std::vector<double> x4 = {0.0, 1.0, 0.0, 1.0};
  const auto ch = ref::softmax_forward(SoftmaxAlgo::FAST, SoftmaxMode::CHANNEL, {1, 2, 2}, x4);
  for (double v : ch) CHECK(v == doctest::Approx(0.5));
  const auto in = ref::softmax_forward(SoftmaxAlgo::FAST, SoftmaxMode::INSTANCE, {1, 2, 2}, x4);
  CHECK(in[0] == doctest::Approx(1.0 / (2.0 + 2.0 * std::exp(1.0))));
  // The kernels agree.
  HostTensor xt(TensorDesc::ncw(DType::F32, 1, 2, 2));
  xt.from_ref(x4);
  for (const Handle& h : test_handles()) {
    CAPTURE(std::string(backend_name(h)));
    HostTensor y(TensorDesc::ncw(DType::F32, 1, 2, 2));
    y.poison();
    Staging st(h);
    REQUIRE_OK(softmax_forward(h, SoftmaxAlgo::ACCURATE, SoftmaxMode::CHANNEL, 1.f, xt.desc(),
                               st.in(xt), 0.f, y.desc(), st.out(y)));
    st.finish();
    for (double v : y.to_ref()) CHECK(v == doctest::Approx(0.5));
  }
}

TEST_CASE("softmax_forward matches the float64 reference on moderate inputs") {
  const std::vector<std::vector<int64_t>> shapes = {{1, 1, 1},    {2, 3, 7},       {1, 13, 3, 5},
                                                    {3, 7, 1, 1}, {2, 5, 3, 2, 3}, {1, 1, 7},
                                                    {2, 37, 3}};
  const std::pair<float, float> scalings[] = {{1.f, 0.f}, {0.5f, 0.25f}};
  for (const Handle& h : test_handles())
  for (DType t : {DType::F32, DType::F16})
    for (SoftmaxAlgo algo : kAlgos)
      for (SoftmaxMode mode : kModes)
        for (const auto& dims : shapes)
          for (Layout lx : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED})
            for (Layout ly : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED, Layout::REVERSED})
              for (auto [alpha, beta] : scalings)
                run_softmax(h, algo, mode, t, dims, lx, ly, alpha, beta, -4.0, 4.0);
}

TEST_CASE("softmax_forward on large shapes") {
  // Classifier logits (1000 classes, one row per image), a segmentation head in NCHW (strided C:
  // one thread per position on CUDA) and NHWC (contiguous C), a long INSTANCE group (one block
  // per group) and more groups than the grid has threads (grid-stride loops).
  const std::vector<std::vector<int64_t>> shapes = {
      {32, 1000, 1, 1}, {2, 21, 64, 64}, {2, 64, 56, 56}, {1, 3, 300, 300}, {4000, 7, 1}};
  for (const Handle& h : test_handles())
    for (DType t : {DType::F32, DType::F16})
      for (SoftmaxAlgo algo : kAlgos)
        for (SoftmaxMode mode : kModes)
          for (const auto& dims : shapes)
            for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST})
              run_softmax(h, algo, mode, t, dims, l, l, 1.f, 0.f, -6.0, 6.0);
}

TEST_CASE("softmax_forward ACCURATE and LOG stay finite on large-magnitude inputs") {
  // exp overflows f32 beyond ~88: FAST would give inf / inf here (documented), ACCURATE and LOG
  // subtract the max first. Offset inputs keep the softmax non-trivial; spread inputs make it
  // nearly one-hot with huge log values.
  const std::vector<std::vector<int64_t>> shapes = {{2, 7, 3}, {1, 13, 3, 5}, {2, 3, 2, 3, 2}};
  struct Range { double lo, hi; };
  for (const Handle& h : test_handles())
  for (DType t : {DType::F32, DType::F16}) {
    const double big = t == DType::F32 ? 1e4 : 3e4;  // f16 tops out at 65504
    const Range ranges[] = {{1000.0, 1008.0}, {-1008.0, -1000.0}, {-big, big}};
    for (SoftmaxAlgo algo : {SoftmaxAlgo::ACCURATE, SoftmaxAlgo::LOG})
      for (SoftmaxMode mode : kModes)
        for (const auto& dims : shapes)
          for (const Range& r : ranges)
            for (Layout lx : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST})
              run_softmax(h, algo, mode, t, dims, lx, Layout::PADDED, 1.f, 0.f, r.lo, r.hi);
  }
}

TEST_CASE("softmax_forward works in place") {
  // Small and large groups, C contiguous and strided: every CUDA kernel variant.
  const std::vector<std::vector<int64_t>> shapes = {{2, 5, 3, 3}, {2, 300, 8, 9}, {1, 9, 64, 80}};
  for (const Handle& h : test_handles())
  for (DType t : {DType::F32, DType::F16})
    for (SoftmaxAlgo algo : kAlgos)
      for (SoftmaxMode mode : kModes)
        for (const auto& dims : shapes)
          for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST}) {
            CAPTURE(std::string(backend_name(h)));
            CAPTURE(std::string(dtype_name(t)));
            CAPTURE(std::string(algo_name(algo)));
            CAPTURE(std::string(mode_name(mode)));
            CAPTURE(dims_str(dims));
            CAPTURE(std::string(layout_name(l)));
            HostTensor x(make_desc(t, dims, l));
            x.fill_random(-3, 3);
            const HostTensor before = x;
            Staging st(h);
            void* xy = st.out(x);
            REQUIRE_OK(softmax_forward(h, algo, mode, 0.5f, x.desc(), xy, 0.25f, x.desc(), xy));
            st.finish();
            const auto ref = reference(algo, mode, dims, before.to_ref());
            check_output(x, before, blend(ref, 0.5, 0.25, before.to_ref()), tol_for(t));
          }
}

TEST_CASE("softmax_forward rejects invalid input") {
  const Handle h = Handle::cpu();
  const TensorDesc d = TensorDesc::nchw(DType::F32, 1, 4, 3, 3);
  HostTensor x(d), y(d);
  x.fill_random();
  const SoftmaxAlgo acc = SoftmaxAlgo::ACCURATE;
  const SoftmaxMode ch = SoftmaxMode::CHANNEL;
  REQUIRE_OK(softmax_forward(h, acc, ch, 1.f, d, x.data(), 0.f, d, y.data()));
  CHECK_STATUS(softmax_forward(h, acc, ch, 1.f, d, nullptr, 0.f, d, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(softmax_forward(h, acc, ch, 1.f, d, x.data(), 0.f, d, nullptr), StatusCode::BAD_PARAM);
  // Mismatched dims and dtype.
  CHECK_STATUS(softmax_forward(h, acc, ch, 1.f, d, x.data(), 0.f, TensorDesc::nchw(DType::F32, 1, 3, 3, 3), y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(softmax_forward(h, acc, ch, 1.f, d, x.data(), 0.f, TensorDesc::ncdhw(DType::F32, 1, 4, 1, 3, 3), y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(softmax_forward(h, acc, ch, 1.f, d, x.data(), 0.f, d.with_dtype(DType::F16), y.data()), StatusCode::BAD_PARAM);
  // Unknown algorithm or mode.
  CHECK_STATUS(softmax_forward(h, static_cast<SoftmaxAlgo>(3), ch, 1.f, d, x.data(), 0.f, d, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(softmax_forward(h, acc, static_cast<SoftmaxMode>(-1), 1.f, d, x.data(), 0.f, d, y.data()), StatusCode::BAD_PARAM);
  // Rank outside 3..5, zero dim, overlapping strides.
  const TensorDesc r2 = TensorDesc::packed(DType::F32, {4, 9});
  CHECK_STATUS(softmax_forward(h, acc, ch, 1.f, r2, x.data(), 0.f, r2, y.data()), StatusCode::BAD_PARAM);
  const TensorDesc r6 = TensorDesc::packed(DType::F32, {1, 4, 1, 3, 3, 1});
  CHECK_STATUS(softmax_forward(h, acc, ch, 1.f, r6, x.data(), 0.f, r6, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(softmax_forward(h, acc, ch, 1.f, TensorDesc::nchw(DType::F32, 1, 0, 3, 3), x.data(), 0.f, d, y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(softmax_forward(h, acc, ch, 1.f, d, x.data(), 0.f, TensorDesc::strided(DType::F32, {1, 4, 3, 3}, {36, 1, 3, 1}), y.data()),
               StatusCode::BAD_PARAM);
}
