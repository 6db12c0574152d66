// ExecutionContext::run_observed (jet-compare --layers): after op i the observer sees op i's
// output as the op wrote it. Checked against the same model with that tensor made a graph output
// (the plan then never reuses its region): identical bytes on CPU, fp32 1e-5 / fp16 1e-2 on CUDA.
#include <doctest/doctest.h>

#include "model_util.h"
#include "passes.h"

using namespace jet;
using namespace jet::test;

TEST_CASE("run_observed shows every op's output as the op wrote it") {
  for (bool f16 : {false, true}) {
    ir::Graph g;
    REQUIRE_OK(tiny_cnn(tiny_cnn_options(static_cast<uint64_t>(uniform_int(1, 1 << 30))), &g));
    if (f16) REQUIRE_OK(convert_precision(&g, DType::F16));
    const Bytes bytes = model_bytes(g);
    for (const Handle& h : test_handles()) {
      INFO(backend_name(h) << (f16 ? " f16" : " f32"));
      std::shared_ptr<Engine> e = load_engine(bytes, h);
      std::unique_ptr<ExecutionContext> ctx;
      REQUIRE_OK(e->create_context(&ctx));
      const TensorBytes in = random_inputs(*e);
      for (const auto& kv : in) copy_to(*e, ctx->tensor_data(kv.first), kv.second);
      std::vector<int> seen;
      TensorBytes observed;
      REQUIRE_OK(ctx->run_observed(nullptr, [&](int op) {
        seen.push_back(op);
        const int t = e->op(op).outputs[0];
        observed[t] = copy_from(*e, ctx->tensor_data(t), e->tensor(t).bytes);
        return Status();
      }));
      REQUIRE(static_cast<int>(seen.size()) == e->num_ops());
      for (int i = 0; i < e->num_ops(); ++i) CHECK(seen[static_cast<size_t>(i)] == i);

      // Each intermediate tensor made an output of its own model: the same values.
      int compared = 0;
      for (const auto& kv : observed) {
        if (e->tensor(kv.first).role != TensorRole::ACTIVATION) continue;
        ir::Graph marked = g;
        REQUIRE_OK(marked.mark_output(kv.first));  // the writer keeps IR tensor indices
        std::shared_ptr<Engine> m = load_engine(model_bytes(marked), h);
        std::unique_ptr<ExecutionContext> mctx;
        REQUIRE_OK(m->create_context(&mctx));
        const TensorBytes out = run_context(*m, *mctx, in);
        REQUIRE(out.count(kv.first) == 1);
        TensorBytes got, want;
        got[kv.first] = kv.second;
        want[kv.first] = out.at(kv.first);
        if (h.backend() == Backend::CPU) {
          check_identical(got, want, "observed vs marked output");
        } else {
          check_close(*m, got, want, "observed vs marked output");
        }
        ++compared;
      }
      CHECK(compared >= 3);

      // The observer's error stops the pass.
      int calls = 0;
      const Status st = ctx->run_observed(nullptr, [&](int) {
        ++calls;
        return Status(StatusCode::INVALID_VALUE, "observer says stop");
      });
      CHECK(st.code() == StatusCode::INVALID_VALUE);
      CHECK(calls == 1);
    }
  }
}
