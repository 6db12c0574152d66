// jet-compare: runs one model two ways (two backends, two precisions, or two .jet files of one
// network) on the same inputs and reports every output's error; with --layers every intermediate
// tensor's too, in execution order, so that one sees where a precision loss starts (as
// polygraphy's --compare does for TensorRT). Self-contained: no Python, no ONNX Runtime.
//
//   jet-compare model_fp32.jet model_fp16.jet --layers              two conversions, CPU both
//   jet-compare model.jet --a cpu --b cuda                           one file, two backends
//   jet-compare model.onnx --a cpu:fp32 --b cuda:fp16                converted here, both ways
//
// Errors per tensor (side a is the reference): max_abs = max |a - b|; rel_rms = rms(a - b) /
// rms(a); max_rel = max_abs / max |a|. A tensor fails when rel_rms exceeds the tolerance or a
// value is not finite on one side only (or differently non-finite). Exit status: 0 every output passes, 1 some output fails
// (or an error), 2 bad command line.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli_common.h"
#include "image_input.h"
#include "jet/runtime.h"
#include "npy.h"
#include "tensor_proto.h"

#if JET_HAVE_ONNX_IMPORT
#include "onnx_import.h"
#include "optimize.h"
#include "passes.h"
#include "write_model.h"
#endif

// Returns a failed Status from the enclosing function.
#define JET_COMPARE_TRY(expr)                 \
  do {                                        \
    const ::jet::Status jet_st_ = (expr);     \
    if (!jet_st_.ok()) return jet_st_;        \
  } while (0)

namespace {

using jet::Status;
using jet::StatusCode;
using namespace jet::tools;

const char kUsage[] =
    "usage: jet-compare MODEL [MODEL_B] [--a SIDE] [--b SIDE] [--input NAME=FILE ...] [--seed N]\n"
    "                   [--layers] [--tolerance T]\n"
    "  MODEL, MODEL_B  side a runs MODEL, side b MODEL_B (default: MODEL): .jet files, or .onnx\n"
    "                  files converted here for each side (default options; for --input-shape,\n"
    "                  --outputs or --preprocess convert with jet-convert and compare the .jet files)\n"
    "  --a, --b        SIDE = DEVICE[:PRECISION]: cpu or cuda, and fp32 or fp16 for an .onnx model\n"
    "                  (defaults: cpu:fp32 and cpu:fp16 for .onnx, cpu and cpu for .jet files)\n"
    "  --input         NAME=FILE (.npy, ONNX TensorProto .pb, or an image preprocessed as the model\n"
    "                  records); a bare FILE feeds the only input. Inputs not given get seeded\n"
    "                  uniform [-1, 1) values. Both sides get the same values.\n"
    "  --seed          seed of those values (default 1)\n"
    "  --layers        also compares every intermediate tensor both sides have (by name), in side\n"
    "                  a's execution order, marking the first beyond the tolerance\n"
    "  --tolerance T   the rel_rms above which a tensor fails (default 1e-4; 2e-2 when a side\n"
    "                  computes in fp16)\n"
    "errors: max_abs = max |a - b|, rel_rms = rms(a - b) / rms(a), max_rel = max_abs / max |a|\n"
    "exit status: 0 every output within the tolerance, 1 not (or an error), 2 bad command line\n";

int usage_error(const std::string& message) { return jet::tools::usage_error("jet-compare", kUsage, message); }
int fail(const Status& st) { return jet::tools::fail("jet-compare", st); }

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct Side {
  std::string model;
  std::string spec;  // as given
  jet::Backend backend = jet::Backend::CPU;
  std::string precision;  // .onnx only: "fp32" / "fp16"
  std::shared_ptr<jet::Engine> engine;
  std::unique_ptr<jet::ExecutionContext> ctx;
  std::vector<uint8_t> converted;  // .onnx: the .jet bytes
};

struct InputSpec {
  std::string name, path;
};

struct Options {
  std::string model_a, model_b;
  std::string side_a, side_b;
  std::vector<InputSpec> inputs;
  uint64_t seed = 1;
  bool layers = false;
  double tolerance = -1;  // default by precision
};

bool parse_side(const std::string& text, bool onnx, Side* side) {
  const size_t colon = text.find(':');
  const std::string device = text.substr(0, colon);
  if (!parse_backend(device, &side->backend)) return false;
  side->spec = text;
  if (colon == std::string::npos) return true;
  side->precision = text.substr(colon + 1);
  return onnx && (side->precision == "fp32" || side->precision == "fp16");
}

#if JET_HAVE_ONNX_IMPORT
// jet-convert's pipeline with its default options: import, optimize, precision, layout (nhwc for
// fp16), write to memory.
Status convert_onnx(const std::string& path, const std::string& precision, std::vector<uint8_t>* out) {
  jet::ir::Graph g;
  jet::ImportReport report;
  Status st = jet::import_onnx_file(path, jet::ImportOptions(), &g, &report);
  if (!st.ok()) return st;  // the importer's messages name the file
  jet::OptimizeReport optimized;
  st = jet::optimize_graph(&g, jet::OptimizeOptions(), &optimized);
  if (st.ok() && precision == "fp16") st = jet::convert_precision(&g, jet::DType::F16);
  if (st.ok() && precision == "fp16") st = jet::set_channels_last(&g);
  jet::WriteOptions wo;
  wo.producer_version = "jet-compare";
  wo.source_name = path;
  if (st.ok()) st = jet::write_model(g, wo, out);
  if (!st.ok()) return Status(st.code(), path + " (" + precision + "): " + st.message());
  return Status::success();
}
#endif

Status load_side(Side* side) {
  if (ends_with(side->model, ".onnx")) {
#if JET_HAVE_ONNX_IMPORT
    JET_COMPARE_TRY(convert_onnx(side->model, side->precision, &side->converted));
    jet::LoadOptions load;
    load.backend = side->backend;
    if (side->backend == jet::Backend::CUDA) JET_COMPARE_TRY(cuda_device_available());
    JET_COMPARE_TRY(jet::Engine::load(side->converted.data(), side->converted.size(), load, &side->engine));
    return side->engine->create_context(&side->ctx);
#else
    return Status(StatusCode::NOT_SUPPORTED, side->model +
                                                 ": this jet-compare was built without the ONNX importer; convert "
                                                 "with jet-convert and compare the .jet files");
#endif
  }
  return load_engine(side->model, side->backend, &side->engine, &side->ctx);
}

std::string side_label(const Side& s) {
  std::string label = s.model + " on " + backend_name(s.backend);
  if (!s.precision.empty()) label += " (" + s.precision + ")";
  return label;
}

bool computes_f16(const Side& s) {
  if (s.precision == "fp16") return true;
  for (int t = 0; t < s.engine->num_tensors(); ++t) {
    const jet::TensorInfo& info = s.engine->tensor(t);
    if (info.role == jet::TensorRole::ACTIVATION && info.dtype == jet::DType::F16) return true;
  }
  return false;
}

int find_input(const jet::Engine& engine, const std::string& name) {
  for (int i = 0; i < engine.num_inputs(); ++i) {
    if (engine.tensor(engine.input(i)).name == name) return engine.input(i);
  }
  return -1;
}

// `info` as a packed float32 tensor: what the shared input values are made in.
jet::TensorInfo as_f32(const jet::TensorInfo& info) {
  jet::TensorInfo f = info;
  f.dtype = jet::DType::F32;
  f.strides.clear();
  f.bytes = static_cast<size_t>(element_count(info.dims)) * 4;
  return f;
}

// The values of every input of side a (float, logical order), from files or the generator.
Status make_inputs(const Options& opt, const jet::Engine& engine, std::map<int, HostArray>* values,
                   std::set<int>* from_files) {
  for (const InputSpec& spec : opt.inputs) {
    int index = -1;
    if (!spec.name.empty()) {
      index = find_input(engine, spec.name);
    } else if (engine.num_inputs() == 1) {
      index = engine.input(0);
    }
    if (index < 0) {
      return Status(StatusCode::BAD_PARAM, "--input " + (spec.name.empty() ? spec.path : spec.name + "=" + spec.path) +
                                               ": name one of the model's inputs");
    }
    const jet::TensorInfo& info = engine.tensor(index);
    if (values->count(index)) return Status(StatusCode::BAD_PARAM, "input '" + info.name + "' is given twice");
    HostArray array;
    if (is_image_file(spec.path)) {
      const jet::ImagePreprocessing* pre = find_preprocessing(engine, index);
      if (pre == nullptr) {
        return Status(StatusCode::BAD_PARAM, spec.path + ": model a records no preprocessing for input '" + info.name +
                                                 "' (jet-convert --preprocess); give a .npy");
      }
      RgbImage image;
      JET_COMPARE_TRY(read_image(spec.path, &image));
      const jet::TensorInfo f32 = as_f32(info);
      std::vector<uint8_t> bytes;
      JET_COMPARE_TRY(image_to_tensor_bytes(image, *pre, f32, &bytes));
      tensor_bytes_to_packed(f32, bytes, nullptr, &array.values);
      array.dims = info.dims;
    } else if (ends_with(spec.path, ".npy")) {
      JET_COMPARE_TRY(read_npy(spec.path, &array));
    } else if (ends_with(spec.path, ".pb")) {
      std::string stored;
      JET_COMPARE_TRY(read_tensor_proto(spec.path, &array, &stored));
    } else {
      return Status(StatusCode::BAD_PARAM, spec.path + ": unknown input file type (.npy, .pb or an image)");
    }
    if (array.dims != info.dims) {
      return Status(StatusCode::BAD_PARAM, spec.path + ": shape " + format_dims(array.dims) + " does not match input '" +
                                               info.name + "' of shape " + format_dims(info.dims));
    }
    (*values)[index] = array;
    from_files->insert(index);
  }
  for (int i = 0; i < engine.num_inputs(); ++i) {
    const int index = engine.input(i);
    if (values->count(index)) continue;
    // Random values: floats in [-1, 1), small integers or bools for integer inputs (as_f32 keeps
    // the layout packed; an integer input keeps its type so that the values stay whole).
    jet::TensorInfo f32 = as_f32(engine.tensor(index));
    if (!jet::dtype_is_float(engine.tensor(index).dtype)) {
      f32.dtype = engine.tensor(index).dtype;
      f32.bytes = static_cast<size_t>(element_count(f32.dims)) * jet::dtype_size(f32.dtype);
    }
    std::vector<uint8_t> bytes;
    random_tensor_bytes(f32, opt.seed ^ (0x5851f42d4c957f2dull * static_cast<uint64_t>(i + 1)), &bytes);
    HostArray array;
    array.dims = f32.dims;
    tensor_bytes_to_packed(f32, bytes, nullptr, &array.values);
    (*values)[index] = array;
  }
  return Status::success();
}

// Side b gets side a's input values by input name (converted to its dtype and layout).
Status feed(Side* side, const jet::Engine& a, const std::map<int, HostArray>& values) {
  const jet::Engine& e = *side->engine;
  if (e.num_inputs() != a.num_inputs()) {
    return Status(StatusCode::BAD_PARAM, "the models have different inputs (" + std::to_string(a.num_inputs()) +
                                             " and " + std::to_string(e.num_inputs()) + ")");
  }
  for (const auto& kv : values) {
    const std::string& name = a.tensor(kv.first).name;
    const int index = find_input(e, name);
    if (index < 0) return Status(StatusCode::BAD_PARAM, side_label(*side) + " has no input '" + name + "'");
    std::vector<uint8_t> bytes;
    JET_COMPARE_TRY(array_to_tensor_bytes(kv.second, e.tensor(index), "input '" + name + "'", &bytes));
    JET_COMPARE_TRY(copy_to_tensor(side->backend, side->ctx->tensor_data(index), bytes.data(), bytes.size()));
  }
  return Status::success();
}

Status read_tensor(const Side& side, int index, std::vector<float>* values) {
  const jet::TensorInfo& info = side.engine->tensor(index);
  std::vector<uint8_t> bytes(info.bytes);
  JET_COMPARE_TRY(copy_from_tensor(side.backend, bytes.data(), side.ctx->tensor_data(index), bytes.size()));
  tensor_bytes_to_packed(info, bytes, nullptr, values);
  return Status::success();
}

// Runs the side; with `layers`, keeps every op's output by tensor name (execution order in `order`).
Status run_side(Side* side, bool layers, std::map<std::string, std::vector<float>>* tensors,
                std::vector<int>* order) {
  if (!layers) {
    JET_COMPARE_TRY(side->ctx->run(nullptr));
    JET_COMPARE_TRY(synchronize(side->backend, nullptr));
  } else {
    JET_COMPARE_TRY(side->ctx->run_observed(nullptr, [&](int op) -> Status {
      for (int t : side->engine->op(op).outputs) {
        JET_COMPARE_TRY(read_tensor(*side, t, &(*tensors)[side->engine->tensor(t).name]));
        order->push_back(t);
      }
      return Status::success();
    }));
  }
  for (int i = 0; i < side->engine->num_outputs(); ++i) {
    const int t = side->engine->output(i);
    JET_COMPARE_TRY(read_tensor(*side, t, &(*tensors)[side->engine->tensor(t).name]));
  }
  return Status::success();
}

struct Error {
  double max_abs = 0, rel_rms = 0, max_rel = 0;
  size_t nonfinite_mismatch = 0;  // elements finite on one side only
};

Error compare(const std::vector<float>& a, const std::vector<float>& b) {
  Error e;
  double diff2 = 0, ref2 = 0, ref_max = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const bool fa = std::isfinite(a[i]), fb = std::isfinite(b[i]);
    if (!fa || !fb) {
      if (fa != fb || !(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) ++e.nonfinite_mismatch;
      continue;
    }
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
    e.max_abs = std::max(e.max_abs, d);
    diff2 += d * d;
    ref2 += static_cast<double>(a[i]) * a[i];
    ref_max = std::max(ref_max, std::fabs(static_cast<double>(a[i])));
  }
  e.rel_rms = ref2 > 0 ? std::sqrt(diff2 / ref2) : (diff2 > 0 ? INFINITY : 0.0);
  e.max_rel = ref_max > 0 ? e.max_abs / ref_max : (e.max_abs > 0 ? INFINITY : 0.0);
  return e;
}

bool passes(const Error& e, double tolerance) { return e.nonfinite_mismatch == 0 && e.rel_rms <= tolerance; }

// One table row; the tensor name last, so that long names do not break the columns.
void print_row(const char* kind, const std::string& op, const jet::TensorInfo& info, const Error& e, bool ok,
               const char* mark) {
  const std::string verdict =
      ok ? "ok" : e.nonfinite_mismatch ? "FAIL:" + std::to_string(e.nonfinite_mismatch) + "-non-finite" : "FAIL";
  std::printf("%-7s %-13s %-19s %-10s %-10s %-10s %-5s %s%s\n", kind, op.c_str(), format_dims(info.dims).c_str(),
              short_number(e.max_abs).c_str(), short_number(e.rel_rms).c_str(), short_number(e.max_rel).c_str(),
              verdict.c_str(), info.name.c_str(), mark);
}

int run(Options& opt) {
  const bool onnx_a = ends_with(opt.model_a, ".onnx");
  const std::string model_b = opt.model_b.empty() ? opt.model_a : opt.model_b;
  const bool onnx_b = ends_with(model_b, ".onnx");
  Side a, b;
  a.model = opt.model_a;
  b.model = model_b;
  if (!parse_side(opt.side_a.empty() ? (onnx_a ? "cpu:fp32" : "cpu") : opt.side_a, onnx_a, &a)) {
    return usage_error("--a takes cpu or cuda" + std::string(onnx_a ? ", optionally :fp32 or :fp16" : " (a .jet file has its precision)"));
  }
  if (!parse_side(opt.side_b.empty() ? (onnx_b ? "cpu:fp16" : "cpu") : opt.side_b, onnx_b, &b)) {
    return usage_error("--b takes cpu or cuda" + std::string(onnx_b ? ", optionally :fp32 or :fp16" : " (a .jet file has its precision)"));
  }
  if (onnx_a && a.precision.empty()) a.precision = "fp32";
  if (onnx_b && b.precision.empty()) b.precision = "fp32";
  if (a.model == b.model && a.backend == b.backend && a.precision == b.precision) {
    return usage_error("both sides run " + side_label(a) + ": give two models, two devices (--a, --b) or, for an "
                       ".onnx model, two precisions");
  }
  Status st = load_side(&a);
  if (st.ok()) st = load_side(&b);
  if (!st.ok()) return fail(st);
  const double tolerance = opt.tolerance >= 0 ? opt.tolerance : (computes_f16(a) || computes_f16(b)) ? 2e-2 : 1e-4;
  std::printf("a: %s\nb: %s\n", side_label(a).c_str(), side_label(b).c_str());

  std::map<int, HostArray> inputs;
  std::set<int> from_files;
  st = make_inputs(opt, *a.engine, &inputs, &from_files);
  if (st.ok()) st = feed(&a, *a.engine, inputs);
  if (st.ok()) st = feed(&b, *a.engine, inputs);
  if (!st.ok()) return fail(st);
  for (const auto& kv : inputs) {
    const bool given = from_files.count(kv.first) != 0;
    std::printf("input '%s' %s: %s\n", a.engine->tensor(kv.first).name.c_str(), format_dims(kv.second.dims).c_str(),
                given ? "from the file given" : ("random uniform [-1, 1), seed " + std::to_string(opt.seed)).c_str());
  }

  std::map<std::string, std::vector<float>> ta, tb;
  std::vector<int> order_a, order_b;
  st = run_side(&a, opt.layers, &ta, &order_a);
  if (st.ok()) st = run_side(&b, opt.layers, &tb, &order_b);
  if (!st.ok()) return fail(st);

  std::printf("tolerance: rel_rms <= %s\n", short_number(tolerance).c_str());
  std::printf("%-7s %-13s %-19s %-10s %-10s %-10s %-5s %s\n", "", "op", "dims", "max_abs", "rel_rms", "max_rel", "",
              "tensor");
  if (opt.layers) {
    // Every op output of side a that side b also has (same name and element count).
    bool first_failure = true;
    int compared = 0, only_a = 0;
    std::map<int, int> op_of;  // tensor -> op writing it
    for (int i = 0; i < a.engine->num_ops(); ++i) {
      for (int t : a.engine->op(i).outputs) op_of[t] = i;
    }
    for (int t : order_a) {
      const jet::TensorInfo& info = a.engine->tensor(t);
      auto it = tb.find(info.name);
      if (info.role == jet::TensorRole::OUTPUT) continue;  // in the outputs table below
      if (it == tb.end() || it->second.size() != ta[info.name].size()) {
        ++only_a;
        continue;
      }
      const Error e = compare(ta[info.name], it->second);
      const bool ok = passes(e, tolerance);
      print_row("layer", a.engine->op(op_of[t]).type, info, e, ok, !ok && first_failure ? "  <- first beyond the tolerance" : "");
      if (!ok) first_failure = false;
      ++compared;
    }
    std::printf("layers: %d compared, %d of side a's not in side b (inserted conversions, different fusion)\n",
                compared, only_a);
  }
  int failed = 0;
  for (int i = 0; i < a.engine->num_outputs(); ++i) {
    const jet::TensorInfo& info = a.engine->tensor(a.engine->output(i));
    auto it = tb.find(info.name);
    if (it == tb.end() || it->second.size() != ta[info.name].size()) {
      std::printf("output  '%s': side b has no output of this name and size: FAIL\n", info.name.c_str());
      ++failed;
      continue;
    }
    const Error e = compare(ta[info.name], it->second);
    const bool ok = passes(e, tolerance);
    print_row("output", "", info, e, ok, "");
    failed += ok ? 0 : 1;
  }
  std::printf("%s: %d of %d outputs within the tolerance\n", failed ? "FAIL" : "PASS", a.engine->num_outputs() - failed,
              a.engine->num_outputs());
  return failed ? 1 : 0;
}

}  // namespace

static int tool_main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (print_usage_if_help(arg, kUsage)) return 0;
    if (arg == "--a" || arg == "--b") {
      if (!has_value) return usage_error(arg + " takes DEVICE[:PRECISION], e.g. cuda:fp16");
      (arg == "--a" ? opt.side_a : opt.side_b) = argv[++i];
    } else if (arg == "--input") {
      if (!has_value) return usage_error("--input takes NAME=FILE");
      const std::string spec = argv[++i];
      const size_t eq = spec.find('=');
      InputSpec input;
      input.path = eq == std::string::npos ? spec : spec.substr(eq + 1);
      input.name = eq == std::string::npos ? "" : spec.substr(0, eq);
      if (input.path.empty() || (eq != std::string::npos && input.name.empty())) {
        return usage_error("--input takes NAME=FILE, got '" + spec + "'");
      }
      opt.inputs.push_back(input);
    } else if (arg == "--seed") {
      if (!has_value || !parse_uint64(argv[++i], &opt.seed)) return usage_error("--seed takes a non-negative integer");
    } else if (arg == "--layers") {
      opt.layers = true;
    } else if (arg == "--tolerance") {
      char* end = nullptr;
      const std::string v = has_value ? argv[++i] : "";
      opt.tolerance = v.empty() ? -1 : std::strtod(v.c_str(), &end);
      if (v.empty() || end != v.c_str() + v.size() || !(opt.tolerance >= 0) || !std::isfinite(opt.tolerance)) {
        return usage_error("--tolerance takes a number >= 0");
      }
    } else if (!arg.empty() && arg[0] == '-') {
      return usage_error("unknown option '" + arg + "'");
    } else if (opt.model_a.empty()) {
      opt.model_a = arg;
    } else if (opt.model_b.empty()) {
      opt.model_b = arg;
    } else {
      return usage_error("at most two models ('" + opt.model_a + "', '" + opt.model_b + "', then '" + arg + "')");
    }
  }
  if (opt.model_a.empty()) return usage_error("no model given");
  return run(opt);
}

// No exception escapes main (cli_common.h run_tool).
int main(int argc, char** argv) { return jet::tools::run_tool("jet-compare", tool_main, argc, argv); }
