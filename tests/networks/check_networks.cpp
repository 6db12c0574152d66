// check_networks: runs the prepared real networks (tests/networks/prepare.py) through jetinfer's
// runtime and compares them with ONNX Runtime's outputs. Needs only the runtime and .npy files (no
// ONNX, protobuf, Python or node), so that it runs on the GPU machine too.
//
//   check_networks --data DIR --device cpu|cuda --precision fp32|fp16 [--network NAME ...]
//                  [--present]
//
// DIR/networks.txt lists the networks; DIR/<precision>/<network>/ holds one network converted to
// that precision (model.jet), its inputs and ONNX Runtime's outputs (.npy) and manifest.txt
// (prepare.py writes them; docs/networks.md has the format). Without --network every listed
// network is checked, and a missing directory fails (with --present it is skipped, saying so, and
// no network at all fails). Rules (docs/networks.md):
//   fp32: every output, max|ours - ref| <= tol * max(1, max|ref|); tol 1e-4 on CPU, 1e-3 on CUDA.
//   classifiers (every precision): per row, our top-1 class is ORT's, or ORT's logits of the two
//     classes differ by at most `tie` * max(1, max|ref row|) (a near tie; tie = tol for fp32,
//     1e-2 for fp16). Fashion-MNIST: also the accuracy on its labels within 0.001 of PyTorch's.
//   BlazeFace (every precision): an anchor's detection is sigmoid(score) > 0.75. Anchors where ORT
//     is sure (score > 0.8) must be detected by us with box IoU > 0.9 against ORT's box; anchors
//     where ORT is sure there is nothing (score < 0.7) must not be; anchors both detect must have
//     IoU > 0.9; and ORT must detect at least one face (else the test says nothing).
//   OCR (every precision): top-1 per time step as for classifiers, and the greedy CTC decoding
//     (best class per step, repeats merged, blank 0 dropped) gives ORT's class sequence exactly.
//   line segments (M-LSD, every precision): a cell holds a segment when its score > the
//     manifest's threshold. Every cell where ORT is sure (score > threshold + 0.02) has a segment
//     of ours in it or a neighbouring cell (the peak suppression may move a peak by one cell
//     between near-equal neighbours); every segment of ours has one of ORT's (score > threshold -
//     0.02) there or next to it; segments in the same cell have each endpoint within 1 input
//     pixel plus 1% of its distance from the cell (ORT's) of ORT's; and ORT finds a segment.
// Prints one line per check and exits 0 only when every check of every network passed.
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli_common.h"
#include "jet/runtime.h"
#include "npy.h"

namespace {

using jet::Status;
using jet::StatusCode;
using jet::tools::HostArray;

const char kUsage[] =
    "usage: check_networks --data DIR --device cpu|cuda --precision fp32|fp16 [--network NAME ...]\n"
    "                      [--present]\n"
    "  --data       the prepared networks (prepare.py's data directory)\n"
    "  --network    check only this network (repeatable); default: all of DIR/networks.txt\n"
    "  --present    skip networks whose DIR/<precision>/<network> is absent (carried in parts);\n"
    "               fails when none is present\n";

const double kBlazeThreshold = 0.75;   // MediaPipe's minimum detection score
const double kBlazeSure = 0.8;         // ORT scores above: must be detected
const double kBlazeSureNot = 0.7;      // ORT scores below: must not be detected
const double kBlazeMinIou = 0.9;
const double kFaceMargin = 0.05;        // faces: ORT scores this far above the threshold must be
                                       // detected, this far below must not be
const double kFaceMinIou = 0.9;
const double kFp16Tie = 1e-2;          // relative logit gap under which fp16 may swap top-1
const double kAccuracyTolerance = 0.001;
const double kLineMargin = 0.02;       // scores this close to the line threshold may go either way
const double kLineMaxShift = 1.0;      // endpoint difference allowed, input pixels, plus
const double kLineRelShift = 0.01;     // this fraction of the endpoint's distance from its cell

struct Options {
  std::string data_dir;
  jet::Backend backend = jet::Backend::CPU;
  bool fp16 = false;
  std::vector<std::string> networks;
  bool present_only = false;  // --present: skip listed networks whose directory is absent
};

struct NamedFile {
  std::string name;  // graph tensor name
  std::string file;  // relative to the network's directory
};

// Score output, box output (by index into Manifest::outputs), cells per row, anchors per cell.
struct AnchorLayer {
  int score_output = -1, box_output = -1, cells = 0, anchors = 0;
};

struct Manifest {
  std::string kind;    // classifier | blazeface | fashion_mnist | ocr | lines | faces
  std::string precision;  // fp32 | fp16: what model.jet was converted to
  std::string source;  // what the network is, for the report
  int64_t batch = 0;   // > 0: inputs and references hold several batches of this size
  std::vector<NamedFile> inputs, outputs;
  std::string convert_error;  // jet-convert's error when it refused the network
  double pytorch_accuracy = -1;
  std::string labels;
  std::vector<AnchorLayer> anchor_layers;
  double image_size = 0;
  std::string text;    // ocr: what the image reads (for the report)
  int line_scores = -1, line_offsets = -1;  // lines: output indices
  double line_threshold = 0;
  int face_scores = -1, face_boxes = -1;  // faces: output indices
  double face_threshold = 0, face_nms_iou = 0;
};

// One network's checks: each printed as it is made, failures counted.
struct Verdict {
  int failures = 0;
  void check(bool ok, const std::string& what) {
    std::printf("  %s %s\n", ok ? "ok  " : "FAIL", what.c_str());
    if (!ok) ++failures;
  }
};

std::string fmt(const char* format, double a, double b = 0, double c = 0, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a, b, c, d);
  return buf;
}

bool read_manifest(const std::string& path, Manifest* m, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot be read (was the network prepared and carried here?)";
    return false;
  }
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::istringstream words(line);
    std::string key;
    if (!(words >> key) || key[0] == '#') continue;
    bool ok = true;
    if (key == "kind") {
      ok = static_cast<bool>(words >> m->kind);
    } else if (key == "precision") {
      ok = static_cast<bool>(words >> m->precision);
    } else if (key == "source") {
      std::getline(words >> std::ws, m->source);
    } else if (key == "batch") {
      ok = static_cast<bool>(words >> m->batch) && m->batch > 0;
    } else if (key == "input" || key == "output") {
      NamedFile f;
      ok = static_cast<bool>(words >> f.name >> f.file);
      (key == "input" ? m->inputs : m->outputs).push_back(f);
    } else if (key == "convert_error") {
      std::getline(words >> std::ws, m->convert_error);
      ok = !m->convert_error.empty();
    } else if (key == "pytorch_accuracy") {
      ok = static_cast<bool>(words >> m->pytorch_accuracy);
    } else if (key == "labels") {
      ok = static_cast<bool>(words >> m->labels);
    } else if (key == "anchors") {
      AnchorLayer a;
      ok = static_cast<bool>(words >> a.score_output >> a.box_output >> a.cells >> a.anchors);
      m->anchor_layers.push_back(a);
    } else if (key == "image_size") {
      ok = static_cast<bool>(words >> m->image_size);
    } else if (key == "text") {
      std::getline(words >> std::ws, m->text);
    } else if (key == "lines") {
      ok = static_cast<bool>(words >> m->line_scores >> m->line_offsets >> m->line_threshold);
    } else if (key == "faces") {
      ok = static_cast<bool>(words >> m->face_scores >> m->face_boxes >> m->face_threshold >>
                             m->face_nms_iou);
    }  // unknown keys are ignored: newer manifests stay readable
    if (!ok) {
      *error = path + ":" + std::to_string(line_no) + ": malformed line '" + line + "'";
      return false;
    }
  }
  for (const AnchorLayer& a : m->anchor_layers) {
    const int n = static_cast<int>(m->outputs.size());
    if (a.score_output < 0 || a.score_output >= n || a.box_output < 0 || a.box_output >= n ||
        a.cells <= 0 || a.anchors <= 0) {
      *error = path + ": bad anchors line";
      return false;
    }
  }
  const int outputs = static_cast<int>(m->outputs.size());
  const bool lines_ok = m->line_scores >= 0 && m->line_scores < outputs && m->line_offsets >= 0 &&
                        m->line_offsets < outputs && m->image_size > 0;
  if (m->kind == "lines" && !lines_ok) {
    *error = path + ": kind lines needs a lines line with valid output indices and image_size";
    return false;
  }
  const bool faces_ok = m->face_scores >= 0 && m->face_scores < outputs && m->face_boxes >= 0 &&
                        m->face_boxes < outputs && m->face_threshold > 0 && m->face_nms_iou > 0;
  if (m->kind == "faces" && !faces_ok) {
    *error = path + ": kind faces needs a faces line with valid output indices and thresholds";
    return false;
  }
  if (m->kind.empty() || m->inputs.empty() || m->outputs.empty()) {
    *error = path + ": needs kind, input and output lines";
    return false;
  }
  return true;
}

// Rows of `n` values: the largest value's index.
int argmax(const float* row, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (row[i] > row[best]) best = i;
  return static_cast<int>(best);
}

double max_abs(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, static_cast<double>(std::fabs(x)));
  return m;
}

// max|a - b| / max(1, max|b|); infinity when any value is not finite (NaN compares false).
double relative_error(const std::vector<float>& ours, const std::vector<float>& ref) {
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = std::fabs(static_cast<double>(ours[i]) - ref[i]);
    if (!(d <= worst)) worst = std::isfinite(d) ? d : HUGE_VAL;
  }
  return worst / std::max(1.0, max_abs(ref));
}

// Top-1 per row of a [rows, classes] output, with the near-tie allowance described at the top.
void check_top1(Verdict* v, const std::string& what, const std::vector<float>& ours,
                const std::vector<float>& ref, const std::vector<int64_t>& dims, double tie) {
  if (dims.size() < 2 || dims.back() <= 0) {
    v->check(false, what + ": top-1 needs a [rows..., classes] output");
    return;
  }
  const int64_t classes = dims.back();
  const int64_t rows = static_cast<int64_t>(ref.size()) / classes;
  int64_t agree = 0, near_ties = 0, wrong = 0;
  std::string first_wrong;
  for (int64_t r = 0; r < rows; ++r) {
    const float* o = ours.data() + r * classes;
    const float* f = ref.data() + r * classes;
    const int ot = argmax(o, classes), rt = argmax(f, classes);
    if (ot == rt) {
      ++agree;
      continue;
    }
    std::vector<float> row(f, f + classes);
    const double scale = std::max(1.0, max_abs(row));
    if (static_cast<double>(f[rt]) - f[ot] <= tie * scale) {
      ++near_ties;
    } else {
      if (wrong == 0) {
        first_wrong = " (row " + std::to_string(r) + ": ours " + std::to_string(ot) + ", ORT " +
                      std::to_string(rt) + fmt(", ORT logits %.5g vs %.5g)", f[ot], f[rt]);
      }
      ++wrong;
    }
  }
  v->check(wrong == 0, what + ": top-1 " + std::to_string(agree) + "/" + std::to_string(rows) +
                           " agree, " + std::to_string(near_ties) + " near ties (gap <= " +
                           fmt("%g", tie) + " relative), " + std::to_string(wrong) + " differ" +
                           first_wrong);
}

// Accuracy of [rows, classes] logits on the labels.
double accuracy(const std::vector<float>& logits, int64_t classes, const std::vector<float>& labels) {
  int64_t correct = 0;
  for (size_t r = 0; r < labels.size(); ++r)
    if (argmax(logits.data() + r * classes, classes) == static_cast<int>(labels[r])) ++correct;
  return labels.empty() ? 0.0 : static_cast<double>(correct) / static_cast<double>(labels.size());
}

struct Box {
  double cx, cy, w, h;
};

double iou(const Box& a, const Box& b) {
  const double ix = std::min(a.cx + a.w / 2, b.cx + b.w / 2) - std::max(a.cx - a.w / 2, b.cx - b.w / 2);
  const double iy = std::min(a.cy + a.h / 2, b.cy + b.h / 2) - std::max(a.cy - a.h / 2, b.cy - b.h / 2);
  if (!(a.w > 0 && a.h > 0 && b.w > 0 && b.h > 0)) return 0;
  const double inter = std::max(0.0, ix) * std::max(0.0, iy);
  return inter / (a.w * a.h + b.w * b.h - inter);
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-std::max(-80.0, std::min(80.0, x)))); }

// The anchor's box as the BlazeFace post-processing decodes it (keijiro's Postprocess1): the
// anchor is the cell centre, offsets and sizes are in input pixels.
Box decode(const std::vector<float>& boxes, int64_t anchor_index, int cell_x, int cell_y, int cells,
           double image_size) {
  const float* b = boxes.data() + anchor_index * 16;
  return {(cell_x + 0.5) / cells + b[0] / image_size, (cell_y + 0.5) / cells + b[1] / image_size,
          b[2] / image_size, b[3] / image_size};
}

void check_boxes(Verdict* v, const Manifest& m, const std::vector<std::vector<float>>& ours,
                 const std::vector<std::vector<float>>& ref) {
  int ref_sure = 0, both = 0, missed = 0, spurious = 0, moved = 0;
  double worst_iou = 1;
  for (const AnchorLayer& layer : m.anchor_layers) {
    const int64_t count = static_cast<int64_t>(layer.cells) * layer.cells * layer.anchors;
    if (static_cast<int64_t>(ref[layer.score_output].size()) != count ||
        static_cast<int64_t>(ref[layer.box_output].size()) != count * 16) {
      v->check(false, "BlazeFace: output sizes do not match the anchors line");
      return;
    }
    for (int y = 0; y < layer.cells; ++y) {
      for (int x = 0; x < layer.cells; ++x) {
        for (int a = 0; a < layer.anchors; ++a) {
          const int64_t i = (static_cast<int64_t>(y) * layer.cells + x) * layer.anchors + a;
          const double rs = sigmoid(ref[layer.score_output][i]);
          const double os = sigmoid(ours[layer.score_output][i]);
          const bool ref_found = rs > kBlazeThreshold, our_found = os > kBlazeThreshold;
          if (rs > kBlazeSure) ++ref_sure;
          if (rs > kBlazeSure && !our_found) ++missed;
          if (rs < kBlazeSureNot && our_found) ++spurious;
          if (ref_found && our_found) {
            ++both;
            const double overlap = iou(decode(ours[layer.box_output], i, x, y, layer.cells, m.image_size),
                                       decode(ref[layer.box_output], i, x, y, layer.cells, m.image_size));
            worst_iou = std::min(worst_iou, overlap);
            if (!(overlap > kBlazeMinIou)) ++moved;
          }
        }
      }
    }
  }
  v->check(ref_sure > 0, "BlazeFace: ORT detects " + std::to_string(ref_sure) +
                             " anchors with score > 0.8 (the input must show a face)");
  v->check(missed == 0 && spurious == 0 && moved == 0,
           "BlazeFace: " + std::to_string(both) + " detections in both, " + std::to_string(missed) +
               " missed, " + std::to_string(spurious) + " spurious, " + std::to_string(moved) +
               fmt(" with IoU <= 0.9 (worst IoU %.4f)", worst_iou));
}

// Greedy CTC decoding of [steps, classes] probabilities: the best class per step, repeats merged,
// the blank (class 0) dropped.
std::vector<int> ctc_classes(const std::vector<float>& p, int64_t classes) {
  std::vector<int> out;
  int previous = -1;
  for (size_t r = 0; classes > 0 && (r + 1) * static_cast<size_t>(classes) <= p.size(); ++r) {
    const int c = argmax(p.data() + r * static_cast<size_t>(classes), classes);
    if (c != 0 && c != previous) out.push_back(c);
    previous = c;
  }
  return out;
}

void check_ctc(Verdict* v, const Manifest& m, const std::vector<float>& ours,
               const std::vector<float>& ref, const std::vector<int64_t>& dims) {
  const int64_t classes = dims.empty() ? 0 : dims.back();
  const std::vector<int> a = ctc_classes(ours, classes), b = ctc_classes(ref, classes);
  size_t same = 0;
  while (same < a.size() && same < b.size() && a[same] == b[same]) ++same;
  v->check(!b.empty() && a == b,
           "OCR: greedy CTC decoding gives " + std::to_string(a.size()) + " characters, ORT's " +
               std::to_string(b.size()) + ", the first " + std::to_string(same) +
               " equal (ORT reads '" + m.text + "')");
}

void check_lines(Verdict* v, const Manifest& m, const std::vector<std::vector<float>>& ours,
                 const std::vector<std::vector<float>>& ref,
                 const std::vector<std::vector<int64_t>>& dims) {
  const std::vector<int64_t>& sd = dims[m.line_scores];
  if (sd.size() != 4 || sd[0] != 1 || sd[3] != 1 ||
      ref[m.line_offsets].size() != ref[m.line_scores].size() * 4) {
    v->check(false, "lines: scores must be [1, H, W, 1] and offsets [1, H, W, 4]");
    return;
  }
  const int64_t h = sd[1], w = sd[2];
  const std::vector<float>& os = ours[m.line_scores];
  const std::vector<float>& rs = ref[m.line_scores];
  const double t = m.line_threshold, scale = m.image_size / static_cast<double>(w);
  // Whether `s` has a score above `limit` at (y, x) or a neighbouring cell.
  auto near = [&](const std::vector<float>& s, int64_t y, int64_t x, double limit) {
    for (int64_t yy = std::max<int64_t>(0, y - 1); yy <= std::min(h - 1, y + 1); ++yy)
      for (int64_t xx = std::max<int64_t>(0, x - 1); xx <= std::min(w - 1, x + 1); ++xx)
        if (s[static_cast<size_t>(yy * w + xx)] > limit) return true;
    return false;
  };
  int ref_sure = 0, ref_found = 0, our_found = 0, missed = 0, spurious = 0, moved = 0, shifted = 0;
  int same_cell = 0;
  double worst_shift = 0, worst_length = 0, worst_ratio = 0;
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      const size_t i = static_cast<size_t>(y * w + x);
      const bool r = rs[i] > t, o = os[i] > t;
      ref_found += r ? 1 : 0;
      our_found += o ? 1 : 0;
      if (rs[i] > t + kLineMargin) {
        ++ref_sure;
        if (!o && near(os, y, x, t)) ++moved;
        if (!o && !near(os, y, x, t)) ++missed;
      }
      if (o && !near(rs, y, x, t - kLineMargin)) ++spurious;
      if (r && o) {
        ++same_cell;
        // Each endpoint (offsets 0-1 and 2-3 from the cell): distance in input pixels, allowed
        // kLineMaxShift plus kLineRelShift of its distance from the cell.
        for (int e = 0; e < 2; ++e) {
          const float* a = ours[m.line_offsets].data() + 4 * i + 2 * e;
          const float* b = ref[m.line_offsets].data() + 4 * i + 2 * e;
          const double d =
              std::hypot(static_cast<double>(a[0]) - b[0], static_cast<double>(a[1]) - b[1]) * scale;
          const double limit = kLineMaxShift + kLineRelShift * std::hypot(b[0], b[1]) * scale;
          const double ratio = std::isfinite(d) ? d / limit : HUGE_VAL;
          if (ratio > worst_ratio) {
            worst_ratio = ratio;
            worst_shift = d;
            worst_length = std::hypot(b[0], b[1]) * scale;
          }
          if (!(d <= limit)) ++shifted;
        }
      }
    }
  }
  v->check(ref_sure > 0, "lines: ORT finds " + std::to_string(ref_found) + " segments, " +
                             std::to_string(ref_sure) + fmt(" with score > %.2f", t + kLineMargin));
  v->check(missed == 0 && spurious == 0 && shifted == 0,
           "lines: ours " + std::to_string(our_found) + ", in the same cell as ORT's " +
               std::to_string(same_cell) + ", moved to a neighbour " + std::to_string(moved) +
               ", missed " + std::to_string(missed) + ", spurious " + std::to_string(spurious) +
               ", endpoints moved too far " + std::to_string(shifted) +
               fmt(" (worst %.3f px of %.3f allowed, %.1f px from its cell)", worst_shift,
                   worst_ratio > 0 ? worst_shift / worst_ratio : 0.0, worst_length));
}

// A face detector's anchors per image: scores [images, anchors, 2] (column 1: face) and boxes
// [images, anchors, 4], corners x1, y1, x2, y2 normalized to the image (decoded in the graph).
Box face_box(const std::vector<float>& boxes, int64_t anchor) {
  const float* b = boxes.data() + anchor * 4;
  return {(static_cast<double>(b[0]) + b[2]) / 2, (static_cast<double>(b[1]) + b[3]) / 2,
          static_cast<double>(b[2]) - b[0], static_cast<double>(b[3]) - b[1]};
}

// Greedy non-maximum suppression of one image's anchors [first, first + count): those with a face
// score above `threshold`, best first, each dropping the later ones that overlap it with IoU above
// `max_iou`. The kept anchors' indices.
std::vector<int64_t> face_nms(const std::vector<float>& scores, const std::vector<float>& boxes,
                              int64_t first, int64_t count, double threshold, double max_iou) {
  std::vector<int64_t> candidates, kept;
  for (int64_t a = first; a < first + count; ++a)
    if (scores[2 * a + 1] > threshold) candidates.push_back(a);
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](int64_t x, int64_t y) { return scores[2 * x + 1] > scores[2 * y + 1]; });
  for (int64_t a : candidates) {
    bool suppressed = false;
    for (int64_t k : kept) suppressed = suppressed || iou(face_box(boxes, a), face_box(boxes, k)) > max_iou;
    if (!suppressed) kept.push_back(a);
  }
  return kept;
}

void check_faces(Verdict* v, const Manifest& m, const std::vector<std::vector<float>>& ours,
                 const std::vector<std::vector<float>>& ref,
                 const std::vector<std::vector<int64_t>>& dims) {
  const std::vector<int64_t>& sd = dims[m.face_scores];
  if (sd.size() != 3 || sd[2] != 2 || dims[m.face_boxes].size() != 3 ||
      ref[m.face_boxes].size() != ref[m.face_scores].size() * 2) {
    v->check(false, "faces: scores must be [images, anchors, 2] and boxes [images, anchors, 4]");
    return;
  }
  const int64_t images = sd[0], anchors = sd[1];
  const std::vector<float>& os = ours[m.face_scores];
  const std::vector<float>& rs = ref[m.face_scores];
  const std::vector<float>& ob = ours[m.face_boxes];
  const std::vector<float>& rb = ref[m.face_boxes];
  const double t = m.face_threshold;
  // Anchors: ORT's sure detections are ours, ORT's sure non-detections are not, and an anchor
  // both detect has nearly the same box.
  int images_with_face = 0, both = 0, missed = 0, spurious = 0, moved = 0;
  double worst_iou = 1;
  // Faces after non-maximum suppression: as many as ORT's, each on one of ORT's.
  int ref_faces = 0, our_faces = 0, unmatched = 0;
  double worst_face_iou = 1;
  for (int64_t img = 0; img < images; ++img) {
    int sure = 0;
    for (int64_t a = img * anchors; a < (img + 1) * anchors; ++a) {
      const double r = rs[static_cast<size_t>(2 * a + 1)], o = os[static_cast<size_t>(2 * a + 1)];
      if (r > t + kFaceMargin) ++sure;
      if (r > t + kFaceMargin && !(o > t)) ++missed;
      if (r < t - kFaceMargin && o > t) ++spurious;
      if (r > t && o > t) {
        ++both;
        const double overlap = iou(face_box(ob, a), face_box(rb, a));
        worst_iou = std::min(worst_iou, overlap);
        if (!(overlap > kFaceMinIou)) ++moved;
      }
    }
    if (sure > 0) ++images_with_face;
    const std::vector<int64_t> ref_kept = face_nms(rs, rb, img * anchors, anchors, t, m.face_nms_iou);
    const std::vector<int64_t> our_kept = face_nms(os, ob, img * anchors, anchors, t, m.face_nms_iou);
    ref_faces += static_cast<int>(ref_kept.size());
    our_faces += static_cast<int>(our_kept.size());
    for (int64_t a : our_kept) {
      double best = 0;
      for (int64_t k : ref_kept) best = std::max(best, iou(face_box(ob, a), face_box(rb, k)));
      worst_face_iou = std::min(worst_face_iou, best);
      if (!(best > kFaceMinIou)) ++unmatched;
    }
  }
  v->check(images_with_face == images,
           "faces: ORT detects a face (an anchor with score > " + fmt("%.2f", t + kFaceMargin) +
               ") in " + std::to_string(images_with_face) + " of " + std::to_string(images) +
               " images (each input must show a face)");
  v->check(missed == 0 && spurious == 0 && moved == 0,
           "faces: " + std::to_string(both) + " anchors detected in both, " + std::to_string(missed) +
               " missed, " + std::to_string(spurious) + " spurious, " + std::to_string(moved) +
               fmt(" with IoU <= 0.9 (worst IoU %.4f)", worst_iou));
  v->check(our_faces == ref_faces && unmatched == 0,
           "faces after non-maximum suppression (IoU " + fmt("%g", m.face_nms_iou) + "): ours " +
               std::to_string(our_faces) + ", ORT's " + std::to_string(ref_faces) + ", " +
               std::to_string(unmatched) + fmt(" without one of ORT's at IoU > 0.9 (worst %.4f)",
                                               worst_face_iou));
}

// Checks one network; returns its number of failed checks.
int check_network(const Options& opt, const std::string& name) {
  Verdict v;
  const char* precision = opt.fp16 ? "fp16" : "fp32";
  const std::string dir = opt.data_dir + "/" + precision + "/" + name;
  std::printf("%s (%s, %s):\n", name.c_str(), jet::tools::backend_name(opt.backend), precision);
  Manifest m;
  std::string error;
  if (!read_manifest(dir + "/manifest.txt", &m, &error)) {
    v.check(false, error);
    return v.failures;
  }
  if (!m.source.empty()) std::printf("  source: %s\n", m.source.c_str());
  if (m.precision != precision) {
    v.check(false, dir + "/manifest.txt: precision '" + m.precision + "', expected " + precision);
    return v.failures;
  }
  if (!m.convert_error.empty()) {
    v.check(false, "jet-convert failed: " + m.convert_error);
    return v.failures;
  }

  std::shared_ptr<jet::Engine> engine;
  std::unique_ptr<jet::ExecutionContext> ctx;
  const std::string model = dir + "/model.jet";
  Status st = jet::tools::load_engine(model, opt.backend, &engine, &ctx);
  if (!st.ok()) {
    v.check(false, "load " + model + ": " + st.to_string());
    return v.failures;
  }

  // Inputs (whole files) and their tensors.
  std::vector<HostArray> inputs(m.inputs.size());
  std::vector<int> input_index(m.inputs.size());
  int64_t runs = 1;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    st = jet::tools::read_npy(dir + "/" + m.inputs[i].file, &inputs[i]);
    input_index[i] = engine->find_tensor(m.inputs[i].name);
    if (st.ok() && (input_index[i] < 0 || engine->tensor(input_index[i]).role != jet::TensorRole::INPUT))
      st = Status(StatusCode::BAD_PARAM, "the model has no input '" + m.inputs[i].name + "'");
    if (st.ok() && m.batch > 0) {
      const int64_t total = inputs[i].dims.empty() ? 0 : inputs[i].dims[0];
      if (total % m.batch != 0 || total == 0)
        st = Status(StatusCode::BAD_PARAM, m.inputs[i].file + ": dim 0 is not a multiple of the batch");
      runs = total / m.batch;
    }
    if (!st.ok()) {
      v.check(false, st.to_string());
      return v.failures;
    }
  }
  std::vector<int> output_index(m.outputs.size());
  for (size_t o = 0; o < m.outputs.size(); ++o) {
    output_index[o] = engine->find_tensor(m.outputs[o].name);
    if (output_index[o] < 0 || engine->tensor(output_index[o]).role != jet::TensorRole::OUTPUT) {
      v.check(false, "the model has no output '" + m.outputs[o].name + "'");
      return v.failures;
    }
  }

  // Run batch by batch, appending each output's values.
  std::vector<std::vector<float>> ours(m.outputs.size());
  for (int64_t r = 0; r < runs && st.ok(); ++r) {
    for (size_t i = 0; i < m.inputs.size() && st.ok(); ++i) {
      HostArray part;
      const HostArray& whole = inputs[i];
      if (m.batch > 0) {
        part.dims = whole.dims;
        part.dims[0] = m.batch;
        const size_t per_run = whole.values.size() / static_cast<size_t>(runs);
        part.values.assign(whole.values.begin() + static_cast<std::ptrdiff_t>(r * per_run),
                           whole.values.begin() + static_cast<std::ptrdiff_t>((r + 1) * per_run));
      }
      std::vector<uint8_t> bytes;
      const jet::TensorInfo& info = engine->tensor(input_index[i]);
      st = jet::tools::array_to_tensor_bytes(m.batch > 0 ? part : whole, info, m.inputs[i].file, &bytes);
      if (st.ok()) st = jet::tools::copy_to_tensor(opt.backend, ctx->tensor_data(input_index[i]), bytes.data(), bytes.size());
    }
    if (st.ok()) st = ctx->run(nullptr);
    if (st.ok()) st = jet::tools::synchronize(opt.backend, nullptr);
    for (size_t o = 0; o < m.outputs.size() && st.ok(); ++o) {
      const jet::TensorInfo& info = engine->tensor(output_index[o]);
      std::vector<uint8_t> bytes(info.bytes);
      std::vector<float> values;
      st = jet::tools::copy_from_tensor(opt.backend, bytes.data(), ctx->tensor_data(output_index[o]), bytes.size());
      if (st.ok()) jet::tools::tensor_bytes_to_packed(info, bytes, nullptr, &values);
      ours[o].insert(ours[o].end(), values.begin(), values.end());
    }
  }
  if (!st.ok()) {
    v.check(false, "run: " + st.to_string());
    return v.failures;
  }

  // Compare.
  const double tol = opt.backend == jet::Backend::CPU ? 1e-4 : 1e-3;
  std::vector<std::vector<float>> refs(m.outputs.size());
  std::vector<std::vector<int64_t>> ref_dims(m.outputs.size());
  for (size_t o = 0; o < m.outputs.size(); ++o) {
    HostArray ref;
    st = jet::tools::read_npy(dir + "/" + m.outputs[o].file, &ref);
    if (st.ok() && ref.values.size() != ours[o].size()) {
      st = Status(StatusCode::BAD_PARAM, m.outputs[o].file + ": " + std::to_string(ref.values.size()) +
                                             " values, the model gives " + std::to_string(ours[o].size()));
    }
    if (!st.ok()) {
      v.check(false, st.to_string());
      return v.failures;
    }
    refs[o] = std::move(ref.values);
    ref_dims[o] = ref.dims;
    const double err = relative_error(ours[o], refs[o]);
    const std::string what = m.outputs[o].name + fmt(": max|ours - ORT| / max(1, max|ORT|) = %.3e (max|ORT| %.4g)", err, max_abs(refs[o]));
    if (opt.fp16) {
      std::printf("  info %s\n", what.c_str());  // fp16 is judged by the rules below
    } else {
      v.check(err <= tol, what + fmt(", limit %.0e", tol));
    }
  }

  const double tie = opt.fp16 ? kFp16Tie : tol;
  if (m.kind == "classifier" || m.kind == "fashion_mnist" || m.kind == "ocr") {
    check_top1(&v, m.outputs[0].name, ours[0], refs[0], ref_dims[0], tie);
  }
  if (m.kind == "fashion_mnist") {
    HostArray labels;
    st = jet::tools::read_npy(dir + "/" + m.labels, &labels);
    const int64_t classes = ref_dims[0].size() == 2 ? ref_dims[0][1] : 0;
    if (!st.ok() || classes == 0 || labels.values.size() * static_cast<size_t>(classes) != ours[0].size()) {
      v.check(false, "labels " + m.labels + ": " + (st.ok() ? "do not match the output" : st.to_string()));
    } else {
      const double ours_acc = accuracy(ours[0], classes, labels.values);
      const double ort_acc = accuracy(refs[0], classes, labels.values);
      v.check(std::fabs(ours_acc - m.pytorch_accuracy) <= kAccuracyTolerance,
              fmt("accuracy on %.0f test images: jetinfer %.4f, PyTorch %.4f, ORT %.4f (limit 0.001)",
                  static_cast<double>(labels.values.size()), ours_acc, m.pytorch_accuracy, ort_acc));
    }
  }
  if (m.kind == "blazeface") check_boxes(&v, m, ours, refs);
  if (m.kind == "ocr") check_ctc(&v, m, ours[0], refs[0], ref_dims[0]);
  if (m.kind == "lines") check_lines(&v, m, ours, refs, ref_dims);
  if (m.kind == "faces") check_faces(&v, m, ours, refs, ref_dims);
  if (m.kind != "classifier" && m.kind != "fashion_mnist" && m.kind != "blazeface" &&
      m.kind != "ocr" && m.kind != "lines" && m.kind != "faces")
    v.check(false, "unknown kind '" + m.kind + "'");
  return v.failures;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  bool have_device = false, have_precision = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--data" && has_value) {
      opt.data_dir = argv[++i];
    } else if (arg == "--device" && has_value) {
      if (!jet::tools::parse_backend(argv[++i], &opt.backend))
        return jet::tools::usage_error("check_networks", kUsage, std::string("bad --device ") + argv[i]);
      have_device = true;
    } else if (arg == "--precision" && has_value) {
      const std::string p = argv[++i];
      if (p != "fp32" && p != "fp16") return jet::tools::usage_error("check_networks", kUsage, "bad --precision " + p);
      opt.fp16 = p == "fp16";
      have_precision = true;
    } else if (arg == "--present") {
      opt.present_only = true;
    } else if (arg == "--network" && has_value) {
      opt.networks.push_back(argv[++i]);
    } else {
      return jet::tools::usage_error("check_networks", kUsage, "unexpected argument " + arg);
    }
  }
  if (opt.data_dir.empty() || !have_device || !have_precision)
    return jet::tools::usage_error("check_networks", kUsage, "--data, --device and --precision are required");

  const char* precision = opt.fp16 ? "fp16" : "fp32";
  if (opt.networks.empty()) {
    std::ifstream list(opt.data_dir + "/networks.txt");
    if (!list) {
      std::fprintf(stderr, "check_networks: %s/networks.txt cannot be read: run the networks.prepare test "
                           "(tests/networks/prepare.py) first\n", opt.data_dir.c_str());
      return 1;
    }
    std::string name;
    while (list >> name) opt.networks.push_back(name);
  }
  int checked = 0, failed = 0;
  std::string failed_names, absent_names;
  for (const std::string& name : opt.networks) {
    struct stat st;
    const std::string dir = opt.data_dir + "/" + precision + "/" + name;
    if (opt.present_only && stat(dir.c_str(), &st) != 0) {
      absent_names += " " + name;
      continue;
    }
    ++checked;
    if (check_network(opt, name) > 0) {
      ++failed;
      failed_names += " " + name;
    }
  }
  if (!absent_names.empty()) std::printf("not present here (--present):%s\n", absent_names.c_str());
  // "networks <device> <precision>: ..." is the line scripts/gpu-check.sh collects.
  std::printf("networks %s %s: %d of %d passed%s%s\n", jet::tools::backend_name(opt.backend),
              precision, checked - failed, checked, failed ? "; failed:" : "", failed_names.c_str());
  if (checked == 0) std::printf("check_networks: no network to check in %s/%s\n", opt.data_dir.c_str(), precision);
  return failed == 0 && checked > 0 ? 0 : 1;
}
