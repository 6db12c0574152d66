// libFuzzer target for the model loader: any byte string given to jet::Engine::load must give a
// Status, never a crash, an out-of-bounds access, undefined behaviour or a leak. When the loader
// accepts the bytes, one inference runs on the CPU backend: the loader promises that what it
// accepts is safe to run, so run() must not touch memory outside the arena, the weights or the
// workspace (ASan watches every one of them: they are all heap blocks here).
//
// Built by tests/fuzz/CMakeLists.txt with clang -fsanitize=fuzzer,address,undefined; driven by
// scripts/fuzz.sh, which also generates the seed corpus (make_seeds.cpp) and the dictionary.
//
// What counts as a finding (besides the sanitizers' reports): an INTERNAL_ERROR status (jet's
// "this is a bug"), a load that succeeds with checksum verification but fails without it, and
// a context or run() that fails on a model the loader accepted (a check the loader is missing).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "fuzz_common.h"
#include "jet/runtime.h"

namespace {

// Runs cost bounds: loaded models bigger than this are only loaded, not run, so that every
// execution stays in the millisecond range (libFuzzer needs many executions per second).
constexpr size_t kMaxContextBytes = size_t(64) << 20;
constexpr double kMaxFlops = 1e8;

[[noreturn]] void finding(const char* what, const jet::Status& st) { jet::fuzz::finding("fuzz_loader", what, st); }

void check_not_internal(const char* what, const jet::Status& st) {
  jet::fuzz::check_not_internal("fuzz_loader", what, st);
}

jet::Status load(const uint8_t* data, size_t size, bool verify_checksum,
                 std::shared_ptr<jet::Engine>* engine) {
  jet::LoadOptions options;
  options.backend = jet::Backend::CPU;
  options.verify_checksum = verify_checksum;
  return jet::Engine::load(data, size, options, engine);
}

// Reads everything the engine reports (the introspection paths of jet-inspect), so that a field
// the loader left inconsistent is touched under ASan too.
double inspect(const jet::Engine& e) {
  double flops = 0;
  for (int i = 0; i < e.num_ops(); ++i) {
    const jet::OpInfo& op = e.op(i);
    for (int t : op.inputs) (void)e.tensor(t).name.size();
    for (int t : op.outputs) (void)e.tensor(t).name.size();
    flops += op.flops;
  }
  for (int i = 0; i < e.num_inputs(); ++i) (void)e.tensor(e.input(i)).dims.size();
  for (int i = 0; i < e.num_outputs(); ++i) (void)e.tensor(e.output(i)).dims.size();
  if (e.input(e.num_inputs()) != -1 || e.output(-1) != -1) {
    finding("input()/output() out of range did not return -1", jet::Status());
  }
  for (int t = 0; t < e.num_tensors(); ++t) {
    const jet::TensorInfo& info = e.tensor(t);
    if (e.find_tensor(info.name) < 0) finding("find_tensor misses a tensor's own name", jet::Status());
  }
  (void)e.summary().labels.size();
  return flops;
}

// Finite, varied input values in the tensor's dtype (f16 through jet::half).
void fill_input(const jet::TensorInfo& info, void* data) {
  const size_t n = info.bytes / jet::dtype_size(info.dtype);
  for (size_t i = 0; i < n; ++i) {
    const float v = static_cast<float>(i % 7) * 0.25f - 0.75f;
    if (info.dtype == jet::DType::F16) {
      const jet::half h(v);
      std::memcpy(static_cast<char*>(data) + i * sizeof(h), &h, sizeof(h));
    } else {
      std::memcpy(static_cast<char*>(data) + i * sizeof(v), &v, sizeof(v));
    }
  }
}

// JET_FUZZ_EXPECT_VALID=1 (scripts/fuzz.sh, on the seeds before fuzzing): every input must load
// and run. Otherwise a loader that rejected the seeds would leave only its error paths fuzzed.
bool expect_valid() {
  static const bool on = [] {
    const char* s = std::getenv("JET_FUZZ_EXPECT_VALID");
    return s && std::strcmp(s, "1") == 0;
  }();
  return on;
}

void run_once(const jet::Engine& engine, double flops) {
  if (engine.context_memory_size() > kMaxContextBytes || flops > kMaxFlops) {
    if (expect_valid()) finding("a seed is above the run cost bounds (not run)", jet::Status());
    return;
  }
  std::unique_ptr<jet::ExecutionContext> ctx;
  jet::Status st = engine.create_context(&ctx);
  if (!st.ok()) finding("create_context failed on a model the loader accepted", st);
  for (int i = 0; i < engine.num_inputs(); ++i) {
    const int t = engine.input(i);
    void* p = ctx->tensor_data(t);
    if (!p) finding("tensor_data is null for a graph input", jet::Status());
    fill_input(engine.tensor(t), p);
  }
  st = ctx->run();
  if (!st.ok()) finding("run() failed on a model the loader accepted", st);
  if (expect_valid()) {
    std::fprintf(stderr, "fuzz_loader: loaded and ran: %d ops, %zu context bytes, %.0f flops\n",
                 engine.num_ops(), engine.context_memory_size(), flops);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The main path: no checksum, so that mutated bytes reach the structural and semantic checks
  // (with verification nearly every mutation would stop at the checksum).
  std::shared_ptr<jet::Engine> engine;
  const jet::Status st = load(data, size, false, &engine);
  check_not_internal("load", st);
  if (expect_valid() && !st.ok()) finding("a seed does not load", st);
  if (st.ok() != (engine != nullptr)) finding("load's status and engine disagree", st);

  // One input in four is also loaded with verification: that covers the footer and checksum
  // code, and a verified load must never succeed where the unverified one failed. The choice is
  // a middle byte (weight bytes in the seeds: random, so some valid seeds take this path too).
  if (size > 0 && (data[size / 2] & 3) == 0) {
    std::shared_ptr<jet::Engine> verified;
    const jet::Status vst = load(data, size, true, &verified);
    check_not_internal("load (verify_checksum)", vst);
    if (vst.ok() && !st.ok()) finding("verified load succeeded where the unverified one failed", st);
  }

  if (engine) run_once(*engine, inspect(*engine));
  return 0;
}
