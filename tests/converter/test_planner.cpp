// Graph IR (builders, shape inference, topological order) and the memory planner, on hand-made
// graphs whose optimal plan is known and on ResNet-50 / MobileNetV2 from the zoo (zoo.h).
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "ir.h"
#include "plan_memory.h"
#include "zoo.h"

using namespace jet;
using namespace jet::ir;

namespace {

bool contains(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

// A conv layer with constant weights and bias, fused activation, optional residual.
int conv_layer(Graph& g, const std::string& name, int x, int64_t cout, int64_t k, int64_t stride,
               int64_t pad, int64_t groups = 1, ActivationDesc act = ActivationDesc::identity(),
               int residual = -1) {
  const int64_t cin = g.tensors[x].dims[1];
  const DType dt = g.tensors[x].dtype;
  int w = -1, b = -1, y = -1;
  REQUIRE(g.add_constant(name + ".w", dt, {cout, cin / groups, k, k}, &w).ok());
  REQUIRE(g.add_constant(name + ".b", dt, {cout}, &b).ok());
  ConvAttrs a;
  a.pad_begin = a.pad_end = {pad, pad};
  a.strides = {stride, stride};
  a.groups = groups;
  a.act = act;
  const Status st = g.conv(name, x, w, b, residual, a, &y);
  INFO(st.to_string());
  REQUIRE(st.ok());
  return y;
}

size_t sum_aligned(const Graph& g) {
  size_t sum = 0;
  for (const Tensor& t : g.tensors) {
    if (t.kind != TensorKind::CONSTANT) sum += (t.bytes() + 255) / 256 * 256;
  }
  return sum;
}

// min_saving: how many times smaller than NAIVE the greedy arena must be.
void check_network(const char* label, const Graph& g, size_t min_saving = 4) {
  std::vector<int> order;
  const Status st = g.topological_order(&order);
  INFO(st.to_string());
  REQUIRE(st.ok());
  REQUIRE(order.size() == g.nodes.size());
  const Tensor& out = g.tensors[g.nodes[order.back()].outputs[0]];
  CHECK(out.kind == TensorKind::OUTPUT);
  CHECK(out.dims == std::vector<int64_t>{1, 1000});

  const MemoryPlan greedy = plan_memory(g, order, Planner::GREEDY_BEST_FIT);
  const MemoryPlan naive = plan_memory(g, order, Planner::NAIVE);
  const Status vg = validate_plan(g, order, greedy);
  const Status vn = validate_plan(g, order, naive);
  INFO(vg.to_string() << " / " << vn.to_string());
  CHECK(vg.ok());
  CHECK(vn.ok());
  char line[256];
  std::snprintf(line, sizeof line,
                "%s: %zu nodes; greedy arena %zu B, lower bound %zu B, ratio %.4f; naive arena %zu B",
                label, g.nodes.size(), greedy.arena_bytes, greedy.lower_bound_bytes, greedy.ratio(),
                naive.arena_bytes);
  MESSAGE(line);
  CHECK(greedy.arena_bytes >= greedy.lower_bound_bytes);
  CHECK(greedy.ratio() <= 1.05);
  CHECK(naive.arena_bytes == sum_aligned(g));
  CHECK(greedy.arena_bytes < naive.arena_bytes / min_saving);
}

// x (1x4x8x8) -> conv 1x1 -> y with cout channels: a non-in-place op.
int conv1x1(Graph& g, const std::string& name, int x, int64_t cout) {
  return conv_layer(g, name, x, cout, 1, 1, 0);
}

}  // namespace

TEST_CASE("planner: a chain reuses memory; arena = the largest adjacent pair") {
  Graph g;
  int a = -1;
  REQUIRE(g.add_input("A", DType::F32, {1, 4, 8, 8}, &a).ok());  // 1024 B
  const int b = conv1x1(g, "B", a, 8);                            // 2048 B
  const int c = conv1x1(g, "C", b, 2);                            // 512 B
  const int d = conv1x1(g, "D", c, 4);                            // 1024 B
  REQUIRE(g.mark_output(d).ok());
  std::vector<int> order;
  REQUIRE(g.topological_order(&order).ok());
  CHECK(order == std::vector<int>{0, 1, 2});

  const MemoryPlan p = plan_memory(g, order, Planner::GREEDY_BEST_FIT);
  CHECK(validate_plan(g, order, p).ok());
  CHECK(p.tensors[a].first_step == 0);
  CHECK(p.tensors[a].last_step == 2);  // a graph input lives to the end: runs never clobber it
  CHECK(p.tensors[b].first_step == 0);
  CHECK(p.tensors[b].last_step == 1);
  CHECK(p.tensors[d].last_step == 2);
  CHECK(!p.tensors[g.nodes[0].inputs[1]].in_arena);  // weights are not in the arena
  // max(A+B, A+B+C, A+C+D) = max(3072, 3584, 2560).
  CHECK(p.lower_bound_bytes == 3584);
  CHECK(p.arena_bytes == 3584);
  CHECK(p.tensors[b].offset == 0);     // largest first
  CHECK(p.tensors[a].offset == 2048);
  CHECK(p.tensors[d].offset == 0);     // reuses B's bytes
  CHECK(p.tensors[c].offset == 3072);  // B and A are live: past both

  const MemoryPlan n = plan_memory(g, order, Planner::NAIVE);
  CHECK(validate_plan(g, order, n).ok());
  CHECK(n.arena_bytes == 1024 + 2048 + 512 + 1024);
  CHECK(n.lower_bound_bytes == 3584);

  // validate_plan catches an overlap and a misaligned offset.
  MemoryPlan broken = p;
  broken.tensors[c].offset = 0;  // C would overwrite B while conv C reads it
  const Status st = validate_plan(g, order, broken);
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(contains(st.message(), "'B'"));
  CHECK(contains(st.message(), "'C'"));
  broken = p;
  broken.tensors[a].offset = 2048 + 64;
  broken.arena_bytes = 4096;
  CHECK(contains(validate_plan(g, order, broken).message(), "aligned"));
  // ... and an order that reads a tensor before it is produced.
  CHECK(!validate_plan(g, {1, 0, 2}, p).ok());
}

TEST_CASE("planner: tiny tensors are padded to 256 bytes") {
  Graph g;
  int x = -1;
  REQUIRE(g.add_input("x", DType::F16, {1, 3, 1, 1}, &x).ok());  // 6 B
  const int y = conv1x1(g, "y", x, 5);
  REQUIRE(g.mark_output(y).ok());
  std::vector<int> order;
  REQUIRE(g.topological_order(&order).ok());
  const MemoryPlan p = plan_memory(g, order, Planner::GREEDY_BEST_FIT);
  CHECK(validate_plan(g, order, p).ok());
  CHECK(p.tensors[x].size == 256);
  CHECK(p.arena_bytes == 512);
  CHECK(p.tensors[x].offset % 256 == 0);
  CHECK(p.tensors[y].offset % 256 == 0);
}

TEST_CASE("planner: in-place relu shares its input's offset") {
  Graph g;
  int x = -1, r = -1, r2 = -1;
  REQUIRE(g.add_input("x", DType::F32, {1, 4, 8, 8}, &x).ok());
  const int b = conv1x1(g, "b", x, 4);
  REQUIRE(g.relu("r", b, &r).ok());
  REQUIRE(g.relu("r2", r, &r2).ok());
  REQUIRE(g.mark_output(r2).ok());
  std::vector<int> order;
  REQUIRE(g.topological_order(&order).ok());
  const MemoryPlan p = plan_memory(g, order, Planner::GREEDY_BEST_FIT);
  CHECK(validate_plan(g, order, p).ok());
  CHECK(p.tensors[r].shares_with == b);
  CHECK(p.tensors[r2].shares_with == r);
  CHECK(p.tensors[r].offset == p.tensors[b].offset);
  CHECK(p.tensors[r2].offset == p.tensors[b].offset);
  CHECK(p.arena_bytes == 2048);  // x and the b/r/r2 chain
  CHECK(p.lower_bound_bytes == 2048);
  // NAIVE does no in-place.
  const MemoryPlan n = plan_memory(g, order, Planner::NAIVE);
  CHECK(n.tensors[r].shares_with == -1);
  CHECK(n.arena_bytes == 4096);

  // A relu on a graph input, or on a tensor read again later, is not done in place.
  Graph h;
  int in = -1, ri = -1, rb = -1, sum = -1;
  REQUIRE(h.add_input("in", DType::F32, {1, 4, 8, 8}, &in).ok());
  REQUIRE(h.relu("ri", in, &ri).ok());
  const int c = conv1x1(h, "c", ri, 4);
  REQUIRE(h.relu("rb", c, &rb).ok());
  REQUIRE(h.add("sum", rb, c, &sum).ok());  // c is still read here
  REQUIRE(h.mark_output(sum).ok());
  REQUIRE(h.topological_order(&order).ok());
  const MemoryPlan q = plan_memory(h, order, Planner::GREEDY_BEST_FIT);
  CHECK(validate_plan(h, order, q).ok());
  CHECK(q.tensors[ri].shares_with == -1);
  CHECK(q.tensors[rb].shares_with == -1);
  CHECK(q.tensors[rb].offset != q.tensors[c].offset);
  CHECK(q.tensors[sum].shares_with == rb);  // both die at the add: the first input is taken
}

TEST_CASE("planner: a diamond keeps the skip connection alive") {
  Graph g;
  int x = -1, d = -1;
  REQUIRE(g.add_input("x", DType::F32, {1, 4, 8, 8}, &x).ok());
  const int a = conv1x1(g, "a", x, 4);
  const int b = conv1x1(g, "b", a, 4);
  const int c = conv1x1(g, "c", b, 4);
  REQUIRE(g.add("d", c, a, &d).ok());
  REQUIRE(g.mark_output(d).ok());
  std::vector<int> order;
  REQUIRE(g.topological_order(&order).ok());
  const MemoryPlan p = plan_memory(g, order, Planner::GREEDY_BEST_FIT);
  CHECK(validate_plan(g, order, p).ok());
  CHECK(p.tensors[a].first_step == 0);
  CHECK(p.tensors[a].last_step == 3);
  CHECK(p.tensors[d].shares_with == c);
  // Peak at step 2 (conv c): x (an input, live throughout), a, b and c, 4 x 1024 B.
  CHECK(p.lower_bound_bytes == 4096);
  CHECK(p.arena_bytes == 4096);
  for (int t : {b, c}) {
    const bool disjoint = p.tensors[t].offset + 1024 <= p.tensors[a].offset ||
                          p.tensors[a].offset + 1024 <= p.tensors[t].offset;
    CHECK(disjoint);
  }
}

TEST_CASE("ir: shape inference") {
  Graph g;
  int x = -1, w = -1, y = -1;
  REQUIRE(g.add_input("x", DType::F32, {1, 3, 32, 32}, &x).ok());
  REQUIRE(g.add_constant("w", DType::F32, {16, 4, 3, 3}, &w).ok());  // expects 4 channels
  ConvAttrs a;
  a.pad_begin = a.pad_end = {1, 1};
  Status st = g.conv("stem", x, w, -1, -1, a, &y);
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(contains(st.message(), "stem"));
  CHECK(contains(st.message(), "[1, 3, 32, 32]"));
  MESSAGE(st.to_string());
  CHECK(g.nodes.empty());
  CHECK(g.tensors.size() == 2);  // unchanged

  int w2 = -1, bias = -1;
  REQUIRE(g.add_constant("w2", DType::F32, {16, 3, 3, 3}, &w2).ok());
  REQUIRE(g.add_constant("bias", DType::F32, {8}, &bias).ok());
  st = g.conv("stem", x, w2, bias, -1, a, &y);
  CHECK(contains(st.message(), "bias"));
  a.strides = {2, 2};
  REQUIRE(g.conv("stem", x, w2, -1, -1, a, &y).ok());
  CHECK(g.tensors[y].dims == std::vector<int64_t>{1, 16, 16, 16});
  a.strides = {2};
  CHECK(contains(g.conv("bad", x, w2, -1, -1, a, &y).message(), "strides"));

  int p = -1;
  REQUIRE(g.max_pool("pool", x, 3, 2, 1, &p).ok());
  CHECK(g.tensors[p].dims == std::vector<int64_t>{1, 3, 16, 16});
  int z = -1, s = -1;
  REQUIRE(g.add_input("z", DType::F32, {1, 4, 16, 16}, &z).ok());
  st = g.add("sum", p, z, &s);
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(contains(st.message(), "sum"));
  int cat = -1;
  REQUIRE(g.concat("cat", {p, z}, 1, &cat).ok());
  CHECK(g.tensors[cat].dims == std::vector<int64_t>{1, 7, 16, 16});
  int r = -1;
  REQUIRE(g.reshape("r", cat, {7, -1}, &r).ok());
  CHECK(g.tensors[r].dims == std::vector<int64_t>{7, 256});
  CHECK(!g.reshape("r2", cat, {5, -1}, &r).ok());
  int fcw = -1, fc = -1;
  REQUIRE(g.add_constant("fcw", DType::F32, {100, 10}, &fcw).ok());
  st = g.gemm("fc", r, fcw, -1, GemmAttrs{}, &fc);
  CHECK(contains(st.message(), "fc"));
  CHECK(contains(st.message(), "K = 256"));
  int sc = -1, bnb = -1, mean = -1, var = -1, bn = -1;
  REQUIRE(g.add_constant("sc", DType::F32, {7}, &sc).ok());
  REQUIRE(g.add_constant("bnb", DType::F32, {7}, &bnb).ok());
  REQUIRE(g.add_constant("mean", DType::F32, {7}, &mean).ok());
  REQUIRE(g.add_constant("var", DType::F32, {6}, &var).ok());
  CHECK(contains(g.batchnorm("bn", cat, sc, bnb, mean, var, 1e-5, &bn).message(), "var"));
  int h = -1;
  REQUIRE(g.transform("to_half", cat, DType::F16, &h).ok());
  CHECK(g.tensors[h].bytes() == 7 * 16 * 16 * 2);
  CHECK(!g.conv("oob", 99, w2, -1, -1, ConvAttrs{}, &y).ok());
}

TEST_CASE("ir: topological_order sorts and detects cycles") {
  Graph g;
  int x = -1;
  REQUIRE(g.add_input("x", DType::F32, {1, 4}, &x).ok());
  const int t1 = g.add_tensor(Tensor{"t1", DType::F32, {1, 4}, TensorKind::ACTIVATION, {}, {}, {}});
  const int t2 = g.add_tensor(Tensor{"t2", DType::F32, {1, 4}, TensorKind::ACTIVATION, {}, {}, {}});
  const int t3 = g.add_tensor(Tensor{"t3", DType::F32, {1, 4}, TensorKind::OUTPUT, {}, {}, {}});
  // Added out of order: "second" reads what "first" produces.
  g.add_node(Node{"second", OpType::ACTIVATION, {t1}, {t2}, ActivationAttrs{ActivationDesc::relu()}});
  g.add_node(Node{"first", OpType::ACTIVATION, {x}, {t1}, ActivationAttrs{ActivationDesc::relu()}});
  g.add_node(Node{"third", OpType::OP_TENSOR, {t2, t1}, {t3}, OpTensorAttrs{}});
  std::vector<int> order;
  REQUIRE(g.topological_order(&order).ok());
  CHECK(order == std::vector<int>{1, 0, 2});
  const MemoryPlan p = plan_memory(g, order, Planner::GREEDY_BEST_FIT);
  CHECK(validate_plan(g, order, p).ok());

  // first now also reads t2: first -> second -> first is a cycle; third is only downstream of it.
  g.nodes[1].inputs.push_back(t2);
  const Status st = g.topological_order(&order);
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(contains(st.message(), "cycle"));
  CHECK((contains(st.message(), "'first'") || contains(st.message(), "'second'")));
  CHECK(!contains(st.message(), "third"));
  CHECK(order.empty());

  // Two producers of one tensor.
  g.nodes[1].inputs.pop_back();
  g.add_node(Node{"dup", OpType::ACTIVATION, {x}, {t1}, ActivationAttrs{ActivationDesc::relu()}});
  CHECK(contains(g.topological_order(&order).message(), "produced by both"));
}

TEST_CASE("planner: ResNet-50 arena within 1.05x of the lower bound") {
  Graph g;
  const Status st = resnet50(ZooOptions{}, &g);
  INFO(st.to_string());
  REQUIRE(st.ok());
  check_network("ResNet-50", g);
}

TEST_CASE("planner: MobileNetV2 arena within 1.05x of the lower bound") {
  Graph g;
  const Status st = mobilenet_v2(ZooOptions{}, &g);
  INFO(st.to_string());
  REQUIRE(st.ok());
  check_network("MobileNetV2", g);
}

TEST_CASE("planner: ResNet-18 and tiny_cnn from the zoo plan validly") {
  Graph g;
  REQUIRE(resnet18(ZooOptions{}, &g).ok());
  check_network("ResNet-18", g, 2);  // residuals fused into convs: fewer tensors to share
  Graph t;
  REQUIRE(tiny_cnn(tiny_cnn_options(), &t).ok());
  std::vector<int> order;
  REQUIRE(t.topological_order(&order).ok());
  for (Planner kind : {Planner::GREEDY_BEST_FIT, Planner::NAIVE}) {
    const MemoryPlan p = plan_memory(t, order, kind);
    const Status st = validate_plan(t, order, p);
    INFO(st.to_string());
    CHECK(st.ok());
    CHECK(p.arena_bytes >= p.lower_bound_bytes);
  }
}

TEST_CASE("ir: strided tensors are sized by the bytes they span") {
  Tensor t{"t", DType::F16, {2, 3, 4, 5}, TensorKind::ACTIVATION, {}, {}, {}};
  CHECK(t.bytes() == 2 * 3 * 4 * 5 * 2);
  CHECK(t.is_packed());
  t.strides = channels_last_strides(t.dims);
  CHECK(t.strides == std::vector<int64_t>{60, 1, 15, 3});
  CHECK(!t.is_packed());
  CHECK(t.bytes() == 2 * 3 * 4 * 5 * 2);  // a permutation spans the same bytes
  t.strides = {200, 1, 40, 4};            // padded rows: 4 channels of room for 3
  CHECK(t.span() == 1 * 200 + 3 * 40 + 4 * 4 + 2 * 1 + 1);
  CHECK(t.bytes() == static_cast<size_t>(t.span()) * 2);
  CHECK(packed_strides({2, 3, 4}) == std::vector<int64_t>{12, 4, 1});
  CHECK(channels_last_strides({2, 3, 4, 5, 6}) == std::vector<int64_t>{360, 1, 90, 18, 3});

  // The planner reserves the span: a padded activation gets a larger region.
  Graph g;
  int x = -1, r = -1;
  REQUIRE(g.add_input("x", DType::F32, {1, 4, 16, 16}, &x).ok());
  REQUIRE(g.relu("r", x, &r).ok());
  g.tensors[r].strides = {2048, 512, 16, 1};  // channel planes 512 apart, 256 used
  REQUIRE(g.mark_output(r).ok());
  std::vector<int> order;
  REQUIRE(g.topological_order(&order).ok());
  const MemoryPlan p = plan_memory(g, order, Planner::GREEDY_BEST_FIT);
  CHECK(validate_plan(g, order, p).ok());
  CHECK(p.tensors[r].size == (3 * 512 + 256) * 4);  // the span, not the 1024 elements
  CHECK(p.tensors[x].size == 4 * 256 * 4);
  MemoryPlan small = p;
  small.tensors[r].size = 4 * 256 * 4;  // enough for the elements, not for the span
  CHECK(!validate_plan(g, order, small).ok());
}
