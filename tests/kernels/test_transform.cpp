// transform_tensor on the CPU backend: layout changes, transposes, dtype conversion, strided
// slices of the source and of the destination, against the stored input values.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/util.h"

using namespace jet;
using namespace jet::test;

namespace {

const Layout kLayouts[] = {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED,
                           Layout::REVERSED};
const DType kDtypes[] = {DType::F32, DType::F16};
const std::pair<float, float> kScalings[] = {{1.f, 0.f}, {0.5f, 0.25f}};

// Row-major multi-index of packed position p.
std::vector<int64_t> unflatten(int64_t p, const std::vector<int64_t>& dims) {
  std::vector<int64_t> idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    idx[d] = p % dims[d];
    p /= dims[d];
  }
  return idx;
}

// A strided view of `parent`: element idx of the view is parent element begin + idx * step.
struct View {
  TensorDesc desc;
  int64_t offset = 0;  // elements from the parent's base
  std::vector<int64_t> begin, step;
};

View make_view(const TensorDesc& parent, const std::vector<int64_t>& begin,
               const std::vector<int64_t>& step, const std::vector<int64_t>& dims) {
  View v;
  v.begin = begin;
  v.step = step;
  int64_t strides[kMaxRank];
  for (int i = 0; i < parent.rank(); ++i) {
    REQUIRE(begin[i] + (dims[i] - 1) * step[i] < parent.dim(i));
    strides[i] = parent.stride(i) * step[i];
    v.offset += begin[i] * parent.stride(i);
  }
  v.desc = TensorDesc::strided(parent.dtype(), parent.rank(), dims.data(), strides);
  return v;
}

void* at_offset(HostTensor& t, int64_t elems) {
  return static_cast<unsigned char*>(t.data()) + elems * dtype_size(t.desc().dtype());
}

}  // namespace

TEST_CASE("transform_tensor converts between all layouts and dtypes, ranks 1-6") {
  const Handle h = Handle::cpu();
  const std::vector<std::vector<int64_t>> shapes = {
      {13},         {1},          {7, 3},          {1, 13},           {3, 7, 13},
      {3, 1, 7},    {2, 3, 7, 5}, {1, 7, 3, 13},   {3, 2, 1, 7, 3},   {2, 3, 1, 2, 3, 7}};
  for (const auto& dims : shapes) {
    for (DType tx : kDtypes) {
      for (DType ty : kDtypes) {
        for (Layout lx : kLayouts) {
          for (Layout ly : kLayouts) {
            for (const auto& scaling : kScalings) {
              const float alpha = scaling.first, beta = scaling.second;
              CAPTURE(dims_str(dims));
              CAPTURE(dtype_name(tx));
              CAPTURE(dtype_name(ty));
              CAPTURE(layout_name(lx));
              CAPTURE(layout_name(ly));
              CAPTURE(alpha);
              CAPTURE(beta);
              HostTensor x(make_desc(tx, dims, lx));
              x.fill_random(-3.0, 3.0);
              HostTensor y(make_desc(ty, dims, ly));
              if (beta == 0.f) y.poison(); else y.fill_random();
              const HostTensor before = y;
              REQUIRE_OK(transform_tensor(h, alpha, x.desc(), x.data(), beta, y.desc(), y.data()));
              check_output(y, before, blend(x.to_ref(), alpha, beta, before.to_ref()), tol_for(ty));
            }
          }
        }
      }
    }
  }
}

TEST_CASE("transform_tensor handles ranks 7 and 8 and arbitrary permutations") {
  const Handle h = Handle::cpu();
  const std::vector<std::vector<int64_t>> shapes = {{2, 3, 1, 2, 3, 1, 3}, {2, 1, 3, 2, 1, 3, 2, 3}};
  for (const auto& dims : shapes) {
    const int r = static_cast<int>(dims.size());
    for (int trial = 0; trial < 6; ++trial) {
      // A random memory order of the dims: a general transpose.
      std::vector<int> order(r);
      for (int i = 0; i < r; ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), rng());
      int64_t strides[kMaxRank];
      int64_t s = 1;
      for (int j = r - 1; j >= 0; --j) {
        strides[order[j]] = s;
        s *= dims[order[j]] + (trial % 2);  // odd trials leave gaps
      }
      for (DType tx : kDtypes) {
        const DType ty = tx == DType::F32 ? DType::F16 : DType::F32;
        CAPTURE(dims_str(dims));
        CAPTURE(trial);
        HostTensor x(TensorDesc::strided(tx, r, dims.data(), strides));
        x.fill_random();
        HostTensor y(make_desc(ty, dims, trial % 3 == 0 ? Layout::REVERSED : Layout::PADDED));
        y.fill_random();
        const HostTensor before = y;
        REQUIRE_OK(transform_tensor(h, 0.5f, x.desc(), x.data(), 0.25f, y.desc(), y.data()));
        check_output(y, before, blend(x.to_ref(), 0.5, 0.25, before.to_ref()), tol_for(ty));
      }
    }
  }
}

TEST_CASE("transform_tensor slices a strided view of the source") {
  const Handle h = Handle::cpu();
  struct Case {
    std::vector<int64_t> parent, begin, step, dims;
  };
  const std::vector<Case> cases = {
      {{13}, {2}, {3}, {4}},                              // every third element
      {{7, 13}, {1, 0}, {1, 2}, {5, 7}},                  // sub-rows, every other column
      {{3, 7, 13}, {1, 2, 3}, {1, 1, 1}, {2, 5, 7}},      // a sub-box
      {{2, 7, 7, 13}, {0, 1, 0, 12}, {1, 2, 3, 1}, {2, 3, 3, 1}},
      {{3, 3, 7, 3, 13}, {2, 0, 6, 1, 1}, {1, 1, 1, 1, 4}, {1, 3, 1, 2, 3}},
  };
  for (const Case& c : cases) {
    for (DType tx : kDtypes) {
      for (Layout lp : kLayouts) {
        for (Layout ly : {Layout::CHANNELS_FIRST, Layout::REVERSED}) {
          for (const auto& scaling : kScalings) {
            const float alpha = scaling.first, beta = scaling.second;
            CAPTURE(dims_str(c.parent));
            CAPTURE(dims_str(c.dims));
            CAPTURE(layout_name(lp));
            CAPTURE(layout_name(ly));
            CAPTURE(beta);
            HostTensor parent(make_desc(tx, c.parent, lp));
            parent.fill_random();
            const View v = make_view(parent.desc(), c.begin, c.step, c.dims);
            HostTensor y(make_desc(tx, c.dims, ly));
            if (beta == 0.f) y.poison(); else y.fill_random();
            const HostTensor before = y;
            REQUIRE_OK(transform_tensor(h, alpha, v.desc, at_offset(parent, v.offset), beta,
                                        y.desc(), y.data()));
            std::vector<double> expected(static_cast<size_t>(count(c.dims)));
            for (int64_t p = 0; p < count(c.dims); ++p) {
              std::vector<int64_t> idx = unflatten(p, c.dims);
              for (size_t d = 0; d < idx.size(); ++d) idx[d] = c.begin[d] + idx[d] * c.step[d];
              expected[p] = parent.get(idx.data());
            }
            check_output(y, before, blend(expected, alpha, beta, before.to_ref()), tol_for(tx));
          }
        }
      }
    }
  }
}

TEST_CASE("transform_tensor writes into a strided view of the destination only") {
  const Handle h = Handle::cpu();
  const std::vector<int64_t> parent_dims = {3, 7, 13};
  const std::vector<int64_t> begin = {1, 1, 2}, step = {1, 2, 3}, dims = {2, 3, 4};
  for (DType tx : kDtypes) {
    for (DType ty : kDtypes) {
      for (Layout lp : kLayouts) {
        for (const auto& scaling : kScalings) {
          const float alpha = scaling.first, beta = scaling.second;
          CAPTURE(dtype_name(tx));
          CAPTURE(dtype_name(ty));
          CAPTURE(layout_name(lp));
          CAPTURE(beta);
          HostTensor x(make_desc(tx, dims, Layout::PADDED));
          x.fill_random();
          HostTensor parent(make_desc(ty, parent_dims, lp));
          parent.fill_random();
          const HostTensor before = parent;
          const View v = make_view(parent.desc(), begin, step, dims);
          REQUIRE_OK(transform_tensor(h, alpha, x.desc(), x.data(), beta, v.desc,
                                      at_offset(parent, v.offset)));
          // Inside the view: alpha * x + beta * before; everywhere else: unchanged.
          std::vector<double> expected = before.to_ref();
          const std::vector<double> xs = x.to_ref();
          for (int64_t p = 0; p < count(dims); ++p) {
            const std::vector<int64_t> idx = unflatten(p, dims);
            int64_t q = 0;
            for (size_t d = 0; d < idx.size(); ++d) q = q * parent_dims[d] + begin[d] + idx[d] * step[d];
            expected[q] = alpha * xs[p] + (beta != 0.f ? beta * expected[q] : 0.0);
          }
          // check_output also checks that the parent's gap elements are untouched.
          check_output(parent, before, expected, tol_for(ty));
        }
      }
    }
  }
}

TEST_CASE("transform_tensor works in place on one layout") {
  const Handle h = Handle::cpu();
  for (DType t : kDtypes) {
    for (const auto& scaling : kScalings) {
      const float alpha = scaling.first, beta = scaling.second;
      HostTensor x(make_desc(t, {2, 7, 3, 5}, Layout::PADDED));
      x.fill_random();
      const HostTensor before = x;
      REQUIRE_OK(transform_tensor(h, alpha, x.desc(), x.data(), beta, x.desc(), x.data()));
      check_output(x, before, blend(before.to_ref(), alpha, beta, before.to_ref()), tol_for(t));
    }
  }
}

TEST_CASE("transform_tensor converts f32 <-> f16 with round-to-nearest") {
  const Handle h = Handle::cpu();
  // 1 + 2^-11 is the halfway point between two f16 values: ties go to even (1.0); just above
  // rounds up. 65520 overflows to inf in f16.
  const float values[] = {1.f + 1.f / 2048.f, 1.f + 1.f / 2048.f + 1.f / 65536.f, 65520.f, -2.5f};
  const uint16_t expected[] = {0x3c00, 0x3c01, 0x7c00, 0xc100};
  const TensorDesc xd = TensorDesc::packed(DType::F32, {4});
  const TensorDesc yd = TensorDesc::packed(DType::F16, {4});
  uint16_t y[4] = {};
  REQUIRE_OK(transform_tensor(h, 1.f, xd, values, 0.f, yd, y));
  for (int i = 0; i < 4; ++i) CHECK(y[i] == expected[i]);
}

TEST_CASE("transform_tensor rejects invalid input") {
  const Handle h = Handle::cpu();
  const TensorDesc d = TensorDesc::nchw(DType::F32, 1, 2, 3, 3);
  HostTensor x(d), y(d);
  x.fill_random();
  CHECK_STATUS(transform_tensor(h, 1.f, d, nullptr, 0.f, d, y.data()), StatusCode::BAD_PARAM);
  CHECK_STATUS(transform_tensor(h, 1.f, d, x.data(), 0.f, d, nullptr), StatusCode::BAD_PARAM);
  // Dims differ; rank differs.
  CHECK_STATUS(transform_tensor(h, 1.f, d, x.data(), 0.f, TensorDesc::nchw(DType::F32, 1, 2, 3, 2), y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(transform_tensor(h, 1.f, d, x.data(), 0.f, TensorDesc::packed(DType::F32, {2, 3, 3}), y.data()),
               StatusCode::BAD_PARAM);
  // Bad descriptors: a zero dim, overlapping strides, rank 9, an unknown dtype.
  CHECK_STATUS(transform_tensor(h, 1.f, TensorDesc::nchw(DType::F32, 1, 0, 3, 3), x.data(), 0.f, d, y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(transform_tensor(h, 1.f, d, x.data(), 0.f, TensorDesc::strided(DType::F32, {1, 2, 3, 3}, {9, 1, 1, 1}), y.data()),
               StatusCode::BAD_PARAM);
  const int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  CHECK_STATUS(transform_tensor(h, 1.f, TensorDesc::packed(DType::F32, 9, nine), x.data(), 0.f,
                                TensorDesc::packed(DType::F32, 9, nine), y.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(transform_tensor(h, 1.f, d.with_dtype(static_cast<DType>(7)), x.data(), 0.f, d, y.data()),
               StatusCode::BAD_PARAM);
}
