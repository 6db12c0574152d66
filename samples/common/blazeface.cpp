// BlazeFace post-processing (see blazeface.h).
#include "blazeface.h"

#include <algorithm>
#include <cmath>

namespace jet {
namespace blazeface {

void make_anchors(Anchor out[kAnchors]) {
  int i = 0;
  for (int layer = 0; layer < 2; ++layer) {
    const int cells = kLayerCells[layer];
    for (int y = 0; y < cells; ++y)
      for (int x = 0; x < cells; ++x)
        for (int a = 0; a < kLayerAnchorsPerCell[layer]; ++a) {
          out[i].x = (static_cast<float>(x) + 0.5f) / static_cast<float>(cells);
          out[i].y = (static_cast<float>(y) + 0.5f) / static_cast<float>(cells);
          ++i;
        }
  }
}

float score_of(float logit) {
  const float clipped = std::min(100.f, std::max(-100.f, logit));
  return 1.f / (1.f + std::exp(-clipped));
}

float iou(const Detection& a, const Detection& b) {
  const float area_a = (a.xmax - a.xmin) * (a.ymax - a.ymin);
  const float area_b = (b.xmax - b.xmin) * (b.ymax - b.ymin);
  if (!(area_a > 0.f) || !(area_b > 0.f)) return 0.f;
  const float w = std::min(a.xmax, b.xmax) - std::max(a.xmin, b.xmin);
  const float h = std::min(a.ymax, b.ymax) - std::max(a.ymin, b.ymin);
  if (w <= 0.f || h <= 0.f) return 0.f;
  const float inter = w * h;
  return inter / (area_a + area_b - inter);
}

void decode(const RawOutputs& raw, const Anchor anchors[kAnchors], float min_score,
            std::vector<Detection>* out) {
  out->clear();
  const float size = static_cast<float>(kInputSize);
  int anchor = 0;
  for (int layer = 0; layer < 2; ++layer) {
    for (int i = 0; i < kLayerAnchors[layer]; ++i, ++anchor) {
      const float score = score_of(raw.scores[layer][i]);
      if (!(score >= min_score)) continue;  // NaN logits are never detections
      const float* r = raw.boxes[layer] + static_cast<size_t>(i) * kValuesPerAnchor;
      const Anchor& a = anchors[anchor];
      const float cx = a.x + r[0] / size, cy = a.y + r[1] / size;
      const float w = r[2] / size, h = r[3] / size;
      Detection d;
      d.xmin = cx - 0.5f * w;
      d.xmax = cx + 0.5f * w;
      d.ymin = cy - 0.5f * h;
      d.ymax = cy + 0.5f * h;
      d.score = score;
      for (int k = 0; k < kKeypoints; ++k) {
        d.keypoints[k][0] = a.x + r[4 + 2 * k] / size;
        d.keypoints[k][1] = a.y + r[5 + 2 * k] / size;
      }
      d.anchor = anchor;
      out->push_back(d);
    }
  }
}

void weighted_nms(std::vector<Detection>* candidates, float iou_threshold,
                  std::vector<Detection>* out) {
  out->clear();
  std::vector<Detection>& c = *candidates;
  std::sort(c.begin(), c.end(), [](const Detection& a, const Detection& b) {
    return a.score != b.score ? a.score > b.score : a.anchor < b.anchor;
  });
  // c[0, remaining) are the detections not absorbed yet, best first; each round takes c[0],
  // absorbs its overlaps and compacts the rest to the front (order kept).
  size_t remaining = c.size();
  while (remaining > 0) {
    const Detection best = c[0];
    double total = 0, xmin = 0, ymin = 0, xmax = 0, ymax = 0;
    double keypoints[kKeypoints][2] = {};
    size_t kept = 0;
    for (size_t i = 0; i < remaining; ++i) {
      const Detection& d = c[i];
      // The best one overlaps itself (IoU 1), so it is always part of its own average.
      if (i == 0 || iou(best, d) > iou_threshold) {
        const double s = d.score;
        total += s;
        xmin += s * d.xmin;
        ymin += s * d.ymin;
        xmax += s * d.xmax;
        ymax += s * d.ymax;
        for (int k = 0; k < kKeypoints; ++k) {
          keypoints[k][0] += s * d.keypoints[k][0];
          keypoints[k][1] += s * d.keypoints[k][1];
        }
      } else {
        c[kept++] = d;
      }
    }
    Detection blended = best;
    blended.xmin = static_cast<float>(xmin / total);
    blended.ymin = static_cast<float>(ymin / total);
    blended.xmax = static_cast<float>(xmax / total);
    blended.ymax = static_cast<float>(ymax / total);
    for (int k = 0; k < kKeypoints; ++k) {
      blended.keypoints[k][0] = static_cast<float>(keypoints[k][0] / total);
      blended.keypoints[k][1] = static_cast<float>(keypoints[k][1] / total);
    }
    out->push_back(blended);
    remaining = kept;
  }
  c.clear();
}

Detection to_source(const Detection& d, const ImageTransform& t) {
  const double size = kInputSize;
  auto sx = [&](float v) { return static_cast<float>(t.source_x(v * size)); };
  auto sy = [&](float v) { return static_cast<float>(t.source_y(v * size)); };
  Detection m = d;
  m.xmin = sx(d.xmin);
  m.xmax = sx(d.xmax);
  m.ymin = sy(d.ymin);
  m.ymax = sy(d.ymax);
  for (int k = 0; k < kKeypoints; ++k) {
    m.keypoints[k][0] = sx(d.keypoints[k][0]);
    m.keypoints[k][1] = sy(d.keypoints[k][1]);
  }
  return m;
}

Postprocess::Postprocess(const Options& options) : options_(options) {
  make_anchors(anchors_);
  candidates_.reserve(kAnchors);
}

void Postprocess::run(const RawOutputs& raw, const ImageTransform& transform,
                      std::vector<Detection>* out) {
  if (out->capacity() < static_cast<size_t>(kAnchors)) out->reserve(kAnchors);  // first call only
  decode(raw, anchors_, options_.min_score, &candidates_);
  candidate_count_ = static_cast<int>(candidates_.size());
  weighted_nms(&candidates_, options_.iou_threshold, out);
  for (Detection& d : *out) d = to_source(d, transform);
}

}  // namespace blazeface
}  // namespace jet
