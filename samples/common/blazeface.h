// BlazeFace (MediaPipe's short-range "front camera" face detector, 128x128) post-processing, as
// MediaPipe's face_detection_front graph does it:
//  - 896 SSD anchors: a 16x16 grid of 2 anchors at stride 8, then an 8x8 grid of 6 at stride 16,
//    each anchor the centre of its cell with a fixed size of 1 (normalized input coordinates);
//  - per anchor a score logit (clipped to [-100, 100], then the sigmoid) and 16 regressors:
//    box centre x, y, width, height, then 6 key points x, y, all in input pixels relative to the
//    anchor centre;
//  - detections with score >= min_score, then MediaPipe's weighted non-maximum suppression: the
//    best remaining detection absorbs every other with IoU > iou_threshold, its box and key
//    points becoming their score-weighted average, its score staying the best one;
//  - coordinates mapped back to the source image through the preprocessing's letterbox transform.
//
// Allocation-free after construction: a Postprocess owns buffers sized for all 896 anchors, and
// run() fills the caller's vector, which it reserves once (camera loops call it every frame).
#pragma once

#include <vector>

#include "jet/dnn/image_preprocess.h"

namespace jet {
namespace blazeface {

constexpr int kInputSize = 128;
constexpr int kAnchors = 896;
constexpr int kValuesPerAnchor = 16;
constexpr int kKeypoints = 6;
// The two output layers: anchors per layer, grid cells per row, anchors per cell.
constexpr int kLayerAnchors[2] = {512, 384};
constexpr int kLayerCells[2] = {16, 8};
constexpr int kLayerAnchorsPerCell[2] = {2, 6};

// A detection. Before mapping, coordinates are normalized to the network input ([0, 1] across
// its 128 pixels); after, they are pixels of the source image (pixel i covers [i, i + 1)).
// Key points: right eye, left eye, nose tip, mouth centre, right ear tragion, left ear tragion
// (the subject's right and left).
struct Detection {
  float xmin = 0, ymin = 0, xmax = 0, ymax = 0;
  float score = 0;
  float keypoints[kKeypoints][2] = {};
  int anchor = -1;  // the anchor of the best-scoring detection it came from
};

struct Options {
  float min_score = 0.75f;      // MediaPipe's face_detection_front min_score_thresh
  float iou_threshold = 0.3f;   // MediaPipe's min_suppression_threshold
};

// The anchor centres in normalized input coordinates, in output order (layer, row, column,
// anchor within the cell).
struct Anchor {
  float x = 0, y = 0;
};
void make_anchors(Anchor out[kAnchors]);

// The network's raw outputs per layer: score logits [512] and [384], regressors [512 x 16] and
// [384 x 16] (host memory, f32).
struct RawOutputs {
  const float* scores[2] = {nullptr, nullptr};
  const float* boxes[2] = {nullptr, nullptr};
};

// Intersection over union of two boxes; 0 when either is empty.
float iou(const Detection& a, const Detection& b);

// sigmoid(clamp(logit, -100, 100)), MediaPipe's score.
float score_of(float logit);

// Decodes every anchor with score >= min_score into `out` (cleared first), normalized input
// coordinates, in anchor order.
void decode(const RawOutputs& raw, const Anchor anchors[kAnchors], float min_score,
            std::vector<Detection>* out);

// MediaPipe's weighted NMS. `candidates` is sorted (score descending, then anchor) and consumed;
// `out` (cleared first) receives the blended detections, best first.
void weighted_nms(std::vector<Detection>* candidates, float iou_threshold,
                  std::vector<Detection>* out);

// Maps a detection from normalized input coordinates to source image pixels.
Detection to_source(const Detection& d, const ImageTransform& transform);

class Postprocess {
 public:
  explicit Postprocess(const Options& options = Options());

  // decode -> weighted_nms -> to_source. `out` is cleared and filled, best first.
  void run(const RawOutputs& raw, const ImageTransform& transform, std::vector<Detection>* out);

  // What the last run() decoded before suppression (normalized coordinates, sorted).
  int candidate_count() const { return candidate_count_; }
  const Options& options() const { return options_; }

 private:
  Options options_;
  Anchor anchors_[kAnchors];
  std::vector<Detection> candidates_;
  int candidate_count_ = 0;
};

}  // namespace blazeface
}  // namespace jet
