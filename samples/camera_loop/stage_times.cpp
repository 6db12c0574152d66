#include "stage_times.h"

#include <algorithm>
#include <cmath>

namespace jet {
namespace camera {

const char* stage_name(Stage s) {
  switch (s) {
    case Stage::CAPTURE: return "capture";
    case Stage::UPLOAD: return "upload";
    case Stage::PREPROCESS: return "preprocess";
    case Stage::INFERENCE: return "inference";
    case Stage::POSTPROCESS: return "postprocess";
    case Stage::END_TO_END: return "end_to_end";
    case Stage::FRAME_INTERVAL: return "frame_interval";
    case Stage::COUNT: break;
  }
  return "?";
}

StageTimes::StageTimes(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {
  for (std::vector<double>& ring : samples_) ring.assign(capacity_, 0.0);
}

void StageTimes::add(Stage s, double ms) {
  const int i = static_cast<int>(s);
  samples_[i][written_[i] % capacity_] = ms;
  ++written_[i];
}

void StageTimes::clear() {
  for (size_t& w : written_) w = 0;
}

StageSummary StageTimes::summary(Stage s) const {
  const int i = static_cast<int>(s);
  StageSummary out;
  const size_t n = std::min(written_[i], capacity_);
  if (n == 0) return out;
  std::vector<double> v(samples_[i].begin(), samples_[i].begin() + static_cast<std::ptrdiff_t>(n));
  std::sort(v.begin(), v.end());
  auto rank = [&](double p) {
    const size_t k = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
    return v[k == 0 ? 0 : std::min(k, n) - 1];
  };
  double sum = 0;
  for (double x : v) sum += x;
  const double mean = sum / static_cast<double>(n);
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  out.count = n;
  out.p50 = rank(50);
  out.p90 = rank(90);
  out.p99 = rank(99);
  out.mean = mean;
  out.min = v.front();
  out.max = v.back();
  out.stddev = std::sqrt(var / static_cast<double>(n));
  return out;
}

}  // namespace camera
}  // namespace jet
