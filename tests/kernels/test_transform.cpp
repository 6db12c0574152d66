// transform_tensor on every backend: layout changes, transposes, dtype conversion, strided
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

// p advanced by `elems` elements of dtype t (host or device memory alike).
void* at_offset(void* p, DType t, int64_t elems) {
  return static_cast<unsigned char*>(p) + elems * static_cast<int64_t>(dtype_size(t));
}
const void* at_offset(const void* p, DType t, int64_t elems) {
  return static_cast<const unsigned char*>(p) + elems * static_cast<int64_t>(dtype_size(t));
}

}  // namespace

TEST_CASE("transform_tensor converts between all layouts and dtypes, ranks 1-6") {
  for (const Handle& h : test_handles()) {
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
              CAPTURE(std::string(backend_name(h)));
              CAPTURE(dims_str(dims));
              CAPTURE(std::string(dtype_name(tx)));
              CAPTURE(std::string(dtype_name(ty)));
              CAPTURE(std::string(layout_name(lx)));
              CAPTURE(std::string(layout_name(ly)));
              CAPTURE(alpha);
              CAPTURE(beta);
              HostTensor x(make_desc(tx, dims, lx));
              x.fill_random(-3.0, 3.0);
              if (specials_turn()) x.plant_specials();  // NaN and +-inf in, as ONNX gives them out
              HostTensor y(make_desc(ty, dims, ly));
              if (beta == 0.f) y.poison(); else y.fill_random();
              const HostTensor before = y;
              Staging st(h);
              REQUIRE_OK(transform_tensor(h, alpha, x.desc(), st.in(x), beta, y.desc(), st.out(y)));
              st.finish();
              check_output(y, before, blend(x.to_ref(), alpha, beta, before.to_ref()), tol_for(ty));
            }
          }
        }
      }
    }
  }
  }
}

TEST_CASE("transform_tensor handles ranks 7 and 8 and arbitrary permutations") {
  for (const Handle& h : test_handles()) {
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
        CAPTURE(std::string(backend_name(h)));
        CAPTURE(dims_str(dims));
        CAPTURE(trial);
        HostTensor x(TensorDesc::strided(tx, r, dims.data(), strides));
        x.fill_random();
        HostTensor y(make_desc(ty, dims, trial % 3 == 0 ? Layout::REVERSED : Layout::PADDED));
        y.fill_random();
        const HostTensor before = y;
        Staging st(h);
        REQUIRE_OK(transform_tensor(h, 0.5f, x.desc(), st.in(x), 0.25f, y.desc(), st.out(y)));
        st.finish();
        check_output(y, before, blend(x.to_ref(), 0.5, 0.25, before.to_ref()), tol_for(ty));
      }
    }
  }
  }
}

TEST_CASE("transform_tensor slices a strided view of the source") {
  for (const Handle& h : test_handles()) {
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
            CAPTURE(std::string(backend_name(h)));
            CAPTURE(dims_str(c.parent));
            CAPTURE(dims_str(c.dims));
            CAPTURE(std::string(layout_name(lp)));
            CAPTURE(std::string(layout_name(ly)));
            CAPTURE(beta);
            HostTensor parent(make_desc(tx, c.parent, lp));
            parent.fill_random();
            if (specials_turn()) parent.plant_specials();  // NaN and +-inf in, as ONNX gives them out
            const View v = make_view(parent.desc(), c.begin, c.step, c.dims);
            HostTensor y(make_desc(tx, c.dims, ly));
            if (beta == 0.f) y.poison(); else y.fill_random();
            const HostTensor before = y;
            Staging st(h);
            REQUIRE_OK(transform_tensor(h, alpha, v.desc, at_offset(st.in(parent), tx, v.offset),
                                        beta, y.desc(), st.out(y)));
            st.finish();
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
}

TEST_CASE("transform_tensor writes into a strided view of the destination only") {
  for (const Handle& h : test_handles()) {
  const std::vector<int64_t> parent_dims = {3, 7, 13};
  const std::vector<int64_t> begin = {1, 1, 2}, step = {1, 2, 3}, dims = {2, 3, 4};
  for (DType tx : kDtypes) {
    for (DType ty : kDtypes) {
      for (Layout lp : kLayouts) {
        for (const auto& scaling : kScalings) {
          const float alpha = scaling.first, beta = scaling.second;
          CAPTURE(std::string(backend_name(h)));
          CAPTURE(std::string(dtype_name(tx)));
          CAPTURE(std::string(dtype_name(ty)));
          CAPTURE(std::string(layout_name(lp)));
          CAPTURE(beta);
          HostTensor x(make_desc(tx, dims, Layout::PADDED));
          x.fill_random();
          HostTensor parent(make_desc(ty, parent_dims, lp));
          parent.fill_random();
          const HostTensor before = parent;
          const View v = make_view(parent.desc(), begin, step, dims);
          Staging st(h);
          REQUIRE_OK(transform_tensor(h, alpha, x.desc(), st.in(x), beta, v.desc,
                                      at_offset(st.out(parent), ty, v.offset)));
          st.finish();
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
}

TEST_CASE("transform_tensor works in place on one layout") {
  for (const Handle& h : test_handles())
  for (DType t : kDtypes) {
    for (Layout l : {Layout::PADDED, Layout::CHANNELS_LAST}) {
      for (const auto& scaling : kScalings) {
        const float alpha = scaling.first, beta = scaling.second;
        CAPTURE(std::string(backend_name(h)));
        CAPTURE(std::string(layout_name(l)));
        HostTensor x(make_desc(t, {2, 7, 3, 5}, l));
        x.fill_random();
        const HostTensor before = x;
        Staging st(h);
        void* xy = st.out(x);
        REQUIRE_OK(transform_tensor(h, alpha, x.desc(), xy, beta, x.desc(), xy));
        st.finish();
        check_output(x, before, blend(before.to_ref(), alpha, beta, before.to_ref()), tol_for(t));
      }
    }
  }
}

TEST_CASE("transform_tensor on large tensors: flat, NCHW <-> NHWC, tile and vector edges") {
  // Shapes whose transposed dims are not multiples of the 32x32 tile, a flat length that is not
  // a multiple of the vector width, and misaligned (offset by one element) dense views.
  for (const Handle& h : test_handles()) {
    struct Case {
      std::vector<int64_t> dims;
      Layout lx, ly;
    };
    const Case cases[] = {
        {{2, 67, 19, 35}, Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST},
        {{2, 67, 19, 35}, Layout::CHANNELS_LAST, Layout::CHANNELS_FIRST},
        {{3, 40, 33, 17}, Layout::CHANNELS_FIRST, Layout::CHANNELS_FIRST},
        {{3, 40, 33, 17}, Layout::CHANNELS_LAST, Layout::CHANNELS_LAST},
        {{100003}, Layout::CHANNELS_FIRST, Layout::CHANNELS_FIRST},
        {{1, 3, 128, 96}, Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST},
        {{5, 48, 2, 2, 65}, Layout::REVERSED, Layout::CHANNELS_FIRST},
    };
    for (const Case& c : cases) {
      for (DType tx : kDtypes) {
        for (DType ty : kDtypes) {
          for (const auto& scaling : kScalings) {
            for (int misalign = 0; misalign < 2; ++misalign) {
              const float alpha = scaling.first, beta = scaling.second;
              CAPTURE(std::string(backend_name(h)));
              CAPTURE(dims_str(c.dims));
              CAPTURE(std::string(dtype_name(tx)));
              CAPTURE(std::string(dtype_name(ty)));
              CAPTURE(std::string(layout_name(c.lx)));
              CAPTURE(std::string(layout_name(c.ly)));
              CAPTURE(beta);
              CAPTURE(misalign);
              // The tensors live one element into a buffer one element longer.
              const TensorDesc xd = make_desc(tx, c.dims, c.lx);
              const TensorDesc yd = make_desc(ty, c.dims, c.ly);
              HostTensor xbuf(TensorDesc::packed(tx, {xd.span() + 1}));
              xbuf.fill_random(-3.0, 3.0);
              HostTensor ybuf(TensorDesc::packed(ty, {yd.span() + 1}));
              if (beta == 0.f) ybuf.poison(); else ybuf.fill_random();
              const HostTensor before = ybuf;
              Staging st(h);
              const void* xp = at_offset(st.in(xbuf), tx, misalign);
              void* yp = at_offset(st.out(ybuf), ty, misalign);
              REQUIRE_OK(transform_tensor(h, alpha, xd, xp, beta, yd, yp));
              st.finish();
              // Expected buffer: the view's elements blended, everything else untouched.
              std::vector<double> expected = before.to_ref();
              const int64_t n = count(c.dims);
              for (int64_t p = 0; p < n; ++p) {
                const std::vector<int64_t> idx = unflatten(p, c.dims);
                int64_t xo = misalign, yo = misalign;
                for (size_t d = 0; d < idx.size(); ++d) {
                  xo += idx[d] * xd.stride(static_cast<int>(d));
                  yo += idx[d] * yd.stride(static_cast<int>(d));
                }
                expected[yo] =
                    alpha * xbuf.get_flat(xo) + (beta != 0.f ? beta * expected[yo] : 0.0);
              }
              check_output(ybuf, before, expected, tol_for(ty));
            }
          }
        }
      }
    }
  }
}

TEST_CASE("transform_tensor converts f32 <-> f16 with round-to-nearest") {
  for (const Handle& h : test_handles()) {
    CAPTURE(std::string(backend_name(h)));
    // 1 + 2^-11 is the halfway point between two f16 values: ties go to even (1.0); just above
    // rounds up. 65520 overflows to inf in f16. Eight values: the CUDA vector path converts them.
    const float values[] = {1.f + 1.f / 2048.f, 1.f + 1.f / 2048.f + 1.f / 65536.f, 65520.f, -2.5f,
                            1.f + 3.f / 2048.f, 0.f, -65504.f, 1e-8f};
    const uint16_t expected[] = {0x3c00, 0x3c01, 0x7c00, 0xc100, 0x3c02, 0x0000, 0xfbff, 0x0000};
    HostTensor x(TensorDesc::packed(DType::F32, {8}));
    std::memcpy(x.data(), values, sizeof values);
    HostTensor y(TensorDesc::packed(DType::F16, {8}));
    y.poison();
    Staging st(h);
    REQUIRE_OK(transform_tensor(h, 1.f, x.desc(), st.in(x), 0.f, y.desc(), st.out(y)));
    st.finish();
    uint16_t got[8];
    std::memcpy(got, y.data(), sizeof got);
    for (int i = 0; i < 8; ++i) CHECK(got[i] == expected[i]);
  }
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
