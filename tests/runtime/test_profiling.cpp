// Per-layer profiling: off by default, one entry per op (names and types as OpInfo says) with
// non-negative times after a profiled run, errors when asked too early, and on CUDA profiled runs
// are plain runs that leave a captured graph in place.
#include <doctest/doctest.h>

#include <cmath>

#include "model_util.h"

#if defined(JET_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

using namespace jet;
using namespace jet::test;

namespace {

void check_layer_times(const Engine& e, const ExecutionContext& ctx) {
  std::vector<LayerTime> times;
  REQUIRE_OK(ctx.layer_times(&times));
  REQUIRE(times.size() == static_cast<size_t>(e.num_ops()));
  double total = 0;
  for (size_t i = 0; i < times.size(); ++i) {
    INFO("op " << i);
    CHECK(times[i].op == static_cast<int>(i));
    CHECK(times[i].name == e.op(static_cast<int>(i)).name);
    CHECK(times[i].type == e.op(static_cast<int>(i)).type);
    CHECK(std::isfinite(times[i].ms));
    CHECK(times[i].ms >= 0);
    total += times[i].ms;
  }
  CHECK(total > 0);  // a profiler that reports nothing is broken
}

}  // namespace

TEST_CASE("layer_times: one entry per op after a profiled run, errors before") {
  ir::Graph g;
  REQUIRE_OK(tiny_cnn(tiny_cnn_options(static_cast<uint64_t>(uniform_int(1, 1 << 30))), &g));
  const Bytes bytes = model_bytes(g);
  for (const Handle& h : test_handles()) {
    INFO(backend_name(h));
    std::shared_ptr<Engine> e = load_engine(bytes, h);
    std::unique_ptr<ExecutionContext> ctx, plain;
    REQUIRE_OK(e->create_context(&ctx));
    REQUIRE_OK(e->create_context(&plain));
    std::vector<LayerTime> times;
    const TensorBytes in = random_inputs(*e);
    run_context(*e, *ctx, in);
    REQUIRE_FAILS_WITH(ctx->layer_times(&times), "profiling is off");
    REQUIRE_OK(ctx->set_profiling(true));
    REQUIRE_OK(ctx->set_profiling(true));  // idempotent
    REQUIRE_FAILS_WITH(ctx->layer_times(&times), "no profiled run");
    // A profiled run computes the same thing.
    check_identical(run_context(*e, *ctx, in), run_context(*e, *plain, in), "profiled run");
    check_layer_times(*e, *ctx);
    REQUIRE_OK(ctx->run());
    check_layer_times(*e, *ctx);
    REQUIRE_OK(ctx->set_profiling(false));
    REQUIRE_FAILS_WITH(ctx->layer_times(&times), "profiling is off");
    REQUIRE_FAILS_WITH(ctx->layer_times(nullptr), "null");
  }
}

TEST_CASE("CUDA: profiled runs are plain runs; the captured graph stays for later runs") {
  Handle h;
  bool found = false;
  for (const Handle& c : test_handles()) {
    if (c.backend() == Backend::CUDA) {
      h = c;
      found = true;
    }
  }
  if (!found) {
    MESSAGE("CUDA profiling test skipped: no CUDA device (or no CUDA in this build)");
    return;
  }
#if defined(JET_HAVE_CUDA)
  ir::Graph g;
  REQUIRE_OK(tiny_cnn(tiny_cnn_options(static_cast<uint64_t>(uniform_int(1, 1 << 30))), &g));
  std::shared_ptr<Engine> e = load_engine(model_bytes(g), h);
  std::unique_ptr<ExecutionContext> ctx, plain;
  REQUIRE_OK(e->create_context(&ctx));
  REQUIRE_OK(e->create_context(&plain));
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  const TensorBytes in = random_inputs(*e);
  const TensorBytes want = run_context(*e, *plain, in);
  for (const auto& kv : in) copy_to(*e, ctx->tensor_data(kv.first), kv.second);
  REQUIRE_OK(ctx->capture(stream));
  REQUIRE(ctx->has_graph());
  REQUIRE_OK(ctx->set_profiling(true));
  REQUIRE_OK(ctx->run(stream));
  check_layer_times(*e, *ctx);
  CHECK(ctx->has_graph());
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  TensorBytes got;
  for (const auto& kv : want) got[kv.first] = copy_from(*e, ctx->tensor_data(kv.first), kv.second.size());
  check_identical(got, want, "profiled run of a context with a graph");
  REQUIRE_OK(ctx->set_profiling(false));
  REQUIRE_OK(ctx->run(stream));  // a replay again
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  cudaStreamDestroy(stream);
#endif
}
