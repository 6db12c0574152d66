// jet_conformance_prepare: the first step of the ONNX conformance harness (docs/conformance.md).
// For every test directory of Debian's libonnx-testdata (model.onnx + test_data_set_0/{input_K,
// output_K}.pb) it imports the model (jet::import_onnx_bytes), writes model.f32.jet and
// model.f16.jet (convert_precision F16 + channels-last, as jet-convert --precision fp16 does),
// converts the runtime inputs and the expected outputs to .npy, and writes OUT/manifest.txt
// (manifest.h). jet_conformance_run then runs the models without any ONNX dependency, here or on
// the GPU machine. Each test is converted in a child process, so that a crash is recorded as
// that test's failure.
//
//   jet_conformance_prepare --out DIR [--testdata DIR] [--suite NAME ...] [--filter TEXT]
//
// Exit status: 0 when the manifest was written (whatever the tests' statuses: the run step
// judges them), 1 when the test data is missing or the output cannot be written, 2 usage.
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "cli_common.h"
#include "host_array.h"
#include "ir.h"
#include "manifest.h"
#include "npy.h"
#include "onnx_import.h"
#include "passes.h"
#include "tensor_proto.h"
#include "write_model.h"

namespace {

using jet::Status;
using jet::StatusCode;
using jet::conformance::ManifestEntry;

const char kDefaultTestData[] = "/usr/share/libonnx-testdata/data";
// "real" holds only data.json files pointing at downloads: listed as not_present.
const char* const kDefaultSuites[] = {"node", "pytorch-converted", "pytorch-operator", "simple", "real"};

const char kUsage[] =
    "usage: jet_conformance_prepare --out DIR [--testdata DIR] [--suite NAME ...] [--filter TEXT]\n"
    "  --out       output directory (created): manifest.txt and one folder per test\n"
    "  --testdata  libonnx-testdata's data folder (default /usr/share/libonnx-testdata/data)\n"
    "  --suite     a sub-folder of it (repeatable; default node, pytorch-converted,\n"
    "              pytorch-operator, simple, real)\n"
    "  --filter    only tests whose suite/name contains TEXT (for debugging)\n";

bool is_directory(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool is_file(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

// Sorted names of the entries of `dir` (no "." / ".."); empty when it cannot be read.
std::vector<std::string> list_directory(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (!d) return names;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// mkdir -p.
Status make_directories(const std::string& path) {
  std::string partial;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    partial = path.substr(0, slash);
    start = slash + 1;
    if (partial.empty() || is_directory(partial)) continue;
    if (mkdir(partial.c_str(), 0777) != 0 && errno != EEXIST) {
      return Status(StatusCode::BAD_PARAM, partial + ": cannot create directory: " + std::strerror(errno));
    }
  }
  return Status::success();
}

bool is_float_type(int32_t elem_type) {
  return elem_type == onnx::TensorProto::FLOAT || elem_type == onnx::TensorProto::FLOAT16;
}

// One runtime input of the ONNX model (a graph input that is no initializer) and its test value.
struct TestInput {
  std::string name;
  const onnx::ValueInfoProto* info = nullptr;
  bool parsed = false;  // the .pb is a TensorProto (sequences and optionals are not)
  onnx::TensorProto value;
};

// One way of importing the test: which inputs become initializers holding their test values.
struct Attempt {
  std::string variant;  // "as-is", "frozen-all-but-first", "frozen-non-float-or-scalar", "frozen-all-but-first-float"
  std::set<std::string> frozen;
  Status status;
  jet::ir::Graph graph;
  jet::ImportReport report;
};

// Imports `model` with the inputs in attempt->frozen turned into initializers holding their
// test values; dynamic dims of the other inputs take the test values' dims.
void run_attempt(const onnx::ModelProto& model, const std::vector<TestInput>& inputs, const std::string& test_dir,
                 Attempt* attempt) {
  onnx::ModelProto edited = model;
  jet::ImportOptions options;
  options.external_data_dir = test_dir;
  for (const TestInput& in : inputs) {
    if (attempt->frozen.count(in.name)) {
      // Kept in graph.input too: valid for every IR version (an input with an initializer is a
      // constant with a default value, and the importer treats it as a constant).
      onnx::TensorProto* t = edited.mutable_graph()->add_initializer();
      *t = in.value;
      t->set_name(in.name);
      continue;
    }
    if (!in.parsed || !in.info->type().has_tensor_type()) continue;
    const onnx::TypeProto_Tensor& tt = in.info->type().tensor_type();
    bool dynamic = !tt.has_shape();
    for (int d = 0; tt.has_shape() && d < tt.shape().dim_size(); ++d) dynamic = dynamic || !tt.shape().dim(d).has_dim_value();
    if (!dynamic) continue;
    // Empty test values (a 0 dim) too: the importer reports empty inputs as unsupported.
    options.input_shapes[in.name] = std::vector<int64_t>(in.value.dims().begin(), in.value.dims().end());
  }
  std::string bytes;
  if (!edited.SerializeToString(&bytes)) {
    attempt->status = Status(StatusCode::INTERNAL_ERROR, "harness: cannot serialize the edited model");
    return;
  }
  attempt->status = jet::import_onnx_bytes(bytes.data(), bytes.size(), options, &attempt->graph, &attempt->report);
}

// "<op type>|<reason>" for each unsupported op (deduplicated), or "(model)|<message>" when the
// importer said NOT_SUPPORTED about the model itself (input types, opset, ...).
std::vector<std::string> blockers(const Attempt& a) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const jet::ImportReport::Unsupported& u : a.report.unsupported) {
    const std::string b = u.op_type + (u.domain.empty() ? "" : " (" + u.domain + ")") + "|" + u.reason;
    if (seen.insert(b).second) out.push_back(b);
  }
  if (out.empty()) out.push_back("(model)|" + a.status.message());
  return out;
}

// Converts the imported graph to both model files.
Status write_models(const jet::ir::Graph& graph, const std::string& out_dir, const std::string& rel_dir,
                    ManifestEntry* entry) {
  jet::WriteOptions wo;
  wo.producer_version = "conformance";
  wo.source_name = "model.onnx";
  Status st = jet::write_model_file(graph, wo, out_dir + "/" + rel_dir + "/model.f32.jet");
  if (st.ok()) {
    entry->add("f32", rel_dir + "/model.f32.jet");
  } else {
    entry->add("f32_error", "write_model: " + st.to_string());
  }
  jet::ir::Graph half = graph;
  st = jet::convert_precision(&half, jet::DType::F16);
  std::string stage = "convert_precision(F16)";
  if (st.ok()) {
    st = jet::set_channels_last(&half);
    stage = "set_channels_last";
  }
  if (st.ok()) {
    st = jet::write_model_file(half, wo, out_dir + "/" + rel_dir + "/model.f16.jet");
    stage = "write_model (f16)";
  }
  if (st.ok()) {
    entry->add("f16", rel_dir + "/model.f16.jet");
  } else {
    entry->add("f16_error", stage + ": " + st.to_string());
  }
  return Status::success();
}

// Reads a .pb test tensor and writes it as a .npy file: integer and bool tensors as int64 (exact),
// the rest as f32.
Status pb_to_npy(const std::string& pb_path, const std::string& npy_path) {
  jet::tools::HostArray array;
  std::string stored_name;
  Status st = jet::tools::read_tensor_proto(pb_path, &array, &stored_name);
  if (!st.ok()) return st;
  if (!array.ints.empty()) return jet::tools::write_npy(npy_path, array.dims, jet::DType::I64, array.ints.data());
  return jet::tools::write_npy(npy_path, array.dims, jet::DType::F32, array.values.data());
}

ManifestEntry prepare_test(const std::string& suite_dir, const std::string& suite, const std::string& test,
                           const std::string& out_dir) {
  ManifestEntry entry;
  entry.name = suite + "/" + test;
  const std::string test_dir = suite_dir + "/" + test;
  const std::string model_path = test_dir + "/model.onnx";
  if (!is_file(model_path)) {
    entry.status = "not_present";
    entry.add("reason", is_file(test_dir + "/data.json")
                            ? "no model.onnx: data.json points to a download (the package holds no model)"
                            : "no model.onnx in the test directory");
    return entry;
  }
  auto failed = [&](const std::string& message) {
    entry.status = "failed";
    entry.fields.clear();
    entry.add("message", message);
    return entry;
  };

  std::vector<std::string> data_sets;
  for (const std::string& name : list_directory(test_dir)) {
    if (name.rfind("test_data_set_", 0) == 0 && is_directory(test_dir + "/" + name)) data_sets.push_back(name);
  }
  if (data_sets.size() != 1 || data_sets[0] != "test_data_set_0") {
    return failed("harness: expected exactly one test_data_set_0, found " + std::to_string(data_sets.size()) +
                  " data sets (extend tests/conformance/prepare.cpp)");
  }
  const std::string data_dir = test_dir + "/test_data_set_0";

  std::vector<uint8_t> model_bytes;
  Status st = jet::tools::read_file_bytes(model_path, &model_bytes);
  if (!st.ok()) return failed("harness: " + st.message());
  onnx::ModelProto model;
  if (!model.ParseFromArray(model_bytes.data(), static_cast<int>(model_bytes.size()))) {
    return failed("harness: model.onnx does not parse as an ONNX ModelProto");
  }

  // Runtime inputs: graph inputs that are no initializers, fed positionally by input_K.pb (as
  // ONNX's backend test runner does).
  std::set<std::string> initializers;
  for (const onnx::TensorProto& t : model.graph().initializer()) initializers.insert(t.name());
  std::vector<TestInput> inputs;
  for (const onnx::ValueInfoProto& vi : model.graph().input()) {
    if (initializers.count(vi.name())) continue;
    TestInput in;
    in.name = vi.name();
    in.info = &vi;
    inputs.push_back(in);
  }
  int pb_inputs = 0, pb_outputs = 0;
  while (is_file(data_dir + "/input_" + std::to_string(pb_inputs) + ".pb")) ++pb_inputs;
  while (is_file(data_dir + "/output_" + std::to_string(pb_outputs) + ".pb")) ++pb_outputs;
  if (pb_inputs != static_cast<int>(inputs.size()) || pb_outputs != model.graph().output_size()) {
    return failed("harness: the test has " + std::to_string(pb_inputs) + " input and " + std::to_string(pb_outputs) +
                  " output files for a model with " + std::to_string(inputs.size()) + " runtime inputs and " +
                  std::to_string(model.graph().output_size()) + " outputs");
  }
  for (int k = 0; k < pb_inputs; ++k) {
    std::vector<uint8_t> bytes;
    st = jet::tools::read_file_bytes(data_dir + "/input_" + std::to_string(k) + ".pb", &bytes);
    if (!st.ok()) return failed("harness: " + st.message());
    // A SequenceProto or OptionalProto may parse as some TensorProto by accident; a tensor input
    // is only trusted when the graph declares a tensor and the data type matches.
    TestInput& in = inputs[static_cast<size_t>(k)];
    in.parsed = in.value.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) && in.info->type().has_tensor_type() &&
                in.value.data_type() == in.info->type().tensor_type().elem_type();
  }

  // Attempts, in order, until one is not NOT_SUPPORTED: the model as it is; where the first input
  // is an integer or bool tensor of rank >= 1, every other input frozen (the integer data computed
  // and its parameters constant, as in real models: OneHot's depth and values); every input that
  // is not a float tensor of rank >= 1 frozen (shapes, axes, indices, bounds: constants in real
  // models); every input but the first float one of rank >= 1 frozen (weights given as inputs).
  // The second comes before the third because the third freezes an integer first input too, and a
  // model whose every input is frozen folds at import without running the op.
  std::vector<Attempt> attempts(1);
  attempts[0].variant = "as-is";
  run_attempt(model, inputs, test_dir, &attempts[0]);
  std::set<std::string> non_float, all_but_first_float, all_but_first;  // non_float: or rank 0
  bool first_float_seen = false;
  bool freezable = true;  // every input to freeze has a tensor value
  for (const TestInput& in : inputs) {
    const bool is_float = in.parsed && is_float_type(in.value.data_type()) && in.value.dims_size() > 0;
    if (!is_float) non_float.insert(in.name);
    if (is_float && !first_float_seen) {
      first_float_seen = true;
    } else {
      all_but_first_float.insert(in.name);
    }
    if (&in != &inputs.front()) all_but_first.insert(in.name);
    if (!in.parsed) freezable = false;
  }
  const bool integer_first = !inputs.empty() && inputs.front().parsed && !is_float_type(inputs.front().value.data_type()) &&
                             inputs.front().value.dims_size() > 0;
  if (attempts.back().status.code() == StatusCode::NOT_SUPPORTED && freezable && integer_first) {
    attempts.emplace_back();
    attempts.back().variant = "frozen-all-but-first";
    attempts.back().frozen = all_but_first;
    run_attempt(model, inputs, test_dir, &attempts.back());
  }
  if (attempts.back().status.code() == StatusCode::NOT_SUPPORTED && freezable && !non_float.empty()) {
    attempts.emplace_back();
    attempts.back().variant = "frozen-non-float-or-scalar";
    attempts.back().frozen = non_float;
    run_attempt(model, inputs, test_dir, &attempts.back());
  }
  if (attempts.back().status.code() == StatusCode::NOT_SUPPORTED && freezable && all_but_first_float != non_float &&
      !all_but_first_float.empty()) {
    attempts.emplace_back();
    attempts.back().variant = "frozen-all-but-first-float";
    attempts.back().frozen = all_but_first_float;
    run_attempt(model, inputs, test_dir, &attempts.back());
  }
  const Attempt& a = attempts.back();
  if (a.status.code() == StatusCode::NOT_SUPPORTED) {
    entry.status = "unsupported";
    entry.add("variant", a.variant);
    entry.add("message", a.status.message());
    for (const std::string& b : blockers(a)) entry.add("blocker", b);
    return entry;
  }
  if (!a.status.ok()) {
    std::string message = "import (" + a.variant + "): " + a.status.to_string();
    return failed(message);
  }

  // Supported: the models, the runtime inputs and the expected outputs.
  const std::string rel_dir = entry.name;
  st = make_directories(out_dir + "/" + rel_dir);
  if (!st.ok()) return failed("harness: " + st.message());
  entry.status = "supported";
  entry.add("variant", a.variant);
  for (const std::string& f : a.frozen) entry.add("frozen", f);
  write_models(a.graph, out_dir, rel_dir, &entry);
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (a.frozen.count(inputs[k].name)) continue;
    const std::string file = rel_dir + "/input_" + std::to_string(k) + ".npy";
    st = pb_to_npy(data_dir + "/input_" + std::to_string(k) + ".pb", out_dir + "/" + file);
    if (!st.ok()) return failed("harness: input " + std::to_string(k) + ": " + st.message());
    entry.add("input", jet::conformance::join_name_file(inputs[k].name, file));
  }
  for (int k = 0; k < pb_outputs; ++k) {
    const std::string file = rel_dir + "/output_" + std::to_string(k) + ".npy";
    st = pb_to_npy(data_dir + "/output_" + std::to_string(k) + ".pb", out_dir + "/" + file);
    if (!st.ok()) return failed("harness: expected output " + std::to_string(k) + ": " + st.message());
    entry.add("output", jet::conformance::join_name_file(model.graph().output(k).name(), file));
  }
  return entry;
}

// prepare_test in a child process: a crash of the importer or the writer (a bug) becomes that
// test's failure, and the other tests still get their lines.
ManifestEntry prepare_isolated(const std::string& suite_dir, const std::string& suite, const std::string& test,
                               const std::string& out_dir) {
  int fds[2];
  if (pipe(fds) != 0) return prepare_test(suite_dir, suite, test, out_dir);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return prepare_test(suite_dir, suite, test, out_dir);
  }
  if (pid == 0) {
    close(fds[0]);
    const std::string line = jet::conformance::format_entry(prepare_test(suite_dir, suite, test, out_dir));
    size_t done = 0;
    while (done < line.size()) {
      const ssize_t n = write(fds[1], line.data() + done, line.size() - done);
      if (n <= 0) _exit(3);
      done += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string line;
  char buf[4096];
  ssize_t n = 0;
  while ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) line.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ManifestEntry entry;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && jet::conformance::parse_entry(line, &entry).ok()) return entry;
  entry = ManifestEntry();
  entry.name = suite + "/" + test;
  entry.status = "failed";
  entry.add("message", WIFSIGNALED(status) ? "crashed during conversion: signal " + std::to_string(WTERMSIG(status)) + " (" +
                                                 strsignal(WTERMSIG(status)) + ")"
                                           : "the conversion process exited abnormally (status " + std::to_string(status) + ")");
  return entry;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir, testdata = kDefaultTestData, filter;
  std::vector<std::string> suites;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (jet::tools::print_usage_if_help(arg, kUsage)) return 0;
    if (arg == "--out" && has_value) {
      out_dir = argv[++i];
    } else if (arg == "--testdata" && has_value) {
      testdata = argv[++i];
    } else if (arg == "--suite" && has_value) {
      suites.push_back(argv[++i]);
    } else if (arg == "--filter" && has_value) {
      filter = argv[++i];
    } else {
      return jet::tools::usage_error("jet_conformance_prepare", kUsage, "bad argument '" + arg + "'");
    }
  }
  if (out_dir.empty()) return jet::tools::usage_error("jet_conformance_prepare", kUsage, "--out DIR is required");
  if (suites.empty()) suites.assign(std::begin(kDefaultSuites), std::end(kDefaultSuites));
  if (!is_directory(testdata)) {
    std::fprintf(stderr,
                 "jet_conformance_prepare: the ONNX test data is not installed (no directory %s): run "
                 "scripts/setup.sh (Debian package libonnx-testdata)\n",
                 testdata.c_str());
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  Status st = make_directories(out_dir);
  if (!st.ok()) {
    std::fprintf(stderr, "jet_conformance_prepare: %s\n", st.message().c_str());
    return 1;
  }
  std::vector<ManifestEntry> entries;
  for (const std::string& suite : suites) {
    const std::string suite_dir = testdata + "/" + suite;
    if (!is_directory(suite_dir)) {
      std::fprintf(stderr, "jet_conformance_prepare: %s is missing: run scripts/setup.sh (libonnx-testdata)\n",
                   suite_dir.c_str());
      return 1;
    }
    for (const std::string& test : list_directory(suite_dir)) {
      if (!is_directory(suite_dir + "/" + test)) continue;
      if (!filter.empty() && (suite + "/" + test).find(filter) == std::string::npos) continue;
      entries.push_back(prepare_isolated(suite_dir, suite, test, out_dir));
    }
  }
  st = jet::conformance::write_manifest(out_dir + "/manifest.txt", entries);
  if (!st.ok()) {
    std::fprintf(stderr, "jet_conformance_prepare: %s\n", st.message().c_str());
    return 1;
  }
  int counts[4] = {0, 0, 0, 0};
  const char* const statuses[4] = {"supported", "unsupported", "failed", "not_present"};
  for (const ManifestEntry& e : entries) {
    for (int s = 0; s < 4; ++s) counts[s] += e.status == statuses[s] ? 1 : 0;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("jet_conformance_prepare: %zu tests from %s -> %s/manifest.txt in %.1f s: %d supported, %d unsupported, "
              "%d conversion failures, %d not present\n",
              entries.size(), testdata.c_str(), out_dir.c_str(), seconds, counts[0], counts[1], counts[2], counts[3]);
  return 0;
}
