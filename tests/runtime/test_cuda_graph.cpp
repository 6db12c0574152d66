// CUDA graphs: a captured replay gives the plain run's output bit for bit, again and again with
// new inputs; changing a binding discards the graph; capturing the legacy default stream fails
// cleanly (the context stays in plain mode and still runs). The CUDA cases are skipped, with a
// message, where there is no CUDA device; capture on the CPU backend is NOT_SUPPORTED everywhere.
#include <doctest/doctest.h>

#include "model_util.h"
#include "passes.h"

#if defined(JET_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

using namespace jet;
using namespace jet::test;

namespace {

bool cuda_handle(Handle* h) {
  for (const Handle& c : test_handles()) {
    if (c.backend() == Backend::CUDA) {
      *h = c;
      return true;
    }
  }
  MESSAGE("CUDA graph test skipped: no CUDA device (or no CUDA in this build)");
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

#if defined(JET_HAVE_CUDA)
// Inputs in, run on `stream`, outputs out (synchronizing the stream).
TensorBytes run_on(const Engine& e, ExecutionContext& ctx, const TensorBytes& inputs, cudaStream_t stream) {
  for (const auto& kv : inputs) {
    REQUIRE(cudaMemcpyAsync(ctx.tensor_data(kv.first), kv.second.data(), kv.second.size(),
                            cudaMemcpyHostToDevice, stream) == cudaSuccess);
  }
  REQUIRE_OK(ctx.run(stream));
  TensorBytes out;
  for (int i = 0; i < e.num_outputs(); ++i) {
    const int t = e.output(i);
    Bytes b(e.tensor(t).bytes);
    REQUIRE(cudaMemcpyAsync(b.data(), ctx.tensor_data(t), b.size(), cudaMemcpyDeviceToHost, stream) == cudaSuccess);
    out[t] = std::move(b);
  }
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  return out;
}
#endif

}  // namespace

TEST_CASE("capture is NOT_SUPPORTED on the CPU backend") {
  std::shared_ptr<Engine> e = load_engine(models()[0], Handle::cpu());
  std::unique_ptr<ExecutionContext> ctx;
  REQUIRE_OK(e->create_context(&ctx));
  const Status st = ctx->capture(nullptr);
  CHECK(st.code() == StatusCode::NOT_SUPPORTED);
  CHECK(!st.message().empty());
  CHECK_FALSE(ctx->has_graph());
  REQUIRE_OK(ctx->run());
}

TEST_CASE("CUDA: graph replays equal plain runs bit for bit, with new inputs every time") {
  Handle h;
  if (!cuda_handle(&h)) return;
#if defined(JET_HAVE_CUDA)
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  for (const Bytes& bytes : models()) {
    std::shared_ptr<Engine> e = load_engine(bytes, h);
    std::unique_ptr<ExecutionContext> plain, graph;
    REQUIRE_OK(e->create_context(&plain));
    REQUIRE_OK(e->create_context(&graph));
    const TensorBytes first = random_inputs(*e);
    const TensorBytes want_first = run_on(*e, *plain, first, stream);
    for (const auto& kv : first) {
      REQUIRE(cudaMemcpy(graph->tensor_data(kv.first), kv.second.data(), kv.second.size(), cudaMemcpyHostToDevice) ==
              cudaSuccess);
    }
    REQUIRE_OK(graph->capture(stream));
    REQUIRE(graph->has_graph());
    check_identical(run_on(*e, *graph, first, stream), want_first, "first replay");
    for (int i = 0; i < 5; ++i) {
      const TensorBytes in = random_inputs(*e);
      check_identical(run_on(*e, *graph, in, stream), run_on(*e, *plain, in, stream), "replay with new inputs");
      CHECK(graph->has_graph());
    }
    // Replays without copies in between keep giving the same output.
    const TensorBytes in = random_inputs(*e);
    const TensorBytes want = run_on(*e, *plain, in, stream);
    for (int i = 0; i < 10; ++i) REQUIRE_OK(graph->run(stream));
    check_identical(run_on(*e, *graph, in, stream), want, "after repeated replays");
  }
  cudaStreamDestroy(stream);
#endif
}

TEST_CASE("CUDA: changing a binding discards the graph; the context keeps running correctly") {
  Handle h;
  if (!cuda_handle(&h)) return;
#if defined(JET_HAVE_CUDA)
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  std::shared_ptr<Engine> e = load_engine(models()[0], h);
  std::unique_ptr<ExecutionContext> plain, ctx;
  REQUIRE_OK(e->create_context(&plain));
  REQUIRE_OK(e->create_context(&ctx));
  const TensorBytes in = random_inputs(*e);
  const TensorBytes want = run_on(*e, *plain, in, stream);
  REQUIRE_OK(ctx->capture(stream));
  REQUIRE(ctx->has_graph());
  const int out = e->output(0);
  BackendBuffer bound(Backend::CUDA, e->tensor(out).bytes);
  REQUIRE_OK(ctx->bind_tensor(out, bound.get()));
  CHECK_FALSE(ctx->has_graph());
  CHECK(ctx->tensor_data(out) == bound.get());
  check_identical(run_on(*e, *ctx, in, stream), want, "plain run after the binding changed");
  // Capture again with the binding: the replay writes the bound buffer.
  REQUIRE_OK(ctx->capture(stream));
  REQUIRE(ctx->has_graph());
  REQUIRE(cudaMemsetAsync(bound.get(), 0, e->tensor(out).bytes, stream) == cudaSuccess);
  check_identical(run_on(*e, *ctx, in, stream), want, "replay into the bound buffer");
  // Binding the same pointer again is no change: the graph stays.
  REQUIRE_OK(ctx->bind_tensor(out, bound.get()));
  CHECK(ctx->has_graph());
  REQUIRE_OK(ctx->bind_tensor(out, nullptr));
  CHECK_FALSE(ctx->has_graph());
  // A host pointer cannot be bound on CUDA.
  std::vector<uint8_t> host(e->tensor(out).bytes + 256);
  void* aligned = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(host.data()) + 255) / 256 * 256);
  const Status st = ctx->bind_tensor(out, aligned);
  INFO(st.to_string());
  CHECK_FALSE(st.ok());
  cudaStreamDestroy(stream);
#endif
}

TEST_CASE("CUDA: capturing the legacy default stream fails cleanly and the context stays usable") {
  Handle h;
  if (!cuda_handle(&h)) return;
#if defined(JET_HAVE_CUDA)
  std::shared_ptr<Engine> e = load_engine(models()[0], h);
  std::unique_ptr<ExecutionContext> plain, ctx;
  REQUIRE_OK(e->create_context(&plain));
  REQUIRE_OK(e->create_context(&ctx));
  const TensorBytes in = random_inputs(*e);
  const TensorBytes want = run_context(*e, *plain, in);
  const Status st = ctx->capture(nullptr);  // the legacy default stream cannot be captured
  INFO(st.to_string());
  CHECK_FALSE(st.ok());
  CHECK(st.message().find("capture") != std::string::npos);
  CHECK_FALSE(ctx->has_graph());
  CHECK(cudaGetLastError() == cudaSuccess);  // no error left behind for the caller
  check_identical(run_context(*e, *ctx, in), want, "plain run after the failed capture");
  // And a real capture still works afterwards.
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  REQUIRE_OK(ctx->capture(stream));
  CHECK(ctx->has_graph());
  check_identical(run_on(*e, *ctx, in, stream), want, "replay after a failed capture");
  cudaStreamDestroy(stream);
#endif
}
