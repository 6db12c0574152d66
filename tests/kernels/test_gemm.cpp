// gemm_forward on every backend against the float64 reference.
#include <cmath>
#include <string>

#include "kernels/util.h"
#include "reference/gemm.h"

using namespace jet;
using namespace jet::test;

namespace {

struct Shape {
  int64_t m, n, k;
};

// Stored dims of an operand: rows x cols of op(t), swapped when transposed, with a batch dim.
std::vector<int64_t> stored_dims(int rank, int64_t batch, int64_t rows, int64_t cols, bool trans) {
  std::vector<int64_t> d;
  if (rank == 3) d.push_back(batch);
  d.push_back(trans ? cols : rows);
  d.push_back(trans ? rows : cols);
  return d;
}

// One GEMV-shaped gemm_forward, y = alpha * (a @ b^T + bias) + beta * y with a: M x K and b:
// N x K (a fully connected layer's weights), checked against the float64 reference. a's rows are
// a_rs elements apart starting a_off elements into its buffer, b's likewise: that is how a case
// picks CUDA's 16-byte or element-wise GEMV loads. bias_kind: 0 none, 1 per column (1, N), 2 per
// row (M, 1), 3 full (M, N). beta == 0 runs over a NaN-poisoned y; y's padded strides leave gaps
// that must come back untouched.
struct GemvCase {
  int64_t m, n, k;
  int64_t a_rs, b_rs, a_off, b_off;
  int bias_kind;
  float beta;
};

void check_gemv(const Handle& h, DType t, const GemvCase& c) {
  CAPTURE(std::string(backend_name(h)));
  CAPTURE(std::string(dtype_name(t)));
  CAPTURE(c.m);
  CAPTURE(c.n);
  CAPTURE(c.k);
  CAPTURE(c.a_rs);
  CAPTURE(c.b_rs);
  CAPTURE(c.a_off);
  CAPTURE(c.b_off);
  CAPTURE(c.bias_kind);
  CAPTURE(c.beta);
  // Buffers holding the strided views, and the views' logical values (packed) for the reference.
  const auto make = [&](int64_t rows, int64_t rs, int64_t off, std::vector<double>* logical) {
    std::vector<double> all = random_values(t, {1, off + (rows - 1) * rs + c.k});
    if (specials_turn()) plant_specials(&all);
    logical->resize(static_cast<size_t>(rows * c.k));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < c.k; ++k)
        (*logical)[static_cast<size_t>(r * c.k + k)] = all[static_cast<size_t>(off + r * rs + k)];
    return tensor_with(TensorDesc::packed(t, {1, static_cast<int64_t>(all.size())}), all);
  };
  std::vector<double> av, bv;
  const HostTensor abuf = make(c.m, c.a_rs, c.a_off, &av);
  const HostTensor bbuf = make(c.n, c.b_rs, c.b_off, &bv);
  const TensorDesc ad = TensorDesc::strided(t, {c.m, c.k}, {c.a_rs, 1});
  const TensorDesc bd = TensorDesc::strided(t, {c.n, c.k}, {c.b_rs, 1});
  const std::vector<int64_t> a_dims = {c.m, c.k}, b_dims = {c.n, c.k}, y_dims = {c.m, c.n};
  const std::vector<std::vector<int64_t>> bias_shapes = {{}, {1, c.n}, {c.m, 1}, {c.m, c.n}};
  const std::vector<int64_t>& bias_dims = bias_shapes[static_cast<size_t>(c.bias_kind)];
  const std::vector<double> biasv = bias_dims.empty() ? std::vector<double>() : random_values(t, bias_dims);
  HostTensor bias;
  if (!bias_dims.empty()) bias = tensor_with(make_desc(t, bias_dims, Layout::PADDED), biasv);
  HostTensor y(make_desc(t, y_dims, Layout::PADDED));
  if (c.beta == 0.f) y.poison(); else y.fill_random();
  const HostTensor before = y;
  const float alpha = 0.75f;
  GemmDesc g;
  g.trans_b = true;
  Staging st(h);
  const size_t esz = dtype_size(t);
  const void* ap = static_cast<const char*>(st.in(abuf)) + c.a_off * esz;
  const void* bp = static_cast<const char*>(st.in(bbuf)) + c.b_off * esz;
  REQUIRE_OK(gemm_forward(h, g, alpha, ad, ap, bd, bp, bias.desc(),
                          bias_dims.empty() ? nullptr : st.in(bias), c.beta, y.desc(), st.out(y)));
  st.finish();
  const std::vector<double> prod = ref::gemm(av, a_dims, false, bv, b_dims, true, biasv, bias_dims, y_dims);
  // Judged against the magnitude of the K terms a result sums (see the small-M test below).
  const double terms = alpha * std::sqrt(static_cast<double>(c.k)) / 3.0;
  check_output(y, before, blend(prod, alpha, c.beta, before.to_ref()), tol_for(t), terms);
}

}  // namespace

TEST_CASE("gemm_forward matches the float64 reference") {
  for (const Handle& h : test_handles()) {
  const std::vector<Shape> shapes = {{1, 1, 1}, {3, 7, 13}, {13, 1, 7}, {7, 13, 3}, {1, 33, 9}};
  // (a, b, y) layouts; for rank 3, CHANNELS_LAST stores the last two dims transposed.
  const Layout L[] = {Layout::CHANNELS_FIRST, Layout::PADDED, Layout::REVERSED, Layout::CHANNELS_LAST};
  const std::pair<float, float> scalings[] = {{1.f, 0.f}, {0.5f, 0.25f}};
  for (DType t : {DType::F32, DType::F16}) {
    for (const Shape& s : shapes) {
      for (int rank : {2, 3}) {
        // Batch broadcast variants for rank 3: (a batch, b batch).
        const std::vector<std::pair<int64_t, int64_t>> batches =
            rank == 2 ? std::vector<std::pair<int64_t, int64_t>>{{1, 1}}
                      : std::vector<std::pair<int64_t, int64_t>>{{3, 3}, {1, 3}, {3, 1}};
        for (const auto& batch_pair : batches) {
          // Named copies: CAPTURE's lambda cannot capture structured bindings before C++20.
          const int64_t batch_a = batch_pair.first, batch_b = batch_pair.second;
          const int64_t batch = std::max(batch_a, batch_b);
          std::vector<int64_t> y_dims = rank == 3 ? std::vector<int64_t>{batch, s.m, s.n}
                                                  : std::vector<int64_t>{s.m, s.n};
          // Bias shapes: none, per column (FC), per row, full, and a batched one.
          std::vector<std::vector<int64_t>> bias_shapes = {{}, {1, s.n}, {s.m, 1}, {s.m, s.n}};
          if (rank == 3) {
            for (auto& bs : bias_shapes)
              if (!bs.empty()) bs.insert(bs.begin(), 1);
            bias_shapes.push_back({batch, 1, s.n});
          }
          for (bool ta : {false, true}) {
            for (bool tb : {false, true}) {
              const std::vector<int64_t> a_dims = stored_dims(rank, batch_a, s.m, s.k, ta);
              const std::vector<int64_t> b_dims = stored_dims(rank, batch_b, s.k, s.n, tb);
              std::vector<double> av = random_values(t, a_dims);
              if (specials_turn()) plant_specials(&av);  // NaN and +-inf in, as ONNX gives them out
              const std::vector<double> bv = random_values(t, b_dims);
              for (size_t bi = 0; bi < bias_shapes.size(); ++bi) {
                const std::vector<int64_t>& bias_dims = bias_shapes[bi];
                const std::vector<double> biasv = bias_dims.empty() ? std::vector<double>() : random_values(t, bias_dims);
                const std::vector<double> prod =
                    ref::gemm(av, a_dims, ta, bv, b_dims, tb, biasv, bias_dims, y_dims);
                for (int li = 0; li < 4; ++li) {
                  if (reduced_tests() && li % 2 == 1) continue;  // sanitizer runs: half the layouts
                  for (const auto& scaling : scalings) {
                    const float alpha = scaling.first, beta = scaling.second;
                    const Layout la = L[li], lb = L[(li + 1) % 4], ly = L[(li + 2) % 4];
                    CAPTURE(std::string(backend_name(h)));
                    CAPTURE(std::string(dtype_name(t)));
                    CAPTURE(dims_str(y_dims));
                    CAPTURE(s.k);
                    CAPTURE(batch_a);
                    CAPTURE(batch_b);
                    CAPTURE(ta);
                    CAPTURE(tb);
                    CAPTURE(dims_str(bias_dims));
                    CAPTURE(std::string(layout_name(la)));
                    CAPTURE(std::string(layout_name(lb)));
                    CAPTURE(std::string(layout_name(ly)));
                    CAPTURE(alpha);
                    CAPTURE(beta);
                    const HostTensor a = tensor_with(make_desc(t, a_dims, la), av);
                    const HostTensor b = tensor_with(make_desc(t, b_dims, lb), bv);
                    HostTensor bias;
                    if (!bias_dims.empty()) bias = tensor_with(make_desc(t, bias_dims, Layout::PADDED), biasv);
                    HostTensor y(make_desc(t, y_dims, ly));
                    if (beta == 0.f) y.poison(); else y.fill_random();
                    const HostTensor before = y;
                    GemmDesc g;
                    g.trans_a = ta;
                    g.trans_b = tb;
                    Staging st(h);
                    REQUIRE_OK(gemm_forward(h, g, alpha, a.desc(), st.in(a), b.desc(), st.in(b),
                                            bias.desc(), bias_dims.empty() ? nullptr : st.in(bias),
                                            beta, y.desc(), st.out(y)));
                    st.finish();
                    // Judged against the magnitude of the terms a result sums, as the tests below:
                    // K products of values in [-1, 1] and the bias can cancel to a result far
                    // smaller than they are (y [3, 1, 1], K = 1: a * b + bias ~ 3e-4 from terms
                    // ~0.5 missed a relative 1e-5 of the result by rounding alone).
                    const double terms = std::fabs(alpha) * (std::sqrt(static_cast<double>(s.k)) / 3.0 +
                                                             (bias_dims.empty() ? 0.0 : 0.6)) +
                                         std::fabs(beta);
                    check_output(y, before, blend(prod, alpha, beta, before.to_ref()), tol_for(t), terms);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  }
}

TEST_CASE("gemm_forward: problems larger than the cache blocks and GPU tiles") {
  // CPU: M > MC, N > NC, K > KC, none a multiple of the register tile. CUDA: sizes around and
  // off the 128 x 128, 128 x 64 and 64 x 64 tiles and the 8 / 32 depth tiles; K % 8 == 0 with
  // a contiguous depth takes the f16 16-byte loads, the others the element-wise loads.
  const Shape shapes[] = {{250, 141, 301}, {130, 64, 136}, {64, 200, 64}, {257, 129, 33}, {40, 7, 520}};
  for (const Handle& h : test_handles()) {
  for (const Shape& s : shapes) {
  // Reduced (sanitizer runs): the shapes around the tiles, not the largest one.
  if (reduced_tests() && s.m == 250) continue;
  for (DType t : {DType::F32, DType::F16}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        CAPTURE(std::string(backend_name(h)));
        CAPTURE(std::string(dtype_name(t)));
        CAPTURE(s.m);
        CAPTURE(s.n);
        CAPTURE(s.k);
        CAPTURE(ta);
        CAPTURE(tb);
        const std::vector<int64_t> a_dims = stored_dims(2, 1, s.m, s.k, ta);
        const std::vector<int64_t> b_dims = stored_dims(2, 1, s.k, s.n, tb);
        const std::vector<int64_t> y_dims = {s.m, s.n}, bias_dims = {1, s.n};
        const HostTensor a = tensor_with(make_desc(t, a_dims, Layout::CHANNELS_FIRST), random_values(t, a_dims));
        const HostTensor b = tensor_with(make_desc(t, b_dims, ta ? Layout::PADDED : Layout::CHANNELS_FIRST), random_values(t, b_dims));
        const HostTensor bias = tensor_with(make_desc(t, bias_dims, Layout::CHANNELS_FIRST), random_values(t, bias_dims));
        HostTensor y(make_desc(t, y_dims, ta ? Layout::REVERSED : Layout::CHANNELS_FIRST));
        y.fill_random();
        const HostTensor before = y;
        GemmDesc g;
        g.trans_a = ta;
        g.trans_b = tb;
        Staging st(h);
        REQUIRE_OK(gemm_forward(h, g, 0.5f, a.desc(), st.in(a), b.desc(), st.in(b), bias.desc(),
                                st.in(bias), 0.25f, y.desc(), st.out(y)));
        st.finish();
        const std::vector<double> prod = ref::gemm(a.to_ref(), a_dims, ta, b.to_ref(), b_dims, tb,
                                                   bias.to_ref(), bias_dims, y_dims);
        check_output(y, before, blend(prod, 0.5, 0.25, before.to_ref()), tol_for(t));
      }
    }
  }
  }
  }
}

TEST_CASE("gemm_forward: large batched problems with broadcast and a per-row bias") {
  // Batch 3 with a shared a (batch 1), padded strides everywhere, beta == 0 over a poisoned y.
  for (const Handle& h : test_handles()) {
    for (DType t : {DType::F32, DType::F16}) {
      for (bool tb : {false, true}) {
        CAPTURE(std::string(backend_name(h)));
        CAPTURE(std::string(dtype_name(t)));
        CAPTURE(tb);
        // Reduced (sanitizer runs): still more than one tile each way, a sixth of the work.
        const int64_t m = reduced_tests() ? 136 : 200, n = reduced_tests() ? 72 : 96, k = reduced_tests() ? 40 : 136;
        const std::vector<int64_t> a_dims = stored_dims(3, 1, m, k, false);
        const std::vector<int64_t> b_dims = stored_dims(3, 3, k, n, tb);
        const std::vector<int64_t> y_dims = {3, m, n}, bias_dims = {3, m, 1};
        const HostTensor a = tensor_with(make_desc(t, a_dims, Layout::CHANNELS_FIRST), random_values(t, a_dims));
        const HostTensor b = tensor_with(make_desc(t, b_dims, Layout::PADDED), random_values(t, b_dims));
        const HostTensor bias = tensor_with(make_desc(t, bias_dims, Layout::PADDED), random_values(t, bias_dims));
        HostTensor y(make_desc(t, y_dims, Layout::PADDED));
        y.poison();
        const HostTensor before = y;
        GemmDesc g;
        g.trans_b = tb;
        Staging st(h);
        REQUIRE_OK(gemm_forward(h, g, 1.5f, a.desc(), st.in(a), b.desc(), st.in(b), bias.desc(),
                                st.in(bias), 0.f, y.desc(), st.out(y)));
        st.finish();
        const std::vector<double> prod = ref::gemm(a.to_ref(), a_dims, false, b.to_ref(), b_dims, tb,
                                                   bias.to_ref(), bias_dims, y_dims);
        check_output(y, before, blend(prod, 1.5, 0.0, before.to_ref()), tol_for(t));
      }
    }
  }
}

TEST_CASE("gemm_forward rejects invalid input") {
  const Handle h = Handle::cpu();
  const DType f32 = DType::F32;
  const TensorDesc a = TensorDesc::packed(f32, {3, 4});
  const TensorDesc b = TensorDesc::packed(f32, {4, 5});
  const TensorDesc y = TensorDesc::packed(f32, {3, 5});
  const TensorDesc bias = TensorDesc::packed(f32, {1, 5});
  HostTensor at(TensorDesc::packed(f32, {2, 3, 4})), bt(TensorDesc::packed(f32, {2, 4, 5})),
      yt(TensorDesc::packed(f32, {3, 3, 5})), biast(bias);
  at.fill_random();
  bt.fill_random();
  biast.fill_random();
  const void* ap = at.data();
  const void* bp = bt.data();
  const void* biasp = biast.data();
  void* yp = yt.data();
  const GemmDesc g;
  auto run = [&](const GemmDesc& gd, const TensorDesc& ad, const TensorDesc& bd, const TensorDesc& biasd,
                 const void* bias_ptr, const TensorDesc& yd) {
    return gemm_forward(h, gd, 1.f, ad, ap, bd, bp, biasd, bias_ptr, 0.f, yd, yp);
  };
  REQUIRE_OK(run(g, a, b, bias, biasp, y));
  REQUIRE_OK(run(g, a, b, bias, nullptr, y));
  // Inner dims differ; with trans_a the shapes line up differently.
  CHECK_STATUS(run(g, TensorDesc::packed(f32, {3, 3}), b, bias, biasp, y), StatusCode::BAD_PARAM);
  GemmDesc ta;
  ta.trans_a = true;
  CHECK_STATUS(run(ta, a, b, bias, biasp, y), StatusCode::BAD_PARAM);
  GemmDesc tb;
  tb.trans_b = true;
  CHECK_STATUS(run(tb, a, b, bias, biasp, y), StatusCode::BAD_PARAM);
  // Wrong y dims, mixed ranks, unsupported ranks.
  CHECK_STATUS(run(g, a, b, bias, biasp, TensorDesc::packed(f32, {3, 4})), StatusCode::BAD_PARAM);
  CHECK_STATUS(run(g, a, b, bias, biasp, TensorDesc::packed(f32, {5, 3})), StatusCode::BAD_PARAM);
  CHECK_STATUS(run(g, TensorDesc::packed(f32, {1, 3, 4}), b, bias, biasp, y), StatusCode::BAD_PARAM);
  CHECK_STATUS(run(g, TensorDesc::packed(f32, {4}), TensorDesc::packed(f32, {4}), bias, nullptr,
                   TensorDesc::packed(f32, {1})),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(run(g, TensorDesc::packed(f32, {1, 1, 3, 4}), TensorDesc::packed(f32, {1, 1, 4, 5}),
                   bias, nullptr, TensorDesc::packed(f32, {1, 1, 3, 5})),
               StatusCode::BAD_PARAM);
  // Batch dims: each 1 or y's.
  REQUIRE_OK(run(g, TensorDesc::packed(f32, {1, 3, 4}), TensorDesc::packed(f32, {2, 4, 5}),
                 TensorDesc(), nullptr, TensorDesc::packed(f32, {2, 3, 5})));
  CHECK_STATUS(run(g, TensorDesc::packed(f32, {2, 3, 4}), TensorDesc::packed(f32, {2, 4, 5}),
                   TensorDesc(), nullptr, TensorDesc::packed(f32, {3, 3, 5})),
               StatusCode::BAD_PARAM);
  // Bias that does not broadcast, wrong dtype, wrong rank.
  CHECK_STATUS(run(g, a, b, TensorDesc::packed(f32, {1, 4}), biasp, y), StatusCode::BAD_PARAM);
  CHECK_STATUS(run(g, a, b, TensorDesc::packed(f32, {2, 5}), biasp, y), StatusCode::BAD_PARAM);
  CHECK_STATUS(run(g, a, b, TensorDesc::packed(f32, {5}), biasp, y), StatusCode::BAD_PARAM);
  CHECK_STATUS(run(g, a, b, bias.with_dtype(DType::F16), biasp, y), StatusCode::BAD_PARAM);
  // Dtype mix.
  CHECK_STATUS(run(g, a.with_dtype(DType::F16), b, bias, biasp, y), StatusCode::BAD_PARAM);
  CHECK_STATUS(run(g, a, b.with_dtype(DType::F16), bias, biasp, y), StatusCode::BAD_PARAM);
  // Bad descriptor.
  CHECK_STATUS(run(g, TensorDesc::packed(f32, {3, 0}), b, bias, biasp, y), StatusCode::BAD_PARAM);
  // Null pointers and aliasing.
  CHECK_STATUS(gemm_forward(h, g, 1.f, a, nullptr, b, bp, bias, biasp, 0.f, y, yp), StatusCode::BAD_PARAM);
  CHECK_STATUS(gemm_forward(h, g, 1.f, a, ap, b, nullptr, bias, biasp, 0.f, y, yp), StatusCode::BAD_PARAM);
  CHECK_STATUS(gemm_forward(h, g, 1.f, a, ap, b, bp, bias, biasp, 0.f, y, nullptr), StatusCode::BAD_PARAM);
  CHECK_STATUS(gemm_forward(h, g, 1.f, TensorDesc::packed(f32, {3, 5}), yp, TensorDesc::packed(f32, {5, 5}), bp,
                            bias, biasp, 0.f, y, yp),
               StatusCode::BAD_PARAM);
}

TEST_CASE("gemm_forward: small M (the GEMV path of fully connected layers)") {
  // CUDA takes its GEMV kernel for M <= 8 with both operands contiguous along K (16-byte loads
  // with 16-byte aligned rows, as here): these shapes cover M = 1..8, N from 1 (all eight warps of
  // a block on one column) to 1000, depths that are and are not a multiple of the 16-byte chunk
  // (the tail loop; rows padded to keep them aligned), batch with a broadcast a, bias, and alpha
  // / beta with beta == 0 over a poisoned y. M = 9 falls back to the tiled engines.
  struct Case {
    int64_t m, n, k, batch;
  };
  const Case cases[] = {{1, 1000, 2048, 1}, {1, 1, 4096, 1}, {3, 37, 2053, 1}, {8, 129, 520, 1},
                        {2, 64, 1030, 2}, {9, 33, 264, 1}, {1, 7, 3, 1}};
  for (const Handle& h : test_handles()) {
    for (DType t : {DType::F32, DType::F16}) {
      for (const Case& c : cases) {
        for (float beta : {0.f, 0.25f}) {
          CAPTURE(std::string(backend_name(h)));
          CAPTURE(std::string(dtype_name(t)));
          CAPTURE(c.m);
          CAPTURE(c.n);
          CAPTURE(c.k);
          CAPTURE(c.batch);
          CAPTURE(beta);
          const int64_t kp = (c.k + 7) / 8 * 8 + 8;  // padded row stride, a multiple of 8
          const bool batched = c.batch > 1;
          const std::vector<int64_t> a_dims = batched ? std::vector<int64_t>{1, c.m, c.k}
                                                      : std::vector<int64_t>{c.m, c.k};
          const std::vector<int64_t> b_dims = batched ? std::vector<int64_t>{c.batch, c.n, c.k}
                                                      : std::vector<int64_t>{c.n, c.k};
          const std::vector<int64_t> y_dims = batched ? std::vector<int64_t>{c.batch, c.m, c.n}
                                                      : std::vector<int64_t>{c.m, c.n};
          const std::vector<int64_t> bias_dims = batched ? std::vector<int64_t>{1, 1, c.n}
                                                         : std::vector<int64_t>{1, c.n};
          const int rank = batched ? 3 : 2;
          const int64_t a_str3[3] = {c.m * kp, kp, 1}, b_str3[3] = {c.n * kp, kp, 1};
          const int64_t* a_str = batched ? a_str3 : a_str3 + 1;
          const int64_t* b_str = batched ? b_str3 : b_str3 + 1;
          const HostTensor a = tensor_with(TensorDesc::strided(t, rank, a_dims.data(), a_str),
                                           random_values(t, a_dims));
          const HostTensor b = tensor_with(TensorDesc::strided(t, rank, b_dims.data(), b_str),
                                           random_values(t, b_dims));
          const HostTensor bias = tensor_with(make_desc(t, bias_dims, Layout::CHANNELS_FIRST),
                                              random_values(t, bias_dims));
          HostTensor y(make_desc(t, y_dims, Layout::CHANNELS_FIRST));
          if (beta == 0.f) y.poison(); else y.fill_random();
          const HostTensor before = y;
          GemmDesc g;
          g.trans_b = true;  // b holds the N rows of K weights, as a fully connected layer
          Staging st(h);
          REQUIRE_OK(gemm_forward(h, g, 0.75f, a.desc(), st.in(a), b.desc(), st.in(b),
                                  bias.desc(), st.in(bias), beta, y.desc(), st.out(y)));
          st.finish();
          const std::vector<double> prod = ref::gemm(a.to_ref(), a_dims, false, b.to_ref(),
                                                     b_dims, true, bias.to_ref(), bias_dims, y_dims);
          // A dot product of K terms of rms 1/3 (uniform [-1, 1] factors) cancels to O(sqrt(K) / 3)
          // while its rounding error grows with the terms, not the result: judge it against that
          // magnitude (a single output element gives check_output no rms to go by).
          const double terms = 0.75 * std::sqrt(static_cast<double>(c.k)) / 3.0;
          check_output(y, before, blend(prod, 0.75, beta, before.to_ref()), tol_for(t), terms);
        }
      }
    }
  }
}

TEST_CASE("gemm_forward: every GEMV variant (rows 1-8, warps per row, 16-byte and element loads)") {
  // CUDA's GEMV kernel comes in variants: built for 1, 2, 4 or 8 rows of a (M = 3, 5, 6, 7 run
  // the next one up with the extra rows unused), 16-byte loads when every row of a and b is
  // 16-byte aligned or element loads otherwise, one weight row per warp (M <= 2) or two, and 1,
  // 2, 4 or 8 warps per weight row. The warps per row follow from the chunks of a row (16 bytes
  // each, or one element) when N is small (N = 5 here, on any GPU with 8 SMs or more): < 64
  // chunks 1 warp, 64-127 2, 128-255 4, >= 256 8. Every M in 1..8 meets every warp count with
  // both loads, K with and without a partial last chunk, row groups the last of which is partial
  // and (M >= 3) a warp whose second weight row is past N. Alignment: rows padded to a multiple of 8
  // elements take the 16-byte loads; odd strides and pointers one element into a buffer take the
  // element loads. On the CPU backend the same cases check the reference path.
  const int64_t chunk_counts[] = {37, 101, 203, 300};  // -> 1, 2, 4, 8 warps per row
  int turn = 0;
  for (const Handle& h : test_handles()) {
    for (DType t : {DType::F32, DType::F16}) {
      const int64_t v = 16 / static_cast<int64_t>(dtype_size(t));
      for (int64_t m = 1; m <= 8; ++m) {
        for (int ci = 0; ci < 4; ++ci) {
          // Reduced (sanitizer runs): each M with two of the warp counts, each count with half the M.
          if (reduced_tests() && (m + ci) % 2 == 1) continue;
          const int64_t chunks = chunk_counts[ci];
          for (int load = 0; load < 3; ++load) {
            ++turn;
            GemvCase c{};
            c.m = m;
            c.n = 5;
            c.bias_kind = turn % 4;
            c.beta = turn % 2 == 0 ? 0.f : 0.25f;
            if (load == 0) {  // 16-byte loads; a tail of 0..v-1 elements past the last chunk
              c.k = chunks * v + (m + chunks) % v;
              c.a_rs = c.b_rs = (c.k + v - 1) / v * v + v;
            } else if (load == 1) {  // element loads: odd row strides
              c.k = chunks | 1;
              c.a_rs = c.k;
              c.b_rs = c.k + 2;
            } else {  // element loads: rows aligned but a or b one element into its buffer
              c.k = chunks * v;
              c.a_rs = c.b_rs = c.k;
              (m % 2 == 0 ? c.a_off : c.b_off) = 1;
            }
            check_gemv(h, t, c);
          }
        }
      }
      // The fully connected layers of ResNet-50 (2048 -> 1000) and ResNet-18 (512 -> 1000), batch
      // 1 and 8: N large enough that the warps per row follow from the GPU's size too.
      for (const int64_t k : {int64_t(2048), int64_t(512)})
        for (const int64_t m : {int64_t(1), int64_t(8)}) check_gemv(h, t, {m, 1000, k, k, k, 0, 0, 1, 0.f});
    }
  }
}

TEST_CASE("gemm_forward: GEMV over more row groups than its grid (blocks loop)") {
  // The GEMV grid holds at most 3 (M <= 2) or 2 blocks per SM divided by the batch: batch 8 of
  // N = 1000 weight rows with a short depth (one warp per weight row, 8 a block, 125 row groups
  // per batch entry at M = 1; two per warp, 16 a block, 63 groups at M = 3 and 8) makes blocks
  // take more than one row group on any GPU with fewer than ~250 SMs. a broadcasts (batch 1), b
  // is batched, the bias is per batch entry and column, y is poisoned.
  for (const Handle& h : test_handles()) {
    for (DType t : {DType::F32, DType::F16}) {
      for (const int64_t m : {int64_t(1), int64_t(3), int64_t(8)}) {
        CAPTURE(std::string(backend_name(h)));
        CAPTURE(std::string(dtype_name(t)));
        CAPTURE(m);
        const int64_t batch = 8, n = 1000, k = 40;
        const std::vector<int64_t> a_dims = {1, m, k}, b_dims = {batch, n, k}, y_dims = {batch, m, n},
                                   bias_dims = {batch, 1, n};
        const HostTensor a = tensor_with(make_desc(t, a_dims, Layout::CHANNELS_FIRST), random_values(t, a_dims));
        const HostTensor b = tensor_with(make_desc(t, b_dims, Layout::CHANNELS_FIRST), random_values(t, b_dims));
        const HostTensor bias = tensor_with(make_desc(t, bias_dims, Layout::CHANNELS_FIRST), random_values(t, bias_dims));
        HostTensor y(make_desc(t, y_dims, Layout::CHANNELS_FIRST));
        y.poison();
        const HostTensor before = y;
        GemmDesc g;
        g.trans_b = true;
        Staging st(h);
        REQUIRE_OK(gemm_forward(h, g, 1.25f, a.desc(), st.in(a), b.desc(), st.in(b), bias.desc(),
                                st.in(bias), 0.f, y.desc(), st.out(y)));
        st.finish();
        const std::vector<double> prod = ref::gemm(a.to_ref(), a_dims, false, b.to_ref(), b_dims, true,
                                                   bias.to_ref(), bias_dims, y_dims);
        check_output(y, before, blend(prod, 1.25, 0.0, before.to_ref()), tol_for(t),
                     1.25 * std::sqrt(static_cast<double>(k)) / 3.0);
      }
    }
  }
}
