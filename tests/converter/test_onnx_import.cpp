// The ONNX importer (onnx_import.h): models are built here with libonnx-dev's protobuf classes
// (onnx_builder.h), imported, and checked twice: the IR (op types, attributes, shapes) and what it
// computes, by running the imported graph through the kernels (interpret.h) against float64
// references written here. Also: opset differences, the three sources of weights, dynamic dims,
// the list of unsupported ops, and malformed files (each an error naming the problem, never a
// crash).
#include <doctest/doctest.h>

#ifndef JET_HAVE_ONNX_IMPORT

TEST_CASE("onnx import: not built (libonnx-dev and protobuf not found at configure time)") {
  MESSAGE("the ONNX importer is not part of this build");
}

#else

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "interpret.h"
#include "ir.h"
#include "onnx_builder.h"
#include "onnx_import.h"
#include "passes.h"
#include "write_model.h"

using namespace jet;
using namespace jet::ir;
using jet::test::OnnxModel;

namespace {

bool contains(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

std::vector<float> random_values(size_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

Status import_model(const OnnxModel& m, Graph* g, ImportReport* report = nullptr,
                    const ImportOptions& opt = ImportOptions()) {
  const std::string bytes = m.bytes();
  return import_onnx_bytes(bytes.data(), bytes.size(), opt, g, report);
}

Graph import_ok(const OnnxModel& m, ImportReport* report = nullptr, const ImportOptions& opt = ImportOptions()) {
  Graph g;
  const Status st = import_model(m, &g, report, opt);
  INFO(st.to_string());
  REQUIRE(st.ok());
  return g;
}

std::vector<std::vector<float>> run(const Graph& g, const std::vector<std::vector<float>>& inputs) {
  std::vector<std::vector<float>> out;
  const Status st = jet::test::interpret(g, inputs, &out);
  INFO(st.to_string());
  REQUIRE(st.ok());
  return out;
}

int count_op(const Graph& g, OpType op) {
  return static_cast<int>(std::count_if(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.op == op; }));
}

const Node& only_node(const Graph& g, OpType op) {
  REQUIRE(count_op(g, op) == 1);
  return *std::find_if(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.op == op; });
}

int output_tensor(const Graph& g, size_t k = 0) {
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (g.tensors[t].kind == TensorKind::OUTPUT && k-- == 0) return static_cast<int>(t);
  }
  return -1;
}

// max |got - want| / max(1, max |want|)
double rel_error(const std::vector<float>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return INFINITY;
  double scale = 1, err = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    scale = std::max(scale, std::fabs(want[i]));
    err = std::max(err, std::fabs(static_cast<double>(got[i]) - want[i]));
    if (!std::isfinite(got[i])) err = INFINITY;
  }
  return err / scale;
}

bool any_note(const ImportReport& r, const std::string& sub) {
  return std::any_of(r.notes.begin(), r.notes.end(), [&](const std::string& n) { return contains(n, sub); });
}

// ---- float64 references -------------------------------------------------------------------------

// 2-D cross-correlation, NCHW, filters K x C/group x R x S, pads {top, left, bottom, right}.
std::vector<double> ref_conv2d(const std::vector<float>& x, const std::vector<int64_t>& xd, const std::vector<float>& w,
                               const std::vector<int64_t>& wd, const std::vector<float>& bias, int64_t group,
                               const int64_t pads[4], const int64_t strides[2], const int64_t dil[2],
                               std::vector<int64_t>* yd) {
  const int64_t n = xd[0], c = xd[1], h = xd[2], wi = xd[3], k = wd[0], cg = wd[1], r = wd[2], s = wd[3];
  const int64_t oh = (h + pads[0] + pads[2] - dil[0] * (r - 1) - 1) / strides[0] + 1;
  const int64_t ow = (wi + pads[1] + pads[3] - dil[1] * (s - 1) - 1) / strides[1] + 1;
  *yd = {n, k, oh, ow};
  std::vector<double> y(static_cast<size_t>(n * k * oh * ow));
  const int64_t kg = k / group;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < k; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = bias.empty() ? 0.0 : bias[o];
          const int64_t g0 = (o / kg) * cg;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t u = 0; u < r; ++u)
              for (int64_t v = 0; v < s; ++v) {
                const int64_t yy = i * strides[0] - pads[0] + u * dil[0], xx = j * strides[1] - pads[1] + v * dil[1];
                if (yy < 0 || yy >= h || xx < 0 || xx >= wi) continue;
                acc += static_cast<double>(x[((b * c + g0 + ci) * h + yy) * wi + xx]) * w[((o * cg + ci) * r + u) * s + v];
              }
          y[((b * k + o) * oh + i) * ow + j] = acc;
        }
  return y;
}

// Softmax (or log-softmax) over the middle index of an (outer, n, inner) view.
std::vector<double> ref_softmax(const std::vector<float>& x, int64_t outer, int64_t n, int64_t inner, bool log) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double mx = -INFINITY, sum = 0;
      for (int64_t k = 0; k < n; ++k) mx = std::max(mx, static_cast<double>(x[(o * n + k) * inner + i]));
      for (int64_t k = 0; k < n; ++k) sum += std::exp(x[(o * n + k) * inner + i] - mx);
      for (int64_t k = 0; k < n; ++k) {
        const double v = x[(o * n + k) * inner + i] - mx;
        y[(o * n + k) * inner + i] = log ? v - std::log(sum) : std::exp(v) / sum;
      }
    }
  return y;
}

// The element of a row-major tensor of dims `from` that broadcasts to index `idx` of `to`.
double bcast_at(const std::vector<float>& v, const std::vector<int64_t>& from, const std::vector<int64_t>& to,
                const std::vector<int64_t>& idx) {
  int64_t flat = 0;
  const size_t pad = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d) flat = flat * from[d] + (from[d] == 1 ? 0 : idx[d + pad]);
  return v[static_cast<size_t>(flat)];
}

// a op b with numpy broadcasting, in double.
template <typename Op>
std::vector<double> ref_broadcast(const std::vector<float>& a, const std::vector<int64_t>& ad,
                                  const std::vector<float>& b, const std::vector<int64_t>& bd,
                                  const std::vector<int64_t>& out, Op op) {
  int64_t n = 1;
  for (int64_t d : out) n *= d;
  std::vector<double> y(static_cast<size_t>(n));
  std::vector<int64_t> idx(out.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    y[i] = op(bcast_at(a, ad, out, idx), bcast_at(b, bd, out, idx));
    for (size_t d = out.size(); d-- > 0;) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
  return y;
}

std::vector<double> to_double(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

}  // namespace

// ---- numerics against float64 -------------------------------------------------------------------

TEST_CASE("onnx import: Conv with groups, asymmetric pads, strides, dilations and bias matches float64") {
  const std::vector<int64_t> xd = {2, 4, 7, 6}, wd = {6, 2, 3, 3};
  const std::vector<float> x = random_values(2 * 4 * 7 * 6, 1), w = random_values(6 * 2 * 3 * 3, 2),
                           b = random_values(6, 3);
  OnnxModel m(11);
  m.input("x", xd);
  m.initializer("w", wd, w);
  m.initializer("b", {6}, b);
  onnx::NodeProto* n = m.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
  jet::test::attr_int(n, "group", 2);
  jet::test::attr_ints(n, "pads", {1, 0, 2, 1});
  jet::test::attr_ints(n, "strides", {2, 1});
  jet::test::attr_ints(n, "dilations", {1, 2});
  jet::test::attr_ints(n, "kernel_shape", {3, 3});
  m.output("y");
  const Graph g = import_ok(m);
  const Node& conv = only_node(g, OpType::CONV);
  const ConvAttrs& a = std::get<ConvAttrs>(conv.attrs);
  CHECK(a.groups == 2);
  CHECK(a.pad_begin == std::vector<int64_t>{1, 0});
  CHECK(a.pad_end == std::vector<int64_t>{2, 1});
  CHECK(a.strides == std::vector<int64_t>{2, 1});
  CHECK(a.dilations == std::vector<int64_t>{1, 2});
  CHECK(a.has_bias);
  CHECK(g.tensors[conv.inputs[1]].dims == wd);
  CHECK(g.tensors[conv.inputs[1]].kind == TensorKind::CONSTANT);
  const int64_t pads[4] = {1, 0, 2, 1}, strides[2] = {2, 1}, dil[2] = {1, 2};
  std::vector<int64_t> yd;
  const std::vector<double> want = ref_conv2d(x, xd, w, wd, b, 2, pads, strides, dil, &yd);
  CHECK(g.tensors[output_tensor(g)].dims == yd);
  CHECK(g.tensors[output_tensor(g)].name == "y");
  CHECK(rel_error(run(g, {x})[0], want) < 1e-5);
}

TEST_CASE("onnx import: 1-D and 3-D Conv") {
  // 1-D: checked against the 2-D reference with H = 1.
  const std::vector<float> x = random_values(2 * 3 * 9, 40), w = random_values(4 * 3 * 3, 41);
  OnnxModel m(13);
  m.input("x", {2, 3, 9});
  m.initializer("w", {4, 3, 3}, w);
  onnx::NodeProto* n = m.node("Conv", {"x", "w"}, {"y"});
  jet::test::attr_ints(n, "pads", {2, 1});
  jet::test::attr_ints(n, "strides", {2});
  m.output("y");
  const Graph g = import_ok(m);
  const int64_t pads[4] = {0, 2, 0, 1}, strides[2] = {1, 2}, dil[2] = {1, 1};
  std::vector<int64_t> yd;
  const std::vector<double> want = ref_conv2d(x, {2, 3, 1, 9}, w, {4, 3, 1, 3}, {}, 1, pads, strides, dil, &yd);
  CHECK(g.tensors[output_tensor(g)].dims == std::vector<int64_t>{2, 4, 5});
  CHECK(rel_error(run(g, {x})[0], want) < 1e-5);
  // 3-D: the IR gets three spatial dims.
  OnnxModel m3(13);
  m3.input("x", {1, 2, 5, 6, 7});
  m3.initializer("w", {3, 2, 3, 3, 3}, random_values(162, 42));
  jet::test::attr_ints(m3.node("Conv", {"x", "w"}, {"y"}), "pads", {1, 1, 1, 1, 1, 1});
  m3.output("y");
  const Graph g3 = import_ok(m3);
  CHECK(g3.tensors[output_tensor(g3)].dims == std::vector<int64_t>{1, 3, 5, 6, 7});
  const std::vector<float> y3 = run(g3, {random_values(420, 43)})[0];
  CHECK(y3.size() == 630);
  CHECK(std::all_of(y3.begin(), y3.end(), [](float v) { return std::isfinite(v); }));
}

TEST_CASE("onnx import: Conv auto_pad SAME_UPPER / SAME_LOWER / VALID") {
  struct Case {
    const char* mode;
    std::vector<int64_t> begin, end;
  };
  // H = 8, stride 2, kernel 3: output 4, total pad 1. W = 6, stride 1, kernel 3 dilated 2: total 4.
  for (const Case& c : {Case{"SAME_UPPER", {0, 2}, {1, 2}}, Case{"SAME_LOWER", {1, 2}, {0, 2}}, Case{"VALID", {0, 0}, {0, 0}}}) {
    CAPTURE(c.mode);
    OnnxModel m(13);
    m.input("x", {1, 2, 8, 6});
    m.initializer("w", {3, 2, 3, 3}, random_values(54, 4));
    onnx::NodeProto* n = m.node("Conv", {"x", "w"}, {"y"});
    jet::test::attr_string(n, "auto_pad", c.mode);
    jet::test::attr_ints(n, "strides", {2, 1});
    jet::test::attr_ints(n, "dilations", {1, 2});
    m.output("y");
    const Graph g = import_ok(m);
    const ConvAttrs& a = std::get<ConvAttrs>(only_node(g, OpType::CONV).attrs);
    CHECK(a.pad_begin == c.begin);
    CHECK(a.pad_end == c.end);
    if (std::string(c.mode) != "VALID") CHECK(g.tensors[output_tensor(g)].dims == std::vector<int64_t>{1, 3, 4, 6});
  }
}

TEST_CASE("onnx import: Gemm alpha, beta, transB and a broadcast bias match float64") {
  const int64_t m_ = 3, k = 5, n_ = 4;
  const std::vector<float> a = random_values(m_ * k, 5), b = random_values(n_ * k, 6), c = random_values(n_, 7);
  const float alpha = 0.5f, beta = 2.f;
  std::vector<double> want(m_ * n_);
  for (int64_t i = 0; i < m_; ++i)
    for (int64_t j = 0; j < n_; ++j) {
      double acc = 0;
      for (int64_t q = 0; q < k; ++q) acc += static_cast<double>(a[i * k + q]) * b[j * k + q];
      want[i * n_ + j] = alpha * acc + static_cast<double>(beta) * c[j];
    }
  SUBCASE("constant B and C: folded into the GEMM's operands") {
    OnnxModel m(13);
    m.input("a", {m_, k});
    m.initializer("b", {n_, k}, b);
    m.initializer("c", {n_}, c);
    onnx::NodeProto* nd = m.node("Gemm", {"a", "b", "c"}, {"y"});
    jet::test::attr_float(nd, "alpha", alpha);
    jet::test::attr_float(nd, "beta", beta);
    jet::test::attr_int(nd, "transB", 1);
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(g.nodes.size() == 1);
    const Node& gemm = only_node(g, OpType::GEMM);
    CHECK(std::get<GemmAttrs>(gemm.attrs).trans_b);
    CHECK(std::get<GemmAttrs>(gemm.attrs).has_bias);
    CHECK(g.tensors[gemm.inputs[2]].dims == std::vector<int64_t>{1, n_});
    CHECK(rel_error(run(g, {a})[0], want) < 1e-5);
  }
  SUBCASE("computed B and C: alpha and beta as element-wise ops") {
    OnnxModel m(13);
    m.input("a", {m_, k});
    m.input("b", {n_, k});
    m.input("c", {n_});
    onnx::NodeProto* nd = m.node("Gemm", {"a", "b", "c"}, {"y"});
    jet::test::attr_float(nd, "alpha", alpha);
    jet::test::attr_float(nd, "beta", beta);
    jet::test::attr_int(nd, "transB", 1);
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(count_op(g, OpType::GEMM) == 1);
    CHECK(count_op(g, OpType::OP_TENSOR) == 3);  // * alpha, beta * C, +
    CHECK(rel_error(run(g, {a, b, c})[0], want) < 1e-5);
  }
}

TEST_CASE("onnx import: broadcasting Add/Mul/Sub/Div/Max/Min match float64") {
  const std::vector<int64_t> xd = {2, 3, 4, 5}, cd = {4, 1}, yd = {3, 1, 1};
  const std::vector<float> x = random_values(120, 8), cst = random_values(4, 9, 0.5f, 1.5f), y = random_values(3, 10, 0.5f, 1.5f);
  const char* ops[] = {"Add", "Mul", "Sub", "Div", "Max", "Min"};
  for (const char* op : ops) {
    CAPTURE(op);
    OnnxModel m(14);
    m.input("x", xd);
    m.input("y", yd);
    m.initializer("c", cd, cst);
    m.node(op, {"x", "c"}, {"t"});
    m.node(op, {"y", "t"}, {"out"});  // the lower-rank operand first, and a computed one
    m.output("out");
    const Graph g = import_ok(m);
    CHECK(count_op(g, OpType::OP_TENSOR) == 2);
    CHECK(g.tensors[output_tensor(g)].dims == xd);
    const std::string s(op);
    auto f = [&](double a, double b) {
      if (s == "Add") return a + b;
      if (s == "Mul") return a * b;
      if (s == "Sub") return a - b;
      if (s == "Div") return a / b;
      if (s == "Max") return std::max(a, b);
      return std::min(a, b);
    };
    const std::vector<double> t = ref_broadcast(x, xd, cst, cd, xd, f);
    const std::vector<float> tf(t.begin(), t.end());
    CHECK(rel_error(run(g, {x, y})[0], ref_broadcast(y, yd, tf, xd, xd, f)) < 1e-6);
  }
}

TEST_CASE("onnx import: Softmax coerces to 2D before opset 13 and runs on one axis from 13") {
  const std::vector<int64_t> xd = {2, 3, 4};
  const std::vector<float> x = random_values(24, 11, -3.f, 3.f);
  std::vector<std::vector<float>> results;
  for (int64_t opset : {11, 13}) {
    for (const char* op : {"Softmax", "LogSoftmax"}) {
      CAPTURE(opset);
      CAPTURE(op);
      OnnxModel m(opset);
      m.input("x", xd);
      jet::test::attr_int(m.node(op, {"x"}, {"y"}), "axis", 1);
      m.output("y");
      const Graph g = import_ok(m);
      const Node& sm = only_node(g, OpType::SOFTMAX);
      const bool log = std::string(op) == "LogSoftmax";
      CHECK(std::get<SoftmaxAttrs>(sm.attrs).algo == (log ? SoftmaxAlgo::LOG : SoftmaxAlgo::ACCURATE));
      const std::vector<float> got = run(g, {x})[0];
      if (opset == 11) {
        // Coerced to 2 x 12: one softmax over all of dims 1 and 2.
        CHECK(count_op(g, OpType::RESHAPE) == 2);
        CHECK(g.tensors[sm.inputs[0]].dims == std::vector<int64_t>{2, 12});
        CHECK(rel_error(got, ref_softmax(x, 2, 12, 1, log)) < 1e-5);
      } else {
        CHECK(count_op(g, OpType::RESHAPE) == 0);
        CHECK(std::get<SoftmaxAttrs>(sm.attrs).axis == 1);
        CHECK(rel_error(got, ref_softmax(x, 2, 3, 4, log)) < 1e-5);
      }
      if (!log) results.push_back(got);
    }
  }
  CHECK(rel_error(results[0], to_double(results[1])) > 1e-2);  // the two opsets really differ
  // Default axes: 1 before 13, -1 from 13.
  for (int64_t opset : {12, 13}) {
    OnnxModel m(opset);
    m.input("x", xd);
    m.node("Softmax", {"x"}, {"y"});
    m.output("y");
    const Graph g = import_ok(m);
    const std::vector<double> want = opset == 12 ? ref_softmax(x, 2, 12, 1, false) : ref_softmax(x, 6, 4, 1, false);
    CHECK(rel_error(run(g, {x})[0], want) < 1e-5);
  }
}

TEST_CASE("onnx import: Clip bounds from attributes (opset 6) and from inputs (opset 11)") {
  const std::vector<float> x = random_values(40, 12, -8.f, 8.f);
  auto clipped = [&](double lo, double hi) {
    std::vector<double> r;
    for (float v : x) r.push_back(std::min(std::max(static_cast<double>(v), lo), hi));
    return r;
  };
  {
    OnnxModel m(6);
    m.input("x", {4, 10});
    onnx::NodeProto* n = m.node("Clip", {"x"}, {"y"});
    jet::test::attr_float(n, "min", 0.f);
    jet::test::attr_float(n, "max", 6.f);
    m.output("y");
    const Graph g = import_ok(m);
    const ActivationDesc act = std::get<ActivationAttrs>(only_node(g, OpType::ACTIVATION).attrs).act;
    CHECK(act.mode == ActivationMode::CLIPPED_RELU);
    CHECK(act.alpha == 6.f);
    CHECK(rel_error(run(g, {x})[0], clipped(0, 6)) == 0);
  }
  {
    OnnxModel m(6);
    m.input("x", {4, 10});
    jet::test::attr_float(m.node("Clip", {"x"}, {"y"}), "max", 2.5f);
    m.output("y");
    const Graph g = import_ok(m);
    const ActivationDesc act = std::get<ActivationAttrs>(only_node(g, OpType::ACTIVATION).attrs).act;
    CHECK(act.mode == ActivationMode::CLIP);
    CHECK(rel_error(run(g, {x})[0], clipped(-FLT_MAX, 2.5)) == 0);
  }
  {
    OnnxModel m(11);
    m.input("x", {4, 10});
    m.initializer("lo", {}, {-1.f});
    m.initializer("hi", {}, {2.f});
    m.node("Clip", {"x", "lo", "hi"}, {"y"});
    m.output("y");
    const Graph g = import_ok(m);
    const ActivationDesc act = std::get<ActivationAttrs>(only_node(g, OpType::ACTIVATION).attrs).act;
    CHECK(act.mode == ActivationMode::CLIP);
    CHECK(act.alpha == -1.f);
    CHECK(act.beta == 2.f);
    CHECK(rel_error(run(g, {x})[0], clipped(-1, 2)) == 0);
  }
  {
    // Opset 11: only max given (min is an empty input name); attributes are ignored from 11.
    OnnxModel m(12);
    m.input("x", {4, 10});
    m.initializer("hi", {}, {3.f});
    m.node("Clip", {"x", "", "hi"}, {"y"});
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(rel_error(run(g, {x})[0], clipped(-FLT_MAX, 3)) == 0);
  }
  {
    // A bound computed at run time is not supported (reported, not guessed).
    OnnxModel m(11);
    m.input("x", {4, 10});
    m.input("lo", {1});
    m.node("Clip", {"x", "lo"}, {"y"});
    m.output("y");
    Graph g;
    ImportReport r;
    CHECK(import_model(m, &g, &r).code() == StatusCode::NOT_SUPPORTED);
    REQUIRE(r.unsupported.size() == 1);
    CHECK(contains(r.unsupported[0].reason, "'lo'"));
  }
}

// ---- constant folding ---------------------------------------------------------------------------

TEST_CASE("onnx import: Reshape's shape from Shape -> Gather -> Unsqueeze -> Concat is folded") {
  for (int64_t opset : {11, 13}) {
    CAPTURE(opset);
    OnnxModel m(opset);
    m.input("x", {2, 3, 4, 5});
    m.node("Shape", {"x"}, {"shape"});
    m.initializer_i64("zero", {}, {0});
    jet::test::attr_int(m.node("Gather", {"shape", "zero"}, {"batch"}), "axis", 0);
    if (opset >= 13) {
      m.initializer_i64("axes0", {1}, {0});
      m.node("Unsqueeze", {"batch", "axes0"}, {"batch1"});
    } else {
      jet::test::attr_ints(m.node("Unsqueeze", {"batch"}, {"batch1"}), "axes", {0});
    }
    onnx::NodeProto* minus_one = m.node("Constant", {}, {"minus_one"});
    jet::test::attr_tensor(minus_one, "value", jet::test::int64_tensor("", {1}, {-1}));
    jet::test::attr_int(m.node("Concat", {"batch1", "minus_one"}, {"new_shape"}), "axis", 0);
    m.node("Reshape", {"x", "new_shape"}, {"flat"});
    m.node("Relu", {"flat"}, {"y"});
    m.output("y");
    ImportReport report;
    const Graph g = import_ok(m, &report);
    CHECK(report.onnx_nodes == 7);
    CHECK(g.nodes.size() == 2);  // RESHAPE + ACTIVATION: the shape arithmetic is gone
    const Node& reshape = only_node(g, OpType::RESHAPE);
    CHECK(std::get<ReshapeAttrs>(reshape.attrs).shape == std::vector<int64_t>{2, 60});
    CHECK(g.tensors[output_tensor(g)].dims == std::vector<int64_t>{2, 60});
    CHECK(any_note(report, "folded 5 nodes"));
    CHECK(any_note(report, "Gather"));
    const std::vector<float> x = random_values(120, 13);
    std::vector<double> want;
    for (float v : x) want.push_back(std::max(0.f, v));
    CHECK(rel_error(run(g, {x})[0], want) == 0);
  }
}

TEST_CASE("onnx import: folding of ConstantOfShape, Range, Slice, Cast, Squeeze, Expand, Where and arithmetic") {
  OnnxModel m(13);
  m.input("x", {1, 6, 2, 2});
  m.node("Shape", {"x"}, {"s"});  // [1, 6, 2, 2]
  m.initializer_i64("st", {1}, {1});
  m.initializer_i64("en", {1}, {2});
  m.node("Slice", {"s", "st", "en"}, {"c1"});  // [6]
  m.initializer_i64("two", {1}, {2});
  m.node("Div", {"c1", "two"}, {"half"});  // [3]
  m.node("Cast", {"half"}, {"half_f"});
  jet::test::attr_int(m.graph->mutable_node(3), "to", onnx::TensorProto::FLOAT);
  m.node("Cast", {"half_f"}, {"half_i"});
  jet::test::attr_int(m.graph->mutable_node(4), "to", onnx::TensorProto::INT64);
  m.initializer_i64("zero", {}, {0});
  m.initializer_i64("one", {}, {1});
  m.node("Squeeze", {"half_i"}, {"three"});  // scalar 3 (opset 13: axes omitted)
  m.node("Range", {"zero", "three", "one"}, {"r"});  // [0, 1, 2]
  m.node("ConstantOfShape", {"two"}, {"ones"});  // [x, x] = value 1
  jet::test::attr_tensor(m.graph->mutable_node(7), "value", jet::test::int64_tensor("", {1}, {1}));
  m.node("Equal", {"r", "one"}, {"is1"});  // [F, T, F]
  m.node("ReduceSum", {"ones"}, {"two_s"});  // scalar 2 (no axes: everything)
  jet::test::attr_int(m.graph->mutable_node(9), "keepdims", 0);
  m.node("Where", {"is1", "two_s", "r"}, {"w"});  // [0, 2, 2]
  m.node("Mul", {"w", "half_i"}, {"w3"});  // [0, 6, 6]
  m.node("ReduceMax", {"w3"}, {"six"});  // [6] (keepdims)
  m.initializer_i64("shape_tail", {2}, {2, 2});
  m.node("Concat", {"one", "six", "shape_tail"}, {"bad_concat"});  // ranks differ: never read
  m.initializer_i64("one1", {1}, {1});
  jet::test::attr_int(m.graph->mutable_node(13), "axis", 0);
  m.node("Concat", {"one1", "six", "shape_tail"}, {"new_shape"});
  jet::test::attr_int(m.graph->mutable_node(14), "axis", 0);
  m.node("Reshape", {"x", "new_shape"}, {"y"});
  m.output("y");
  // The first Concat mixes a scalar with lists: an error even though nothing reads it (the walk
  // imports every node).
  Graph g;
  Status st = import_model(m, &g);
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(contains(st.message(), "bad_concat"));
  m.graph->mutable_node()->DeleteSubrange(13, 1);
  ImportReport report;
  g = import_ok(m, &report);
  CHECK(g.nodes.size() == 0 + count_op(g, OpType::TRANSFORM) + count_op(g, OpType::RESHAPE));
  CHECK(g.tensors[output_tensor(g)].dims == std::vector<int64_t>{1, 6, 2, 2});
  CHECK(any_note(report, "Range"));
  CHECK(any_note(report, "ConstantOfShape"));
}

TEST_CASE("onnx import: Transpose and Cast of weights are folded; Identity, Dropout, no-op Cast removed") {
  const std::vector<float> w = random_values(12, 14);  // stored as 4 x 3 (K x N)
  OnnxModel m(13);
  m.input("x", {2, 3});
  m.initializer("wt", {3, 4}, w);
  jet::test::attr_ints(m.node("Transpose", {"wt"}, {"w"}), "perm", {1, 0});  // 4 x 3
  m.node("Identity", {"x"}, {"xi"});
  m.node("Dropout", {"xi"}, {"xd"});
  jet::test::attr_int(m.node("Cast", {"xd"}, {"xc"}), "to", onnx::TensorProto::FLOAT);
  jet::test::attr_int(m.node("Gemm", {"xc", "w"}, {"y"}), "transB", 1);
  m.output("y");
  ImportReport report;
  const Graph g = import_ok(m, &report);
  CHECK(g.nodes.size() == 1);
  CHECK(any_note(report, "Transpose"));
  CHECK(any_note(report, "removed: Cast, Dropout, Identity"));
  const std::vector<float> x = random_values(6, 15);
  std::vector<double> want(8);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) want[i * 4 + j] += static_cast<double>(x[i * 3 + k]) * w[k * 4 + j];
  CHECK(rel_error(run(g, {x})[0], want) < 1e-6);
}

// ---- sources of weights -------------------------------------------------------------------------

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/jet_onnx_test_XXXXXX";
    const char* p = mkdtemp(tmpl);
    REQUIRE(p != nullptr);
    path = p;
  }
  ~TempDir() {
    const std::string cmd = "rm -rf '" + path + "'";
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "cannot remove %s\n", path.c_str());
  }
  void write(const std::string& name, const std::string& bytes) const {
    FILE* f = std::fopen((path + "/" + name).c_str(), "wb");
    REQUIRE(f != nullptr);
    REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
    std::fclose(f);
  }
};

OnnxModel conv_model_with(const std::string& source, const std::vector<float>& w, const std::vector<float>& b) {
  OnnxModel m(13);
  m.input("x", {1, 2, 5, 5});
  if (source == "float_data" || source == "raw_data") {
    m.initializer("w", {3, 2, 3, 3}, w, source == "raw_data");
    m.initializer("b", {3}, b, source == "raw_data");
  } else if (source == "Constant") {
    jet::test::attr_tensor(m.node("Constant", {}, {"w"}, "w_const"), "value", jet::test::float_tensor("", {3, 2, 3, 3}, w));
    jet::test::attr_floats(m.node("Constant", {}, {"b"}, "b_const"), "value_floats", b);
  } else {  // external: w at offset 64 of weights.bin, b at offset 0 of the same file
    for (const char* name : {"w", "b"}) {
      onnx::TensorProto* t = m.graph->add_initializer();
      t->set_name(name);
      t->set_data_type(onnx::TensorProto::FLOAT);
      if (std::string(name) == "w") {
        for (int64_t d : {3, 2, 3, 3}) t->add_dims(d);
      } else {
        t->add_dims(3);
      }
      t->set_data_location(onnx::TensorProto::EXTERNAL);
      auto entry = [&](const char* k, const std::string& v) {
        onnx::StringStringEntryProto* e = t->add_external_data();
        e->set_key(k);
        e->set_value(v);
      };
      entry("location", source == "external" ? "weights.bin" : source);
      entry("offset", std::string(name) == "w" ? "64" : "0");
      entry("length", std::to_string(std::string(name) == "w" ? w.size() * 4 : b.size() * 4));
    }
  }
  m.node("Conv", {"x", "w", "b"}, {"y"});
  m.output("y");
  return m;
}

}  // namespace

TEST_CASE("onnx import: weights from float_data, raw_data, Constant nodes and external data agree") {
  const std::vector<float> w = random_values(54, 16), b = random_values(3, 17);
  TempDir dir;
  std::string file(64 + w.size() * 4, '\0');
  std::memcpy(&file[0], b.data(), 12);
  std::memcpy(&file[64], w.data(), w.size() * 4);
  dir.write("weights.bin", file);
  const std::vector<float> x = random_values(50, 18);
  std::vector<std::vector<float>> results;
  for (const char* source : {"float_data", "raw_data", "Constant", "external"}) {
    CAPTURE(source);
    const OnnxModel m = conv_model_with(source, w, b);
    Graph g;
    if (std::string(source) == "external") {
      // Through a file: external data is relative to the model's directory.
      dir.write("model.onnx", m.bytes());
      const Status st = import_onnx_file(dir.path + "/model.onnx", ImportOptions(), &g, nullptr);
      INFO(st.to_string());
      REQUIRE(st.ok());
    } else {
      g = import_ok(m);
    }
    const Node& conv = only_node(g, OpType::CONV);
    CHECK(g.tensors[conv.inputs[1]].data == w);
    CHECK(g.tensors[conv.inputs[2]].data == b);
    results.push_back(run(g, {x})[0]);
  }
  for (const std::vector<float>& r : results) CHECK(r == results[0]);

  SUBCASE("external data errors name the tensor and the problem") {
    struct Bad {
      const char* location;
      const char* expect;
    };
    dir.write("short.bin", std::string(100, '\0'));
    for (const Bad& c : {Bad{"../weights.bin", "escapes"}, Bad{"/etc/passwd", "not a relative path"},
                         Bad{"missing.bin", "does not exist"}, Bad{"short.bin", "past the end"}}) {
      CAPTURE(c.location);
      dir.write("bad.onnx", conv_model_with(c.location, w, b).bytes());
      Graph g;
      const Status st = import_onnx_file(dir.path + "/bad.onnx", ImportOptions(), &g, nullptr);
      CHECK(st.code() == StatusCode::BAD_PARAM);
      CHECK(contains(st.message(), "initializer '"));
      CHECK(contains(st.message(), c.expect));
      CHECK(g.nodes.empty());
    }
    // From bytes without a directory: external data cannot be found, and the error says why.
    Graph g;
    const std::string bytes = conv_model_with("external", w, b).bytes();
    const Status st = import_onnx_bytes(bytes.data(), bytes.size(), ImportOptions(), &g, nullptr);
    CHECK(st.code() == StatusCode::BAD_PARAM);
    CHECK(contains(st.message(), "external_data_dir"));
    ImportOptions opt;
    opt.external_data_dir = dir.path;
    CHECK(import_onnx_bytes(bytes.data(), bytes.size(), opt, &g, nullptr).ok());
  }
}

TEST_CASE("onnx import: FLOAT16, DOUBLE and INT32 initializers decode to the same values") {
  // FLOAT16 weights in int32_data (bit patterns) and raw_data; DOUBLE in double_data.
  const std::vector<float> values = {0.5f, -1.25f, 3.f, 0.f, 1024.f, -0.0009765625f};
  for (const char* kind : {"f16_int32_data", "f16_raw", "double", "int32_cast"}) {
    CAPTURE(kind);
    OnnxModel m(13);
    m.input("x", {1, 6});
    onnx::TensorProto* t = m.graph->add_initializer();
    t->set_name("c");
    t->add_dims(1);
    t->add_dims(6);
    const std::string k(kind);
    if (k == "f16_int32_data" || k == "f16_raw") {
      t->set_data_type(onnx::TensorProto::FLOAT16);
      std::string raw;
      for (float v : values) {
        const uint16_t bits = half(v).bits;
        if (k == "f16_raw") {
          raw.append(reinterpret_cast<const char*>(&bits), 2);
        } else {
          t->add_int32_data(bits);
        }
      }
      if (k == "f16_raw") t->set_raw_data(raw);
    } else if (k == "double") {
      t->set_data_type(onnx::TensorProto::DOUBLE);
      for (float v : values) t->add_double_data(v);
    } else {
      t->set_data_type(onnx::TensorProto::INT32);
      for (int v : {1, -2, 3, 0, 1024, 7}) t->add_int32_data(v);
      jet::test::attr_int(m.node("Cast", {"c"}, {"cf"}), "to", onnx::TensorProto::FLOAT);
    }
    m.node("Add", {"x", k == "int32_cast" ? "cf" : "c"}, {"y"});
    m.output("y");
    const Graph g = import_ok(m);
    const Node& add = only_node(g, OpType::OP_TENSOR);
    const std::vector<float> want = k == "int32_cast" ? std::vector<float>{1, -2, 3, 0, 1024, 7} : values;
    CHECK(g.tensors[add.inputs[1]].data == want);
  }
}

// ---- inputs -------------------------------------------------------------------------------------

TEST_CASE("onnx import: dynamic dims need --input-shape, and the error names every one") {
  auto model = []() {
    OnnxModel m(13);
    m.input("image", {-1, 3, 4, 4});
    m.input("extra", {-2, 5});
    m.input("fixed", {2, 5});
    m.node("GlobalAveragePool", {"image"}, {"p"});
    m.node("Add", {"extra", "fixed"}, {"q"});
    m.output("p");
    m.output("q");
    return m;
  };
  Graph g;
  Status st = import_model(model(), &g);
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(contains(st.message(), "'image' (dim 0 'N')"));
  CHECK(contains(st.message(), "'extra' (dim 0 (unknown))"));
  CHECK(!contains(st.message(), "'fixed'"));
  CHECK(contains(st.message(), "--input-shape"));

  ImportOptions opt;
  opt.input_shapes["image"] = {2, 3, 4, 4};
  opt.input_shapes["extra"] = {2, 5};
  g = import_ok(model(), nullptr, opt);
  CHECK(g.tensors[0].name == "image");
  CHECK(g.tensors[0].dims == std::vector<int64_t>{2, 3, 4, 4});
  CHECK(g.tensors[output_tensor(g, 0)].dims == std::vector<int64_t>{2, 3, 1, 1});

  opt.input_shapes["extra"] = {2, 5, 1};
  st = import_model(model(), &g, nullptr, opt);
  CHECK(contains(st.message(), "has rank 3, but the input has rank 2"));
  opt.input_shapes["extra"] = {2, 5};
  opt.input_shapes["fixed"] = {3, 5};
  st = import_model(model(), &g, nullptr, opt);
  CHECK(contains(st.message(), "differs from the model's static dim 0 = 2"));
  opt.input_shapes.erase("fixed");
  opt.input_shapes["imgae"] = {1};
  st = import_model(model(), &g, nullptr, opt);
  CHECK(contains(st.message(), "'imgae', which is not a graph input"));
}

// ---- unsupported ops ----------------------------------------------------------------------------

TEST_CASE("onnx import: every unsupported op is listed at once and no graph is returned") {
  OnnxModel m(13);
  onnx::OperatorSetIdProto* os = m.model.add_opset_import();
  os->set_domain("com.example");
  os->set_version(3);
  m.input("x", {1, 4, 8, 8});
  m.node("LRN", {"x"}, {"a"}, "norm1");
  jet::test::attr_int(m.graph->mutable_node(0), "size", 3);
  m.node("Relu", {"a"}, {"b"});                       // behind LRN: skipped, not listed
  m.node("FancyActivation", {"b"}, {"c"}, "fancy");   // unknown op type: listed even behind LRN
  onnx::NodeProto* custom = m.node("MyOp", {"x"}, {"d"}, "custom");
  custom->set_domain("com.example");
  m.initializer_i64("st", {1}, {0});
  m.initializer_i64("en", {1}, {2});
  m.initializer_i64("ax", {1}, {1});
  m.node("Slice", {"x", "st", "en", "ax"}, {"e"}, "slice_channels");  // known op, unsupported use
  m.node("Add", {"d", "e"}, {"f"});
  m.node("Conv", {"x", "x"}, {"g"}, "conv_with_computed_w");
  m.output("c");
  m.output("f");
  m.output("g");
  Graph g;
  g.tensors.resize(3);  // replaced
  ImportReport report;
  const Status st = import_model(m, &g, &report);
  CHECK(st.code() == StatusCode::NOT_SUPPORTED);
  CHECK(g.tensors.empty());
  CHECK(g.nodes.empty());
  REQUIRE(report.unsupported.size() == 5);
  CHECK(report.unsupported[0].op_type == "LRN");
  CHECK(report.unsupported[0].node_name == "norm1");
  CHECK(report.unsupported[0].opset == 13);
  CHECK(report.unsupported[1].op_type == "FancyActivation");
  CHECK(report.unsupported[2].op_type == "MyOp");
  CHECK(report.unsupported[2].domain == "com.example");
  CHECK(report.unsupported[2].opset == 3);
  CHECK(report.unsupported[3].node_name == "slice_channels");
  CHECK(contains(report.unsupported[3].reason, "Slice of a computed tensor"));
  CHECK(report.unsupported[4].node_name == "conv_with_computed_w");
  CHECK(contains(report.unsupported[4].reason, "weight 'x' is computed at run time"));
  for (const char* name : {"norm1", "fancy", "custom", "slice_channels", "conv_with_computed_w"}) {
    CHECK(contains(st.message(), std::string("'") + name + "'"));
  }
  CHECK(contains(st.message(), "5 unsupported ops"));
}

// ---- malformed models ---------------------------------------------------------------------------

namespace {

OnnxModel small_model() {
  OnnxModel m(13);
  m.input("x", {1, 2, 4, 4});
  m.initializer("w", {2, 2, 1, 1}, {1, 2, 3, 4}, true);
  m.initializer("b", {2}, {0.5f, -0.5f});
  onnx::NodeProto* conv = m.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  jet::test::attr_int(conv, "group", 1);
  m.node("Relu", {"c"}, {"r"}, "relu");
  m.node("GlobalAveragePool", {"r"}, {"p"}, "gap");
  jet::test::attr_int(m.node("Flatten", {"p"}, {"f"}, "flatten"), "axis", 1);
  m.initializer("fc", {3, 2}, {1, 0, 0, 1, 1, 1});
  jet::test::attr_int(m.node("Gemm", {"f", "fc"}, {"l"}, "fc"), "transB", 1);
  m.node("Softmax", {"l"}, {"y"}, "softmax");
  m.output("y");
  return m;
}

Status import_bytes(const std::string& bytes, Graph* g) {
  return import_onnx_bytes(bytes.data(), bytes.size(), ImportOptions(), g, nullptr);
}

}  // namespace

TEST_CASE("onnx import: malformed models give errors that name the problem") {
  Graph g;
  const std::string good = small_model().bytes();
  REQUIRE(import_bytes(good, &g).ok());
  CHECK(g.nodes.size() == 6);

  SUBCASE("truncated protobuf") {
    const Status st = import_bytes(good.substr(0, good.size() / 2), &g);
    CHECK(st.code() == StatusCode::BAD_PARAM);
    CHECK(contains(st.message(), "cannot be parsed"));
    CHECK(g.nodes.empty());
  }
  SUBCASE("garbage bytes and empty input") {
    const Status st = import_bytes(std::string("\xff\xfe this is not an ONNX model \x01\x02", 32), &g);
    CHECK(st.code() == StatusCode::BAD_PARAM);
    CHECK((contains(st.message(), "cannot be parsed") || contains(st.message(), "no graph")));
    const Status empty = import_onnx_bytes(nullptr, 0, ImportOptions(), &g, nullptr);
    CHECK(empty.code() == StatusCode::BAD_PARAM);
    CHECK(contains(empty.message(), "no graph"));
  }
  SUBCASE("a node reading a tensor nobody produces") {
    OnnxModel m = small_model();
    m.graph->mutable_node(1)->set_input(0, "c_typo");
    const Status st = import_model(m, &g);
    CHECK(st.code() == StatusCode::BAD_PARAM);
    CHECK(contains(st.message(), "Relu 'relu': input 'c_typo' is not produced by any node, initializer or graph input"));
  }
  SUBCASE("an attribute of the wrong type") {
    OnnxModel m = small_model();
    onnx::AttributeProto* a = m.graph->mutable_node(0)->mutable_attribute(0);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(1.f);
    const Status st = import_model(m, &g);
    CHECK(st.code() == StatusCode::BAD_PARAM);
    CHECK(contains(st.message(), "Conv 'conv': attribute 'group' has type FLOAT, expected INT"));
  }
  SUBCASE("an initializer whose raw_data does not match its dims") {
    OnnxModel m = small_model();
    m.graph->mutable_initializer(0)->mutable_raw_data()->resize(12);
    const Status st = import_model(m, &g);
    CHECK(st.code() == StatusCode::BAD_PARAM);
    CHECK(contains(st.message(), "initializer 'w': raw_data has 12 bytes, but dims 2x2x1x1 of FLOAT need 16"));
  }
  SUBCASE("typed data of the wrong count, negative dims, unsupported element types") {
    OnnxModel m = small_model();
    m.graph->mutable_initializer(1)->add_float_data(1.f);
    Status st = import_model(m, &g);
    CHECK(contains(st.message(), "initializer 'b': float_data has 3 values, but dims 2 need 2"));
    m = small_model();
    m.graph->mutable_initializer(1)->set_dims(0, -2);
    st = import_model(m, &g);
    CHECK(contains(st.message(), "initializer 'b': dims -2 has a negative dim"));
    m = small_model();
    m.graph->mutable_initializer(1)->set_data_type(onnx::TensorProto::STRING);
    st = import_model(m, &g);
    CHECK(st.code() == StatusCode::NOT_SUPPORTED);
    CHECK(contains(st.message(), "initializer 'b': element type STRING"));
  }
  SUBCASE("bad indices and sizes in ops") {
    OnnxModel m(13);
    m.input("x", {2, 3});
    m.node("Shape", {"x"}, {"s"});
    m.initializer_i64("i", {}, {5});
    m.node("Gather", {"s", "i"}, {"d"}, "gather");
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    Status st = import_model(m, &g);
    CHECK(contains(st.message(), "Gather 'gather': index 5 is out of range for dim 0 of size 2"));
    OnnxModel r(13);
    r.input("x", {2, 3});
    r.initializer_i64("shape", {2}, {4, -1});
    r.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
    r.output("y");
    st = import_model(r, &g);
    CHECK(contains(st.message(), "Reshape 'reshape': cannot reshape 2x3 to 4x-1"));
    OnnxModel c(13);
    c.input("x", {1, 3, 5, 5});
    c.initializer("w", {4, 2, 3, 3}, random_values(72, 1));
    c.node("Conv", {"x", "w"}, {"y"}, "conv");
    c.output("y");
    st = import_model(c, &g);
    CHECK(st.code() == StatusCode::BAD_PARAM);
    CHECK(contains(st.message(), "Conv 'conv'"));
  }
  SUBCASE("graph structure: duplicate producers, cycles, missing outputs") {
    OnnxModel m = small_model();
    m.graph->mutable_node(2)->set_output(0, "r");
    Status st = import_model(m, &g);
    CHECK(contains(st.message(), "value 'r' is produced by two nodes"));
    m = small_model();
    m.graph->mutable_node(0)->set_input(0, "y");  // conv reads the softmax: a cycle
    st = import_model(m, &g);
    CHECK(contains(st.message(), "cycle"));
    m = small_model();
    m.graph->mutable_output(0)->set_name("nothing");
    st = import_model(m, &g);
    CHECK(contains(st.message(), "graph output 'nothing' is not produced"));
  }
  SUBCASE("opsets") {
    for (int64_t v : {5, 22}) {
      OnnxModel m = small_model();
      m.model.mutable_opset_import(0)->set_version(v);
      const Status st = import_model(m, &g);
      CHECK(st.code() == StatusCode::NOT_SUPPORTED);
      CHECK(contains(st.message(), "opset " + std::to_string(v) + " of the default domain is not supported (supported: 6 to 21)"));
    }
    OnnxModel m = small_model();
    m.model.mutable_opset_import(0)->set_domain("ai.onnx.ml");
    CHECK(contains(import_model(m, &g).message(), "imports no opset of the default domain"));
    OnnxModel h(13);
    h.input("x", {2});
    h.node("HardSwish", {"x"}, {"y"});
    h.output("y");
    h.model.mutable_opset_import(0)->set_version(13);
    CHECK(contains(import_model(h, &g).message(), "HardSwish does not exist before opset 14"));
  }
  SUBCASE("inputs of unsupported types") {
    OnnxModel m(13);
    m.input("ids", {1, 4}, onnx::TensorProto::INT64);
    m.node("Identity", {"ids"}, {"y"});
    m.output("y");
    const Status st = import_model(m, &g);
    CHECK(st.code() == StatusCode::NOT_SUPPORTED);
    CHECK(contains(st.message(), "graph input 'ids' has element type INT64"));
  }
}

TEST_CASE("onnx import: mutated and truncated models never crash") {
  const std::string good = small_model().bytes();
  std::mt19937 rng(20260101);
  int ok = 0, failed = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    std::string bytes = good;
    const int kind = iter % 3;
    if (kind == 0) {
      bytes.resize(rng() % bytes.size());
    } else {
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    }
    Graph g;
    ImportReport report;
    const Status st = import_onnx_bytes(bytes.data(), bytes.size(), ImportOptions(), &g, &report);
    if (st.ok()) {
      ++ok;
      std::vector<int> order;
      CHECK(check_graph(g, &order).ok());
    } else {
      ++failed;
      CHECK(!st.message().empty());
      CHECK(g.nodes.empty());
    }
  }
  MESSAGE("mutations imported " << ok << ", rejected " << failed);
  CHECK(failed > 0);
}

// ---- more ops ------------------------------------------------------------------------------------

TEST_CASE("onnx import: opset 6 legacy broadcasting of Add/Mul (broadcast, axis)") {
  const std::vector<int64_t> xd = {2, 3, 4, 5};
  const std::vector<float> x = random_values(120, 19), bc = random_values(3, 20), bw = random_values(5, 21);
  OnnxModel m(6);
  m.input("x", xd);
  m.initializer("bc", {3}, bc);
  m.initializer("bw", {5}, bw);
  onnx::NodeProto* add = m.node("Add", {"x", "bc"}, {"a"});
  jet::test::attr_int(add, "broadcast", 1);
  jet::test::attr_int(add, "axis", 1);
  jet::test::attr_int(m.node("Mul", {"a", "bw"}, {"y"}), "broadcast", 1);  // trailing alignment
  m.output("y");
  const Graph g = import_ok(m);
  const Node& first = g.nodes[0];
  CHECK(g.tensors[first.inputs[1]].dims == std::vector<int64_t>{1, 3, 1, 1});
  std::vector<double> want(120);
  for (int i = 0; i < 120; ++i) want[i] = (static_cast<double>(x[i]) + bc[(i / 20) % 3]) * bw[i % 5];
  CHECK(rel_error(run(g, {x})[0], want) < 1e-6);
  // broadcast = 0 with different shapes is an error in opset 6.
  OnnxModel e(6);
  e.input("x", xd);
  e.initializer("bc", {3}, bc);
  e.node("Add", {"x", "bc"}, {"y"}, "add");
  e.output("y");
  Graph ge;
  CHECK(contains(import_model(e, &ge).message(), "differ and broadcast is 0 (opset 6)"));
}

TEST_CASE("onnx import: MatMul shapes (2-D, batched, broadcast B, vectors) match float64") {
  struct Case {
    std::vector<int64_t> ad, bd, yd;
    bool b_const;
  };
  const Case cases[] = {
      {{3, 4}, {4, 5}, {3, 5}, true},
      {{2, 3, 3, 4}, {4, 5}, {2, 3, 3, 5}, true},
      {{2, 3, 4}, {2, 4, 5}, {2, 3, 5}, false},
      {{3, 4}, {2, 4, 5}, {2, 3, 5}, false},
      {{4}, {2, 4, 5}, {2, 5}, false},
      {{2, 3, 4}, {4}, {2, 3}, true},
  };
  for (const Case& c : cases) {
    CAPTURE(c.ad.size());
    CAPTURE(c.bd.size());
    int64_t na = 1, nb = 1;
    for (int64_t d : c.ad) na *= d;
    for (int64_t d : c.bd) nb *= d;
    const std::vector<float> a = random_values(na, 22), b = random_values(nb, 23);
    OnnxModel m(13);
    m.input("a", c.ad);
    if (c.b_const) {
      m.initializer("b", c.bd, b);
    } else {
      m.input("b", c.bd);
    }
    m.node("MatMul", {"a", "b"}, {"y"});
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(count_op(g, OpType::GEMM) == 1);
    CHECK(g.tensors[output_tensor(g)].dims == c.yd);
    // Reference: numpy matmul with broadcasting over the batch dims.
    std::vector<int64_t> ad = c.ad, bd = c.bd;
    if (ad.size() == 1) ad.insert(ad.begin(), 1);
    if (bd.size() == 1) bd.push_back(1);
    const int64_t mm = ad[ad.size() - 2], kk = ad.back(), nn = bd.back();
    const int64_t pa = na / (mm * kk), pb = nb / (kk * nn), batches = std::max(pa, pb);
    std::vector<double> want;
    for (int64_t q = 0; q < batches; ++q)
      for (int64_t i = 0; i < mm; ++i)
        for (int64_t j = 0; j < nn; ++j) {
          double acc = 0;
          for (int64_t p = 0; p < kk; ++p) {
            acc += static_cast<double>(a[(pa == 1 ? 0 : q) * mm * kk + i * kk + p]) * b[(pb == 1 ? 0 : q) * kk * nn + p * nn + j];
          }
          want.push_back(acc);
        }
    const std::vector<std::vector<float>> out = c.b_const ? run(g, {a}) : run(g, {a, b});
    CHECK(rel_error(out[0], want) < 1e-5);
  }
}

TEST_CASE("onnx import: BatchNormalization (rank 4 and rank 2, training outputs unused) matches float64") {
  for (int64_t opset : {7, 9, 15}) {
    for (bool rank2 : {false, true}) {
      CAPTURE(opset);
      CAPTURE(rank2);
      const std::vector<int64_t> xd = rank2 ? std::vector<int64_t>{5, 3} : std::vector<int64_t>{2, 3, 2, 2};
      const int64_t n = rank2 ? 15 : 24, inner = rank2 ? 1 : 4;
      const std::vector<float> x = random_values(n, 24), scale = random_values(3, 25), bias = random_values(3, 26),
                               mean = random_values(3, 27), var = random_values(3, 28, 0.5f, 2.f);
      OnnxModel m(opset);
      m.input("x", xd);
      m.initializer("s", {3}, scale);
      m.initializer("b", {3}, bias);
      m.initializer("m", {3}, mean);
      m.initializer("v", {3}, var);
      onnx::NodeProto* bn = m.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"});
      jet::test::attr_float(bn, "epsilon", 1e-3f);
      if (opset < 9) jet::test::attr_int(bn, "spatial", 1);
      m.output("y");
      const Graph g = import_ok(m);
      const Node& node = only_node(g, OpType::BATCHNORM);
      CHECK(std::get<BatchNormAttrs>(node.attrs).epsilon == doctest::Approx(1e-3));
      for (size_t k = 1; k < 5; ++k) CHECK(g.tensors[node.inputs[k]].dtype == DType::F32);
      std::vector<double> want(n);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t c = (i / inner) % 3;
        want[i] = scale[c] * (x[i] - static_cast<double>(mean[c])) / std::sqrt(var[c] + static_cast<double>(1e-3f)) + bias[c];
      }
      CHECK(rel_error(run(g, {x})[0], want) < 1e-5);
    }
  }
}

TEST_CASE("onnx import: pooling attributes (ceil_mode, count_include_pad, asymmetric pads, global)") {
  OnnxModel m(13);
  m.input("x", {1, 2, 7, 7});
  onnx::NodeProto* mp = m.node("MaxPool", {"x"}, {"a"}, "maxpool");
  jet::test::attr_ints(mp, "kernel_shape", {3, 3});
  jet::test::attr_ints(mp, "strides", {2, 2});
  jet::test::attr_int(mp, "ceil_mode", 1);
  onnx::NodeProto* ap = m.node("AveragePool", {"x"}, {"b"}, "avgpool");
  jet::test::attr_ints(ap, "kernel_shape", {2, 3});
  jet::test::attr_ints(ap, "pads", {0, 1, 1, 0});
  jet::test::attr_int(ap, "count_include_pad", 1);
  onnx::NodeProto* ap2 = m.node("AveragePool", {"x"}, {"c"}, "avgpool_excl");
  jet::test::attr_ints(ap2, "kernel_shape", {3, 3});
  jet::test::attr_string(ap2, "auto_pad", "SAME_UPPER");
  m.node("GlobalMaxPool", {"x"}, {"d"});
  m.node("GlobalAveragePool", {"x"}, {"e"});
  for (const char* o : {"a", "b", "c", "d", "e"}) m.output(o);
  const Graph g = import_ok(m);
  REQUIRE(g.nodes.size() == 5);
  const PoolAttrs& a = std::get<PoolAttrs>(g.nodes[0].attrs);
  CHECK(a.mode == PoolMode::MAX);
  CHECK(a.ceil_mode);
  CHECK(g.tensors[g.nodes[0].outputs[0]].dims == std::vector<int64_t>{1, 2, 3, 3});
  const PoolAttrs& b = std::get<PoolAttrs>(g.nodes[1].attrs);
  CHECK(b.mode == PoolMode::AVG_INCLUDE_PAD);
  CHECK(b.pad_begin == std::vector<int64_t>{0, 1});
  CHECK(b.pad_end == std::vector<int64_t>{1, 0});
  const PoolAttrs& c = std::get<PoolAttrs>(g.nodes[2].attrs);
  CHECK(c.mode == PoolMode::AVG_EXCLUDE_PAD);
  CHECK(c.pad_begin == std::vector<int64_t>{1, 1});
  CHECK(std::get<GlobalPoolAttrs>(g.nodes[3].attrs).mode == PoolMode::MAX);
  CHECK(std::get<GlobalPoolAttrs>(g.nodes[4].attrs).mode == PoolMode::AVG_INCLUDE_PAD);
  const std::vector<float> x = random_values(98, 29);
  const std::vector<std::vector<float>> out = run(g, {x});
  double mx = -INFINITY;
  for (int i = 0; i < 49; ++i) mx = std::max(mx, static_cast<double>(x[i]));
  CHECK(out[3][0] == mx);
}

TEST_CASE("onnx import: PRelu, Sum, ReduceMean over spatial dims, Pad folded into Conv, Cast to float16") {
  const std::vector<float> x = random_values(2 * 3 * 4 * 4, 30);
  SUBCASE("PRelu with slopes in [0, 1] and outside") {
    for (float big : {0.f, 3.f}) {
      const std::vector<float> slope = {0.25f, 0.5f, big};
      OnnxModel m(13);
      m.input("x", {2, 3, 4, 4});
      m.initializer("slope", {3, 1, 1}, slope);
      m.node("PRelu", {"x", "slope"}, {"y"});
      m.output("y");
      const Graph g = import_ok(m);
      std::vector<double> want;
      for (int i = 0; i < 96; ++i) want.push_back(x[i] >= 0 ? x[i] : static_cast<double>(slope[(i / 16) % 3]) * x[i]);
      CHECK(rel_error(run(g, {x})[0], want) < 1e-6);
    }
  }
  SUBCASE("Sum of three inputs, Max of two") {
    OnnxModel m(13);
    m.input("a", {2, 3, 4, 4});
    m.input("b", {3, 1, 1});
    m.initializer("c", {4}, {1, 2, 3, 4});
    m.node("Sum", {"a", "b", "c"}, {"s"});
    m.node("Max", {"s", "a"}, {"y"});
    m.output("y");
    const Graph g = import_ok(m);
    const std::vector<float> b = {0.5f, -0.5f, 2.f};
    std::vector<double> want;
    for (int i = 0; i < 96; ++i) {
      const double s = static_cast<double>(x[i]) + b[(i / 16) % 3] + (i % 4 + 1);
      want.push_back(std::max(s, static_cast<double>(x[i])));
    }
    CHECK(rel_error(run(g, {x, b})[0], want) < 1e-6);
  }
  SUBCASE("ReduceMean / ReduceSum over H, W as global pooling") {
    for (int64_t opset : {13, 18}) {
      OnnxModel m(opset);
      m.input("x", {2, 3, 4, 4});
      onnx::NodeProto* mean = m.node("ReduceMean", {"x"}, {"mean"});
      onnx::NodeProto* sum = m.node("ReduceSum", {"x"}, {"sum"});
      m.initializer_i64("axes", {2}, {-2, -1});
      if (opset >= 18) mean->add_input("axes");
      if (opset < 18) jet::test::attr_ints(mean, "axes", {2, 3});
      sum->add_input("axes");  // ReduceSum takes axes as an input from opset 13
      jet::test::attr_int(mean, "keepdims", 0);
      m.output("mean");
      m.output("sum");
      const Graph g = import_ok(m);
      CHECK(count_op(g, OpType::GLOBAL_POOL) == 2);
      CHECK(g.tensors[output_tensor(g, 0)].dims == std::vector<int64_t>{2, 3});
      CHECK(g.tensors[output_tensor(g, 1)].dims == std::vector<int64_t>{2, 3, 1, 1});
      std::vector<double> want_mean(6), want_sum(6);
      for (int i = 0; i < 96; ++i) want_sum[i / 16] += x[i];
      for (int i = 0; i < 6; ++i) want_mean[i] = want_sum[i] / 16;
      const std::vector<std::vector<float>> out = run(g, {x});
      CHECK(rel_error(out[0], want_mean) < 1e-6);
      CHECK(rel_error(out[1], want_sum) < 1e-5);
    }
  }
  SUBCASE("a zero Pad before a Conv becomes the Conv's pads") {
    OnnxModel m(13);
    m.input("x", {2, 3, 4, 4});
    m.initializer_i64("pads", {8}, {0, 0, 1, 2, 0, 0, 2, 0});
    m.node("Pad", {"x", "pads"}, {"xp"});
    m.initializer("w", {2, 3, 3, 3}, random_values(54, 31));
    jet::test::attr_ints(m.node("Conv", {"xp", "w"}, {"y"}), "pads", {1, 0, 0, 1});
    m.output("y");
    ImportReport report;
    const Graph g = import_ok(m, &report);
    REQUIRE(g.nodes.size() == 1);
    const ConvAttrs& a = std::get<ConvAttrs>(g.nodes[0].attrs);
    CHECK(a.pad_begin == std::vector<int64_t>{2, 2});
    CHECK(a.pad_end == std::vector<int64_t>{2, 1});
    CHECK(any_note(report, "Pad"));
    // A Pad read by anything else is reported, by its reader.
    m.node("Relu", {"xp"}, {"z"}, "relu_of_pad");
    m.output("z");
    Graph g2;
    ImportReport r2;
    CHECK(import_model(m, &g2, &r2).code() == StatusCode::NOT_SUPPORTED);
    REQUIRE(r2.unsupported.size() == 1);
    CHECK(r2.unsupported[0].node_name == "relu_of_pad");
  }
  SUBCASE("Cast to FLOAT16 and back is a TRANSFORM pair") {
    OnnxModel m(13);
    m.input("x", {2, 3, 4, 4});
    jet::test::attr_int(m.node("Cast", {"x"}, {"h"}), "to", onnx::TensorProto::FLOAT16);
    m.node("Relu", {"h"}, {"r"});
    jet::test::attr_int(m.node("Cast", {"r"}, {"y"}), "to", onnx::TensorProto::FLOAT);
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(count_op(g, OpType::TRANSFORM) == 2);
    CHECK(g.tensors[g.nodes[1].outputs[0]].dtype == DType::F16);
    std::vector<double> want;
    for (float v : x) want.push_back(std::max(0.f, static_cast<float>(half(v))));
    CHECK(rel_error(run(g, {x})[0], want) == 0);
  }
}

TEST_CASE("onnx import: graph outputs that are inputs, constants or listed twice get copies") {
  OnnxModel m(13);
  m.input("x", {2, 2});
  m.initializer("k", {2}, {1.5f, -2.f});
  m.node("Relu", {"x"}, {"r"});
  m.output("x");
  m.output("k");
  m.output("r");
  m.output("r");
  const Graph g = import_ok(m);
  const std::vector<float> x = {1, -1, 2, -2};
  const std::vector<std::vector<float>> out = run(g, {x});
  // Outputs come back in tensor index order; find them by name (input names are kept first, so
  // the copy of input 'x' and the second 'r' get suffixes).
  std::map<std::string, std::vector<float>> by_name;
  std::set<std::string> names;
  size_t k = 0;
  for (const Tensor& t : g.tensors) {
    CHECK(names.insert(t.name).second);  // names are unique
    if (t.kind == TensorKind::OUTPUT) by_name[t.name] = out[k++];
  }
  REQUIRE(by_name.size() == 4);
  CHECK(by_name["x_1"] == x);
  CHECK(by_name["k"] == std::vector<float>{1.5f, -2.f});
  CHECK(by_name["r"] == std::vector<float>{1, 0, 2, 0});
  CHECK(by_name["r_1"] == by_name["r"]);
}

TEST_CASE("onnx import: ops that pass a tensor through keep its name (graph inputs stay named)") {
  OnnxModel m(13);
  m.input("x", {2, 3});
  m.initializer_i64("same", {2}, {2, 3});
  m.node("Reshape", {"x", "same"}, {"r"});  // a no-op: the IR keeps x itself
  m.node("Flatten", {"r"}, {"f"});          // 2 x 3 again
  m.node("Relu", {"f"}, {"y"});
  m.output("y");
  const Graph g = import_ok(m);
  CHECK(g.tensors[0].name == "x");
  CHECK(g.tensors[0].kind == TensorKind::INPUT);
  CHECK(g.nodes.size() == 1);
  CHECK(g.tensors[output_tensor(g)].name == "y");
}

TEST_CASE("onnx import: an imported CNN goes through the passes and the writer") {
  OnnxModel m = small_model();
  const Graph imported = import_ok(m);
  for (bool f16 : {false, true}) {
    Graph g = imported;
    if (f16) {
      REQUIRE(convert_precision(&g, DType::F16).ok());
      REQUIRE(set_channels_last(&g).ok());
    }
    std::vector<uint8_t> bytes;
    MemoryPlan plan;
    const Status st = write_model(g, WriteOptions(), &bytes, &plan);
    INFO(st.to_string());
    CHECK(st.ok());
    CHECK(bytes.size() > 64);
    CHECK(plan.arena_bytes >= plan.lower_bound_bytes);
  }
}

#endif  // JET_HAVE_ONNX_IMPORT
