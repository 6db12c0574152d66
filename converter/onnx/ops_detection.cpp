// Detection heads: TopK (TOPK nodes, one per used output) and NonMaxSuppression (an NMS node with
// a fixed-size output, docs/onnx.md).
#include <cmath>

#include "importer.h"

namespace jet {
namespace onnx_import {

// TopK: K an attribute before opset 10, a constant input after; axis (default -1), largest
// (11+), sorted (11+; the output is always sorted, which sorted = 0 allows). Values and indices
// are one TOPK node each (the runtime's ops have one output), only for the outputs read.
Status import_topk(Importer& im) {
  Status st = im.require_input(0, "X");
  if (!st.ok()) return st;
  int64_t axis = -1, largest = 1, sorted = 1, k = 0;
  st = im.attr_int("axis", -1, &axis);
  if (st.ok() && im.opset >= 11) st = im.attr_int("largest", 1, &largest);
  if (st.ok() && im.opset >= 11) st = im.attr_int("sorted", 1, &sorted);
  if (!st.ok()) return st;
  if (im.opset < 10) {
    st = im.attr_int("k", 0, &k);
    if (st.ok() && !im.has_attr("k")) st = im.bad("missing attribute 'k'");
  } else {
    std::vector<int64_t> kv;
    st = im.require_input(1, "K");
    if (st.ok()) st = im.ints_input(1, "K", &kv);
    if (st.ok() && kv.size() != 1) st = im.bad("K has " + std::to_string(kv.size()) + " values, expected one");
    if (st.ok()) k = kv[0];
  }
  if (!st.ok()) return st;
  int x = -1;
  st = im.ir_input_any(0, &x);
  if (!st.ok()) return st;
  const std::vector<int64_t> xd = im.g->tensors[x].dims;
  const int64_t rank = static_cast<int64_t>(xd.size());
  st = im.normalize_axis(axis, rank, "axis", &axis);
  if (!st.ok()) return st;
  if (k == 0) return im.unsupported("K = 0 (an empty result)");
  if (k < 0 || k > xd[axis]) {
    return im.bad("K = " + std::to_string(k) + " is outside [1, " + std::to_string(xd[axis]) + "] (the dim at axis " +
                  std::to_string(axis) + ")");
  }
  const DType dt = im.g->tensors[x].dtype;
  if (dt == DType::BOOL) return im.bad("X is a bool tensor");
  for (int out = 0; out < 2; ++out) {
    if (!im.output_used(out)) continue;
    fb::TopKParamsT a;
    a.axis = static_cast<int>(axis);
    a.k = k;
    a.largest = largest != 0;
    a.indices = out == 1;
    int y = -1;
    st = im.ir_check(im.g->add_op(im.ir_name(out ? "indices" : ""), {x}, a, &y));
    if (st.ok()) st = im.set_output(out, y);
    if (!st.ok()) return st;
  }
  return Status::success();
}

// NonMaxSuppression: boxes, scores computed or constant; max_output_boxes_per_class,
// iou_threshold, score_threshold constant (absent: 0, 0, none). The output has the fixed maximum
// of rows (batches x classes x min(max_output_boxes_per_class, boxes)), the selected ones first
// and the rest -1, where ONNX's has exactly the selected rows: docs/onnx.md.
Status import_nms(Importer& im) {
  Status st = im.require_input(0, "boxes");
  if (st.ok()) st = im.require_input(1, "scores");
  if (!st.ok()) return st;
  int64_t center = 0;
  st = im.attr_int("center_point_box", 0, &center);
  if (!st.ok()) return st;
  if (center != 0 && center != 1) return im.bad("center_point_box is " + std::to_string(center) + ", not 0 or 1");
  fb::NmsParamsT a;
  a.center_point_box = center == 1;
  a.max_output_boxes_per_class = 0;
  if (im.has_input(2)) {
    std::vector<int64_t> m;
    st = im.ints_input(2, "max_output_boxes_per_class", &m);
    if (st.ok() && m.size() != 1) st = im.bad("max_output_boxes_per_class has " + std::to_string(m.size()) + " values");
    if (!st.ok()) return st;
    a.max_output_boxes_per_class = m[0];
  }
  if (a.max_output_boxes_per_class <= 0) {
    return im.unsupported("max_output_boxes_per_class of 0 (absent) or less: ONNX's output is empty");
  }
  if (im.has_input(3)) {
    st = im.float_scalar_input(3, "iou_threshold", &a.iou_threshold);
    if (!st.ok()) return st;
  }
  if (!std::isfinite(a.iou_threshold)) return im.bad("iou_threshold must be finite");
  if (im.has_input(4)) {
    st = im.float_scalar_input(4, "score_threshold", &a.score_threshold);
    if (!st.ok()) return st;
    if (std::isnan(a.score_threshold)) return im.bad("score_threshold is NaN");
    a.has_score_threshold = true;
  }
  int boxes = -1, scores = -1, y = -1;
  st = im.ir_input(0, &boxes);
  if (st.ok()) st = im.ir_input(1, im.g->tensors[boxes].dtype, &scores);
  if (!st.ok()) return st;
  const std::vector<int64_t> bd = im.g->tensors[boxes].dims, sd = im.g->tensors[scores].dims;
  if (bd.size() != 3 || bd[2] != 4) return im.bad("boxes " + dims_text(bd) + " are not [batches, boxes, 4]");
  if (sd.size() != 3 || sd[0] != bd[0] || sd[2] != bd[1]) {
    return im.bad("scores " + dims_text(sd) + " do not match boxes " + dims_text(bd) + " ([batches, classes, boxes])");
  }
  st = im.ir_check(im.g->add_op(im.ir_name(), {boxes, scores}, a, &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

// The ONNX ops this file imports: one row each, in docs/onnx.md's order (op_table.cpp says
// what the columns mean and joins the files' lists).
const OpEntry kDetectionOpRows[] = {
    {"TopK", 1, import_topk, true, "TOPK (one node per used output)",
     "K an attribute before 10, a constant input from 10 (K = 0, an empty result, unsupported); axis "
     "(negative too), largest (11+); sorted is always honoured (sorted = 0 allows any order). FLOAT, "
     "FLOAT16, INT32, INT64 data. Values and Indices are two TOPK nodes (the runtime's ops have one output "
     "each); only the outputs read are computed. Ties: the lower index first; NaN above every number"},
    {"NonMaxSuppression", 10, import_nms, false, "NMS",
     "boxes and scores computed or constant (FLOAT / FLOAT16); max_output_boxes_per_class, iou_threshold, "
     "score_threshold constant (absent max_output_boxes_per_class, or 0, gives an empty output in ONNX: "
     "unsupported); center_point_box 0 / 1. **Fixed-size output**: the runtime's shapes are static, so "
     "selected_indices is INT64 [batches x classes x min(max_output_boxes_per_class, boxes), 3], the most "
     "rows ONNX's output can have: the selected (batch, class, box) rows first, in ONNX's order, then rows "
     "of -1. The number of valid rows is the count before the first -1 row (as TensorRT's EfficientNMS pads "
     "its detections; there is no second count output, since ONNX's node has one). A model that reads ONNX's "
     "exact number of rows downstream (e.g. Gather on the selected rows then a reduction) sees the -1 rows "
     "too: such graphs need the padding handled (Gather of a -1 index reads the last element). The "
     "conformance comparer accepts this output by its padded-rows rule (`docs/conformance.md`)"},
};
const OpList kDetectionOps = {kDetectionOpRows, std::size(kDetectionOpRows)};

}  // namespace onnx_import
}  // namespace jet
