// Convolution choices by measurement (runtime/tuning.cpp): the device identity tuned files
// record, and tuning at load (LoadOptions::tune). write_tuned_model is public (jet/runtime.h).
#pragma once

#include <string>

#include "engine_impl.h"

namespace jet {
namespace rt {

// CUDA: the device's name and compute capability; CPU: "cpu", 0, 0.
DeviceIdentity device_identity(const Handle& handle);
// "'NVIDIA H100 80GB HBM3' (compute capability 9.0)" / "'cpu'": how notes name a device.
std::string device_text(const DeviceIdentity& d);
bool same_device(const DeviceIdentity& a, const DeviceIdentity& b);
size_t align_up(size_t n, size_t a);

// After prepare_ops: times every algorithm and tactic of every convolution on scratch buffers
// (find_conv_forward_algo) and keeps the fastest within min(the op's workspace policy,
// options.tune_workspace_limit); fills OpInfo's times and summary.tuning_ms. The scratch memory
// is freed before it returns.
Status tune_convolutions(Engine::Impl* impl);

}  // namespace rt
}  // namespace jet
