// topk_forward and nms_forward on every backend against the float64 references below: odd shapes,
// every axis, strided layouts, ties and NaN, poisoned outputs, one or both TopK outputs; NMS in
// both box formats, with and without a score threshold, limits below and above the box count,
// zero-area and flipped boxes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/util.h"
#include "jet/dnn/detection.h"

// ---- The float64 references (ref::), written here because no other test uses them, from the ONNX
// definitions: TopK by a stable sort of each row, NonMaxSuppression by the greedy pass in double.

namespace jet {
namespace ref {

// Helpers of the definitions below.
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

using namespace jet;
using namespace jet::test;

namespace {

const Layout kLayouts[] = {Layout::CHANNELS_FIRST, Layout::PADDED, Layout::REVERSED};

// Values on a coarse grid (many ties), NaN and infinities in floats on some turns.
std::vector<double> tie_values(DType t, int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (double& e : v) e = dtype_is_float(t) ? std::round(uniform(-2.0, 2.0) * 4.0) / 4.0 : static_cast<double>(uniform_int(-6, 6));
  if (dtype_is_float(t) && specials_turn()) plant_specials(&v);
  return v;
}

}  // namespace

TEST_CASE("topk_forward matches the float64 reference (ties, NaN, any axis, one or both outputs)") {
  struct TopkCase {
    std::vector<int64_t> x;
    int axis;
    int64_t k;
  };
  const std::vector<TopkCase> cases = {
      {{7}, 0, 3},          {{3, 13}, 1, 13},       {{2, 5, 9}, 1, 2},  {{4, 3, 17}, 2, 5},
      {{2, 3, 4, 5}, 0, 1}, {{1, 2, 3, 40}, 3, 40}, {{3, 1, 33}, 2, 7},
  };
  int turn = 0;
  for (const Handle& h : test_handles()) {
    for (DType t : {DType::F32, DType::F16, DType::I32, DType::I64}) {
      for (const TopkCase& k : cases) {
        for (bool largest : {true, false}) {
          for (int li = 0; li < 3; ++li) {
            if (reduced_tests() && li > 0) continue;
            const int outputs = turn++ % 3;  // 0: both, 1: values only, 2: indices only
            CAPTURE(std::string(backend_name(h)));
            CAPTURE(std::string(dtype_name(t)));
            CAPTURE(dims_str(k.x));
            CAPTURE(k.axis);
            CAPTURE(k.k);
            CAPTURE(largest);
            CAPTURE(li);
            CAPTURE(outputs);
            int64_t n = 1;
            for (int64_t d : k.x) n *= d;
            std::vector<double> xv = tie_values(t, n);
            HostTensor x = tensor_with(make_desc(t, k.x, kLayouts[li]), xv);
            xv = x.to_ref();  // as stored (f16 rounding)
            std::vector<int64_t> yd = k.x;
            yd[static_cast<size_t>(k.axis)] = k.k;
            HostTensor values(make_desc(t, yd, kLayouts[(li + 1) % 3]));
            HostTensor indices(make_desc(DType::I64, yd, kLayouts[(li + 2) % 3]));
            values.poison();
            indices.poison();
            const HostTensor values_before = values, indices_before = indices;
            Staging st(h);
            void* vp = outputs != 2 ? st.out(values) : nullptr;
            void* ip = outputs != 1 ? st.out(indices) : nullptr;
            REQUIRE_OK(topk_forward(h, k.axis, k.k, largest, x.desc(), st.in(x), values.desc(), vp, indices.desc(), ip));
            st.finish();
            std::vector<double> want_values, want_indices;
            ref::topk(k.x, xv, k.axis, k.k, largest, &want_values, &want_indices);
            if (vp) check_output(values, values_before, want_values, 0.0);
            if (ip) check_output(indices, indices_before, want_indices, 0.0);
          }
        }
      }
    }
  }
}

TEST_CASE("topk_forward refuses bad k, axis, dtypes and aliasing") {
  const Handle h = Handle::cpu();
  HostTensor x(TensorDesc::packed(DType::F32, {3, 5}));
  HostTensor v(TensorDesc::packed(DType::F32, {3, 2})), i(TensorDesc::packed(DType::I64, {3, 2}));
  HostTensor wrong(TensorDesc::packed(DType::I32, {3, 2}));
  CHECK(topk_forward(h, 1, 2, true, x.desc(), x.data(), v.desc(), v.data(), i.desc(), i.data()).ok());
  CHECK(topk_forward(h, 1, 0, true, x.desc(), x.data(), v.desc(), v.data(), i.desc(), i.data()).code() == StatusCode::BAD_PARAM);
  CHECK(topk_forward(h, 1, 6, true, x.desc(), x.data(), v.desc(), v.data(), i.desc(), i.data()).code() == StatusCode::BAD_PARAM);
  CHECK(topk_forward(h, 2, 2, true, x.desc(), x.data(), v.desc(), v.data(), i.desc(), i.data()).code() == StatusCode::BAD_PARAM);
  CHECK(topk_forward(h, 0, 2, true, x.desc(), x.data(), v.desc(), v.data(), i.desc(), i.data()).code() == StatusCode::BAD_PARAM);
  CHECK(topk_forward(h, 1, 2, true, x.desc(), x.data(), v.desc(), v.data(), wrong.desc(), wrong.data()).code() == StatusCode::BAD_PARAM);
  CHECK(topk_forward(h, 1, 2, true, x.desc(), x.data(), v.desc(), nullptr, i.desc(), nullptr).code() == StatusCode::BAD_PARAM);
  CHECK(topk_forward(h, 1, 2, true, x.desc(), x.data(), v.desc(), v.data(), i.desc(), v.data()).code() == StatusCode::BAD_PARAM);
  HostTensor b(TensorDesc::packed(DType::BOOL, {3, 5})), bv(TensorDesc::packed(DType::BOOL, {3, 2}));
  CHECK(topk_forward(h, 1, 2, true, b.desc(), b.data(), bv.desc(), bv.data(), i.desc(), i.data()).code() == StatusCode::NOT_SUPPORTED);
}

TEST_CASE("nms_forward matches the float64 reference (formats, thresholds, limits, ties)") {
  struct NmsCase {
    int64_t batches, boxes, classes, max_out;
  };
  const std::vector<NmsCase> cases = {
      {1, 1, 1, 1}, {2, 7, 3, 2}, {1, 33, 2, 1000}, {3, 17, 1, 5}, {2, 300, 4, 40},
  };
  int turn = 0;
  for (const Handle& h : test_handles()) {
    for (DType t : {DType::F32, DType::F16}) {
      for (const NmsCase& k : cases) {
        for (bool center : {false, true}) {
          for (bool threshold : {false, true}) {
            if (reduced_tests() && (turn++ % 2)) continue;
            CAPTURE(std::string(backend_name(h)));
            CAPTURE(std::string(dtype_name(t)));
            CAPTURE(k.batches);
            CAPTURE(k.boxes);
            CAPTURE(k.classes);
            CAPTURE(k.max_out);
            CAPTURE(center);
            CAPTURE(threshold);
            NmsDesc d;
            d.center_point_box = center;
            d.max_output_boxes_per_class = k.max_out;
            d.iou_threshold = 0.37f;
            d.has_score_threshold = threshold;
            d.score_threshold = 0.1f;
            // Boxes on a 1/4 grid in a 10 x 10 field, sides 0.5..4 (some 0: no area); corners
            // flipped at random in the corner format. Scores on a 1/8 grid: ties are common.
            std::vector<double> bv;
            for (int64_t i = 0; i < k.batches * k.boxes; ++i) {
              const double a = std::round(uniform(0, 10) * 4) / 4, b = std::round(uniform(0, 10) * 4) / 4;
              double w = std::round(uniform(0.5, 4) * 4) / 4, hh = std::round(uniform(0.5, 4) * 4) / 4;
              if (uniform(0, 1) < 0.05) w = 0;
              if (center) {
                bv.insert(bv.end(), {a, b, w, hh});
              } else if (uniform(0, 1) < 0.5) {
                bv.insert(bv.end(), {a, b, a + hh, b + w});
              } else {
                bv.insert(bv.end(), {a + hh, b + w, a, b});
              }
            }
            std::vector<double> sv(static_cast<size_t>(k.batches * k.classes * k.boxes));
            for (double& s : sv) s = std::round(uniform(-1, 1) * 8) / 8;
            if (specials_turn()) sv[0] = std::numeric_limits<double>::quiet_NaN();
            HostTensor boxes = tensor_with(TensorDesc::packed(t, {k.batches, k.boxes, 4}), bv);
            HostTensor scores = tensor_with(TensorDesc::packed(t, {k.batches, k.classes, k.boxes}), sv);
            const int64_t rows = nms_max_rows(d, k.batches, k.classes, k.boxes);
            HostTensor y(TensorDesc::packed(DType::I64, {rows, 3}));
            y.poison();
            const HostTensor before = y;
            size_t ws = 0;
            REQUIRE_OK(nms_workspace_size(h, d, boxes.desc(), scores.desc(), &ws));
            Staging st(h);
            REQUIRE_OK(nms_forward(h, d, boxes.desc(), st.in(boxes), scores.desc(), st.in(scores), st.scratch(ws), ws,
                                   y.desc(), st.out(y)));
            st.finish();
            const std::vector<double> want =
                ref::nms(d, k.batches, k.classes, k.boxes, boxes.to_ref(), scores.to_ref(), rows);
            check_output(y, before, want, 0.0);
          }
        }
      }
    }
  }
}

TEST_CASE("nms_forward refuses bad shapes, limits, thresholds and workspace") {
  const Handle h = Handle::cpu();
  HostTensor boxes(TensorDesc::packed(DType::F32, {1, 5, 4})), scores(TensorDesc::packed(DType::F32, {1, 2, 5}));
  NmsDesc d;
  d.max_output_boxes_per_class = 3;
  HostTensor y(TensorDesc::packed(DType::I64, {6, 3}));
  size_t ws = 0;
  REQUIRE_OK(nms_workspace_size(h, d, boxes.desc(), scores.desc(), &ws));
  std::vector<unsigned char> w(ws);
  CHECK(nms_forward(h, d, boxes.desc(), boxes.data(), scores.desc(), scores.data(), w.data(), ws, y.desc(), y.data()).ok());
  CHECK(nms_forward(h, d, boxes.desc(), boxes.data(), scores.desc(), scores.data(), w.data(), ws - 1, y.desc(), y.data()).code() ==
        StatusCode::BAD_PARAM);
  HostTensor y5(TensorDesc::packed(DType::I64, {5, 3}));
  CHECK(nms_forward(h, d, boxes.desc(), boxes.data(), scores.desc(), scores.data(), w.data(), ws, y5.desc(), y5.data()).code() ==
        StatusCode::BAD_PARAM);
  HostTensor s3(TensorDesc::packed(DType::F32, {1, 2, 4}));
  CHECK(nms_workspace_size(h, d, boxes.desc(), s3.desc(), &ws).code() == StatusCode::BAD_PARAM);
  NmsDesc zero = d;
  zero.max_output_boxes_per_class = 0;
  CHECK(nms_workspace_size(h, zero, boxes.desc(), scores.desc(), &ws).code() == StatusCode::BAD_PARAM);
  NmsDesc nan = d;
  nan.iou_threshold = std::numeric_limits<float>::quiet_NaN();
  CHECK(nms_workspace_size(h, nan, boxes.desc(), scores.desc(), &ws).code() == StatusCode::INVALID_VALUE);
  HostTensor b3(TensorDesc::packed(DType::F32, {1, 5, 3}));
  CHECK(nms_workspace_size(h, d, b3.desc(), scores.desc(), &ws).code() == StatusCode::BAD_PARAM);
}
