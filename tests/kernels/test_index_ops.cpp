// gather_elements_forward, trilu_forward, cumsum_forward, scatter_elements_forward and
// scatter_nd_forward on every backend and every dtype they take, against float64 references:
// odd shapes, strided layouts (padded, reversed), poisoned outputs (bytes no routine writes),
// NaN / infinities in float operands, negative and out-of-range indices, exclusive / reverse sums.
// The references are written here, above the tests, because no other test uses them
// (tests/reference/ holds the ones several tests share).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/util.h"

// ---- The float64 references (ref::): values are doubles (exact for the integers the tests use),
// tensors packed row-major.

namespace jet {
namespace ref {

// Helpers of the definitions below.
namespace detail {

// Row-major coordinates of flat index i in dims.
inline std::vector<int64_t> coords(int64_t i, const std::vector<int64_t>& dims) {
  std::vector<int64_t> c(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    c[d] = i % dims[d];
    i /= dims[d];
  }
  return c;
}

inline int64_t flat(const std::vector<int64_t>& c, const std::vector<int64_t>& dims) {
  int64_t f = 0;
  for (size_t d = 0; d < dims.size(); ++d) f = f * dims[d] + c[d];
  return f;
}

}  // namespace detail

// y (the indices' dims) = x at the index along `axis` (negative from the end), x's own coordinate
// elsewhere. An index outside [-n, n) gives `invalid`.
inline std::vector<double> gather_elements(int axis, const std::vector<int64_t>& x_dims,
                                           const std::vector<double>& x,
                                           const std::vector<int64_t>& indices_dims,
                                           const std::vector<double>& indices, double invalid) {
  std::vector<double> y(indices.size());
  const int64_t n = x_dims[static_cast<size_t>(axis)];
  for (size_t i = 0; i < indices.size(); ++i) {
    std::vector<int64_t> c = detail::coords(static_cast<int64_t>(i), indices_dims);
    int64_t k = static_cast<int64_t>(indices[i]);
    if (k < -n || k >= n) {
      y[i] = invalid;
      continue;
    }
    c[static_cast<size_t>(axis)] = k < 0 ? k + n : k;
    y[i] = x[static_cast<size_t>(detail::flat(c, x_dims))];
  }
  return y;
}

// x with the elements outside the upper (col - row >= k) or lower (col - row <= k) triangle of
// each matrix (last two dims) set to 0.
inline std::vector<double> trilu(bool upper, int64_t k, const std::vector<int64_t>& dims,
                                 const std::vector<double>& x) {
  std::vector<double> y(x.size());
  const int64_t rows = dims[dims.size() - 2], cols = dims[dims.size() - 1];
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t col = static_cast<int64_t>(i) % cols, row = (static_cast<int64_t>(i) / cols) % rows;
    const bool keep = upper ? col - row >= k : col - row <= k;
    y[i] = keep ? x[i] : 0.0;
  }
  return y;
}

// The running sum along `axis` (exclusive: without the element itself; reverse: from the end),
// in double.
inline std::vector<double> cumsum(int axis, bool exclusive, bool reverse,
                                  const std::vector<int64_t>& dims, const std::vector<double>& x) {
  std::vector<double> y(x.size());
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < dims.size(); ++d) inner *= dims[d];
  const int64_t n = dims[static_cast<size_t>(axis)];
  const int64_t outer = static_cast<int64_t>(x.size()) / (n * inner);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      double sum = 0.0;
      for (int64_t j = 0; j < n; ++j) {
        const int64_t i = reverse ? n - 1 - j : j;
        const size_t at = static_cast<size_t>((o * n + i) * inner + in);
        if (!exclusive) sum += x[at];
        y[at] = sum;
        if (exclusive) sum += x[at];
      }
    }
  }
  return y;
}

// 0 none, 1 add, 2 mul, 3 max, 4 min (jet::ScatterReduction's values): b applied to a, NaN wins
// max and min.
inline double scatter_combine(int reduction, double a, double b) {
  switch (reduction) {
    case 1: return a + b;
    case 2: return a * b;
    case 3: return (std::isnan(a) || a > b) ? a : b;
    case 4: return (std::isnan(a) || a < b) ? a : b;
    default: return b;
  }
}

// x with updates applied in row-major order of updates (ScatterElements along `axis`); an index
// outside [-n, n) makes the line along the axis it was meant for `invalid`.
inline std::vector<double> scatter_elements(int reduction, int axis,
                                            const std::vector<int64_t>& x_dims,
                                            const std::vector<double>& x,
                                            const std::vector<int64_t>& indices_dims,
                                            const std::vector<double>& indices,
                                            const std::vector<double>& updates, double invalid) {
  std::vector<double> y = x;
  const size_t a = static_cast<size_t>(axis);
  const int64_t n = x_dims[a];
  std::vector<std::vector<int64_t>> bad_lines;  // coordinates (axis set to 0) of poisoned lines
  for (size_t i = 0; i < indices.size(); ++i) {
    std::vector<int64_t> c = detail::coords(static_cast<int64_t>(i), indices_dims);
    const int64_t k = static_cast<int64_t>(indices[i]);
    if (k < -n || k >= n) {
      c[a] = 0;
      bad_lines.push_back(c);
      continue;
    }
    c[a] = k < 0 ? k + n : k;
    double& e = y[static_cast<size_t>(detail::flat(c, x_dims))];
    e = scatter_combine(reduction, e, updates[i]);
  }
  for (std::vector<int64_t> c : bad_lines) {
    for (int64_t j = 0; j < n; ++j) {
      c[a] = j;
      y[static_cast<size_t>(detail::flat(c, x_dims))] = invalid;
    }
  }
  return y;
}

// x with the slices of updates applied tuple by tuple (ScatterND: indices' last dim k); any index
// out of range makes the whole result `invalid`.
inline std::vector<double> scatter_nd(int reduction, const std::vector<int64_t>& x_dims,
                                      const std::vector<double>& x,
                                      const std::vector<int64_t>& indices_dims,
                                      const std::vector<double>& indices,
                                      const std::vector<double>& updates, double invalid) {
  std::vector<double> y = x;
  const size_t k = static_cast<size_t>(indices_dims.back());
  int64_t slice = 1;
  for (size_t d = k; d < x_dims.size(); ++d) slice *= x_dims[d];
  const size_t tuples = indices.size() / k;
  for (size_t t = 0; t < tuples; ++t) {
    std::vector<int64_t> c(x_dims.size(), 0);
    for (size_t m = 0; m < k; ++m) {
      const int64_t n = x_dims[m];
      const int64_t i = static_cast<int64_t>(indices[t * k + m]);
      if (i < -n || i >= n) return std::vector<double>(x.size(), invalid);
      c[m] = i < 0 ? i + n : i;
    }
    const int64_t base = detail::flat(c, x_dims);
    for (int64_t s = 0; s < slice; ++s) {
      double& e = y[static_cast<size_t>(base + s)];
      e = scatter_combine(reduction, e, updates[t * static_cast<size_t>(slice) + static_cast<size_t>(s)]);
    }
  }
  return y;
}

}  // namespace ref
}  // namespace jet

using namespace jet;
using namespace jet::test;

namespace {

const DType kAllDtypes[] = {DType::F32, DType::F16, DType::I32, DType::I64, DType::BOOL};
const Layout kLayouts[] = {Layout::CHANNELS_FIRST, Layout::PADDED, Layout::REVERSED};

// Random values of dtype t: floats in [-1, 1] (with NaN / +-inf on some turns), integers in
// [-50, 50], bools 0 / 1.
HostTensor operand(DType t, const std::vector<int64_t>& dims, Layout l) {
  std::vector<double> v(static_cast<size_t>(count(dims)));
  if (dtype_is_float(t)) {
    for (double& e : v) e = static_cast<double>(uniform_int(-1000, 1000)) / 1000.0;
    if (specials_turn()) plant_specials(&v);
  } else {
    for (double& e : v) e = static_cast<double>(t == DType::BOOL ? uniform_int(0, 1) : uniform_int(-50, 50));
  }
  return tensor_with(make_desc(t, dims, l), v);
}

double invalid_for(DType t) {
  return dtype_is_float(t) ? std::numeric_limits<double>::quiet_NaN()
         : t == DType::I32 ? -2147483648.0
         : t == DType::I64 ? -9223372036854775808.0
                           : 0.0;
}

}  // namespace

TEST_CASE("gather_elements_forward picks elements by i32 / i64 indices, negative and out of range") {
  struct Case {
    std::vector<int64_t> x, indices;
    int axis;
  };
  const std::vector<Case> cases = {
      {{7}, {5}, 0},
      {{3, 5}, {3, 7}, 1},         // more indices than x's dim at the axis
      {{5, 3}, {2, 3}, 0},         // fewer rows
      {{3, 5, 4}, {2, 4, 3}, 1},   // smaller than x at the other dims
      {{2, 3, 4, 5}, {2, 3, 4, 6}, 3},
      {{4, 1, 3}, {4, 1, 3}, 0},
  };
  for (const Handle& h : test_handles()) {
    for (DType t : kAllDtypes) {
      for (DType it : {DType::I32, DType::I64}) {
        for (const Case& k : cases) {
          for (int li = 0; li < 3; ++li) {
            if (reduced_tests() && li > 0) continue;
            CAPTURE(std::string(backend_name(h)));
            CAPTURE(std::string(dtype_name(t)));
            CAPTURE(std::string(dtype_name(it)));
            CAPTURE(dims_str(k.x));
            CAPTURE(dims_str(k.indices));
            CAPTURE(k.axis);
            CAPTURE(li);
            HostTensor x = operand(t, k.x, kLayouts[li]);
            const int64_t n = k.x[static_cast<size_t>(k.axis)];
            std::vector<double> iv(static_cast<size_t>(count(k.indices)));
            for (double& v : iv) v = static_cast<double>(uniform_int(-n - 2, n + 1));
            iv[0] = n;  // always one out of range
            HostTensor idx = tensor_with(make_desc(it, k.indices, kLayouts[(li + 1) % 3]), iv);
            HostTensor y(make_desc(t, k.indices, kLayouts[(li + 2) % 3]));
            y.poison();
            const HostTensor before = y;
            Staging st(h);
            REQUIRE_OK(gather_elements_forward(h, k.axis, x.desc(), st.in(x), idx.desc(), st.in(idx), y.desc(),
                                               st.out(y)));
            st.finish();
            check_output(y, before, ref::gather_elements(k.axis, k.x, x.to_ref(), k.indices, iv, invalid_for(t)), 0.0);
          }
        }
      }
    }
  }
}

TEST_CASE("gather_elements_forward refuses bad indices types, shapes and aliasing") {
  const Handle h = Handle::cpu();
  HostTensor x(TensorDesc::packed(DType::F32, {4, 3})), y(TensorDesc::packed(DType::F32, {2, 3}));
  HostTensor fi(TensorDesc::packed(DType::F32, {2, 3})), ii(TensorDesc::packed(DType::I64, {2, 3}));
  HostTensor wide(TensorDesc::packed(DType::I64, {2, 4})), y_wide(TensorDesc::packed(DType::F32, {2, 4}));
  HostTensor r1(TensorDesc::packed(DType::I64, {6})), y1(TensorDesc::packed(DType::F32, {6}));
  const auto code = [&](int axis, const HostTensor& i, HostTensor& out, void* yp) {
    return gather_elements_forward(h, axis, x.desc(), x.data(), i.desc(), i.data(), out.desc(), yp).code();
  };
  CHECK(code(0, ii, y, y.data()) == StatusCode::SUCCESS);
  CHECK(code(0, fi, y, y.data()) == StatusCode::BAD_PARAM);            // float indices
  CHECK(code(2, ii, y, y.data()) == StatusCode::BAD_PARAM);            // axis out of range
  CHECK(code(0, ii, y, x.data()) == StatusCode::BAD_PARAM);            // y aliases x
  CHECK(code(0, wide, y_wide, y_wide.data()) == StatusCode::BAD_PARAM);  // indices wider than x at dim 1
  CHECK(code(0, r1, y1, y1.data()) == StatusCode::BAD_PARAM);          // rank differs
  CHECK(code(0, ii, y_wide, y_wide.data()) == StatusCode::BAD_PARAM);  // y's dims are not the indices'
}

TEST_CASE("trilu_forward keeps the upper or lower triangle for every k") {
  const std::vector<std::vector<int64_t>> shapes = {{5, 7}, {7, 5}, {2, 3, 1, 6}, {3, 4, 4}, {1, 9}};
  for (const Handle& h : test_handles()) {
    for (DType t : kAllDtypes) {
      for (const std::vector<int64_t>& dims : shapes) {
        for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{-2}, int64_t{4}, int64_t{-9}, int64_t{100}}) {
          for (bool upper : {false, true}) {
            const int li = static_cast<int>((k + 9 + (upper ? 1 : 0)) % 3);
            if (reduced_tests() && li > 0) continue;
            CAPTURE(std::string(backend_name(h)));
            CAPTURE(std::string(dtype_name(t)));
            CAPTURE(dims_str(dims));
            CAPTURE(k);
            CAPTURE(upper);
            CAPTURE(li);
            HostTensor x = operand(t, dims, kLayouts[li]);
            HostTensor y(make_desc(t, dims, kLayouts[(li + 1) % 3]));
            y.poison();
            const HostTensor before = y;
            Staging st(h);
            REQUIRE_OK(trilu_forward(h, upper, k, x.desc(), st.in(x), y.desc(), st.out(y)));
            st.finish();
            check_output(y, before, ref::trilu(upper, k, dims, x.to_ref()), 0.0);
          }
        }
      }
    }
  }
  // k far beyond the matrix (no overflow of col - row - k): all or nothing.
  const Handle h = Handle::cpu();
  HostTensor x = tensor_with(TensorDesc::packed(DType::F32, {2, 2}), {1, 2, 3, 4});
  HostTensor y(TensorDesc::packed(DType::F32, {2, 2}));
  y.poison();
  const HostTensor before = y;
  REQUIRE_OK(trilu_forward(h, true, std::numeric_limits<int64_t>::min(), x.desc(), x.data(), y.desc(), y.data()));
  check_output(y, before, {1, 2, 3, 4}, 0.0);
  REQUIRE_OK(trilu_forward(h, true, std::numeric_limits<int64_t>::max(), x.desc(), x.data(), y.desc(), y.data()));
  check_output(y, before, {0, 0, 0, 0}, 0.0);
}

TEST_CASE("trilu_forward refuses rank 1, mismatched dims and aliasing") {
  const Handle h = Handle::cpu();
  HostTensor v(TensorDesc::packed(DType::F32, {6})), m(TensorDesc::packed(DType::F32, {2, 3}));
  HostTensor m2(TensorDesc::packed(DType::F32, {3, 2})), mi(TensorDesc::packed(DType::I32, {2, 3}));
  CHECK(trilu_forward(h, true, 0, v.desc(), v.data(), v.desc(), m.data()).code() == StatusCode::BAD_PARAM);
  CHECK(trilu_forward(h, true, 0, m.desc(), m.data(), m2.desc(), m2.data()).code() == StatusCode::BAD_PARAM);
  CHECK(trilu_forward(h, true, 0, m.desc(), m.data(), mi.desc(), mi.data()).code() == StatusCode::BAD_PARAM);
  CHECK(trilu_forward(h, true, 0, m.desc(), m.data(), m.desc(), m.data()).code() == StatusCode::BAD_PARAM);
}

TEST_CASE("cumsum_forward sums along any axis, exclusive and reverse") {
  struct Case {
    std::vector<int64_t> dims;
    int axis;
  };
  const std::vector<Case> cases = {{{13}, 0}, {{5, 7}, 0}, {{5, 7}, 1}, {{3, 1, 9}, 2}, {{2, 3, 4, 5}, 1}};
  for (const Handle& h : test_handles()) {
    for (DType t : {DType::F32, DType::F16, DType::I32, DType::I64}) {
      for (const Case& c : cases) {
        for (int mode = 0; mode < 4; ++mode) {
          const bool exclusive = (mode & 1) != 0, reverse = (mode & 2) != 0;
          const int li = (mode + c.axis) % 3;
          if (reduced_tests() && li > 0) continue;
          CAPTURE(std::string(backend_name(h)));
          CAPTURE(std::string(dtype_name(t)));
          CAPTURE(dims_str(c.dims));
          CAPTURE(c.axis);
          CAPTURE(exclusive);
          CAPTURE(reverse);
          CAPTURE(li);
          HostTensor x = operand(t, c.dims, kLayouts[li]);
          HostTensor y(make_desc(t, c.dims, kLayouts[(li + 2) % 3]));
          y.poison();
          const HostTensor before = y;
          Staging st(h);
          REQUIRE_OK(cumsum_forward(h, c.axis, exclusive, reverse, x.desc(), st.in(x), y.desc(), st.out(y)));
          st.finish();
          check_output(y, before, ref::cumsum(c.axis, exclusive, reverse, c.dims, x.to_ref()),
                       dtype_is_float(t) ? tol_for(t) : 0.0);
        }
      }
    }
  }
}

TEST_CASE("cumsum_forward wraps integers and refuses bool, a bad axis and aliasing") {
  const Handle h = Handle::cpu();
  HostTensor x = tensor_with(TensorDesc::packed(DType::I32, {3}), {2147483647.0, 1.0, 1.0});
  HostTensor y(TensorDesc::packed(DType::I32, {3}));
  y.poison();
  const HostTensor before = y;
  REQUIRE_OK(cumsum_forward(h, 0, false, false, x.desc(), x.data(), y.desc(), y.data()));
  check_output(y, before, {2147483647.0, -2147483648.0, -2147483647.0}, 0.0);
  HostTensor b(TensorDesc::packed(DType::BOOL, {3})), b2(TensorDesc::packed(DType::BOOL, {3}));
  CHECK(cumsum_forward(h, 0, false, false, b.desc(), b.data(), b2.desc(), b2.data()).code() == StatusCode::BAD_PARAM);
  CHECK(cumsum_forward(h, 1, false, false, x.desc(), x.data(), y.desc(), y.data()).code() == StatusCode::BAD_PARAM);
  CHECK(cumsum_forward(h, 0, false, false, x.desc(), x.data(), y.desc(), x.data()).code() == StatusCode::BAD_PARAM);
}

namespace {

// Scatter operands: floats in [-1, 1] (NaN / +-inf on some turns), integers in [-3, 3] (products
// of duplicates stay far from wrapping), bools 0 / 1.
HostTensor scatter_operand(DType t, const std::vector<int64_t>& dims, Layout l) {
  std::vector<double> v(static_cast<size_t>(count(dims)));
  if (dtype_is_float(t)) {
    for (double& e : v) e = static_cast<double>(uniform_int(-1000, 1000)) / 1000.0;
    if (specials_turn()) plant_specials(&v);
  } else {
    for (double& e : v) e = static_cast<double>(t == DType::BOOL ? uniform_int(0, 1) : uniform_int(-3, 3));
  }
  return tensor_with(make_desc(t, dims, l), v);
}

}  // namespace

TEST_CASE("scatter_elements_forward applies updates along an axis, duplicates in order, every reduction") {
  struct Case {
    std::vector<int64_t> x, indices;
    int axis;
  };
  const std::vector<Case> cases = {
      {{7}, {9}, 0},                // more updates than x's dim: duplicates
      {{5, 3}, {2, 3}, 0},
      {{3, 5}, {3, 4}, 1},
      {{3, 5, 4}, {2, 6, 3}, 1},    // smaller than x at the other dims, more along the axis
      {{2, 3, 4, 5}, {2, 2, 4, 3}, 3},
  };
  for (const Handle& h : test_handles()) {
    for (DType t : kAllDtypes) {
      for (int red = 0; red < EnumCount<ScatterReduction>::value; ++red) {
        if (t == DType::BOOL && red != 0) continue;
        for (const Case& k : cases) {
          const int li = static_cast<int>((red + k.axis) % 3);
          if (reduced_tests() && li > 0) continue;
          for (bool out_of_range : {false, true}) {
            CAPTURE(std::string(backend_name(h)));
            CAPTURE(std::string(dtype_name(t)));
            CAPTURE(red);
            CAPTURE(dims_str(k.x));
            CAPTURE(dims_str(k.indices));
            CAPTURE(k.axis);
            CAPTURE(li);
            CAPTURE(out_of_range);
            const DType it = li == 1 ? DType::I32 : DType::I64;
            HostTensor x = scatter_operand(t, k.x, kLayouts[li]);
            const int64_t n = k.x[static_cast<size_t>(k.axis)];
            std::vector<double> iv(static_cast<size_t>(count(k.indices)));
            for (double& v : iv) v = static_cast<double>(uniform_int(-n, n - 1));
            if (out_of_range) iv[iv.size() / 2] = static_cast<double>(uniform_int(0, 1) ? n : -n - 1);
            HostTensor idx = tensor_with(make_desc(it, k.indices, kLayouts[(li + 1) % 3]), iv);
            HostTensor upd = scatter_operand(t, k.indices, kLayouts[(li + 2) % 3]);
            HostTensor y(make_desc(t, k.x, kLayouts[(li + 1) % 3]));
            y.poison();
            const HostTensor before = y;
            Staging st(h);
            REQUIRE_OK(scatter_elements_forward(h, static_cast<ScatterReduction>(red), k.axis, x.desc(), st.in(x),
                                                idx.desc(), st.in(idx), upd.desc(), st.in(upd), y.desc(), st.out(y)));
            st.finish();
            check_output(y, before,
                         ref::scatter_elements(red, k.axis, k.x, x.to_ref(), k.indices, iv, upd.to_ref(), invalid_for(t)),
                         dtype_is_float(t) ? tol_for(t) : 0.0);
          }
        }
      }
    }
  }
}

TEST_CASE("scatter_nd_forward replaces or combines slices by index tuples") {
  struct Case {
    std::vector<int64_t> x, indices;  // updates: indices' dims but the last, then x's from k on
  };
  const std::vector<Case> cases = {
      {{7}, {5, 1}},                  // single elements, duplicates likely
      {{4, 3, 5}, {3, 1}},            // whole matrices
      {{4, 3, 5}, {2, 2, 2}},         // rows, a 2 x 2 grid of tuples
      {{3, 5, 2}, {4, 3}},            // single elements of a rank-3 x
      {{2, 3, 4, 5}, {3, 2}},
  };
  for (const Handle& h : test_handles()) {
    for (DType t : kAllDtypes) {
      for (int red = 0; red < EnumCount<ScatterReduction>::value; ++red) {
        if (t == DType::BOOL && red != 0) continue;
        for (size_t ci = 0; ci < cases.size(); ++ci) {
          const Case& k = cases[ci];
          const int li = static_cast<int>((static_cast<size_t>(red) + ci) % 3);
          if (reduced_tests() && li > 0) continue;
          for (bool out_of_range : {false, true}) {
            CAPTURE(std::string(backend_name(h)));
            CAPTURE(std::string(dtype_name(t)));
            CAPTURE(red);
            CAPTURE(dims_str(k.x));
            CAPTURE(dims_str(k.indices));
            CAPTURE(li);
            CAPTURE(out_of_range);
            const DType it = li == 2 ? DType::I32 : DType::I64;
            const size_t kk = static_cast<size_t>(k.indices.back());
            std::vector<int64_t> udims(k.indices.begin(), k.indices.end() - 1);
            udims.insert(udims.end(), k.x.begin() + static_cast<std::ptrdiff_t>(kk), k.x.end());
            HostTensor x = scatter_operand(t, k.x, kLayouts[li]);
            std::vector<double> iv(static_cast<size_t>(count(k.indices)));
            for (size_t i = 0; i < iv.size(); ++i) {
              const int64_t n = k.x[i % kk];
              iv[i] = static_cast<double>(uniform_int(-n, n - 1));
            }
            if (out_of_range) iv[0] = static_cast<double>(k.x[0]);
            HostTensor idx = tensor_with(make_desc(it, k.indices, kLayouts[(li + 1) % 3]), iv);
            HostTensor upd = scatter_operand(t, udims, kLayouts[(li + 2) % 3]);
            HostTensor y(make_desc(t, k.x, kLayouts[(li + 2) % 3]));
            y.poison();
            const HostTensor before = y;
            Staging st(h);
            REQUIRE_OK(scatter_nd_forward(h, static_cast<ScatterReduction>(red), x.desc(), st.in(x), idx.desc(),
                                          st.in(idx), upd.desc(), st.in(upd), y.desc(), st.out(y)));
            st.finish();
            check_output(y, before, ref::scatter_nd(red, k.x, x.to_ref(), k.indices, iv, upd.to_ref(), invalid_for(t)),
                         dtype_is_float(t) ? tol_for(t) : 0.0);
          }
        }
      }
    }
  }
}

TEST_CASE("scatter routines run in place and refuse bad shapes, dtypes, reductions and aliasing") {
  const Handle h = Handle::cpu();
  HostTensor x = tensor_with(TensorDesc::packed(DType::F32, {2, 3}), {1, 2, 3, 4, 5, 6});
  HostTensor idx = tensor_with(TensorDesc::packed(DType::I64, {1, 3}), {1, 0, 1});
  HostTensor upd = tensor_with(TensorDesc::packed(DType::F32, {1, 3}), {10, 20, 30});
  // In place (y is x): ScatterElements along axis 0.
  REQUIRE_OK(scatter_elements_forward(h, ScatterReduction::ADD, 0, x.desc(), x.data(), idx.desc(), idx.data(),
                                      upd.desc(), upd.data(), x.desc(), x.data()));
  const HostTensor none = x;
  check_output(x, none, {1, 22, 3, 14, 5, 36}, 0.0);
  HostTensor y(TensorDesc::packed(DType::F32, {2, 3}));
  HostTensor fi(TensorDesc::packed(DType::F32, {1, 3})), ui(TensorDesc::packed(DType::I64, {1, 3}));
  HostTensor bx(TensorDesc::packed(DType::BOOL, {2, 3})), bu(TensorDesc::packed(DType::BOOL, {1, 3}));
  HostTensor by(TensorDesc::packed(DType::BOOL, {2, 3}));
  const auto el = [&](ScatterReduction r, int axis, const HostTensor& xx, const HostTensor& ii, const HostTensor& uu,
                      const HostTensor& yy, void* yp) {
    return scatter_elements_forward(h, r, axis, xx.desc(), xx.data(), ii.desc(), ii.data(), uu.desc(), uu.data(),
                                    yy.desc(), yp)
        .code();
  };
  CHECK(el(ScatterReduction::NONE, 0, x, fi, upd, y, y.data()) == StatusCode::BAD_PARAM);  // float indices
  CHECK(el(ScatterReduction::NONE, 0, x, idx, ui, y, y.data()) == StatusCode::BAD_PARAM);  // updates' dtype
  CHECK(el(ScatterReduction::NONE, 2, x, idx, upd, y, y.data()) == StatusCode::BAD_PARAM);  // axis
  CHECK(el(ScatterReduction::ADD, 0, bx, idx, bu, by, by.data()) == StatusCode::BAD_PARAM);  // bool add
  CHECK(el(static_cast<ScatterReduction>(9), 0, x, idx, upd, y, y.data()) == StatusCode::BAD_PARAM);
  CHECK(el(ScatterReduction::NONE, 0, x, idx, upd, y, upd.data()) == StatusCode::BAD_PARAM);  // y is updates
  HostTensor wide_i(TensorDesc::packed(DType::I64, {1, 4})), wide_u(TensorDesc::packed(DType::F32, {1, 4}));
  CHECK(el(ScatterReduction::NONE, 0, x, wide_i, wide_u, y, y.data()) == StatusCode::BAD_PARAM);  // wider than x
  // ScatterND: k above the rank, updates of the wrong shape.
  HostTensor k3 = tensor_with(TensorDesc::packed(DType::I64, {1, 3}), {0, 0, 0});
  HostTensor k1 = tensor_with(TensorDesc::packed(DType::I64, {2, 1}), {0, 1});
  HostTensor u23(TensorDesc::packed(DType::F32, {2, 3})), u22(TensorDesc::packed(DType::F32, {2, 2}));
  const auto nd = [&](const HostTensor& ii, const HostTensor& uu) {
    return scatter_nd_forward(h, ScatterReduction::NONE, x.desc(), x.data(), ii.desc(), ii.data(), uu.desc(),
                              uu.data(), y.desc(), y.data())
        .code();
  };
  CHECK(nd(k1, u23) == StatusCode::SUCCESS);
  CHECK(nd(k3, u23) == StatusCode::BAD_PARAM);
  CHECK(nd(k1, u22) == StatusCode::BAD_PARAM);
}
