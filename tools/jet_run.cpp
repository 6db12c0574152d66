// jet-run: loads a .jet model, fills its inputs from files (.npy, ONNX TensorProto .pb, images
// through the preprocessing the model records) or a seeded random generator, runs it once and
// prints a checksum of every output, optionally its top-k classes (with the model's labels);
// optionally saves the outputs as .npy files.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli_common.h"
#include "image_input.h"
#include "jet/runtime.h"
#include "npy.h"
#include "tensor_proto.h"

namespace {

using jet::Status;
using jet::StatusCode;
using namespace jet::tools;

const char kUsage[] =
    "usage: jet-run model.jet [FILE ...] [--device cpu|cuda] [--input NAME=FILE ...] [--top-k N]\n"
    "               [--save-outputs DIR] [--seed N]\n"
    "  --device        backend to run on (default: cuda when built with CUDA, else cpu)\n"
    "  --input         NAME=FILE feeds graph input NAME from FILE: .npy, ONNX TensorProto .pb, or\n"
    "                  an image (.png, .jpg, .bmp, ...) preprocessed as the model records it\n"
    "                  (jet-convert --preprocess); a bare FILE (also without --input) feeds the\n"
    "                  input the .pb names, the input with preprocessing for an image, or the\n"
    "                  model's only input\n"
    "  --top-k         prints the N largest values of each output per image, with the model's\n"
    "                  labels (jet-convert --labels) and softmax probabilities\n"
    "  --save-outputs  writes each output to DIR/<output name>.npy (characters outside\n"
    "                  [A-Za-z0-9._-] replaced by '_')\n"
    "  --seed          seed of the random values of inputs not given (default 1): uniform [-1, 1),\n"
    "                  integers in [-3, 3] for integer inputs, 0 or 1 for bool ones\n";

struct InputSpec {
  std::string name;  // empty: infer
  std::string path;
};

struct Options {
  std::string model;
  jet::Backend backend = jet::built_with_cuda() ? jet::Backend::CUDA : jet::Backend::CPU;
  std::vector<InputSpec> inputs;
  std::string save_dir;
  uint64_t seed = 1;
  int64_t top_k = 0;
};

int usage_error(const std::string& message) { return jet::tools::usage_error("jet-run", kUsage, message); }
int fail(const Status& st) { return jet::tools::fail("jet-run", st); }

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Reads an input file by its extension.
Status read_input_file(const std::string& path, HostArray* array, std::string* stored_name) {
  stored_name->clear();
  if (ends_with(path, ".npy")) return read_npy(path, array);
  if (ends_with(path, ".pb")) return read_tensor_proto(path, array, stored_name);
  return Status(StatusCode::BAD_PARAM, path + ": unknown input file type (use .npy or ONNX TensorProto .pb)");
}

std::string input_names(const jet::Engine& engine) {
  std::string s;
  for (int i = 0; i < engine.num_inputs(); ++i) {
    if (i > 0) s += ", ";
    s += "'" + engine.tensor(engine.input(i)).name + "'";
  }
  return s;
}

// The tensor index of graph input `name`, or -1.
int find_input(const jet::Engine& engine, const std::string& name) {
  for (int i = 0; i < engine.num_inputs(); ++i) {
    if (engine.tensor(engine.input(i)).name == name) return engine.input(i);
  }
  return -1;
}

Status make_directory(const std::string& dir) {
  struct stat info;
  if (stat(dir.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode)) return Status::success();
    return Status(StatusCode::BAD_PARAM, dir + ": exists and is not a directory");
  }
  if (mkdir(dir.c_str(), 0777) != 0) {
    return Status(StatusCode::BAD_PARAM, dir + ": cannot create directory: " + std::strerror(errno));
  }
  return Status::success();
}

std::string short_float(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

// An image file into its input: the input named, else the one input with preprocessing.
Status feed_image(const jet::Engine& engine, jet::ExecutionContext& ctx, jet::Backend backend, const InputSpec& spec,
                  std::set<int>* given) {
  int index = -1;
  if (!spec.name.empty()) {
    index = find_input(engine, spec.name);
    if (index < 0) {
      return Status(StatusCode::BAD_PARAM, "--input " + spec.name + "=" + spec.path + ": the model has no input '" +
                                               spec.name + "'; its inputs are " + input_names(engine));
    }
  } else if (engine.summary().preprocessing.size() == 1) {
    index = engine.summary().preprocessing[0].input;
  } else if (engine.num_inputs() == 1) {
    index = engine.input(0);
  } else {
    return Status(StatusCode::BAD_PARAM, spec.path + ": say which input the image feeds (--input NAME=" + spec.path +
                                             "); the model's inputs are " + input_names(engine));
  }
  const jet::TensorInfo& info = engine.tensor(index);
  const jet::ImagePreprocessing* pre = find_preprocessing(engine, index);
  if (pre == nullptr) {
    return Status(StatusCode::BAD_PARAM, spec.path + ": the model records no preprocessing for input '" + info.name +
                                             "', so an image cannot be turned into it; convert the model with "
                                             "jet-convert --preprocess (e.g. --preprocess imagenet), or give a .npy");
  }
  if (!given->insert(index).second) {
    return Status(StatusCode::BAD_PARAM, "input '" + info.name + "' is given more than once");
  }
  RgbImage image;
  Status st = read_image(spec.path, &image);
  std::vector<uint8_t> bytes;
  if (st.ok()) st = image_to_tensor_bytes(image, *pre, info, &bytes);
  if (st.ok()) st = copy_to_tensor(backend, ctx.tensor_data(index), bytes.data(), bytes.size());
  if (!st.ok()) return st;
  std::printf("input '%s' %s %s: from %s (image %lldx%lld, %s)\n", info.name.c_str(), format_dims(info.dims).c_str(),
              jet::dtype_name(info.dtype), spec.path.c_str(), static_cast<long long>(image.width),
              static_cast<long long>(image.height), preprocessing_text(*pre).c_str());
  return Status::success();
}

// --top-k: the k largest values of each image's slice of the output (dim 0 is the batch), with
// the model's labels when it has one per value, and softmax probabilities (or the values
// themselves when they already are probabilities: in [0, 1], summing to 1).
void print_top_k(const jet::Engine& engine, const jet::TensorInfo& info, const std::vector<float>& values, int64_t k) {
  const int64_t batch = info.dims.empty() ? 1 : info.dims[0];
  if (batch <= 0 || values.empty()) return;
  const size_t per_image = values.size() / static_cast<size_t>(batch);
  const std::vector<std::string>& labels = engine.summary().labels;
  const bool labelled = labels.size() == per_image;
  for (int64_t b = 0; b < batch; ++b) {
    const float* v = values.data() + static_cast<size_t>(b) * per_image;
    bool probabilities = true;
    double sum = 0, max = -INFINITY;
    for (size_t i = 0; i < per_image; ++i) {
      probabilities = probabilities && v[i] >= 0.0f && v[i] <= 1.0f;
      sum += v[i];
      max = std::max(max, static_cast<double>(v[i]));
    }
    probabilities = probabilities && std::fabs(sum - 1.0) < 1e-3;
    double exp_sum = 0;
    for (size_t i = 0; i < per_image; ++i) exp_sum += std::exp(static_cast<double>(v[i]) - max);
    std::vector<size_t> order(per_image);
    for (size_t i = 0; i < per_image; ++i) order[i] = i;
    const size_t shown = std::min(per_image, static_cast<size_t>(k));
    // Largest first; ties (and NaN) by index, so the order is the same on every run.
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(shown), order.end(),
                      [&](size_t a, size_t c) { return v[a] > v[c] || (!(v[c] > v[a]) && a < c); });
    std::printf("top-%zu of '%s'%s (%s%s):\n", shown, info.name.c_str(),
                batch > 1 ? (" image " + std::to_string(b)).c_str() : "",
                probabilities ? "the values are probabilities" : "probability = softmax of the values",
                labelled ? "" : labels.empty() ? "; the model has no labels" : "; the model's labels do not match this output");
    for (size_t r = 0; r < shown; ++r) {
      const size_t i = order[r];
      const double p = probabilities ? v[i] : std::exp(static_cast<double>(v[i]) - max) / exp_sum;
      char percent[32];
      std::snprintf(percent, sizeof percent, "%.4g%%", 100.0 * p);
      std::printf("  %zu. class %-6zu %-10s value %-12s %s\n", r + 1, i, percent,
                  short_float(v[i]).c_str(), labelled ? labels[i].c_str() : "");
    }
  }
}

int run(const Options& opt) {
  std::shared_ptr<jet::Engine> engine;
  std::unique_ptr<jet::ExecutionContext> ctx;
  Status st = load_engine(opt.model, opt.backend, &engine, &ctx);
  if (!st.ok()) return fail(st);
  std::printf("model %s: %d inputs, %d outputs, %d ops, device %s\n", printable(opt.model).c_str(), engine->num_inputs(),
              engine->num_outputs(), engine->num_ops(), backend_name(opt.backend));

  // Inputs from files.
  std::set<int> given;
  for (const InputSpec& spec : opt.inputs) {
    if (is_image_file(spec.path)) {
      st = feed_image(*engine, *ctx, opt.backend, spec, &given);
      if (!st.ok()) return fail(st);
      continue;
    }
    HostArray array;
    std::string stored_name;
    st = read_input_file(spec.path, &array, &stored_name);
    if (!st.ok()) return fail(st);
    std::string name = spec.name;
    if (name.empty()) {
      if (!stored_name.empty() && find_input(*engine, stored_name) >= 0) {
        name = stored_name;
      } else if (engine->num_inputs() == 1) {
        name = engine->tensor(engine->input(0)).name;
      } else {
        return fail(Status(StatusCode::BAD_PARAM, spec.path + ": say which input it feeds (--input NAME=" +
                                                      spec.path + "); the model's inputs are " + input_names(*engine)));
      }
    }
    const int index = find_input(*engine, name);
    if (index < 0) {
      return fail(Status(StatusCode::BAD_PARAM, "--input " + name + "=" + spec.path + ": the model has no input '" +
                                                    name + "'; its inputs are " + input_names(*engine)));
    }
    if (!given.insert(index).second) {
      return fail(Status(StatusCode::BAD_PARAM, "input '" + name + "' is given more than once"));
    }
    const jet::TensorInfo& info = engine->tensor(index);
    std::vector<uint8_t> bytes;
    st = array_to_tensor_bytes(array, info, spec.path, &bytes);
    if (!st.ok()) return fail(st);
    st = copy_to_tensor(opt.backend, ctx->tensor_data(index), bytes.data(), bytes.size());
    if (!st.ok()) return fail(st);
    std::printf("input '%s' %s %s: from %s (%s)\n", printable(info.name).c_str(), format_dims(info.dims).c_str(),
                jet::dtype_name(info.dtype), spec.path.c_str(), array.source_type.c_str());
  }
  // The rest from the seeded generator: input i uses its own stream derived from the seed.
  for (int i = 0; i < engine->num_inputs(); ++i) {
    const int index = engine->input(i);
    if (given.count(index) != 0) continue;
    const jet::TensorInfo& info = engine->tensor(index);
    std::vector<uint8_t> bytes;
    random_tensor_bytes(info, opt.seed ^ (0x5851f42d4c957f2dull * static_cast<uint64_t>(i + 1)), &bytes);
    st = copy_to_tensor(opt.backend, ctx->tensor_data(index), bytes.data(), bytes.size());
    if (!st.ok()) return fail(st);
    const char* range = jet::dtype_is_float(info.dtype) ? "uniform [-1, 1)"
                        : info.dtype == jet::DType::BOOL ? "0 or 1"
                                                         : "integers in [-3, 3]";
    std::printf("input '%s' %s %s: random %s, seed %llu\n", printable(info.name).c_str(),
                format_dims(info.dims).c_str(), jet::dtype_name(info.dtype), range,
                static_cast<unsigned long long>(opt.seed));
  }

  st = ctx->run(nullptr);
  if (st.ok()) st = synchronize(opt.backend, nullptr);
  if (!st.ok()) return fail(st);

  if (!opt.save_dir.empty()) {
    st = make_directory(opt.save_dir);
    if (!st.ok()) return fail(st);
  }
  std::set<std::string> used_files;
  for (int i = 0; i < engine->num_outputs(); ++i) {
    const int index = engine->output(i);
    const jet::TensorInfo& info = engine->tensor(index);
    std::vector<uint8_t> bytes(info.bytes), packed;
    std::vector<float> values;
    st = copy_from_tensor(opt.backend, bytes.data(), ctx->tensor_data(index), bytes.size());
    if (!st.ok()) return fail(st);
    tensor_bytes_to_packed(info, bytes, &packed, &values);

    double sum = 0, abs_sum = 0;
    size_t nonfinite = 0;
    float lo = 0, hi = 0;
    bool first = true;
    for (float v : values) {
      if (!std::isfinite(v)) {
        ++nonfinite;
        continue;
      }
      sum += v;
      abs_sum += std::fabs(v);
      if (first || v < lo) lo = v;
      if (first || v > hi) hi = v;
      first = false;
    }
    const double mean_abs = values.empty() ? 0.0 : abs_sum / static_cast<double>(values.size());
    std::string head;
    for (size_t k = 0; k < values.size() && k < 4; ++k) head += (k > 0 ? ", " : "") + short_float(values[k]);
    char hash[32];
    std::snprintf(hash, sizeof(hash), "%016llx",
                  static_cast<unsigned long long>(jet::model_checksum(packed.data(), packed.size())));
    std::printf("output '%s' %s %s: sum %s mean_abs %s min %s max %s nonfinite %zu first [%s] hash %s\n",
                printable(info.name).c_str(), format_dims(info.dims).c_str(), jet::dtype_name(info.dtype),
                short_float(sum).c_str(), short_float(mean_abs).c_str(), short_float(lo).c_str(),
                short_float(hi).c_str(), nonfinite, head.c_str(), hash);
    if (opt.top_k > 0) print_top_k(*engine, info, values, opt.top_k);

    if (!opt.save_dir.empty()) {
      std::string base = sanitize_file_name(info.name);
      std::string file = base;
      for (int k = 2; used_files.count(file) != 0; ++k) file = base + "_" + std::to_string(k);
      used_files.insert(file);
      const std::string path = opt.save_dir + "/" + file + ".npy";
      st = write_npy(path, info.dims, info.dtype, packed.data());
      if (!st.ok()) return fail(st);
      std::printf("  saved %s\n", printable(path).c_str());
    }
  }
  return 0;
}

}  // namespace

static int tool_main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (print_usage_if_help(arg, kUsage)) return 0;
    if (arg == "--device") {
      if (!has_value || !parse_backend(argv[++i], &opt.backend)) return usage_error("--device takes cpu or cuda");
    } else if (arg == "--input") {
      if (!has_value) return usage_error("--input takes NAME=FILE");
      const std::string spec = argv[++i];
      const size_t eq = spec.find('=');
      InputSpec input;
      if (eq == std::string::npos) {
        input.path = spec;
      } else {
        input.name = spec.substr(0, eq);
        input.path = spec.substr(eq + 1);
      }
      if (input.path.empty() || (eq != std::string::npos && input.name.empty())) {
        return usage_error("--input takes NAME=FILE, got '" + spec + "'");
      }
      opt.inputs.push_back(input);
    } else if (arg == "--save-outputs") {
      if (!has_value) return usage_error("--save-outputs takes a directory");
      opt.save_dir = argv[++i];
    } else if (arg == "--seed") {
      if (!has_value || !parse_uint64(argv[++i], &opt.seed)) return usage_error("--seed takes a non-negative integer");
    } else if (arg == "--top-k") {
      if (!has_value || !parse_int64(argv[++i], 1, 1000000, &opt.top_k)) return usage_error("--top-k takes a count >= 1");
    } else if (!opt.model.empty() && !arg.empty() && arg[0] != '-') {
      InputSpec input;  // after the model, a bare FILE is an input, as --input FILE
      input.path = arg;
      opt.inputs.push_back(input);
    } else {
      std::string error;
      if (!take_model_argument(arg, &opt.model, &error)) return usage_error(error);
    }
  }
  if (opt.model.empty()) return usage_error("no model file given");
  return run(opt);
}

// No exception escapes main (cli_common.h run_tool).
int main(int argc, char** argv) { return jet::tools::run_tool("jet-run", tool_main, argc, argv); }
