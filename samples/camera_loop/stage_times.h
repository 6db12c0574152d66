// Per-frame timings of the camera loop, kept in fixed-size rings (sized once, so recording a
// frame allocates nothing) and summarized as percentiles when the loop reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace jet {
namespace camera {

enum class Stage : int {
  CAPTURE = 0,     // the source's read() into the (pinned) frame buffer
  UPLOAD,          // host to device copy of the frame (CUDA on a discrete GPU; else absent)
  PREPROCESS,      // image_preprocess into the network input
  INFERENCE,       // ExecutionContext::run (a CUDA graph replay) and the outputs' download
  POSTPROCESS,     // decoding, weighted NMS, mapping to frame coordinates
  END_TO_END,      // capture start to the callback's return
  FRAME_INTERVAL,  // between consecutive callbacks' returns: 1 / FPS per frame; its spread is jitter
  COUNT
};
constexpr int kStageCount = static_cast<int>(Stage::COUNT);
const char* stage_name(Stage s);  // "capture", "upload", ...

struct StageSummary {
  size_t count = 0;  // samples summarized (the newest, at most the ring's capacity)
  double p50 = 0, p90 = 0, p99 = 0, mean = 0, min = 0, max = 0;
  double stddev = 0;  // population standard deviation
};

class StageTimes {
 public:
  // Keeps the newest `capacity` samples of every stage (at least 1).
  explicit StageTimes(size_t capacity = 65536);
  void add(Stage s, double ms);  // allocates nothing
  void clear();
  // Nearest-rank percentiles over the kept samples (allocates: call when reporting).
  StageSummary summary(Stage s) const;
  size_t capacity() const { return capacity_; }

 private:
  size_t capacity_;
  std::vector<double> samples_[kStageCount];  // rings of capacity_
  size_t written_[kStageCount] = {};          // total added since clear()
};

}  // namespace camera
}  // namespace jet
