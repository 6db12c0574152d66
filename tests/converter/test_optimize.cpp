// The optimization passes (optimize.h), each on its own and together.
//
// Every test builds a small graph with random weights, keeps a copy, runs the pass, checks the
// structure it promises (which nodes went, what the fused conv carries) and that the optimized
// graph computes what the original did on fresh random inputs (both run by the CPU interpreter of
// interpret.h, whose arena starts as NaN). Cases where a fusion must NOT happen (a second reader,
// a graph output in the middle, an activation already fused) check that the graph is unchanged.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "interpret.h"
#include "ir.h"
#include "optimize.h"

using namespace jet;
using namespace jet::ir;

namespace {

uint64_t fresh_seed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

std::vector<float> random_values(size_t n, std::mt19937_64* rng, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(*rng);
  return v;
}

int constant(Graph* g, const std::string& name, std::vector<int64_t> dims, std::mt19937_64* rng,
             float lo = -1.f, float hi = 1.f) {
  int t = -1;
  REQUIRE(g->add_constant(name, DType::F32, dims, &t).ok());
  g->tensors[t].data = random_values(static_cast<size_t>(g->tensors[t].elements()), rng, lo, hi);
  return t;
}

int count_ops(const Graph& g, OpType op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op == op;
  return n;
}

// Runs both graphs on the same random inputs; outputs agree to `tol` relative to max(1, |ref|).
void check_same_function(const Graph& before, const Graph& after, std::mt19937_64* rng, double tol = 1e-5) {
  std::vector<std::vector<float>> inputs;
  for (const Tensor& t : before.tensors) {
    if (t.kind == TensorKind::INPUT) inputs.push_back(random_values(static_cast<size_t>(t.elements()), rng));
  }
  std::vector<std::vector<float>> ref, got;
  Status st = test::interpret(before, inputs, &ref);
  REQUIRE_MESSAGE(st.ok(), st.to_string());
  st = test::interpret(after, inputs, &got);
  REQUIRE_MESSAGE(st.ok(), st.to_string());
  REQUIRE(ref.size() == got.size());
  for (size_t o = 0; o < ref.size(); ++o) {
    REQUIRE(ref[o].size() == got[o].size());
    double worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < ref[o].size(); ++i) {
      const double err = std::fabs(double(got[o][i]) - ref[o][i]) / std::max(1.0, std::fabs(double(ref[o][i])));
      if (!(err <= worst)) {  // NaN counts as the worst
        worst = std::isnan(err) ? INFINITY : err;
        at = i;
      }
    }
    INFO("output " << o << " element " << at << ": " << got[o][at] << " vs " << ref[o][at]);
    CHECK(worst <= tol);
  }
}

// x (1, 6, 9, 7) -> conv 3x3 (groups 2, pad 1, stride 2 over H) [+ bias] -> y
struct ConvGraph {
  Graph g;
  int x = -1, conv_out = -1;
};

ConvGraph conv_graph(std::mt19937_64* rng, bool bias) {
  ConvGraph c;
  REQUIRE(c.g.add_input("x", DType::F32, {2, 6, 9, 7}, &c.x).ok());
  const int w = constant(&c.g, "w", {8, 3, 3, 3}, rng);
  const int b = bias ? constant(&c.g, "b", {8}, rng) : -1;
  ConvAttrs a;
  a.pad_begin = {1, 1};
  a.pad_end = {1, 0};
  a.strides = {2, 1};
  a.groups = 2;
  REQUIRE(c.g.conv("conv", c.x, w, b, -1, a, &c.conv_out).ok());
  return c;
}

int batchnorm(Graph* g, const std::string& name, int x, int64_t c, std::mt19937_64* rng) {
  const int scale = constant(g, name + ".scale", {c}, rng);
  const int bias = constant(g, name + ".bias", {c}, rng);
  const int mean = constant(g, name + ".mean", {c}, rng);
  const int var = constant(g, name + ".var", {c}, rng, 0.2f, 2.f);
  int y = -1;
  REQUIRE(g->batchnorm(name, x, scale, bias, mean, var, 1e-3, &y).ok());
  return y;
}

}  // namespace

TEST_CASE("fold_batchnorm merges a batchnorm into the conv before it, with or without a conv bias") {
  std::mt19937_64 rng(fresh_seed());
  for (bool bias : {false, true}) {
    CAPTURE(bias);
    ConvGraph c = conv_graph(&rng, bias);
    const int y = batchnorm(&c.g, "bn", c.conv_out, 8, &rng);
    REQUIRE(c.g.mark_output(y).ok());
    const Graph before = c.g;
    OptimizeReport report;
    REQUIRE(fold_batchnorm(&c.g, &report).ok());
    CHECK(report.batchnorms_folded == 1);
    CHECK(count_ops(c.g, OpType::BATCHNORM) == 0);
    REQUIRE(c.g.nodes.size() == 1);
    const ConvAttrs& a = std::get<ConvAttrs>(c.g.nodes[0].attrs);
    CHECK(a.has_bias);
    CHECK(c.g.tensors[c.g.nodes[0].outputs[0]].name == "bn");  // the graph output kept its name
    // The batchnorm's parameters and the old weights are gone from the graph.
    for (const Tensor& t : c.g.tensors) CHECK(t.name.find("bn.") != 0);
    check_same_function(before, c.g, &rng);
  }
}

TEST_CASE("fold_batchnorm leaves a batchnorm whose conv output is read elsewhere or fused already") {
  std::mt19937_64 rng(fresh_seed());
  SUBCASE("second reader") {
    ConvGraph c = conv_graph(&rng, true);
    const int y = batchnorm(&c.g, "bn", c.conv_out, 8, &rng);
    int r = -1;
    REQUIRE(c.g.relu("other_reader", c.conv_out, &r).ok());
    REQUIRE(c.g.mark_output(y).ok());
    REQUIRE(c.g.mark_output(r).ok());
    OptimizeReport report;
    REQUIRE(fold_batchnorm(&c.g, &report).ok());
    CHECK(report.batchnorms_folded == 0);
    CHECK(count_ops(c.g, OpType::BATCHNORM) == 1);
  }
  SUBCASE("conv output is a graph output") {
    ConvGraph c = conv_graph(&rng, false);
    const int y = batchnorm(&c.g, "bn", c.conv_out, 8, &rng);
    REQUIRE(c.g.mark_output(c.conv_out).ok());
    REQUIRE(c.g.mark_output(y).ok());
    REQUIRE(fold_batchnorm(&c.g, nullptr).ok());
    CHECK(count_ops(c.g, OpType::BATCHNORM) == 1);
  }
  SUBCASE("activation already in the conv's epilogue") {
    ConvGraph c = conv_graph(&rng, false);
    std::get<ConvAttrs>(c.g.nodes[0].attrs).act = ActivationDesc::relu();
    const int y = batchnorm(&c.g, "bn", c.conv_out, 8, &rng);
    REQUIRE(c.g.mark_output(y).ok());
    const Graph before = c.g;
    REQUIRE(fold_batchnorm(&c.g, nullptr).ok());
    CHECK(count_ops(c.g, OpType::BATCHNORM) == 1);
    check_same_function(before, c.g, &rng, 0.0);
  }
}

TEST_CASE("fold_batchnorm merges the importer's 2D batchnorm (gemm -> reshape -> batchnorm) into the gemm") {
  std::mt19937_64 rng(fresh_seed());
  for (bool trans_b : {false, true}) {
    for (bool bias : {false, true}) {
      CAPTURE(trans_b);
      CAPTURE(bias);
      Graph g;
      int x = -1;
      REQUIRE(g.add_input("x", DType::F32, {3, 10}, &x).ok());
      const int b = constant(&g, "b", trans_b ? std::vector<int64_t>{7, 10} : std::vector<int64_t>{10, 7}, &rng);
      const int c = bias ? constant(&g, "c", {1, 7}, &rng) : -1;
      GemmAttrs ga;
      ga.trans_b = trans_b;
      int y = -1, y3 = -1, z3 = -1, z = -1;
      REQUIRE(g.gemm("fc", x, b, c, ga, &y).ok());
      REQUIRE(g.reshape("bn/3d", y, {3, 7, 1}, &y3).ok());
      z3 = batchnorm(&g, "bn", y3, 7, &rng);
      REQUIRE(g.reshape("bn/2d", z3, {3, 7}, &z).ok());
      REQUIRE(g.mark_output(z).ok());
      const Graph before = g;
      OptimizeReport report;
      REQUIRE(optimize_graph(&g, OptimizeOptions(), &report).ok());
      CHECK(report.batchnorms_folded == 1);
      CHECK(count_ops(g, OpType::BATCHNORM) == 0);
      CHECK(count_ops(g, OpType::RESHAPE) == 0);  // (3,7) -> (3,7,1) -> (3,7) is no reshape at all
      CHECK(g.nodes.size() == 1);
      check_same_function(before, g, &rng);
    }
  }
}

TEST_CASE("fuse_epilogues: bias add, residual add and activation become one conv") {
  std::mt19937_64 rng(fresh_seed());
  for (bool conv_bias : {false, true}) {
    CAPTURE(conv_bias);
    ConvGraph c = conv_graph(&rng, conv_bias);
    // A second input is the residual, as a ResNet shortcut.
    int z = -1, biased = -1, summed = -1, y = -1;
    REQUIRE(c.g.add_input("z", DType::F32, c.g.tensors[c.conv_out].dims, &z).ok());
    const int channel_bias = constant(&c.g, "extra_bias", {1, 8, 1, 1}, &rng);
    REQUIRE(c.g.add("add_bias", c.conv_out, channel_bias, &biased).ok());
    REQUIRE(c.g.add("add_residual", z, biased, &summed).ok());  // the conv's value second
    REQUIRE(c.g.activation("act", summed, ActivationDesc::leaky_relu(0.1f), &y).ok());
    REQUIRE(c.g.mark_output(y).ok());
    const Graph before = c.g;
    OptimizeReport report;
    REQUIRE(fuse_epilogues(&c.g, &report).ok());
    CHECK(report.biases_fused == 1);
    CHECK(report.residuals_fused == 1);
    CHECK(report.activations_fused == 1);
    REQUIRE(c.g.nodes.size() == 1);
    const Node& conv = c.g.nodes[0];
    const ConvAttrs& a = std::get<ConvAttrs>(conv.attrs);
    CHECK(a.has_bias);
    CHECK(a.has_residual);
    CHECK(a.act.mode == ActivationMode::LEAKY_RELU);
    CHECK(c.g.tensors[conv.inputs.back()].name == "z");
    check_same_function(before, c.g, &rng);
  }
}

TEST_CASE("fuse_epilogues stops where the epilogue cannot follow") {
  std::mt19937_64 rng(fresh_seed());
  SUBCASE("an add after the activation is not a residual of the conv") {
    ConvGraph c = conv_graph(&rng, true);
    int z = -1, r = -1, y = -1;
    REQUIRE(c.g.add_input("z", DType::F32, c.g.tensors[c.conv_out].dims, &z).ok());
    REQUIRE(c.g.relu("relu", c.conv_out, &r).ok());
    REQUIRE(c.g.add("add", r, z, &y).ok());
    REQUIRE(c.g.mark_output(y).ok());
    const Graph before = c.g;
    REQUIRE(fuse_epilogues(&c.g, nullptr).ok());
    CHECK(c.g.nodes.size() == 2);  // relu fused, the add stays
    CHECK(count_ops(c.g, OpType::OP_TENSOR) == 1);
    check_same_function(before, c.g, &rng);
  }
  SUBCASE("a broadcast add that is not per channel stays") {
    ConvGraph c = conv_graph(&rng, false);
    const std::vector<int64_t> d = c.g.tensors[c.conv_out].dims;
    const int row = constant(&c.g, "row", {1, 1, 1, d[3]}, &rng);
    int y = -1;
    REQUIRE(c.g.add("add", c.conv_out, row, &y).ok());
    REQUIRE(c.g.mark_output(y).ok());
    REQUIRE(fuse_epilogues(&c.g, nullptr).ok());
    CHECK(c.g.nodes.size() == 2);
  }
  SUBCASE("a conv output read twice stays") {
    ConvGraph c = conv_graph(&rng, false);
    int y = -1, y2 = -1;
    REQUIRE(c.g.relu("relu", c.conv_out, &y).ok());
    REQUIRE(c.g.activation("tanh", c.conv_out, ActivationDesc::tanh(), &y2).ok());
    REQUIRE(c.g.mark_output(y).ok());
    REQUIRE(c.g.mark_output(y2).ok());
    REQUIRE(fuse_epilogues(&c.g, nullptr).ok());
    CHECK(c.g.nodes.size() == 3);
  }
}

TEST_CASE("fuse_epilogues turns Mul(x, Sigmoid(x)) into swish, then into the conv") {
  std::mt19937_64 rng(fresh_seed());
  ConvGraph c = conv_graph(&rng, true);
  int s = -1, y = -1;
  REQUIRE(c.g.activation("sig", c.conv_out, ActivationDesc::sigmoid(), &s).ok());
  // conv_out now has two readers (sigmoid and mul): the swish rewrite comes first, then the conv
  // has one reader again.
  REQUIRE(c.g.op_tensor("mul", TensorOp::MUL, s, c.conv_out, &y).ok());
  REQUIRE(c.g.mark_output(y).ok());
  const Graph before = c.g;
  OptimizeReport report;
  REQUIRE(fuse_epilogues(&c.g, &report).ok());
  CHECK(report.swish_fused == 1);
  CHECK(report.activations_fused == 1);
  REQUIRE(c.g.nodes.size() == 1);
  CHECK(std::get<ConvAttrs>(c.g.nodes[0].attrs).act.mode == ActivationMode::SWISH);
  check_same_function(before, c.g, &rng);
}

TEST_CASE("fold_reshapes shortens reshape chains and removes reshapes to the same dims") {
  std::mt19937_64 rng(fresh_seed());
  Graph g;
  int x = -1, a = -1, b = -1, c = -1, d = -1, e = -1;
  REQUIRE(g.add_input("x", DType::F32, {2, 3, 4, 5}, &x).ok());
  REQUIRE(g.relu("relu", x, &a).ok());
  REQUIRE(g.reshape("r1", a, {6, 20}, &b).ok());
  REQUIRE(g.reshape("r2", b, {2, 60}, &c).ok());
  REQUIRE(g.reshape("r3", c, {2, 3, 4, 5}, &d).ok());  // back to relu's dims: no reshape needed
  REQUIRE(g.activation("tanh", d, ActivationDesc::tanh(), &e).ok());
  REQUIRE(g.mark_output(e).ok());
  const Graph before = g;
  OptimizeReport report;
  REQUIRE(optimize_graph(&g, OptimizeOptions(), &report).ok());
  CHECK(count_ops(g, OpType::RESHAPE) == 0);
  CHECK(g.nodes.size() == 2);
  check_same_function(before, g, &rng, 0.0);

  SUBCASE("an identity reshape producing a graph output hands the output to its producer") {
    Graph h;
    int hx = -1, hr = -1, hy = -1;
    REQUIRE(h.add_input("x", DType::F32, {4, 5}, &hx).ok());
    REQUIRE(h.relu("relu", hx, &hr).ok());
    REQUIRE(h.reshape("same", hr, {4, 5}, &hy).ok());
    REQUIRE(h.mark_output(hy).ok());
    const Graph hbefore = h;
    REQUIRE(fold_reshapes(&h, nullptr).ok());
    REQUIRE(h.nodes.size() == 1);
    CHECK(h.tensors[h.nodes[0].outputs[0]].name == "same");
    CHECK(h.tensors[h.nodes[0].outputs[0]].kind == TensorKind::OUTPUT);
    check_same_function(hbefore, h, &rng, 0.0);
  }
  SUBCASE("a graph input reshaped to itself as an output stays (a node must write the output)") {
    Graph h;
    int hx = -1, hy = -1;
    REQUIRE(h.add_input("x", DType::F32, {4, 5}, &hx).ok());
    REQUIRE(h.reshape("same", hx, {4, 5}, &hy).ok());
    REQUIRE(h.mark_output(hy).ok());
    REQUIRE(fold_reshapes(&h, nullptr).ok());
    CHECK(h.nodes.size() == 1);
  }
}

TEST_CASE("fold_constants evaluates nodes of constants with the CPU kernels") {
  std::mt19937_64 rng(fresh_seed());
  Graph g;
  int x = -1, s = -1, sum = -1, y = -1;
  REQUIRE(g.add_input("x", DType::F32, {2, 5, 3}, &x).ok());
  const int c1 = constant(&g, "c1", {1, 5, 1}, &rng);
  const int c2 = constant(&g, "c2", {1, 5, 1}, &rng);
  REQUIRE(g.activation("sig", c1, ActivationDesc::sigmoid(), &s).ok());   // constant
  REQUIRE(g.op_tensor("mul", TensorOp::MUL, s, c2, &sum).ok());           // constant
  REQUIRE(g.add("add", x, sum, &y).ok());                                 // computed
  REQUIRE(g.mark_output(y).ok());
  const std::vector<float> v1 = g.tensors[c1].data, v2 = g.tensors[c2].data;
  const Graph before = g;
  OptimizeReport report;
  REQUIRE(fold_constants(&g, &report).ok());
  CHECK(report.constants_folded == 2);
  REQUIRE(g.nodes.size() == 1);
  const Tensor& folded = g.tensors[g.nodes[0].inputs[1]];
  CHECK(folded.kind == TensorKind::CONSTANT);
  REQUIRE(folded.data.size() == 5);
  for (size_t i = 0; i < 5; ++i) {
    const double want = v2[i] / (1.0 + std::exp(-double(v1[i])));  // independent of the kernels
    CHECK(std::fabs(folded.data[i] - want) <= 1e-6 * std::max(1.0, std::fabs(want)));
  }
  check_same_function(before, g, &rng);
}

TEST_CASE("eliminate_dead_nodes removes what no output needs and keeps every graph input") {
  std::mt19937_64 rng(fresh_seed());
  Graph g;
  int x = -1, unused_in = -1, a = -1, dead1 = -1, dead2 = -1;
  REQUIRE(g.add_input("x", DType::F32, {3, 4}, &x).ok());
  REQUIRE(g.add_input("unused", DType::F32, {3, 4}, &unused_in).ok());
  const int c = constant(&g, "only_dead_reads_me", {3, 4}, &rng);
  REQUIRE(g.relu("live", x, &a).ok());
  REQUIRE(g.add("dead1", x, c, &dead1).ok());
  REQUIRE(g.activation("dead2", dead1, ActivationDesc::tanh(), &dead2).ok());
  REQUIRE(g.mark_output(a).ok());
  const Graph before = g;
  OptimizeReport report;
  REQUIRE(eliminate_dead_nodes(&g, &report).ok());
  CHECK(report.dead_removed == 2);
  CHECK(g.nodes.size() == 1);
  int inputs = 0;
  for (const Tensor& t : g.tensors) {
    inputs += t.kind == TensorKind::INPUT;
    CHECK(t.name != "only_dead_reads_me");
  }
  CHECK(inputs == 2);
  check_same_function(before, g, &rng, 0.0);
}

TEST_CASE("passes can be switched off one by one") {
  OptimizeOptions o;
  CHECK(o.disable("fuse"));
  CHECK_FALSE(o.fold_batchnorm);
  CHECK_FALSE(o.fuse_epilogues);
  CHECK(o.fold_constants);
  CHECK(o.disable("fold_constants"));
  CHECK(o.disable("fold_reshapes"));
  CHECK(o.disable("eliminate_dead_nodes"));
  CHECK_FALSE(o.disable("no_such_pass"));

  std::mt19937_64 rng(fresh_seed());
  ConvGraph c = conv_graph(&rng, true);
  int r = -1;
  const int y = batchnorm(&c.g, "bn", c.conv_out, 8, &rng);
  REQUIRE(c.g.relu("relu", y, &r).ok());
  REQUIRE(c.g.mark_output(r).ok());
  OptimizeReport report;
  REQUIRE(optimize_graph(&c.g, o, &report).ok());
  CHECK(c.g.nodes.size() == 3);
  CHECK(report.nodes_in == 3);
  CHECK(report.nodes_out == 3);
  const Graph before = c.g;
  REQUIRE(optimize_graph(&c.g, OptimizeOptions(), &report).ok());
  CHECK(c.g.nodes.size() == 1);  // bn folded, relu fused
  check_same_function(before, c.g, &rng);
}

TEST_CASE("fold_reshapes turns a transpose of size-1 dims into a reshape, and keeps real transposes") {
  std::mt19937_64 rng(fresh_seed());
  Graph g;
  int x = -1, a = -1, t = -1, r = -1, y = -1;
  REQUIRE(g.add_input("x", DType::F32, {2, 1, 3, 5}, &x).ok());
  REQUIRE(g.relu("relu", x, &a).ok());
  SliceAttrs relabel;
  relabel.starts = {0, 0, 0, 0};
  relabel.steps = {1, 1, 1, 1};
  relabel.sizes = {2, 1, 3, 5};
  relabel.perm = {1, 0, 2, 3};  // (2, 1, 3, 5) -> (1, 2, 3, 5): same element order
  REQUIRE(g.slice("relabel", a, relabel, &t).ok());
  SliceAttrs transpose = relabel;
  transpose.sizes = {1, 2, 3, 5};
  transpose.perm = {0, 1, 3, 2};  // (1, 2, 3, 5) -> (1, 2, 5, 3): a real transpose
  REQUIRE(g.slice("transpose", t, transpose, &r).ok());
  REQUIRE(g.activation("tanh", r, ActivationDesc::tanh(), &y).ok());
  REQUIRE(g.mark_output(y).ok());
  const Graph before = g;
  OptimizeReport report;
  REQUIRE(optimize_graph(&g, OptimizeOptions(), &report).ok());
  CHECK(count_ops(g, OpType::SLICE) == 1);
  CHECK(count_ops(g, OpType::RESHAPE) == 1);
  check_same_function(before, g, &rng, 0.0);
}
