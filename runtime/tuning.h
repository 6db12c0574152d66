// Convolution choices by measurement (runtime/tuning.cpp): the device identity tuned files
// record, and tuning at load (LoadOptions::tune). write_tuned_model is public (jet/runtime.h).
#pragma once

#include <string>
#include <vector>

#include "engine_impl.h"

namespace jet {
namespace rt {

// CUDA: the device's name and compute capability; CPU: "cpu", 0, 0.
DeviceIdentity device_identity(const Handle& handle);
// "'NVIDIA H100 80GB HBM3' (compute capability 9.0)" / "'cpu'": how notes name a device.
std::string device_text(const DeviceIdentity& d);
bool same_device(const DeviceIdentity& a, const DeviceIdentity& b);
size_t align_up(size_t n, size_t a);

// One algorithm and tactic that tuning measures for a convolution.
struct TuningCandidate {
  ConvAlgo algo = ConvAlgo::DIRECT;
  int32_t tactic = 0;
  size_t workspace_bytes = 0;
  float find_ms = -1.f;  // find_conv_forward_algo's time of the op alone; -1 when not measured
  bool operator==(const TuningCandidate& o) const { return algo == o.algo && tactic == o.tactic; }
};

// The candidates one convolution is measured with inside the network: `untuned` first when it
// fits `limit` (else find's fastest that does), then find's fastest others within `limit` whose
// time is at most `within` x the fastest, up to `max_others` of them. `perf` is
// find_conv_forward_algo's list (fastest first; entries that did not run are skipped). Empty when
// nothing fits.
std::vector<TuningCandidate> network_candidates(const TuningCandidate& untuned, const ConvAlgoPerf* perf, int count,
                                                size_t limit, int max_others, float within);

// Which candidate an op keeps, from each candidate's median time inside the network
// (median_ms[0]: the reference, candidate 0; negative: not measured): the fastest, when it beats
// the reference by more than max(rel_margin x the reference, abs_margin_ms); else 0.
int choose_candidate(const std::vector<double>& median_ms, double rel_margin, double abs_margin_ms);

// The median (mean of the middle pair for an even count); 0 for none.
double median_of(std::vector<double> v);

// After prepare_ops and place_weights: chooses every convolution's algorithm and tactic by
// measurement, within min(the op's workspace policy, options.tune_workspace_limit).
//  1. find_conv_forward_algo times each op alone on scratch buffers: a short list per op.
//  2. Runs of the whole network (the real weights, random inputs) time each op's candidates as
//     its share of the run, so caches and launch gaps are those of the network. CUDA: per-op
//     events in a plain run queued behind replays of a captured graph, so the GPU never waits
//     for the host.
//  3. The whole network with the chosen set against the untuned set (CUDA: graph replays): the
//     untuned set stays unless the chosen one is faster.
// Fills OpInfo's times, summary.tuning_ms and the network figures. Scratch memory (arena,
// workspace, graphs, events, a stream) is freed before it returns.
Status tune_convolutions(Engine::Impl* impl);

}  // namespace rt
}  // namespace jet
