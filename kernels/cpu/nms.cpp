// nms_forward, nms_workspace_size, nms_max_rows: validation and backend dispatch; below, the CPU
// backend.
//
// CPU nms_forward: per (batch, class), the candidates sorted by score (std::sort: in place, no
// allocation) into the workspace, then the greedy pass over them against the boxes kept so far.

#include <algorithm>
#include <cmath>

#include "../api/backend.h"
#include "../api/check.h"
#include "../common/detection_math.h"
#include "cpu_common.h"

namespace jet {

JET_BACKEND_ENTRIES(nms_forward, const NmsDesc& nms, const TensorDesc& boxes_desc,
                    const void* boxes, const TensorDesc& scores_desc, const void* scores,
                    void* workspace, const TensorDesc& y_desc, void* y);

namespace {

Status check_nms(const char* fn, const NmsDesc& nms, const TensorDesc& boxes, const TensorDesc& scores) {
  JET_RETURN_IF_ERROR(in_routine(fn, boxes.validate("boxes")));
  JET_RETURN_IF_ERROR(in_routine(fn, scores.validate("scores")));
  JET_RETURN_IF_ERROR(check_same_dtype(fn, boxes, "boxes", scores, "scores"));
  if (boxes.rank() != 3 || boxes.dim(2) != 4)
    return make_status(StatusCode::BAD_PARAM, "%s: boxes have dims %s, expected [batches, boxes, 4]", fn,
                       dims_text(boxes.rank(), boxes.dims()).c_str());
  if (scores.rank() != 3 || scores.dim(0) != boxes.dim(0) || scores.dim(2) != boxes.dim(1))
    return make_status(StatusCode::BAD_PARAM,
                       "%s: scores have dims %s, expected [%lld, classes, %lld] for boxes %s", fn,
                       dims_text(scores.rank(), scores.dims()).c_str(),
                       static_cast<long long>(boxes.dim(0)), static_cast<long long>(boxes.dim(1)),
                       dims_text(boxes.rank(), boxes.dims()).c_str());
  if (!boxes.is_packed() || !scores.is_packed())
    return make_status(StatusCode::NOT_SUPPORTED, "%s: boxes and scores must be packed", fn);
  if (nms.max_output_boxes_per_class < 1)
    return make_status(StatusCode::BAD_PARAM, "%s: max_output_boxes_per_class = %lld, must be >= 1", fn,
                       static_cast<long long>(nms.max_output_boxes_per_class));
  if (!std::isfinite(nms.iou_threshold) || (nms.has_score_threshold && std::isnan(nms.score_threshold)))
    return make_status(StatusCode::INVALID_VALUE, "%s: iou_threshold %g and score_threshold %g must be numbers", fn,
                       static_cast<double>(nms.iou_threshold), static_cast<double>(nms.score_threshold));
  // The workspace's int32 box indices.
  if (boxes.dim(1) > 0x7fffffff)
    return make_status(StatusCode::NOT_SUPPORTED, "%s: more than 2^31 - 1 boxes", fn);
  return Status();
}

}  // namespace

int64_t nms_max_rows(const NmsDesc& nms, int64_t batches, int64_t classes, int64_t boxes) {
  const int64_t per_class = nms.max_output_boxes_per_class < boxes ? nms.max_output_boxes_per_class : boxes;
  return batches * classes * (per_class > 0 ? per_class : 0);
}

Status nms_workspace_size(const Handle& handle, const NmsDesc& nms, const TensorDesc& boxes_desc,
                          const TensorDesc& scores_desc, size_t* bytes) {
  const char* fn = "nms_workspace_size";
  (void)handle;
  JET_RETURN_IF_ERROR(check_ptr(fn, bytes, "bytes"));
  JET_RETURN_IF_ERROR(check_nms(fn, nms, boxes_desc, scores_desc));
  // Per (batch, class): the candidates' order (n int32), the kept boxes (m int32) and their count.
  const int64_t pairs = boxes_desc.dim(0) * scores_desc.dim(1);
  const int64_t n = boxes_desc.dim(1);
  const int64_t m = nms.max_output_boxes_per_class < n ? nms.max_output_boxes_per_class : n;
  *bytes = static_cast<size_t>(pairs * (n + m + 1)) * sizeof(int32_t);
  return Status();
}

Status nms_forward(const Handle& handle, const NmsDesc& nms, const TensorDesc& boxes_desc,
                   const void* boxes, const TensorDesc& scores_desc, const void* scores,
                   void* workspace, size_t workspace_bytes, const TensorDesc& y_desc, void* y) {
  const char* fn = "nms_forward";
  JET_RETURN_IF_ERROR(check_nms(fn, nms, boxes_desc, scores_desc));
  JET_RETURN_IF_ERROR(in_routine(fn, y_desc.validate_any_dtype("y")));
  const int64_t rows = nms_max_rows(nms, boxes_desc.dim(0), scores_desc.dim(1), boxes_desc.dim(1));
  if (y_desc.dtype() != DType::I64 || y_desc.rank() != 2 || y_desc.dim(0) != rows ||
      y_desc.dim(1) != 3 || !y_desc.is_packed())
    return make_status(StatusCode::BAD_PARAM, "%s: y is %s %s, expected packed i64 [%lld, 3]", fn,
                       dtype_name(y_desc.dtype()), dims_text(y_desc.rank(), y_desc.dims()).c_str(),
                       static_cast<long long>(rows));
  JET_RETURN_IF_ERROR(check_ptr(fn, boxes, "boxes"));
  JET_RETURN_IF_ERROR(check_ptr(fn, scores, "scores"));
  JET_RETURN_IF_ERROR(check_ptr(fn, y, "y"));
  size_t need = 0;
  JET_RETURN_IF_ERROR(nms_workspace_size(handle, nms, boxes_desc, scores_desc, &need));
  if (workspace_bytes < need || (need > 0 && !workspace))
    return make_status(StatusCode::BAD_PARAM, "%s: workspace of %zu bytes, %zu needed", fn,
                       workspace ? workspace_bytes : size_t(0), need);
  if (y == boxes || y == scores) return make_status(StatusCode::BAD_PARAM, "%s: y aliases an input", fn);
  if (handle.backend() == Backend::CPU)
    return cpu::nms_forward(nms, boxes_desc, boxes, scores_desc, scores, workspace, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::nms_forward(handle, nms, boxes_desc, boxes, scores_desc, scores, workspace, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

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
