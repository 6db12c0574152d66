// jet-tune: measures every convolution's algorithms and tactics on the target device (the
// runtime's load-time tuning, LoadOptions::tune) and writes a copy of the model that stores the
// fastest choice per layer with the device it was measured on (schema 1.2 ConvParams.tactic,
// Model.tuned_on). A runtime on the same device (name and compute capability) then uses those
// choices without measuring; elsewhere it uses its heuristic and says so.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "jet/runtime.h"
#include "npy.h"  // read_file_bytes, write_file_bytes

namespace {

using jet::Status;
using jet::StatusCode;
using namespace jet::tools;

const char kUsage[] =
    "usage: jet-tune model.jet -o tuned.jet [--device cpu|cuda] [--workspace-limit BYTES] [--json]\n"
    "  -o               the tuned model to write (may be model.jet itself: it is replaced)\n"
    "  --device         where to measure, the device the tuned model is meant for\n"
    "                   (default: cuda when built with CUDA, else cpu)\n"
    "  --workspace-limit  no choice needs more workspace than this (default: each layer's\n"
    "                   stored policy)\n"
    "  --json           print the table as one JSON object\n";

struct Options {
  std::string model, output;
  jet::Backend backend = jet::built_with_cuda() ? jet::Backend::CUDA : jet::Backend::CPU;
  uint64_t workspace_limit = SIZE_MAX;
  bool json = false;
};

int usage_error(const std::string& message) { return jet::tools::usage_error("jet-tune", kUsage, message); }
int fail(const Status& st) { return jet::tools::fail("jet-tune", st); }

std::string ms_text(float ms) { return ms < 0 ? std::string("-") : fixed(ms, 4); }

int tune(const Options& opt) {
  std::vector<uint8_t> bytes;
  Status st = read_file_bytes(opt.model, &bytes);
  if (!st.ok()) return fail(st);
  if (opt.backend == jet::Backend::CUDA) {
    st = cuda_device_available();  // says so and names --device cpu
    if (!st.ok()) return fail(st);
  }
  jet::LoadOptions load;
  load.backend = opt.backend;
  load.tune = true;
  load.tune_workspace_limit = static_cast<size_t>(opt.workspace_limit);
  std::shared_ptr<jet::Engine> engine;
  st = jet::Engine::load(bytes.data(), bytes.size(), load, &engine);
  if (!st.ok()) return fail(Status(st.code(), "model '" + opt.model + "': " + st.message()));

  std::vector<uint8_t> tuned;
  st = jet::write_tuned_model(*engine, bytes.data(), bytes.size(), &tuned);
  if (!st.ok()) return fail(st);
  // The written file must load here with its choices used, before it replaces anything.
  jet::LoadOptions check;
  check.backend = opt.backend;
  std::shared_ptr<jet::Engine> reloaded;
  st = jet::Engine::load(tuned.data(), tuned.size(), check, &reloaded);
  if (!st.ok()) return fail(Status(st.code(), "the tuned model does not load back: " + st.message()));
  if (!reloaded->summary().stored_choices_used) {
    return fail(Status(StatusCode::INTERNAL_ERROR, "the tuned model's choices are not used on the device it was tuned on"));
  }
  st = write_file_bytes(opt.output, tuned.data(), tuned.size());
  if (!st.ok()) return fail(st);

  const jet::ModelSummary& sum = engine->summary();
  const jet::DeviceIdentity dev = engine->device_identity();
  double tuned_total = 0, heuristic_total = 0;
  int convs = 0;
  for (int i = 0; i < engine->num_ops(); ++i) {
    const jet::OpInfo& op = engine->op(i);
    if (op.tuned_ms < 0) continue;
    ++convs;
    tuned_total += op.tuned_ms;
    heuristic_total += op.heuristic_ms >= 0 ? op.heuristic_ms : op.tuned_ms;
  }
  if (opt.json) {
    std::string s = "{\"model\": " + json_string(opt.model) + ", \"output\": " + json_string(opt.output);
    s += ", \"device\": {\"name\": " + json_string(dev.name) + ", \"cc_major\": " + std::to_string(dev.cc_major) +
         ", \"cc_minor\": " + std::to_string(dev.cc_minor) + "}";
    s += ", \"tuning_ms\": " + json_number(sum.tuning_ms);
    s += ", \"convolutions\": " + std::to_string(convs);
    s += ", \"tuned_ms_sum\": " + json_number(tuned_total) + ", \"heuristic_ms_sum\": " + json_number(heuristic_total);
    s += ", \"convs_changed\": " + std::to_string(sum.tuned_convs_changed) + ", \"network_ms_tuned\": " +
         (sum.tuned_network_ms >= 0 ? json_number(sum.tuned_network_ms) : std::string("null")) +
         ", \"network_ms_untuned\": " +
         (sum.untuned_network_ms >= 0 ? json_number(sum.untuned_network_ms) : std::string("null"));
    s += ", \"layers\": [";
    bool first = true;
    for (int i = 0; i < engine->num_ops(); ++i) {
      const jet::OpInfo& op = engine->op(i);
      if (op.type != "Conv") continue;
      s += std::string(first ? "" : ", ") + "{\"op\": " + std::to_string(i) + ", \"name\": " + json_string(op.name) +
           ", \"algo\": " + json_string(op.algo) + ", \"tactic\": " + std::to_string(op.tactic) +
           ", \"workspace_bytes\": " + std::to_string(op.workspace_bytes) + ", \"ms\": " +
           (op.tuned_ms < 0 ? std::string("null") : json_number(op.tuned_ms)) + ", \"heuristic_ms\": " +
           (op.heuristic_ms < 0 ? std::string("null") : json_number(op.heuristic_ms)) + "}";
      first = false;
    }
    s += "], \"notes\": [";
    for (size_t i = 0; i < sum.notes.size(); ++i) s += (i ? ", " : "") + json_string(sum.notes[i]);
    s += "]}";
    std::printf("%s\n", s.c_str());
    return 0;
  }
  if (opt.backend == jet::Backend::CPU) {
    std::printf("jet-tune: %s on cpu\n", opt.model.c_str());
  } else {
    std::printf("jet-tune: %s on cuda (%s, compute capability %d.%d)\n", opt.model.c_str(), dev.name.c_str(),
                dev.cc_major, dev.cc_minor);
  }
  std::printf("  %4s  %-32s %-28s %12s %12s %8s\n", "op", "layer", "algo#tactic", "ms", "heuristic", "gain");
  for (int i = 0; i < engine->num_ops(); ++i) {
    const jet::OpInfo& op = engine->op(i);
    if (op.type != "Conv") continue;
    const std::string choice = op.algo + "#" + std::to_string(op.tactic);
    const std::string gain =
        op.tuned_ms > 0 && op.heuristic_ms >= 0 ? fixed(op.heuristic_ms / op.tuned_ms, 2) + "x" : std::string("-");
    std::printf("  %4d  %-32s %-28s %12s %12s %8s\n", i, op.name.c_str(), choice.c_str(), ms_text(op.tuned_ms).c_str(),
                ms_text(op.heuristic_ms).c_str(), gain.c_str());
  }
  std::printf("%d convolutions: %.4f ms tuned, %.4f ms with the heuristic's choices (sum of their shares of a "
              "network run)\n", convs, tuned_total, heuristic_total);
  if (sum.untuned_network_ms >= 0) {
    std::printf("whole network: %.4f ms tuned, %.4f ms untuned; %d convolutions changed%s\n", sum.tuned_network_ms,
                sum.untuned_network_ms, sum.tuned_convs_changed,
                sum.tuned_convs_changed == 0 ? " (the untuned choices measured as fast: kept)" : "");
  }
  for (const std::string& note : sum.notes) std::printf("note: %s\n", note.c_str());
  std::printf("tuning time: %.1f ms\n", sum.tuning_ms);
  std::printf("wrote %s (tuned on '%s' %d.%d)\n", opt.output.c_str(), dev.name.c_str(), dev.cc_major, dev.cc_minor);
  return 0;
}

}  // namespace

static int tool_main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (print_usage_if_help(arg, kUsage)) return 0;
    if (arg == "-o" || arg == "--output") {
      if (!has_value) return usage_error(arg + " takes a file name");
      opt.output = argv[++i];
    } else if (arg == "--device") {
      if (!has_value || !parse_backend(argv[++i], &opt.backend)) return usage_error("--device takes cpu or cuda");
    } else if (arg == "--workspace-limit") {
      if (!has_value || !parse_uint64(argv[++i], &opt.workspace_limit)) {
        return usage_error("--workspace-limit takes a byte count");
      }
    } else if (arg == "--json") {
      opt.json = true;
    } else {
      std::string error;
      if (!take_model_argument(arg, &opt.model, &error)) return usage_error(error);
    }
  }
  if (opt.model.empty()) return usage_error("no model file given");
  if (opt.output.empty()) return usage_error("no output file given (-o tuned.jet)");
  return tune(opt);
}

// No exception escapes main (cli_common.h run_tool).
int main(int argc, char** argv) { return jet::tools::run_tool("jet-tune", tool_main, argc, argv); }
