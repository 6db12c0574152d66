// What a training loop shows (the training add-on, JET_BUILD_TRAINING; docs/training.md): a
// progress bar per epoch with the running loss and accuracy, and the loss curve as an SVG picture.
//
//   jet::ProgressBar bar("epoch 1/5", batches);             // draws on stderr
//   for (int b = 0; b < batches; ++b) {
//     trainer->step(batch[b], &loss);
//     bar.update(b + 1, loss, accuracy);                      // accuracy < 0: not shown
//   }
//   bar.finish();                                             // the final line stays
//   jet::LossCurve curve;  curve.steps = losses;  curve.write_svg("loss.svg");
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "jet/dnn/common.h"

namespace jet {

class ProgressBar {
 public:
  // `total` steps; drawn on `out` (stderr by default). On a terminal the bar is redrawn in place
  // (carriage return); elsewhere (a log file, CI) only finish() prints, one line per epoch.
  ProgressBar(std::string label, int64_t total, std::FILE* out = stderr);
  // `done` of total steps; the loss and accuracy (a fraction; < 0: not shown) shown are the means
  // over the updates so far. Allocates nothing after the first call.
  void update(int64_t done, float loss, double accuracy = -1.0);
  // Prints the final state ("epoch 1/5 [==========] 12/12 loss 0.4321 acc 87.5% 1.2 s").
  void finish();
  double mean_loss() const { return updates_ ? loss_sum_ / static_cast<double>(updates_) : 0.0; }
  double mean_accuracy() const { return acc_updates_ ? acc_sum_ / static_cast<double>(acc_updates_) : -1.0; }

 private:
  void draw(bool final_line);
  std::string label_;
  int64_t total_ = 0, done_ = 0, updates_ = 0, acc_updates_ = 0;
  double loss_sum_ = 0, acc_sum_ = 0;
  double start_s_ = 0;
  std::FILE* out_ = nullptr;
  bool terminal_ = false;
  std::string line_;  // reused: no allocation per update once it has grown
};

// A loss curve: the loss of every step, optionally per-epoch evaluation points.
struct LossCurve {
  std::string title = "training loss";
  std::vector<float> steps;                          // one loss per step
  std::vector<std::pair<int64_t, float>> evaluated;  // (step, loss) points, e.g. a test loss per epoch
  // Writes an SVG picture (steps on x, loss on y, both axes with ticks) through
  // write_file_atomically. BAD_PARAM when there is nothing to draw.
  Status write_svg(const std::string& path) const;
  std::string svg() const;
};

}  // namespace jet
