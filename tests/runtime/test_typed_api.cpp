// The typed input/output API: ExecutionContext::bind_tensor(.., dtype), copy_input, copy_output and
// their C forms check the dtype (and, for copies, the byte count) against the tensor, so that
// float32 bytes given to a float16 input are an error naming both dtypes instead of garbage. The
// copies give the same results as writing the context's memory directly.
#include <doctest/doctest.h>

#include <cstring>

#if defined(JET_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

#include "jet/runtime_c.h"
#include "model_util.h"
#include "passes.h"

using namespace jet;
using namespace jet::test;

namespace {

// tiny_cnn with fp16 storage; `io_f16`: its graph inputs and outputs in half too.
ir::Graph tiny_f16(bool io_f16) {
  ir::Graph g;
  REQUIRE_OK(tiny_cnn(tiny_cnn_options(static_cast<uint64_t>(uniform_int(1, 1 << 30))), &g));
  REQUIRE_OK(convert_precision(&g, DType::F16, io_f16));
  return g;
}

}  // namespace

TEST_CASE("typed API: a dtype mismatch is an error naming both dtypes, on every backend") {
  const Bytes f16_io = model_bytes(tiny_f16(true));
  const Bytes f32_io = model_bytes(tiny_f16(false));
  for (const Handle& h : test_handles()) {
    INFO(backend_name(h));
    std::shared_ptr<Engine> half_engine = load_engine(f16_io, h);
    std::shared_ptr<Engine> float_engine = load_engine(f32_io, h);
    std::unique_ptr<ExecutionContext> half_ctx, float_ctx;
    REQUIRE_OK(half_engine->create_context(&half_ctx));
    REQUIRE_OK(float_engine->create_context(&float_ctx));

    const int in16 = half_engine->input(0), out16 = half_engine->output(0);
    const int in32 = float_engine->input(0);
    REQUIRE(half_engine->tensor(in16).dtype == DType::F16);
    REQUIRE(half_engine->tensor(out16).dtype == DType::F16);
    REQUIRE(float_engine->tensor(in32).dtype == DType::F32);

    // Float32 bytes for the half input: the byte count of an f32 tensor of the same shape.
    const size_t elements = half_engine->tensor(in16).bytes / 2;
    std::vector<float> floats(elements, 0.5f);
    REQUIRE_FAILS_WITH(half_ctx->copy_input(in16, floats.data(), elements * 4, DType::F32), "f16");
    REQUIRE_FAILS_WITH(half_ctx->copy_input(in16, floats.data(), elements * 4, DType::F32), "f32");
    // Right dtype, wrong size: both sizes named.
    REQUIRE_FAILS_WITH(half_ctx->copy_input(in16, floats.data(), elements * 4, DType::F16),
                       std::to_string(elements * 2) + " bytes, but " + std::to_string(elements * 4));
    // The other way round.
    const size_t bytes32 = float_engine->tensor(in32).bytes;
    std::vector<uint8_t> halves(bytes32 / 2);
    REQUIRE_FAILS_WITH(float_ctx->copy_input(in32, halves.data(), halves.size(), DType::F16),
                       "is f32, but the data is f16");
    // Outputs: copy_output checks the same way; copy_input refuses an output and vice versa.
    std::vector<uint8_t> out(half_engine->tensor(out16).bytes);
    REQUIRE_FAILS_WITH(half_ctx->copy_output(out16, out.data(), out.size(), DType::F32), "is f16, but the data is f32");
    REQUIRE_FAILS_WITH(half_ctx->copy_input(out16, out.data(), out.size(), DType::F16), "is not a graph input");
    REQUIRE_FAILS_WITH(half_ctx->copy_output(in16, out.data(), out.size(), DType::F16), "is not a graph output");
    REQUIRE_FAILS_WITH(half_ctx->copy_input(-1, out.data(), out.size(), DType::F16), "out of range");
    REQUIRE_FAILS_WITH(half_ctx->copy_input(in16, out.data(), out.size(), static_cast<DType>(7)), "not a DType");

    // Typed binding checks before binding: the binding stays as it was.
    BackendBuffer buffer(h.backend(), half_engine->tensor(in16).bytes);
    void* before = half_ctx->tensor_data(in16);
    REQUIRE_FAILS_WITH(half_ctx->bind_tensor(in16, buffer.get(), DType::F32), "is f16, but the data is f32");
    CHECK(half_ctx->tensor_data(in16) == before);
    const std::string in_name = half_engine->tensor(in16).name;
    REQUIRE_FAILS_WITH(half_ctx->bind_tensor(in_name, buffer.get(), DType::F32), "is f16, but the data is f32");
    REQUIRE_OK(half_ctx->bind_tensor(in_name, buffer.get(), DType::F16));
    CHECK(half_ctx->tensor_data(in16) == buffer.get());
    REQUIRE_OK(half_ctx->bind_tensor(in16, nullptr, DType::F16));
    CHECK(half_ctx->tensor_data(in16) == before);

    // The C API says the same.
    jet_engine_t* c_engine = nullptr;
    REQUIRE(jet_engine_load_memory(f16_io.data(), f16_io.size(),
                                   h.backend() == Backend::CPU ? JET_BACKEND_CPU : JET_BACKEND_CUDA, 0,
                                   &c_engine) == JET_SUCCESS);
    jet_context_t* c_ctx = nullptr;
    REQUIRE(jet_context_create(c_engine, &c_ctx) == JET_SUCCESS);
    CHECK(jet_context_copy_input(c_ctx, in16, floats.data(), elements * 4, JET_DTYPE_F32, nullptr) == JET_BAD_PARAM);
    CHECK(std::string(jet_last_error()).find("is f16, but the data is f32") != std::string::npos);
    CHECK(jet_context_bind_typed(c_ctx, in16, buffer.get(), JET_DTYPE_F32) == JET_BAD_PARAM);
    CHECK(std::string(jet_last_error()).find("is f16, but the data is f32") != std::string::npos);
    CHECK(jet_context_copy_output(c_ctx, out16, out.data(), out.size(), JET_DTYPE_F32, nullptr) == JET_BAD_PARAM);
    CHECK(jet_context_copy_input(nullptr, in16, floats.data(), 4, JET_DTYPE_F32, nullptr) == JET_BAD_PARAM);
    CHECK(jet_context_bind_typed(c_ctx, in16, buffer.get(), JET_DTYPE_F16) == JET_SUCCESS);
    jet_context_free(c_ctx);
    jet_engine_free(c_engine);
  }
}

TEST_CASE("typed API: copy_input / copy_output give what direct memory access gives") {
  for (bool io_f16 : {false, true}) {
    const Bytes bytes = model_bytes(tiny_f16(io_f16));
    for (const Handle& h : test_handles()) {
      INFO(backend_name(h) << (io_f16 ? " f16 io" : " f32 io"));
      std::shared_ptr<Engine> e = load_engine(bytes, h);
      std::unique_ptr<ExecutionContext> direct, typed;
      REQUIRE_OK(e->create_context(&direct));
      REQUIRE_OK(e->create_context(&typed));
      const TensorBytes in = random_inputs(*e);
      const TensorBytes want = run_context(*e, *direct, in);

      for (const auto& kv : in) {
        REQUIRE_OK(typed->copy_input(kv.first, kv.second.data(), kv.second.size(), e->tensor(kv.first).dtype));
      }
      REQUIRE_OK(typed->run(nullptr));
      TensorBytes got;
      for (int i = 0; i < e->num_outputs(); ++i) {
        const int t = e->output(i);
        Bytes out(e->tensor(t).bytes, 0xff);
        REQUIRE_OK(typed->copy_output(t, out.data(), out.size(), e->tensor(t).dtype));
        got[t] = out;
      }
#if defined(JET_HAVE_CUDA)
      if (h.backend() == Backend::CUDA) REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
#endif
      check_identical(got, want, "copy_output vs direct");
    }
  }
}

TEST_CASE("typed API: int64 and bool inputs and outputs, exact beyond float's integers, on every backend") {
  // ids (i64 [4]) -> hit = Equal(ids, 2^60 + 1) (bool), both = Concat(ids, ids) (i64),
  // pick = Where(mask, ids, -1) with mask a bool input.
  ir::Graph g;
  int ids = -1, mask = -1, big = -1, neg = -1, hit = -1, both = -1, pick = -1;
  REQUIRE_OK(g.add_input("ids", DType::I64, {4}, &ids));
  REQUIRE_OK(g.add_input("mask", DType::BOOL, {4}, &mask));
  const int64_t b = (int64_t(1) << 60) + 1;
  REQUIRE_OK(g.add_constant("big", DType::I64, {1}, &big));
  g.tensors[big].int_data = {b};
  REQUIRE_OK(g.add_constant("neg", DType::I64, {1}, &neg));
  g.tensors[neg].int_data = {-1};
  REQUIRE_OK(g.logic("hit", LogicOp::EQUAL, ids, big, &hit));
  REQUIRE_OK(g.concat("both", {ids, ids}, 0, &both));
  REQUIRE_OK(g.where("pick", mask, ids, neg, &pick));
  REQUIRE_OK(g.mark_output(hit));
  REQUIRE_OK(g.mark_output(both));
  REQUIRE_OK(g.mark_output(pick));
  const Bytes bytes = model_bytes(g);
  for (const Handle& h : test_handles()) {
    INFO(backend_name(h));
    std::shared_ptr<Engine> e = load_engine(bytes, h);
    std::unique_ptr<ExecutionContext> ctx;
    REQUIRE_OK(e->create_context(&ctx));
    const int in_ids = e->find_tensor("ids"), in_mask = e->find_tensor("mask");
    REQUIRE(e->tensor(in_ids).dtype == DType::I64);
    REQUIRE(e->tensor(in_mask).dtype == DType::BOOL);
    const int64_t idv[4] = {b, b - 1, 7, -(int64_t(1) << 62)};
    const uint8_t mv[4] = {1, 0, 1, 1};
    // Float data for an integer input is refused, naming both dtypes.
    std::vector<float> f(8);
    REQUIRE_FAILS_WITH(ctx->copy_input(in_ids, f.data(), 32, DType::F32), "i64");
    REQUIRE_OK(ctx->copy_input(in_ids, idv, sizeof idv, DType::I64));
    REQUIRE_OK(ctx->copy_input(in_mask, mv, sizeof mv, DType::BOOL));
    REQUIRE_OK(ctx->run());
    uint8_t hitv[4];
    int64_t bothv[8], pickv[4];
    REQUIRE_OK(ctx->copy_output(e->find_tensor("hit"), hitv, sizeof hitv, DType::BOOL));
    REQUIRE_OK(ctx->copy_output(e->find_tensor("both"), bothv, sizeof bothv, DType::I64));
    REQUIRE_OK(ctx->copy_output(e->find_tensor("pick"), pickv, sizeof pickv, DType::I64));
#if defined(JET_HAVE_CUDA)
    if (h.backend() == Backend::CUDA) REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
#endif
    CHECK(hitv[0] == 1);
    CHECK(hitv[1] == 0);  // 2^60 and 2^60 + 1 are one float: only an integer comparison sees this
    CHECK(hitv[2] == 0);
    CHECK(hitv[3] == 0);
    for (int i = 0; i < 4; ++i) {
      CHECK(bothv[i] == idv[i]);
      CHECK(bothv[4 + i] == idv[i]);
      CHECK(pickv[i] == (mv[i] ? idv[i] : -1));
    }
    // The C API names the new dtypes.
    CHECK(static_cast<int>(e->tensor(in_mask).dtype) == JET_DTYPE_BOOL);
  }
}
