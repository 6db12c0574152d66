// The precision and layout passes (passes.h) and the zoo's promise of O(1) activations.
//
// Semantics are checked by running graphs on the CPU backend with the small interpreter of
// interpret.h: each node is one kernel call, every activation lives at its planned offset of one
// arena (filled with NaN first), so a pass that breaks a graph, or a plan that lets tensors clobber
// each other, shows up as different outputs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "interpret.h"
#include "ir.h"
#include "jet/dnn.h"
#include "passes.h"
#include "plan_memory.h"
#include "zoo.h"

using namespace jet;
using namespace jet::ir;

namespace {

bool contains(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

uint64_t fresh_seed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

std::vector<float> random_values(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

struct RunResult {
  std::vector<std::vector<float>> outputs;  // OUTPUT tensors in index order
  std::vector<double> max_abs;              // per tensor, right after it was produced (-1: never)
  std::vector<double> rms;
};

// Runs `g` on the CPU backend (test::interpret) and keeps max |x| and RMS of every node's output.
Status run_graph(const Graph& g, const std::vector<std::vector<float>>& inputs, RunResult* res) {
  std::vector<std::vector<float>> produced;
  const Status st = test::interpret(g, inputs, &res->outputs, &produced);
  if (!st.ok()) return st;
  res->max_abs.assign(g.tensors.size(), -1.0);
  res->rms.assign(g.tensors.size(), -1.0);
  for (const Node& n : g.nodes) {
    const std::vector<float>& v = produced[n.outputs[0]];
    double m = 0, s = 0;
    for (float x : v) {
      m = std::max(m, std::fabs(static_cast<double>(x)));
      s += static_cast<double>(x) * x;
      if (!std::isfinite(x)) m = INFINITY;
    }
    res->max_abs[n.outputs[0]] = m;
    res->rms[n.outputs[0]] = std::sqrt(s / static_cast<double>(v.size()));
  }
  return Status::success();
}

int count_op(const Graph& g, OpType op) {
  return static_cast<int>(std::count_if(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.op == op; }));
}

int find_tensor(const Graph& g, const std::string& name) {
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (g.tensors[t].name == name) return static_cast<int>(t);
  }
  return -1;
}

int producer_of(const Graph& g, int t) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].outputs[0] == t) return static_cast<int>(i);
  }
  return -1;
}

std::vector<int> readers_of(const Graph& g, int t) {
  std::vector<int> r;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (int x : g.nodes[i].inputs) {
      if (x == t) r.push_back(static_cast<int>(i));
    }
  }
  return r;
}

bool same_graph(const Graph& a, const Graph& b) {
  if (a.tensors.size() != b.tensors.size() || a.nodes.size() != b.nodes.size()) return false;
  for (size_t t = 0; t < a.tensors.size(); ++t) {
    const Tensor &x = a.tensors[t], &y = b.tensors[t];
    if (x.name != y.name || x.dtype != y.dtype || x.dims != y.dims || x.strides != y.strides ||
        x.kind != y.kind) {
      return false;
    }
  }
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const Node &x = a.nodes[i], &y = b.nodes[i];
    if (x.name != y.name || x.op != y.op || x.inputs != y.inputs || x.outputs != y.outputs) return false;
  }
  return true;
}

bool is_bn_param(const Graph& g, int t) {
  for (const Node& n : g.nodes) {
    if (n.op != OpType::BATCHNORM) continue;
    for (size_t k = 1; k < n.inputs.size(); ++k) {
      if (n.inputs[k] == t) return true;
    }
  }
  return false;
}

// max |a - b| / max(1, max |a|) over one output.
double rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double scale = 1, d = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    scale = std::max(scale, std::fabs(static_cast<double>(a[i])));
    d = std::max(d, std::fabs(static_cast<double>(a[i]) - b[i]));
    if (!std::isfinite(b[i])) d = INFINITY;
  }
  return d / scale;
}

Graph tiny() {
  Graph g;
  const Status st = tiny_cnn(tiny_cnn_options(), &g);
  INFO(st.to_string());
  REQUIRE(st.ok());
  return g;
}

void check_plan(const char* label, const Graph& g, double max_ratio) {
  std::vector<int> order;
  const Status st = check_graph(g, &order);
  INFO(st.to_string());
  REQUIRE(st.ok());
  const MemoryPlan p = plan_memory(g, order, Planner::GREEDY_BEST_FIT);
  const Status v = validate_plan(g, order, p);
  INFO(v.to_string());
  CHECK(v.ok());
  char line[256];
  std::snprintf(line, sizeof line, "%s: %zu nodes; greedy arena %zu B, lower bound %zu B, ratio %.4f",
                label, g.nodes.size(), p.arena_bytes, p.lower_bound_bytes, p.ratio());
  MESSAGE(line);
  CHECK(p.arena_bytes >= p.lower_bound_bytes);
  CHECK(p.ratio() <= max_ratio);
}

}  // namespace

TEST_CASE("passes: convert_precision to F16 on tiny_cnn") {
  const Graph original = tiny();
  Graph g = original;
  const Status st = convert_precision(&g, DType::F16);
  INFO(st.to_string());
  REQUIRE(st.ok());
  // One transform after the input, one before each of the two outputs, plus tiny_cnn's own two.
  CHECK(count_op(g, OpType::TRANSFORM) == 2 + 3);
  CHECK(g.nodes.size() == original.nodes.size() + 3);
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const Tensor& tt = g.tensors[t];
    INFO(tt.name);
    switch (tt.kind) {
      case TensorKind::INPUT:
      case TensorKind::OUTPUT:
        CHECK(tt.dtype == DType::F32);
        break;
      case TensorKind::CONSTANT:
        CHECK(tt.dtype == (is_bn_param(g, static_cast<int>(t)) ? DType::F32 : DType::F16));
        REQUIRE(t < original.tensors.size());
        CHECK(tt.data == original.tensors[t].data);  // values stay float32 for the writer
        break;
      case TensorKind::ACTIVATION:
        CHECK(tt.dtype == DType::F16);
        break;
    }
  }
  // The input is read only by its transform, which feeds what the input fed.
  const int image = find_tensor(g, "image");
  const std::vector<int> readers = readers_of(g, image);
  REQUIRE(readers.size() == 1);
  const Node& tin = g.nodes[readers[0]];
  CHECK(tin.op == OpType::TRANSFORM);
  CHECK(g.tensors[tin.outputs[0]].name == "image.f16");
  CHECK(std::get<TransformAttrs>(tin.attrs).to == DType::F16);
  CHECK(g.nodes[producer_of(g, find_tensor(g, "conv1"))].inputs[0] == tin.outputs[0]);
  // Each output is made by a transform from an F16 activation that its old producer now writes.
  for (const char* name : {"features", "probs"}) {
    const int out = find_tensor(g, name);
    const Node& p = g.nodes[producer_of(g, out)];
    CHECK(p.op == OpType::TRANSFORM);
    CHECK(std::get<TransformAttrs>(p.attrs).to == DType::F32);
    const Tensor& inner = g.tensors[p.inputs[0]];
    CHECK(inner.name == std::string(name) + ".f16");
    CHECK(inner.dtype == DType::F16);
    CHECK(g.nodes[producer_of(g, p.inputs[0])].op != OpType::TRANSFORM);
  }
  // tiny_cnn's own transforms now convert F16 to F16 (copies).
  CHECK(std::get<TransformAttrs>(g.nodes[producer_of(g, find_tensor(g, "to_f16"))].attrs).to == DType::F16);
  CHECK(std::get<TransformAttrs>(g.nodes[producer_of(g, find_tensor(g, "to_f32"))].attrs).to == DType::F16);
  check_plan("tiny_cnn f16", g, 1.25);

  // Idempotent.
  Graph again = g;
  REQUIRE(convert_precision(&again, DType::F16).ok());
  CHECK(same_graph(again, g));
  // F32 on an F32 graph inserts nothing; tiny_cnn's F16 round trip becomes two F32 copies.
  Graph same = original;
  REQUIRE(convert_precision(&same, DType::F32).ok());
  CHECK(same.nodes.size() == original.nodes.size());
  CHECK(same.tensors.size() == original.tensors.size());
  for (const Tensor& t : same.tensors) {
    if (!is_bn_param(same, find_tensor(same, t.name))) CHECK(t.dtype == DType::F32);
  }
  Graph no_transform = original;  // without that round trip the graph is unchanged
  for (Node& n : no_transform.nodes) {
    if (n.op != OpType::TRANSFORM) continue;
    n.attrs = TransformAttrs{DType::F32};
    no_transform.tensors[n.outputs[0]].dtype = DType::F32;
  }
  Graph unchanged = no_transform;
  REQUIRE(convert_precision(&unchanged, DType::F32).ok());
  CHECK(same_graph(unchanged, no_transform));
}

TEST_CASE("passes: convert_precision with convert_io makes the interface F16 too, with no boundary transforms") {
  const Graph original = tiny();
  Graph g = original;
  const Status st = convert_precision(&g, DType::F16, /*convert_io=*/true);
  INFO(st.to_string());
  REQUIRE(st.ok());
  CHECK(g.nodes.size() == original.nodes.size());  // only tiny_cnn's own two transforms
  CHECK(count_op(g, OpType::TRANSFORM) == 2);
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const Tensor& tt = g.tensors[t];
    INFO(tt.name);
    if (tt.kind == TensorKind::CONSTANT) {
      CHECK(tt.dtype == (is_bn_param(g, static_cast<int>(t)) ? DType::F32 : DType::F16));
    } else {
      CHECK(tt.dtype == DType::F16);
    }
  }
  // Same function as the f32 graph within f16 accuracy (the interpreter converts the values of
  // f16 inputs and outputs on the way in and out).
  std::vector<std::vector<float>> inputs;
  for (const Tensor& t : original.tensors) {
    if (t.kind == TensorKind::INPUT) inputs.push_back(random_values(static_cast<size_t>(t.elements()), fresh_seed()));
  }
  RunResult ref, got;
  REQUIRE(run_graph(original, inputs, &ref).ok());
  REQUIRE(run_graph(g, inputs, &got).ok());
  REQUIRE(ref.outputs.size() == got.outputs.size());
  for (size_t o = 0; o < ref.outputs.size(); ++o) {
    INFO("output " << o);
    CHECK(rel_diff(ref.outputs[o], got.outputs[o]) <= 2e-2);
  }
  check_plan("tiny_cnn f16 io", g, 1.25);
}

TEST_CASE("passes: set_channels_last on tiny_cnn") {
  const Graph original = tiny();
  Graph g = original;
  const Status st = set_channels_last(&g);
  INFO(st.to_string());
  REQUIRE(st.ok());
  for (const Tensor& t : g.tensors) {
    INFO(t.name);
    Tensor probe = t;
    probe.strides = channels_last_strides(t.dims);
    const bool cl_differs = t.dims.size() == 4 && !probe.is_packed();
    if (t.kind != TensorKind::ACTIVATION || !cl_differs) {
      CHECK(t.strides.empty());
      continue;
    }
    if (t.name == "conv3.packed") {
      CHECK(t.strides.empty());
    } else {
      CHECK(t.strides == channels_last_strides(t.dims));
    }
  }
  // 2x8x1x1 tensors: channels-last is the packed layout, no strides.
  CHECK(g.tensors[find_tensor(g, "gap")].strides.empty());
  // Inserted: image -> image.nhwc; conv3 -> conv3.packed -> flatten; features.nhwc -> features.
  CHECK(g.nodes.size() == original.nodes.size() + 3);
  const int image = find_tensor(g, "image");
  REQUIRE(readers_of(g, image).size() == 1);
  const Node& tin = g.nodes[readers_of(g, image)[0]];
  CHECK(tin.op == OpType::TRANSFORM);
  CHECK(g.tensors[tin.outputs[0]].name == "image.nhwc");
  const Node& flatten = g.nodes[producer_of(g, find_tensor(g, "flatten"))];
  CHECK(g.tensors[flatten.inputs[0]].name == "conv3.packed");
  CHECK(g.nodes[producer_of(g, flatten.inputs[0])].op == OpType::TRANSFORM);
  const int features = find_tensor(g, "features");
  const Node& fout = g.nodes[producer_of(g, features)];
  CHECK(fout.op == OpType::TRANSFORM);
  CHECK(g.tensors[fout.inputs[0]].name == "features.nhwc");
  CHECK(g.tensors[features].strides.empty());
  check_plan("tiny_cnn channels-last", g, 1.25);

  Graph again = g;
  REQUIRE(set_channels_last(&again).ok());
  CHECK(same_graph(again, g));
}

TEST_CASE("passes: both orders of the passes give one graph shape and keep tiny_cnn's results") {
  const Graph original = tiny();
  Graph cl = original, f16 = original, f16_cl = original, cl_f16 = original;
  REQUIRE(set_channels_last(&cl).ok());
  REQUIRE(convert_precision(&f16, DType::F16).ok());
  REQUIRE(convert_precision(&f16_cl, DType::F16).ok());
  REQUIRE(set_channels_last(&f16_cl).ok());
  REQUIRE(set_channels_last(&cl_f16).ok());
  REQUIRE(convert_precision(&cl_f16, DType::F16).ok());
  // The inserted transforms are shared: input, output and packed-copy transforms change dtype
  // and layout at once, whatever the order.
  CHECK(count_op(f16_cl, OpType::TRANSFORM) == count_op(cl_f16, OpType::TRANSFORM));
  CHECK(f16_cl.nodes.size() == original.nodes.size() + 4);
  CHECK(cl_f16.nodes.size() == original.nodes.size() + 4);
  for (const Graph* g : {&f16_cl, &cl_f16}) {
    for (const Tensor& t : g->tensors) {
      if (t.kind == TensorKind::ACTIVATION) CHECK(t.dtype == DType::F16);
    }
  }

  const uint64_t seed = fresh_seed();
  MESSAGE("input seed " << seed);
  const Tensor& in = original.tensors[find_tensor(original, "image")];
  const std::vector<std::vector<float>> inputs = {random_values(static_cast<size_t>(in.elements()), seed)};
  RunResult ref, got;
  Status st = run_graph(original, inputs, &ref);
  INFO(st.to_string());
  REQUIRE(st.ok());
  REQUIRE(ref.outputs.size() == 2);
  struct Case {
    const char* label;
    const Graph* g;
    double tol;
  };
  // Channels-last f32 differs only by summation order, but tiny_cnn rounds to f16 midway: a value
  // next to a rounding boundary may land one f16 ulp (2^-11 relative) away.
  const Case cases[] = {{"channels-last f32", &cl, 2e-3},
                        {"f16", &f16, 2e-2},
                        {"f16 then channels-last", &f16_cl, 2e-2},
                        {"channels-last then f16", &cl_f16, 2e-2}};
  for (const Case& c : cases) {
    st = run_graph(*c.g, inputs, &got);
    INFO(c.label << ": " << st.to_string());
    REQUIRE(st.ok());
    REQUIRE(got.outputs.size() == 2);
    for (size_t o = 0; o < 2; ++o) {
      const double d = rel_diff(ref.outputs[o], got.outputs[o]);
      INFO(c.label << " output " << o << " relative difference " << d);
      CHECK(d <= c.tol);
    }
  }
}

TEST_CASE("passes: ResNet-50 f16 channels-last plans within 1.05x of the lower bound") {
  Graph g;
  REQUIRE(resnet50(ZooOptions{}, &g).ok());
  const size_t nodes = g.nodes.size();
  REQUIRE(convert_precision(&g, DType::F16).ok());
  REQUIRE(set_channels_last(&g).ok());
  // One transform for the input (F32 NCHW -> F16 NHWC), one for the logits (F16 -> F32); the
  // 2048x1x1 pooled tensor is layout-free, so flatten needs no copy.
  CHECK(g.nodes.size() == nodes + 2);
  CHECK(count_op(g, OpType::TRANSFORM) == 2);
  int convs = 0;
  for (const Node& n : g.nodes) {
    if (n.op != OpType::CONV) continue;
    ++convs;
    const Tensor& x = g.tensors[n.inputs[0]];
    const Tensor& y = g.tensors[n.outputs[0]];
    CHECK(x.dtype == DType::F16);
    CHECK(g.tensors[n.inputs[1]].dtype == DType::F16);
    CHECK(g.tensors[n.inputs[1]].strides.empty());
    CHECK(x.strides == channels_last_strides(x.dims));
    CHECK(y.strides == channels_last_strides(y.dims));
  }
  CHECK(convs == 53);
  check_plan("ResNet-50 f16 channels-last", g, 1.05);
  Graph f32 = g;
  REQUIRE(resnet50(ZooOptions{}, &f32).ok());
  REQUIRE(set_channels_last(&f32).ok());
  check_plan("ResNet-50 f32 channels-last", f32, 1.05);
  Graph mb;
  REQUIRE(mobilenet_v2(ZooOptions{}, &mb).ok());
  REQUIRE(convert_precision(&mb, DType::F16).ok());
  REQUIRE(set_channels_last(&mb).ok());
  check_plan("MobileNetV2 f16 channels-last", mb, 1.05);
}

TEST_CASE("passes: errors are reported, not crashes") {
  CHECK(convert_precision(nullptr, DType::F16).code() == StatusCode::BAD_PARAM);
  CHECK(set_channels_last(nullptr).code() == StatusCode::BAD_PARAM);
  Graph g = tiny();
  Status st = convert_precision(&g, static_cast<DType>(7));
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(contains(st.message(), "dtype"));

  // A strided graph input.
  Graph s = tiny();
  s.tensors[find_tensor(s, "image")].strides = channels_last_strides(s.tensors[find_tensor(s, "image")].dims);
  st = set_channels_last(&s);
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(contains(st.message(), "'image'"));

  // A BatchNorm whose scale is not a constant.
  Graph b = tiny();
  Node& bn = b.nodes[producer_of(b, find_tensor(b, "bn"))];
  bn.inputs[1] = find_tensor(b, "image");
  st = convert_precision(&b, DType::F16);
  CHECK(st.code() == StatusCode::NOT_SUPPORTED);
  CHECK(contains(st.message(), "'bn'"));
  CHECK(contains(st.message(), "'image'"));

  // Attributes of the wrong op, and a cycle.
  Graph w = tiny();
  w.nodes[producer_of(w, find_tensor(w, "gate"))].attrs = PoolAttrs{};
  st = set_channels_last(&w);
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(contains(st.message(), "'gate'"));
  Graph c = tiny();
  c.nodes[producer_of(c, find_tensor(c, "conv1"))].inputs[0] = find_tensor(c, "conv2");
  st = convert_precision(&c, DType::F16);
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(contains(st.message(), "cycle"));
}

TEST_CASE("passes: a constant shared by a BatchNorm and another op is split") {
  Graph g;
  int x = -1, s = -1, b = -1, m = -1, v = -1, bn = -1, y = -1;
  REQUIRE(g.add_input("x", DType::F32, {1, 4, 3, 3}, &x).ok());
  const char* names[4] = {"scale", "bias", "mean", "var"};
  int* params[4] = {&s, &b, &m, &v};
  for (int k = 0; k < 4; ++k) {
    int* t = params[k];
    REQUIRE(g.add_constant(names[k], DType::F32, {1, 4, 1, 1}, t).ok());
    g.tensors[*t].data = random_values(4, fresh_seed());
    for (float& f : g.tensors[*t].data) f = 1.f + 0.5f * f;  // var > 0
  }
  REQUIRE(g.batchnorm("bn", x, s, b, m, v, 1e-5, &bn).ok());
  REQUIRE(g.op_tensor("mul", TensorOp::MUL, bn, s, &y).ok());  // s is also an op_tensor operand
  REQUIRE(g.mark_output(y).ok());
  REQUIRE(convert_precision(&g, DType::F16).ok());
  CHECK(g.tensors[s].dtype == DType::F32);
  const Node& mul = g.nodes[producer_of(g, find_tensor(g, "mul.f16"))];
  REQUIRE(mul.op == OpType::OP_TENSOR);
  const Tensor& copy = g.tensors[mul.inputs[1]];
  CHECK(mul.inputs[1] != s);
  CHECK(copy.kind == TensorKind::CONSTANT);
  CHECK(copy.dtype == DType::F16);
  CHECK(copy.data == g.tensors[s].data);
  RunResult r;
  const Status st = run_graph(g, {random_values(36, fresh_seed())}, &r);
  INFO(st.to_string());
  CHECK(st.ok());
}

TEST_CASE("zoo: activations stay O(1) and f16 follows f32") {
  const uint64_t seed = fresh_seed();
  MESSAGE("input seed " << seed);
  struct Net {
    const char* label;
    Status (*build)(const ZooOptions&, Graph*);
    ZooOptions opt;
  };
  ZooOptions small;
  small.image = 64;
  small.width = 80;
  small.seed = seed;
  ZooOptions tiny_opt = tiny_cnn_options(seed);
  const Net nets[] = {{"tiny_cnn", tiny_cnn, tiny_opt},
                      {"resnet18", resnet18, small},
                      {"resnet50", resnet50, small},
                      {"mobilenet_v2", mobilenet_v2, small}};
  for (const Net& net : nets) {
    Graph g;
    REQUIRE(net.build(net.opt, &g).ok());
    const Tensor& in = g.tensors[find_tensor(g, "image")];
    const std::vector<std::vector<float>> inputs = {
        random_values(static_cast<size_t>(in.elements()), seed ^ 0x9e3779b97f4a7c15ull)};
    RunResult r;
    Status st = run_graph(g, inputs, &r);
    INFO(net.label << ": " << st.to_string());
    REQUIRE(st.ok());
    double lo = INFINITY, hi = 0, peak = 0;
    std::string lo_name, hi_name;
    for (size_t t = 0; t < g.tensors.size(); ++t) {
      if (r.rms[t] < 0) continue;
      if (r.rms[t] < lo) {
        lo = r.rms[t];
        lo_name = g.tensors[t].name;
      }
      if (r.rms[t] > hi) {
        hi = r.rms[t];
        hi_name = g.tensors[t].name;
      }
      peak = std::max(peak, r.max_abs[t]);
    }
    char line[256];
    std::snprintf(line, sizeof line, "%s: activation rms in [%.3g (%s), %.3g (%s)], max |x| %.3g",
                  net.label, lo, lo_name.c_str(), hi, hi_name.c_str(), peak);
    MESSAGE(line);
    CHECK(lo >= 0.02);
    CHECK(hi <= 8);
    CHECK(peak <= 100);

    Graph h = g;
    REQUIRE(convert_precision(&h, DType::F16).ok());
    REQUIRE(set_channels_last(&h).ok());
    RunResult r16;
    st = run_graph(h, inputs, &r16);
    INFO(st.to_string());
    REQUIRE(st.ok());
    for (size_t o = 0; o < r.outputs.size(); ++o) {
      const double d = rel_diff(r.outputs[o], r16.outputs[o]);
      std::snprintf(line, sizeof line, "%s: f16 channels-last output %zu relative difference %.3g",
                    net.label, o, d);
      MESSAGE(line);
      CHECK(d <= 3e-2);
    }
  }
}
