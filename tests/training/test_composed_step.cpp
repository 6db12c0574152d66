// The training routines composed into one step of a small CNN on the CPU, as the trainer will
// run them: conv (+bias) -> relu -> max pool -> fully connected -> softmax cross-entropy, then
// the backward chain. The parameter gradients must match central differences of the whole loss
// computed with the float64 references (catching any disagreement between the routines'
// conventions: layouts, flattening, which tensor each backward takes), and SGD steps on a fixed
// batch must lower the loss.
#include <cmath>
#include <string>

#include "reference/activation.h"
#include "reference/conv.h"
#include "reference/gemm.h"
#include "reference/pool.h"
#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

namespace {

constexpr int64_t kN = 4, kC = 2, kH = 6, kW = 6, kK = 3, kClasses = 5;
constexpr int64_t kFeatures = kK * 3 * 3;  // after 2x2 pooling of 6x6

struct Params {
  std::vector<double> wc, bc, wf, bf;  // conv [K, C, 3, 3], [K]; fc [classes, features], [classes]
};

// The float64 loss of the network.
double reference_loss(const Params& p, const std::vector<double>& x,
                      const std::vector<int32_t>& labels) {
  ref::ConvParams cp;
  cp.pad_begin = cp.pad_end = {1, 1};
  cp.stride = cp.dilation = {1, 1};
  std::vector<double> y = ref::conv_forward(x, {kN, kC, kH, kW}, p.wc, {kK, kC, 3, 3}, cp);
  for (size_t i = 0; i < y.size(); ++i) y[i] += p.bc[i / (kH * kW) % kK];
  y = ref::activation(ActivationDesc::relu(), y);
  const PoolDesc pool = PoolDesc::pool2d(PoolMode::MAX, 2, 2, 0, 0, 2, 2);
  const std::vector<double> pooled = ref::pool_forward(pool, {kN, kK, kH, kW}, y);
  const std::vector<double> logits = ref::gemm(pooled, {kN, kFeatures}, false, p.wf,
                                               {kClasses, kFeatures}, true, p.bf, {1, kClasses},
                                               {kN, kClasses});
  double total = 0.0;
  for (int64_t i = 0; i < kN; ++i) {
    double m = -INFINITY, s = 0.0;
    for (int64_t j = 0; j < kClasses; ++j) m = std::max(m, logits[static_cast<size_t>(i * kClasses + j)]);
    for (int64_t j = 0; j < kClasses; ++j) s += std::exp(logits[static_cast<size_t>(i * kClasses + j)] - m);
    total += m + std::log(s) - logits[static_cast<size_t>(i * kClasses + labels[static_cast<size_t>(i)])];
  }
  return total / kN;
}

std::vector<float> to_f32(const std::vector<double>& v) { return {v.begin(), v.end()}; }

// One forward and backward pass with the jet routines (f32, CPU): the loss and the gradients.
float jet_step(const Params& p, const std::vector<double>& xd, const std::vector<int32_t>& labels,
               Params* grad) {
  const Handle h = Handle::cpu();
  const TensorDesc xdesc = TensorDesc::nchw(DType::F32, kN, kC, kH, kW);
  const TensorDesc ydesc = TensorDesc::nchw(DType::F32, kN, kK, kH, kW);
  const TensorDesc pdesc = TensorDesc::nchw(DType::F32, kN, kK, 3, 3);
  const TensorDesc flat = TensorDesc::packed(DType::F32, {kN, kFeatures});
  const TensorDesc ldesc = TensorDesc::packed(DType::F32, {kN, kClasses});
  const FilterDesc wdesc = FilterDesc::kcrs(DType::F32, kK, kC, 3, 3);
  const TensorDesc wfdesc = TensorDesc::packed(DType::F32, {kClasses, kFeatures});
  const TensorDesc bcdesc = TensorDesc::nchw(DType::F32, 1, kK, 1, 1);
  const TensorDesc bfdesc = TensorDesc::packed(DType::F32, {1, kClasses});
  const ConvDesc conv = ConvDesc::conv2d(1, 1);
  const PoolDesc pool = PoolDesc::pool2d(PoolMode::MAX, 2, 2, 0, 0, 2, 2);
  const std::vector<float> x = to_f32(xd), wc = to_f32(p.wc), bc = to_f32(p.bc), wf = to_f32(p.wf),
                           bf = to_f32(p.bf);
  std::vector<float> pre(static_cast<size_t>(ydesc.elements())), act(pre.size()),
      pooled(static_cast<size_t>(pdesc.elements())), logits(static_cast<size_t>(ldesc.elements()));
  // Forward.
  REQUIRE_OK(conv_bias_act_forward(h, 1.f, xdesc, x.data(), wdesc, wc.data(), conv,
                                   ConvAlgo::DIRECT, nullptr, 0, 0.f, ydesc, nullptr, bcdesc,
                                   bc.data(), ActivationDesc::identity(), ydesc, pre.data()));
  REQUIRE_OK(activation_forward(h, ActivationDesc::relu(), 1.f, ydesc, pre.data(), 0.f, ydesc,
                                act.data()));
  REQUIRE_OK(pool_forward(h, pool, 1.f, ydesc, act.data(), 0.f, pdesc, pooled.data()));
  REQUIRE_OK(gemm_forward(h, GemmDesc{false, true}, 1.f, flat, pooled.data(), wfdesc, wf.data(),
                          bfdesc, bf.data(), 0.f, ldesc, logits.data()));
  // Loss and backward.
  std::vector<float> ws(softmax_cross_entropy_workspace_size(kN) / sizeof(float));
  std::vector<float> dlogits(logits.size()), dpooled(pooled.size()), dact(act.size()),
      dpre(pre.size()), dwc(wc.size()), dbc(bc.size()), dwf(wf.size()), dbf(bf.size());
  float loss = 0.f;
  REQUIRE_OK(softmax_cross_entropy_loss(h, ldesc, logits.data(), labels.data(), ws.data(),
                                        ws.size() * sizeof(float), &loss, 1.f, 0.f, ldesc,
                                        dlogits.data()));
  REQUIRE_OK(gemm_backward(h, GemmDesc{false, true}, 1.f, flat, pooled.data(), wfdesc, wf.data(),
                           ldesc, dlogits.data(), 0.f, flat, dpooled.data(), wfdesc, dwf.data(),
                           bfdesc, dbf.data()));
  REQUIRE_OK(pool_backward(h, pool, 1.f, ydesc, act.data(), pdesc, dpooled.data(), 0.f, ydesc,
                           dact.data()));
  REQUIRE_OK(activation_backward(h, ActivationDesc::relu(), 1.f, ydesc, pre.data(), ydesc,
                                 dact.data(), 0.f, ydesc, dpre.data()));
  REQUIRE_OK(conv_backward_bias(h, 1.f, ydesc, dpre.data(), 0.f, bcdesc, dbc.data()));
  REQUIRE_OK(conv_backward_filter(h, 1.f, xdesc, x.data(), ydesc, dpre.data(), conv,
                                  ConvBwdFilterAlgo::IMPLICIT_GEMM, nullptr, 0, 0.f, wdesc,
                                  dwc.data()));
  if (grad) {
    grad->wc.assign(dwc.begin(), dwc.end());
    grad->bc.assign(dbc.begin(), dbc.end());
    grad->wf.assign(dwf.begin(), dwf.end());
    grad->bf.assign(dbf.begin(), dbf.end());
  }
  return loss;
}

}  // namespace

TEST_CASE("a composed CNN step: gradients match central differences of the float64 loss") {
  Params p;
  p.wc = random_values(DType::F32, {kK, kC, 3, 3});
  p.bc = random_values(DType::F32, {kK});
  p.wf = random_values(DType::F32, {kClasses, kFeatures});
  p.bf = random_values(DType::F32, {kClasses});
  // Ties in the pooling windows come only from ReLU's zeros, whose gradient is 0 either way.
  std::vector<double> x = random_values(DType::F32, {kN, kC, kH, kW});
  std::vector<int32_t> labels(static_cast<size_t>(kN));
  for (auto& l : labels) l = static_cast<int32_t>(uniform_int(0, kClasses - 1));

  Params g;
  const float loss = jet_step(p, x, labels, &g);
  CHECK(loss == doctest::Approx(reference_loss(p, x, labels)).epsilon(1e-5));
  const auto check_grad = [&](std::vector<double> Params::*member, const char* name) {
    CAPTURE(name);
    const std::vector<double> want = numeric_vjp(
        [&](const std::vector<double>& v) {
          Params q = p;
          q.*member = v;
          return std::vector<double>{reference_loss(q, x, labels)};
        },
        p.*member, {1.0}).value;
    const std::vector<double>& got = g.*member;
    double scale = 0.0;
    for (double v : want) scale += v * v;
    scale = std::sqrt(scale / static_cast<double>(want.size()));
    for (size_t i = 0; i < want.size(); ++i) {
      CAPTURE(i);
      CHECK(std::fabs(got[i] - want[i]) <= 1e-4 * (std::fabs(want[i]) + scale));
    }
  };
  check_grad(&Params::wc, "conv weights");
  check_grad(&Params::bc, "conv bias");
  check_grad(&Params::wf, "fc weights");
  check_grad(&Params::bf, "fc bias");

  // SGD with momentum on this batch lowers the loss.
  const Handle h = Handle::cpu();
  SgdDesc sgd;
  sgd.lr = 0.05f;
  sgd.momentum = 0.9f;
  std::vector<float> pw[4] = {to_f32(p.wc), to_f32(p.bc), to_f32(p.wf), to_f32(p.bf)};
  std::vector<float> bufs[4];
  for (int i = 0; i < 4; ++i) bufs[i].assign(pw[i].size(), 0.f);
  float last = loss;
  for (int step = 0; step < 10; ++step) {
    Params cur{{pw[0].begin(), pw[0].end()}, {pw[1].begin(), pw[1].end()},
               {pw[2].begin(), pw[2].end()}, {pw[3].begin(), pw[3].end()}};
    Params gs;
    last = jet_step(cur, x, labels, &gs);
    const std::vector<double>* gv[4] = {&gs.wc, &gs.bc, &gs.wf, &gs.bf};
    for (int i = 0; i < 4; ++i) {
      const std::vector<float> gf = to_f32(*gv[i]);
      REQUIRE_OK(sgd_step(h, sgd, static_cast<int64_t>(gf.size()), pw[i].data(), gf.data(),
                          bufs[i].data()));
    }
  }
  CAPTURE(loss);
  CAPTURE(last);
  CHECK(last < 0.5f * loss);
}
