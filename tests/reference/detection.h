// float64 references of the detection heads (topk_forward, nms_forward), written from the ONNX
// definitions: TopK by a stable sort of each row, NonMaxSuppression by the greedy pass in double.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "jet/dnn/detection.h"

namespace jet {
namespace ref {

// Helpers of the definitions below (ref::detail is shared by every reference header).
namespace detail {

// IoU > threshold in double (ONNX Runtime's rule: no area or no overlap never suppresses).
inline bool suppresses(const double* a, const double* b, bool center, double threshold) {
  double ar[4], br[4];  // x0, y0, x1, y1
  for (int t = 0; t < 2; ++t) {
    const double* s = t ? b : a;
    double* r = t ? br : ar;
    if (center) {
      r[0] = s[0] - s[2] / 2;
      r[2] = s[0] + s[2] / 2;
      r[1] = s[1] - s[3] / 2;
      r[3] = s[1] + s[3] / 2;
    } else {
      r[0] = std::min(s[1], s[3]);
      r[2] = std::max(s[1], s[3]);
      r[1] = std::min(s[0], s[2]);
      r[3] = std::max(s[0], s[2]);
    }
  }
  const double w = std::min(ar[2], br[2]) - std::max(ar[0], br[0]);
  const double h = std::min(ar[3], br[3]) - std::max(ar[1], br[1]);
  if (w <= 0 || h <= 0) return false;
  const double inter = w * h;
  const double area_a = (ar[2] - ar[0]) * (ar[3] - ar[1]), area_b = (br[2] - br[0]) * (br[3] - br[1]);
  if (area_a <= 0 || area_b <= 0) return false;
  return inter / (area_a + area_b - inter) > threshold;
}

}  // namespace detail

// The k largest (smallest) of each row along `axis` of packed x: values and indices (as doubles),
// packed with x's dims but k at axis. NaN is above every number; equal values keep x's order.
inline void topk(const std::vector<int64_t>& x_dims, const std::vector<double>& x, int axis,
                 int64_t k, bool largest, std::vector<double>* values, std::vector<double>* indices) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x_dims[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < x_dims.size(); ++d) inner *= x_dims[d];
  const int64_t n = x_dims[axis];
  values->assign(static_cast<size_t>(outer * k * inner), 0.0);
  indices->assign(values->size(), 0.0);
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const auto at = [&](int64_t j) { return x[static_cast<size_t>((o * n + j) * inner + i)]; };
      std::iota(idx.begin(), idx.end(), 0);
      // A key where NaN is the largest value: (is NaN, value).
      std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
        const double va = at(a), vb = at(b);
        const bool na = std::isnan(va), nb = std::isnan(vb);
        if (na || nb) return largest ? (na && !nb) : (nb && !na);
        return largest ? va > vb : va < vb;
      });
      for (int64_t j = 0; j < k; ++j) {
        const size_t out = static_cast<size_t>((o * k + j) * inner + i);
        (*values)[out] = at(idx[j]);
        (*indices)[out] = static_cast<double>(idx[j]);
      }
    }
  }
}

// ONNX NonMaxSuppression of packed boxes [B, N, 4] and scores [B, C, N]: the selected rows
// (batch, class, box) flattened, padded with -1 up to `rows` rows.
inline std::vector<double> nms(const NmsDesc& d, int64_t batches, int64_t classes, int64_t boxes,
                               const std::vector<double>& box_values,
                               const std::vector<double>& scores, int64_t rows) {
  std::vector<double> out;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t c = 0; c < classes; ++c) {
      const double* s = &scores[static_cast<size_t>((b * classes + c) * boxes)];
      std::vector<int64_t> cand;
      for (int64_t i = 0; i < boxes; ++i) {
        if (std::isnan(s[i])) continue;
        if (d.has_score_threshold && !(s[i] > static_cast<double>(d.score_threshold))) continue;
        cand.push_back(i);
      }
      std::stable_sort(cand.begin(), cand.end(), [&](int64_t u, int64_t v) { return s[u] > s[v]; });
      std::vector<int64_t> kept;
      for (int64_t i : cand) {
        if (static_cast<int64_t>(kept.size()) == d.max_output_boxes_per_class) break;
        bool gone = false;
        for (int64_t j : kept) {
          gone = gone || detail::suppresses(&box_values[static_cast<size_t>((b * boxes + j) * 4)],
                                    &box_values[static_cast<size_t>((b * boxes + i) * 4)], d.center_point_box,
                                    static_cast<double>(d.iou_threshold));
        }
        if (!gone) kept.push_back(i);
      }
      for (int64_t i : kept) {
        out.push_back(static_cast<double>(b));
        out.push_back(static_cast<double>(c));
        out.push_back(static_cast<double>(i));
      }
    }
  }
  out.resize(static_cast<size_t>(rows * 3), -1.0);
  return out;
}

}  // namespace ref
}  // namespace jet
