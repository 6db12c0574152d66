// float64 reference activations.
// Naive float64 activations, written from the definitions (independent of the backends' math).
#pragma once

#include <algorithm>
#include <cmath>
#include <iterator>
#include <vector>

#include "jet/dnn/activation.h"

namespace jet {
namespace ref {

inline double activation(const ActivationDesc& act, double x) {
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
    case ActivationMode::EXP: return std::exp(x);
    case ActivationMode::LOG: return std::log(x);
    case ActivationMode::SQRT: return std::sqrt(x);
    case ActivationMode::RECIPROCAL: return 1.0 / x;
    case ActivationMode::ABS: return std::fabs(x);
    case ActivationMode::NEG: return -x;
    case ActivationMode::FLOOR: return std::floor(x);
    case ActivationMode::CEIL: return std::ceil(x);
    case ActivationMode::ROUND: {  // halves to even, from the definition
      if (!std::isfinite(x)) return x;
      const double f = std::floor(x), d = x - f;
      if (d != 0.5) return d < 0.5 ? f : f + 1.0;
      return std::fmod(f, 2.0) == 0.0 ? f : f + 1.0;
    }
    case ActivationMode::SIGN: return x > 0 ? 1.0 : (x < 0 ? -1.0 : x);
    case ActivationMode::SIN: return std::sin(x);
    case ActivationMode::COS: return std::cos(x);
    case ActivationMode::TAN: return std::tan(x);
    case ActivationMode::ERF: return std::erf(x);
    case ActivationMode::SOFTSIGN: return x / (1.0 + std::fabs(x));
    case ActivationMode::GELU: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case ActivationMode::GELU_TANH: {
      const double pi = 3.14159265358979323846;
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (x + 0.044715 * x * x * x)));
    }
  }
  return std::nan("");
}
inline std::vector<double> activation(const ActivationDesc& act, const std::vector<double>& x) {
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = activation(act, x[i]);
  return y;
}

// Every mode (EnumCount<ActivationMode>: a new mode is swept without editing a list), each with
// parameters valid for all, then the named forms with their usual parameters (relu6, silu, ...).
inline std::vector<ActivationDesc> every_activation() {
  std::vector<ActivationDesc> all;
  // Parameters valid for every mode (clipped relu's ceiling > 0, clip's min <= max); modes
  // without parameters ignore them.
  for (int32_t m = 0; m < EnumCount<ActivationMode>::value; ++m)
    all.push_back({static_cast<ActivationMode>(m), 0.6f, 1.3f});
  // The named forms with their usual parameters.
  const ActivationDesc named[] = {ActivationDesc::relu6(),        ActivationDesc::leaky_relu(0.1f),
                                  ActivationDesc::silu(),         ActivationDesc::hard_sigmoid(),
                                  ActivationDesc::clip(-0.3f, 0.6f), ActivationDesc::selu()};
  all.insert(all.end(), std::begin(named), std::end(named));
  return all;
}

}  // namespace ref
}  // namespace jet
