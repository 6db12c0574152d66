// jet_conformance_run: the second step of the ONNX conformance harness (docs/conformance.md).
// Reads the manifest jet_conformance_prepare wrote, runs every supported test's model through the
// runtime (jet::Engine) on the chosen device and precision, compares each output with ONNX's
// expected values (compare.h), prints the report and writes a JSON summary. No ONNX dependency:
// it builds wherever the runtime does (the GPU machine included).
//
//   jet_conformance_run --manifest DIR/manifest.txt [--device cpu|cuda] [--precision fp32|fp16]
//                       [--summary FILE.json] [--known-limits FILE] [--filter TEXT]
//                       [--list-unsupported] [--pass-list FILE]
//
// Exit status: 0 when no test failed, 1 when any did (a conversion error other than an
// unsupported op, a runtime error, a wrong shape or a value outside the tolerance), 2 usage or
// an unreadable manifest or known-limits file. A test listed in the known-limits file
// (known_limits.txt: precision limits such as inputs that fp16 cannot tell apart) that fails is
// counted as "limit", with its listed reason; one that passes is counted as passed and reported
// as a stale entry.
//
// --pass-list names the precision's committed list of passing tests (passing_fp32.txt,
// passing_fp16.txt), so that "unsupported" cannot hide a regression: a listed test that does not
// pass (an importer that stops converting it, a known limit, a test gone from the manifest) is a
// failure, and so is a passing test the list lacks (the list is stale: a new op's node tests are
// protected only once listed). With JET_UPDATE_DOCS=1 a CPU run rewrites the list from its passes
// instead (the tests outside --filter keep their lines), as the docs' generated blocks are
// rewritten; a CUDA run only checks it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli_common.h"
#include "compare.h"
#include "jet/runtime.h"
#include "manifest.h"
#include "npy.h"

namespace {

using jet::Status;
using jet::StatusCode;
using jet::conformance::ManifestEntry;

const char kUsage[] =
    "usage: jet_conformance_run --manifest DIR/manifest.txt [--device cpu|cuda] [--precision fp32|fp16]\n"
    "                           [--summary FILE.json] [--known-limits FILE] [--filter TEXT]\n"
    "                           [--list-unsupported] [--pass-list FILE]\n"
    "  --manifest          written by jet_conformance_prepare; file names are relative to its folder\n"
    "  --device            backend (default cpu)\n"
    "  --precision         which model of each test to run: model.f32.jet or model.f16.jet (default fp32)\n"
    "  --summary           machine-readable results (JSON)\n"
    "  --known-limits      tests that cannot pass at a precision, with the reason (known_limits.txt)\n"
    "  --filter            only tests whose name contains TEXT\n"
    "  --list-unsupported  list every unsupported test with its blockers\n"
    "  --pass-list         the tests that must pass at this precision (passing_fp32.txt): a listed test that\n"
    "                      does not pass, or a passing test not listed, fails the run; JET_UPDATE_DOCS=1\n"
    "                      (CPU) rewrites the list instead\n";

struct Outcome {
  std::string name;
  std::string result;  // pass, fail, limit, unsupported, not_present
  std::string reason;  // fail: what went wrong; unsupported / not_present: why
  std::string variant;
  double max_abs_error = 0;
  double worst_ratio = 0;  // largest error / allowed error over the outputs
  bool padded = false;     // an output passed by the padded-rows rule (compare.h)
};

std::string dir_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

// Expected dims equal the engine's, except that an ONNX scalar (rank 0) is [1] in the runtime,
// which has no rank-0 tensors.
bool same_dims(const std::vector<int64_t>& expected, const std::vector<int64_t>& actual) {
  if (expected.empty()) return actual.size() == 1 && actual[0] == 1;
  return expected == actual;
}

// Runs one supported test; returns the failure reason, or "" when every output matches.
std::string run_test(const ManifestEntry& e, const std::string& base, jet::Backend backend, bool fp16,
                     const jet::conformance::Tolerance& tol, Outcome* outcome) {
  const std::string model_key = fp16 ? "f16" : "f32";
  const std::string model = e.get(model_key);
  if (model.empty()) {
    const std::string error = e.get(model_key + "_error");
    return "conversion: " + (error.empty() ? std::string("no ") + model_key + " model in the manifest" : error);
  }
  std::shared_ptr<jet::Engine> engine;
  std::unique_ptr<jet::ExecutionContext> ctx;
  Status st = jet::tools::load_engine(base + "/" + model, backend, &engine, &ctx);
  if (!st.ok()) return "load: " + st.to_string();

  std::set<int> fed;
  for (const std::string& value : e.get_all("input")) {
    std::string name, file;
    st = jet::conformance::split_name_file(value, &name, &file);
    if (!st.ok()) return "manifest: " + st.message();
    const int index = engine->find_tensor(name);
    if (index < 0 || engine->tensor(index).role != jet::TensorRole::INPUT) {
      return "the model has no graph input '" + name + "'";
    }
    jet::tools::HostArray array;
    st = jet::tools::read_npy(base + "/" + file, &array);
    if (!st.ok()) return "input: " + st.message();
    // An ONNX scalar input is [1] in the runtime (as for outputs).
    if (array.dims.empty()) array.dims = {1};
    std::vector<uint8_t> bytes;
    st = jet::tools::array_to_tensor_bytes(array, engine->tensor(index), file, &bytes);
    if (st.ok()) st = jet::tools::copy_to_tensor(backend, ctx->tensor_data(index), bytes.data(), bytes.size());
    if (!st.ok()) return "input '" + name + "': " + st.to_string();
    fed.insert(index);
  }
  if (static_cast<int>(fed.size()) != engine->num_inputs()) {
    return "the model has " + std::to_string(engine->num_inputs()) + " inputs; the test feeds " + std::to_string(fed.size());
  }

  st = ctx->run(nullptr);
  if (st.ok()) st = jet::tools::synchronize(backend, nullptr);
  if (!st.ok()) return "run: " + st.to_string();

  const std::vector<std::string> outputs = e.get_all("output");
  if (static_cast<int>(outputs.size()) != engine->num_outputs()) {
    return "the model has " + std::to_string(engine->num_outputs()) + " outputs; ONNX has " + std::to_string(outputs.size());
  }
  std::string failures;
  for (const std::string& value : outputs) {
    std::string name, file;
    st = jet::conformance::split_name_file(value, &name, &file);
    if (!st.ok()) return "manifest: " + st.message();
    const int index = engine->find_tensor(name);
    if (index < 0 || engine->tensor(index).role != jet::TensorRole::OUTPUT) return "the model has no graph output '" + name + "'";
    const jet::TensorInfo& info = engine->tensor(index);
    jet::tools::HostArray expected;
    st = jet::tools::read_npy(base + "/" + file, &expected);
    if (!st.ok()) return "expected output: " + st.message();
    std::vector<uint8_t> bytes(info.bytes);
    st = jet::tools::copy_from_tensor(backend, bytes.data(), ctx->tensor_data(index), bytes.size());
    if (!st.ok()) return "output '" + name + "': " + st.to_string();
    std::vector<float> actual;
    jet::tools::tensor_bytes_to_packed(info, bytes, nullptr, &actual);
    if (!same_dims(expected.dims, info.dims)) {
      // A fixed-size output padded with rows of -1 (NonMaxSuppression): its valid rows compare.
      int64_t rows = 0;
      const bool integer = info.dtype == jet::DType::I32 || info.dtype == jet::DType::I64;
      if (jet::conformance::padded_rows(expected.dims, info.dims, integer, actual, &rows)) {
        actual.resize(static_cast<size_t>(rows * info.dims[1]));
        outcome->padded = true;
      } else {
        failures += (failures.empty() ? "" : "; ") + std::string("output '") + name + "' has dims " +
                    jet::tools::format_dims(info.dims) + ", expected " + jet::tools::format_dims(expected.dims);
        continue;
      }
    }
    const jet::conformance::Comparison c = jet::conformance::compare_values(expected.values, actual, tol);
    outcome->max_abs_error = std::max(outcome->max_abs_error, c.max_abs_error);
    outcome->worst_ratio = std::max(outcome->worst_ratio, c.worst_ratio);
    if (!c.ok) failures += (failures.empty() ? "" : "; ") + std::string("output '") + name + "': " + c.message;
  }
  return failures;
}

// A reason with quoted names blanked ("input 'W' must be a constant" -> "input '*' must be a
// constant"), so that the histogram groups the same reason across tests.
std::string generic_reason(const std::string& reason) {
  std::string out;
  bool quoted = false;
  for (char c : reason) {
    if (c == '\'') {
      out += quoted ? "*'" : "'";
      quoted = !quoted;
    } else if (!quoted) {
      out += c;
    }
  }
  if (quoted) out += "*";
  const size_t newline = out.find('\n');
  return newline == std::string::npos ? out : out.substr(0, newline);
}

// known_limits.txt: "<fp32|fp16|*> <test name> <reason...>" per line, '#' comments. Fills
// `limits` (test name -> reason) with the lines of `precision`.
Status read_known_limits(const std::string& path, const std::string& precision, std::map<std::string, std::string>* limits) {
  return jet::conformance::for_each_content_line(path, "known-limits file", [&](const std::string& line) {
    const size_t a = line.find(' ');
    const size_t b = a == std::string::npos ? a : line.find(' ', a + 1);
    if (b == std::string::npos || b + 1 >= line.size()) {
      return Status(StatusCode::BAD_PARAM, "expected '<fp32|fp16|*> <test> <reason>'");
    }
    const std::string which = line.substr(0, a);
    if (which != "fp32" && which != "fp16" && which != "*") {
      return Status(StatusCode::BAD_PARAM, "unknown precision '" + which + "'");
    }
    if (which == "*" || which == precision) (*limits)[line.substr(a + 1, b - a - 1)] = line.substr(b + 1);
    return Status::success();
  });
}

// A pass list: one test name ("suite/test") per line, '#' comments.
Status read_pass_list(const std::string& path, std::set<std::string>* names) {
  return jet::conformance::for_each_content_line(path, "pass list", [&](const std::string& line) {
    if (line.find(' ') != std::string::npos) return Status(StatusCode::BAD_PARAM, "expected one test name a line");
    if (!names->insert(line).second) return Status(StatusCode::BAD_PARAM, "'" + line + "' listed twice");
    return Status::success();
  });
}

Status write_pass_list(const std::string& path, const char* precision, const std::set<std::string>& names) {
  std::ofstream f(path, std::ios::trunc);
  f << "# The ONNX conformance tests that pass in " << precision
    << " (docs/conformance.md, \"Pass lists\"). Generated: jet_conformance_run\n"
       "# --pass-list fails when a listed test does not pass or a passing one is missing; JET_UPDATE_DOCS=1\n"
       "# ctest -R 'conformance\\.cpu' rewrites it. Do not edit by hand.\n";
  for (const std::string& n : names) f << n << "\n";
  f.close();
  if (!f) return Status(StatusCode::BAD_PARAM, "cannot write " + path);
  return Status::success();
}

std::string count_text(int n) { return std::to_string(n) + (n == 1 ? " test" : " tests"); }

}  // namespace

// The exit status ctest's SKIP_RETURN_CODE maps to "Skipped" (the automake convention).
const int kSkipped = 77;

int main(int argc, char** argv) {
  std::string manifest_path, summary_path, filter, limits_path, pass_list_path;
  jet::Backend backend = jet::Backend::CPU;
  bool fp16 = false, list_unsupported = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (jet::tools::print_usage_if_help(arg, kUsage)) return 0;
    if (arg == "--manifest" && has_value) {
      manifest_path = argv[++i];
    } else if (arg == "--device" && has_value) {
      if (!jet::tools::parse_backend(argv[++i], &backend)) {
        return jet::tools::usage_error("jet_conformance_run", kUsage, "--device takes cpu or cuda");
      }
    } else if (arg == "--precision" && has_value) {
      const std::string p = argv[++i];
      if (p != "fp32" && p != "fp16") return jet::tools::usage_error("jet_conformance_run", kUsage, "--precision takes fp32 or fp16");
      fp16 = p == "fp16";
    } else if (arg == "--summary" && has_value) {
      summary_path = argv[++i];
    } else if (arg == "--known-limits" && has_value) {
      limits_path = argv[++i];
    } else if (arg == "--filter" && has_value) {
      filter = argv[++i];
    } else if (arg == "--pass-list" && has_value) {
      pass_list_path = argv[++i];
    } else if (arg == "--list-unsupported") {
      list_unsupported = true;
    } else {
      return jet::tools::usage_error("jet_conformance_run", kUsage, "bad argument '" + arg + "'");
    }
  }
  if (manifest_path.empty()) return jet::tools::usage_error("jet_conformance_run", kUsage, "--manifest is required");
  if (backend == jet::Backend::CUDA) {
    // No CUDA device at all (CI, workstations): the CUDA runs belong to the GPU machine. Exit 77,
    // which ctest reports as "Skipped" (SKIP_RETURN_CODE), never as passed. Any other problem
    // with the device (ARCH_MISMATCH, a build without CUDA) is a failure.
    jet::Handle probe;
    const Status dev = jet::Handle::cuda(0, nullptr, &probe);
    if (dev.code() == jet::StatusCode::EXECUTION_FAILED && dev.message().find("no CUDA device") != std::string::npos) {
      std::printf("jet_conformance_run: no usable CUDA device (%s): the CUDA conformance run is skipped here; "
                  "scripts/gpu-check.sh runs it on the GPU machine\n", dev.message().c_str());
      return kSkipped;
    }
    if (!dev.ok()) {
      std::fprintf(stderr, "jet_conformance_run: --device cuda: %s\n", dev.to_string().c_str());
      return 1;
    }
  }
  std::vector<ManifestEntry> entries;
  Status st = jet::conformance::read_manifest(manifest_path, &entries);
  if (!st.ok()) {
    std::fprintf(stderr, "jet_conformance_run: %s\n(write it with jet_conformance_prepare; it needs libonnx-testdata: run "
                 "scripts/setup.sh)\n", st.message().c_str());
    return 2;
  }
  const std::string base = dir_of(manifest_path);
  const jet::conformance::Tolerance tol = fp16 ? jet::conformance::fp16_tolerance() : jet::conformance::fp32_tolerance();
  const char* precision = fp16 ? "fp16" : "fp32";
  std::map<std::string, std::string> limits;
  if (!limits_path.empty()) {
    st = read_known_limits(limits_path, precision, &limits);
    if (!st.ok()) {
      std::fprintf(stderr, "jet_conformance_run: %s\n", st.message().c_str());
      return 2;
    }
  }
  std::set<std::string> pass_list;
  if (!pass_list_path.empty()) {
    st = read_pass_list(pass_list_path, &pass_list);
    if (!st.ok()) {
      std::fprintf(stderr, "jet_conformance_run: %s\n", st.message().c_str());
      return 2;
    }
  }
  const char* update_env = std::getenv("JET_UPDATE_DOCS");
  const bool update_pass_list =
      !pass_list_path.empty() && backend == jet::Backend::CPU && update_env && std::string(update_env) == "1";
  const auto start = std::chrono::steady_clock::now();

  std::vector<Outcome> outcomes;
  // Unsupported: op type -> tests blocked by it, and reason -> count (with an example test).
  std::map<std::string, int> blocked_by_op;
  std::map<std::string, std::map<std::string, int>> reasons_by_op;
  std::map<std::string, int> variants_passed;
  std::vector<std::string> stale_limits;  // listed as a limit, but passed
  for (const ManifestEntry& e : entries) {
    if (!filter.empty() && e.name.find(filter) == std::string::npos) continue;
    Outcome o;
    o.name = e.name;
    o.variant = e.get("variant");
    if (e.status == "supported") {
      o.reason = run_test(e, base, backend, fp16, tol, &o);
      o.result = o.reason.empty() ? "pass" : "fail";
      if (o.reason.empty()) ++variants_passed[o.variant];
      auto limit = limits.find(e.name);
      if (limit != limits.end() && o.result == "fail") {
        o.result = "limit";
        o.reason = limit->second + " (" + o.reason + ")";
      } else if (limit != limits.end()) {
        stale_limits.push_back(e.name);
      }
    } else if (e.status == "unsupported") {
      o.result = "unsupported";
      std::set<std::string> ops;
      for (const std::string& b : e.get_all("blocker")) {
        const size_t bar = b.find('|');
        const std::string op = b.substr(0, bar);
        const std::string reason = bar == std::string::npos ? "" : generic_reason(b.substr(bar + 1));
        if (ops.insert(op).second) ++blocked_by_op[op];
        ++reasons_by_op[op][reason];
        o.reason += (o.reason.empty() ? "" : "; ") + op + ": " + reason;
      }
    } else if (e.status == "failed") {
      o.result = "fail";
      o.reason = "conversion: " + e.get("message");
    } else if (e.status == "not_present") {
      o.result = "not_present";
      o.reason = e.get("reason");
    } else {
      o.result = "fail";
      o.reason = "manifest: unknown status '" + e.status + "'";
    }
    outcomes.push_back(o);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // The pass list against this run (the tests the filter selects): what it lists must pass, what
  // passes must be listed. Its failures are counted apart from the run's own, so that rewriting
  // the list (JET_UPDATE_DOCS=1) still fails on a test that fails.
  std::vector<std::string> pass_list_problems;
  if (!pass_list_path.empty()) {
    std::set<std::string> seen;
    for (const Outcome& o : outcomes) {
      seen.insert(o.name);
      const bool listed = pass_list.count(o.name) == 1;
      if (listed && o.result != "pass") {
        pass_list_problems.push_back(o.name + ": listed as passing, now " + o.result + ": " + o.reason);
      } else if (!listed && o.result == "pass") {
        pass_list_problems.push_back(o.name + ": passes but is not listed (the list is stale)");
      }
    }
    for (const std::string& name : pass_list) {
      if ((filter.empty() || name.find(filter) != std::string::npos) && seen.count(name) == 0) {
        pass_list_problems.push_back(name + ": listed as passing, not in the manifest");
      }
    }
    if (update_pass_list && !pass_list_problems.empty()) {
      std::set<std::string> names;  // the tests outside the filter keep their lines
      for (const std::string& name : pass_list) {
        if (!filter.empty() && name.find(filter) == std::string::npos) names.insert(name);
      }
      for (const Outcome& o : outcomes) {
        if (o.result == "pass") names.insert(o.name);
      }
      st = write_pass_list(pass_list_path, precision, names);
      if (!st.ok()) {
        std::fprintf(stderr, "jet_conformance_run: %s\n", st.message().c_str());
        return 1;
      }
    }
  }

  int passed = 0, failed = 0, limited = 0, unsupported = 0, not_present = 0;
  for (const Outcome& o : outcomes) {
    passed += o.result == "pass";
    limited += o.result == "limit";
    failed += o.result == "fail";
    unsupported += o.result == "unsupported";
    not_present += o.result == "not_present";
  }

  std::printf("ONNX conformance, device %s, precision %s (tolerance: |got - expected| <= %g + %g * max|expected| + %g * |expected|)\n",
              jet::tools::backend_name(backend), precision, tol.atol_min, tol.atol_scale, tol.rtol);
  if (list_unsupported) {
    std::printf("\nunsupported tests:\n");
    for (const Outcome& o : outcomes) {
      if (o.result == "unsupported") std::printf("  %s: %s\n", o.name.c_str(), o.reason.c_str());
    }
  }
  if (not_present > 0) {
    // Grouped by reason: one line each.
    std::map<std::string, std::string> by_reason;
    for (const Outcome& o : outcomes) {
      if (o.result == "not_present") by_reason[o.reason] += (by_reason[o.reason].empty() ? "" : ", ") + o.name;
    }
    std::printf("\nnot present (listed, not run):\n");
    for (const auto& kv : by_reason) std::printf("  %s: %s\n", kv.first.c_str(), kv.second.c_str());
  }
  if (unsupported > 0) {
    std::vector<std::pair<int, std::string>> ops;
    for (const auto& kv : blocked_by_op) ops.emplace_back(-kv.second, kv.first);
    std::sort(ops.begin(), ops.end());
    std::printf("\nunsupported: tests blocked per op type (a test counts once per op type), with the reasons:\n");
    for (const auto& op : ops) {
      std::printf("  %4d  %s\n", -op.first, op.second.c_str());
      std::vector<std::pair<int, std::string>> reasons;
      for (const auto& kv : reasons_by_op[op.second]) reasons.emplace_back(-kv.second, kv.first);
      std::sort(reasons.begin(), reasons.end());
      for (const auto& r : reasons) std::printf("          %3dx %s\n", -r.first, r.second.c_str());
    }
  }
  if (limited > 0 || !stale_limits.empty()) {
    std::printf("\nknown %s limits (%s; not failures):\n", precision, limits_path.c_str());
    for (const Outcome& o : outcomes) {
      if (o.result == "limit") std::printf("  %s: %s\n", o.name.c_str(), o.reason.c_str());
    }
    for (const std::string& name : stale_limits) {
      std::printf("  %s: listed as a limit but PASSED: remove it from the list\n", name.c_str());
    }
  }
  {
    // How close the passing tests come to the tolerance (error / allowed error, worst element).
    std::vector<std::pair<double, std::string>> closest;
    for (const Outcome& o : outcomes) {
      if (o.result == "pass") closest.emplace_back(-o.worst_ratio, o.name);
    }
    std::sort(closest.begin(), closest.end());
    std::printf("\nclosest to the tolerance (error / allowed error):");
    for (size_t i = 0; i < closest.size() && i < 5; ++i) {
      std::printf("%s %s %.3f", i ? "," : "", closest[i].second.c_str(), -closest[i].first);
    }
    std::printf("\n");
  }
  if (!pass_list_problems.empty()) {
    std::printf("\n%s (%s):\n", update_pass_list ? "pass list REWRITTEN" : "PASS LIST FAILURES", pass_list_path.c_str());
    for (const std::string& p : pass_list_problems) std::printf("  %s\n", p.c_str());
    if (!update_pass_list) {
      std::printf("  (a regression, or a change that makes tests pass: JET_UPDATE_DOCS=1 ctest -R 'conformance\\.cpu' "
                  "rewrites the list; review its diff)\n");
    }
  }
  if (failed > 0) {
    std::printf("\nFAILURES:\n");
    for (const Outcome& o : outcomes) {
      if (o.result == "fail") std::printf("  %s [%s]: %s\n", o.name.c_str(), o.variant.c_str(), o.reason.c_str());
    }
  }
  std::string variants;
  for (const auto& kv : variants_passed) variants += (variants.empty() ? "" : ", ") + kv.first + " " + std::to_string(kv.second);
  std::printf("\npassed (by input variant: %s)\n", variants.empty() ? "none" : variants.c_str());
  std::string padded;
  for (const Outcome& o : outcomes) {
    if (o.result == "pass" && o.padded) padded += (padded.empty() ? "" : ", ") + o.name;
  }
  if (!padded.empty()) {
    std::printf("passed with a fixed-size output padded by rows of -1 (docs/onnx.md, NonMaxSuppression): %s\n",
                padded.c_str());
  }
  std::printf("conformance %s %s: %d passed, %d failed, %d known limits, %d unsupported, %d not present (%s in %.1f s)\n",
              jet::tools::backend_name(backend), precision, passed, failed, limited, unsupported, not_present,
              count_text(static_cast<int>(outcomes.size())).c_str(), seconds);
  if (!pass_list_path.empty()) {
    std::printf("pass list %s: %d listed, %s\n", pass_list_path.c_str(), static_cast<int>(pass_list.size()),
                pass_list_problems.empty() ? "as this run"
                : update_pass_list         ? "rewritten from this run"
                                           : (std::to_string(pass_list_problems.size()) + " differences: FAILED").c_str());
  }

  if (!summary_path.empty()) {
    std::ofstream f(summary_path, std::ios::trunc);
    f << "{\n  \"device\": " << jet::tools::json_string(jet::tools::backend_name(backend))
      << ",\n  \"precision\": " << jet::tools::json_string(precision)
      << ",\n  \"tolerance\": {\"rtol\": " << jet::tools::json_number(tol.rtol)
      << ", \"atol_scale\": " << jet::tools::json_number(tol.atol_scale)
      << ", \"atol_min\": " << jet::tools::json_number(tol.atol_min) << "},\n  \"passed\": " << passed
      << ",\n  \"failed\": " << failed << ",\n  \"known_limits\": " << limited << ",\n  \"unsupported\": " << unsupported << ",\n  \"not_present\": " << not_present
      << ",\n  \"pass_list_problems\": " << pass_list_problems.size() << ",\n  \"seconds\": " << jet::tools::json_number(seconds) << ",\n  \"blocked_by_op\": {";
    bool first = true;
    for (const auto& kv : blocked_by_op) {
      f << (first ? "" : ", ") << jet::tools::json_string(kv.first) << ": " << kv.second;
      first = false;
    }
    f << "},\n  \"tests\": [\n";
    for (size_t i = 0; i < outcomes.size(); ++i) {
      const Outcome& o = outcomes[i];
      f << "    {\"name\": " << jet::tools::json_string(o.name) << ", \"result\": " << jet::tools::json_string(o.result)
        << ", \"variant\": " << jet::tools::json_string(o.variant) << ", \"reason\": " << jet::tools::json_string(o.reason)
        << ", \"max_abs_error\": " << jet::tools::json_number(o.max_abs_error)
        << ", \"worst_ratio\": " << jet::tools::json_number(o.worst_ratio) << "}" << (i + 1 < outcomes.size() ? "," : "")
        << "\n";
    }
    f << "  ]\n}\n";
    f.close();
    if (!f) {
      std::fprintf(stderr, "jet_conformance_run: cannot write %s\n", summary_path.c_str());
      return 1;
    }
  }
  return failed > 0 || (!pass_list_problems.empty() && !update_pass_list) ? 1 : 0;
}
