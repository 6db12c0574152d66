// jet-convert: ONNX model -> .jet model file.
//
//   jet-convert model.onnx -o model.jet [--precision fp32|fp16] [--io-precision fp32|fp16]
//               [--input-shape NAME=1x3x224x224 ...]
//               [--layout auto|nchw|nhwc] [--workspace-limit BYTES] [--labels FILE] [--no-fuse]
//               [--disable-pass NAME] [--verbose]
//
// Import (onnx_import.h), optimization (optimize.h: folding, fusion, dead nodes), passes
// (passes.h: precision, layout), memory plan and writer
// (write_model.h); then a short report. Exit status: 0 written, 1 the model could not be
// converted (unsupported ops are all listed; no output file is created), 2 bad command line.
// The output is written through jet::write_file_atomically (a temporary file in the same
// directory, renamed into place), so a failed run never leaves a partial model behind and never
// destroys an existing one; writing over the input model is refused.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cli_common.h"
#include "ir.h"
#include "jet/file_io.h"
#include "jet/runtime.h"
#include "onnx_import.h"
#include "optimize.h"
#include "passes.h"
#include "plan_memory.h"
#include "write_model.h"

namespace {

const char kUsage[] =
    "usage: jet-convert MODEL.onnx -o MODEL.jet [options]\n"
    "  -o, --output FILE          the .jet file to write (required)\n"
    "  --precision fp32|fp16      storage precision of weights and activations (default fp32)\n"
    "  --io-precision fp32|fp16   dtype of the graph's inputs and outputs (default fp32; fp16\n"
    "                             needs --precision fp16 and saves the boundary conversions)\n"
    "  --input-shape NAME=DIMS    dims for an input with dynamic dims, e.g. images=1x3x224x224\n"
    "                             (repeat for several inputs)\n"
    "  --layout auto|nchw|nhwc    activation layout; auto = nhwc for fp16, nchw for fp32\n"
    "  --workspace-limit BYTES    bound the convolution workspace (0 = algorithms without one)\n"
    "  --labels FILE              class names, one per line, stored as metadata\n"
    "  --no-fuse                  no batchnorm folding and no epilogue fusion (debugging)\n"
    "  --disable-pass NAME        turn one optimization pass off: fold_constants, fold_reshapes,\n"
    "                             fold_batchnorm, fuse_epilogues, eliminate_dead_nodes\n"
    "  --verbose                  report what every ONNX node became\n";

int usage_error(const std::string& msg) { return jet::tools::usage_error("jet-convert", kUsage, msg); }

int fail(const std::string& msg) {
  std::fprintf(stderr, "jet-convert: %s\n", jet::tools::printable(msg, true).c_str());
  return 1;
}

// A decimal integer in [min, max], the whole string.
bool parse_int(const std::string& s, int64_t min, int64_t max, int64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v < min || v > max) return false;
  *out = v;
  return true;
}

// NAME=1x3x224x224 (the name may itself contain '='; the last one separates).
bool parse_input_shape(const std::string& arg, std::string* name, std::vector<int64_t>* dims) {
  const size_t eq = arg.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size()) return false;
  *name = arg.substr(0, eq);
  dims->clear();
  size_t start = eq + 1;
  while (true) {
    const size_t x = arg.find('x', start);
    int64_t d = 0;
    if (!parse_int(arg.substr(start, x == std::string::npos ? std::string::npos : x - start), 1, int64_t(1) << 40, &d)) {
      return false;
    }
    dims->push_back(d);
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return true;
}

// Size limits of what jet-convert reads: protobuf refuses messages of 2 GiB and more (weights
// beyond that live in external data files, read by the importer); a labels file is text.
constexpr size_t kMaxModelBytes = (size_t(2) << 30) - 1;
constexpr size_t kMaxLabelsBytes = size_t(64) << 20;

std::string bytes_text(size_t n) {
  char buf[64];
  if (n >= (size_t(1) << 20)) {
    std::snprintf(buf, sizeof buf, "%.2f MiB (%zu bytes)", static_cast<double>(n) / (1 << 20), n);
  } else if (n >= 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB (%zu bytes)", static_cast<double>(n) / 1024, n);
  } else {
    std::snprintf(buf, sizeof buf, "%zu bytes", n);
  }
  return buf;
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string dir_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

}  // namespace

static int tool_main(int argc, char** argv) {
  std::string model_path, out_path, precision = "fp32", io_precision = "fp32", layout = "auto", labels_path;
  bool verbose = false, has_workspace_limit = false;
  jet::OptimizeOptions optimize_options;
  int64_t workspace_limit = 0;
  jet::ImportOptions import_options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (jet::tools::print_usage_if_help(arg, kUsage)) return 0;
    if (arg == "-o" || arg == "--output") {
      if (!has_value) return usage_error(arg + " needs a file name");
      out_path = argv[++i];
    } else if (arg == "--io-precision") {
      if (!has_value) return usage_error("--io-precision needs fp32 or fp16");
      io_precision = argv[++i];
      if (io_precision != "fp32" && io_precision != "fp16") return usage_error("--io-precision takes fp32 or fp16, not '" + io_precision + "'");
    } else if (arg == "--precision") {
      if (!has_value) return usage_error("--precision needs fp32 or fp16");
      precision = argv[++i];
      if (precision != "fp32" && precision != "fp16") return usage_error("--precision takes fp32 or fp16, not '" + precision + "'");
    } else if (arg == "--layout") {
      if (!has_value) return usage_error("--layout needs auto, nchw or nhwc");
      layout = argv[++i];
      if (layout != "auto" && layout != "nchw" && layout != "nhwc") return usage_error("--layout takes auto, nchw or nhwc, not '" + layout + "'");
    } else if (arg == "--input-shape") {
      std::string name;
      std::vector<int64_t> dims;
      if (!has_value || !parse_input_shape(argv[++i], &name, &dims)) {
        return usage_error("--input-shape takes NAME=DIMS with dims >= 1 separated by 'x', e.g. images=1x3x224x224");
      }
      if (import_options.input_shapes.count(name)) return usage_error("--input-shape gives '" + name + "' twice");
      import_options.input_shapes[name] = dims;
    } else if (arg == "--workspace-limit") {
      if (!has_value || !parse_int(argv[++i], 0, INT64_MAX, &workspace_limit)) {
        return usage_error("--workspace-limit takes a byte count");
      }
      has_workspace_limit = true;
    } else if (arg == "--labels") {
      if (!has_value) return usage_error("--labels needs a file name");
      labels_path = argv[++i];
    } else if (arg == "--no-fuse") {
      optimize_options.disable("fuse");
    } else if (arg == "--disable-pass") {
      if (!has_value) return usage_error("--disable-pass needs a pass name");
      const std::string pass = argv[++i];
      if (pass == "fuse" || !optimize_options.disable(pass)) return usage_error("--disable-pass: unknown pass '" + pass + "'");
    } else if (arg == "--verbose" || arg == "-v") {
      verbose = true;
    } else if (!arg.empty() && arg[0] == '-') {
      return usage_error("unknown option '" + arg + "'");
    } else if (model_path.empty()) {
      model_path = arg;
    } else {
      return usage_error("more than one model given ('" + model_path + "' and '" + arg + "')");
    }
  }
  if (model_path.empty()) return usage_error("no ONNX model given");
  if (io_precision == "fp16" && precision != "fp16") return usage_error("--io-precision fp16 needs --precision fp16");
  if (out_path.empty()) return usage_error("no output file given (-o MODEL.jet)");
  import_options.verbose = verbose;

  // The output must not replace an input: the rename would destroy it.
  if (jet::same_file(out_path, model_path)) return usage_error("the output '" + out_path + "' is the input model");
  if (!labels_path.empty() && jet::same_file(out_path, labels_path)) {
    return usage_error("the output '" + out_path + "' is the labels file");
  }

  std::vector<std::string> labels;
  if (!labels_path.empty()) {
    std::vector<uint8_t> text;
    jet::Status read = jet::read_regular_file(labels_path, kMaxLabelsBytes, "a labels file", &text);
    if (!read.ok()) return fail("labels: " + read.message());
    std::string line;
    for (size_t i = 0; i <= text.size(); ++i) {
      if (i == text.size() || text[i] == '\n') {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (i < text.size() || !line.empty()) labels.push_back(line);
        line.clear();
      } else {
        line += text[i];
      }
    }
  }

  // Import.
  std::vector<uint8_t> model_bytes;
  {
    jet::Status read = jet::read_regular_file(model_path, kMaxModelBytes, "an ONNX model (protobuf's limit)", &model_bytes);
    if (!read.ok()) return fail(read.message());
  }
  import_options.external_data_dir = dir_name(model_path);
  jet::ir::Graph g;
  jet::ImportReport report;
  jet::Status st = jet::import_onnx_bytes(model_bytes.data(), model_bytes.size(), import_options, &g, &report);
  if (!st.ok()) {
    for (const std::string& n : report.notes) std::fprintf(stderr, "  note: %s\n", jet::tools::printable(n).c_str());
    return fail(model_path + ": " + st.to_string() + "\nno output file was written");
  }

  // Optimization, then precision and layout.
  jet::OptimizeReport optimize_report;
  st = jet::optimize_graph(&g, optimize_options, &optimize_report);
  if (!st.ok()) return fail("optimization: " + st.to_string() + "\nno output file was written");
  std::vector<std::string> pass_notes = optimize_report.notes;
  if (precision == "fp16") {
    st = jet::convert_precision(&g, jet::DType::F16, io_precision == "fp16");
    if (!st.ok()) return fail("precision conversion: " + st.to_string());
    // What stayed fp32: the graph's interface (converted by TRANSFORMs at the boundary) and the
    // normalization parameters the kernels read as floats.
    int f32_params = 0;
    for (const jet::ir::Tensor& t : g.tensors) f32_params += t.kind == jet::ir::TensorKind::CONSTANT && t.dtype == jet::DType::F32;
    std::string kept = io_precision == "fp16" ? "" : "graph inputs and outputs (converted at the boundary)";
    if (f32_params) kept += (kept.empty() ? "" : ", ") + std::to_string(f32_params) + " BatchNorm/InstanceNorm parameter tensors";
    pass_notes.push_back("fp16 storage for weights and activations" + (io_precision == "fp16" ? std::string(", inputs and outputs too") : std::string()) +
                         "; kept fp32: " + (kept.empty() ? "nothing stored" : kept) +
                         "; softmax, normalization statistics and reductions accumulate in fp32");
  }
  const bool nhwc = layout == "nhwc" || (layout == "auto" && precision == "fp16");
  if (nhwc) {
    st = jet::set_channels_last(&g);
    if (!st.ok()) return fail("layout: " + st.to_string());
  }

  // Write.
  jet::WriteOptions wo;
  wo.producer_version = JET_CONVERT_VERSION;
  wo.source_name = base_name(model_path);
  {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx",
                  static_cast<unsigned long long>(jet::model_checksum(model_bytes.data(), model_bytes.size())));
    wo.source_hash = std::string("fnv64w:") + hex;
  }
  wo.labels = labels;
  if (has_workspace_limit) {
    wo.conv_preference = workspace_limit == 0 ? jet::ConvPreference::NO_WORKSPACE : jet::ConvPreference::SPECIFY_WORKSPACE_LIMIT;
    wo.workspace_limit = static_cast<size_t>(workspace_limit);
  }
  std::vector<uint8_t> file;
  jet::ir::MemoryPlan plan;
  st = jet::write_model(g, wo, &file, &plan);
  if (!st.ok()) return fail("writing the model: " + st.to_string() + "\nno output file was written");
  st = jet::write_file_atomically(out_path, file.data(), file.size());
  if (!st.ok()) return fail(st.message() + "\nno output file was written");

  // Report.
  std::map<std::string, int> op_counts;
  size_t param_bytes = 0;
  int constants = 0;
  for (const jet::ir::Node& n : g.nodes) ++op_counts[jet::ir::op_type_name(n.op)];
  for (const jet::ir::Tensor& t : g.tensors) {
    if (t.kind != jet::ir::TensorKind::CONSTANT) continue;
    param_bytes += t.bytes();
    ++constants;
  }
  std::string ops;
  for (const auto& kv : op_counts) ops += (ops.empty() ? "" : ", ") + kv.first + " " + std::to_string(kv.second);
  std::printf("jet-convert: %s -> %s\n", jet::tools::printable(model_path).c_str(), jet::tools::printable(out_path).c_str());
  std::printf("  ONNX nodes in:  %lld\n", static_cast<long long>(report.onnx_nodes));
  std::printf("  IR ops:         %d imported, %d after optimization\n", optimize_report.nodes_in, optimize_report.nodes_out);
  std::printf("  IR ops out:     %zu (%s)\n", g.nodes.size(), ops.c_str());
  for (const jet::ir::Tensor& t : g.tensors) {
    if (t.kind == jet::ir::TensorKind::INPUT || t.kind == jet::ir::TensorKind::OUTPUT) {
      std::printf("  %s        '%s' %s %s\n", t.kind == jet::ir::TensorKind::INPUT ? "input: " : "output:",
                  jet::tools::printable(t.name).c_str(), jet::dtype_name(t.dtype), dims_text(t.dims).c_str());
    }
  }
  for (const std::string& w : report.warnings) std::fprintf(stderr, "jet-convert: warning: %s\n", jet::tools::printable(w).c_str());
  for (const std::string& n : report.notes) std::printf("  note: %s\n", jet::tools::printable(n).c_str());
  for (const std::string& n : pass_notes) std::printf("  note: %s\n", jet::tools::printable(n).c_str());
  std::printf("  precision:      %s, layout %s\n", precision.c_str(), nhwc ? "nhwc (channels-last)" : "nchw");
  std::printf("  parameters:     %s in %d constants\n", bytes_text(param_bytes).c_str(), constants);
  std::printf("  arena:          %s, lower bound %s (ratio %.3f)\n", bytes_text(plan.arena_bytes).c_str(),
              bytes_text(plan.lower_bound_bytes).c_str(), plan.ratio());
  if (!has_workspace_limit) {
    std::printf("  workspace:      chosen by the runtime on its device (fastest algorithms)\n");
  } else if (workspace_limit == 0) {
    std::printf("  workspace:      none (algorithms without workspace)\n");
  } else {
    std::printf("  workspace:      at most %s per convolution, chosen by the runtime\n",
                bytes_text(static_cast<size_t>(workspace_limit)).c_str());
  }
  std::printf("  wrote %s, %s\n", jet::tools::printable(out_path).c_str(), bytes_text(file.size()).c_str());
  return 0;
}

// No exception escapes main (cli_common.h run_tool).
int main(int argc, char** argv) { return jet::tools::run_tool("jet-convert", tool_main, argc, argv); }
