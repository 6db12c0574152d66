// op_tensor on every backend against the float64 reference.
#include <cmath>
#include <limits>
#include <string>

#include "kernels/util.h"
#include "reference/tensor_math.h"

using namespace jet;
using namespace jet::test;

namespace {

// Every op (EnumCount: a new op is swept without editing a list).
std::vector<TensorOp> all_ops() {
  std::vector<TensorOp> ops;
  for (int32_t op = 0; op < EnumCount<TensorOp>::value; ++op) ops.push_back(static_cast<TensorOp>(op));
  return ops;
}
const std::vector<TensorOp> kAllOps = all_ops();

struct OpCase {
  std::vector<int64_t> a, b, c;
};

// Broadcast patterns, ranks 1..6: one side or both sides broadcast, bias, scalar, row, full.
const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> cases = {
      {{7}, {1}, {7}},
      {{1}, {7}, {7}},
      {{3, 13}, {3, 1}, {3, 13}},
      {{1, 13}, {3, 13}, {3, 13}},
      {{2, 1, 5}, {1, 3, 1}, {2, 3, 5}},
      {{3, 7, 13}, {3, 7, 13}, {3, 7, 13}},
      {{2, 3, 4, 5}, {1, 3, 1, 1}, {2, 3, 4, 5}},
      {{1, 1, 1, 1}, {2, 3, 4, 5}, {2, 3, 4, 5}},
      {{2, 1, 4, 5}, {2, 3, 1, 1}, {2, 3, 4, 5}},
      {{2, 3, 4, 1}, {1, 1, 1, 5}, {2, 3, 4, 5}},
      {{2, 3, 1, 4, 5}, {1, 3, 2, 1, 1}, {2, 3, 2, 4, 5}},
      {{1, 3, 2, 1, 2, 3}, {2, 1, 2, 3, 1, 3}, {2, 3, 2, 3, 2, 3}},
  };
  return cases;
}

// Random values for operand `second` (b) or a of `op`, in a well-conditioned range:
// - the divisor of DIV, MOD and MOD_FLOOR keeps |b| in [0.5, 2] with a random sign;
// - MOD's and MOD_FLOOR's operands have at most 16 fractional bits, so that the scalings' alpha * x are exact in
//   f32 and fmod (discontinuous at multiples of b) sees the reference's operands exactly;
// - POW's base keeps |a| in [0.5, 2] (a negative base with a non-integer exponent is NaN on both
//   sides), its exponent b in [-2, 2], so that the result stays well inside f16's range.
void fill_operand(HostTensor& t, TensorOp op, bool second) {
  const bool divisor = second && (op == TensorOp::DIV || op == TensorOp::MOD || op == TensorOp::MOD_FLOOR);
  const bool base = !second && op == TensorOp::POW;
  if (!divisor && !base) {
    t.fill_random(-2.0, 2.0);
  } else {
    t.fill_random(0.5, 2.0);
    std::vector<double> v = t.to_ref();
    for (double& e : v)
      if (uniform(0.0, 1.0) < 0.5) e = -e;
    t.from_ref(v);
  }
  if (op == TensorOp::MOD || op == TensorOp::MOD_FLOOR) {
    std::vector<double> v = t.to_ref();
    for (double& e : v) e = std::round(e * 65536.0) / 65536.0;
    t.from_ref(v);
  }
}

struct Scaling {
  float alpha1, alpha2, beta;
};
// alpha1 + alpha2 + beta != 0 in each, so that c = op(alpha1 * c, alpha2 * c) + beta * c does not
// cancel to exactly zero in the in-place test.
const Scaling kScalings[] = {{1.f, 1.f, 0.f}, {0.5f, -1.5f, 0.25f}};

// One op_tensor call on fresh operands of the given layouts, checked against the reference.
void check_op_tensor(const Handle& h, DType t, TensorOp op, const OpCase& k, const Scaling& s,
                     Layout la, Layout lb, Layout lc) {
  HostTensor a(make_desc(t, k.a, la));
  fill_operand(a, op, false);
  HostTensor b(make_desc(t, k.b, lb));
  fill_operand(b, op, true);
  if (specials_turn()) {  // NaN and +-inf in either operand, as ONNX gives them out
    a.plant_specials();
    b.plant_specials();
  }
  HostTensor c(make_desc(t, k.c, lc));
  if (s.beta == 0.f) c.poison(); else c.fill_random();
  const HostTensor before = c;
  Staging st(h);
  REQUIRE_OK(op_tensor(h, op, s.alpha1, a.desc(), st.in(a), s.alpha2, b.desc(), st.in(b), s.beta,
                       c.desc(), st.out(c)));
  st.finish();
  const auto ref = ref::op_tensor(op, s.alpha1, k.a, a.to_ref(), s.alpha2, k.b, b.to_ref(), k.c);
  check_output(c, before, blend(ref, 1.0, s.beta, before.to_ref()), tol_for(t));
}

}  // namespace

TEST_CASE("op_tensor matches the float64 reference") {
  for (const Handle& h : test_handles()) {
  const Layout in_layouts[] = {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED};
  const Layout out_layouts[] = {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED,
                                Layout::REVERSED};
  for (DType t : {DType::F32, DType::F16}) {
    for (TensorOp op : kAllOps) {
      for (const OpCase& k : op_cases()) {
        for (int ia = 0; ia < 3; ++ia) {
          for (int ib = 0; ib < 3; ++ib) {
            for (int ic = 0; ic < 4; ++ic) {
              // Reduced (sanitizer runs): each input layout once, with its own and a reversed c.
              if (reduced_tests() && !(ib == ia && (ic == ia || ic == 3))) continue;
              const Layout la = in_layouts[ia], lb = in_layouts[ib], lc = out_layouts[ic];
              for (const Scaling& s : kScalings) {
                CAPTURE(std::string(backend_name(h)));
                CAPTURE(std::string(dtype_name(t)));
                CAPTURE(std::string(tensor_op_name(op)));
                CAPTURE(dims_str(k.a));
                CAPTURE(dims_str(k.b));
                CAPTURE(dims_str(k.c));
                CAPTURE(std::string(layout_name(la)));
                CAPTURE(std::string(layout_name(lb)));
                CAPTURE(std::string(layout_name(lc)));
                CAPTURE(s.alpha1);
                CAPTURE(s.alpha2);
                CAPTURE(s.beta);
                check_op_tensor(h, t, op, k, s, la, lb, lc);
              }
            }
          }
        }
      }
    }
  }
  }
}

TEST_CASE("op_tensor on large tensors: same layout, per-channel and row operands") {
  // The vector loop (inner dims that are multiples of 8), the scalar loop (odd inner dims) and a
  // flat length that is not a multiple of the vector width.
  const OpCase cases[] = {
      {{2, 64, 24, 32}, {2, 64, 24, 32}, {2, 64, 24, 32}},
      {{2, 64, 24, 32}, {1, 64, 1, 1}, {2, 64, 24, 32}},
      {{1, 64, 1, 1}, {2, 64, 24, 32}, {2, 64, 24, 32}},
      {{2, 67, 15, 9}, {1, 67, 1, 1}, {2, 67, 15, 9}},
      {{3, 5, 33, 40}, {1, 1, 1, 40}, {3, 5, 33, 40}},
      {{100003}, {100003}, {100003}},
  };
  for (const Handle& h : test_handles()) {
    for (DType t : {DType::F32, DType::F16}) {
      for (TensorOp op : {TensorOp::ADD, TensorOp::DIV, TensorOp::MAX, TensorOp::POW}) {
        for (const OpCase& k : cases) {
          for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST}) {
            const Scaling& s = kScalings[t == DType::F32 ? 0 : 1];
            CAPTURE(std::string(backend_name(h)));
            CAPTURE(std::string(dtype_name(t)));
            CAPTURE(std::string(tensor_op_name(op)));
            CAPTURE(dims_str(k.a));
            CAPTURE(dims_str(k.b));
            CAPTURE(std::string(layout_name(l)));
            check_op_tensor(h, t, op, k, s, l, l, l);
          }
        }
      }
    }
  }
}

TEST_CASE("op_tensor aligns lower-rank inputs with leading 1s") {
  for (const Handle& h : test_handles()) {
  const OpCase cases[] = {{{5}, {2, 3, 5}, {2, 3, 5}},
                          {{2, 3, 5}, {3, 1}, {2, 3, 5}},
                          {{1}, {4, 1, 1, 2}, {4, 3, 2, 2}}};
  for (DType t : {DType::F32, DType::F16}) {
    for (TensorOp op : kAllOps) {
      for (const OpCase& k : cases) {
        for (const Scaling& s : kScalings) {
          CAPTURE(std::string(backend_name(h)));
          CAPTURE(std::string(dtype_name(t)));
          CAPTURE(std::string(tensor_op_name(op)));
          CAPTURE(dims_str(k.a));
          CAPTURE(dims_str(k.b));
          CAPTURE(s.beta);
          check_op_tensor(h, t, op, k, s, Layout::PADDED, Layout::CHANNELS_FIRST,
                          Layout::CHANNELS_LAST);
        }
      }
    }
  }
  }
}

TEST_CASE("op_tensor writes in place over a or b of the same layout") {
  // W = 8: the CUDA vector loop runs in place too.
  const std::vector<std::vector<int64_t>> shapes = {{2, 3, 4, 5}, {2, 3, 4, 8}};
  const std::vector<int64_t> bias = {1, 3, 1, 1};
  for (const Handle& h : test_handles())
  for (const std::vector<int64_t>& dims : shapes)
  for (DType t : {DType::F32, DType::F16}) {
    for (TensorOp op : kAllOps) {
      for (Layout l : {Layout::CHANNELS_LAST, Layout::PADDED}) {
        for (const Scaling& s : kScalings) {
          CAPTURE(std::string(backend_name(h)));
          CAPTURE(dims_str(dims));
          CAPTURE(std::string(dtype_name(t)));
          CAPTURE(std::string(tensor_op_name(op)));
          CAPTURE(std::string(layout_name(l)));
          CAPTURE(s.beta);
          HostTensor small(make_desc(t, bias, Layout::CHANNELS_FIRST));
          {  // c aliases a: c = op(alpha1 * c, alpha2 * bias) + beta * c
            HostTensor c(make_desc(t, dims, l));
            fill_operand(c, op, false);
            fill_operand(small, op, true);
            const HostTensor before = c;
            Staging st(h);
            void* cc = st.out(c);
            REQUIRE_OK(op_tensor(h, op, s.alpha1, c.desc(), cc, s.alpha2, small.desc(),
                                 st.in(small), s.beta, c.desc(), cc));
            st.finish();
            const auto ref = ref::op_tensor(op, s.alpha1, dims, before.to_ref(), s.alpha2, bias,
                                            small.to_ref(), dims);
            check_output(c, before, blend(ref, 1.0, s.beta, before.to_ref()), tol_for(t));
          }
          {  // c aliases b: c = op(alpha1 * bias, alpha2 * c) + beta * c
            HostTensor c(make_desc(t, dims, l));
            fill_operand(c, op, true);
            fill_operand(small, op, false);
            const HostTensor before = c;
            Staging st(h);
            void* cc = st.out(c);
            REQUIRE_OK(op_tensor(h, op, s.alpha1, small.desc(), st.in(small), s.alpha2, c.desc(),
                                 cc, s.beta, c.desc(), cc));
            st.finish();
            const auto ref = ref::op_tensor(op, s.alpha1, bias, small.to_ref(), s.alpha2, dims,
                                            before.to_ref(), dims);
            check_output(c, before, blend(ref, 1.0, s.beta, before.to_ref()), tol_for(t));
          }
          {  // c aliases both: c = op(alpha1 * c, alpha2 * c) + beta * c
            HostTensor c(make_desc(t, dims, l));
            fill_operand(c, op, op == TensorOp::DIV || op == TensorOp::MOD || op == TensorOp::MOD_FLOOR);
            const HostTensor before = c;
            Staging st(h);
            void* cc = st.out(c);
            REQUIRE_OK(op_tensor(h, op, s.alpha1, c.desc(), cc, s.alpha2, c.desc(), cc, s.beta,
                                 c.desc(), cc));
            st.finish();
            const auto ref = ref::op_tensor(op, s.alpha1, dims, before.to_ref(), s.alpha2, dims,
                                            before.to_ref(), dims);
            check_output(c, before, blend(ref, 1.0, s.beta, before.to_ref()), tol_for(t));
          }
        }
      }
    }
  }
}

TEST_CASE("op_tensor MIN and MAX propagate NaN") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const Handle& h : test_handles())
  for (DType t : {DType::F32, DType::F16})
  for (TensorOp op : {TensorOp::MIN, TensorOp::MAX}) {
    CAPTURE(std::string(backend_name(h)));
    CAPTURE(std::string(dtype_name(t)));
    CAPTURE(std::string(tensor_op_name(op)));
    // 16 elements: the CUDA vector loop; NaN on either side, in every lane position.
    const TensorDesc d = TensorDesc::packed(t, {16});
    HostTensor a(d), b(d), c(d);
    for (int64_t i = 0; i < 16; ++i) {
      a.set(&i, i % 2 == 0 ? nan : 1.0);
      b.set(&i, i % 2 == 0 ? 1.0 : nan);
    }
    c.fill(0.0);
    Staging st(h);
    REQUIRE_OK(op_tensor(h, op, 1.f, d, st.in(a), 1.f, d, st.in(b), 0.f, d, st.out(c)));
    st.finish();
    for (int64_t i = 0; i < 16; ++i) CHECK(std::isnan(c.get(&i)));
  }
}

TEST_CASE("op_tensor rejects invalid input") {
  const Handle h = Handle::cpu();
  const TensorDesc cd = TensorDesc::nchw(DType::F32, 2, 3, 4, 5);
  const TensorDesc bd = TensorDesc::packed(DType::F32, {1, 3, 1, 1});
  HostTensor a(cd), b(bd), c(cd);
  a.fill_random();
  b.fill_random();
  c.fill_random();
  const TensorOp add = TensorOp::ADD;
  const auto run = [&](TensorOp op, const TensorDesc& ad, const void* ap, const TensorDesc& bdd,
                       const void* bp, const TensorDesc& cdd, void* cp) {
    return op_tensor(h, op, 1.f, ad, ap, 1.f, bdd, bp, 0.f, cdd, cp);
  };
  const auto f32 = [](std::initializer_list<int64_t> dims) {
    return TensorDesc::packed(DType::F32, dims);
  };
  const StatusCode bad = StatusCode::BAD_PARAM;
  CHECK(run(add, cd, a.data(), bd, b.data(), cd, c.data()).ok());
  // Null pointers.
  CHECK_STATUS(run(add, cd, nullptr, bd, b.data(), cd, c.data()), bad);
  CHECK_STATUS(run(add, cd, a.data(), bd, nullptr, cd, c.data()), bad);
  CHECK_STATUS(run(add, cd, a.data(), bd, b.data(), cd, nullptr), bad);
  // Unknown op.
  CHECK_STATUS(run(static_cast<TensorOp>(EnumCount<TensorOp>::value), cd, a.data(), bd, b.data(), cd, c.data()), bad);
  CHECK_STATUS(run(static_cast<TensorOp>(-1), cd, a.data(), bd, b.data(), cd, c.data()), bad);
  CHECK(std::string(tensor_op_name(static_cast<TensorOp>(42))) == "unknown-tensor-op");
  // Mismatched dims: a or b does not broadcast to c; c smaller than an input; higher-rank input.
  CHECK_STATUS(run(add, cd, a.data(), f32({1, 4, 1, 1}), b.data(), cd, c.data()), bad);
  CHECK_STATUS(run(add, f32({2, 3, 4, 6}), a.data(), bd, b.data(), cd, c.data()), bad);
  CHECK_STATUS(run(add, cd, a.data(), bd, b.data(), bd, c.data()), bad);
  CHECK_STATUS(run(add, f32({1, 2, 3, 4, 5}), a.data(), bd, b.data(), cd, c.data()), bad);
  // A lower-rank b is aligned with leading 1s: [3, 1, 2] becomes [1, 3, 1, 2], which does not
  // broadcast to [2, 3, 4, 5].
  CHECK_STATUS(run(add, cd, a.data(), f32({3, 1, 2}), b.data(), cd, c.data()), bad);
  // Dtype mixes.
  CHECK_STATUS(run(add, cd.with_dtype(DType::F16), a.data(), bd, b.data(), cd, c.data()), bad);
  CHECK_STATUS(run(add, cd, a.data(), bd.with_dtype(DType::F16), b.data(), cd, c.data()), bad);
  CHECK_STATUS(run(add, cd, a.data(), bd, b.data(), cd.with_dtype(DType::F16), c.data()), bad);
  // Bad descriptors: zero dim, overlapping strides, negative stride.
  CHECK_STATUS(run(add, f32({2, 0, 4, 5}), a.data(), bd, b.data(), cd, c.data()), bad);
  const TensorDesc overlapping = TensorDesc::strided(DType::F32, {2, 3, 4, 5}, {60, 20, 1, 1});
  CHECK_STATUS(run(add, cd, a.data(), bd, b.data(), overlapping, c.data()), bad);
  const TensorDesc negative = TensorDesc::strided(DType::F32, {1, 3, 1, 1}, {3, -1, 1, 1});
  CHECK_STATUS(run(add, cd, a.data(), negative, b.data(), cd, c.data()), bad);
  // c aliases an input of a different layout: broadcast in place, or another stride order.
  CHECK_STATUS(run(add, cd, a.data(), bd, c.data(), cd, c.data()), bad);
  CHECK_STATUS(run(add, TensorDesc::nhwc(DType::F32, 2, 3, 4, 5), c.data(), bd, b.data(), cd,
                   c.data()),
               bad);
}
