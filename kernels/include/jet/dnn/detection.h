// Detection heads: top-k selection (ONNX TopK) and non-maximum suppression (ONNX
// NonMaxSuppression, with a fixed-size output: the runtime's shapes are static).
#pragma once

#include "jet/dnn/tensor.h"

namespace jet {

// ---- TopK ----
// The k largest (or smallest) elements of x along `axis` (0 <= axis < rank, 1 <= k <= x's dim
// there), sorted: values (x's dtype: F32, F16, I32, I64) and/or their indices (I64) along the
// axis, both with x's dims but k at `axis`. Either output may be omitted (a null pointer; its
// descriptor is then not read), so one call can produce just what a caller needs. Order: largest
// first (smallest first when !largest); equal values keep x's order (the lower index first, as
// ONNX specifies); NaN is larger than every number (numpy's sort order: first for largest, last
// for smallest). Any strides; outputs may not alias x or each other.
// docs/ops.md routines: | `topk_forward` | the k largest or smallest along one axis, sorted (ties:
//   the lower index first; NaN above every number); values (x's dtype: f32, f16, i32, i64) and/or
//   i64 indices, either output optional; any strides; O(n k) per row (one CUDA thread per row: for
//   detection heads and classifiers, not for long sorts) | yes | yes | yes | yes | yes | -- | TopK
//   |
// docs/ops.md integer: | `topk_forward` | i32, i64 values (and their i64 indices), as for floats
//   above | yes | yes | TopK of integer tensors |
Status topk_forward(const Handle& handle, int axis, int64_t k, bool largest,
                    const TensorDesc& x_desc, const void* x, const TensorDesc& values_desc,
                    void* values, const TensorDesc& indices_desc, void* indices);

// ---- NonMaxSuppression ----
struct NmsDesc {
  // false: boxes are [y1, x1, y2, x2], any diagonal corner pair (TensorFlow's); true: [x_center,
  // y_center, width, height] (PyTorch's).
  bool center_point_box = false;
  int64_t max_output_boxes_per_class = 1;  // >= 1
  float iou_threshold = 0.f;  // a box is suppressed by a selected one when IoU > this
  bool has_score_threshold = false;
  float score_threshold = 0.f;  // with has_score_threshold: only scores > this are candidates
};

// The output's row count: batches x classes x min(max_output_boxes_per_class, boxes), the most
// rows ONNX's selected_indices can have.
int64_t nms_max_rows(const NmsDesc& nms, int64_t batches, int64_t classes, int64_t boxes);

// Workspace bytes of nms_forward for these inputs.
Status nms_workspace_size(const Handle& handle, const NmsDesc& nms, const TensorDesc& boxes_desc,
                          const TensorDesc& scores_desc, size_t* bytes);

// ONNX NonMaxSuppression: boxes [B, N, 4] and scores [B, C, N] (F32 or F16, one dtype, packed).
// Per batch and class, candidates (every box, or those with score > score_threshold) are taken by
// decreasing score (equal scores: the lower box index first); a candidate is kept unless its IoU
// with a box already kept for that class is > iou_threshold (boxes of zero area overlap nothing),
// until max_output_boxes_per_class are kept. y is I64 [nms_max_rows, 3], packed: the kept
// (batch, class, box) triples in ONNX's order (batch, then class, then selection order), then
// rows of -1 up to the fixed size. The number of valid rows is the count of rows before the first
// -1 row. NaN scores are never candidates. IoU in f32.
// docs/ops.md routines: | `nms_forward` | ONNX NonMaxSuppression: boxes [B, N, 4] (corners in any
//   order, or center_point_box), scores [B, C, N], max_output_boxes_per_class, iou_threshold,
//   score_threshold; packed f32 / f16; a fixed-size i64 output of B x C x min(max, N) rows, the
//   selected (batch, class, box) rows first, then rows of -1; workspace `nms_workspace_size` | yes
//   | yes | yes | yes | yes | -- | NonMaxSuppression (10+) |
Status nms_forward(const Handle& handle, const NmsDesc& nms, const TensorDesc& boxes_desc,
                   const void* boxes, const TensorDesc& scores_desc, const void* scores,
                   void* workspace, size_t workspace_bytes, const TensorDesc& y_desc, void* y);

}  // namespace jet
