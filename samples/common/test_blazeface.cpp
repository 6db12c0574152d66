// BlazeFace post-processing (samples/common/blazeface.h): anchors, decoding, weighted NMS and the
// mapping back to source pixels, on values worked out by hand; Postprocess::run allocates
// nothing after its first call.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <vector>

#include "blazeface.h"

// Counts every allocation of this test executable.
namespace {
std::atomic<long> g_allocations{0};
}
void* operator new(std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

using namespace jet;
using namespace jet::blazeface;

namespace {

// Raw outputs with every logit at -20 (score ~2e-9) and every regressor 0, editable per anchor.
struct FakeOutputs {
  std::vector<float> scores[2], boxes[2];
  FakeOutputs() {
    for (int l = 0; l < 2; ++l) {
      scores[l].assign(kLayerAnchors[l], -20.f);
      boxes[l].assign(static_cast<size_t>(kLayerAnchors[l]) * kValuesPerAnchor, 0.f);
    }
  }
  // Anchor index over both layers -> (layer, index in layer).
  float* box(int anchor) {
    const int l = anchor < kLayerAnchors[0] ? 0 : 1;
    return boxes[l].data() + static_cast<size_t>(anchor - l * kLayerAnchors[0]) * kValuesPerAnchor;
  }
  float& score(int anchor) {
    const int l = anchor < kLayerAnchors[0] ? 0 : 1;
    return scores[l][anchor - l * kLayerAnchors[0]];
  }
  RawOutputs raw() const {
    RawOutputs r;
    for (int l = 0; l < 2; ++l) {
      r.scores[l] = scores[l].data();
      r.boxes[l] = boxes[l].data();
    }
    return r;
  }
};

float logit(float p) { return std::log(p / (1.f - p)); }

}  // namespace

TEST_CASE("896 anchors: 16x16 cells x 2 at stride 8, then 8x8 x 6 at stride 16") {
  Anchor a[kAnchors];
  make_anchors(a);
  CHECK(a[0].x == doctest::Approx(0.5 / 16));
  CHECK(a[1].x == doctest::Approx(0.5 / 16));  // the cell's second anchor
  CHECK(a[2].x == doctest::Approx(1.5 / 16));
  CHECK(a[2 * 16].y == doctest::Approx(1.5 / 16));  // second row
  CHECK(a[511].x == doctest::Approx(15.5 / 16));
  CHECK(a[511].y == doctest::Approx(15.5 / 16));
  CHECK(a[512].x == doctest::Approx(0.5 / 8));
  CHECK(a[517].x == doctest::Approx(0.5 / 8));  // six anchors per cell
  CHECK(a[518].x == doctest::Approx(1.5 / 8));
  CHECK(a[512 + 6 * 8].y == doctest::Approx(1.5 / 8));
  CHECK(a[895].x == doctest::Approx(7.5 / 8));
  CHECK(a[895].y == doctest::Approx(7.5 / 8));
}

TEST_CASE("scores: sigmoid of the logit clipped to [-100, 100]") {
  CHECK(score_of(0.f) == doctest::Approx(0.5));
  CHECK(score_of(std::log(3.f)) == doctest::Approx(0.75));
  CHECK(score_of(1e30f) == doctest::Approx(1.0));
  CHECK(score_of(-1e30f) >= 0.f);
  CHECK(score_of(-1e30f) < 1e-40f);
  CHECK(std::isfinite(score_of(-1e30f)));
}

TEST_CASE("decoding boxes and key points relative to the anchor, in input pixels") {
  FakeOutputs f;
  // Anchor 37 of layer 0: cell 18 (row 1, column 2), centre (2.5 / 16, 1.5 / 16).
  f.score(37) = logit(0.9f);
  float* r = f.box(37);
  r[0] = 6.4f;   // centre x +0.05
  r[1] = -3.2f;  // centre y -0.025
  r[2] = 25.6f;  // width 0.2
  r[3] = 12.8f;  // height 0.1
  for (int k = 0; k < kKeypoints; ++k) {
    r[4 + 2 * k] = 1.28f * k;
    r[5 + 2 * k] = -1.28f * k;
  }
  // Anchor 600 of layer 1 (index 88: cell 14, row 1, column 6), below the threshold.
  f.score(600) = logit(0.7f);
  Anchor a[kAnchors];
  make_anchors(a);
  std::vector<Detection> out;
  decode(f.raw(), a, 0.75f, &out);
  REQUIRE(out.size() == 1);
  const Detection& d = out[0];
  CHECK(d.anchor == 37);
  CHECK(d.score == doctest::Approx(0.9));
  const double cx = 2.5 / 16 + 0.05, cy = 1.5 / 16 - 0.025;
  CHECK(d.xmin == doctest::Approx(cx - 0.1));
  CHECK(d.xmax == doctest::Approx(cx + 0.1));
  CHECK(d.ymin == doctest::Approx(cy - 0.05));
  CHECK(d.ymax == doctest::Approx(cy + 0.05));
  for (int k = 0; k < kKeypoints; ++k) {
    CHECK(d.keypoints[k][0] == doctest::Approx(2.5 / 16 + 0.01 * k));
    CHECK(d.keypoints[k][1] == doctest::Approx(1.5 / 16 - 0.01 * k));
  }
  decode(f.raw(), a, 0.6f, &out);
  REQUIRE(out.size() == 2);
  CHECK(out[1].anchor == 600);
  CHECK(out[1].xmin == doctest::Approx(6.5 / 8));  // zero regressors: an empty box at the centre
  CHECK(out[1].ymin == doctest::Approx(1.5 / 8));
}

TEST_CASE("IoU") {
  Detection a, b;
  a.xmin = 0, a.ymin = 0, a.xmax = 2, a.ymax = 2;
  b.xmin = 1, b.ymin = 0, b.xmax = 3, b.ymax = 2;
  CHECK(iou(a, b) == doctest::Approx(2.0 / 6.0));
  CHECK(iou(a, a) == doctest::Approx(1.0));
  b.xmin = 2, b.xmax = 4;  // touching
  CHECK(iou(a, b) == 0.f);
  b.xmax = 2;  // empty
  CHECK(iou(a, b) == 0.f);
}

TEST_CASE("weighted NMS blends overlapping detections by score, keeping the best score") {
  auto box = [](float x0, float y0, float x1, float y1, float score, int anchor) {
    Detection d;
    d.xmin = x0, d.ymin = y0, d.xmax = x1, d.ymax = y1, d.score = score, d.anchor = anchor;
    for (int k = 0; k < kKeypoints; ++k) d.keypoints[k][0] = d.keypoints[k][1] = x0 + k;
    return d;
  };
  std::vector<Detection> c = {
      box(0.10f, 0.10f, 0.30f, 0.30f, 0.80f, 5),   // overlaps the best: IoU 0.82
      box(0.60f, 0.60f, 0.80f, 0.80f, 0.85f, 9),   // elsewhere
      box(0.12f, 0.10f, 0.32f, 0.30f, 0.90f, 7),   // the best
      box(0.25f, 0.25f, 0.45f, 0.45f, 0.78f, 3),   // overlaps the best with IoU 0.05: its own face
  };
  std::vector<Detection> out;
  weighted_nms(&c, 0.3f, &out);
  REQUIRE(out.size() == 3);
  CHECK(out[0].score == doctest::Approx(0.90));
  CHECK(out[0].anchor == 7);
  const double w = 0.9 + 0.8;
  CHECK(out[0].xmin == doctest::Approx((0.9 * 0.12 + 0.8 * 0.10) / w));
  CHECK(out[0].xmax == doctest::Approx((0.9 * 0.32 + 0.8 * 0.30) / w));
  CHECK(out[0].ymin == doctest::Approx(0.10));
  CHECK(out[0].keypoints[2][0] == doctest::Approx((0.9 * 2.12 + 0.8 * 2.10) / w));
  CHECK(out[1].score == doctest::Approx(0.85));
  CHECK(out[1].xmin == doctest::Approx(0.60));
  CHECK(out[2].score == doctest::Approx(0.78));
  CHECK(out[2].xmin == doctest::Approx(0.25));
}

TEST_CASE("detections map back through the letterbox transform") {
  // A 640x480 photo letterboxed into 128x128: scale 0.2, 16 rows of padding above.
  ImageTransform t;
  t.scale_x = t.scale_y = 0.2;
  t.offset_x = 0;
  t.offset_y = 16;
  Detection d;
  d.xmin = 0.25f, d.xmax = 0.75f;
  d.ymin = 0.125f, d.ymax = 0.875f;  // input rows 16..112: the whole photo
  d.keypoints[0][0] = 0.5f, d.keypoints[0][1] = 0.5f;
  const Detection m = to_source(d, t);
  CHECK(m.xmin == doctest::Approx(160));
  CHECK(m.xmax == doctest::Approx(480));
  CHECK(m.ymin == doctest::Approx(0));
  CHECK(m.ymax == doctest::Approx(480));
  CHECK(m.keypoints[0][0] == doctest::Approx(320));
  CHECK(m.keypoints[0][1] == doctest::Approx(240));
}

TEST_CASE("Postprocess::run allocates nothing after its first call") {
  FakeOutputs f;
  for (int a : {40, 41, 42, 300, 700}) {
    f.score(a) = logit(0.8f + 0.01f * static_cast<float>(a % 7));
    f.box(a)[2] = f.box(a)[3] = 20.f;
  }
  ImageTransform t;
  Postprocess post;
  std::vector<Detection> faces;
  post.run(f.raw(), t, &faces);
  CHECK(post.candidate_count() == 5);
  const size_t first = faces.size();
  CHECK(first >= 2);
  const long before = g_allocations.load();
  for (int i = 0; i < 10; ++i) post.run(f.raw(), t, &faces);
  CHECK(g_allocations.load() - before == 0);
  CHECK(faces.size() == first);
}
