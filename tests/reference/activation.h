// float64 reference activations.
#pragma once

#include <vector>

#include "jet/dnn/activation.h"

namespace jet {
namespace ref {

double activation(const ActivationDesc& act, double x);
std::vector<double> activation(const ActivationDesc& act, const std::vector<double>& x);

// Every mode (EnumCount<ActivationMode>: a new mode is swept without editing a list), each with
// parameters valid for all, then the named forms with their usual parameters (relu6, silu, ...).
std::vector<ActivationDesc> every_activation();

}  // namespace ref
}  // namespace jet
