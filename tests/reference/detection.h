// float64 references of the detection heads (topk_forward, nms_forward), written from the ONNX
// definitions: TopK by a stable sort of each row, NonMaxSuppression by the greedy pass in double.
#pragma once

#include <cstdint>
#include <vector>

#include "jet/dnn/detection.h"

namespace jet {
namespace ref {

// The k largest (smallest) of each row along `axis` of packed x: values and indices (as doubles),
// packed with x's dims but k at axis. NaN is above every number; equal values keep x's order.
void topk(const std::vector<int64_t>& x_dims, const std::vector<double>& x, int axis, int64_t k, bool largest,
          std::vector<double>* values, std::vector<double>* indices);

// ONNX NonMaxSuppression of packed boxes [B, N, 4] and scores [B, C, N]: the selected rows
// (batch, class, box) flattened, padded with -1 up to `rows` rows.
std::vector<double> nms(const NmsDesc& nms, int64_t batches, int64_t classes, int64_t boxes,
                        const std::vector<double>& box_values, const std::vector<double>& scores, int64_t rows);

}  // namespace ref
}  // namespace jet
