// run() allocates nothing: this executable replaces malloc/calloc/realloc/memalign and every
// operator new with counting versions (tests/common/alloc_counter.cpp, compiled into this
// executable only), warms up, then counts the allocations the test thread makes during 100 runs
// (and 100 profiled runs, and on CUDA 100 graph replays): exactly 0. Device allocations are
// counted through the runtime's single allocation point (runtime/device_memory.h).
//
// Under AddressSanitizer (which owns malloc) the host counting is skipped with a message.
#include <doctest/doctest.h>

#include <cstdlib>
#include <new>

#include "common/alloc_counter.h"
#include "device_memory.h"
#include "model_util.h"
#include "passes.h"

#if defined(JET_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

using namespace jet;
using namespace jet::test;

namespace {

void* volatile g_sink = nullptr;

bool interposed() {
  if (alloc_counting_available()) return true;
  static bool told = false;
  if (!told) MESSAGE("allocation counting skipped: a sanitizer owns malloc in this build");
  told = true;
  return false;
}

std::vector<Bytes> models() {
  ir::Graph a, b;
  REQUIRE_OK(tiny_cnn(tiny_cnn_options(static_cast<uint64_t>(uniform_int(1, 1 << 30))), &a));
  REQUIRE_OK(tiny_cnn(tiny_cnn_options(static_cast<uint64_t>(uniform_int(1, 1 << 30))), &b));
  REQUIRE_OK(convert_precision(&b, DType::F16));
  REQUIRE_OK(set_channels_last(&b));
  return {model_bytes(a), model_bytes(b)};
}

// 100 runs with the counter armed; every run must succeed and none may allocate.
void check_runs_allocate_nothing(ExecutionContext& ctx, cudaStream_t stream, const char* what) {
  INFO(std::string(what));
  bool all_ok = true;
  arm_alloc_counter();
  for (int i = 0; i < 100; ++i) {
    const Status st = ctx.run(stream);
    all_ok = all_ok && st.ok();
  }
  const long count = disarm_alloc_counter();
  CHECK(all_ok);
  CHECK(count == 0);
}

}  // namespace

TEST_CASE("the allocation counter sees allocations (the check below can fail)") {
  if (!interposed()) return;
  arm_alloc_counter();
  g_sink = std::malloc(40);
  std::free(g_sink);
  g_sink = new int[7];
  delete[] static_cast<int*>(g_sink);
  CHECK(disarm_alloc_counter() == 2);
}

TEST_CASE("CPU: 100 runs, 100 profiled runs and runs with bound buffers allocate nothing") {
  if (!interposed()) return;
  for (const Bytes& bytes : models()) {
    std::shared_ptr<Engine> e = load_engine(bytes, Handle::cpu());
    const uint64_t host_before = rt::host_alloc_count();
    std::unique_ptr<ExecutionContext> ctx;
    REQUIRE_OK(e->create_context(&ctx));
    CHECK(rt::host_alloc_count() == host_before + 1);  // the context's one block
    const TensorBytes in = random_inputs(*e);
    run_context(*e, *ctx, in);  // warm-up
    check_runs_allocate_nothing(*ctx, nullptr, "plain runs");

    REQUIRE_OK(ctx->set_profiling(true));
    REQUIRE_OK(ctx->run());
    check_runs_allocate_nothing(*ctx, nullptr, "profiled runs");
    REQUIRE_OK(ctx->set_profiling(false));

    BackendBuffer input(Backend::CPU, e->tensor(e->input(0)).bytes);
    BackendBuffer output(Backend::CPU, e->tensor(e->output(0)).bytes);
    REQUIRE_OK(ctx->bind_tensor(e->input(0), input.get()));
    REQUIRE_OK(ctx->bind_tensor(e->output(0), output.get()));
    copy_to(*e, input.get(), in.begin()->second);
    REQUIRE_OK(ctx->run());
    check_runs_allocate_nothing(*ctx, nullptr, "runs with bound buffers");
    CHECK(rt::host_alloc_count() == host_before + 1);
  }
}

TEST_CASE("a model tuned at load (LoadOptions::tune): the scratch is freed in load, runs allocate nothing") {
  if (!interposed()) return;
  for (const Handle& h : test_handles()) {
    for (const Bytes& bytes : models()) {
      LoadOptions o = load_options(h);
      o.tune = true;
      const uint64_t host_before = rt::host_alloc_count(), device_before = rt::device_alloc_count();
      std::shared_ptr<Engine> e;
      REQUIRE_OK(Engine::load(bytes.data(), bytes.size(), o, &e));
      REQUIRE(e->summary().tuned_at_load);
      std::unique_ptr<ExecutionContext> ctx;
      REQUIRE_OK(e->create_context(&ctx));
      const uint64_t host_after = rt::host_alloc_count(), device_after = rt::device_alloc_count();
      // CPU: the find scratch block, the whole-network runs' block and the context's block.
      // CUDA: the same two scratch blocks on the device, the weights and the context's block.
      if (h.backend() == Backend::CPU) CHECK(host_after - host_before == 3);
      if (h.backend() == Backend::CUDA) CHECK(device_after - device_before == 4);
      const TensorBytes in = random_inputs(*e);
      run_context(*e, *ctx, in);  // warm-up
      check_runs_allocate_nothing(*ctx, nullptr, "runs of a tuned engine");
      CHECK(rt::host_alloc_count() == host_after);
      CHECK(rt::device_alloc_count() == device_after);
    }
  }
}

TEST_CASE("CUDA: 100 runs and 100 graph replays allocate nothing, host or device") {
  bool have_cuda = false;
  for (const Handle& h : test_handles()) have_cuda = have_cuda || h.backend() == Backend::CUDA;
  if (!have_cuda) {
    MESSAGE("CUDA allocation test skipped: no CUDA device (or no CUDA in this build)");
    return;
  }
#if defined(JET_HAVE_CUDA)
  Handle h;
  REQUIRE_OK(Handle::cuda(0, nullptr, &h));
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  for (const Bytes& bytes : models()) {
    std::shared_ptr<Engine> e = load_engine(bytes, h);
    std::unique_ptr<ExecutionContext> ctx;
    REQUIRE_OK(e->create_context(&ctx));
    const TensorBytes in = random_inputs(*e);
    run_context(*e, *ctx, in);  // warm-up (module loading, first launches)
    const uint64_t device_before = rt::device_alloc_count();
    if (interposed()) {
      check_runs_allocate_nothing(*ctx, stream, "plain runs on a stream");
      REQUIRE_OK(ctx->set_profiling(true));
      REQUIRE_OK(ctx->run(stream));
      check_runs_allocate_nothing(*ctx, stream, "profiled runs");
      REQUIRE_OK(ctx->set_profiling(false));
      REQUIRE_OK(ctx->capture(stream));
      REQUIRE(ctx->has_graph());
      REQUIRE_OK(ctx->run(stream));  // first replay
      check_runs_allocate_nothing(*ctx, stream, "graph replays");
    } else {
      for (int i = 0; i < 100; ++i) REQUIRE_OK(ctx->run(stream));
      REQUIRE_OK(ctx->capture(stream));
      for (int i = 0; i < 100; ++i) REQUIRE_OK(ctx->run(stream));
    }
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    CHECK(rt::device_alloc_count() == device_before);
  }
  cudaStreamDestroy(stream);
#endif
}
