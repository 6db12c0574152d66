// conv_backward_filter (every algorithm) and conv_backward_bias (CPU) against central
// differences of the float64 reference convolution: random 1D/2D/3D problems with groups,
// depthwise, strides, dilation, asymmetric padding, convolution mode, every layout of x and dy,
// both filter layouts, alpha/beta != (1, 0), poisoned outputs; workspace queries; invalid input.
#include <cmath>
#include <string>
#include <vector>

#include "reference/activation.h"
#include "reference/conv.h"
#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

namespace {

struct Problem {
  std::vector<int64_t> x_dims, w_dims, y_dims;
  ref::ConvParams p;
  ConvDesc conv;
};

// A random convolution with an output of at least one position.
Problem random_problem() {
  for (;;) {
    Problem pr;
    const int spatial = static_cast<int>(uniform_int(1, 3));
    int64_t groups = uniform_int(1, 3);
    const bool depthwise = uniform_int(0, 4) == 0;
    const int64_t cg = depthwise ? 1 : uniform_int(1, 3);
    const int64_t kg = uniform_int(1, 3);
    if (depthwise) groups = uniform_int(2, 4);
    pr.x_dims = {uniform_int(1, 2), cg * groups};
    pr.w_dims = {kg * groups, cg};
    int64_t pb[3], pe[3], st[3], dl[3];
    for (int i = 0; i < spatial; ++i) {
      const int64_t win = uniform_int(1, spatial == 3 ? 2 : 3);
      pr.x_dims.push_back(uniform_int(spatial == 3 ? 2 : 3, spatial == 3 ? 4 : 7));
      pr.w_dims.push_back(win);
      pb[i] = uniform_int(0, 2);
      pe[i] = uniform_int(0, 1);
      st[i] = uniform_int(1, 2);
      dl[i] = uniform_int(1, 2);
      pr.p.pad_begin.push_back(pb[i]);
      pr.p.pad_end.push_back(pe[i]);
      pr.p.stride.push_back(st[i]);
      pr.p.dilation.push_back(dl[i]);
    }
    pr.p.groups = groups;
    pr.p.flip = uniform_int(0, 3) == 0;
    pr.conv = ConvDesc::make(spatial, pb, pe, st, dl, groups,
                             pr.p.flip ? ConvMode::CONVOLUTION : ConvMode::CROSS_CORRELATION);
    int64_t out[5];
    const TensorDesc xd = make_desc(DType::F32, pr.x_dims, Layout::CHANNELS_FIRST);
    const FilterDesc wd = FilterDesc::make(DType::F32, FilterLayout::KCRS,
                                           static_cast<int>(pr.w_dims.size()), pr.w_dims.data());
    if (!conv_output_dims(xd, wd, pr.conv, out).ok()) continue;
    pr.y_dims.assign(out, out + pr.x_dims.size());
    return pr;
  }
}

FilterDesc filter_of(const Problem& pr, FilterLayout l) {
  return FilterDesc::make(DType::F32, l, static_cast<int>(pr.w_dims.size()), pr.w_dims.data());
}

}  // namespace

TEST_CASE("conv_backward_filter matches central differences, both algorithms") {
  const Handle h = Handle::cpu();
  const int rounds = reduced_tests() ? 8 : 30;
  for (int round = 0; round < rounds; ++round) {
    const Problem pr = random_problem();
    const std::vector<double> xv = random_values(DType::F32, pr.x_dims);
    const std::vector<double> dyv = random_values(DType::F32, pr.y_dims);
    const std::vector<double> wv = random_values(DType::F32, pr.w_dims);
    const Vjp want = numeric_vjp(
        [&](const std::vector<double>& w) {
          return ref::conv_forward(xv, pr.x_dims, w, pr.w_dims, pr.p);
        },
        wv, dyv);
    const HostTensor x = tensor_with(make_desc(DType::F32, pr.x_dims, random_layout()), xv);
    const HostTensor dy = tensor_with(make_desc(DType::F32, pr.y_dims, random_layout()), dyv);
    // GEMM's sum over N x output positions split in chunks (its tactic) where the problem has one
    // group and that sum has a divisor > 1.
    int64_t rows = pr.y_dims[0], split = 0;
    for (size_t i = 2; i < pr.y_dims.size(); ++i) rows *= pr.y_dims[i];
    for (int64_t t = 2; t <= rows && pr.p.groups == 1 && split == 0; ++t)
      if (rows % t == 0) split = uniform_int(0, 1) ? t : rows;  // the smallest divisor, or one row each
    for (int variant = 0; variant < (split ? 3 : 2); ++variant) {
      const ConvBwdFilterAlgo algo = variant == 0 ? ConvBwdFilterAlgo::IMPLICIT_GEMM : ConvBwdFilterAlgo::GEMM;
      const ConvDesc conv = variant == 2 ? pr.conv.with_tactic(static_cast<int32_t>(split)) : pr.conv;
      for (FilterLayout fl : {FilterLayout::KCRS, FilterLayout::KRSC}) {
        const float alpha = round % 2 ? 0.5f : 1.f, beta = round % 2 ? -0.25f : 0.f;
        CAPTURE(dims_str(pr.x_dims));
        CAPTURE(dims_str(pr.w_dims));
        CAPTURE(dims_str(pr.y_dims));
        CAPTURE(pr.p.groups);
        CAPTURE(pr.p.flip);
        CAPTURE(std::string(conv_bwd_filter_algo_name(algo)));
        CAPTURE(conv.tactic());
        CAPTURE(static_cast<int>(fl));
        const FilterDesc wd = filter_of(pr, fl);
        HostTensor dw(wd.as_tensor());
        if (beta == 0.f) dw.poison(); else dw.fill_random();
        const HostTensor before = dw;
        size_t bytes = 1;
        REQUIRE_OK(conv_backward_filter_workspace_size(h, x.desc(), dy.desc(), conv, wd, algo,
                                                       &bytes));
        if (algo == ConvBwdFilterAlgo::IMPLICIT_GEMM) CHECK(bytes == 0);
        std::vector<unsigned char> ws(bytes);
        REQUIRE_OK(conv_backward_filter(h, alpha, x.desc(), x.data(), dy.desc(), dy.data(),
                                        conv, algo, bytes ? ws.data() : nullptr, bytes, beta,
                                        wd, dw.data()));
        check_vjp(dw, before, want, alpha, beta);
      }
    }
  }
}

TEST_CASE("conv_backward_filter WINOGRAD matches central differences on 3x3 stride-1 problems") {
  // The problems WINOGRAD takes: 2D, 3x3, stride 1, no dilation, one group; any padding (odd
  // output sizes leave a half tile), either mode, every layout, alpha/beta, chunk splits (its
  // tactic: the last chunk padded with zero tiles).
  const Handle h = Handle::cpu();
  const int rounds = reduced_tests() ? 6 : 20;
  for (int round = 0; round < rounds; ++round) {
    Problem pr;
    pr.x_dims = {uniform_int(1, 2), uniform_int(1, 5), uniform_int(2, 9), uniform_int(2, 9)};
    pr.w_dims = {uniform_int(1, 5), pr.x_dims[1], 3, 3};
    int64_t pb[2], pe[2], st[2] = {1, 1}, dl[2] = {1, 1};
    for (int i = 0; i < 2; ++i) {
      pb[i] = uniform_int(0, 2);
      pe[i] = uniform_int(0, 2);
      // The output has at least one position: in + pads >= 3.
      if (pr.x_dims[2 + i] + pb[i] + pe[i] < 3) pe[i] = 3 - pr.x_dims[2 + i] - pb[i];
      pr.p.pad_begin.push_back(pb[i]);
      pr.p.pad_end.push_back(pe[i]);
      pr.p.stride.push_back(1);
      pr.p.dilation.push_back(1);
    }
    pr.p.groups = 1;
    pr.p.flip = uniform_int(0, 2) == 0;
    pr.conv = ConvDesc::make(2, pb, pe, st, dl, 1, pr.p.flip ? ConvMode::CONVOLUTION : ConvMode::CROSS_CORRELATION);
    int64_t out[4];
    REQUIRE_OK(conv_output_dims(make_desc(DType::F32, pr.x_dims, Layout::CHANNELS_FIRST),
                                filter_of(pr, FilterLayout::KCRS), pr.conv, out));
    pr.y_dims.assign(out, out + 4);
    const std::vector<double> xv = random_values(DType::F32, pr.x_dims);
    const std::vector<double> dyv = random_values(DType::F32, pr.y_dims);
    const std::vector<double> wv = random_values(DType::F32, pr.w_dims);
    const Vjp want = numeric_vjp(
        [&](const std::vector<double>& w) { return ref::conv_forward(xv, pr.x_dims, w, pr.w_dims, pr.p); },
        wv, dyv);
    const HostTensor x = tensor_with(make_desc(DType::F32, pr.x_dims, random_layout()), xv);
    const HostTensor dy = tensor_with(make_desc(DType::F32, pr.y_dims, random_layout()), dyv);
    // Both tile sizes: F(3x3, 2x2) (exact math) and F(3x3, 4x4) (ConvMath::ALLOW_APPROXIMATE),
    // whose transforms cost accuracy: checked at 5e-5 against the float64 differences.
    for (ConvMath math : {ConvMath::EXACT, ConvMath::ALLOW_APPROXIMATE}) {
      const int64_t m = math == ConvMath::EXACT ? 2 : 4;
      const int64_t tiles = pr.y_dims[0] * ((pr.y_dims[2] + m - 1) / m) * ((pr.y_dims[3] + m - 1) / m);
      // No split, a random one (possibly leaving the last chunk short), one tile a chunk.
      for (int64_t chunks : {int64_t(0), uniform_int(2, std::max<int64_t>(2, tiles)), tiles}) {
        if (chunks > tiles) continue;
        const ConvDesc conv = pr.conv.with_tactic(static_cast<int32_t>(chunks)).with_math(math);
        const FilterLayout fl = uniform_int(0, 1) ? FilterLayout::KRSC : FilterLayout::KCRS;
        const float alpha = round % 2 ? 0.5f : 1.f, beta = round % 2 ? -0.25f : 0.f;
        CAPTURE(dims_str(pr.x_dims));
        CAPTURE(dims_str(pr.y_dims));
        CAPTURE(pr.p.flip);
        CAPTURE(chunks);
        CAPTURE(m);
        CAPTURE(static_cast<int>(fl));
        const FilterDesc wd = filter_of(pr, fl);
        HostTensor dw(wd.as_tensor());
        if (beta == 0.f) dw.poison(); else dw.fill_random();
        const HostTensor before = dw;
        size_t bytes = 0;
        REQUIRE_OK(conv_backward_filter_workspace_size(h, x.desc(), dy.desc(), conv, wd,
                                                       ConvBwdFilterAlgo::WINOGRAD, &bytes));
        // Poisoned workspace: the padding tiles must be written, not assumed zero.
        std::vector<float> ws(bytes / sizeof(float), std::nanf(""));
        REQUIRE_OK(conv_backward_filter(h, alpha, x.desc(), x.data(), dy.desc(), dy.data(), conv,
                                        ConvBwdFilterAlgo::WINOGRAD, ws.data(), bytes, beta, wd,
                                        dw.data()));
        check_vjp(dw, before, want, alpha, beta, math == ConvMath::EXACT ? 1e-5 : 5e-5);
      }
    }
  }
}

TEST_CASE("conv_backward_filter WINOGRAD refuses the problems it does not take, naming them") {
  const Handle h = Handle::cpu();
  const TensorDesc xd = TensorDesc::nchw(DType::F32, 2, 4, 6, 6);
  const FilterDesc w3 = FilterDesc::kcrs(DType::F32, 8, 4, 3, 3);
  size_t bytes = 0;
  // Stride 2, dilation 2, groups 2, a 5x5 filter, a 1D problem.
  struct Case {
    TensorDesc y;
    FilterDesc w;
    ConvDesc conv;
  };
  const Case cases[] = {
      {TensorDesc::nchw(DType::F32, 2, 8, 3, 3), w3, ConvDesc::conv2d(1, 1, 2, 2)},
      {TensorDesc::nchw(DType::F32, 2, 8, 2, 2), w3, ConvDesc::conv2d(0, 0, 1, 1, 2, 2)},
      {TensorDesc::nchw(DType::F32, 2, 8, 4, 4), FilterDesc::kcrs(DType::F32, 8, 2, 3, 3),
       ConvDesc::conv2d(0, 0, 1, 1, 1, 1, 2)},
      {TensorDesc::nchw(DType::F32, 2, 8, 2, 2), FilterDesc::kcrs(DType::F32, 8, 4, 5, 5), ConvDesc::conv2d(0, 0)},
  };
  for (const Case& c : cases) {
    const Status st = conv_backward_filter_workspace_size(h, xd, c.y, c.conv, c.w, ConvBwdFilterAlgo::WINOGRAD, &bytes);
    INFO(st.to_string());
    CHECK(st.code() == StatusCode::NOT_SUPPORTED);
    CHECK(st.message().find("WINOGRAD takes 2D 3x3 filters") != std::string::npos);
  }
  // More chunks than tiles (2 images x 2 x 2 tiles of a 4x4 output).
  const TensorDesc yd = TensorDesc::nchw(DType::F32, 2, 8, 4, 4);
  REQUIRE_OK(conv_backward_filter_workspace_size(h, xd, yd, ConvDesc::conv2d(0, 0).with_tactic(8), w3,
                                                 ConvBwdFilterAlgo::WINOGRAD, &bytes));
  CHECK(bytes == 4u * (16u * 8u * (4u + 8u) + 16u * 8u * 4u * 8u + 16u * 8u * 4u));
  CHECK_STATUS(conv_backward_filter_workspace_size(h, xd, yd, ConvDesc::conv2d(0, 0).with_tactic(9), w3,
                                                   ConvBwdFilterAlgo::WINOGRAD, &bytes),
               StatusCode::NOT_SUPPORTED);
  // Approximate math: 4 x 4 tiles (one an image) and 36 planes.
  const ConvDesc approx = ConvDesc::conv2d(0, 0).with_math(ConvMath::ALLOW_APPROXIMATE);
  REQUIRE_OK(conv_backward_filter_workspace_size(h, xd, yd, approx.with_tactic(2), w3,
                                                 ConvBwdFilterAlgo::WINOGRAD, &bytes));
  CHECK(bytes == 4u * (36u * 2u * (4u + 8u) + 36u * 8u * 4u * 2u + 36u * 8u * 4u));
  CHECK_STATUS(conv_backward_filter_workspace_size(h, xd, yd, approx.with_tactic(3), w3,
                                                   ConvBwdFilterAlgo::WINOGRAD, &bytes),
               StatusCode::NOT_SUPPORTED);
}

TEST_CASE("conv_backward_bias matches central differences") {
  const Handle h = Handle::cpu();
  for (int round = 0; round < (reduced_tests() ? 4 : 12); ++round) {
    const int rank = static_cast<int>(uniform_int(3, 5));
    const std::vector<int64_t> dims = random_dims(rank, 1, rank == 5 ? 4 : 7);
    std::vector<int64_t> bdims(dims.size(), 1);
    bdims[1] = dims[1];
    const std::vector<double> dyv = random_values(DType::F32, dims);
    const std::vector<double> bv = random_values(DType::F32, bdims);
    const int64_t inner = count(dims) / dims[0] / dims[1];
    // y = b broadcast over N and the spatial dims (a convolution's bias term).
    const Vjp want = numeric_vjp(
        [&](const std::vector<double>& b) {
          std::vector<double> y(static_cast<size_t>(count(dims)));
          for (size_t i = 0; i < y.size(); ++i)
            y[i] = b[static_cast<size_t>(static_cast<int64_t>(i) / inner % dims[1])];
          return y;
        },
        bv, dyv);
    const HostTensor dy = tensor_with(make_desc(DType::F32, dims, random_layout()), dyv);
    HostTensor db(make_desc(DType::F32, bdims, Layout::PADDED));
    const float alpha = round % 2 ? 2.f : 1.f, beta = round % 2 ? 0.5f : 0.f;
    if (beta == 0.f) db.poison(); else db.fill_random();
    const HostTensor before = db;
    CAPTURE(dims_str(dims));
    REQUIRE_OK(conv_backward_bias(h, alpha, dy.desc(), dy.data(), beta, db.desc(), db.data()));
    check_vjp(db, before, want, alpha, beta);
  }
}

// The fused activation backward and bias gradient against central differences of the float64
// forward y = act(x + b) (b broadcast over N and the spatial dims): dpre = dy * act'(x) is the
// gradient with respect to x, db the one with respect to b. Random ranks, dims and a layout per
// tensor (the CUDA side's vector and scalar walks are compared with this in gpu_conv.cpp),
// alpha/beta != (1, 0), poisoned outputs, and dpre in place over dy.
TEST_CASE("conv_backward_bias_activation matches central differences") {
  const Handle h = Handle::cpu();
  const ActivationDesc acts[] = {ActivationDesc::relu(), ActivationDesc::leaky_relu(0.1f),
                                 ActivationDesc::sigmoid(), ActivationDesc::identity()};
  for (int round = 0; round < (reduced_tests() ? 8 : 16); ++round) {
    const ActivationDesc& act = acts[round % 4];
    const int rank = static_cast<int>(uniform_int(3, 5));
    const std::vector<int64_t> dims = random_dims(rank, 1, rank == 5 ? 4 : 7);
    std::vector<int64_t> bdims(dims.size(), 1);
    bdims[1] = dims[1];
    std::vector<double> xv = random_values(DType::F32, dims);
    for (double& v : xv) v = static_cast<float>(std::fabs(v) < 1e-3 ? 2e-3 : v);  // off ReLU's kink
    const std::vector<double> dyv = random_values(DType::F32, dims);
    const std::vector<double> zero_b(static_cast<size_t>(dims[1]), 0.0);
    const int64_t inner = count(dims) / dims[0] / dims[1];
    const auto forward = [&](const std::vector<double>& x, const std::vector<double>& b) {
      std::vector<double> y(x.size());
      for (size_t i = 0; i < y.size(); ++i)
        y[i] = ref::activation(act, x[i] + b[static_cast<size_t>(static_cast<int64_t>(i) / inner % dims[1])]);
      return y;
    };
    const Vjp want_dpre = numeric_vjp([&](const std::vector<double>& x) { return forward(x, zero_b); }, xv, dyv);
    const Vjp want_db = numeric_vjp([&](const std::vector<double>& b) { return forward(xv, b); }, zero_b, dyv);
    const HostTensor x = tensor_with(make_desc(DType::F32, dims, random_layout()), xv);
    const HostTensor dy = tensor_with(make_desc(DType::F32, dims, random_layout()), dyv);
    const bool in_place = round % 3 == 0;
    HostTensor dpre = in_place ? dy : HostTensor(make_desc(DType::F32, dims, random_layout()));
    if (!in_place) dpre.poison();
    const HostTensor dpre_before = dpre;
    HostTensor db(make_desc(DType::F32, bdims, Layout::PADDED));
    const float alpha = round % 2 ? 2.f : 1.f, beta = round % 2 ? 0.5f : 0.f;
    if (beta == 0.f) db.poison(); else db.fill_random();
    const HostTensor db_before = db;
    CAPTURE(std::string(activation_mode_name(act.mode)));
    CAPTURE(dims_str(dims));
    CAPTURE(in_place);
    REQUIRE_OK(conv_backward_bias_activation(h, act, x.desc(), x.data(), dy.desc(), in_place ? dpre.data() : dy.data(),
                                             dpre.desc(), dpre.data(), alpha, beta, db.desc(), db.data(), nullptr, 0));
    check_vjp(dpre, dpre_before, want_dpre, 1.0, 0.0);
    check_vjp(db, db_before, want_db, alpha, beta);
  }
}

TEST_CASE("conv_backward_bias_activation propagates NaN and rejects bad input, naming it") {
  const Handle h = Handle::cpu();
  const TensorDesc d = TensorDesc::nchw(DType::F32, 1, 2, 1, 2);
  const TensorDesc bd = TensorDesc::nchw(DType::F32, 1, 2, 1, 1);
  const float nan = std::nanf("");
  // A NaN in x reaches dpre and its channel's db; a NaN in dy where ReLU's derivative is 0 too.
  float x[4] = {nan, 1.f, -1.f, 2.f}, dy[4] = {1.f, 1.f, nan, 1.f}, dpre[4] = {}, db[2] = {};
  REQUIRE_OK(conv_backward_bias_activation(h, ActivationDesc::relu(), d, x, d, dy, d, dpre, 1.f, 0.f, bd, db,
                                           nullptr, 0));
  CHECK(std::isnan(dpre[0]));
  CHECK(dpre[1] == 1.f);
  CHECK(std::isnan(dpre[2]));
  CHECK(dpre[3] == 1.f);
  CHECK(std::isnan(db[0]));
  CHECK(std::isnan(db[1]));
  const auto fails = [&](const Status& st, const char* what) {
    CHECK(st.code() != StatusCode::SUCCESS);
    CHECK(st.message().find("conv_backward_bias_activation") != std::string::npos);
    CHECK(st.message().find(what) != std::string::npos);
  };
  const ActivationDesc relu = ActivationDesc::relu();
  fails(conv_backward_bias_activation(h, relu, d, nullptr, d, dy, d, dpre, 1.f, 0.f, bd, db, nullptr, 0), "x");
  fails(conv_backward_bias_activation(h, relu, TensorDesc::nchw(DType::F32, 1, 2, 2, 1), x, d, dy, d, dpre, 1.f, 0.f,
                                      bd, db, nullptr, 0),
        "dims");
  fails(conv_backward_bias_activation(h, relu, d, x, d, dy, d, dpre, 1.f, 0.f, TensorDesc::nchw(DType::F32, 1, 4, 1, 1),
                                      db, nullptr, 0),
        "db");
  fails(conv_backward_bias_activation(h, relu, d, x, d, dy, d, dpre, 1.f, 0.f, bd, dpre, nullptr, 0), "db");
  fails(conv_backward_bias_activation(h, ActivationDesc::clip(1.f, 0.f), d, x, d, dy, d, dpre, 1.f, 0.f, bd, db,
                                      nullptr, 0),
        "conv_backward_bias_activation");
  // In place over dy with another layout.
  const TensorDesc t = TensorDesc::strided(DType::F32, {1, 2, 1, 2}, {4, 1, 4, 2});
  fails(conv_backward_bias_activation(h, relu, d, x, d, dy, t, dy, 1.f, 0.f, bd, db, nullptr, 0), "dpre");
}

TEST_CASE("conv_backward_filter and conv_backward_bias reject bad input, naming it") {
  const Handle h = Handle::cpu();
  const TensorDesc xd = TensorDesc::nchw(DType::F32, 1, 4, 6, 6);
  const TensorDesc yd = TensorDesc::nchw(DType::F32, 1, 8, 4, 4);
  const FilterDesc wd = FilterDesc::kcrs(DType::F32, 8, 4, 3, 3);
  const ConvDesc conv = ConvDesc::conv2d(0, 0);
  std::vector<float> x(144), dy(128), dw(288), ws(4096);
  size_t bytes = 0;
  REQUIRE_OK(conv_backward_filter_workspace_size(h, xd, yd, conv, wd, ConvBwdFilterAlgo::GEMM,
                                                 &bytes));
  CHECK(bytes == 4u * 16u * (4u * 9u + 8u));
  // GEMM's tactic: 4 chunks of the 16 rows add 4 partial dw; 3 does not divide 16; no split of a
  // grouped problem.
  REQUIRE_OK(conv_backward_filter_workspace_size(h, xd, yd, conv.with_tactic(4), wd,
                                                 ConvBwdFilterAlgo::GEMM, &bytes));
  CHECK(bytes == 4u * 16u * (4u * 9u + 8u) + 4u * 4u * 8u * 4u * 9u);
  CHECK_STATUS(conv_backward_filter_workspace_size(h, xd, yd, conv.with_tactic(3), wd,
                                                   ConvBwdFilterAlgo::GEMM, &bytes),
               StatusCode::NOT_SUPPORTED);
  CHECK_STATUS(conv_backward_filter_workspace_size(h, xd, yd,
                                                   ConvDesc::conv2d(0, 0, 1, 1, 1, 1, 2).with_tactic(2),
                                                   FilterDesc::kcrs(DType::F32, 8, 2, 3, 3),
                                                   ConvBwdFilterAlgo::GEMM, &bytes),
               StatusCode::NOT_SUPPORTED);
  REQUIRE_OK(conv_backward_filter_workspace_size(h, xd, yd, conv, wd, ConvBwdFilterAlgo::GEMM,
                                                 &bytes));
  // dy of the wrong size, a channel mismatch, a workspace too small, an unknown algorithm.
  CHECK_STATUS(conv_backward_filter(h, 1.f, xd, x.data(), TensorDesc::nchw(DType::F32, 1, 8, 5, 4),
                                    dy.data(), conv, ConvBwdFilterAlgo::IMPLICIT_GEMM, nullptr, 0,
                                    0.f, wd, dw.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(conv_backward_filter(h, 1.f, TensorDesc::nchw(DType::F32, 1, 3, 6, 6), x.data(), yd,
                                    dy.data(), conv, ConvBwdFilterAlgo::IMPLICIT_GEMM, nullptr, 0,
                                    0.f, wd, dw.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(conv_backward_filter(h, 1.f, xd, x.data(), yd, dy.data(), conv,
                                    ConvBwdFilterAlgo::GEMM, ws.data(), bytes - 4, 0.f, wd,
                                    dw.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(conv_backward_filter(h, 1.f, xd, x.data(), yd, dy.data(), conv,
                                    ConvBwdFilterAlgo::COUNT, nullptr, 0, 0.f, wd, dw.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(conv_backward_filter(h, 1.f, xd, x.data(), yd, dy.data(), conv,
                                    ConvBwdFilterAlgo::IMPLICIT_GEMM, nullptr, 0, 0.f,
                                    FilterDesc::kcrs(DType::F16, 8, 4, 3, 3), dw.data()),
               StatusCode::NOT_SUPPORTED);
  CHECK_STATUS(conv_backward_bias(h, 1.f, yd, dy.data(), 0.f, TensorDesc::nchw(DType::F32, 1, 4, 1, 1),
                                  dw.data()),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(conv_backward_bias(h, 1.f, yd, dy.data(), 0.f, TensorDesc::nchw(DType::F32, 1, 8, 1, 1),
                                  dy.data()),
               StatusCode::BAD_PARAM);
}

TEST_CASE("conv_backward_bias workspace: none on the CPU, checked where given") {
  const Handle h = Handle::cpu();
  const TensorDesc dy = TensorDesc::nchw(DType::F32, 2, 3, 4, 5);
  const TensorDesc db = TensorDesc::nchw(DType::F32, 1, 3, 1, 1);
  size_t bytes = 1;
  REQUIRE_OK(conv_backward_bias_workspace_size(h, dy, &bytes));
  CHECK(bytes == 0);
  CHECK_STATUS(conv_backward_bias_workspace_size(h, dy, nullptr), StatusCode::BAD_PARAM);
  std::vector<float> dyv(120), a(3), b(3), ws(4);
  for (size_t i = 0; i < dyv.size(); ++i) dyv[i] = static_cast<float>(i % 7) - 3.f;
  REQUIRE_OK(conv_backward_bias(h, 1.f, dy, dyv.data(), 0.f, db, a.data()));
  REQUIRE_OK(conv_backward_bias(h, 1.f, dy, dyv.data(), 0.f, db, b.data(), ws.data(), 16));
  CHECK(a == b);
  CHECK_STATUS(conv_backward_bias(h, 1.f, dy, dyv.data(), 0.f, db, b.data(), nullptr, 16), StatusCode::BAD_PARAM);
}
