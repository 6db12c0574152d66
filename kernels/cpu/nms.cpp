// CPU nms_forward: per (batch, class), the candidates sorted by score (std::sort: in place, no
// allocation) into the workspace, then the greedy pass over them against the boxes kept so far.
#include <algorithm>

#include "../api/backend.h"
#include "../common/detection_math.h"
#include "cpu_common.h"

namespace jet {
namespace cpu {

Status nms_forward(const NmsDesc& nms, const TensorDesc& boxes_desc, const void* boxes,
                   const TensorDesc& scores_desc, const void* scores, void* workspace,
                   const TensorDesc& y_desc, void* y) {
  const DType t = boxes_desc.dtype();
  const int64_t batches = boxes_desc.dim(0), n = boxes_desc.dim(1), classes = scores_desc.dim(1);
  const int64_t m = std::min(nms.max_output_boxes_per_class, n);
  int32_t* ws = static_cast<int32_t*>(workspace);
  int64_t* yp = static_cast<int64_t*>(y);
  const int64_t rows = y_desc.dim(0);
  int64_t row = 0;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t c = 0; c < classes; ++c) {
      int32_t* order = ws + (b * classes + c) * (n + m + 1);
      int32_t* kept = order + n;
      const int64_t so = (b * classes + c) * n;
      const auto score = [&](int64_t i) { return load(t, scores, so + i); };
      int64_t candidates = 0;
      for (int64_t i = 0; i < n; ++i) {
        const float s = score(i);
        if (s != s || (nms.has_score_threshold && !(s > nms.score_threshold))) continue;
        order[candidates++] = static_cast<int32_t>(i);
      }
      std::sort(order, order + candidates, [&](int32_t u, int32_t v) {
        const float su = score(u), sv = score(v);
        return su > sv || (su == sv && u < v);
      });
      int64_t count = 0;
      for (int64_t r = 0; r < candidates && count < m; ++r) {
        float box[4], other[4];
        for (int e = 0; e < 4; ++e) box[e] = load(t, boxes, (b * n + order[r]) * 4 + e);
        bool suppressed = false;
        for (int64_t j = 0; j < count && !suppressed; ++j) {
          for (int e = 0; e < 4; ++e) other[e] = load(t, boxes, (b * n + kept[j]) * 4 + e);
          suppressed = nms_suppresses(other, box, nms.center_point_box, nms.iou_threshold);
        }
        if (!suppressed) kept[count++] = order[r];
      }
      for (int64_t j = 0; j < count; ++j, ++row) {
        yp[row * 3] = b;
        yp[row * 3 + 1] = c;
        yp[row * 3 + 2] = kept[j];
      }
    }
  }
  for (; row < rows; ++row) yp[row * 3] = yp[row * 3 + 1] = yp[row * 3 + 2] = -1;
  return Status();
}

}  // namespace cpu
}  // namespace jet
