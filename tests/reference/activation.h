// float64 reference activations.
#pragma once

#include <vector>

#include "jet/dnn/activation.h"

namespace jet {
namespace ref {

double activation(const ActivationDesc& act, double x);
std::vector<double> activation(const ActivationDesc& act, const std::vector<double>& x);

}  // namespace ref
}  // namespace jet
