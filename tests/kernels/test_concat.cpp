// concat_forward on every backend: every axis, 1-4 inputs of mixed layouts, against the
// stored input values placed side by side.
#include <cstring>

#include "kernels/util.h"

using namespace jet;
using namespace jet::test;

namespace {

const Layout kLayouts[] = {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED,
                           Layout::REVERSED};
const std::pair<float, float> kScalings[] = {{1.f, 0.f}, {0.5f, 0.25f}};

// The concatenation of the inputs along `axis`, packed row-major over y_dims.
std::vector<double> expected_concat(const std::vector<HostTensor>& xs, int axis,
                                    const std::vector<int64_t>& y_dims) {
  std::vector<double> out(static_cast<size_t>(count(y_dims)));
  const size_t r = y_dims.size();
  std::vector<int64_t> idx(r, 0);
  for (size_t p = 0; p < out.size(); ++p) {
    // Find the input that holds position idx[axis], and the position within it.
    std::vector<int64_t> local = idx;
    size_t i = 0;
    while (local[axis] >= xs[i].desc().dim(axis)) local[axis] -= xs[i++].desc().dim(axis);
    out[p] = xs[i].get(local.data());
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < y_dims[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// Splits `total` into `parts` random sizes >= 1.
std::vector<int64_t> random_split(int64_t total, int parts) {
  std::vector<int64_t> sizes(parts, 1);
  for (int64_t left = total - parts; left > 0; --left) ++sizes[uniform_int(0, parts - 1)];
  return sizes;
}

}  // namespace

TEST_CASE("concat_forward matches the inputs placed side by side") {
  for (const Handle& h : test_handles()) {
  const std::vector<std::vector<int64_t>> shapes = {
      {13}, {7, 3}, {3, 7, 5}, {2, 7, 3, 5}, {2, 3, 7, 1, 5}};
  for (const auto& y_dims : shapes) {
    const int r = static_cast<int>(y_dims.size());
    for (int axis = 0; axis < r; ++axis) {
      for (int n = 1; n <= 4; ++n) {
        if (n > y_dims[axis]) continue;
        for (DType t : {DType::F32, DType::F16}) {
          for (Layout ly : kLayouts) {
            for (const auto& scaling : kScalings) {
              const float alpha = scaling.first, beta = scaling.second;
              const std::vector<int64_t> sizes = random_split(y_dims[axis], n);
              CAPTURE(std::string(backend_name(h)));
              CAPTURE(dims_str(y_dims));
              CAPTURE(axis);
              CAPTURE(dims_str(sizes));
              CAPTURE(std::string(dtype_name(t)));
              CAPTURE(std::string(layout_name(ly)));
              CAPTURE(beta);
              std::vector<HostTensor> xs;
              std::vector<TensorDesc> descs;
              std::vector<const void*> ptrs;
              for (int i = 0; i < n; ++i) {
                std::vector<int64_t> d = y_dims;
                d[axis] = sizes[i];
                xs.emplace_back(make_desc(t, d, kLayouts[uniform_int(0, 3)]));
                xs.back().fill_random();
                if (specials_turn()) xs.back().plant_specials();  // NaN and +-inf in, as ONNX gives them out
              }
              Staging st(h);
              for (const HostTensor& x : xs) {
                descs.push_back(x.desc());
                ptrs.push_back(st.in(x));
              }
              HostTensor y(make_desc(t, y_dims, ly));
              if (beta == 0.f) y.poison(); else y.fill_random();
              const HostTensor before = y;
              REQUIRE_OK(concat_forward(h, axis, n, descs.data(), ptrs.data(), alpha, beta,
                                        y.desc(), st.out(y)));
              st.finish();
              check_output(y, before,
                           blend(expected_concat(xs, axis, y_dims), alpha, beta, before.to_ref()),
                           tol_for(t));
            }
          }
        }
      }
    }
  }
  }
}

TEST_CASE("concat_forward on large tensors: channel concat of NCHW and NHWC inputs") {
  for (const Handle& h : test_handles()) {
    for (DType t : {DType::F32, DType::F16}) {
      for (Layout ly : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST}) {
        CAPTURE(std::string(backend_name(h)));
        CAPTURE(std::string(dtype_name(t)));
        CAPTURE(std::string(layout_name(ly)));
        std::vector<HostTensor> xs;
        xs.emplace_back(make_desc(t, {2, 32, 24, 40}, Layout::CHANNELS_FIRST));
        xs.emplace_back(make_desc(t, {2, 48, 24, 40}, Layout::CHANNELS_LAST));
        xs.emplace_back(make_desc(t, {2, 17, 24, 40}, ly));
        Staging st(h);
        std::vector<TensorDesc> descs;
        std::vector<const void*> ptrs;
        for (HostTensor& x : xs) {
          x.fill_random();
          descs.push_back(x.desc());
          ptrs.push_back(st.in(x));
        }
        const std::vector<int64_t> y_dims = {2, 97, 24, 40};
        HostTensor y(make_desc(t, y_dims, ly));
        y.poison();
        const HostTensor before = y;
        REQUIRE_OK(concat_forward(h, 1, 3, descs.data(), ptrs.data(), 1.f, 0.f, y.desc(),
                                  st.out(y)));
        st.finish();
        check_output(y, before, expected_concat(xs, 1, y_dims), tol_for(t));
      }
    }
  }
}

TEST_CASE("concat_forward converts inputs of another dtype") {
  for (const Handle& h : test_handles())
  for (DType ty : {DType::F32, DType::F16}) {
    CAPTURE(std::string(backend_name(h)));
    std::vector<HostTensor> xs;
    xs.emplace_back(make_desc(DType::F32, {2, 3, 5}, Layout::CHANNELS_LAST));
    xs.emplace_back(make_desc(DType::F16, {2, 4, 5}, Layout::REVERSED));
    for (HostTensor& x : xs) x.fill_random();
    const TensorDesc descs[2] = {xs[0].desc(), xs[1].desc()};
    Staging st(h);
    const void* ptrs[2] = {st.in(xs[0]), st.in(xs[1])};
    HostTensor y(make_desc(ty, {2, 7, 5}, Layout::PADDED));
    y.poison();
    const HostTensor before = y;
    REQUIRE_OK(concat_forward(h, 1, 2, descs, ptrs, 1.f, 0.f, y.desc(), st.out(y)));
    st.finish();
    check_output(y, before, expected_concat(xs, 1, {2, 7, 5}), tol_for(ty));
  }
}

TEST_CASE("concat_forward rejects invalid input and leaves y untouched") {
  const Handle h = Handle::cpu();
  const DType f = DType::F32;
  HostTensor a(TensorDesc::packed(f, {2, 3, 4})), b(TensorDesc::packed(f, {2, 5, 4}));
  a.fill_random();
  b.fill_random();
  HostTensor y(TensorDesc::packed(f, {2, 8, 4}));
  y.fill_random();
  const HostTensor y_before = y;
  const TensorDesc yd = y.desc();
  const TensorDesc descs[2] = {a.desc(), b.desc()};
  const void* ptrs[2] = {a.data(), b.data()};
  const void* null_second[2] = {a.data(), nullptr};

  CHECK_STATUS(concat_forward(h, 1, 0, descs, ptrs, 1.f, 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(concat_forward(h, 1, -1, descs, ptrs, 1.f, 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(concat_forward(h, -1, 2, descs, ptrs, 1.f, 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(concat_forward(h, 3, 2, descs, ptrs, 1.f, 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  // Null pointers: the arrays, one input, y.
  CHECK_STATUS(concat_forward(h, 1, 2, nullptr, ptrs, 1.f, 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(concat_forward(h, 1, 2, descs, nullptr, 1.f, 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(concat_forward(h, 1, 2, descs, null_second, 1.f, 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(concat_forward(h, 1, 2, descs, ptrs, 1.f, 0.f, yd, nullptr), StatusCode::BAD_PARAM);
  // Axis dims sum to less, and to more, than y's.
  CHECK_STATUS(concat_forward(h, 1, 1, descs, ptrs, 1.f, 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  const TensorDesc three[3] = {a.desc(), b.desc(), a.desc()};
  const void* three_ptrs[3] = {a.data(), b.data(), a.data()};
  CHECK_STATUS(concat_forward(h, 1, 3, three, three_ptrs, 1.f, 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  // Concatenating along the wrong axis: dims differ outside the axis.
  CHECK_STATUS(concat_forward(h, 2, 2, descs, ptrs, 1.f, 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  // A mismatch in a non-axis dim, and in rank.
  const TensorDesc wide[2] = {a.desc(), TensorDesc::packed(f, {2, 5, 3})};
  CHECK_STATUS(concat_forward(h, 1, 2, wide, ptrs, 1.f, 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  const TensorDesc flat[2] = {a.desc(), TensorDesc::packed(f, {2, 5})};
  CHECK_STATUS(concat_forward(h, 1, 2, flat, ptrs, 1.f, 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  // Invalid descriptors.
  const TensorDesc overlapping[2] = {a.desc(), TensorDesc::strided(f, {2, 5, 4}, {1, 1, 1})};
  CHECK_STATUS(concat_forward(h, 1, 2, overlapping, ptrs, 1.f, 0.f, yd, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(concat_forward(h, 1, 2, descs, ptrs, 1.f, 0.f, TensorDesc::packed(f, {2, 0, 4}), y.data()),
               StatusCode::BAD_PARAM);
  // None of the failures wrote to y.
  CHECK(std::memcmp(y.data(), y_before.data(), y.desc().span_bytes()) == 0);
  // And the valid call goes through.
  REQUIRE_OK(concat_forward(h, 1, 2, descs, ptrs, 1.f, 0.f, yd, y.data()));
}
