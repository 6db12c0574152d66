// The routines that take integer and bool tensors, on every backend, against the exact references
// below: logic_tensor (comparisons, And/Or/Xor), where_forward,
// arg_reduce_forward, transform_tensor's conversions between all five dtypes and concat_forward
// of integers. Odd shapes, broadcasting both ways, strided layouts, poisoned outputs (bytes no
// routine writes) and NaN / infinities in float operands.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/util.h"
#include "jet/dnn/tensor_ops.h"
#include "jet/dnn/common.h"
#include "reference/tensor_math.h"

// ---- The exact references (ref::), written here because no other test uses them: logic_tensor,
// where_forward, arg_reduce_forward and transform_tensor's conversions. Values are doubles (exact
// for the integers the tests use, |v| < 2^53); results are what the output dtype holds.

namespace jet {
namespace ref {

// op(a, b) as 0 or 1, a and b broadcast to c_dims (packed row-major).
inline std::vector<double> logic(LogicOp op, const std::vector<int64_t>& a_dims,
                                 const std::vector<double>& a, const std::vector<int64_t>& b_dims,
                                 const std::vector<double>& b, const std::vector<int64_t>& c_dims) {
  const std::vector<double> ab = broadcast(a_dims, a, c_dims), bb = broadcast(b_dims, b, c_dims);
  std::vector<double> out(ab.size());
  for (size_t i = 0; i < ab.size(); ++i) {
    const double x = ab[i], y = bb[i];
    bool r = false;
    switch (op) {
      case LogicOp::EQUAL: r = x == y; break;
      case LogicOp::LESS: r = x < y; break;
      case LogicOp::LESS_OR_EQUAL: r = x <= y; break;
      case LogicOp::GREATER: r = x > y; break;
      case LogicOp::GREATER_OR_EQUAL: r = x >= y; break;
      case LogicOp::AND: r = x != 0 && y != 0; break;
      case LogicOp::OR: r = x != 0 || y != 0; break;
      case LogicOp::XOR: r = (x != 0) != (y != 0); break;
    }
    out[i] = r ? 1.0 : 0.0;
  }
  return out;
}

// cond != 0 ? a : b, all broadcast to y_dims.
inline std::vector<double> where(const std::vector<int64_t>& cond_dims,
                                 const std::vector<double>& cond,
                                 const std::vector<int64_t>& a_dims, const std::vector<double>& a,
                                 const std::vector<int64_t>& b_dims, const std::vector<double>& b,
                                 const std::vector<int64_t>& y_dims) {
  const std::vector<double> cb = broadcast(cond_dims, cond, y_dims), ab = broadcast(a_dims, a, y_dims),
                            bb = broadcast(b_dims, b, y_dims);
  std::vector<double> out(cb.size());
  for (size_t i = 0; i < cb.size(); ++i) out[i] = cb[i] != 0 ? ab[i] : bb[i];
  return out;
}

// The index along `axis` of the largest (ARGMAX) or smallest element of each row; NaN wins, ties
// go to the first index (the last with select_last_index). x's dims with 1 at `axis`.
inline std::vector<double> arg_reduce(ArgReduceOp op, int axis, bool select_last_index,
                                      const std::vector<int64_t>& x_dims,
                                      const std::vector<double>& x) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x_dims[d];
  for (size_t d = axis + 1; d < x_dims.size(); ++d) inner *= x_dims[d];
  const int64_t n = x_dims[axis];
  std::vector<double> out(static_cast<size_t>(outer * inner));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < inner; ++k) {
      // The first (last) NaN if any; else the first (last) index of the extreme value.
      int64_t found = -1;
      for (int64_t i = 0; i < n; ++i) {
        if (std::isnan(x[(o * n + i) * inner + k]) && (found < 0 || select_last_index)) found = i;
      }
      if (found < 0) {
        double best = x[(o * n) * inner + k];
        for (int64_t i = 1; i < n; ++i) {
          const double v = x[(o * n + i) * inner + k];
          if (op == ArgReduceOp::ARGMAX ? v > best : v < best) best = v;
        }
        for (int64_t i = 0; i < n; ++i) {
          if (x[(o * n + i) * inner + k] == best && (found < 0 || select_last_index)) found = i;
        }
      }
      out[o * inner + k] = static_cast<double>(found);
    }
  }
  return out;
}

// v (a value of dtype `from`) as dtype `to` holds it: float -> integer truncates (NaN and out of
// range: the integer's lowest value), -> bool is != 0, i64 -> i32 wraps, -> f16 rounds to half.
inline double cast(DType from, DType to, double v) {
  if (from == DType::BOOL) v = v != 0 ? 1.0 : 0.0;
  switch (to) {
    case DType::F32: return static_cast<float>(v);
    case DType::F16: return static_cast<float>(half(static_cast<float>(v)));
    case DType::BOOL: return v != 0 ? 1.0 : 0.0;  // NaN != 0
    case DType::I32:
      if (from == DType::I64) {  // wraps modulo 2^32
        const double m = std::fmod(v, 4294967296.0);
        const double u = m < 0 ? m + 4294967296.0 : m;
        return u >= 2147483648.0 ? u - 4294967296.0 : u;
      }
      if (std::isnan(v) || v < -2147483648.0 || v >= 2147483648.0) return -2147483648.0;
      return std::trunc(v);
    case DType::I64:
      if (std::isnan(v) || v < -9223372036854775808.0 || v >= 9223372036854775808.0) return -9223372036854775808.0;
      return std::trunc(v);
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// x gathered along `axis` at `indices` (packed, any dims; negative from the end): x's dims before
// axis, indices' dims, x's dims after axis. An index outside [-n, n) gives `invalid`.
inline std::vector<double> gather(int axis, const std::vector<int64_t>& x_dims,
                                  const std::vector<double>& x, const std::vector<double>& indices,
                                  double invalid) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x_dims[d];
  for (size_t d = axis + 1; d < x_dims.size(); ++d) inner *= x_dims[d];
  const int64_t n = x_dims[axis];
  std::vector<double> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (double iv : indices) {
      int64_t i = static_cast<int64_t>(iv);
      const bool in = i >= -n && i < n;
      if (i < 0) i += n;
      for (int64_t k = 0; k < inner; ++k) out.push_back(in ? x[(o * n + i) * inner + k] : invalid);
    }
  }
  return out;
}

// op_tensor on integers (the values small enough that no op overflows): DIV truncates, MOD has
// a's sign, MOD_FLOOR b's, a zero divisor gives 0, POW with a negative exponent truncates
// 1 / a^-b (0 for a = 0); a and b broadcast to c_dims.
inline std::vector<double> int_tensor_op(TensorOp op, const std::vector<int64_t>& a_dims,
                                         const std::vector<double>& a,
                                         const std::vector<int64_t>& b_dims,
                                         const std::vector<double>& b,
                                         const std::vector<int64_t>& c_dims) {
  const std::vector<double> ab = broadcast(a_dims, a, c_dims), bb = broadcast(b_dims, b, c_dims);
  std::vector<double> out(ab.size());
  for (size_t i = 0; i < ab.size(); ++i) {
    const double x = ab[i], y = bb[i];
    double r = 0.0;
    switch (op) {
      case TensorOp::ADD: r = x + y; break;
      case TensorOp::SUB: r = x - y; break;
      case TensorOp::MUL: r = x * y; break;
      case TensorOp::DIV: r = y == 0.0 ? 0.0 : std::trunc(x / y); break;
      case TensorOp::MIN: r = std::min(x, y); break;
      case TensorOp::MAX: r = std::max(x, y); break;
      case TensorOp::POW:
        if (y >= 0.0) r = std::pow(x, y);
        else r = x == 0.0 ? 0.0 : std::trunc(1.0 / std::pow(x, -y));
        break;
      case TensorOp::MOD: r = y == 0.0 ? 0.0 : x - std::trunc(x / y) * y; break;
      case TensorOp::MOD_FLOOR: r = y == 0.0 ? 0.0 : x - std::floor(x / y) * y; break;
    }
    out[i] = r == 0.0 ? 0.0 : r;  // no -0
  }
  return out;
}

}  // namespace ref
}  // namespace jet

using namespace jet;
using namespace jet::test;

namespace {

const DType kAllDtypes[] = {DType::F32, DType::F16, DType::I32, DType::I64, DType::BOOL};

struct BroadcastCase {
  std::vector<int64_t> a, b, c;
};

const std::vector<BroadcastCase>& broadcast_cases() {
  static const std::vector<BroadcastCase> cases = {
      {{7}, {1}, {7}},
      {{1}, {7}, {7}},
      {{3, 13}, {3, 1}, {3, 13}},
      {{13}, {3, 13}, {3, 13}},  // rank alignment: a gets a leading 1
      {{2, 1, 5}, {1, 3, 1}, {2, 3, 5}},
      {{3, 7, 13}, {3, 7, 13}, {3, 7, 13}},
      {{2, 3, 1, 4, 5}, {1, 3, 2, 1, 1}, {2, 3, 2, 4, 5}},
  };
  return cases;
}

std::vector<int64_t> aligned(const std::vector<int64_t>& d, size_t rank) {
  std::vector<int64_t> r(rank - d.size(), 1);
  r.insert(r.end(), d.begin(), d.end());
  return r;
}

const Layout kLayouts[] = {Layout::CHANNELS_FIRST, Layout::PADDED, Layout::REVERSED};

// Operands with many ties (equal values) and, for float types on some turns, NaN and infinities.
HostTensor operand(DType t, const std::vector<int64_t>& dims, Layout l) {
  HostTensor x(make_desc(t, dims, l));
  x.fill_random();
  if (dtype_is_float(t)) {  // values on a coarse grid: ties are common
    std::vector<double> v = x.to_ref();
    for (double& e : v) e = std::round(e * 4.0) / 4.0;
    x.from_ref(v);
    if (specials_turn()) x.plant_specials();
  }
  return x;
}

}  // namespace

TEST_CASE("logic_tensor compares and combines exactly, with broadcasting") {
  for (const Handle& h : test_handles()) {
    for (int32_t o = 0; o < EnumCount<LogicOp>::value; ++o) {
      const LogicOp op = static_cast<LogicOp>(o);
      const bool logical = op == LogicOp::AND || op == LogicOp::OR || op == LogicOp::XOR;
      for (DType t : kAllDtypes) {
        if (logical != (t == DType::BOOL) && !(op == LogicOp::EQUAL && t == DType::BOOL)) continue;
        for (const BroadcastCase& k : broadcast_cases()) {
          for (int li = 0; li < 3; ++li) {
            if (reduced_tests() && li > 0) continue;
            CAPTURE(std::string(backend_name(h)));
            CAPTURE(std::string(logic_op_name(op)));
            CAPTURE(std::string(dtype_name(t)));
            CAPTURE(dims_str(k.c));
            CAPTURE(li);
            const Layout la = kLayouts[li], lb = kLayouts[(li + 1) % 3], lc = kLayouts[(li + 2) % 3];
            HostTensor a = operand(t, aligned(k.a, k.a.size()), la);
            HostTensor b = operand(t, k.b, lb);
            HostTensor c(make_desc(DType::BOOL, k.c, lc));
            c.poison();
            const HostTensor before = c;
            Staging st(h);
            REQUIRE_OK(logic_tensor(h, op, a.desc(), st.in(a), b.desc(), st.in(b), c.desc(), st.out(c)));
            st.finish();
            check_output(c, before, ref::logic(op, k.a, a.to_ref(), k.b, b.to_ref(), k.c), 0.0);
          }
        }
      }
    }
  }
}

TEST_CASE("logic_tensor compares int64 as integers, not through float") {
  for (const Handle& h : test_handles()) {
    CAPTURE(std::string(backend_name(h)));
    // 2^60 and 2^60 + 1 are one float (and one double): only an integer comparison tells them apart.
    HostTensor a(TensorDesc::packed(DType::I64, {3}));
    HostTensor b(TensorDesc::packed(DType::I64, {3}));
    const int64_t av[3] = {(int64_t(1) << 60) + 1, -(int64_t(1) << 62), INT64_MAX};
    const int64_t bv[3] = {int64_t(1) << 60, -(int64_t(1) << 62) - 1, INT64_MAX - 1};
    std::memcpy(a.data(), av, sizeof av);
    std::memcpy(b.data(), bv, sizeof bv);
    for (LogicOp op : {LogicOp::EQUAL, LogicOp::GREATER}) {
      HostTensor c(TensorDesc::packed(DType::BOOL, {3}));
      c.poison();
      Staging st(h);
      REQUIRE_OK(logic_tensor(h, op, a.desc(), st.in(a), b.desc(), st.in(b), c.desc(), st.out(c)));
      st.finish();
      const uint8_t* r = static_cast<const uint8_t*>(c.data());
      for (int i = 0; i < 3; ++i) CHECK(r[i] == (op == LogicOp::EQUAL ? 0 : 1));
    }
  }
}

TEST_CASE("logic_tensor refuses mismatched dtypes") {
  const Handle h = Handle::cpu();
  HostTensor a(TensorDesc::packed(DType::F32, {4})), b(TensorDesc::packed(DType::F32, {4}));
  HostTensor bi(TensorDesc::packed(DType::I32, {4})), c(TensorDesc::packed(DType::BOOL, {4}));
  HostTensor cf(TensorDesc::packed(DType::F32, {4}));
  CHECK(logic_tensor(h, LogicOp::LESS, a.desc(), a.data(), bi.desc(), bi.data(), c.desc(), c.data()).code() ==
        StatusCode::BAD_PARAM);
  CHECK(logic_tensor(h, LogicOp::LESS, a.desc(), a.data(), b.desc(), b.data(), cf.desc(), cf.data()).code() ==
        StatusCode::BAD_PARAM);
  CHECK(logic_tensor(h, LogicOp::AND, a.desc(), a.data(), b.desc(), b.data(), c.desc(), c.data()).code() ==
        StatusCode::BAD_PARAM);
  CHECK(logic_tensor(h, LogicOp::LESS, c.desc(), c.data(), c.desc(), c.data(), c.desc(), c.data()).code() ==
        StatusCode::BAD_PARAM);
  // A float routine given an integer tensor says so instead of reading it as floats.
  HostTensor yi(TensorDesc::packed(DType::I32, {4}));
  const Status s = activation_forward(h, ActivationDesc::of(ActivationMode::RELU), 1.f, bi.desc(), bi.data(), 0.f,
                                      yi.desc(), yi.data());
  CHECK(s.code() == StatusCode::NOT_SUPPORTED);
  CHECK(s.message().find("i32") != std::string::npos);
}

TEST_CASE("where_forward picks a or b for every dtype, with broadcasting") {
  struct WhereCase {
    std::vector<int64_t> cond, a, b, y;
  };
  const std::vector<WhereCase> cases = {
      {{1}, {7}, {7}, {7}},
      {{7}, {1}, {7}, {7}},
      {{3, 13}, {3, 1}, {1, 13}, {3, 13}},
      {{2, 1, 5}, {1, 3, 1}, {5}, {2, 3, 5}},
      {{2, 3, 1, 4, 5}, {1, 3, 2, 1, 1}, {2, 3, 2, 4, 5}, {2, 3, 2, 4, 5}},
  };
  for (const Handle& h : test_handles()) {
    for (DType t : kAllDtypes) {
      for (const WhereCase& k : cases) {
        for (int li = 0; li < 3; ++li) {
          if (reduced_tests() && li > 0) continue;
          CAPTURE(std::string(backend_name(h)));
          CAPTURE(std::string(dtype_name(t)));
          CAPTURE(dims_str(k.y));
          CAPTURE(li);
          HostTensor cond = operand(DType::BOOL, k.cond, kLayouts[li]);
          HostTensor a = operand(t, k.a, kLayouts[(li + 1) % 3]);
          HostTensor b = operand(t, k.b, kLayouts[(li + 2) % 3]);
          HostTensor y(make_desc(t, k.y, kLayouts[li]));
          y.poison();
          const HostTensor before = y;
          Staging st(h);
          REQUIRE_OK(where_forward(h, cond.desc(), st.in(cond), a.desc(), st.in(a), b.desc(), st.in(b), y.desc(),
                                   st.out(y)));
          st.finish();
          // Exact: the chosen element is copied, never converted.
          check_output(y, before, ref::where(k.cond, cond.to_ref(), k.a, a.to_ref(), k.b, b.to_ref(), k.y), 0.0);
        }
      }
    }
  }
}

TEST_CASE("arg_reduce_forward finds the first or last extreme index") {
  const std::vector<std::vector<int64_t>> shapes = {{7}, {3, 13}, {2, 5, 3}, {2, 3, 4, 5}, {1, 33, 1}};
  for (const Handle& h : test_handles()) {
    for (DType t : {DType::F32, DType::F16, DType::I32, DType::I64}) {
      for (const auto& dims : shapes) {
        for (int axis = 0; axis < static_cast<int>(dims.size()); ++axis) {
          for (int op = 0; op < 2; ++op) {
            for (bool last : {false, true}) {
              for (int li = 0; li < 3; ++li) {
                if (reduced_tests() && li > 0) continue;
                CAPTURE(std::string(backend_name(h)));
                CAPTURE(std::string(dtype_name(t)));
                CAPTURE(dims_str(dims));
                CAPTURE(axis);
                CAPTURE(op);
                CAPTURE(last);
                CAPTURE(li);
                HostTensor x = operand(t, dims, kLayouts[li]);
                std::vector<int64_t> ydims = dims;
                ydims[axis] = 1;
                HostTensor y(make_desc(DType::I64, ydims, kLayouts[(li + 1) % 3]));
                y.poison();
                const HostTensor before = y;
                Staging st(h);
                REQUIRE_OK(arg_reduce_forward(h, static_cast<ArgReduceOp>(op), axis, last, x.desc(), st.in(x),
                                              y.desc(), st.out(y)));
                st.finish();
                check_output(y, before, ref::arg_reduce(static_cast<ArgReduceOp>(op), axis, last, dims, x.to_ref()),
                             0.0);
              }
            }
          }
        }
      }
    }
  }
}

TEST_CASE("transform_tensor converts between every pair of dtypes") {
  const std::vector<std::vector<int64_t>> shapes = {{1}, {37}, {3, 5, 7}, {2, 3, 4, 5}};
  for (const Handle& h : test_handles()) {
    for (DType from : kAllDtypes) {
      for (DType to : kAllDtypes) {
        for (const auto& dims : shapes) {
          for (int li = 0; li < 3; ++li) {
            if (reduced_tests() && li > 0) continue;
            CAPTURE(std::string(backend_name(h)));
            CAPTURE(std::string(dtype_name(from)));
            CAPTURE(std::string(dtype_name(to)));
            CAPTURE(dims_str(dims));
            CAPTURE(li);
            HostTensor x(make_desc(from, dims, kLayouts[li]));
            x.fill_random(-300.0, 300.0);  // floats with fractions; integers up to +-1200
            std::vector<double> v = x.to_ref();
            if (dtype_is_float(from) && !v.empty()) {
              v[0] = -0.75;  // truncates to 0, not -1
              if (v.size() > 1) v[1] = 2.5;
              if (v.size() > 2) v[2] = std::numeric_limits<double>::quiet_NaN();  // -> bool true
              if (v.size() > 3) v[3] = 0.0;
              x.from_ref(v);
              v = x.to_ref();
            }
            HostTensor y(make_desc(to, dims, kLayouts[(li + 2) % 3]));
            y.poison();
            const HostTensor before = y;
            Staging st(h);
            REQUIRE_OK(transform_tensor(h, 1.f, x.desc(), st.in(x), 0.f, y.desc(), st.out(y)));
            st.finish();
            std::vector<double> ref(v.size());
            for (size_t i = 0; i < v.size(); ++i) ref[i] = ref::cast(from, to, v[i]);
            check_output(y, before, ref, 0.0);
          }
        }
      }
    }
  }
}

TEST_CASE("transform_tensor: int64 to int32 wraps, float out of range gives the lowest integer") {
  for (const Handle& h : test_handles()) {
    CAPTURE(std::string(backend_name(h)));
    HostTensor x(TensorDesc::packed(DType::I64, {3}));
    const int64_t xv[3] = {(int64_t(1) << 32) + 5, -(int64_t(1) << 33) - 7, (int64_t(1) << 31)};
    std::memcpy(x.data(), xv, sizeof xv);
    HostTensor y(TensorDesc::packed(DType::I32, {3}));
    y.poison();
    {
      Staging st(h);
      REQUIRE_OK(transform_tensor(h, 1.f, x.desc(), st.in(x), 0.f, y.desc(), st.out(y)));
      st.finish();
    }
    int32_t yv[3];
    std::memcpy(yv, y.data(), sizeof yv);
    CHECK(yv[0] == 5);
    CHECK(yv[1] == -7);
    CHECK(yv[2] == INT32_MIN);
    HostTensor f(TensorDesc::packed(DType::F32, {3}));
    const float fv[3] = {3e9f, -1e30f, std::numeric_limits<float>::infinity()};
    std::memcpy(f.data(), fv, sizeof fv);
    HostTensor z(TensorDesc::packed(DType::I32, {3}));
    z.poison();
    {
      Staging st(h);
      REQUIRE_OK(transform_tensor(h, 1.f, f.desc(), st.in(f), 0.f, z.desc(), st.out(z)));
      st.finish();
    }
    int32_t zv[3];
    std::memcpy(zv, z.data(), sizeof zv);
    for (int i = 0; i < 3; ++i) CHECK(zv[i] == INT32_MIN);
  }
}

TEST_CASE("transform_tensor and concat_forward refuse scaling of integer tensors") {
  const Handle h = Handle::cpu();
  HostTensor x(TensorDesc::packed(DType::I64, {4})), y(TensorDesc::packed(DType::I64, {4}));
  CHECK(transform_tensor(h, 2.f, x.desc(), x.data(), 0.f, y.desc(), y.data()).code() == StatusCode::NOT_SUPPORTED);
  CHECK(transform_tensor(h, 1.f, x.desc(), x.data(), 1.f, y.desc(), y.data()).code() == StatusCode::NOT_SUPPORTED);
  HostTensor yf(TensorDesc::packed(DType::F32, {4}));
  CHECK(transform_tensor(h, 0.5f, x.desc(), x.data(), 0.f, yf.desc(), yf.data()).code() == StatusCode::NOT_SUPPORTED);
  const TensorDesc descs[1] = {x.desc()};
  const void* xs[1] = {x.data()};
  CHECK(concat_forward(h, 0, 1, descs, xs, 1.f, 0.5f, y.desc(), y.data()).code() == StatusCode::NOT_SUPPORTED);
}

TEST_CASE("concat_forward joins integer tensors exactly") {
  for (const Handle& h : test_handles()) {
    for (DType t : {DType::I32, DType::I64, DType::BOOL}) {
      CAPTURE(std::string(backend_name(h)));
      CAPTURE(std::string(dtype_name(t)));
      HostTensor a = operand(t, {2, 3, 5}, Layout::PADDED);
      HostTensor b = operand(t, {2, 4, 5}, Layout::REVERSED);
      HostTensor y(make_desc(t, {2, 7, 5}, Layout::CHANNELS_FIRST));
      y.poison();
      const HostTensor before = y;
      Staging st(h);
      const TensorDesc descs[2] = {a.desc(), b.desc()};
      const void* xs[2] = {st.in(a), st.in(b)};
      REQUIRE_OK(concat_forward(h, 1, 2, descs, xs, 1.f, 0.f, y.desc(), st.out(y)));
      st.finish();
      const std::vector<double> av = a.to_ref(), bv = b.to_ref();
      std::vector<double> ref;
      for (int n = 0; n < 2; ++n) {
        ref.insert(ref.end(), av.begin() + n * 15, av.begin() + (n + 1) * 15);
        ref.insert(ref.end(), bv.begin() + n * 20, bv.begin() + (n + 1) * 20);
      }
      check_output(y, before, ref, 0.0);
    }
  }
}

TEST_CASE("arg_reduce_forward: the first NaN wins, the last with select_last_index") {
  for (const Handle& h : test_handles()) {
    for (DType t : {DType::F32, DType::F16}) {
      CAPTURE(std::string(backend_name(h)));
      CAPTURE(std::string(dtype_name(t)));
      const double nan = std::numeric_limits<double>::quiet_NaN();
      const std::vector<double> v = {1, nan, 7, nan, -2, 7, 0, 1, 7, -2, 7, 1};  // rows of 6
      HostTensor x = tensor_with(TensorDesc::packed(t, {2, 6}), v);
      for (int op = 0; op < 2; ++op) {
        for (bool last : {false, true}) {
          HostTensor y(TensorDesc::packed(DType::I64, {2, 1}));
          y.poison();
          const HostTensor before = y;
          Staging st(h);
          REQUIRE_OK(arg_reduce_forward(h, static_cast<ArgReduceOp>(op), 1, last, x.desc(), st.in(x), y.desc(),
                                        st.out(y)));
          st.finish();
          const double row1 = op == 0 ? (last ? 4 : 2) : (last ? 3 : 3);  // 7 at 2 and 4; -2 at 3
          check_output(y, before, {last ? 3.0 : 1.0, row1}, 0.0);
        }
      }
    }
  }
}

TEST_CASE("gather_forward picks slices by i32 / i64 indices of any rank, negative and out of range") {
  struct GatherCase {
    std::vector<int64_t> x, indices;
    int axis;
  };
  const std::vector<GatherCase> cases = {
      {{7}, {3}, 0},           {{7}, {2, 3}, 0},          {{5, 3}, {4}, 1},
      {{3, 5, 2}, {2, 2}, 1},  {{2, 3, 4, 5}, {6}, 3},    {{2, 9, 3}, {1}, 1},
      {{4, 3}, {2, 1, 3}, 0},
  };
  for (const Handle& h : test_handles()) {
    for (DType t : kAllDtypes) {
      for (DType it : {DType::I32, DType::I64}) {
        for (const GatherCase& k : cases) {
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
            // Indices in [-n - 2, n + 1]: valid ones both ways, and some out of range.
            std::vector<double> iv(static_cast<size_t>(count(k.indices)));
            for (double& v : iv) v = static_cast<double>(uniform_int(-n - 2, n + 1));
            iv[0] = n;  // always one out of range
            HostTensor idx = tensor_with(make_desc(it, k.indices, kLayouts[(li + 1) % 3]), iv);
            std::vector<int64_t> ydims(k.x.begin(), k.x.begin() + k.axis);
            ydims.insert(ydims.end(), k.indices.begin(), k.indices.end());
            ydims.insert(ydims.end(), k.x.begin() + k.axis + 1, k.x.end());
            HostTensor y(make_desc(t, ydims, kLayouts[(li + 2) % 3]));
            y.poison();
            const HostTensor before = y;
            Staging st(h);
            REQUIRE_OK(gather_forward(h, k.axis, x.desc(), st.in(x), idx.desc(), st.in(idx), y.desc(), st.out(y)));
            st.finish();
            const double invalid = dtype_is_float(t) ? std::numeric_limits<double>::quiet_NaN()
                                   : t == DType::I32 ? -2147483648.0
                                   : t == DType::I64 ? -9223372036854775808.0
                                                     : 0.0;
            check_output(y, before, ref::gather(k.axis, k.x, x.to_ref(), iv, invalid), 0.0);
          }
        }
      }
    }
  }
}

TEST_CASE("gather_forward refuses bad indices types, shapes and aliasing") {
  const Handle h = Handle::cpu();
  HostTensor x(TensorDesc::packed(DType::F32, {4, 3})), y(TensorDesc::packed(DType::F32, {2, 3}));
  HostTensor fi(TensorDesc::packed(DType::F32, {2})), ii(TensorDesc::packed(DType::I64, {2}));
  CHECK(gather_forward(h, 0, x.desc(), x.data(), fi.desc(), fi.data(), y.desc(), y.data()).code() == StatusCode::BAD_PARAM);
  CHECK(gather_forward(h, 1, x.desc(), x.data(), ii.desc(), ii.data(), y.desc(), y.data()).code() == StatusCode::BAD_PARAM);
  CHECK(gather_forward(h, 0, x.desc(), x.data(), ii.desc(), ii.data(), y.desc(), x.data()).code() == StatusCode::BAD_PARAM);
  CHECK(gather_forward(h, 2, x.desc(), x.data(), ii.desc(), ii.data(), y.desc(), y.data()).code() == StatusCode::BAD_PARAM);
}

TEST_CASE("op_tensor computes i32 and i64 exactly, with broadcasting, zero divisors and negative exponents") {
  for (const Handle& h : test_handles()) {
    for (DType t : {DType::I32, DType::I64}) {
      for (int32_t opv = 0; opv < EnumCount<TensorOp>::value; ++opv) {
        const TensorOp op = static_cast<TensorOp>(opv);
        const bool pow = op == TensorOp::POW;
        for (const BroadcastCase& k : broadcast_cases()) {
          for (int li = 0; li < 3; ++li) {
            if (reduced_tests() && li > 0) continue;
            CAPTURE(std::string(backend_name(h)));
            CAPTURE(std::string(dtype_name(t)));
            CAPTURE(std::string(tensor_op_name(op)));
            CAPTURE(dims_str(k.a));
            CAPTURE(dims_str(k.b));
            CAPTURE(li);
            // a in [-40, 40] (POW: [-5, 5]), b in [-7, 7] (POW: [-3, 7]) with zeros: every sign
            // pair of DIV / MOD / MOD_FLOOR, exact and inexact quotients, zero divisors.
            std::vector<double> av(static_cast<size_t>(count(k.a))), bv(static_cast<size_t>(count(k.b)));
            for (double& v : av) v = static_cast<double>(pow ? uniform_int(-5, 5) : uniform_int(-40, 40));
            for (double& v : bv) v = static_cast<double>(pow ? uniform_int(-3, 7) : uniform_int(-7, 7));
            const std::vector<int64_t> c_dims = k.c;
            HostTensor a = tensor_with(make_desc(t, aligned(k.a, c_dims.size()), kLayouts[li]), av);
            HostTensor b = tensor_with(make_desc(t, aligned(k.b, c_dims.size()), kLayouts[(li + 1) % 3]), bv);
            HostTensor c(make_desc(t, c_dims, kLayouts[(li + 2) % 3]));
            c.poison();
            const HostTensor before = c;
            Staging st(h);
            REQUIRE_OK(op_tensor(h, op, 1.f, a.desc(), st.in(a), 1.f, b.desc(), st.in(b), 0.f, c.desc(), st.out(c)));
            st.finish();
            check_output(c, before, ref::int_tensor_op(op, k.a, av, k.b, bv, c_dims), 0.0);
          }
        }
      }
    }
  }
}

TEST_CASE("op_tensor on integers: wrap-around at the type's limits, and refusals") {
  for (const Handle& h : test_handles()) {
    CAPTURE(std::string(backend_name(h)));
    // i32: max + 1, lowest - 1, lowest / -1, lowest % -1, 65536 * 65536, 3 ^ 21 (wraps).
    const double lo = -2147483648.0, hi = 2147483647.0;
    struct Case { TensorOp op; double a, b, want; };
    const Case cases[] = {
        {TensorOp::ADD, hi, 1, lo},        {TensorOp::SUB, lo, 1, hi},
        {TensorOp::DIV, lo, -1, lo},       {TensorOp::MOD, lo, -1, 0},
        {TensorOp::MOD_FLOOR, lo, -1, 0},  {TensorOp::MUL, 65536, 65536, 0},
        {TensorOp::POW, 3, 21, 10460353203.0 - 2.0 * 4294967296.0},
        {TensorOp::DIV, 7, 0, 0},          {TensorOp::MOD_FLOOR, -7, 3, 2},
        {TensorOp::MOD, -7, 3, -1},        {TensorOp::POW, -1, -3, -1},
    };
    for (const Case& k : cases) {
      CAPTURE(std::string(tensor_op_name(k.op)));
      HostTensor a = tensor_with(make_desc(DType::I32, {1}, Layout::CHANNELS_FIRST), {k.a});
      HostTensor b = tensor_with(make_desc(DType::I32, {1}, Layout::CHANNELS_FIRST), {k.b});
      HostTensor c(make_desc(DType::I32, {1}, Layout::CHANNELS_FIRST));
      c.poison();
      Staging st(h);
      REQUIRE_OK(op_tensor(h, k.op, 1.f, a.desc(), st.in(a), 1.f, b.desc(), st.in(b), 0.f, c.desc(), st.out(c)));
      st.finish();
      CHECK(c.to_ref()[0] == k.want);
    }
    const TensorDesc i32 = TensorDesc::packed(DType::I32, {4});
    const TensorDesc bl = TensorDesc::packed(DType::BOOL, {4});
    const TensorDesc f32 = TensorDesc::packed(DType::F32, {4});
    int32_t ia[4] = {}, ib[4] = {}, ic[4] = {};
    CHECK(op_tensor(h, TensorOp::ADD, 2.f, i32, ia, 1.f, i32, ib, 0.f, i32, ic).code() == StatusCode::NOT_SUPPORTED);
    CHECK(op_tensor(h, TensorOp::ADD, 1.f, i32, ia, 1.f, i32, ib, 1.f, i32, ic).code() == StatusCode::NOT_SUPPORTED);
    CHECK(op_tensor(h, TensorOp::ADD, 1.f, bl, ia, 1.f, bl, ib, 0.f, bl, ic).code() == StatusCode::NOT_SUPPORTED);
    CHECK(op_tensor(h, TensorOp::ADD, 1.f, i32, ia, 1.f, f32, ib, 0.f, i32, ic).code() == StatusCode::BAD_PARAM);
  }
}
