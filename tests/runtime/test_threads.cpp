// One engine shared by 4 threads, one context (and on CUDA one stream) per thread, different
// random inputs: every thread's results equal a single-threaded run of its input, bit for bit
// (each context runs the same kernels with the same algorithms on its own memory).
#include <doctest/doctest.h>

#include <cstring>
#include <thread>

#include "model_util.h"
#include "passes.h"

#if defined(JET_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

using namespace jet;
using namespace jet::test;

namespace {

constexpr int kThreads = 4;
constexpr int kIterations = 5;

// What one thread did: a Status per step (no doctest macros off the main thread) and outputs.
struct ThreadResult {
  Status status;
  std::vector<TensorBytes> outputs;  // one per iteration
};

Status copy_in(const Engine& e, void* dst, const Bytes& src, cudaStream_t stream) {
  if (e.backend() == Backend::CPU) {
    std::memcpy(dst, src.data(), src.size());
    return Status();
  }
#if defined(JET_HAVE_CUDA)
  if (cudaMemcpyAsync(dst, src.data(), src.size(), cudaMemcpyHostToDevice, stream) != cudaSuccess) {
    return Status(StatusCode::EXECUTION_FAILED, "cudaMemcpyAsync to the device failed");
  }
  return Status();
#else
  (void)stream;
  return Status(StatusCode::NOT_SUPPORTED, "no CUDA");
#endif
}

Status copy_out(const Engine& e, Bytes* dst, const void* src, cudaStream_t stream) {
  if (e.backend() == Backend::CPU) {
    std::memcpy(dst->data(), src, dst->size());
    return Status();
  }
#if defined(JET_HAVE_CUDA)
  if (cudaMemcpyAsync(dst->data(), src, dst->size(), cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
      cudaStreamSynchronize(stream) != cudaSuccess) {
    return Status(StatusCode::EXECUTION_FAILED, "copying an output back failed");
  }
  return Status();
#else
  (void)stream;
  return Status(StatusCode::NOT_SUPPORTED, "no CUDA");
#endif
}

void thread_body(const Engine* e, const TensorBytes* inputs, ThreadResult* out) {
  cudaStream_t stream = nullptr;
#if defined(JET_HAVE_CUDA)
  if (e->backend() == Backend::CUDA && cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    out->status = Status(StatusCode::EXECUTION_FAILED, "cudaStreamCreate failed");
    return;
  }
#endif
  std::unique_ptr<ExecutionContext> ctx;
  Status st = e->create_context(&ctx);
  for (int it = 0; st.ok() && it < kIterations; ++it) {
    for (const auto& kv : *inputs) {
      if (st.ok()) st = copy_in(*e, ctx->tensor_data(kv.first), kv.second, stream);
    }
    if (st.ok()) st = ctx->run(stream);
    TensorBytes result;
    for (int i = 0; st.ok() && i < e->num_outputs(); ++i) {
      const int t = e->output(i);
      Bytes b(e->tensor(t).bytes);
      st = copy_out(*e, &b, ctx->tensor_data(t), stream);
      result[t] = std::move(b);
    }
    out->outputs.push_back(std::move(result));
  }
  out->status = st;
#if defined(JET_HAVE_CUDA)
  if (stream) cudaStreamDestroy(stream);
#endif
}

}  // namespace

TEST_CASE("4 threads share one engine, one context each, and match single-threaded runs") {
  ir::Graph a, b;
  REQUIRE_OK(tiny_cnn(tiny_cnn_options(static_cast<uint64_t>(uniform_int(1, 1 << 30))), &a));
  REQUIRE_OK(tiny_cnn(tiny_cnn_options(static_cast<uint64_t>(uniform_int(1, 1 << 30))), &b));
  REQUIRE_OK(convert_precision(&b, DType::F16));
  REQUIRE_OK(set_channels_last(&b));
  for (const Bytes& bytes : {model_bytes(a), model_bytes(b)}) {
    for (const Handle& h : test_handles()) {
      INFO(backend_name(h));
      std::shared_ptr<Engine> e = load_engine(bytes, h);
      TensorBytes inputs[kThreads];
      TensorBytes expected[kThreads];
      std::unique_ptr<ExecutionContext> single;
      REQUIRE_OK(e->create_context(&single));
      for (int i = 0; i < kThreads; ++i) {
        inputs[i] = random_inputs(*e);
        expected[i] = run_context(*e, *single, inputs[i]);
      }
      ThreadResult results[kThreads];
      std::vector<std::thread> threads;
      for (int i = 0; i < kThreads; ++i) threads.emplace_back(thread_body, e.get(), &inputs[i], &results[i]);
      for (std::thread& t : threads) t.join();
      for (int i = 0; i < kThreads; ++i) {
        INFO("thread " << i);
        REQUIRE_OK(results[i].status);
        REQUIRE(results[i].outputs.size() == static_cast<size_t>(kIterations));
        for (const TensorBytes& got : results[i].outputs) check_identical(got, expected[i], "thread vs single-threaded run");
      }
    }
  }
}
