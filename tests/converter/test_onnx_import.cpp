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
#include "optimize.h"
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

// Imports `m`, which must fail with NOT_SUPPORTED for exactly one node: named `node` (unless
// empty), for a reason containing `reason_part` (unless empty).
void check_one_unsupported(const OnnxModel& m, const std::string& node, const std::string& reason_part) {
  Graph g;
  ImportReport r;
  CHECK(import_model(m, &g, &r).code() == StatusCode::NOT_SUPPORTED);
  REQUIRE(r.unsupported.size() == 1);
  if (!node.empty()) CHECK(r.unsupported[0].node_name == node);
  if (!reason_part.empty()) CHECK(contains(r.unsupported[0].reason, reason_part));
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

TEST_CASE("onnx import: element-wise math (Exp ... Gelu) becomes activation modes and matches float64") {
  struct Case {
    const char* op;
    int64_t opset;
    ActivationMode mode;
    double (*f)(double);
  };
  const double pi = 3.14159265358979323846;
  static const Case cases[] = {
      {"Exp", 13, ActivationMode::EXP, [](double x) { return std::exp(x); }},
      {"Log", 13, ActivationMode::LOG, [](double x) { return std::log(x); }},
      {"Sqrt", 13, ActivationMode::SQRT, [](double x) { return std::sqrt(x); }},
      {"Reciprocal", 13, ActivationMode::RECIPROCAL, [](double x) { return 1.0 / x; }},
      {"Abs", 13, ActivationMode::ABS, [](double x) { return std::fabs(x); }},
      {"Neg", 13, ActivationMode::NEG, [](double x) { return -x; }},
      {"Floor", 13, ActivationMode::FLOOR, [](double x) { return std::floor(x); }},
      {"Ceil", 13, ActivationMode::CEIL, [](double x) { return std::ceil(x); }},
      {"Round", 11, ActivationMode::ROUND, [](double x) { return std::nearbyint(x); }},
      {"Sign", 13, ActivationMode::SIGN, [](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }},
      {"Sin", 7, ActivationMode::SIN, [](double x) { return std::sin(x); }},
      {"Cos", 7, ActivationMode::COS, [](double x) { return std::cos(x); }},
      {"Tan", 7, ActivationMode::TAN, [](double x) { return std::tan(x); }},
      {"Erf", 13, ActivationMode::ERF, [](double x) { return std::erf(x); }},
      {"Softsign", 13, ActivationMode::SOFTSIGN, [](double x) { return x / (1 + std::fabs(x)); }},
      {"Gelu", 20, ActivationMode::GELU, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
  };
  const std::vector<int64_t> xd = {2, 3, 5};
  // Positive inputs for Log and Sqrt; a 2.5 and a -0.5 check Round's halves to even.
  std::vector<float> x = random_values(30, 21, 0.1f, 3.f), xs = random_values(30, 22, -3.f, 3.f);
  xs[0] = 2.5f;
  xs[1] = -0.5f;
  for (const Case& c : cases) {
    CAPTURE(std::string(c.op));
    const bool positive = c.mode == ActivationMode::LOG || c.mode == ActivationMode::SQRT;
    const std::vector<float>& in = positive ? x : xs;
    OnnxModel m(c.opset);
    m.input("x", xd);
    m.node(c.op, {"x"}, {"y"});
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(std::get<ActivationAttrs>(only_node(g, OpType::ACTIVATION).attrs).act.mode == c.mode);
    std::vector<double> want(in.size());
    for (size_t i = 0; i < in.size(); ++i) want[i] = c.f(in[i]);
    CHECK(rel_error(run(g, {in})[0], want) < 1e-6);
  }
  SUBCASE("Gelu approximate = tanh; an unknown approximation is an error") {
    OnnxModel m(20);
    m.input("x", xd);
    jet::test::attr_string(m.node("Gelu", {"x"}, {"y"}), "approximate", "tanh");
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(std::get<ActivationAttrs>(only_node(g, OpType::ACTIVATION).attrs).act.mode == ActivationMode::GELU_TANH);
    std::vector<double> want(xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      const double v = xs[i];
      want[i] = 0.5 * v * (1 + std::tanh(std::sqrt(2 / pi) * (v + 0.044715 * v * v * v)));
    }
    CHECK(rel_error(run(g, {xs})[0], want) < 1e-6);
    OnnxModel bad(20);
    bad.input("x", xd);
    jet::test::attr_string(bad.node("Gelu", {"x"}, {"y"}), "approximate", "fast");
    bad.output("y");
    Graph gb;
    CHECK(import_model(bad, &gb).code() == StatusCode::BAD_PARAM);
  }
  SUBCASE("constants fold with the kernels' formula: Exp(Floor(Sqrt(c))), and Neg, Abs of int64 shapes") {
    OnnxModel m(13);
    m.input("x", {4});
    m.initializer_i64("k", {2}, {-2, 2});
    m.node("Neg", {"k"}, {"nk"});
    m.node("Abs", {"nk"}, {"ak"});
    m.node("Reshape", {"x", "ak"}, {"r"});  // needs a constant shape: {2, 2}
    m.output("r");
    const Graph g = import_ok(m);
    CHECK(g.tensors[output_tensor(g)].dims == std::vector<int64_t>{2, 2});
    OnnxModel ok(13);
    ok.input("x", {4});
    ok.initializer("c", {4}, {0.25f, 4.f, 10.f, 0.f});
    ok.node("Sqrt", {"c"}, {"s"});
    ok.node("Floor", {"s"}, {"f"});
    ok.node("Exp", {"f"}, {"e"});
    ok.node("Add", {"x", "e"}, {"y"});
    ok.output("y");
    const Graph g2 = import_ok(ok);
    CHECK(count_op(g2, OpType::ACTIVATION) == 0);
    const std::vector<float> xv = {1.f, 2.f, 3.f, 4.f};
    const std::vector<double> want = {1 + 1.0, 2 + std::exp(2.0), 3 + std::exp(3.0), 4 + 1.0};
    CHECK(rel_error(run(g2, {xv})[0], want) < 1e-6);
  }
}

TEST_CASE("onnx import: Pow and Mod of computed tensors with broadcasting match float64") {
  const std::vector<int64_t> xd = {2, 3, 4}, ed = {3, 1};
  std::vector<float> x = random_values(24, 31, 0.5f, 2.f), e = random_values(3, 32, -2.f, 2.f);
  SUBCASE("Pow: computed exponent, constant scalar exponent 0.5 and integer 3, constant base") {
    OnnxModel m(15);
    m.input("x", xd);
    m.input("e", ed);
    m.initializer("half", {}, {0.5f});
    m.initializer_i64("three", {}, {3});
    m.initializer("base", {1}, {1.5f});
    m.node("Pow", {"x", "e"}, {"p"});
    m.node("Pow", {"x", "half"}, {"h"});
    m.node("Pow", {"x", "three"}, {"t"});
    m.node("Pow", {"base", "e"}, {"b"});
    m.output("p");
    m.output("h");
    m.output("t");
    m.output("b");
    const Graph g = import_ok(m);
    CHECK(count_op(g, OpType::OP_TENSOR) == 4);
    const auto out = run(g, {x, e});
    const auto pw = [](double a, double b) { return std::pow(a, b); };
    CHECK(rel_error(out[0], ref_broadcast(x, xd, e, ed, xd, pw)) < 1e-6);
    CHECK(rel_error(out[1], ref_broadcast(x, xd, {0.5f}, {1}, xd, pw)) < 1e-6);
    CHECK(rel_error(out[2], ref_broadcast(x, xd, {3.f}, {1}, xd, pw)) < 1e-6);
    CHECK(rel_error(out[3], ref_broadcast({1.5f}, {1}, e, ed, {3, 1}, pw)) < 1e-6);
  }
  SUBCASE("Mod: fmod = 1 with mixed signs; fmod = 0 folds constants and is NOT_SUPPORTED on computed floats") {
    for (float& v : x) v *= 3.f;
    x[0] = -x[0];
    e = {1.25f, -0.75f, 2.f};
    OnnxModel m(13);
    m.input("x", xd);
    m.input("e", ed);
    jet::test::attr_int(m.node("Mod", {"x", "e"}, {"y"}), "fmod", 1);
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(count_op(g, OpType::OP_TENSOR) == 1);
    const auto fm = [](double a, double b) { return std::fmod(a, b); };
    CHECK(rel_error(run(g, {x, e})[0], ref_broadcast(x, xd, e, ed, xd, fm)) < 1e-6);
    OnnxModel z(13);
    z.input("x", xd);
    z.input("e", ed);
    z.node("Mod", {"x", "e"}, {"y"}, "mod0");
    z.output("y");
    check_one_unsupported(z, "mod0", "fmod = 0");
    // Integer constants, fmod = 0: the divisor's sign (-7 mod 3 = 2, 7 mod -3 = -2).
    OnnxModel c(13);
    c.input("x", {2});
    c.initializer_i64("a", {2}, {-7, 7});
    c.initializer_i64("b", {2}, {3, -3});
    c.node("Mod", {"a", "b"}, {"m"});
    jet::test::attr_int(c.node("Cast", {"m"}, {"mf"}), "to", onnx::TensorProto::FLOAT);
    c.node("Add", {"x", "mf"}, {"y"});
    c.output("y");
    const Graph gc = import_ok(c);
    CHECK(rel_error(run(gc, {{0.f, 0.f}})[0], {2.0, -2.0}) == 0);
    // Clip of integer constants folds too: Clip(0, 6) (relu6) and Clip(-1, 2).
    OnnxModel k(13);
    k.input("x", {4});
    k.initializer_i64("v", {4}, {-3, 4, 9, 1});
    k.initializer_i64("zero", {}, {0});
    k.initializer_i64("six", {}, {6});
    k.initializer_i64("m1", {}, {-1});
    k.initializer_i64("two", {}, {2});
    k.node("Clip", {"v", "zero", "six"}, {"r6"});
    k.node("Clip", {"v", "m1", "two"}, {"c2"});
    k.node("Add", {"r6", "c2"}, {"s"});
    jet::test::attr_int(k.node("Cast", {"s"}, {"sf"}), "to", onnx::TensorProto::FLOAT);
    k.node("Add", {"x", "sf"}, {"y"});
    k.output("y");
    const Graph gk = import_ok(k);
    CHECK(rel_error(run(gk, {{0.f, 0.f, 0.f, 0.f}})[0], {0 - 1.0, 4 + 2.0, 6 + 2.0, 1 + 1.0}) == 0);
  }
}

namespace {

// Layer normalization over the dims from `axis` on of a packed x, in double.
std::vector<double> ref_layernorm(const std::vector<float>& x, const std::vector<int64_t>& dims, int axis,
                                  const std::vector<float>& scale, const std::vector<float>& bias, double eps) {
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis); d < dims.size(); ++d) inner *= dims[d];
  std::vector<double> y(x.size());
  for (size_t g0 = 0; g0 < x.size(); g0 += static_cast<size_t>(inner)) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < inner; ++i) mean += x[g0 + i];
    mean /= static_cast<double>(inner);
    for (int64_t i = 0; i < inner; ++i) var += (x[g0 + i] - mean) * (x[g0 + i] - mean);
    var /= static_cast<double>(inner);
    for (int64_t i = 0; i < inner; ++i) {
      double v = (x[g0 + i] - mean) / std::sqrt(var + eps);
      if (!scale.empty()) v *= scale[static_cast<size_t>(i) % scale.size()];
      if (!bias.empty()) v += bias[static_cast<size_t>(i) % bias.size()];
      y[g0 + i] = v;
    }
  }
  return y;
}

}  // namespace

TEST_CASE("onnx import: LayerNormalization (axis, epsilon, optional B, broadcast Scale) matches float64") {
  const std::vector<int64_t> xd = {2, 3, 4, 5};
  const std::vector<float> x = random_values(120, 41, -2.f, 3.f);
  for (int64_t axis : {-1, 2, 0}) {
    for (bool with_bias : {true, false}) {
      CAPTURE(axis);
      CAPTURE(with_bias);
      const int a = static_cast<int>(axis < 0 ? axis + 4 : axis);
      std::vector<int64_t> nd(xd.begin() + a, xd.end());
      int64_t inner = 1;
      for (int64_t d : nd) inner *= d;
      const std::vector<float> scale = random_values(static_cast<size_t>(inner), 42, 0.5f, 1.5f);
      const std::vector<float> bias = random_values(static_cast<size_t>(inner), 43);
      OnnxModel m(17);
      m.input("x", xd);
      m.initializer("s", nd, scale);
      if (with_bias) m.initializer("b", nd, bias);
      onnx::NodeProto* n = m.node("LayerNormalization", with_bias ? std::vector<std::string>{"x", "s", "b"}
                                                                  : std::vector<std::string>{"x", "s"}, {"y"});
      jet::test::attr_int(n, "axis", axis);
      jet::test::attr_float(n, "epsilon", 1e-3f);
      m.output("y");
      const Graph g = import_ok(m);
      CHECK(count_op(g, OpType::LAYERNORM) == 1);
      CHECK(rel_error(run(g, {x})[0], ref_layernorm(x, xd, a, scale, with_bias ? bias : std::vector<float>{},
                                                    static_cast<double>(1e-3f))) < 1e-5);
    }
  }
  SUBCASE("a Scale of [1, 5] broadcasts over normalized dims [4, 5]; the Mean and InvStdDev outputs") {
    const std::vector<float> scale = random_values(5, 44, 0.5f, 1.5f);
    OnnxModel m(17);
    m.input("x", xd);
    m.initializer("s", {1, 5}, scale);
    jet::test::attr_int(m.node("LayerNormalization", {"x", "s"}, {"y"}), "axis", 2);
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(rel_error(run(g, {x})[0], ref_layernorm(x, xd, 2, scale, {}, static_cast<double>(1e-5f))) < 1e-5);
    OnnxModel mm(17);
    mm.input("x", xd);
    mm.initializer("s", {5}, scale);
    jet::test::attr_int(mm.node("LayerNormalization", {"x", "s"}, {"y", "mean", "inv_std"}), "axis", 3);
    mm.output("y");
    mm.output("mean");
    mm.output("inv_std");
    const Graph gm = import_ok(mm);
    CHECK(gm.tensors[output_tensor(gm, 1)].dims == std::vector<int64_t>{2, 3, 4, 1});
    const auto out = run(gm, {x});
    std::vector<double> mean(24), inv_std(24);
    for (size_t r = 0; r < 24; ++r) {
      double s = 0, q = 0;
      for (size_t k = 0; k < 5; ++k) s += x[r * 5 + k];
      mean[r] = s / 5;
      for (size_t k = 0; k < 5; ++k) q += (x[r * 5 + k] - mean[r]) * (x[r * 5 + k] - mean[r]);
      inv_std[r] = 1 / std::sqrt(q / 5 + static_cast<double>(1e-5f));
    }
    CHECK(rel_error(out[1], mean) < 1e-6);
    CHECK(rel_error(out[2], inv_std) < 1e-5);
  }
}

TEST_CASE("onnx import: GroupNormalization (per-group parameters before opset 21, per-channel from 21) matches float64") {
  const std::vector<int64_t> xd = {2, 6, 3, 5};
  const std::vector<float> x = random_values(180, 61, -2.f, 3.f);
  for (int64_t opset : {18, 21}) {
    CAPTURE(opset);
    const int64_t groups = 3, per = opset >= 21 ? 6 : 3;
    const std::vector<float> scale = random_values(static_cast<size_t>(per), 62, 0.5f, 1.5f);
    const std::vector<float> bias = random_values(static_cast<size_t>(per), 63);
    OnnxModel m(opset);
    m.input("x", xd);
    m.initializer("s", {per}, scale);
    m.initializer("b", {per}, bias);
    onnx::NodeProto* n = m.node("GroupNormalization", {"x", "s", "b"}, {"y"});
    jet::test::attr_int(n, "num_groups", groups);
    jet::test::attr_float(n, "epsilon", 1e-3f);
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(count_op(g, OpType::LAYERNORM) == 1);
    // Each (n, group) holds 2 channels x 15 elements, contiguous in NCHW.
    std::vector<double> want = ref_layernorm(x, {2, 3, 30}, 2, {}, {}, static_cast<double>(1e-3f));
    for (size_t i = 0; i < want.size(); ++i) {
      const size_t ch = (i / 15) % 6, k = opset >= 21 ? ch : ch / 2;
      want[i] = want[i] * scale[k] + bias[k];
    }
    CHECK(rel_error(run(g, {x})[0], want) < 1e-5);
  }
}

TEST_CASE("onnx import: a decomposed layer normalization (ReduceMean ... Sqrt, Div, Mul, Add) fuses into one LAYERNORM") {
  const std::vector<float> gamma = random_values(12, 52, 0.5f, 1.5f), beta = random_values(12, 53);
  for (int variant = 0; variant < 3; ++variant) {
    // 0: Pow(d, 2), scale and bias; 1: Mul(d, d), scale only; 2: no scale, no bias. Rank 3: the
    // means over the last (spatial) dim are GLOBAL_POOL AVG; rank 4 (variant 2): REDUCE MEAN.
    CAPTURE(variant);
    const std::vector<int64_t> xd = variant == 2 ? std::vector<int64_t>{2, 3, 4, 12} : std::vector<int64_t>{2, 7, 12};
    const std::vector<float> x = random_values(variant == 2 ? 288 : 168, 51, -2.f, 3.f);
    OnnxModel m(13);
    m.input("x", xd);
    m.initializer("two", {}, {2.f});
    m.initializer("eps", {}, {1e-5f});
    m.initializer("gamma", {12}, gamma);
    m.initializer("beta", {12}, beta);
    jet::test::attr_ints(m.node("ReduceMean", {"x"}, {"mean"}), "axes", {-1});
    m.node("Sub", {"x", "mean"}, {"d"});
    if (variant == 1) {
      m.node("Mul", {"d", "d"}, {"sq"});
    } else {
      m.node("Pow", {"d", "two"}, {"sq"});
    }
    jet::test::attr_ints(m.node("ReduceMean", {"sq"}, {"var"}), "axes", {-1});
    m.node("Add", {"var", "eps"}, {"ve"});
    m.node("Sqrt", {"ve"}, {"sd"});
    m.node("Div", {"d", "sd"}, {variant == 2 ? "y" : "n"});
    if (variant < 2) m.node("Mul", {"n", "gamma"}, {variant == 0 ? "ns" : "y"});
    if (variant == 0) m.node("Add", {"ns", "beta"}, {"y"});
    m.output("y");
    Graph g = import_ok(m);
    const int axis = variant == 2 ? 3 : 2;
    const std::vector<double> want = ref_layernorm(x, xd, axis, variant < 2 ? gamma : std::vector<float>{},
                                                   variant == 0 ? beta : std::vector<float>{}, static_cast<double>(1e-5f));
    CHECK(rel_error(run(g, {x})[0], want) < 1e-5);  // unfused, as imported
    OptimizeReport report;
    REQUIRE(optimize_graph(&g, OptimizeOptions(), &report).ok());
    CHECK(report.layernorms_fused == 1);
    CHECK(g.nodes.size() == 1);
    const Node& ln = only_node(g, OpType::LAYERNORM);
    CHECK(std::get<fb::LayerNormParamsT>(ln.attrs).axis == axis);
    CHECK(std::get<fb::LayerNormParamsT>(ln.attrs).has_scale == (variant < 2));
    CHECK(std::get<fb::LayerNormParamsT>(ln.attrs).has_bias == (variant == 0));
    CHECK(rel_error(run(g, {x})[0], want) < 1e-5);
  }
  SUBCASE("not fused: the reduction is not over a suffix of the dims") {
    const std::vector<int64_t> xd = {2, 7, 12};
    OnnxModel m(13);
    m.input("x", xd);
    m.initializer("eps", {}, {1e-5f});
    jet::test::attr_ints(m.node("ReduceMean", {"x"}, {"mean"}), "axes", {1});
    m.node("Sub", {"x", "mean"}, {"d"});
    m.node("Mul", {"d", "d"}, {"sq"});
    jet::test::attr_ints(m.node("ReduceMean", {"sq"}, {"var"}), "axes", {1});
    m.node("Add", {"var", "eps"}, {"ve"});
    m.node("Sqrt", {"ve"}, {"sd"});
    m.node("Div", {"d", "sd"}, {"y"});
    m.output("y");
    Graph g = import_ok(m);
    OptimizeReport report;
    REQUIRE(optimize_graph(&g, OptimizeOptions(), &report).ok());
    CHECK(report.layernorms_fused == 0);
    CHECK(count_op(g, OpType::LAYERNORM) == 0);
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
    check_one_unsupported(m, "", "'lo'");
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

// `length`, when not empty, replaces the external data length of "w".
OnnxModel conv_model_with(const std::string& source, const std::vector<float>& w, const std::vector<float>& b,
                          const std::string& length = "") {
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
      entry("length", std::string(name) == "w" && !length.empty() ? length
                                                                  : std::to_string(std::string(name) == "w" ? w.size() * 4 : b.size() * 4));
    }
  }
  m.node("Conv", {"x", "w", "b"}, {"y"});
  m.output("y");
  return m;
}

}  // namespace

TEST_CASE("onnx import: weights from float_data, raw_data, Constant nodes and external data agree") {
  const std::vector<float> w = random_values(54, 16), b = random_values(3, 17);
  test::TempDir dir;
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
    for (const Bad& c : {Bad{"../weights.bin", "escapes"}, Bad{"sub/../../weights.bin", "escapes"},
                         Bad{"/etc/passwd", "not a relative path"}, Bad{"missing.bin", "No such file or directory"},
                         Bad{"short.bin", "past the end"}}) {
      CAPTURE(c.location);
      dir.write("bad.onnx", conv_model_with(c.location, w, b).bytes());
      Graph g;
      const Status st = import_onnx_file(dir.path + "/bad.onnx", ImportOptions(), &g, nullptr);
      CHECK(st.code() == StatusCode::BAD_PARAM);
      CHECK(contains(st.message(), "initializer '"));
      CHECK(contains(st.message(), c.expect));
      CHECK(g.nodes.empty());
    }
    // `sub/../weights.bin` stays inside the directory: it loads (sub/ must exist to resolve).
    REQUIRE(mkdir((dir.path + "/sub").c_str(), 0755) == 0);
    dir.write("dotdot.onnx", conv_model_with("sub/../weights.bin", w, b).bytes());
    {
      Graph g;
      const Status st = import_onnx_file(dir.path + "/dotdot.onnx", ImportOptions(), &g, nullptr);
      INFO(st.to_string());
      CHECK(st.ok());
    }
    // A NUL inside the location: the message says so and keeps what follows the NUL.
    {
      dir.write("nul.onnx", conv_model_with(std::string("weights\0tail.bin", 16), w, b).bytes());
      Graph g;
      const Status st = import_onnx_file(dir.path + "/nul.onnx", ImportOptions(), &g, nullptr);
      CHECK(contains(st.message(), "contains a NUL byte"));
      CHECK(contains(st.message(), "tail.bin"));
    }
    // Lengths: not a number at all, and a number too large, are told apart.
    for (const Bad& c : {Bad{"12a", "is not a byte count"}, Bad{"-5", "is not a byte count"},
                         Bad{"99999999999999999999", "is too large"}}) {
      CAPTURE(c.location);
      dir.write("len.onnx", conv_model_with("external", w, b, c.location).bytes());
      Graph g;
      const Status st = import_onnx_file(dir.path + "/len.onnx", ImportOptions(), &g, nullptr);
      CHECK(contains(st.message(), std::string("length '") + c.location + "' " + c.expect));
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
  jet::test::attr_int(m.graph->mutable_node(0), "size", 20);  // beyond the kernel's window limit
  m.node("Relu", {"a"}, {"b"});                       // behind LRN: skipped, not listed
  m.node("FancyActivation", {"b"}, {"c"}, "fancy");   // unknown op type: listed even behind LRN
  onnx::NodeProto* custom = m.node("MyOp", {"x"}, {"d"}, "custom");
  custom->set_domain("com.example");
  m.initializer_i64("st", {1}, {2});
  m.initializer_i64("en", {1}, {0});
  m.initializer_i64("ax", {1}, {1});
  m.initializer_i64("sp", {1}, {-1});
  m.node("Slice", {"x", "st", "en", "ax", "sp"}, {"e"}, "slice_channels");  // known op, unsupported use
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
    CHECK(contains(st.message(), "initializer 'w': raw_data has 12 bytes, but dims [2, 2, 1, 1] of FLOAT need 16"));
  }
  SUBCASE("typed data of the wrong count, negative dims, unsupported element types") {
    OnnxModel m = small_model();
    m.graph->mutable_initializer(1)->add_float_data(1.f);
    Status st = import_model(m, &g);
    CHECK(contains(st.message(), "initializer 'b': float_data has 3 values, but dims [2] need 2"));
    m = small_model();
    m.graph->mutable_initializer(1)->set_dims(0, -2);
    st = import_model(m, &g);
    CHECK(contains(st.message(), "initializer 'b': dims [-2] has a negative dim"));
    m = small_model();
    m.graph->mutable_initializer(1)->set_data_type(onnx::TensorProto::STRING);
    st = import_model(m, &g);
    CHECK(st.code() == StatusCode::NOT_SUPPORTED);
    CHECK(contains(st.message(), "initializer 'b': element type STRING"));
  }
  SUBCASE("an integer tensor where a float input is required (fuzzer finding: INT32 Conv bias)") {
    OnnxModel m = small_model();
    onnx::TensorProto* b = m.graph->mutable_initializer(1);
    b->clear_float_data();
    b->clear_raw_data();
    b->set_data_type(onnx::TensorProto::INT32);
    b->add_int32_data(1);
    b->add_int32_data(2);
    const Status st = import_model(m, &g);
    CHECK(st.code() == StatusCode::BAD_PARAM);
    CHECK(contains(st.message(), "Conv 'conv': constant 'b' holds integers, but this input takes float values"));
  }
  SUBCASE("a float constant where the node's other input is an integer tensor (fuzzer finding)") {
    // Add(INT64 x, FLOAT constant): ONNX wants one type. It reached the writer as an INT64
    // constant holding float values, reported as the writer's error.
    OnnxModel m(13);
    m.input("x", {3, 2}, onnx::TensorProto::INT64);
    m.initializer("c", {}, {1.f});
    m.node("Add", {"x", "c"}, {"y"}, "add");
    m.output("y", onnx::TensorProto::INT64);
    const Status st = import_model(m, &g);
    CHECK(st.code() == StatusCode::BAD_PARAM);
    CHECK(contains(st.message(), "Add 'add': constant 'c' holds float values, but this input takes i64 values"));
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
    CHECK(contains(st.message(), "Reshape 'reshape': cannot reshape [2, 3] to [4, -1]"));
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
    m.input("ids", {1, 4}, onnx::TensorProto::UINT8);
    m.node("Identity", {"ids"}, {"y"});
    m.output("y", onnx::TensorProto::UINT8);
    const Status st = import_model(m, &g);
    CHECK(st.code() == StatusCode::NOT_SUPPORTED);
    CHECK(contains(st.message(), "graph input 'ids' has element type UINT8"));
  }
  SUBCASE("an output declared with another type than it computes") {
    OnnxModel m(13);
    m.input("ids", {1, 4}, onnx::TensorProto::INT64);
    m.node("Identity", {"ids"}, {"y"});
    m.output("y");  // FLOAT
    const Status st = import_model(m, &g);
    CHECK(st.code() == StatusCode::BAD_PARAM);
    CHECK(contains(st.message(), "declared FLOAT but computes INT64"));
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
    // A Pad read by anything else becomes a PAD node for that reader (the Conv keeps its fold).
    m.node("Relu", {"xp"}, {"z"}, "relu_of_pad");
    m.output("z");
    const Graph g2 = import_ok(m);
    CHECK(count_op(g2, OpType::PAD) == 1);
    CHECK(count_op(g2, OpType::CONV) == 1);
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


// ---- strided copies, Pad, Resize, ConvTranspose, InstanceNormalization, LRN, Reduce --------------

namespace {

int64_t numel(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& d) {
  std::vector<int64_t> s(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;) s[i - 1] = s[i] * d[i];
  return s;
}

// Advances a row-major multi-index; false after the last one.
bool next_index(std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  for (size_t d = dims.size(); d-- > 0;) {
    if (++idx[d] < dims[d]) return true;
    idx[d] = 0;
  }
  return false;
}

// y[i] = x at (begin[k] + i[d] * step[k]) along x dim k = perm[d] (perm empty: identity); the
// output has count[perm[d]] entries along d.
std::vector<double> ref_strided(const std::vector<float>& x, const std::vector<int64_t>& xd, const std::vector<int64_t>& begin,
                                const std::vector<int64_t>& step, const std::vector<int64_t>& count,
                                std::vector<int64_t> perm = {}) {
  const size_t rank = xd.size();
  if (perm.empty()) {
    for (size_t d = 0; d < rank; ++d) perm.push_back(static_cast<int64_t>(d));
  }
  std::vector<int64_t> yd(rank);
  for (size_t d = 0; d < rank; ++d) yd[d] = count[perm[d]];
  const std::vector<int64_t> xs = row_major_strides(xd);
  std::vector<double> y;
  std::vector<int64_t> idx(rank, 0);
  do {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) off += (begin[perm[d]] + idx[d] * step[perm[d]]) * xs[perm[d]];
    y.push_back(x[static_cast<size_t>(off)]);
  } while (next_index(idx, yd));
  return y;
}

// ONNX Pad: mode "constant", "reflect" or "edge"; negative pads crop.
std::vector<double> ref_pad(const std::vector<float>& x, const std::vector<int64_t>& xd, const std::vector<int64_t>& b,
                            const std::vector<int64_t>& e, const std::string& mode, float value, std::vector<int64_t>* yd) {
  const size_t rank = xd.size();
  yd->resize(rank);
  for (size_t d = 0; d < rank; ++d) (*yd)[d] = xd[d] + b[d] + e[d];
  const std::vector<int64_t> xs = row_major_strides(xd);
  std::vector<double> y;
  std::vector<int64_t> idx(rank, 0);
  do {
    int64_t off = 0;
    bool inside = true;
    for (size_t d = 0; d < rank; ++d) {
      int64_t c = idx[d] - b[d];
      if (c < 0 || c >= xd[d]) {
        if (mode == "edge") c = c < 0 ? 0 : xd[d] - 1;
        if (mode == "reflect") c = c < 0 ? -c : 2 * (xd[d] - 1) - c;
        inside = inside && mode != "constant";
      }
      off += c * xs[d];
    }
    y.push_back(inside ? static_cast<double>(x[static_cast<size_t>(off)]) : value);
  } while (next_index(idx, *yd));
  return y;
}

// ONNX Resize (not cubic) over every dim: the output coordinate o maps to an input coordinate by
// `coord`; nearest rounds it by `nearest`, linear interpolates between the two neighbours (the
// coordinate clamped to the input, as ONNX's edge padding of the neighbours amounts to).
double resize_coordinate(const std::string& coord, int64_t o, int64_t in, int64_t out, double scale) {
  if (coord == "half_pixel") return (o + 0.5) / scale - 0.5;
  if (coord == "pytorch_half_pixel") return out > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
  if (coord == "align_corners") return out > 1 ? o * static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  if (coord == "tf_half_pixel_for_nn") return (o + 0.5) / scale;
  return o / scale;  // asymmetric
}

std::vector<double> ref_resize(const std::vector<float>& x, const std::vector<int64_t>& xd, const std::vector<int64_t>& yd,
                               const std::vector<double>& scales, bool linear, const std::string& coord,
                               const std::string& nearest) {
  const size_t rank = xd.size();
  const std::vector<int64_t> xs = row_major_strides(xd);
  std::vector<double> y;
  std::vector<int64_t> idx(rank, 0);
  do {
    // Per dim: two source indices and their weights.
    std::vector<int64_t> lo(rank), hi(rank);
    std::vector<double> w(rank);
    for (size_t d = 0; d < rank; ++d) {
      const double scale = scales.empty() ? static_cast<double>(yd[d]) / xd[d] : scales[d];
      double c = resize_coordinate(coord, idx[d], xd[d], yd[d], scale);
      if (linear) {
        c = std::min(std::max(c, 0.0), static_cast<double>(xd[d] - 1));
        lo[d] = static_cast<int64_t>(std::floor(c));
        hi[d] = std::min(lo[d] + 1, xd[d] - 1);
        w[d] = c - lo[d];
      } else {
        double r = 0;
        if (nearest == "round_prefer_floor") r = (c - std::floor(c) == 0.5) ? std::floor(c) : std::round(c);
        if (nearest == "round_prefer_ceil") r = (c - std::floor(c) == 0.5) ? std::ceil(c) : std::round(c);
        if (nearest == "floor") r = std::floor(c);
        if (nearest == "ceil") r = std::ceil(c);
        lo[d] = hi[d] = std::min(std::max<int64_t>(static_cast<int64_t>(r), 0), xd[d] - 1);
        w[d] = 0;
      }
    }
    double acc = 0;
    for (int corner = 0; corner < (1 << rank); ++corner) {
      double wt = 1;
      int64_t off = 0;
      for (size_t d = 0; d < rank; ++d) {
        const bool up = (corner >> d) & 1;
        wt *= up ? w[d] : 1 - w[d];
        off += (up ? hi[d] : lo[d]) * xs[d];
      }
      if (wt != 0) acc += wt * x[static_cast<size_t>(off)];
    }
    y.push_back(acc);
  } while (next_index(idx, yd));
  return y;
}

// ConvTranspose by scattering: each input element, through each tap, adds to one output element.
// x: N x C_in x spatial; w: C_in x C_out/group x kernel; pads begin per dim; yd: the output dims.
std::vector<double> ref_conv_transpose(const std::vector<float>& x, const std::vector<int64_t>& xd, const std::vector<float>& w,
                                       const std::vector<int64_t>& wd, const std::vector<float>& bias, int64_t group,
                                       const std::vector<int64_t>& pad_begin, const std::vector<int64_t>& strides,
                                       const std::vector<int64_t>& dil, const std::vector<int64_t>& yd) {
  const size_t sr = xd.size() - 2;
  std::vector<double> y(static_cast<size_t>(numel(yd)), 0.0);
  const std::vector<int64_t> ys = row_major_strides(yd), ws = row_major_strides(wd);
  const int64_t cin_g = xd[1] / group, cout_g = wd[1];
  std::vector<int64_t> xi(xd.size(), 0);
  size_t flat = 0;
  do {
    const int64_t n = xi[0], ci = xi[1], g = ci / cin_g;
    std::vector<int64_t> kd(wd.begin() + 2, wd.end()), t(sr, 0);
    do {
      int64_t yoff = n * ys[0], woff = ci * ws[0];
      bool inside = true;
      for (size_t d = 0; d < sr; ++d) {
        const int64_t o = xi[d + 2] * strides[d] - pad_begin[d] + t[d] * dil[d];
        inside = inside && o >= 0 && o < yd[d + 2];
        yoff += o * ys[d + 2];
        woff += t[d] * ws[d + 2];
      }
      if (inside) {
        for (int64_t co = 0; co < cout_g; ++co) {
          y[static_cast<size_t>(yoff + (g * cout_g + co) * ys[1])] += static_cast<double>(x[flat]) * w[woff + co * ws[1]];
        }
      }
    } while (next_index(t, kd));
    ++flat;
  } while (next_index(xi, xd));
  if (!bias.empty()) {
    for (size_t i = 0; i < y.size(); ++i) y[i] += bias[(i / ys[1]) % yd[1]];
  }
  return y;
}

std::vector<double> ref_instance_norm(const std::vector<float>& x, int64_t n, int64_t c, int64_t spatial,
                                      const std::vector<float>& scale, const std::vector<float>& bias, double eps) {
  std::vector<double> y(x.size());
  for (int64_t i = 0; i < n * c; ++i) {
    double mean = 0, var = 0;
    for (int64_t k = 0; k < spatial; ++k) mean += x[i * spatial + k];
    mean /= spatial;
    for (int64_t k = 0; k < spatial; ++k) var += (x[i * spatial + k] - mean) * (x[i * spatial + k] - mean);
    var /= spatial;
    for (int64_t k = 0; k < spatial; ++k) {
      y[i * spatial + k] = scale[i % c] * (x[i * spatial + k] - mean) / std::sqrt(var + eps) + bias[i % c];
    }
  }
  return y;
}

// ONNX LRN: the window [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to the channels.
std::vector<double> ref_lrn(const std::vector<float>& x, int64_t n, int64_t c, int64_t spatial, int64_t size, double alpha,
                            double beta, double bias) {
  std::vector<double> y(x.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t k = 0; k < spatial; ++k) {
        double sq = 0;
        for (int64_t j = std::max<int64_t>(0, ch - (size - 1) / 2); j <= std::min(c - 1, ch + size / 2); ++j) {
          const double v = x[(b * c + j) * spatial + k];
          sq += v * v;
        }
        const size_t i = static_cast<size_t>((b * c + ch) * spatial + k);
        y[i] = x[i] / std::pow(bias + alpha / size * sq, beta);
      }
  return y;
}

// Reduction over `axes` with keepdims (the caller drops dims for keepdims = 0: same order).
std::vector<double> ref_reduce(const std::vector<float>& x, const std::vector<int64_t>& xd, const std::vector<int64_t>& axes,
                               const std::string& op) {
  std::vector<int64_t> yd = xd;
  for (int64_t a : axes) yd[a] = 1;
  const std::vector<int64_t> ys = row_major_strides(yd);
  std::vector<double> acc(static_cast<size_t>(numel(yd)), op == "max" ? -INFINITY : op == "min" ? INFINITY : 0.0);
  std::vector<int64_t> idx(xd.size(), 0);
  size_t flat = 0;
  do {
    int64_t off = 0;
    for (size_t d = 0; d < xd.size(); ++d) off += (yd[d] == 1 ? 0 : idx[d]) * ys[d];
    double& a = acc[static_cast<size_t>(off)];
    const double v = x[flat++];
    if (op == "max") a = std::max(a, v);
    else if (op == "min") a = std::min(a, v);
    else a += v;
  } while (next_index(idx, xd));
  if (op == "mean") {
    for (double& a : acc) a *= static_cast<double>(acc.size()) / static_cast<double>(x.size());
  }
  return acc;
}

uint32_t fresh_seed() {
  static std::random_device rd;
  return rd();
}

}  // namespace

TEST_CASE("onnx import: Transpose, Slice, Split and Gather of computed tensors are SLICE nodes") {
  const uint32_t seed = fresh_seed();
  MESSAGE("seed " << seed);
  const std::vector<int64_t> xd = {2, 3, 5, 7};
  const std::vector<float> x = random_values(210, seed);
  SUBCASE("Transpose with perm and with the default (reversed) perm") {
    OnnxModel m(13);
    m.input("x", xd);
    jet::test::attr_ints(m.node("Transpose", {"x"}, {"t"}), "perm", {0, 2, 3, 1});
    m.node("Transpose", {"x"}, {"r"});
    m.output("t");
    m.output("r");
    const Graph g = import_ok(m);
    CHECK(count_op(g, OpType::SLICE) == 2);
    CHECK(g.tensors[output_tensor(g, 0)].dims == std::vector<int64_t>{2, 5, 7, 3});
    CHECK(g.tensors[output_tensor(g, 1)].dims == std::vector<int64_t>{7, 5, 3, 2});
    const auto out = run(g, {x});
    CHECK(rel_error(out[0], ref_strided(x, xd, {0, 0, 0, 0}, {1, 1, 1, 1}, xd, {0, 2, 3, 1})) == 0);
    CHECK(rel_error(out[1], ref_strided(x, xd, {0, 0, 0, 0}, {1, 1, 1, 1}, xd, {3, 2, 1, 0})) == 0);
  }
  SUBCASE("Slice with opset 9 attributes") {
    OnnxModel m(9);
    m.input("x", xd);
    onnx::NodeProto* n = m.node("Slice", {"x"}, {"y"});
    jet::test::attr_ints(n, "starts", {1, -4});
    jet::test::attr_ints(n, "ends", {1000, -1});
    jet::test::attr_ints(n, "axes", {1, 3});
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(count_op(g, OpType::SLICE) == 1);
    // dim 1: [1, 3); dim 3: [-4 + 7, -1 + 7) = [3, 6).
    CHECK(rel_error(run(g, {x})[0], ref_strided(x, xd, {0, 1, 0, 3}, {1, 1, 1, 1}, {2, 2, 5, 3})) == 0);
  }
  SUBCASE("Slice with opset 13 inputs: steps, negative axes, clamping, a negative step of one element") {
    OnnxModel m(13);
    m.input("x", xd);
    m.initializer_i64("starts", {3}, {-100, 1, 4});
    m.initializer_i64("ends", {3}, {INT64_MAX, 7, -100});
    m.initializer_i64("axes", {3}, {-1, 2, 0});
    m.initializer_i64("steps", {3}, {3, 2, -5});
    m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
    m.output("y");
    const Graph g = import_ok(m);
    // dim 3: start clamped to 0, step 3 -> 0, 3, 6; dim 2: 1, 3 (end clamped to 5);
    // dim 0: start 4 clamped to 1, end -100 clamped to -1, step -5 -> just index 1.
    CHECK(g.tensors[output_tensor(g)].dims == std::vector<int64_t>{1, 3, 2, 3});
    CHECK(rel_error(run(g, {x})[0], ref_strided(x, xd, {1, 0, 1, 0}, {1, 1, 2, 3}, {1, 3, 2, 3})) == 0);
  }
  SUBCASE("a negative step over several elements of a computed tensor is NOT_SUPPORTED") {
    OnnxModel m(13);
    m.input("x", xd);
    m.initializer_i64("starts", {1}, {-1});
    m.initializer_i64("ends", {1}, {INT64_MIN});
    m.initializer_i64("axes", {1}, {3});
    m.initializer_i64("steps", {1}, {-1});
    m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "flip");
    m.output("y");
    check_one_unsupported(m, "flip", "negative step");
  }
  SUBCASE("Split: opset 11 attribute, opset 13 input, opset 18 num_outputs, an unused output") {
    for (int64_t opset : {11, 13, 18}) {
      INFO("opset " << opset);
      OnnxModel m(opset);
      m.input("x", xd);
      onnx::NodeProto* n = m.node("Split", {"x"}, {"a", "b", "c"});
      jet::test::attr_int(n, "axis", -1);
      std::vector<int64_t> parts = {2, 4, 1};
      if (opset == 11) jet::test::attr_ints(n, "split", parts);
      if (opset == 13) {
        m.initializer_i64("split", {3}, parts);
        n->add_input("split");
      }
      if (opset == 18) {
        jet::test::attr_int(n, "num_outputs", 3);
        parts = {3, 3, 1};  // ceil(7 / 3), the last one smaller
      }
      m.output("a");
      m.output("c");
      const Graph g = import_ok(m);
      CHECK(count_op(g, OpType::SLICE) == 2);  // b is not used
      const auto out = run(g, {x});
      CHECK(rel_error(out[0], ref_strided(x, xd, {0, 0, 0, 0}, {1, 1, 1, 1}, {2, 3, 5, parts[0]})) == 0);
      CHECK(rel_error(out[1], ref_strided(x, xd, {0, 0, 0, parts[0] + parts[1]}, {1, 1, 1, 1}, {2, 3, 5, parts[2]})) == 0);
    }
  }
  SUBCASE("Gather with a scalar index and with an index list") {
    OnnxModel m(13);
    m.input("x", xd);
    m.initializer_i64("i", {}, {-2});
    m.initializer_i64("list", {2}, {4, 0});
    jet::test::attr_int(m.node("Gather", {"x", "i"}, {"a"}), "axis", 2);
    jet::test::attr_int(m.node("Gather", {"x", "list"}, {"b"}), "axis", -1);
    m.output("a");
    m.output("b");
    const Graph g = import_ok(m);
    CHECK(g.tensors[output_tensor(g, 0)].dims == std::vector<int64_t>{2, 3, 7});
    CHECK(g.tensors[output_tensor(g, 1)].dims == std::vector<int64_t>{2, 3, 5, 2});
    const auto out = run(g, {x});
    CHECK(rel_error(out[0], ref_strided(x, xd, {0, 0, 3, 0}, {1, 1, 1, 1}, {2, 3, 1, 7})) == 0);
    CHECK(rel_error(out[1], ref_strided(x, xd, {0, 0, 0, 0}, {1, 1, 1, 4}, {2, 3, 5, 2}, {0, 1, 2, 3})) > 0);  // 4, 0 is not a stride
    std::vector<double> want;
    for (int64_t r = 0; r < 30; ++r) {
      want.push_back(x[r * 7 + 4]);
      want.push_back(x[r * 7 + 0]);
    }
    CHECK(rel_error(out[1], want) == 0);
  }
}

TEST_CASE("onnx import: Pad (constant, reflect, edge; attributes, inputs, axes, cropping) matches float64") {
  const uint32_t seed = fresh_seed();
  MESSAGE("seed " << seed);
  const std::vector<int64_t> xd = {2, 3, 5, 6};
  const std::vector<float> x = random_values(180, seed);
  SUBCASE("opset 6 attributes, reflect") {
    OnnxModel m(6);
    m.input("x", xd);
    onnx::NodeProto* n = m.node("Pad", {"x"}, {"y"});
    jet::test::attr_string(n, "mode", "reflect");
    jet::test::attr_ints(n, "pads", {0, 0, 2, 1, 0, 0, 4, 5});
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(count_op(g, OpType::PAD) == 1);
    std::vector<int64_t> yd;
    const std::vector<double> want = ref_pad(x, xd, {0, 0, 2, 1}, {0, 0, 4, 5}, "reflect", 0.f, &yd);
    CHECK(g.tensors[output_tensor(g)].dims == yd);
    CHECK(rel_error(run(g, {x})[0], want) == 0);
  }
  SUBCASE("opset 11 inputs: a constant value, padded channels, a cropped dim") {
    OnnxModel m(11);
    m.input("x", xd);
    m.initializer_i64("pads", {8}, {1, 0, -2, 1, 0, 2, 1, -3});
    m.initializer("v", {}, {-0.75f});
    m.node("Pad", {"x", "pads", "v"}, {"y"});
    m.output("y");
    const Graph g = import_ok(m);
    std::vector<int64_t> yd;
    const std::vector<double> want = ref_pad(x, xd, {1, 0, -2, 1}, {0, 2, 1, -3}, "constant", -0.75f, &yd);
    CHECK(g.tensors[output_tensor(g)].dims == yd);
    CHECK(rel_error(run(g, {x})[0], want) == 0);
  }
  SUBCASE("opset 18 axes input, edge") {
    OnnxModel m(18);
    m.input("x", xd);
    m.initializer_i64("pads", {4}, {3, 1, 0, 4});
    m.initializer_i64("axes", {2}, {-1, 1});
    onnx::NodeProto* n = m.node("Pad", {"x", "pads", "", "axes"}, {"y"});
    jet::test::attr_string(n, "mode", "edge");
    m.output("y");
    const Graph g = import_ok(m);
    std::vector<int64_t> yd;
    const std::vector<double> want = ref_pad(x, xd, {0, 1, 0, 3}, {0, 4, 0, 0}, "edge", 0.f, &yd);
    CHECK(rel_error(run(g, {x})[0], want) == 0);
  }
  SUBCASE("a zero Pad read by a Conv and by a Relu: folded into the Conv, a PAD node for the Relu") {
    OnnxModel m(13);
    m.input("x", xd);
    m.initializer_i64("pads", {8}, {0, 0, 1, 2, 0, 0, 2, 0});
    m.node("Pad", {"x", "pads"}, {"xp"}, "pad");
    m.initializer("w", {2, 3, 3, 3}, random_values(54, seed + 1));
    m.node("Conv", {"xp", "w"}, {"c"});
    m.node("Relu", {"xp"}, {"r"});
    m.output("c");
    m.output("r");
    const Graph g = import_ok(m);
    CHECK(count_op(g, OpType::PAD) == 1);
    CHECK(std::get<ConvAttrs>(only_node(g, OpType::CONV).attrs).pad_begin == std::vector<int64_t>{1, 2});
    std::vector<int64_t> yd;
    std::vector<double> want = ref_pad(x, xd, {0, 0, 1, 2}, {0, 0, 2, 0}, "constant", 0.f, &yd);
    for (double& v : want) v = std::max(v, 0.0);
    CHECK(rel_error(run(g, {x})[1], want) == 0);
  }
  SUBCASE("wrap and reflect past the edge are NOT_SUPPORTED, naming the node") {
    for (const char* mode : {"wrap", "reflect"}) {
      OnnxModel m(13);
      m.input("x", xd);
      m.initializer_i64("pads", {8}, {0, 0, 5, 0, 0, 0, 0, 0});
      jet::test::attr_string(m.node("Pad", {"x", "pads"}, {"y"}, "pad_it"), "mode", mode);
      m.output("y");
      check_one_unsupported(m, "pad_it", "");
    }
  }
}

TEST_CASE("onnx import: Resize and Upsample (opsets 7 to 19, modes, scales and sizes) match float64") {
  const uint32_t seed = fresh_seed();
  MESSAGE("seed " << seed);
  const std::vector<int64_t> xd = {2, 3, 5, 7};
  const std::vector<float> x = random_values(210, seed);
  struct Case {
    int64_t opset;
    std::string mode, coord, nearest;
    std::vector<float> scales;     // full rank, or empty
    std::vector<int64_t> sizes;    // full rank, or empty
    std::vector<int64_t> want_dims;
  };
  const std::vector<Case> cases = {
      {10, "nearest", "asymmetric", "floor", {1, 1, 2, 3}, {}, {2, 3, 10, 21}},
      {10, "nearest", "asymmetric", "ceil", {1, 1, 0.6f, 0.5f}, {}, {2, 3, 3, 3}},
      {10, "linear", "asymmetric", "", {1, 1, 1.5f, 0.75f}, {}, {2, 3, 7, 5}},
      {11, "linear", "half_pixel", "", {}, {2, 3, 9, 4}, {2, 3, 9, 4}},
      {11, "nearest", "align_corners", "round_prefer_ceil", {}, {2, 3, 8, 3}, {2, 3, 8, 3}},
      {13, "nearest", "tf_half_pixel_for_nn", "round_prefer_floor", {1, 1, 1.7f, 0.4f}, {}, {2, 3, 8, 2}},
      {13, "linear", "pytorch_half_pixel", "", {1, 1, 0.2f, 2.5f}, {}, {2, 3, 1, 17}},
      {13, "linear", "align_corners", "", {}, {2, 3, 6, 11}, {2, 3, 6, 11}},
      {19, "nearest", "half_pixel", "floor", {1, 1, 2.5f, 1.3f}, {}, {2, 3, 12, 9}},
  };
  for (const Case& c : cases) {
    INFO("opset " << c.opset << " " << c.mode << " " << c.coord << " " << c.nearest);
    OnnxModel m(c.opset);
    m.input("x", xd);
    if (!c.scales.empty()) m.initializer("scales", {4}, c.scales);
    if (!c.sizes.empty()) m.initializer_i64("sizes", {4}, c.sizes);
    onnx::NodeProto* n = nullptr;
    if (c.opset == 10) {
      n = m.node("Resize", {"x", "scales"}, {"y"});
    } else if (c.sizes.empty()) {
      n = m.node("Resize", {"x", "", "scales"}, {"y"});
    } else {
      m.initializer("roi", {0}, {});
      m.initializer("no_scales", {0}, {});
      n = m.node("Resize", {"x", "roi", "no_scales", "sizes"}, {"y"});
    }
    jet::test::attr_string(n, "mode", c.mode);
    if (c.opset > 10) {
      jet::test::attr_string(n, "coordinate_transformation_mode", c.coord);
      if (!c.nearest.empty()) jet::test::attr_string(n, "nearest_mode", c.nearest);
    }
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(count_op(g, OpType::RESIZE) == 1);
    REQUIRE(g.tensors[output_tensor(g)].dims == c.want_dims);
    std::vector<double> scales(c.scales.begin(), c.scales.end());
    CHECK(rel_error(run(g, {x})[0], ref_resize(x, xd, c.want_dims, scales, c.mode == "linear", c.coord, c.nearest)) < 1e-5);
  }
  SUBCASE("Upsample: opset 7 attribute scales, opset 9 input scales") {
    for (int64_t opset : {7, 9}) {
      OnnxModel m(opset);
      m.input("x", xd);
      onnx::NodeProto* n = nullptr;
      if (opset == 7) {
        n = m.node("Upsample", {"x"}, {"y"});
        jet::test::attr_floats(n, "scales", {1, 1, 2, 2});
      } else {
        m.initializer("s", {4}, {1, 1, 2, 2});
        n = m.node("Upsample", {"x", "s"}, {"y"});
      }
      jet::test::attr_string(n, "mode", opset == 7 ? "nearest" : "linear");
      m.output("y");
      const Graph g = import_ok(m);
      const std::vector<int64_t> yd = {2, 3, 10, 14};
      CHECK(rel_error(run(g, {x})[0], ref_resize(x, xd, yd, {1, 1, 2, 2}, opset == 9, "asymmetric", "floor")) < 1e-5);
    }
  }
  SUBCASE("opset 18 axes: scales for H and W only") {
    OnnxModel m(18);
    m.input("x", xd);
    m.initializer("scales", {2}, {2.f, 0.5f});
    onnx::NodeProto* n = m.node("Resize", {"x", "", "scales"}, {"y"});
    jet::test::attr_ints(n, "axes", {-1, 2});
    jet::test::attr_string(n, "mode", "linear");
    m.output("y");
    const Graph g = import_ok(m);
    const std::vector<int64_t> yd = {2, 3, 2, 14};
    CHECK(rel_error(run(g, {x})[0], ref_resize(x, xd, yd, {1, 1, 0.5, 2}, true, "half_pixel", "")) < 1e-5);
  }
  SUBCASE("cubic antialias shrinking, tf_crop_and_resize, resizing C and keep_aspect_ratio_policy are NOT_SUPPORTED") {
    for (int k = 0; k < 4; ++k) {
      OnnxModel m(18);
      m.input("x", xd);
      const float s = k == 0 ? 0.5f : 2.f;
      m.initializer("scales", {4}, {1, k == 2 ? 2.f : 1.f, s, s});
      m.initializer_i64("sizes", {4}, {2, 3, 6, 6});
      onnx::NodeProto* n = k == 3 ? m.node("Resize", {"x", "", "", "sizes"}, {"y"}, "rs")
                                  : m.node("Resize", {"x", "", "scales"}, {"y"}, "rs");
      if (k == 0) jet::test::attr_string(n, "mode", "cubic");
      if (k == 0) jet::test::attr_int(n, "antialias", 1);
      if (k == 1) jet::test::attr_string(n, "coordinate_transformation_mode", "tf_crop_and_resize");
      if (k == 3) jet::test::attr_string(n, "keep_aspect_ratio_policy", "not_larger");
      m.output("y");
      const char* words[] = {"antialias", "tf_crop_and_resize", "N or C", "keep_aspect_ratio_policy"};
      check_one_unsupported(m, "rs", words[k]);
    }
  }
}

TEST_CASE("onnx import: ConvTranspose (groups, strides, dilations, pads, output_padding, output_shape, auto_pad) matches float64") {
  const uint32_t seed = fresh_seed();
  MESSAGE("seed " << seed);
  struct Case {
    std::vector<int64_t> xd, wd;
    int64_t group;
    std::vector<int64_t> strides, dil, pads, out_pad, out_shape;
    std::string auto_pad;
    std::vector<int64_t> want_begin, want_dims;
  };
  const std::vector<Case> cases = {
      // H: 2 * 4 + 1 + 2 + 1 - 1 - 0 = 11; W: 6 + 0 + 2 * 1 + 1 - 0 - 2 = 7.
      {{2, 4, 5, 7}, {4, 3, 3, 2}, 2, {2, 1}, {1, 2}, {1, 0, 0, 2}, {1, 0}, {}, "NOTSET", {1, 0}, {2, 6, 11, 7}},
      // output_shape 10 x 6: totals 12 - 10 = 2 (begin 1) and 7 - 6 = 1 (begin 1, NOTSET puts
      // the odd one first).
      {{1, 2, 4, 5}, {2, 2, 3, 3}, 1, {3, 1}, {1, 1}, {}, {}, {10, 6}, "NOTSET", {1, 1}, {1, 2, 10, 6}},
      // SAME_UPPER: out = in * stride = 8 x 6; totals 9 - 8 = 1 (begin 0) and 7 - 6 = 1.
      {{1, 3, 4, 3}, {3, 1, 2, 3}, 3, {2, 2}, {1, 1}, {}, {}, {}, "SAME_UPPER", {0, 0}, {1, 3, 8, 6}},
      // 1-D, SAME_LOWER: out 9, total 3 * 2 + 4 + 1 - 9 = 2 (begin 1).
      {{2, 2, 3}, {2, 2, 5}, 1, {3}, {1}, {}, {}, {}, "SAME_LOWER", {1}, {2, 2, 9}},
  };
  for (size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    INFO("case " << k << " " << c.auto_pad);
    OnnxModel m(13);
    m.input("x", c.xd);
    const std::vector<float> w = random_values(static_cast<size_t>(numel(c.wd)), seed + 1);
    const std::vector<float> b = random_values(static_cast<size_t>(c.wd[1] * c.group), seed + 2);
    const std::vector<float> x = random_values(static_cast<size_t>(numel(c.xd)), seed + 3);
    m.initializer("w", c.wd, w);
    m.initializer("b", {c.wd[1] * c.group}, b);
    onnx::NodeProto* n = m.node("ConvTranspose", {"x", "w", "b"}, {"y"});
    jet::test::attr_int(n, "group", c.group);
    jet::test::attr_ints(n, "strides", c.strides);
    jet::test::attr_ints(n, "dilations", c.dil);
    if (!c.pads.empty()) jet::test::attr_ints(n, "pads", c.pads);
    if (!c.out_pad.empty()) jet::test::attr_ints(n, "output_padding", c.out_pad);
    if (!c.out_shape.empty()) jet::test::attr_ints(n, "output_shape", c.out_shape);
    if (c.auto_pad != "NOTSET") jet::test::attr_string(n, "auto_pad", c.auto_pad);
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(count_op(g, OpType::CONV_TRANSPOSE) == 1);
    REQUIRE(g.tensors[output_tensor(g)].dims == c.want_dims);
    const std::vector<double> want = ref_conv_transpose(x, c.xd, w, c.wd, b, c.group, c.want_begin, c.strides, c.dil, c.want_dims);
    CHECK(rel_error(run(g, {x})[0], want) < 1e-5);
  }
  SUBCASE("output_padding >= stride is NOT_SUPPORTED") {
    OnnxModel m(13);
    m.input("x", {1, 2, 4, 4});
    m.initializer("w", {2, 2, 3, 3}, random_values(36, seed));
    onnx::NodeProto* n = m.node("ConvTranspose", {"x", "w"}, {"y"}, "up");
    jet::test::attr_ints(n, "strides", {2, 2});
    jet::test::attr_ints(n, "dilations", {3, 3});
    jet::test::attr_ints(n, "output_padding", {2, 0});
    m.output("y");
    check_one_unsupported(m, "up", "output_padding");
  }
}

TEST_CASE("onnx import: InstanceNormalization, LRN and reductions over any axes match float64") {
  const uint32_t seed = fresh_seed();
  MESSAGE("seed " << seed);
  const std::vector<int64_t> xd = {2, 5, 3, 7};
  const std::vector<float> x = random_values(210, seed, -2.f, 3.f);
  SUBCASE("InstanceNormalization, rank 4 and rank 3") {
    for (size_t rank : {4u, 3u}) {
      const std::vector<int64_t> d = rank == 4 ? xd : std::vector<int64_t>{2, 5, 21};
      OnnxModel m(13);
      m.input("x", d);
      const std::vector<float> scale = random_values(5, seed + 1), bias = random_values(5, seed + 2);
      m.initializer("s", {5}, scale);
      m.initializer("b", {5}, bias);
      jet::test::attr_float(m.node("InstanceNormalization", {"x", "s", "b"}, {"y"}), "epsilon", 1e-3f);
      m.output("y");
      const Graph g = import_ok(m);
      CHECK(count_op(g, OpType::INSTANCENORM) == 1);
      CHECK(rel_error(run(g, {x})[0], ref_instance_norm(x, 2, 5, 21, scale, bias, static_cast<double>(1e-3f))) < 1e-5);
    }
  }
  SUBCASE("LRN with odd and even sizes; a size beyond the kernel's limit is NOT_SUPPORTED") {
    for (int64_t size : {3, 4, 20}) {
      OnnxModel m(13);
      m.input("x", xd);
      onnx::NodeProto* n = m.node("LRN", {"x"}, {"y"}, "lrn");
      jet::test::attr_int(n, "size", size);
      jet::test::attr_float(n, "alpha", 0.3f);
      jet::test::attr_float(n, "beta", 0.6f);
      jet::test::attr_float(n, "bias", 1.5f);
      m.output("y");
      if (size == 20) {
        check_one_unsupported(m, "lrn", "");
        continue;
      }
      const Graph g = import_ok(m);
      const std::vector<double> want = ref_lrn(x, 2, 5, 21, size, static_cast<double>(0.3f), static_cast<double>(0.6f), 1.5);
      CHECK(rel_error(run(g, {x})[0], want) < 1e-5);
    }
  }
  SUBCASE("ReduceMin over H, W; ReduceMax over C (opset 18 axes input); ReduceSum over N and W; ReduceMean over all") {
    OnnxModel m(18);
    m.input("x", xd);
    m.initializer_i64("c", {1}, {1});
    m.initializer_i64("nw", {2}, {0, -1});
    jet::test::attr_int(m.node("ReduceMin", {"x", "hw"}, {"min"}), "keepdims", 1);
    m.initializer_i64("hw", {2}, {2, 3});
    jet::test::attr_int(m.node("ReduceMax", {"x", "c"}, {"max"}), "keepdims", 0);
    m.node("ReduceSum", {"x", "nw"}, {"sum"});
    m.node("ReduceMean", {"x"}, {"mean"});
    m.output("min");
    m.output("max");
    m.output("sum");
    m.output("mean");
    const Graph g = import_ok(m);
    CHECK(count_op(g, OpType::REDUCE) == 4);
    CHECK(g.tensors[output_tensor(g, 0)].dims == std::vector<int64_t>{2, 5, 1, 1});
    CHECK(g.tensors[output_tensor(g, 1)].dims == std::vector<int64_t>{2, 3, 7});
    CHECK(g.tensors[output_tensor(g, 2)].dims == std::vector<int64_t>{1, 5, 3, 1});
    CHECK(g.tensors[output_tensor(g, 3)].dims == std::vector<int64_t>{1, 1, 1, 1});
    const auto out = run(g, {x});
    CHECK(rel_error(out[0], ref_reduce(x, xd, {2, 3}, "min")) == 0);
    CHECK(rel_error(out[1], ref_reduce(x, xd, {1}, "max")) == 0);
    CHECK(rel_error(out[2], ref_reduce(x, xd, {0, 3}, "sum")) < 1e-6);
    CHECK(rel_error(out[3], ref_reduce(x, xd, {0, 1, 2, 3}, "mean")) < 1e-6);
  }
  SUBCASE("ReduceMax over C with opset 13 attribute axes, keepdims") {
    OnnxModel m(13);
    m.input("x", xd);
    jet::test::attr_ints(m.node("ReduceMax", {"x"}, {"y"}), "axes", {-3});
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(rel_error(run(g, {x})[0], ref_reduce(x, xd, {1}, "max")) == 0);
  }
}

TEST_CASE("onnx import: ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp match float64") {
  const std::vector<int64_t> xd = {2, 5, 3, 7};
  const std::vector<float> x = random_values(210, 71, 0.1f, 3.f);  // positive: LogSum is defined
  const auto map = [](const std::vector<float>& v, double (*f)(double)) {
    std::vector<float> r(v.size());
    for (size_t i = 0; i < v.size(); ++i) r[i] = static_cast<float>(f(v[i]));
    return r;
  };
  struct Case {
    const char* op;
    double (*pre)(double);
    double (*post)(double);
  };
  const Case cases[] = {
      {"ReduceL1", [](double v) { return std::fabs(v); }, [](double v) { return v; }},
      {"ReduceL2", [](double v) { return v * v; }, [](double v) { return std::sqrt(v); }},
      {"ReduceSumSquare", [](double v) { return v * v; }, [](double v) { return v; }},
      {"ReduceLogSum", [](double v) { return v; }, [](double v) { return std::log(v); }},
      {"ReduceLogSumExp", [](double v) { return std::exp(v); }, [](double v) { return std::log(v); }},
  };
  for (const Case& c : cases) {
    // Axes {1}: a REDUCE; {2, 3}: the spatial dims, a GLOBAL_POOL; keepdims 1 and 0.
    for (const std::vector<int64_t>& axes : {std::vector<int64_t>{1}, std::vector<int64_t>{2, 3}}) {
      for (int64_t keepdims : {1, 0}) {
        CAPTURE(std::string(c.op));
        CAPTURE(axes.size());
        CAPTURE(keepdims);
        OnnxModel m(18);
        m.input("x", xd);
        m.initializer_i64("axes", {static_cast<int64_t>(axes.size())}, axes);
        jet::test::attr_int(m.node(c.op, {"x", "axes"}, {"y"}), "keepdims", keepdims);
        m.output("y");
        const Graph g = import_ok(m);
        std::vector<double> want = ref_reduce(map(x, c.pre), xd, axes, "sum");
        for (double& v : want) v = c.post(v);
        CHECK(rel_error(run(g, {x})[0], want) < 1e-5);
      }
    }
  }
  SUBCASE("constants fold; LogSumExp subtracts the max, so large inputs do not overflow") {
    OnnxModel m(18);
    m.input("x", {2});
    m.initializer("c", {2, 2}, {1000.f, 1001.f, -2.f, 3.f});
    m.initializer_i64("axes", {1}, {1});
    jet::test::attr_int(m.node("ReduceLogSumExp", {"c", "axes"}, {"l"}), "keepdims", 0);
    m.node("Add", {"x", "l"}, {"y"});
    m.output("y");
    const Graph g = import_ok(m);
    CHECK(count_op(g, OpType::REDUCE) == 0);
    const std::vector<double> want = {1001.0 + std::log1p(std::exp(-1.0)), 3.0 + std::log1p(std::exp(-5.0))};
    CHECK(rel_error(run(g, {{0.f, 0.f}})[0], want) < 1e-6);
    OnnxModel big(18);
    big.input("x", {2, 3});
    big.initializer_i64("axes", {1}, {1});
    big.node("ReduceLogSumExp", {"x", "axes"}, {"y"});
    big.output("y");
    const Graph gb = import_ok(big);
    const std::vector<double> wb = {1001.0 + std::log(1 + std::exp(-1.0) + std::exp(-2.0)), 2.0 + std::log(1 + 2 * std::exp(-1.0))};
    CHECK(rel_error(run(gb, {{1000.f, 1001.f, 999.f, 1.f, 2.f, 1.f}})[0], wb) < 1e-6);
  }
}

TEST_CASE("onnx import: the new op types survive the passes, the writer and the f16 conversion") {
  const uint32_t seed = fresh_seed();
  MESSAGE("seed " << seed);
  OnnxModel m(13);
  m.input("x", {1, 4, 6, 5});
  m.initializer("w", {4, 2, 3, 3}, random_values(72, seed));
  m.initializer("s", {2}, {1.f, 0.5f});
  m.initializer("b", {2}, {0.f, 0.25f});
  jet::test::attr_ints(m.node("ConvTranspose", {"x", "w"}, {"ct"}), "strides", {2, 2});
  m.node("InstanceNormalization", {"ct", "s", "b"}, {"in"});
  jet::test::attr_int(m.node("LRN", {"in"}, {"l"}), "size", 3);
  m.initializer("scales", {4}, {1, 1, 0.5f, 0.5f});
  m.node("Resize", {"l", "", "scales"}, {"r"});
  m.initializer_i64("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
  m.node("Pad", {"r", "pads"}, {"p"});
  jet::test::attr_ints(m.node("Transpose", {"p"}, {"t"}), "perm", {0, 2, 3, 1});
  m.initializer_i64("axes", {1}, {3});
  jet::test::attr_int(m.node("ReduceMax", {"t", "axes"}, {"y"}), "keepdims", 1);
  m.output("y");
  const Graph g = import_ok(m);
  const std::vector<float> x = random_values(120, seed + 1);
  const std::vector<float> want = run(g, {x})[0];
  Graph f16 = g;
  REQUIRE(convert_precision(&f16, DType::F16).ok());
  REQUIRE(set_channels_last(&f16).ok());
  for (const Node& n : f16.nodes) {
    if (n.op == OpType::INSTANCENORM) {
      CHECK(f16.tensors[n.inputs[1]].dtype == DType::F32);
      CHECK(f16.tensors[n.inputs[2]].dtype == DType::F32);
      CHECK(f16.tensors[n.inputs[0]].dtype == DType::F16);
    }
  }
  const std::vector<float> got = run(f16, {x})[0];
  CHECK(rel_error(got, to_double(want)) < 3e-2);
  std::vector<uint8_t> bytes;
  const Status st = write_model(f16, WriteOptions(), &bytes);
  INFO(st.to_string());
  CHECK(st.ok());
}

TEST_CASE("onnx import: every op's output is capped at 2^40 elements (Pad included)") {
  // 1x1x(4 + 2^21)x(4 + 2^21): 2^42 elements, a 16 TiB tensor.
  const int64_t big = int64_t(1) << 21;
  for (bool into_conv : {false, true}) {
    CAPTURE(into_conv);
    OnnxModel m(13);
    m.input("x", {1, 1, 4, 4});
    m.initializer_i64("pads", {8}, {0, 0, 0, 0, 0, 0, big, big});
    m.node("Pad", {"x", "pads"}, {"xp"}, "huge_pad");
    if (into_conv) {  // folded into the Conv's pads: the Conv's output is what is too large
      m.initializer("w", {1, 1, 1, 1}, {1.f});
      m.node("Conv", {"xp", "w"}, {"y"}, "conv");
      m.output("y");
    } else {
      m.output("xp");
    }
    Graph g;
    const Status st = import_model(m, &g);
    INFO(st.to_string());
    CHECK_FALSE(st.ok());
    CHECK(contains(st.message(), "more than 2^40 elements"));
    CHECK(contains(st.message(), into_conv ? "Conv" : "Pad"));
  }
  // Just under the cap converts (the limit is the cap, not something smaller).
  OnnxModel m(13);
  m.input("x", {1, 1, 4, 4});
  m.initializer_i64("pads", {8}, {0, 0, 0, 0, 0, 0, (int64_t(1) << 19) - 4, (int64_t(1) << 19) - 4});
  m.node("Pad", {"x", "pads"}, {"y"}, "large_pad");
  m.output("y");
  Graph g;
  CHECK(import_model(m, &g).ok());
}


TEST_CASE("onnx import: comparisons, logical ops, Where, ArgMax, Cast, Concat and Gather of computed integer and bool tensors") {
  // x: [2, 3, 5] float; ids: [2, 1, 5] int64. mask = Greater(x, t) Or Equal(ids, 2) (broadcast
  // both ways), w = Where(mask, x, -1), am = ArgMax(w, axis 1, keepdims, select_last_index),
  // cat = Concat(am, ids) on axis 1 (computed and input int64), g = Gather(cat, 1, axis 1) (a
  // SLICE of a computed int64 tensor), not = Not(mask), le = LessOrEqual(Cast(g -> int32), 1).
  const uint32_t seed = fresh_seed();
  MESSAGE("seed " << seed);
  OnnxModel m(13);
  m.input("x", {2, 3, 5});
  m.input("ids", {2, 1, 5}, onnx::TensorProto::INT64);
  m.initializer("t", {5}, {0.1f, -0.2f, 0.3f, 0.f, 0.5f});
  m.initializer_i64("two", {1}, {2});
  m.initializer("neg", {1}, {-1.f});
  m.initializer_i64("one", {}, {1});
  m.node("Greater", {"x", "t"}, {"gt"});
  m.node("Equal", {"ids", "two"}, {"eq"});
  m.node("Or", {"gt", "eq"}, {"mask"});
  m.node("Where", {"mask", "x", "neg"}, {"w"});
  onnx::NodeProto* am = m.node("ArgMax", {"w"}, {"am"});
  jet::test::attr_int(am, "axis", 1);
  jet::test::attr_int(am, "select_last_index", 1);
  jet::test::attr_int(m.node("Concat", {"am", "ids"}, {"cat"}), "axis", 1);
  jet::test::attr_int(m.node("Gather", {"cat", "one"}, {"g"}), "axis", 1);
  m.node("Not", {"mask"}, {"not"});
  jet::test::attr_int(m.node("Cast", {"g"}, {"g32"}), "to", onnx::TensorProto::INT32);
  onnx::TensorProto one32 = jet::test::int64_tensor("one32", {1}, {1});
  one32.set_data_type(onnx::TensorProto::INT32);
  one32.clear_int64_data();
  one32.add_int32_data(1);
  *m.graph->add_initializer() = one32;
  m.node("LessOrEqual", {"g32", "one32"}, {"le"});
  m.output("w");
  m.output("cat", onnx::TensorProto::INT64);
  m.output("g", onnx::TensorProto::INT64);
  m.output("not", onnx::TensorProto::BOOL);
  m.output("le", onnx::TensorProto::BOOL);
  const Graph g = import_ok(m);
  CHECK(count_op(g, OpType::LOGIC) == 5);  // Greater, Equal, Or, Not (= Xor with true), LessOrEqual
  CHECK(count_op(g, OpType::WHERE) == 1);
  CHECK(count_op(g, OpType::ARG_REDUCE) == 1);
  CHECK(count_op(g, OpType::CONCAT) == 1);
  CHECK(g.tensors[output_tensor(g, 1)].dtype == DType::I64);
  CHECK(g.tensors[output_tensor(g, 3)].dtype == DType::BOOL);

  std::vector<float> x = random_values(30, seed);
  for (float& v : x) v = std::round(v * 4.f) / 4.f;  // ties for ArgMax's select_last_index
  std::vector<float> ids(10);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<float>((seed + 3 * i) % 4);
  const std::vector<std::vector<float>> out = run(g, {x, ids});
  const float t[5] = {0.1f, -0.2f, 0.3f, 0.f, 0.5f};
  std::vector<float> w(30), mask(30), amv(10), cat(20), gv(10);
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 5; ++k) {
        const int i = (n * 3 + c) * 5 + k;
        mask[i] = (x[i] > t[k] || ids[n * 5 + k] == 2.f) ? 1.f : 0.f;
        w[i] = mask[i] != 0.f ? x[i] : -1.f;
      }
  for (int n = 0; n < 2; ++n)
    for (int k = 0; k < 5; ++k) {
      int best = 0;
      for (int c = 1; c < 3; ++c) {
        if (w[(n * 3 + c) * 5 + k] >= w[(n * 3 + best) * 5 + k]) best = c;
      }
      amv[n * 5 + k] = static_cast<float>(best);
      cat[(n * 2) * 5 + k] = amv[n * 5 + k];
      cat[(n * 2 + 1) * 5 + k] = ids[n * 5 + k];
      gv[n * 5 + k] = ids[n * 5 + k];
    }
  REQUIRE(out.size() == 5);
  CHECK(out[0] == w);
  CHECK(out[1] == cat);
  CHECK(out[2] == gv);
  std::vector<float> notv(30), le(10);
  for (size_t i = 0; i < 30; ++i) notv[i] = mask[i] != 0.f ? 0.f : 1.f;
  for (size_t i = 0; i < 10; ++i) le[i] = gv[i] <= 1.f ? 1.f : 0.f;
  CHECK(out[3] == notv);
  CHECK(out[4] == le);

  // Through the f16 conversion, channels-last and the writer: integer and bool tensors keep their
  // types, Where's operands become f16, and the results do not change.
  Graph f16 = g;
  REQUIRE(convert_precision(&f16, DType::F16).ok());
  REQUIRE(set_channels_last(&f16).ok());
  for (const Node& n : f16.nodes) {
    if (n.op == OpType::ARG_REDUCE) CHECK(f16.tensors[n.outputs[0]].dtype == DType::I64);
    if (n.op == OpType::LOGIC) CHECK(f16.tensors[n.outputs[0]].dtype == DType::BOOL);
  }
  std::vector<float> x16 = x;  // quarters: exact in f16
  const std::vector<std::vector<float>> out16 = run(f16, {x16, ids});
  for (size_t k = 0; k < out.size(); ++k) CHECK(out16[k] == out[k]);
  std::vector<uint8_t> bytes;
  const Status st = write_model(f16, WriteOptions(), &bytes);
  INFO(st.to_string());
  CHECK(st.ok());
}

TEST_CASE("onnx import: a float-only op reading a computed integer tensor is unsupported, not computed as floats") {
  OnnxModel m(13);
  m.input("x", {2, 3});
  jet::test::attr_int(m.node("Cast", {"x"}, {"xi"}), "to", onnx::TensorProto::INT64);
  m.node("Relu", {"xi"}, {"y"});
  m.output("y", onnx::TensorProto::INT64);
  check_one_unsupported(m, "y", "computes on FLOAT and FLOAT16 tensors only");
  OnnxModel a(13);
  a.input("x", {2, 3}, onnx::TensorProto::INT64);
  a.node("Sqrt", {"x"}, {"y"});
  a.output("y", onnx::TensorProto::INT64);
  check_one_unsupported(a, "y", "is a computed i64 tensor");
}

TEST_CASE("onnx import: Gather by computed indices (an embedding lookup) is a GATHER node") {
  // emb: a constant [5, 3] table; ids: an int64 input [2, 2]; y = Gather(emb, ids) [2, 2, 3];
  // z = Gather(x, ArgMax(x, axis 1), axis 1) picks each row's largest value position's column.
  OnnxModel m(13);
  m.input("ids", {2, 2}, onnx::TensorProto::INT64);
  m.input("x", {4, 6});
  std::vector<float> emb(15);
  for (size_t i = 0; i < emb.size(); ++i) emb[i] = static_cast<float>(i) * 0.5f - 3.f;
  m.initializer("emb", {5, 3}, emb);
  m.node("Gather", {"emb", "ids"}, {"y"});
  jet::test::attr_int(m.node("ArgMax", {"x"}, {"am"}), "axis", 1);
  jet::test::attr_int(m.node("Gather", {"x", "am"}, {"z"}), "axis", 1);
  m.output("y");
  m.output("z");
  const Graph g = import_ok(m);
  CHECK(count_op(g, OpType::GATHER) == 2);
  const std::vector<float> ids = {4, 0, -1, 2};  // -1: the last row
  std::vector<float> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 11);
  const std::vector<std::vector<float>> out = run(g, {ids, x});
  REQUIRE(out.size() == 2);
  std::vector<float> want_y;
  for (float id : ids) {
    const int r = id < 0 ? static_cast<int>(id) + 5 : static_cast<int>(id);
    for (int c = 0; c < 3; ++c) want_y.push_back(emb[r * 3 + c]);
  }
  CHECK(out[0] == want_y);
  // z [4, 4, 1]: z[i, j, 0] = x[i, am[j]] with am [4, 1] (keepdims).
  std::vector<int> am(4);
  for (int r = 0; r < 4; ++r) {
    for (int c = 1; c < 6; ++c) {
      if (x[r * 6 + c] > x[r * 6 + am[r]]) am[r] = c;
    }
  }
  std::vector<float> want_z;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) want_z.push_back(x[i * 6 + am[j]]);
  CHECK(out[1] == want_z);
}

TEST_CASE("onnx import: GatherElements, CumSum, ScatterElements, ScatterND and Tile of computed tensors") {
  // x: [3, 4] float, idx: [2, 4] int64 inputs. ge = GatherElements(x, idx, axis 0); cs =
  // CumSum(x, axis -1, exclusive, reverse); se = ScatterElements(x, idx, upd, axis 0, add); sn =
  // ScatterND(x, [[2]], row); tl = Tile(x, [2, 1]). (ONNX's node tests run Trilu on a computed x
  // with a constant k: the conformance harness's frozen-all-but-first variant.)
  OnnxModel m(16);
  m.input("x", {3, 4});
  m.input("idx", {2, 4}, onnx::TensorProto::INT64);
  m.initializer_i64("axis", {}, {-1});
  m.initializer_i64("rows", {1, 1}, {2});
  m.initializer_i64("reps", {2}, {2, 1});
  const std::vector<float> upd = {1, 2, 3, 4, 5, 6, 7, 8}, row = {-1, -2, -3, -4};
  m.initializer("upd", {2, 4}, upd);
  m.initializer("row", {1, 4}, row);
  jet::test::attr_int(m.node("GatherElements", {"x", "idx"}, {"ge"}), "axis", 0);
  onnx::NodeProto* cs = m.node("CumSum", {"x", "axis"}, {"cs"});
  jet::test::attr_int(cs, "exclusive", 1);
  jet::test::attr_int(cs, "reverse", 1);
  onnx::NodeProto* se = m.node("ScatterElements", {"x", "idx", "upd"}, {"se"});
  jet::test::attr_int(se, "axis", 0);
  jet::test::attr_string(se, "reduction", "add");
  m.node("ScatterND", {"x", "rows", "row"}, {"sn"});
  m.node("Tile", {"x", "reps"}, {"tl"});
  for (const char* o : {"ge", "cs", "se", "sn", "tl"}) m.output(o);
  const Graph g = import_ok(m);
  CHECK(count_op(g, OpType::GATHER_ELEMENTS) == 1);
  CHECK(count_op(g, OpType::CUMSUM) == 1);
  CHECK(count_op(g, OpType::SCATTER) == 2);
  CHECK(count_op(g, OpType::CONCAT) == 1);
  std::vector<float> x(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 5) % 7) - 3.f;
  const std::vector<float> idx = {2, -1, 0, 1, 0, 2, -3, 2};  // duplicates in column 0
  const std::vector<std::vector<float>> out = run(g, {x, idx});
  REQUIRE(out.size() == 5);
  std::vector<float> ge(8), csv(12), sev = x, snv = x, tl = x;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      const int r = static_cast<int>(idx[i * 4 + j]) < 0 ? static_cast<int>(idx[i * 4 + j]) + 3 : static_cast<int>(idx[i * 4 + j]);
      ge[i * 4 + j] = x[r * 4 + j];
      sev[r * 4 + j] += upd[i * 4 + j];
    }
  for (int i = 0; i < 3; ++i) {
    float sum = 0.f;
    for (int j = 3; j >= 0; --j) {
      csv[i * 4 + j] = sum;
      sum += x[i * 4 + j];
    }
  }
  for (int j = 0; j < 4; ++j) snv[2 * 4 + j] = row[j];
  tl.insert(tl.end(), x.begin(), x.end());
  CHECK(out[0] == ge);
  CHECK(out[1] == csv);
  CHECK(out[2] == sev);
  CHECK(out[3] == snv);
  CHECK(out[4] == tl);
}

TEST_CASE("onnx import: the ops imported by field name agree with ONNX's op schemas") {
  // Each table with jet_onnx in schema/model.fbs: its first opset, one output, every attribute a
  // field, every field an INT or FLOAT attribute or an input, every other input required; at every
  // opset libonnx knows.
  const Status st = check_onnx_ops_by_fields();
  INFO(st.to_string());
  CHECK(st.ok());
}

TEST_CASE("onnx import: by field name (CumSum, GatherElements): inputs and attributes as fields, negative axes, errors") {
  // converter/onnx/ops_by_fields.cpp, on two of its ops. x: [2, 3, 4]. cs = CumSum(x, axis -2 (a
  // constant input), reverse; exclusive absent); ge = GatherElements(x, idx, axis -1 (an
  // attribute)), idx [2, 3, 2]. (An attribute whose ONNX default differs from the table's is
  // checked by ONNX's node tests of the op that has one: test_triu* leave `upper` out.)
  OnnxModel m(14);
  m.input("x", {2, 3, 4});
  m.initializer_i64("axis", {1}, {-2});
  m.initializer_i64("idx", {2, 3, 2}, {3, 0, 1, 1, 2, -1, 0, 0, -4, 3, 2, 1});
  jet::test::attr_int(m.node("CumSum", {"x", "axis"}, {"cs"}), "reverse", 1);
  jet::test::attr_int(m.node("GatherElements", {"x", "idx"}, {"ge"}), "axis", -1);
  m.output("cs");
  m.output("ge");
  const Graph g = import_ok(m);
  const auto& cs_attrs = std::get<fb::CumSumParamsT>(only_node(g, OpType::CUMSUM).attrs);
  CHECK(cs_attrs.axis == 1);
  CHECK(!cs_attrs.exclusive);
  CHECK(cs_attrs.reverse);
  CHECK(std::get<fb::GatherElementsParamsT>(only_node(g, OpType::GATHER_ELEMENTS).attrs).axis == 2);
  const std::vector<float> x = random_values(24, 72);
  const std::vector<std::vector<float>> out = run(g, {x});
  REQUIRE(out.size() == 2);
  std::vector<float> cs(24), ge(12);
  const int64_t idx[12] = {3, 0, 1, 1, 2, -1, 0, 0, -4, 3, 2, 1};
  for (int b = 0; b < 2; ++b)
    for (int k = 0; k < 4; ++k) {
      float sum = 0.f;
      for (int i = 2; i >= 0; --i) cs[(b * 3 + i) * 4 + k] = sum += x[(b * 3 + i) * 4 + k];
    }
  for (int r = 0; r < 6; ++r)
    for (int j = 0; j < 2; ++j) ge[r * 2 + j] = x[r * 4 + (idx[r * 2 + j] + 4) % 4];
  CHECK(out[0] == cs);
  CHECK(out[1] == ge);

  SUBCASE("a computed field input is unsupported, naming it") {
    OnnxModel c(14);
    c.input("x", {2, 3, 4});
    c.input("axis_c", {1}, onnx::TensorProto::INT64);
    c.node("CumSum", {"x", "axis_c"}, {"y"});
    c.output("y");
    check_one_unsupported(c, "y", "axis 'axis_c' is computed at run time");
  }
  SUBCASE("an attribute that is not a field is unsupported, naming it") {
    OnnxModel c(14);
    c.input("x", {2, 3, 4});
    c.initializer_i64("axis", {}, {0});
    jet::test::attr_int(c.node("CumSum", {"x", "axis"}, {"y"}), "mode", 1);
    c.output("y");
    check_one_unsupported(c, "y", "attribute 'mode' is not supported (CumSumParams has no field of that name)");
  }
  // Errors, each naming the node.
  struct Bad {
    const char* what;
    const char* op;
    std::vector<int64_t> axis;  // CumSum: the axis input's values (none: absent); GatherElements: the attribute
    bool float_attribute;       // CumSum's exclusive, GatherElements' axis written as a FLOAT
    bool float_indices;         // GatherElements' indices FLOAT (the output rule refuses them)
    bool extra_input;           // the node has one input more than ONNX's op
    const char* message;
  };
  const Bad bad[] = {
      {"CumSum without its axis", "CumSum", {}, false, false, false, "missing input #1 (axis)"},
      {"CumSum's axis with two values", "CumSum", {0, 1}, false, false, false, "axis has 2 elements, expected one"},
      {"CumSum's axis out of range", "CumSum", {3}, false, false, false, "axis 3 is out of range for rank 3"},
      {"CumSum's exclusive as a FLOAT", "CumSum", {0}, true, false, false,
       "attribute 'exclusive' has type FLOAT, expected INT"},
      {"GatherElements' axis out of range", "GatherElements", {-4}, false, false, false,
       "axis -4 is out of range for rank 3"},
      {"GatherElements' axis as a FLOAT", "GatherElements", {0}, true, false, false,
       "attribute 'axis' has type FLOAT, expected INT"},
      {"GatherElements' FLOAT indices", "GatherElements", {0}, false, true, false, "indices are f32"},
      {"GatherElements with three inputs", "GatherElements", {0}, false, false, true,
       "has 3 inputs, ONNX's GatherElements takes at most 2"},
  };
  for (const Bad& b : bad) {
    INFO(b.what);
    OnnxModel c(14);
    c.input("x", {2, 3, 4});
    if (b.float_indices) c.initializer("idx", {2, 3, 2}, std::vector<float>(12, 0.f));
    else c.initializer_i64("idx", {2, 3, 2}, std::vector<int64_t>(12, 0));
    std::vector<std::string> inputs = {"x"};
    onnx::NodeProto* n = nullptr;
    if (std::string(b.op) == "CumSum") {
      if (!b.axis.empty()) {
        c.initializer_i64("axis", {static_cast<int64_t>(b.axis.size())}, b.axis);
        inputs.push_back("axis");
      }
      if (b.extra_input) inputs.push_back("x");
      n = c.node("CumSum", inputs, {"y"});
      if (b.float_attribute) jet::test::attr_float(n, "exclusive", 1.f);
    } else {
      inputs.push_back("idx");
      if (b.extra_input) inputs.push_back("x");
      n = c.node("GatherElements", inputs, {"y"});
      if (b.float_attribute) jet::test::attr_float(n, "axis", 0.f);
      else jet::test::attr_int(n, "axis", b.axis[0]);
    }
    c.output("y");
    Graph g2;
    const Status st = import_model(c, &g2);
    INFO(st.to_string());
    CHECK(st.code() == StatusCode::BAD_PARAM);
    CHECK(contains(st.message(), b.message));
    CHECK(contains(st.message(), std::string(b.op) + " 'y'"));
  }
}

TEST_CASE("onnx import: DepthToSpace (DCR, CRD) and SpaceToDepth of computed tensors") {
  // x: [2, 8, 3, 2], blocksize 2. dcr, crd: [2, 2, 6, 4]; back = SpaceToDepth(dcr) == x.
  OnnxModel m(13);
  m.input("x", {2, 8, 3, 2});
  jet::test::attr_int(m.node("DepthToSpace", {"x"}, {"dcr"}), "blocksize", 2);
  onnx::NodeProto* crd = m.node("DepthToSpace", {"x"}, {"crd"});
  jet::test::attr_int(crd, "blocksize", 2);
  jet::test::attr_string(crd, "mode", "CRD");
  jet::test::attr_int(m.node("SpaceToDepth", {"dcr"}, {"back"}), "blocksize", 2);
  for (const char* o : {"dcr", "crd", "back"}) m.output(o);
  const Graph g = import_ok(m);
  std::vector<float> x(2 * 8 * 3 * 2);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  const std::vector<std::vector<float>> out = run(g, {x});
  REQUIRE(out.size() == 3);
  std::vector<float> dcr(x.size()), crdv(x.size());
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 2; ++c)
      for (int h = 0; h < 6; ++h)
        for (int w = 0; w < 4; ++w) {
          const int i = h % 2, j = w % 2, at = ((n * 2 + c) * 6 + h) * 4 + w;
          dcr[at] = x[((n * 8 + (i * 2 + j) * 2 + c) * 3 + h / 2) * 2 + w / 2];
          crdv[at] = x[((n * 8 + c * 4 + i * 2 + j) * 3 + h / 2) * 2 + w / 2];
        }
  CHECK(out[0] == dcr);
  CHECK(out[1] == crdv);
  CHECK(out[2] == x);
}

TEST_CASE("onnx import: OneHot of computed int64 and float indices (negative and out of range)") {
  // ids: [2, 2] int64, f: [3] float inputs; depth 3; values [off, on] = [-1, 5]. a = OneHot(ids,
  // axis 1): [2, 3, 2]; b = OneHot(f) (axis -1): [3, 3].
  OnnxModel m(11);
  m.input("ids", {2, 2}, onnx::TensorProto::INT64);
  m.input("f", {3});
  m.initializer_i64("depth", {}, {3});
  m.initializer("values", {2}, {-1.f, 5.f});
  jet::test::attr_int(m.node("OneHot", {"ids", "depth", "values"}, {"a"}), "axis", 1);
  m.node("OneHot", {"f", "depth", "values"}, {"b"});
  m.output("a");
  m.output("b");
  const Graph g = import_ok(m);
  const std::vector<float> ids = {1, -1, 3, 0}, f = {2, -3, 0};
  const std::vector<std::vector<float>> out = run(g, {ids, f});
  REQUIRE(out.size() == 2);
  std::vector<float> a(12, -1.f), b(9, -1.f);
  a[(0 * 3 + 1) * 2 + 0] = 5.f;  // ids[0][0] = 1
  a[(0 * 3 + 2) * 2 + 1] = 5.f;  // ids[0][1] = -1: the last
  a[(1 * 3 + 0) * 2 + 1] = 5.f;  // ids[1][1] = 0; ids[1][0] = 3 is out of range: all off
  b[0 * 3 + 2] = 5.f;
  b[1 * 3 + 0] = 5.f;  // -3 + 3
  b[2 * 3 + 0] = 5.f;
  CHECK(out[0] == a);
  CHECK(out[1] == b);
}

TEST_CASE("onnx import: EyeLike of a computed tensor is a constant") {
  // EyeLike(x) with k = 1 for a [3, 4] float input, and of a computed int64 tensor (Cast) with
  // k = -2 and dtype FLOAT: both folded to constants.
  OnnxModel m(13);
  m.input("x", {3, 4});
  jet::test::attr_int(m.node("EyeLike", {"x"}, {"e"}), "k", 1);
  jet::test::attr_int(m.node("Cast", {"x"}, {"xi"}), "to", onnx::TensorProto::INT64);
  onnx::NodeProto* e2 = m.node("EyeLike", {"xi"}, {"e2"});
  jet::test::attr_int(e2, "k", -2);
  jet::test::attr_int(e2, "dtype", onnx::TensorProto::FLOAT);
  m.node("Add", {"x", "e"}, {"y"});
  m.node("Add", {"x", "e2"}, {"z"});
  m.output("y");
  m.output("z");
  const Graph g = import_ok(m);
  std::vector<float> x(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  const std::vector<std::vector<float>> out = run(g, {x});
  REQUIRE(out.size() == 2);
  std::vector<float> y = x, z = x;
  for (int r = 0; r < 3; ++r) {
    if (r + 1 < 4) y[static_cast<size_t>(r * 4 + r + 1)] += 1.f;
    if (r - 2 >= 0) z[static_cast<size_t>(r * 4 + r - 2)] += 1.f;
  }
  CHECK(out[0] == y);
  CHECK(out[1] == z);
}


TEST_CASE("onnx import: integer arithmetic on computed int64 tensors runs in op_tensor, exactly") {
  // x, z: int64 inputs [2, 3]; c: an int64 constant [3] (broadcast). Add, Sub, Mul, Div (truncating),
  // Mod fmod 0 (the divisor's sign) and fmod 1 (the dividend's), Max, Min, Pow, Neg, Abs.
  const char* const ops[] = {"Add", "Sub", "Mul", "Div", "Mod0", "Mod1", "Max", "Min", "Pow", "Neg", "Abs"};
  OnnxModel m(13);
  m.input("x", {2, 3}, onnx::TensorProto::INT64);
  m.input("z", {2, 3}, onnx::TensorProto::INT64);
  m.initializer_i64("c", {3}, {3, -2, 5});
  for (const char* op : ops) {
    const std::string name = op, out = std::string("y_") + op;
    if (name == "Neg" || name == "Abs") {
      m.node(op, {"x"}, {out});
    } else if (name == "Mod0" || name == "Mod1") {
      jet::test::attr_int(m.node("Mod", {"x", "z"}, {out}), "fmod", name == "Mod1" ? 1 : 0);
    } else if (name == "Pow") {
      m.node(op, {"x", "c"}, {out});
    } else {
      m.node(op, {"x", "z"}, {out});
    }
    m.output(out, onnx::TensorProto::INT64);
  }
  const Graph g = import_ok(m);
  CHECK(count_op(g, OpType::OP_TENSOR) == 12);  // Abs is two
  const std::vector<float> x = {-7, 7, 9, -9, 0, -4}, z = {3, -3, 4, -4, 5, 0};
  const std::vector<std::vector<float>> out = run(g, {x, z});
  REQUIRE(out.size() == 11);
  const std::vector<std::vector<float>> want = {
      {-4, 4, 13, -13, 5, -4},         // Add
      {-10, 10, 5, -5, -5, -4},        // Sub
      {-21, -21, 36, 36, 0, 0},        // Mul
      {-2, -2, 2, 2, 0, 0},            // Div: truncation; a zero divisor gives 0
      {2, -2, 1, -1, 0, 0},            // Mod fmod 0
      {-1, 1, 1, -1, 0, 0},            // Mod fmod 1
      {3, 7, 9, -4, 5, 0},             // Max
      {-7, -3, 4, -9, 0, -4},          // Min
      {-343, 0, 59049, -729, 0, -1024},  // Pow by c = {3, -2, 5}: 7^-2 truncates to 0
      {7, -7, -9, 9, 0, 4},            // Neg
      {7, 7, 9, 9, 0, 4},              // Abs
  };
  for (size_t k = 0; k < want.size(); ++k) {
    CAPTURE(ops[k]);
    CHECK(out[k] == want[k]);
  }
}

TEST_CASE("onnx import: TopK is one TOPK node per used output; NonMaxSuppression a padded NMS node") {
  SUBCASE("TopK values and indices, smallest, axis 0") {
    OnnxModel m(11);
    m.input("x", {4, 3});
    m.initializer_i64("k", {1}, {2});
    onnx::NodeProto* n = m.node("TopK", {"x", "k"}, {"v", "i"});
    jet::test::attr_int(n, "axis", 0);
    jet::test::attr_int(n, "largest", 0);
    m.output("v");
    m.output("i", onnx::TensorProto::INT64);
    const Graph g = import_ok(m);
    CHECK(count_op(g, OpType::TOPK) == 2);
    const std::vector<float> x = {3, 1, 2, 0, 1, 5, 3, 1, -1, 2, 0, 2};
    const std::vector<std::vector<float>> out = run(g, {x});
    REQUIRE(out.size() == 2);
    CHECK(out[0] == std::vector<float>{0, 0, -1, 2, 1, 2});  // column-wise 2 smallest, ties by index
    CHECK(out[1] == std::vector<float>{1, 3, 2, 3, 0, 0});
  }
  SUBCASE("NonMaxSuppression: the fixed maximum of rows, -1 after the selected ones") {
    OnnxModel m(11);
    m.input("boxes", {1, 4, 4});
    m.input("scores", {1, 1, 4});
    m.initializer_i64("max", {1}, {3});
    m.initializer("iou", {1}, {0.5f});
    m.initializer("thr", {1}, {0.0f});
    m.node("NonMaxSuppression", {"boxes", "scores", "max", "iou", "thr"}, {"sel"});
    m.output("sel", onnx::TensorProto::INT64);
    const Graph g = import_ok(m);
    CHECK(count_op(g, OpType::NMS) == 1);
    // Box 1 overlaps box 0 by IoU 0.81 (suppressed); box 3 scores below the threshold.
    const std::vector<float> boxes = {0, 0, 1, 1, 0, 0.05f, 1, 1.05f, 2, 2, 3, 3, 5, 5, 6, 6};
    const std::vector<float> scores = {0.9f, 0.8f, 0.7f, -0.5f};
    const std::vector<std::vector<float>> out = run(g, {boxes, scores});
    REQUIRE(out.size() == 1);
    CHECK(out[0] == std::vector<float>{0, 0, 0, 0, 0, 2, -1, -1, -1});
    OnnxModel z(11);
    z.input("boxes", {1, 4, 4});
    z.input("scores", {1, 1, 4});
    z.node("NonMaxSuppression", {"boxes", "scores"}, {"sel"}, "nms");
    z.output("sel", onnx::TensorProto::INT64);
    check_one_unsupported(z, "nms", "max_output_boxes_per_class");
  }
  SUBCASE("Resize cubic keeps cubic_coeff_a and exclude_outside") {
    OnnxModel m(13);
    m.input("x", {1, 2, 3, 4});
    m.initializer("scales", {4}, {1, 1, 2, 1.5f});
    onnx::NodeProto* n = m.node("Resize", {"x", "", "scales"}, {"y"});
    jet::test::attr_string(n, "mode", "cubic");
    jet::test::attr_float(n, "cubic_coeff_a", -0.5f);
    jet::test::attr_int(n, "exclude_outside", 1);
    m.output("y");
    const Graph g = import_ok(m);
    REQUIRE(count_op(g, OpType::RESIZE) == 1);
    for (const Node& node : g.nodes) {
      if (node.op != OpType::RESIZE) continue;
      const ResizeAttrs& a = std::get<ResizeAttrs>(node.attrs);
      CHECK(a.mode == ResizeMode::CUBIC);
      CHECK(a.cubic_coeff_a == -0.5f);
      CHECK(a.exclude_outside);
    }
  }
}

TEST_CASE("onnx import: Pow with an exponent type other than the base's (opset 12+)") {
  // f: float base, int64 exponent (converted); i: int64 base, float exponent (f32, truncated).
  OnnxModel m(13);
  m.input("f", {3});
  m.input("i", {3}, onnx::TensorProto::INT64);
  m.initializer_i64("ie", {3}, {2, 3, -1});
  m.initializer("fe", {3}, {0.5f, 2.f, 1.5f});
  m.node("Pow", {"f", "ie"}, {"a"});
  m.node("Pow", {"i", "fe"}, {"b"});
  m.output("a");
  m.output("b", onnx::TensorProto::INT64);
  const Graph g = import_ok(m);
  const std::vector<std::vector<float>> out = run(g, {{1.5f, -2.f, 4.f}, {9, -3, 5}});
  REQUIRE(out.size() == 2);
  CHECK(out[0] == std::vector<float>{2.25f, -8.f, 0.25f});
  CHECK(out[1] == std::vector<float>{3, 9, 11});  // 5^1.5 = 11.18 truncates to 11
}

#endif  // JET_HAVE_ONNX_IMPORT
