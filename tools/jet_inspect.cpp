// jet-inspect: what a .jet model holds (loaded with the CPU backend, so no GPU is needed):
// file, schema and producer, inputs and outputs, ops by type, parameters, the memory plan and the
// metadata; --plan-svg draws the memory plan, --json prints the same facts as one JSON object.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "jet/file_io.h"
#include "image_input.h"
#include "jet/runtime.h"
#include "npy.h"

namespace {

using jet::Status;
using jet::StatusCode;
using namespace jet::tools;

const char kUsage[] =
    "usage: jet-inspect model.jet [--plan-svg plan.svg] [--ops] [--json]\n"
    "  --plan-svg  draw the memory plan: x = op step, y = arena offset, one box per tensor\n"
    "  --ops       list every op (type, inputs -> outputs, algorithm, workspace)\n"
    "  --json      print one JSON object instead of the text report\n";

struct Options {
  std::string model;
  std::string svg;
  bool ops = false;
  bool json = false;
};

// A non-constant tensor's region in the arena and its live interval in op steps.
struct LiveRegion {
  int tensor = -1;
  int first_step = 0, last_step = 0;  // inclusive
  int64_t offset = 0;
  size_t size = 0;
};

// Live intervals as the planner defines them: from the producing step (graph inputs: step 0) to
// the last step reading the tensor (graph outputs: the last step).
std::vector<LiveRegion> live_regions(const jet::Engine& engine) {
  const int steps = engine.num_ops();
  std::vector<int> first(static_cast<size_t>(engine.num_tensors()), -1), last(first.size(), -1);
  for (int s = 0; s < steps; ++s) {
    const jet::OpInfo& op = engine.op(s);
    for (int t : op.outputs) {
      if (t < 0 || t >= engine.num_tensors()) continue;
      if (first[t] < 0) first[t] = s;
      last[t] = std::max(last[t], s);
    }
    for (int t : op.inputs) {
      if (t < 0 || t >= engine.num_tensors()) continue;
      if (first[t] < 0) first[t] = s;
      last[t] = std::max(last[t], s);
    }
  }
  std::vector<LiveRegion> regions;
  for (int t = 0; t < engine.num_tensors(); ++t) {
    const jet::TensorInfo& info = engine.tensor(t);
    if (info.role == jet::TensorRole::CONSTANT || info.arena_offset < 0) continue;
    LiveRegion r;
    r.tensor = t;
    r.offset = info.arena_offset;
    r.size = info.arena_size > 0 ? info.arena_size : info.bytes;
    r.first_step = info.role == jet::TensorRole::INPUT ? 0 : std::max(first[t], 0);
    r.last_step = info.role == jet::TensorRole::OUTPUT ? std::max(steps - 1, 0) : std::max(last[t], r.first_step);
    regions.push_back(r);
  }
  return regions;
}

std::string xml_escape(const std::string& text) {
  std::string s;
  for (char c : text) {
    if (c == '&') {
      s += "&amp;";
    } else if (c == '<') {
      s += "&lt;";
    } else if (c == '>') {
      s += "&gt;";
    } else if (c == '"') {
      s += "&quot;";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      s += ' ';  // control characters are not allowed in XML 1.0
    } else {
      s += c;
    }
  }
  return s;
}

// A 1-2-5 tick spacing giving at most `max_ticks` ticks over [0, range].
double tick_step(double range, int max_ticks) {
  double step = 1;
  while (range / step > max_ticks) {
    if (range / (step * 2) <= max_ticks) return step * 2;
    if (range / (step * 5) <= max_ticks) return step * 5;
    step *= 10;
  }
  return step;
}

std::string svg_num(double v) { return fixed(v, 1); }

std::string plan_svg(const jet::Engine& engine, const std::string& title) {
  const std::vector<LiveRegion> regions = live_regions(engine);
  const int steps = std::max(engine.num_ops(), 1);
  size_t arena = engine.summary().arena_bytes;
  for (const LiveRegion& r : regions) arena = std::max(arena, static_cast<size_t>(r.offset) + r.size);
  if (arena == 0) arena = 1;

  const double left = 90, top = 40, plot_w = 960, plot_h = 600, bottom = 50, right = 20;
  const double width = left + plot_w + right, height = top + plot_h + bottom;
  const double step_w = plot_w / steps;
  const double byte_h = plot_h / static_cast<double>(arena);

  std::string s;
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + svg_num(width) + "\" height=\"" + svg_num(height) +
       "\" viewBox=\"0 0 " + svg_num(width) + " " + svg_num(height) + "\" font-family=\"sans-serif\">\n";
  s += "<text x=\"" + svg_num(left) + "\" y=\"20\" font-size=\"14\">" + xml_escape(title) + ": arena " +
       std::to_string(engine.summary().arena_bytes) + " bytes, lower bound " +
       std::to_string(engine.summary().lower_bound_bytes) + " bytes</text>\n";
  s += "<rect class=\"frame\" x=\"" + svg_num(left) + "\" y=\"" + svg_num(top) + "\" width=\"" + svg_num(plot_w) +
       "\" height=\"" + svg_num(plot_h) + "\" fill=\"#fafafa\" stroke=\"#444\"/>\n";

  // Axes: x = op step, y = arena offset (0 at the top, like an address map).
  const double xstep = tick_step(steps, 20);
  for (double t = 0; t <= steps; t += xstep) {
    const double x = left + t * step_w;
    s += "<line x1=\"" + svg_num(x) + "\" y1=\"" + svg_num(top + plot_h) + "\" x2=\"" + svg_num(x) + "\" y2=\"" +
         svg_num(top + plot_h + 5) + "\" stroke=\"#444\"/>";
    s += "<text x=\"" + svg_num(x) + "\" y=\"" + svg_num(top + plot_h + 18) +
         "\" font-size=\"10\" text-anchor=\"middle\">" + std::to_string(static_cast<long long>(t)) + "</text>\n";
  }
  s += "<text x=\"" + svg_num(left + plot_w / 2) + "\" y=\"" + svg_num(height - 10) +
       "\" font-size=\"12\" text-anchor=\"middle\">op step</text>\n";
  // Byte ticks on whole KiB / MiB where the arena is that large, so the labels read well.
  const double unit = arena < 10 * 1024 ? 1.0 : arena < 10 * 1024 * 1024 ? 1024.0 : 1024.0 * 1024.0;
  const double ystep = tick_step(static_cast<double>(arena) / unit, 10) * unit;
  for (double b = 0; b <= static_cast<double>(arena); b += ystep) {
    const double y = top + b * byte_h;
    s += "<line x1=\"" + svg_num(left - 5) + "\" y1=\"" + svg_num(y) + "\" x2=\"" + svg_num(left) + "\" y2=\"" +
         svg_num(y) + "\" stroke=\"#444\"/>";
    s += "<text x=\"" + svg_num(left - 8) + "\" y=\"" + svg_num(y + 3) + "\" font-size=\"10\" text-anchor=\"end\">" +
         format_bytes(static_cast<size_t>(b)) + "</text>\n";
  }
  s += "<text x=\"15\" y=\"" + svg_num(top + plot_h / 2) + "\" font-size=\"12\" transform=\"rotate(-90 15 " +
       svg_num(top + plot_h / 2) + ")\" text-anchor=\"middle\">arena offset</text>\n";

  for (const LiveRegion& r : regions) {
    const jet::TensorInfo& info = engine.tensor(r.tensor);
    const double x = left + r.first_step * step_w;
    const double w = (r.last_step - r.first_step + 1) * step_w;
    const double y = top + static_cast<double>(r.offset) * byte_h;
    const double h = std::max(static_cast<double>(r.size) * byte_h, 1.0);
    const char* fill = info.role == jet::TensorRole::INPUT    ? "#7fb3d5"
                       : info.role == jet::TensorRole::OUTPUT ? "#f5b041"
                       : (r.tensor % 2 == 0)                  ? "#82e0aa"
                                                              : "#c39bd3";
    s += "<g><title>" + xml_escape(info.name) + " (" + tensor_role_name(info.role) + "): " +
         std::to_string(info.bytes) + " bytes, region " + std::to_string(r.size) + " bytes at offset " +
         std::to_string(r.offset) + ", steps " + std::to_string(r.first_step) + "-" + std::to_string(r.last_step) +
         "</title>";
    s += "<rect class=\"tensor\" x=\"" + svg_num(x) + "\" y=\"" + svg_num(y) + "\" width=\"" + svg_num(w) +
         "\" height=\"" + svg_num(h) + "\" fill=\"" + fill + "\" fill-opacity=\"0.8\" stroke=\"#333\" stroke-width=\"0.5\"/>";
    // A label where it fits: about 6 px per character at font size 10, 11 px of height.
    const size_t fit = static_cast<size_t>(std::max(0.0, (w - 4) / 6));
    if (h >= 11 && fit >= 3) {
      std::string label = info.name;
      if (label.size() > fit) label = label.substr(0, fit - 2) + "..";
      s += "<text x=\"" + svg_num(x + 2) + "\" y=\"" + svg_num(y + std::min(h, 22.0) / 2 + 4) +
           "\" font-size=\"10\">" + xml_escape(label) + "</text>";
    }
    s += "</g>\n";
  }
  s += "</svg>\n";
  return s;
}

int usage_error(const std::string& message) { return jet::tools::usage_error("jet-inspect", kUsage, message); }
int fail(const Status& st) { return jet::tools::fail("jet-inspect", st); }

std::string tensor_json(const jet::TensorInfo& info) {
  std::string dims = "[";
  for (size_t i = 0; i < info.dims.size(); ++i) dims += (i > 0 ? ", " : "") + std::to_string(info.dims[i]);
  dims += "]";
  return "{\"name\": " + json_string(info.name) + ", \"dtype\": " + json_string(jet::dtype_name(info.dtype)) +
         ", \"shape\": " + dims + ", \"bytes\": " + std::to_string(info.bytes) + "}";
}

int inspect(const Options& opt) {
  std::shared_ptr<jet::Engine> engine;
  Status st = load_engine(opt.model, jet::Backend::CPU, &engine, nullptr);
  if (!st.ok()) return fail(st);
  const jet::ModelSummary& sum = engine->summary();

  // Ops by type, in order of first appearance.
  std::vector<std::pair<std::string, int>> op_counts;
  for (int i = 0; i < engine->num_ops(); ++i) {
    const std::string& type = engine->op(i).type;
    bool found = false;
    for (auto& entry : op_counts) {
      if (entry.first == type) {
        ++entry.second;
        found = true;
      }
    }
    if (!found) op_counts.emplace_back(type, 1);
  }
  int activations = 0;
  for (int t = 0; t < engine->num_tensors(); ++t) {
    if (engine->tensor(t).role == jet::TensorRole::ACTIVATION) ++activations;
  }
  const double ratio = sum.lower_bound_bytes > 0
                           ? static_cast<double>(sum.arena_bytes) / static_cast<double>(sum.lower_bound_bytes)
                           : 1.0;

  if (!opt.svg.empty()) {
    const std::string svg = plan_svg(*engine, opt.model);
    st = write_file_bytes(opt.svg, svg.data(), svg.size());
    if (!st.ok()) return fail(st);
  }

  if (opt.json) {
    std::string s = "{\"file\": " + json_string(opt.model);
    s += ", \"file_bytes\": " + std::to_string(sum.file_bytes);
    s += ", \"schema_version\": " + json_string(std::to_string(sum.schema_major) + "." + std::to_string(sum.schema_minor));
    s += ", \"producer\": {\"name\": " + json_string(sum.producer) + ", \"version\": " +
         json_string(sum.producer_version) + ", \"source_name\": " + json_string(sum.source_name) +
         ", \"source_hash\": " + json_string(sum.source_hash) + "}";
    s += ", \"inputs\": [";
    for (int i = 0; i < engine->num_inputs(); ++i) s += (i > 0 ? ", " : "") + tensor_json(engine->tensor(engine->input(i)));
    s += "], \"outputs\": [";
    for (int i = 0; i < engine->num_outputs(); ++i) {
      s += (i > 0 ? ", " : "") + tensor_json(engine->tensor(engine->output(i)));
    }
    s += "], \"num_ops\": " + std::to_string(engine->num_ops());
    s += ", \"num_tensors\": " + std::to_string(engine->num_tensors());
    s += ", \"num_activations\": " + std::to_string(activations);
    s += ", \"arena_tensors\": " + std::to_string(live_regions(*engine).size());
    s += ", \"ops_by_type\": {";
    for (size_t i = 0; i < op_counts.size(); ++i) {
      s += (i > 0 ? ", " : "") + json_string(op_counts[i].first) + ": " + std::to_string(op_counts[i].second);
    }
    s += "}, \"parameter_count\": " + std::to_string(sum.parameter_count);
    s += ", \"weight_bytes\": " + std::to_string(sum.weight_bytes);
    s += ", \"arena_bytes\": " + std::to_string(sum.arena_bytes);
    s += ", \"lower_bound_bytes\": " + std::to_string(sum.lower_bound_bytes);
    s += ", \"arena_ratio\": " + json_number(ratio);
    s += ", \"planner\": " + json_string(sum.planner);
    s += ", \"workspace_bytes\": " + std::to_string(sum.workspace_bytes);
    s += ", \"context_memory_bytes\": " + std::to_string(engine->context_memory_size());
    s += ", \"tuned_on\": " + (sum.has_tuned_on ? "{\"name\": " + json_string(sum.tuned_on.name) + ", \"cc_major\": " +
                                                    std::to_string(sum.tuned_on.cc_major) + ", \"cc_minor\": " +
                                                    std::to_string(sum.tuned_on.cc_minor) + "}"
                                              : std::string("null"));
    s += ", \"labels\": " + std::to_string(sum.labels.size());
    s += ", \"preprocessing\": [";
    for (size_t i = 0; i < sum.preprocessing.size(); ++i) {
      const jet::ImagePreprocessing& p = sum.preprocessing[i];
      s += (i > 0 ? ", {" : "{") + std::string("\"input\": ") + json_string(engine->tensor(p.input).name) +
           ", \"text\": " + json_string(preprocessing_text(p)) + "}";
    }
    s += "]";
    s += ", \"properties\": {";
    for (size_t i = 0; i < sum.properties.size(); ++i) {
      s += (i > 0 ? ", " : "") + json_string(sum.properties[i].first) + ": " + json_string(sum.properties[i].second);
    }
    s += "}";
    if (opt.ops) {
      s += ", \"ops\": [";
      for (int i = 0; i < engine->num_ops(); ++i) {
        const jet::OpInfo& op = engine->op(i);
        s += std::string(i > 0 ? ", " : "") + "{\"name\": " + json_string(op.name) + ", \"type\": " +
             json_string(op.type) + ", \"algo\": " + json_string(op.algo) + ", \"workspace_bytes\": " +
             std::to_string(op.workspace_bytes) + ", \"flops\": " + json_number(op.flops) + "}";
      }
      s += "]";
    }
    if (!opt.svg.empty()) s += ", \"plan_svg\": " + json_string(opt.svg);
    s += "}";
    std::printf("%s\n", s.c_str());
    return 0;
  }

  std::printf("file:        %s (%s, %zu bytes)\n", printable(opt.model).c_str(), format_bytes(sum.file_bytes).c_str(),
              sum.file_bytes);
  std::printf("schema:      %u.%u\n", sum.schema_major, sum.schema_minor);
  std::printf("producer:    %s %s\n", printable(sum.producer).c_str(), printable(sum.producer_version).c_str());
  if (!sum.source_name.empty() || !sum.source_hash.empty()) {
    std::printf("source:      %s%s%s\n", printable(sum.source_name).c_str(), sum.source_hash.empty() ? "" : " ",
                printable(sum.source_hash).c_str());
  }
  for (int i = 0; i < engine->num_inputs(); ++i) {
    const jet::TensorInfo& info = engine->tensor(engine->input(i));
    std::printf("input:       %s %s %s\n", printable(info.name).c_str(), jet::dtype_name(info.dtype), format_dims(info.dims).c_str());
  }
  for (int i = 0; i < engine->num_outputs(); ++i) {
    const jet::TensorInfo& info = engine->tensor(engine->output(i));
    std::printf("output:      %s %s %s\n", printable(info.name).c_str(), jet::dtype_name(info.dtype), format_dims(info.dims).c_str());
  }
  std::printf("ops:         %d (", engine->num_ops());
  for (size_t i = 0; i < op_counts.size(); ++i) {
    std::printf("%s%s %d", i > 0 ? ", " : "", printable(op_counts[i].first).c_str(), op_counts[i].second);
  }
  std::printf(")\n");
  std::printf("tensors:     %d (%d activations)\n", engine->num_tensors(), activations);
  std::printf("parameters:  %lld (%s, %zu bytes)\n", static_cast<long long>(sum.parameter_count),
              format_bytes(sum.weight_bytes).c_str(), sum.weight_bytes);
  std::printf("arena:       %zu bytes (%s), lower bound %zu bytes, ratio %.3f, planner %s\n", sum.arena_bytes,
              format_bytes(sum.arena_bytes).c_str(), sum.lower_bound_bytes, ratio, sum.planner.c_str());
  std::printf("workspace:   %zu bytes (cpu backend)\n", sum.workspace_bytes);
  std::printf("context:     %zu bytes (arena + workspace, aligned)\n", engine->context_memory_size());
  if (sum.has_tuned_on) {
    std::printf("tuned on:    %s, compute capability %d.%d (its stored algorithms and tactics are used only there)\n",
                sum.tuned_on.name.c_str(), sum.tuned_on.cc_major, sum.tuned_on.cc_minor);
  }
  std::printf("labels:      %zu\n", sum.labels.size());
  for (const jet::ImagePreprocessing& p : sum.preprocessing) {  // jet-convert --preprocess
    std::printf("preprocess:  '%s' %s\n", printable(engine->tensor(p.input).name).c_str(), preprocessing_text(p).c_str());
  }
  for (const auto& kv : sum.properties) std::printf("property:    %s = %s\n", printable(kv.first).c_str(), printable(kv.second).c_str());
  if (opt.ops) {
    for (int i = 0; i < engine->num_ops(); ++i) {
      const jet::OpInfo& op = engine->op(i);
      std::string ins, outs;
      for (size_t k = 0; k < op.inputs.size(); ++k) ins += (k > 0 ? ", " : "") + engine->tensor(op.inputs[k]).name;
      for (size_t k = 0; k < op.outputs.size(); ++k) outs += (k > 0 ? ", " : "") + engine->tensor(op.outputs[k]).name;
      std::printf("op %4d:     %-10s %s: (%s) -> (%s)%s%s\n", i, op.type.c_str(), printable(op.name).c_str(), printable(ins).c_str(),
                  printable(outs).c_str(), op.algo.empty() ? "" : (" algo " + op.algo).c_str(),
                  op.workspace_bytes > 0 ? (" workspace " + std::to_string(op.workspace_bytes)).c_str() : "");
    }
  }
  if (!opt.svg.empty()) std::printf("plan svg:    %s\n", printable(opt.svg).c_str());
  return 0;
}

}  // namespace

static int tool_main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (print_usage_if_help(arg, kUsage)) return 0;
    if (arg == "--plan-svg") {
      if (i + 1 >= argc) return usage_error("--plan-svg takes an output file");
      opt.svg = argv[++i];
    } else if (arg == "--ops") {
      opt.ops = true;
    } else if (arg == "--json") {
      opt.json = true;
    } else {
      std::string error;
      if (!take_model_argument(arg, &opt.model, &error)) return usage_error(error);
    }
  }
  if (opt.model.empty()) return usage_error("no model file given");
  // The SVG replaces its file by rename: over the model it would destroy it.
  if (!opt.svg.empty() && jet::same_file(opt.svg, opt.model)) {
    return usage_error("--plan-svg '" + opt.svg + "' is the model file itself");
  }
  return inspect(opt);
}

// No exception escapes main (cli_common.h run_tool).
int main(int argc, char** argv) { return jet::tools::run_tool("jet-inspect", tool_main, argc, argv); }
