// add_tensor on every backend against the float64 reference.
#include <string>

#include "kernels/util.h"
#include "reference/tensor_math.h"

using namespace jet;
using namespace jet::test;

namespace {

struct AddCase {
  std::vector<int64_t> b, c;
};

// Broadcast patterns, ranks 1..6: bias (1, C, 1, 1), scalar, row, column, full and mixed.
const std::vector<AddCase>& add_cases() {
  static const std::vector<AddCase> cases = {
      {{1}, {7}},
      {{7}, {7}},
      {{1, 13}, {3, 13}},
      {{3, 1}, {3, 13}},
      {{1, 3, 1}, {2, 3, 7}},
      {{1, 13, 1, 1}, {2, 13, 3, 5}},
      {{1, 1, 1, 1}, {2, 3, 4, 5}},
      {{1, 1, 1, 5}, {2, 3, 4, 5}},
      {{1, 3, 1, 5}, {2, 3, 4, 5}},
      {{2, 3, 4, 5}, {2, 3, 4, 5}},
      {{1, 3, 1, 1, 1}, {2, 3, 2, 3, 4}},
      {{1, 3, 1, 2, 1, 3}, {2, 3, 2, 2, 3, 3}},
  };
  return cases;
}

// One add_tensor call on fresh operands of the given layouts, checked against the reference.
void check_add_tensor(const Handle& h, DType t, const AddCase& k, float alpha, float beta,
                      Layout lb, Layout lc) {
  HostTensor b(make_desc(t, k.b, lb));
  b.fill_random(-2.0, 2.0);
  if (specials_turn()) b.plant_specials();  // NaN and +-inf in, as ONNX gives them out
  HostTensor c(make_desc(t, k.c, lc));
  if (beta == 0.f) c.poison(); else c.fill_random();
  const HostTensor before = c;
  Staging st(h);
  REQUIRE_OK(add_tensor(h, alpha, b.desc(), st.in(b), beta, c.desc(), st.out(c)));
  st.finish();
  const auto op = ref::broadcast(k.b, b.to_ref(), k.c);
  check_output(c, before, blend(op, alpha, beta, before.to_ref()), tol_for(t));
}

}  // namespace

TEST_CASE("add_tensor matches the float64 reference") {
  for (const Handle& h : test_handles()) {
  const std::pair<float, float> scalings[] = {{1.f, 0.f}, {0.5f, 0.25f}};
  for (DType t : {DType::F32, DType::F16}) {
    for (const AddCase& k : add_cases()) {
      for (Layout lb : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED}) {
        for (Layout lc : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED,
                          Layout::REVERSED}) {
          for (const auto& scaling : scalings) {
            const float alpha = scaling.first, beta = scaling.second;
            CAPTURE(std::string(backend_name(h)));
            CAPTURE(std::string(dtype_name(t)));
            CAPTURE(dims_str(k.b));
            CAPTURE(dims_str(k.c));
            CAPTURE(std::string(layout_name(lb)));
            CAPTURE(std::string(layout_name(lc)));
            CAPTURE(alpha);
            CAPTURE(beta);
            check_add_tensor(h, t, k, alpha, beta, lb, lc);
          }
        }
      }
    }
  }
  }
}

TEST_CASE("add_tensor on large tensors: per-channel bias in NCHW and NHWC, full and odd shapes") {
  // Exercises the vector loop (inner dims that are multiples of 8), the scalar loop (odd inner
  // dims) and a flat length that is not a multiple of the vector width.
  for (const Handle& h : test_handles()) {
    const std::vector<AddCase> cases = {
        {{1, 64, 1, 1}, {2, 64, 24, 32}},
        {{1, 67, 1, 1}, {2, 67, 15, 9}},
        {{1, 1, 1, 40}, {3, 5, 33, 40}},
        {{1, 5, 33, 40}, {3, 5, 33, 40}},
        {{100003}, {100003}},
        {{1}, {100003}},
    };
    const std::pair<float, float> scalings[] = {{1.f, 0.f}, {0.5f, 0.25f}};
    for (DType t : {DType::F32, DType::F16}) {
      for (const AddCase& k : cases) {
        for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST}) {
          for (const auto& scaling : scalings) {
            const float alpha = scaling.first, beta = scaling.second;
            CAPTURE(std::string(backend_name(h)));
            CAPTURE(std::string(dtype_name(t)));
            CAPTURE(dims_str(k.b));
            CAPTURE(dims_str(k.c));
            CAPTURE(std::string(layout_name(l)));
            CAPTURE(beta);
            check_add_tensor(h, t, k, alpha, beta, l, l);
          }
        }
      }
    }
  }
}

TEST_CASE("add_tensor takes a stride-0 bias view and works in place") {
  for (const Handle& h : test_handles())
  for (DType t : {DType::F32, DType::F16}) {
    CAPTURE(std::string(backend_name(h)));
    CAPTURE(std::string(dtype_name(t)));
    const std::vector<int64_t> dims = {2, 5, 3, 3};
    // Bias described as a view with stride 0 on its size-1 dims, added to an NHWC tensor.
    HostTensor bias(TensorDesc::strided(t, {1, 5, 1, 1}, {0, 1, 0, 0}));
    bias.fill_random(-2, 2);
    HostTensor c(make_desc(t, dims, Layout::CHANNELS_LAST));
    c.fill_random();
    HostTensor before = c;
    {
      Staging st(h);
      REQUIRE_OK(add_tensor(h, 0.5f, bias.desc(), st.in(bias), 0.25f, c.desc(), st.out(c)));
      st.finish();
    }
    check_output(c, before, blend(ref::broadcast({1, 5, 1, 1}, bias.to_ref(), dims), 0.5, 0.25,
                                  before.to_ref()),
                 tol_for(t));
    // b and c the same buffer and layout: c = 0.5 * c + 0.25 * c.
    before = c;
    {
      Staging st(h);
      void* cc = st.out(c);
      REQUIRE_OK(add_tensor(h, 0.5f, c.desc(), cc, 0.25f, c.desc(), cc));
      st.finish();
    }
    check_output(c, before, blend(before.to_ref(), 0.5, 0.25, before.to_ref()), tol_for(t));
  }
}

TEST_CASE("add_tensor rejects invalid input") {
  const Handle h = Handle::cpu();
  const TensorDesc cd = TensorDesc::nchw(DType::F32, 2, 3, 4, 5);
  const TensorDesc bd = TensorDesc::packed(DType::F32, {1, 3, 1, 1});
  HostTensor b(bd), c(cd);
  b.fill_random();
  c.fill_random();
  const auto run = [&](const TensorDesc& bdd, const void* bp, const TensorDesc& cdd, void* cp) {
    return add_tensor(h, 1.f, bdd, bp, 0.f, cdd, cp);
  };
  const auto f32 = [](std::initializer_list<int64_t> dims) {
    return TensorDesc::packed(DType::F32, dims);
  };
  const StatusCode bad = StatusCode::BAD_PARAM;
  CHECK(run(bd, b.data(), cd, c.data()).ok());
  // Null pointers.
  CHECK_STATUS(run(bd, nullptr, cd, c.data()), bad);
  CHECK_STATUS(run(bd, b.data(), cd, nullptr), bad);
  // b does not broadcast to c: wrong channel count, wrong rank, b larger than c.
  CHECK_STATUS(run(f32({1, 4, 1, 1}), b.data(), cd, c.data()), bad);
  CHECK_STATUS(run(f32({3, 1, 1}), b.data(), cd, c.data()), bad);
  CHECK_STATUS(run(cd, c.data(), bd, b.data()), bad);
  // Dtype mix.
  CHECK_STATUS(run(bd.with_dtype(DType::F16), b.data(), cd, c.data()), bad);
  // Bad descriptors: zero dim, overlapping strides, rank 0.
  CHECK_STATUS(run(f32({1, 0, 1, 1}), b.data(), cd, c.data()), bad);
  const TensorDesc overlapping = TensorDesc::strided(DType::F32, {2, 3, 4, 5}, {60, 20, 1, 1});
  CHECK_STATUS(run(bd, b.data(), overlapping, c.data()), bad);
  CHECK_STATUS(run(TensorDesc(), b.data(), cd, c.data()), bad);
  // b aliases c with a different layout (broadcast in place, or another stride order).
  CHECK_STATUS(run(bd, c.data(), cd, c.data()), bad);
  CHECK_STATUS(run(TensorDesc::nhwc(DType::F32, 2, 3, 4, 5), c.data(), cd, c.data()), bad);
}
