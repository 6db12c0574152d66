// Writes the fuzzer's seed corpus: small valid .jet files built from the model zoo's tiny_cnn
// (every op type the runtime knows) in the variants the loader must handle: f32 and f16,
// channels-first and channels-last, small and odd image sizes, both planners, algorithms chosen
// offline or left to the runtime, with and without metadata; a graph of the integer and bool
// ops (write_typed_seed); and every op type's one-node sample (write_op_seed, from
// tests/common/ir_reference.h). Generated at fuzz time, never committed (scripts/fuzz.sh).
//
//   jet_fuzz_seeds OUT_DIR     writes OUT_DIR/seed-<name>.jet, prints one line per file
#include <cstdio>
#include <string>
#include <vector>

#include "common/ir_reference.h"
#include "ir.h"
#include "passes.h"
#include "write_model.h"
#include "zoo.h"

namespace {

struct Variant {
  const char* name;
  int64_t batch, image, width;  // 0: tiny_cnn's default
  bool f16, channels_last;
  bool tuned;  // conv algorithms chosen on a CPU handle (explicit algos, workspace_bytes > 0)
  jet::ir::Planner planner;
  jet::ConvPreference preference;
  bool metadata;
};

const Variant kVariants[] = {
    {"f32", 0, 0, 0, false, false, false, jet::ir::Planner::GREEDY_BEST_FIT,
     jet::ConvPreference::PREFER_FASTEST, false},
    {"f16", 0, 0, 0, true, false, false, jet::ir::Planner::GREEDY_BEST_FIT,
     jet::ConvPreference::PREFER_FASTEST, false},
    {"nhwc", 0, 0, 0, false, true, false, jet::ir::Planner::GREEDY_BEST_FIT,
     jet::ConvPreference::PREFER_FASTEST, false},
    {"f16-nhwc", 0, 0, 0, true, true, true, jet::ir::Planner::GREEDY_BEST_FIT,
     jet::ConvPreference::PREFER_FASTEST, true},
    {"min-image", 1, 5, 5, false, false, true, jet::ir::Planner::NAIVE,
     jet::ConvPreference::NO_WORKSPACE, false},
    {"small-f16", 1, 8, 6, true, false, false, jet::ir::Planner::NAIVE,
     jet::ConvPreference::SPECIFY_WORKSPACE_LIMIT, true},
    {"tuned-nhwc", 2, 9, 7, false, true, true, jet::ir::Planner::GREEDY_BEST_FIT,
     jet::ConvPreference::PREFER_FASTEST, true},
};

jet::Status write_variant(const Variant& v, const std::string& path) {
  jet::ZooOptions opt = jet::tiny_cnn_options(/*seed=*/7);
  if (v.batch > 0) opt.batch = v.batch;
  if (v.image > 0) opt.image = v.image;
  if (v.width > 0) opt.width = v.width;
  jet::ir::Graph g;
  jet::Status st = jet::tiny_cnn(opt, &g);
  if (st.ok() && v.f16) st = jet::convert_precision(&g, jet::DType::F16);
  if (st.ok() && v.channels_last) st = jet::set_channels_last(&g);
  if (!st.ok()) return st;

  jet::WriteOptions w;
  w.producer_version = "jet_fuzz_seeds";
  w.source_name = std::string("zoo:tiny_cnn/") + v.name;
  w.planner = v.planner;
  w.conv_preference = v.preference;
  w.workspace_limit = 4096;
  const jet::Handle cpu = jet::Handle::cpu();
  if (v.tuned) w.tune_handle = &cpu;
  if (v.metadata) {
    w.source_hash = "fnv64w:0123456789abcdef";
    w.labels = {"cat", "dog", "", "a label with spaces"};
    w.properties = {{"zoo.model", "tiny_cnn"}, {"fuzz", "seed"}};
    jet::WriteOptions::Preprocess p;
    for (size_t t = 0; t < g.tensors.size() && p.input < 0; ++t) {
      if (g.tensors[t].kind == jet::ir::TensorKind::INPUT) p.input = static_cast<int>(t);
    }
    p.mean = {0.485f, 0.456f, 0.406f};
    p.std = {0.229f, 0.224f, 0.225f};
    p.bgr = true;
    p.nhwc = false;  // the graph input stays packed NCHW (3 channels) in every variant
    w.preprocessing.push_back(p);
  }
  return jet::write_model_file(g, w, path);
}

// A graph of the integer and bool ops (schema 1.5): i64 and bool inputs, LOGIC, WHERE,
// ARG_REDUCE, an i64 CONCAT, a TRANSFORM to i32, i64 and bool constants; in f32 or f16 with
// channels-last activations.
jet::Status write_typed_seed(bool f16, const std::string& path) {
  using jet::DType;
  jet::ir::Graph g;
  int x = -1, ids = -1, t = -1, two = -1, neg = -1, gt = -1, eq = -1, mask = -1, w = -1, am = -1, cat = -1, i32 = -1;
  jet::Status st = g.add_input("x", DType::F32, {2, 3, 4, 5}, &x);
  if (st.ok()) st = g.add_input("ids", DType::I64, {2, 1, 4, 5}, &ids);
  if (st.ok()) st = g.add_constant("t", DType::F32, {5}, &t);
  if (st.ok()) st = g.add_constant("two", DType::I64, {1}, &two);
  if (st.ok()) st = g.add_constant("neg", DType::F32, {1}, &neg);
  if (!st.ok()) return st;
  g.tensors[t].data = {0.1f, -0.2f, 0.3f, 0.f, 0.5f};
  g.tensors[two].int_data = {2};
  g.tensors[neg].data = {-1.f};
  st = g.logic("gt", jet::LogicOp::GREATER, x, t, &gt);
  if (st.ok()) st = g.logic("eq", jet::LogicOp::EQUAL, ids, two, &eq);
  if (st.ok()) st = g.logic("mask", jet::LogicOp::OR, gt, eq, &mask);
  if (st.ok()) st = g.where("w", mask, x, neg, &w);
  if (st.ok()) st = g.arg_reduce("am", w, jet::ArgReduceOp::ARGMAX, 1, true, &am);
  if (st.ok()) st = g.concat("cat", {am, ids}, 1, &cat);
  if (st.ok()) st = g.transform("i32", cat, DType::I32, &i32);
  if (st.ok()) st = g.mark_output(w);
  if (st.ok()) st = g.mark_output(i32);
  if (st.ok()) st = g.mark_output(mask);
  if (st.ok() && f16) st = jet::convert_precision(&g, DType::F16);
  if (st.ok()) st = jet::set_channels_last(&g);
  if (!st.ok()) return st;
  jet::WriteOptions wo;
  wo.producer_version = "jet_fuzz_seeds";
  wo.source_name = f16 ? "typed-f16" : "typed-f32";
  return jet::write_model_file(g, wo, path);
}

// The one-node sample graph of an op type (tests/common/ir_reference.h, the graphs the runtime's
// op-table test runs), in f32, or in f16 with channels-last activations: a seed that reaches the
// op's prepare and kernel for every op type, a new one included.
jet::Status write_op_seed(jet::ir::OpType op, bool f16, const std::string& path) {
  jet::ir::Graph g;
  jet::Status st = jet::test::op_sample_graph(op, &g);
  if (st.ok() && f16) st = jet::convert_precision(&g, jet::DType::F16);
  if (st.ok() && f16) st = jet::set_channels_last(&g);
  if (!st.ok()) return st;
  jet::WriteOptions wo;
  wo.producer_version = "jet_fuzz_seeds";
  wo.source_name = std::string("op-") + jet::ir::op_type_name(op) + (f16 ? "-f16" : "-f32");
  return jet::write_model_file(g, wo, path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: jet_fuzz_seeds OUT_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  int failures = 0;
  for (const Variant& v : kVariants) {
    const std::string path = dir + "/seed-" + v.name + ".jet";
    const jet::Status st = write_variant(v, path);
    if (st.ok()) {
      std::printf("jet_fuzz_seeds: wrote %s\n", path.c_str());
    } else {
      std::fprintf(stderr, "jet_fuzz_seeds: %s: %s\n", v.name, st.to_string().c_str());
      ++failures;
    }
  }
  for (bool f16 : {false, true}) {
    const std::string path = dir + "/seed-typed-" + (f16 ? "f16" : "f32") + ".jet";
    const jet::Status st = write_typed_seed(f16, path);
    if (st.ok()) {
      std::printf("jet_fuzz_seeds: wrote %s\n", path.c_str());
    } else {
      std::fprintf(stderr, "jet_fuzz_seeds: typed: %s\n", st.to_string().c_str());
      ++failures;
    }
    for (int i = 0; i < static_cast<int>(jet::ir::OpType::COUNT); ++i) {
      const auto op = static_cast<jet::ir::OpType>(i);
      const std::string op_path = dir + "/seed-op-" + jet::ir::op_type_name(op) + (f16 ? "-f16" : "-f32") + ".jet";
      const jet::Status so = write_op_seed(op, f16, op_path);
      if (so.ok()) {
        std::printf("jet_fuzz_seeds: wrote %s\n", op_path.c_str());
      } else {
        std::fprintf(stderr, "jet_fuzz_seeds: op %s: %s\n", jet::ir::op_type_name(op), so.to_string().c_str());
        ++failures;
      }
    }
  }
  return failures == 0 ? 0 : 1;
}
