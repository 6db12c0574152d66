// libFuzzer target for the ONNX importer and the converter behind it: any byte string given to
// jet::import_onnx_bytes must give a Status, never a crash, an out-of-bounds access, undefined
// behaviour, a leak or an uncaught exception. What the importer accepts goes the whole way that
// jet-convert takes it: the optimization passes, f16 conversion and channels-last layout (on a
// copy), the writer, the loader and, when small, one CPU run of each written model.
//
// Built by tests/fuzz/CMakeLists.txt with clang -fsanitize=fuzzer,address,undefined when the
// importer is; driven by `FUZZ_TARGET=onnx scripts/fuzz.sh`, whose seeds are the models of
// Debian's libonnx-testdata (ONNX's own node and pytorch tests: every op type and opset form).
//
// Findings besides the sanitizers' reports: an INTERNAL_ERROR status anywhere (jet's "this is a
// bug"), and a later stage rejecting what an earlier one accepted: a graph the importer returned
// that the passes or the writer call invalid, or a file the writer wrote that the loader refuses
// (each stage promises valid output).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "ir.h"
#include "fuzz_common.h"
#include "jet/runtime.h"
#include "onnx_import.h"
#include "optimize.h"
#include "passes.h"
#include "write_model.h"

namespace {

// Cost bounds so that every execution stays short: bigger models are converted but not loaded
// (arena) or not run (flops).
constexpr size_t kMaxArenaBytes = size_t(64) << 20;
constexpr double kMaxFlops = 1e7;

[[noreturn]] void finding(const char* what, const jet::Status& st) { jet::fuzz::finding("fuzz_onnx", what, st); }

void check_not_internal(const char* what, const jet::Status& st) {
  jet::fuzz::check_not_internal("fuzz_onnx", what, st);
}

// Writes, loads and (when small) runs one converted graph on the CPU backend.
void write_load_run(const jet::ir::Graph& g, const char* variant) {
  jet::WriteOptions wo;
  wo.producer_version = "fuzz";
  std::vector<uint8_t> file;
  jet::ir::MemoryPlan plan;
  jet::Status st = jet::write_model(g, wo, &file, &plan);
  if (!st.ok()) {
    std::fprintf(stderr, "fuzz_onnx: variant %s\n", variant);
    finding("the writer rejected a graph the importer and passes produced", st);
  }
  if (plan.arena_bytes > kMaxArenaBytes) return;
  jet::LoadOptions lo;
  lo.backend = jet::Backend::CPU;
  std::shared_ptr<jet::Engine> engine;
  st = jet::Engine::load(file.data(), file.size(), lo, &engine);
  if (!st.ok()) {
    std::fprintf(stderr, "fuzz_onnx: variant %s\n", variant);
    finding("the loader refused a file the writer wrote", st);
  }
  double flops = 0;
  for (int i = 0; i < engine->num_ops(); ++i) flops += engine->op(i).flops;
  if (flops > kMaxFlops) return;
  std::unique_ptr<jet::ExecutionContext> ctx;
  st = engine->create_context(&ctx);
  if (!st.ok()) finding("create_context failed on a loaded model", st);
  for (int i = 0; i < engine->num_inputs(); ++i) {
    const jet::TensorInfo& info = engine->tensor(engine->input(i));
    std::memset(ctx->tensor_data(engine->input(i)), 0, info.bytes);  // zeros: finite in f32 and f16
  }
  st = ctx->run();
  if (!st.ok()) finding("run() failed on a model the loader accepted", st);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  jet::ImportOptions options;  // no external data directory: external data is an error
  jet::ir::Graph g;
  jet::ImportReport report;
  jet::Status st = jet::import_onnx_bytes(data, size, options, &g, &report);
  check_not_internal("import_onnx_bytes", st);
  if (!st.ok()) {
    if (!g.nodes.empty() || !g.tensors.empty()) finding("the importer failed but left a partial graph", st);
    return 0;
  }
  st = jet::optimize_graph(&g, jet::OptimizeOptions(), nullptr);
  if (!st.ok()) finding("optimize_graph failed on an imported graph", st);
  write_load_run(g, "fp32 nchw");

  jet::ir::Graph h = g;
  st = jet::convert_precision(&h, jet::DType::F16);
  check_not_internal("convert_precision", st);
  if (st.ok()) {
    st = jet::set_channels_last(&h);
    if (!st.ok()) finding("set_channels_last failed on a converted graph", st);
    write_load_run(h, "fp16 nhwc");
  }
  return 0;
}
