// Naive float64 activations, written from the definitions (independent of the backends' math).
#include "activation.h"

#include <algorithm>
#include <cmath>

namespace jet {
namespace ref {

double activation(const ActivationDesc& act, double x) {
  const double a = act.alpha, b = act.beta;
  const auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  const auto softplus = [](double v) { return std::log1p(std::exp(-std::fabs(v))) + std::max(v, 0.0); };
  switch (act.mode) {
    case ActivationMode::IDENTITY: return x;
    case ActivationMode::RELU: return std::max(x, 0.0);
    case ActivationMode::SIGMOID: return sigmoid(x);
    case ActivationMode::TANH: return std::tanh(x);
    case ActivationMode::CLIPPED_RELU: return std::min(std::max(x, 0.0), a);
    case ActivationMode::LEAKY_RELU: return x >= 0 ? x : a * x;
    case ActivationMode::ELU: return x >= 0 ? x : a * (std::exp(x) - 1.0);
    case ActivationMode::SWISH: return x * sigmoid(a * x);
    case ActivationMode::HARD_SWISH: return x * std::min(std::max(x / 6.0 + 0.5, 0.0), 1.0);
    case ActivationMode::HARD_SIGMOID: return std::min(std::max(a * x + b, 0.0), 1.0);
    case ActivationMode::CLIP: return std::min(std::max(x, a), b);
    case ActivationMode::SELU: return b * (x > 0 ? x : a * (std::exp(x) - 1.0));
    case ActivationMode::SOFTPLUS: return softplus(x);
    case ActivationMode::MISH: return x * std::tanh(softplus(x));
  }
  return std::nan("");
}

std::vector<double> activation(const ActivationDesc& act, const std::vector<double>& x) {
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = activation(act, x[i]);
  return y;
}

}  // namespace ref
}  // namespace jet
