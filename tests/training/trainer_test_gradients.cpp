// The trainer's gradients over a whole graph against central finite differences of its loss: a
// network that chains every backward rule but batch norm's (whose training forward differs from
// evaluate()'s; torch_match.py covers it), with tensors read by several ops (their gradients add
// up), a residual convolution with a fused activation, broadcasting, views (softmax, concat,
// reshape), an instance norm, a transposed convolution, a strided and permuted slice, and an MSE
// loss. The loss is
// a smooth function of the parameters (no ReLU or max kinks), so differences in float32 with a
// step of 1e-2 are accurate to about 1e-4.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "jet/trainer.h"
#include "runtime/model_util.h"

using namespace jet;
using namespace jet::test;

namespace {

constexpr int64_t kN = 2;

Bytes every_rule_model() {
  ir::Graph g;
  int x = -1;
  REQUIRE_OK(g.add_input("image", DType::F32, {kN, 4, 6, 6}, &x));
  int c1 = -1, c2 = -1, p = -1, gp = -1, gate = -1, m = -1, pd = -1, rs = -1, l = -1, cat = -1, tr = -1, red = -1,
      flat = -1, fc = -1, probs = -1, ct = -1, sl = -1;
  ir::ConvAttrs ca;
  ca.pad_begin = ca.pad_end = {1, 1};
  ca.act = ActivationDesc::tanh();
  REQUIRE_OK(g.conv("conv1", x, random_constant(g, "conv1.weight", {6, 4, 3, 3}, -0.3f, 0.3f),
                    random_constant(g, "conv1.bias", {6}, -0.1f, 0.1f), -1, ca, &c1));
  // 1x1 conv with c1 as its residual (c1 is read twice) and a fused sigmoid.
  ir::ConvAttrs cr;
  cr.act = ActivationDesc::sigmoid();
  REQUIRE_OK(g.conv("conv2", c1, random_constant(g, "conv2.weight", {6, 6, 1, 1}, -0.5f, 0.5f),
                    random_constant(g, "conv2.bias", {6}, -0.1f, 0.1f), c1, cr, &c2));
  ir::PoolAttrs pa;
  pa.mode = PoolMode::AVG_INCLUDE_PAD;
  pa.window = {2, 2};
  pa.strides = {2, 2};
  REQUIRE_OK(g.pool("avgpool", c2, pa, &p));
  REQUIRE_OK(g.global_avg_pool("gap", c2, &gp));  // c2 read twice
  REQUIRE_OK(g.activation("gate", gp, ActivationDesc::sigmoid(), &gate));
  REQUIRE_OK(g.op_tensor("scale", TensorOp::MUL, p, gate, &m));  // broadcast over H, W
  REQUIRE_OK(g.instancenorm("inorm", m, random_constant(g, "inorm.weight", {6}, 0.5f, 1.5f),
                            random_constant(g, "inorm.bias", {6}, -0.2f, 0.2f), 1e-5, &m));
  ir::PadAttrs pda;
  pda.mode = PadMode::REFLECT;
  pda.pad_begin = {0, 0, 1, 1};
  pda.pad_end = {0, 0, 1, 0};
  REQUIRE_OK(g.pad("pad", m, pda, &pd));  // 2x6x5x4
  ir::ResizeAttrs ra;
  ra.mode = ResizeMode::LINEAR;
  REQUIRE_OK(g.resize("resize", pd, ra, {kN, 6, 7, 6}, &rs));
  LrnDesc lrn;
  lrn.n = 3;
  lrn.alpha = 0.5;
  lrn.k = 1.0;
  REQUIRE_OK(g.lrn("lrn", rs, lrn, &l));
  // A transposed convolution (stride 2, bias) of c2 (read a third time), 2x3x12x12, and a slice of
  // it with a step and a permutation (most of ct gets a zero gradient), 2x3x7x6.
  ir::ConvTransposeAttrs ta;
  ta.strides = {2, 2};
  REQUIRE_OK(g.conv_transpose("deconv", c2, random_constant(g, "deconv.weight", {6, 3, 2, 2}, -0.4f, 0.4f),
                              random_constant(g, "deconv.bias", {3}, -0.1f, 0.1f), ta, {12, 12}, &ct));
  ir::SliceAttrs sa;
  sa.starts = {0, 0, 1, 2};
  sa.steps = {1, 1, 2, 1};
  sa.sizes = {kN, 3, 6, 7};
  sa.perm = {0, 1, 3, 2};
  REQUIRE_OK(g.slice("slice", ct, sa, &sl));
  REQUIRE_OK(g.concat("concat", {l, rs, sl}, 1, &cat));  // rs read twice; 2x15x7x6
  REQUIRE_OK(g.transform("copy", cat, DType::F32, &tr));
  REQUIRE_OK(g.reduce("mean_w", tr, ReduceOp::MEAN, {3}, &red));  // 2x15x7x1
  REQUIRE_OK(g.flatten("flatten", red, 1, &flat));
  ir::GemmAttrs ga;
  ga.trans_b = true;
  ga.has_bias = true;
  REQUIRE_OK(g.gemm("fc", flat, random_constant(g, "fc.weight", {5, 105}, -0.3f, 0.3f),
                    random_constant(g, "fc.bias", {5}, -0.1f, 0.1f), ga, &fc));
  REQUIRE_OK(g.softmax("probs", fc, 1, &probs));
  REQUIRE_OK(g.mark_output(probs));
  return model_bytes(g);
}

}  // namespace

TEST_CASE("every rule's gradient, through the whole graph, against finite differences") {
  const Bytes bytes = every_rule_model();
  TrainerConfig cfg;
  cfg.loss = LossKind::MSE;
  cfg.sgd.lr = 0.f;  // a step computes the gradients and leaves the parameters as they are
  std::unique_ptr<Trainer> t;
  REQUIRE_OK(Trainer::create(load_engine(bytes, Handle::cpu()), cfg, &t));
  REQUIRE(t->parameters().size() == 10);
  const std::vector<float> images = random_floats(kN * 4 * 6 * 6, -1.f, 1.f);
  const std::vector<float> targets = random_floats(kN * 5, 0.f, 0.4f);
  const TrainBatch batch{images.data(), nullptr, targets.data()};
  REQUIRE_OK(t->step(batch, nullptr));
  auto loss_at = [&]() {
    EvalResult r;
    REQUIRE_OK(t->evaluate(batch, &r));
    return static_cast<double>(r.loss);
  };
  for (size_t i = 0; i < t->parameters().size(); ++i) {
    const TrainerParameter& p = t->parameters()[i];
    std::vector<float> grad, values;
    REQUIRE_OK(t->parameter_gradient(static_cast<int>(i), &grad));
    REQUIRE_OK(t->parameter_values(static_cast<int>(i), &values));
    float scale = 0.f;
    for (float v : grad) scale = std::max(scale, std::fabs(v));
    CHECK(scale > 0.f);  // every parameter gets a gradient
    for (int sample = 0; sample < 6; ++sample) {
      const size_t k = static_cast<size_t>(uniform_int(0, p.elements - 1));
      const float h = 1e-2f;
      std::vector<float> moved = values;
      moved[k] = values[k] + h;
      REQUIRE_OK(t->set_parameter_values(static_cast<int>(i), moved.data(), moved.size()));
      const double up = loss_at();
      moved[k] = values[k] - h;
      REQUIRE_OK(t->set_parameter_values(static_cast<int>(i), moved.data(), moved.size()));
      const double down = loss_at();
      REQUIRE_OK(t->set_parameter_values(static_cast<int>(i), values.data(), values.size()));
      const double fd = (up - down) / (2.0 * h);
      INFO(p.name << "[" << k << "]: trainer " << grad[k] << ", finite differences " << fd << ", largest |grad| "
                  << scale);
      CHECK(std::fabs(fd - grad[k]) <= 1e-2 * scale + 1e-6);
    }
  }
}
