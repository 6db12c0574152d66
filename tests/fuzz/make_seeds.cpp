// Writes the fuzzer's seed corpus: small valid .jet files built from the model zoo's tiny_cnn
// (every op type the runtime knows) in the variants the loader must handle: f32 and f16,
// channels-first and channels-last, small and odd image sizes, both planners, algorithms chosen
// offline or left to the runtime, with and without metadata. Generated at fuzz time, never
// committed (scripts/fuzz.sh).
//
//   jet_fuzz_seeds OUT_DIR     writes OUT_DIR/seed-<name>.jet, prints one line per file
#include <cstdio>
#include <string>
#include <vector>

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
  return failures == 0 ? 0 : 1;
}
