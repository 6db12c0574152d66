// The trainer's gradients over a whole graph against central finite differences of its loss: a
// network that chains every backward rule but batch norm's (whose training forward differs from
// evaluate()'s; torch_match.py covers it), with tensors read by several ops (their gradients add
// up), a residual convolution with a fused activation, broadcasting, views (softmax, concat,
// reshape), an instance norm, a layer norm, a transposed convolution, a strided and permuted slice, and an MSE
// loss. The loss is
// a smooth function of the parameters (no ReLU or max kinks), so differences in float32 with a
// step of 1e-2 are accurate to about 1e-4.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "jet/trainer.h"
#include "runtime/model_util.h"
#include "training/trainer_models.h"

using namespace jet;
using namespace jet::test;

TEST_CASE("every rule's gradient, through the whole graph, against finite differences") {
  const Bytes bytes = every_rule_model();
  TrainerConfig cfg;
  cfg.loss = LossKind::MSE;
  cfg.sgd.lr = 0.f;  // a step computes the gradients and leaves the parameters as they are
  std::unique_ptr<Trainer> t;
  REQUIRE_OK(Trainer::create(load_engine(bytes, Handle::cpu()), cfg, &t));
  REQUIRE(t->parameters().size() == 12);
  const std::vector<float> images = random_floats(kRuleBatch * 4 * 6 * 6, -1.f, 1.f);
  const std::vector<float> targets = random_floats(kRuleBatch * 5, 0.f, 0.4f);
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
