// jet-convert: ONNX model -> .jet model file.
//
//   jet-convert model.onnx -o model.jet [--precision fp32|fp16] [--io-precision fp32|fp16]
//               [--input-shape NAME=1x3x224x224 ...]
//               [--layout auto|nchw|nhwc] [--workspace-limit BYTES] [--labels FILE] [--no-fuse]
//               [--preprocess SPEC] [--outputs NAME,...] [--disable-pass NAME] [--verbose]
//
// Import (onnx_import.h), optimization (optimize.h: folding, fusion, dead nodes), passes
// (passes.h: precision, layout), memory plan and writer
// (write_model.h); then a short report. Exit status: 0 written, 1 the model could not be
// converted (unsupported ops are summarized per op type, then all listed; no output file is
// created), 2 bad command line.
// The output is written through jet::write_file_atomically (a temporary file in the same
// directory, renamed into place), so a failed run never leaves a partial model behind and never
// destroys an existing one; writing over the input model is refused.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cli_args.h"
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
    "  --labels FILE              class names, one per line, stored as metadata (a regular\n"
    "                             file of at most 4 MiB, 65536 lines of at most 1024 bytes)\n"
    "  --preprocess SPEC          how jet-run turns an image file into the input, stored as\n"
    "                             metadata: comma-separated items of\n"
    "                               imagenet        = resize=crop,crop=0.875,order=rgb,\n"
    "                                                 mean=0.485:0.456:0.406,std=0.229:0.224:0.225\n"
    "                               input=NAME      the image input (default: the only rank-4 one)\n"
    "                               resize=stretch|crop|letterbox   (default stretch)\n"
    "                               crop=F          crop: the centred fraction kept (0.875 = 224/256)\n"
    "                               pad=V           letterbox: fill pixel value 0..255 (default 0)\n"
    "                               mean=R:G:B std=R:G:B   x = (pixel / 255 - mean) / std\n"
    "                               range=LO:HI     pixels 0..255 mapped linearly onto LO..HI\n"
    "                               scale=S         x = pixel * S\n"
    "                               order=rgb|bgr   layout=nchw|nhwc (default: from the input's dims)\n"
    "                             e.g. --preprocess imagenet, --preprocess range=-1:1,resize=letterbox\n"
    "  --outputs NAME,...         cut the graph: these tensors become the outputs, and only what\n"
    "                             they depend on is converted (e.g. before post-processing)\n"
    "  --no-fuse                  no batchnorm folding, epilogue or layernorm fusion (debugging)\n"
    "  --disable-pass NAME        turn one optimization pass off: fold_constants, fold_reshapes,\n"
    "                             fold_batchnorm, fuse_epilogues, fuse_layernorm,\n"
    "                             eliminate_dead_nodes\n"
    "  --verbose                  report what every ONNX node became\n";

int usage_error(const std::string& msg) { return jet::tools::usage_error("jet-convert", kUsage, msg); }

int fail(const std::string& msg) {
  std::fprintf(stderr, "jet-convert: %s\n", jet::tools::printable(msg, true).c_str());
  return 1;
}

// Dims in --input-shape's syntax ("1x3x224x224"), for the summary's input and output lines, so
// that a printed shape can be given back on the command line (messages use jet::dims_text).
std::string shape_argument_text(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
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
    if (!jet::tools::parse_int64(arg.substr(start, x == std::string::npos ? std::string::npos : x - start), 1, int64_t(1) << 40, &d)) {
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

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string dir_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}


// ---- --labels ----------------------------------------------------------------------------------

constexpr size_t kMaxLabelsBytes = size_t(4) << 20;
constexpr size_t kMaxLabels = 65536;
constexpr size_t kMaxLabelBytes = 1024;

// One label a line ('\r\n' or '\n'; a last line without newline counts). Only a regular file of at
// most kMaxLabelsBytes: a FIFO, device or directory is refused without reading from it.
bool read_labels(const std::string& path, std::vector<std::string>* labels, std::string* error) {
  // jet::read_regular_file: O_NONBLOCK and fstat before any read, the system's reason on failure.
  std::vector<uint8_t> bytes;
  const jet::Status read = jet::read_regular_file(path, kMaxLabelsBytes, "a labels file", &bytes);
  if (!read.ok()) {
    *error = "labels: " + read.message();
    return false;
  }
  const std::string text(bytes.begin(), bytes.end());
  labels->clear();
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.size() > kMaxLabelBytes) {
      *error = "labels file '" + path + "': line " + std::to_string(labels->size() + 1) + " has " +
               std::to_string(line.size()) + " bytes; at most " + std::to_string(kMaxLabelBytes) + " are accepted";
      return false;
    }
    if (labels->size() == kMaxLabels) {
      *error = "labels file '" + path + "' has more than " + std::to_string(kMaxLabels) + " lines";
      return false;
    }
    labels->push_back(line);
    start = end + 1;
  }
  return true;
}

// ---- --preprocess ------------------------------------------------------------------------------

// What --preprocess says before the model is known (the input's index and dims come later).
struct PreprocessSpec {
  bool given = false;
  std::string input;  // empty: the only rank-4 input
  std::string layout; // "", "nchw", "nhwc"
  jet::ImagePreprocessing::Resize resize = jet::ImagePreprocessing::Resize::STRETCH;
  float crop_fraction = 1.0f, pad_value = 0.0f;
  std::vector<float> mean, std;
  bool bgr = false;
};

// The whole string as a finite float (strtof; from_chars for floats is missing on gcc 9).
bool parse_float(const std::string& text, float* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const float v = std::strtof(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

bool parse_floats(const std::string& text, size_t count, std::vector<float>* out) {
  out->clear();
  size_t start = 0;
  while (true) {
    const size_t colon = text.find(':', start);
    float v = 0;
    if (!parse_float(text.substr(start, colon == std::string::npos ? std::string::npos : colon - start), &v)) return false;
    out->push_back(v);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return out->size() == count;
}

// Parses SPEC (see kUsage); false with the reason in `error`.
bool parse_preprocess(const std::string& text, PreprocessSpec* spec, std::string* error) {
  spec->given = true;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    start = comma + 1;
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    std::vector<float> v;
    float f = 0;
    if (item == "imagenet") {
      spec->resize = jet::ImagePreprocessing::Resize::CENTER_CROP;
      spec->crop_fraction = 0.875f;
      spec->mean = {0.485f, 0.456f, 0.406f};
      spec->std = {0.229f, 0.224f, 0.225f};
      spec->bgr = false;
    } else if (eq == std::string::npos) {
      *error = "--preprocess: '" + item + "' is neither a preset (imagenet) nor KEY=VALUE";
      return false;
    } else if (key == "input" && !value.empty()) {
      spec->input = value;
    } else if (key == "resize" && (value == "stretch" || value == "crop" || value == "letterbox")) {
      spec->resize = value == "stretch" ? jet::ImagePreprocessing::Resize::STRETCH
                     : value == "crop"  ? jet::ImagePreprocessing::Resize::CENTER_CROP
                                        : jet::ImagePreprocessing::Resize::LETTERBOX;
    } else if (key == "crop" && parse_float(value, &f) && f > 0.0f && f <= 1.0f) {
      spec->resize = jet::ImagePreprocessing::Resize::CENTER_CROP;
      spec->crop_fraction = f;
    } else if (key == "pad" && parse_float(value, &f) && f >= 0.0f && f <= 255.0f) {
      spec->pad_value = f;
    } else if (key == "mean" && parse_floats(value, 3, &v)) {
      spec->mean = v;
      if (spec->std.empty()) spec->std = {1.0f, 1.0f, 1.0f};
    } else if (key == "std" && parse_floats(value, 3, &v) && v[0] != 0 && v[1] != 0 && v[2] != 0) {
      spec->std = v;
      if (spec->mean.empty()) spec->mean = {0.0f, 0.0f, 0.0f};
    } else if (key == "range" && parse_floats(value, 2, &v) && v[0] != v[1]) {
      // x = lo + (pixel / 255) (hi - lo) = (pixel / 255 - mean) / std
      const float s = 1.0f / (v[1] - v[0]), m = -v[0] / (v[1] - v[0]);
      spec->mean = {m, m, m};
      spec->std = {s, s, s};
    } else if (key == "scale" && parse_float(value, &f) && f != 0.0f) {
      // x = pixel * scale = (pixel / 255 - 0) / (1 / (255 scale))
      const float s = 1.0f / (255.0f * f);
      spec->mean = {0.0f, 0.0f, 0.0f};
      spec->std = {s, s, s};
    } else if (key == "order" && (value == "rgb" || value == "bgr")) {
      spec->bgr = value == "bgr";
    } else if (key == "layout" && (value == "nchw" || value == "nhwc")) {
      spec->layout = value;
    } else {
      *error = "--preprocess: bad item '" + item +
               "' (keys: input=NAME, resize=stretch|crop|letterbox, crop=F in (0, 1], pad=0..255, "
               "mean=R:G:B, std=R:G:B (non-zero), range=LO:HI, scale=S, order=rgb|bgr, layout=nchw|nhwc)";
      return false;
    }
  }
  return true;
}

// The metadata entry for the converted graph: finds the input and checks it is an image of 3
// channels in the layout given (or the one its dims say).
bool resolve_preprocess(const jet::ir::Graph& g, const PreprocessSpec& spec, jet::WriteOptions::Preprocess* out,
                        std::string* error) {
  std::vector<int> candidates;
  for (int t = 0; t < static_cast<int>(g.tensors.size()); ++t) {
    const jet::ir::Tensor& x = g.tensors[t];
    if (x.kind != jet::ir::TensorKind::INPUT) continue;
    if (spec.input.empty() ? x.dims.size() == 4 : x.name == spec.input) candidates.push_back(t);
  }
  if (candidates.size() != 1) {
    std::string inputs;
    for (const jet::ir::Tensor& x : g.tensors) {
      if (x.kind == jet::ir::TensorKind::INPUT) inputs += (inputs.empty() ? "'" : ", '") + x.name + "' " + jet::dims_text(x.dims);
    }
    *error = spec.input.empty() ? "--preprocess: say which input is the image (input=NAME); the inputs are " + inputs
                                : "--preprocess: the model has no input '" + spec.input + "'; its inputs are " + inputs;
    return false;
  }
  const jet::ir::Tensor& x = g.tensors[candidates[0]];
  if (x.dims.size() != 4) {
    *error = "--preprocess: input '" + x.name + "' has dims " + jet::dims_text(x.dims) + "; an image input has rank 4";
    return false;
  }
  bool nhwc = false;
  if (spec.layout.empty()) {
    if (x.dims[1] == 3) {
      nhwc = false;
    } else if (x.dims[3] == 3) {
      nhwc = true;
    } else {
      *error = "--preprocess: input '" + x.name + "' has dims " + jet::dims_text(x.dims) +
               ": neither dim 1 (NCHW) nor dim 3 (NHWC) is 3 channels; images need 3";
      return false;
    }
  } else {
    nhwc = spec.layout == "nhwc";
    if (x.dims[nhwc ? 3 : 1] != 3) {
      *error = "--preprocess: input '" + x.name + "' has dims " + jet::dims_text(x.dims) + ": as " + spec.layout +
               " that is " + std::to_string(x.dims[nhwc ? 3 : 1]) + " channels; images need 3";
      return false;
    }
  }
  out->input = candidates[0];
  out->nhwc = nhwc;
  out->height = static_cast<int>(nhwc ? x.dims[1] : x.dims[2]);
  out->width = static_cast<int>(nhwc ? x.dims[2] : x.dims[3]);
  out->resize = spec.resize;
  out->crop_fraction = spec.crop_fraction;
  out->pad_value = spec.pad_value;
  out->mean = spec.mean;
  out->std = spec.std;
  out->bgr = spec.bgr;
  return true;
}

// ---- unsupported ops ---------------------------------------------------------------------------

// One line per op type, most frequent first: the count and the first node with its reason.
void print_unsupported_summary(const jet::ImportReport& report) {
  struct Group {
    std::string type;
    size_t count = 0;
    size_t first = 0;
  };
  std::vector<Group> groups;
  for (size_t i = 0; i < report.unsupported.size(); ++i) {
    const jet::ImportReport::Unsupported& u = report.unsupported[i];
    const std::string type = u.domain.empty() ? u.op_type : u.domain + "::" + u.op_type;
    size_t g = 0;
    while (g < groups.size() && groups[g].type != type) ++g;
    if (g == groups.size()) groups.push_back({type, 0, i});
    ++groups[g].count;
  }
  std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) { return a.count > b.count; });
  std::fprintf(stderr, "jet-convert: %zu unsupported op%s of %zu type%s (nothing was converted):\n",
               report.unsupported.size(), report.unsupported.size() == 1 ? "" : "s", groups.size(),
               groups.size() == 1 ? "" : "s");
  for (const Group& g : groups) {
    const jet::ImportReport::Unsupported& u = report.unsupported[g.first];
    std::fprintf(stderr, "  %-24s %5zu  first: '%s': %s\n", jet::tools::printable(g.type).c_str(), g.count,
                 jet::tools::printable(u.node_name).c_str(), jet::tools::printable(u.reason).c_str());
  }
  std::fprintf(stderr, "  (if they are post-processing, --outputs NAME,... converts the graph up to the tensors named)\n"
                       "the full list:\n");
}

}  // namespace

static int tool_main(int argc, char** argv) {
  std::string model_path, out_path, precision = "fp32", io_precision = "fp32", layout = "auto", labels_path;
  bool verbose = false, has_workspace_limit = false;
  jet::OptimizeOptions optimize_options;
  int64_t workspace_limit = 0;
  jet::ImportOptions import_options;
  PreprocessSpec preprocess;
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
      if (!has_value || !jet::tools::parse_int64(argv[++i], 0, INT64_MAX, &workspace_limit)) {
        return usage_error("--workspace-limit takes a byte count");
      }
      has_workspace_limit = true;
    } else if (arg == "--labels") {
      if (!has_value) return usage_error("--labels needs a file name");
      labels_path = argv[++i];
    } else if (arg == "--preprocess") {
      if (!has_value) return usage_error("--preprocess needs a specification, e.g. imagenet");
      std::string error;
      if (preprocess.given) return usage_error("--preprocess given twice (one input image is supported)");
      if (!parse_preprocess(argv[++i], &preprocess, &error)) return usage_error(error);
    } else if (arg == "--outputs") {
      if (!has_value) return usage_error("--outputs needs tensor names, e.g. --outputs boxes,scores");
      const std::string list = argv[++i];
      size_t start = 0;
      while (start <= list.size()) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        const std::string name = list.substr(start, comma - start);
        if (name.empty()) return usage_error("--outputs: an empty name in '" + list + "'");
        import_options.outputs.push_back(name);
        start = comma + 1;
      }
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
    std::string error;
    if (!read_labels(labels_path, &labels, &error)) return fail(error);
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
    if (st.code() == jet::StatusCode::NOT_SUPPORTED && !report.unsupported.empty()) print_unsupported_summary(report);
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
  if (preprocess.given) {
    wo.preprocessing.emplace_back();
    std::string error;
    if (!resolve_preprocess(g, preprocess, &wo.preprocessing.back(), &error)) {
      return fail(error + "\nno output file was written");
    }
    pass_notes.push_back("preprocessing for image files (jet-run), input '" + g.tensors[wo.preprocessing.back().input].name +
                           "' " + jet::tools::preprocessing_text(wo.preprocessing.back()));
  }
  if (!labels.empty()) {
    // A classifier's output has one value per label per image; say so when it does not.
    std::string outputs;
    bool matches = false;
    for (const jet::ir::Tensor& t : g.tensors) {
      if (t.kind != jet::ir::TensorKind::OUTPUT || t.dims.empty()) continue;
      int64_t per_image = 1;
      for (size_t d = 1; d < t.dims.size(); ++d) per_image *= t.dims[d];
      matches = matches || per_image == static_cast<int64_t>(labels.size());
      outputs += (outputs.empty() ? "'" : ", '") + t.name + "' " + jet::dims_text(t.dims);
    }
    pass_notes.push_back(std::to_string(labels.size()) + " labels from " + labels_path +
                         (matches ? "" : "; warning: no output has that many values per image (outputs " + outputs + ")"));
  }
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
                  jet::tools::printable(t.name).c_str(), jet::dtype_name(t.dtype), shape_argument_text(t.dims).c_str());
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
