// jet-make-model: writes a zoo model (converter/zoo.h, random weights) as a .jet file, for tests,
// fuzzer seeds and benchmarks without ONNX files. Development tool; not installed.
#include <cstdio>
#include <string>

#include "cli_common.h"
#include "ir.h"
#include "passes.h"
#include "write_model.h"
#include "zoo.h"

namespace {

const char kUsage[] =
    "usage: jet-make-model tiny_cnn|resnet18|resnet50|mobilenet_v2|efficientnet_b0 out.jet [--f16] [--channels-last]\n"
    "                      [--batch N] [--image N] [--seed N]\n"
    "  --f16            convert activations and weights to f16 (inputs/outputs stay f32)\n"
    "  --channels-last  channels-last activations\n"
    "  --batch, --image batch size and input height/width (defaults: tiny_cnn 2 x 17 x 19,\n"
    "                   others 1 x 224 x 224)\n"
    "  --seed           weight seed (default 1)\n";

int usage_error(const std::string& message) { return jet::tools::usage_error("jet-make-model", kUsage, message); }

}  // namespace

static int tool_main(int argc, char** argv) {
  std::string model, out;
  bool f16 = false, channels_last = false;
  int64_t batch = 0, image = 0;
  uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (jet::tools::print_usage_if_help(arg, kUsage)) return 0;
    if (arg == "--f16") {
      f16 = true;
    } else if (arg == "--channels-last") {
      channels_last = true;
    } else if (arg == "--batch") {
      if (!has_value || !jet::tools::parse_int64(argv[++i], 1, 65536, &batch)) {
        return usage_error("--batch takes an integer in [1, 65536]");
      }
    } else if (arg == "--image") {
      if (!has_value || !jet::tools::parse_int64(argv[++i], 1, 65536, &image)) {
        return usage_error("--image takes an integer in [1, 65536]");
      }
    } else if (arg == "--seed") {
      if (!has_value || !jet::tools::parse_uint64(argv[++i], &seed)) {
        return usage_error("--seed takes a non-negative integer");
      }
    } else if (!arg.empty() && arg[0] == '-') {
      return usage_error("unknown option '" + arg + "'");
    } else if (model.empty()) {
      model = arg;
    } else if (out.empty()) {
      out = arg;
    } else {
      return usage_error("unexpected argument '" + arg + "'");
    }
  }
  if (model.empty() || out.empty()) return usage_error("give a model name and an output file");

  jet::ZooOptions opt = model == "tiny_cnn" ? jet::tiny_cnn_options(seed) : jet::ZooOptions{};
  opt.seed = seed;
  if (batch > 0) opt.batch = batch;
  if (image > 0) {
    opt.image = image;
    opt.width = image;
  }
  jet::ir::Graph graph;
  jet::Status st;
  if (model == "tiny_cnn") {
    st = jet::tiny_cnn(opt, &graph);
  } else if (model == "resnet18") {
    st = jet::resnet18(opt, &graph);
  } else if (model == "resnet50") {
    st = jet::resnet50(opt, &graph);
  } else if (model == "mobilenet_v2") {
    st = jet::mobilenet_v2(opt, &graph);
  } else if (model == "efficientnet_b0") {
    st = jet::efficientnet_b0(opt, &graph);
  } else {
    return usage_error("unknown model '" + model + "' (tiny_cnn, resnet18, resnet50, mobilenet_v2, efficientnet_b0)");
  }
  if (st.ok() && f16) st = jet::convert_precision(&graph, jet::DType::F16);
  if (st.ok() && channels_last) st = jet::set_channels_last(&graph);
  jet::WriteOptions write;
  write.producer_version = "jet-make-model";
  write.source_name = "zoo:" + model;
  write.properties.push_back({"zoo.model", model});
  write.properties.push_back({"zoo.seed", std::to_string(seed)});
  if (st.ok()) st = jet::write_model_file(graph, write, out);
  if (!st.ok()) {
    std::fprintf(stderr, "jet-make-model: error: %s\n", st.to_string().c_str());
    return 1;
  }
  std::printf("wrote %s: %s%s%s, batch %lld, %lld x %lld, seed %llu\n", out.c_str(), model.c_str(),
              f16 ? " f16" : "", channels_last ? " channels-last" : "", static_cast<long long>(opt.batch),
              static_cast<long long>(opt.image), static_cast<long long>(opt.width > 0 ? opt.width : opt.image),
              static_cast<unsigned long long>(seed));
  return 0;
}

// No exception escapes main (cli_common.h run_tool).
int main(int argc, char** argv) { return jet::tools::run_tool("jet-make-model", tool_main, argc, argv); }
