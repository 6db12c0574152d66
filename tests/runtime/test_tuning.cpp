// Convolution choices by measurement: tuning at load (LoadOptions::tune), the stored choices that
// write_tuned_model (jet-tune) records with the device they were measured on, and how a load
// treats them on the same device, on another device, and when they are invalid or refused.
// Everything runs on the CPU backend (CI); the CUDA backend is covered where a GPU is present.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>

#include "engine_impl.h"
#include "model_util.h"
#include "ops.h"  // rt::ConvPrepared
#include "passes.h"
#include "tuning.h"

#if defined(JET_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

using namespace jet;
using namespace jet::test;

namespace {

// Two models with several convolutions (plain, depthwise, strided, with residual): tiny_cnn in
// f32, and in f16 channels-last (the CUDA default).
std::vector<std::pair<const char*, Bytes>> models() {
  ir::Graph a, b;
  REQUIRE_OK(tiny_cnn(tiny_cnn_options(static_cast<uint64_t>(uniform_int(1, 1 << 30))), &a));
  REQUIRE_OK(tiny_cnn(tiny_cnn_options(static_cast<uint64_t>(uniform_int(1, 1 << 30))), &b));
  REQUIRE_OK(convert_precision(&b, DType::F16));
  REQUIRE_OK(set_channels_last(&b));
  return {{"tiny_cnn f32", model_bytes(a)}, {"tiny_cnn f16 channels-last", model_bytes(b)}};
}

std::shared_ptr<Engine> load_with(const Bytes& bytes, LoadOptions o) {
  std::shared_ptr<Engine> e;
  REQUIRE_OK(Engine::load(bytes.data(), bytes.size(), o, &e));
  return e;
}

LoadOptions tuned_options(const Handle& h) {
  LoadOptions o = load_options(h);
  o.tune = true;
  return o;
}

std::vector<int> conv_ops(const Engine& e) {
  std::vector<int> ops;
  for (int i = 0; i < e.num_ops(); ++i) {
    if (e.op(i).type == "Conv") ops.push_back(i);
  }
  return ops;
}

// The (algo, tactic) pairs find_conv_forward_algo reports as runnable for op `i` of `e`, on fresh
// buffers of the op's shapes, within `workspace` bytes.
std::vector<std::pair<ConvAlgo, int32_t>> runnable(const Engine& e, int i, size_t workspace) {
  const rt::PreparedOp& p = e.impl().ops[static_cast<size_t>(i)];
  const Backend b = e.backend();
  BackendBuffer x(b, p.in_descs[0].span_bytes()), w(b, p.in_descs[1].span_bytes());
  BackendBuffer y(b, p.out_desc.span_bytes()), ws(b, std::max<size_t>(workspace, 1));
  std::vector<ConvAlgoPerf> perf(256);
  int n = 0;
  REQUIRE_OK(find_conv_forward_algo(e.impl().handle, p.in_descs[0], x.get(), p.data.as<rt::ConvPrepared>().filter, w.get(),
                                    p.data.as<rt::ConvPrepared>().conv.with_tactic(0), p.out_desc, y.get(), ws.get(), workspace,
                                    static_cast<int>(perf.size()), &n, perf.data()));
  std::vector<std::pair<ConvAlgo, int32_t>> out;
  for (int k = 0; k < n; ++k) {
    if (perf[static_cast<size_t>(k)].status.ok()) out.emplace_back(perf[static_cast<size_t>(k)].algo, perf[static_cast<size_t>(k)].tactic);
  }
  return out;
}

// The same random inputs through both engines; outputs within the project's tolerances.
void check_same_results(const Engine& a, const Engine& b, const char* what) {
  std::unique_ptr<ExecutionContext> ca, cb;
  REQUIRE_OK(a.create_context(&ca));
  REQUIRE_OK(b.create_context(&cb));
  const TensorBytes in = random_inputs(a);
  check_close(a, run_context(b, *cb, in), run_context(a, *ca, in), what);
}

Bytes tuned_file(const Engine& tuned, const Bytes& original) {
  Bytes out;
  REQUIRE_OK(write_tuned_model(tuned, original.data(), original.size(), &out));
  return out;
}

}  // namespace

TEST_CASE("tuning at load runs an algorithm and tactic that find reports, with the untuned run's results") {
  for (const Handle& h : test_handles()) {
    for (const auto& m : models()) {
      INFO(m.first << " on " << (h.backend() == Backend::CPU ? "cpu" : "cuda"));
      std::shared_ptr<Engine> plain = load_engine(m.second, h);
      std::shared_ptr<Engine> tuned = load_with(m.second, tuned_options(h));
      CHECK_FALSE(plain->summary().tuned_at_load);
      CHECK(plain->summary().tuning_ms == 0);
      CHECK(tuned->summary().tuned_at_load);
      CHECK(tuned->summary().tuning_ms > 0);
      CHECK(tuned->summary().notes.empty());
      const std::vector<int> convs = conv_ops(*tuned);
      REQUIRE(convs.size() >= 3);
      size_t largest = 0;
      for (int i : convs) {
        const OpInfo& op = tuned->op(i);
        INFO("op " << i << " " << op.name << ": " << op.algo << "#" << op.tactic);
        CHECK(op.tuned_ms >= 0);
        CHECK(op.heuristic_ms >= 0);   // the heuristic's choice was among the measured ones
        CHECK(plain->op(i).tuned_ms < 0);
        const rt::ConvPrepared& c = tuned->impl().ops[static_cast<size_t>(i)].data.as<rt::ConvPrepared>();
        CHECK(op.algo == conv_algo_name(c.algo));
        CHECK(op.tactic == c.conv.tactic());
        if (h.backend() == Backend::CPU) CHECK(op.tactic == 0);  // no tactics on the CPU backend
        size_t need = 0;
        REQUIRE_OK(conv_forward_workspace_size(h, tuned->impl().ops[static_cast<size_t>(i)].in_descs[0], c.filter,
                                               c.conv, tuned->impl().ops[static_cast<size_t>(i)].out_desc, c.algo, &need));
        CHECK(op.workspace_bytes == need);
        largest = std::max(largest, need);
        const auto ok = runnable(*tuned, i, need);
        CHECK(std::find(ok.begin(), ok.end(), std::make_pair(c.algo, c.conv.tactic())) != ok.end());
      }
      // The context's workspace holds the largest chosen one.
      CHECK(tuned->summary().workspace_bytes >= largest);
      CHECK(tuned->context_memory_size() >= largest);
      check_same_results(*plain, *tuned, m.first);
    }
  }
}

TEST_CASE("tuning keeps to the workspace limit: 0 bytes allows only algorithms without workspace") {
  for (const Handle& h : test_handles()) {
    for (const auto& m : models()) {
      INFO(m.first);
      LoadOptions o = tuned_options(h);
      o.tune_workspace_limit = 0;
      std::shared_ptr<Engine> e = load_with(m.second, o);
      for (int i : conv_ops(*e)) {
        INFO(e->op(i).name << ": " << e->op(i).algo);
        CHECK(e->op(i).workspace_bytes == 0);
        CHECK(e->op(i).tuned_ms >= 0);
      }
      CHECK(e->summary().workspace_bytes == 0);
      check_same_results(*load_engine(m.second, h), *e, m.first);
    }
  }
}

TEST_CASE("tuning keeps to the file's workspace policy (the converter's NO_WORKSPACE / limit)") {
  ir::Graph g;
  REQUIRE_OK(tiny_cnn(tiny_cnn_options(static_cast<uint64_t>(uniform_int(1, 1 << 30))), &g));
  for (const ConvPreference pref : {ConvPreference::NO_WORKSPACE, ConvPreference::SPECIFY_WORKSPACE_LIMIT}) {
    WriteOptions w;
    w.conv_preference = pref;
    w.workspace_limit = 100;  // bytes: below any workspace the CPU algorithms need here
    Bytes bytes;
    REQUIRE_OK(write_model(g, w, &bytes));
    for (const Handle& h : test_handles()) {
      std::shared_ptr<Engine> e = load_with(bytes, tuned_options(h));
      for (int i : conv_ops(*e)) {
        INFO(e->op(i).name << ": " << e->op(i).algo);
        CHECK(e->op(i).workspace_bytes <= 100);
        CHECK(e->op(i).tuned_ms >= 0);
      }
    }
  }
}

TEST_CASE("stored choices round-trip through write_tuned_model and are used on the same device") {
  for (const Handle& h : test_handles()) {
    for (const auto& m : models()) {
      INFO(m.first);
      std::shared_ptr<Engine> tuned = load_with(m.second, tuned_options(h));
      const Bytes file = tuned_file(*tuned, m.second);
      // The container: weights 64-aligned and byte for byte the original's, a valid checksum
      // (the load below verifies it), the device and schema 1.2 recorded.
      const fb::Model* before = fb::GetModel(m.second.data());
      const fb::Model* after = fb::GetModel(file.data());
      REQUIRE(after->buffers()->size() == before->buffers()->size());
      for (flatbuffers::uoffset_t b = 0; b < after->buffers()->size(); ++b) {
        const fb::Buffer* x = before->buffers()->Get(b);
        const fb::Buffer* y = after->buffers()->Get(b);
        CHECK(y->offset() % 64 == 0);
        REQUIRE(y->size() == x->size());
        CHECK(std::memcmp(file.data() + y->offset(), m.second.data() + x->offset(), x->size()) == 0);
      }
      CHECK(after->schema_minor() >= 2);
      REQUIRE(after->tuned_on() != nullptr);
      CHECK(after->tuned_on()->name()->str() == tuned->device_identity().name);
      CHECK(after->file_size() == file.size());

      std::shared_ptr<Engine> loaded = load_engine(file, h);
      const ModelSummary& s = loaded->summary();
      CHECK(s.has_tuned_on);
      CHECK(s.tuned_on.name == (h.backend() == Backend::CPU ? std::string("cpu") : tuned->device_identity().name));
      CHECK(s.stored_choices_used);
      CHECK_FALSE(s.tuned_at_load);
      CHECK(s.notes.empty());
      for (int i : conv_ops(*loaded)) {
        INFO(loaded->op(i).name);
        CHECK(loaded->op(i).algo == tuned->op(i).algo);
        CHECK(loaded->op(i).tactic == tuned->op(i).tactic);
        CHECK(loaded->op(i).workspace_bytes == tuned->op(i).workspace_bytes);
      }
      CHECK(loaded->context_memory_size() == tuned->context_memory_size());
      // The same choices run the same kernels: identical results on the CPU.
      std::unique_ptr<ExecutionContext> ca, cb;
      REQUIRE_OK(tuned->create_context(&ca));
      REQUIRE_OK(loaded->create_context(&cb));
      const TensorBytes in = random_inputs(*tuned);
      if (h.backend() == Backend::CPU) {
        check_identical(run_context(*loaded, *cb, in), run_context(*tuned, *ca, in), m.first);
      } else {
        check_close(*tuned, run_context(*loaded, *cb, in), run_context(*tuned, *ca, in), m.first);
      }
      // Re-tuning a tuned file works (and replaces its choices).
      std::shared_ptr<Engine> again = load_with(file, tuned_options(h));
      CHECK(again->summary().tuned_at_load);
      CHECK_FALSE(again->summary().stored_choices_used);
      CHECK(tuned_file(*again, file).size() == file.size());
    }
  }
}

TEST_CASE("choices tuned on another device are not used: the heuristic runs, said once") {
  const Handle h = Handle::cpu();
  for (const auto& m : models()) {
    INFO(m.first);
    std::shared_ptr<Engine> plain = load_engine(m.second, h);
    const Bytes file = tuned_file(*load_with(m.second, tuned_options(h)), m.second);
    const std::vector<std::function<void(fb::ModelT&)>> elsewhere = {
        [](fb::ModelT& t) { t.tuned_on->name = "NVIDIA Orin"; },
        [](fb::ModelT& t) { t.tuned_on->cc_major = 8; t.tuned_on->cc_minor = 7; },
        [](fb::ModelT& t) { t.tuned_on->cc_minor = 1; },
    };
    for (const auto& edit : elsewhere) {
      // Stored choices the CPU could run but would not pick: IMPLICIT_GEMM everywhere.
      const Bytes other = rebuild_model(file, [&](fb::ModelT& t) {
        edit(t);
        for (auto& op : t.ops) {
          if (op->params.type == fb::OpParams::ConvParams) op->params.AsConvParams()->algo = fb::ConvAlgo::ImplicitGemm;
        }
      });
      std::shared_ptr<Engine> e;
      REQUIRE_OK(load_cpu(other, true, &e));
      const ModelSummary& s = e->summary();
      CHECK(s.has_tuned_on);
      CHECK_FALSE(s.stored_choices_used);
      REQUIRE(s.notes.size() == 1);
      INFO(s.notes[0]);
      CHECK(s.notes[0].find(s.tuned_on.name) != std::string::npos);
      CHECK(s.notes[0].find("heuristic") != std::string::npos);
      for (int i : conv_ops(*e)) {
        CHECK(e->op(i).algo == plain->op(i).algo);  // the heuristic's, not the stored IMPLICIT_GEMM
        CHECK(e->op(i).tactic == 0);
      }
      check_same_results(*plain, *e, m.first);
    }
    // The same edit on the matching device: the stored IMPLICIT_GEMM is used.
    const Bytes here = rebuild_model(file, [](fb::ModelT& t) {
      for (auto& op : t.ops) {
        if (op->params.type == fb::OpParams::ConvParams) op->params.AsConvParams()->algo = fb::ConvAlgo::ImplicitGemm;
      }
    });
    std::shared_ptr<Engine> e;
    REQUIRE_OK(load_cpu(here, true, &e));
    CHECK(e->summary().notes.empty());
    for (int i : conv_ops(*e)) CHECK(e->op(i).algo == std::string(conv_algo_name(ConvAlgo::IMPLICIT_GEMM)));
  }
}

TEST_CASE("a stored choice the backend refuses falls back to the heuristic, said once") {
  const Handle h = Handle::cpu();
  const Bytes original = models()[0].second;
  std::shared_ptr<Engine> plain = load_engine(original, h);
  const Bytes file = tuned_file(*load_with(original, tuned_options(h)), original);
  // Tactic 3 on every convolution: the CPU backend has no tactics and refuses each.
  const Bytes refused = rebuild_model(file, [](fb::ModelT& t) {
    for (auto& op : t.ops) {
      if (op->params.type == fb::OpParams::ConvParams) op->params.AsConvParams()->tactic = 3;
    }
  });
  std::shared_ptr<Engine> e;
  REQUIRE_OK(load_cpu(refused, true, &e));
  const ModelSummary& s = e->summary();
  CHECK(s.stored_choices_used);
  REQUIRE(s.notes.size() == 1);
  INFO(s.notes[0]);
  CHECK(s.notes[0].find("refused") != std::string::npos);
  CHECK(s.notes[0].find(std::to_string(conv_ops(*e).size()) + " convolution") != std::string::npos);
  for (int i : conv_ops(*e)) {
    CHECK(e->op(i).tactic == 0);
    CHECK(e->op(i).algo == plain->op(i).algo);
  }
  check_same_results(*plain, *e, "refused tactics");
  // Without tuned_on a stored tactic means nothing: no note, tactic 0.
  const Bytes untuned = rebuild_model(refused, [](fb::ModelT& t) { t.tuned_on.reset(); });
  REQUIRE_OK(load_cpu(untuned, true, &e));
  CHECK(e->summary().notes.empty());
  CHECK_FALSE(e->summary().has_tuned_on);
  for (int i : conv_ops(*e)) CHECK(e->op(i).tactic == 0);
}

TEST_CASE("invalid stored choices are rejected with a clear error") {
  const Bytes original = models()[0].second;
  const Bytes file = tuned_file(*load_with(original, tuned_options(Handle::cpu())), original);
  auto first_conv = [](fb::ModelT& t) -> fb::ConvParamsT& {
    for (auto& op : t.ops) {
      if (op->params.type == fb::OpParams::ConvParams) return *op->params.AsConvParams();
    }
    FAIL("no convolution");
    return *t.ops[0]->params.AsConvParams();
  };
  expect_rejected(rebuild_model(file, [&](fb::ModelT& t) { first_conv(t).tactic = -1; }), "tactic -1 must be >= 0");
  expect_rejected(rebuild_model(file, [&](fb::ModelT& t) { first_conv(t).algo = static_cast<fb::ConvAlgo>(77); }),
                  "unknown convolution algorithm 77");
  // A negative tactic is invalid on any device, tuned or not.
  expect_rejected(rebuild_model(file,
                                [&](fb::ModelT& t) {
                                  t.tuned_on.reset();
                                  first_conv(t).tactic = -5;
                                }),
                  "tactic -5");
  expect_rejected(rebuild_model(file, [](fb::ModelT& t) { t.tuned_on->name = ""; }), "tuned_on names no valid device");
  expect_rejected(rebuild_model(file, [](fb::ModelT& t) { t.tuned_on->cc_major = -1; }), "tuned_on names no valid device");
}

TEST_CASE("write_tuned_model refuses bytes that are not the engine's model, or of a newer schema") {
  const auto ms = models();
  std::shared_ptr<Engine> tuned = load_with(ms[0].second, tuned_options(Handle::cpu()));
  Bytes out;
  ir::Graph small;
  REQUIRE_OK(resnet18(ZooOptions{}, &small));  // another model: other ops
  const Bytes other = model_bytes(small);
  REQUIRE_FAILS_WITH(write_tuned_model(*tuned, other.data(), other.size(), &out), "not the model");
  CHECK(out.empty());
  const Bytes newer = rebuild_model(ms[0].second, [](fb::ModelT& t) { t.schema_minor = kSchemaMinor + 1; });
  REQUIRE_FAILS_WITH(write_tuned_model(*tuned, newer.data(), newer.size(), &out), "newer than this runtime");
  Bytes broken = ms[0].second;
  broken[broken.size() / 2] ^= 0x40;
  CHECK_FALSE(write_tuned_model(*tuned, broken.data(), broken.size(), &out).ok());
  REQUIRE_FAILS_WITH(write_tuned_model(*tuned, nullptr, 100, &out), "null pointer");
}

TEST_CASE("graph_node_counts: NOT_SUPPORTED on the CPU; on CUDA the captured kernels") {
  for (const Handle& h : test_handles()) {
    const Bytes bytes = models()[1].second;
    std::shared_ptr<Engine> e = load_engine(bytes, h);
    std::unique_ptr<ExecutionContext> ctx;
    REQUIRE_OK(e->create_context(&ctx));
    ExecutionContext::GraphNodeCounts n;
    const Status st = ctx->graph_node_counts(&n);
    CHECK(st.code() == StatusCode::NOT_SUPPORTED);  // no graph yet (CUDA) or no graphs (CPU)
    if (h.backend() != Backend::CUDA) continue;
#if defined(JET_HAVE_CUDA)
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    const TensorBytes in = random_inputs(*e);
    for (const auto& kv : in) copy_to(*e, ctx->tensor_data(kv.first), kv.second);
    const Status cap = ctx->capture(stream);
    if (cap.ok()) {
      REQUIRE_OK(ctx->graph_node_counts(&n));
      // Every convolution launches at least one kernel.
      CHECK(n.kernels >= static_cast<int>(conv_ops(*e).size()));
    } else {
      MESSAGE("capture failed, graph node counts not checked: " << cap.to_string());
    }
    cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
#endif
  }
}

// ---- The choice logic of tuning (runtime/tuning.h), on made-up measurements ------------------

namespace {

ConvAlgoPerf perf_entry(ConvAlgo algo, int32_t tactic, float ms, size_t workspace, bool ran = true) {
  ConvAlgoPerf p;
  p.algo = algo;
  p.tactic = tactic;
  p.time_ms = ran ? ms : -1.f;
  p.workspace_bytes = workspace;
  p.status = ran ? Status() : Status(StatusCode::NOT_SUPPORTED, "does not apply");
  return p;
}

rt::TuningCandidate candidate(ConvAlgo algo, int32_t tactic, size_t workspace) {
  rt::TuningCandidate c;
  c.algo = algo;
  c.tactic = tactic;
  c.workspace_bytes = workspace;
  return c;
}

}  // namespace

TEST_CASE("network_candidates: the untuned choice first, then find's fastest within the ratio, limit and count") {
  const std::vector<ConvAlgoPerf> perf = {
      perf_entry(ConvAlgo::IMPLICIT_PRECOMP_GEMM, 3, 1.0f, 4096),  // fastest alone (split-K, say)
      perf_entry(ConvAlgo::IMPLICIT_PRECOMP_GEMM, 1, 1.1f, 0),
      perf_entry(ConvAlgo::IMPLICIT_PRECOMP_GEMM, 0, 1.2f, 0),     // the untuned choice
      perf_entry(ConvAlgo::GEMM, 0, 1.4f, 1 << 20),
      perf_entry(ConvAlgo::WINOGRAD, 0, 1.6f, 0),                  // over 1.5x the fastest
      perf_entry(ConvAlgo::FFT, 0, 0.f, 0, false),                 // did not run
  };
  const rt::TuningCandidate untuned = candidate(ConvAlgo::IMPLICIT_PRECOMP_GEMM, 0, 0);
  const int n = static_cast<int>(perf.size());

  std::vector<rt::TuningCandidate> c = rt::network_candidates(untuned, perf.data(), n, SIZE_MAX, 3, 1.5f);
  REQUIRE(c.size() == 4);
  CHECK(c[0] == untuned);
  CHECK(c[0].find_ms == doctest::Approx(1.2f));  // its own time alone, from the list
  CHECK(c[1] == candidate(ConvAlgo::IMPLICIT_PRECOMP_GEMM, 3, 4096));
  CHECK(c[2] == candidate(ConvAlgo::IMPLICIT_PRECOMP_GEMM, 1, 0));
  CHECK(c[3] == candidate(ConvAlgo::GEMM, 0, 1 << 20));
  CHECK(c[3].workspace_bytes == size_t(1) << 20);

  // At most max_others besides the untuned choice.
  c = rt::network_candidates(untuned, perf.data(), n, SIZE_MAX, 1, 1.5f);
  REQUIRE(c.size() == 2);
  CHECK(c[1] == candidate(ConvAlgo::IMPLICIT_PRECOMP_GEMM, 3, 4096));

  // The workspace limit: nothing that needs more, and the untuned choice only when it fits.
  c = rt::network_candidates(untuned, perf.data(), n, 0, 3, 1.5f);
  REQUIRE(c.size() == 3);
  CHECK(c[0] == untuned);
  CHECK(c[1] == candidate(ConvAlgo::IMPLICIT_PRECOMP_GEMM, 1, 0));
  CHECK(c[2] == candidate(ConvAlgo::WINOGRAD, 0, 0));  // the ratio is to the fastest that fits (1.1)
  const rt::TuningCandidate big = candidate(ConvAlgo::GEMM, 0, 1 << 20);
  c = rt::network_candidates(big, perf.data(), n, 4096, 3, 1.5f);
  REQUIRE(c.size() == 3);
  CHECK(c[0] == candidate(ConvAlgo::IMPLICIT_PRECOMP_GEMM, 3, 4096));  // find's fastest that fits leads
  for (const rt::TuningCandidate& k : c) CHECK(k.workspace_bytes <= 4096);

  // Nothing that runs within the limit: no candidate.
  const std::vector<ConvAlgoPerf> none = {perf_entry(ConvAlgo::GEMM, 0, 1.f, 100), perf_entry(ConvAlgo::FFT, 0, 0.f, 0, false)};
  CHECK(rt::network_candidates(big, none.data(), 2, 10, 3, 1.5f).empty());
  // No duplicates when find lists the untuned choice first.
  const std::vector<ConvAlgoPerf> dup = {perf_entry(ConvAlgo::IMPLICIT_PRECOMP_GEMM, 0, 1.f, 0),
                                         perf_entry(ConvAlgo::GEMM, 0, 1.2f, 0)};
  c = rt::network_candidates(untuned, dup.data(), 2, SIZE_MAX, 3, 1.5f);
  REQUIRE(c.size() == 2);
  CHECK(c[0] == untuned);
  CHECK(c[1] == candidate(ConvAlgo::GEMM, 0, 0));
}

TEST_CASE("choose_candidate: another candidate only when it beats the reference by the margin") {
  CHECK(rt::choose_candidate({}, 0.01, 0.0) == 0);
  CHECK(rt::choose_candidate({0.010}, 0.01, 0.0) == 0);
  CHECK(rt::choose_candidate({0.010, 0.008, 0.009}, 0.01, 0.0) == 1);
  CHECK(rt::choose_candidate({0.010, 0.009, 0.008}, 0.01, 0.0) == 2);
  // Within the relative margin (1% of 10 us) or the absolute one: the reference stays.
  CHECK(rt::choose_candidate({0.010, 0.00995}, 0.01, 0.0) == 0);
  CHECK(rt::choose_candidate({0.010, 0.0098}, 0.01, 0.0003) == 0);
  CHECK(rt::choose_candidate({0.010, 0.0096}, 0.01, 0.0003) == 1);
  // Slower candidates, and candidates that were not measured, never win.
  CHECK(rt::choose_candidate({0.010, 0.012, 0.011}, 0.01, 0.0) == 0);
  CHECK(rt::choose_candidate({0.010, -1.0, 0.005}, 0.01, 0.0) == 2);
  CHECK(rt::choose_candidate({-1.0, 0.005}, 0.01, 0.0) == 0);
}

TEST_CASE("median_of: the middle value, the middle pair's mean for an even count") {
  CHECK(rt::median_of({}) == 0);
  CHECK(rt::median_of({3.0}) == 3.0);
  CHECK(rt::median_of({5.0, 1.0, 3.0}) == 3.0);
  CHECK(rt::median_of({4.0, 1.0, 3.0, 2.0}) == 2.5);
  CHECK(rt::median_of({1.0, 100.0, 2.0}) == 2.0);  // an outlier does not move it
}

TEST_CASE("tuning reports the network check: the untuned set stays unless the tuned one measured faster") {
  for (const Handle& h : test_handles()) {
    for (const auto& m : models()) {
      INFO(m.first << " on " << (h.backend() == Backend::CPU ? "cpu" : "cuda"));
      std::shared_ptr<Engine> plain = load_engine(m.second, h);
      std::shared_ptr<Engine> tuned = load_with(m.second, tuned_options(h));
      const ModelSummary& s = tuned->summary();
      CHECK(plain->summary().tuned_network_ms < 0);
      CHECK(plain->summary().tuned_convs_changed == 0);
      int changed = 0;
      for (int i : conv_ops(*tuned)) {
        const rt::ConvPrepared& a = plain->impl().ops[static_cast<size_t>(i)].data.as<rt::ConvPrepared>();
        const rt::ConvPrepared& b = tuned->impl().ops[static_cast<size_t>(i)].data.as<rt::ConvPrepared>();
        if (a.algo != b.algo || a.conv.tactic() != b.conv.tactic()) ++changed;
        CHECK(tuned->op(i).tuned_ms >= 0);
        CHECK(tuned->op(i).tuned_ms <= tuned->op(i).heuristic_ms);  // kept only when faster in the network
      }
      CHECK(s.tuned_convs_changed == changed);
      if (changed > 0) {
        // Something changed: the network check ran and the tuned set measured faster.
        REQUIRE(s.untuned_network_ms > 0);
        CHECK(s.tuned_network_ms < s.untuned_network_ms);
      } else if (s.untuned_network_ms >= 0) {
        CHECK(s.tuned_network_ms == s.untuned_network_ms);  // measured, and the untuned set kept
      }
    }
  }
}

TEST_CASE("load reports its phases with their times; the weight upload is among them on CUDA") {
  for (const Handle& h : test_handles()) {
    for (const auto& m : models()) {
      for (const bool tune : {false, true}) {
        LoadOptions o = load_options(h);
        o.tune = tune;
        std::shared_ptr<Engine> e = load_with(m.second, o);
        const auto& phases = e->summary().load_phases;
        REQUIRE(phases.size() >= 5);
        CHECK(phases[0].name == "backend handle");
        CHECK(phases[1].name == "copy the bytes");
        std::vector<std::string> names;
        for (const auto& p : phases) {
          CHECK(p.ms >= 0);
          names.push_back(p.name);
        }
        auto has = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
        CHECK(has("container and checksum"));
        CHECK(has("prepare ops"));
        CHECK(has("tune") == tune);
        if (h.backend() == Backend::CUDA) {
          CHECK((has("weights: gather and upload (overlapped)") || has("weights: upload (pageable)")));
        }
      }
    }
  }
}

TEST_CASE("approximate_convolutions: every convolution prepared with ALLOW_APPROXIMATE, sized for it, close to exact") {
  for (const Handle& h : test_handles()) {
    for (const auto& m : models()) {
      INFO(m.first << " on " << (h.backend() == Backend::CPU ? "cpu" : "cuda"));
      LoadOptions o = load_options(h);
      o.approximate_convolutions = true;
      std::shared_ptr<Engine> exact = load_engine(m.second, h);
      std::shared_ptr<Engine> approx = load_with(m.second, o);
      const std::vector<int> convs = conv_ops(*approx);
      REQUIRE(convs.size() >= 3);
      for (int i : convs) {
        const rt::PreparedOp& p = approx->impl().ops[static_cast<size_t>(i)];
        const rt::ConvPrepared& c = p.data.as<rt::ConvPrepared>();
        CHECK(c.conv.math() == ConvMath::ALLOW_APPROXIMATE);
        CHECK(exact->impl().ops[static_cast<size_t>(i)].data.as<rt::ConvPrepared>().conv.math() == ConvMath::EXACT);
        size_t need = 0;
        REQUIRE_OK(conv_forward_workspace_size(h, p.in_descs[0], c.filter, c.conv, p.out_desc, c.algo, &need));
        CHECK(approx->op(i).workspace_bytes == need);
      }
      std::unique_ptr<ExecutionContext> ce, ca;
      REQUIRE_OK(exact->create_context(&ce));
      REQUIRE_OK(approx->create_context(&ca));
      const TensorBytes in = random_inputs(*exact);
      const TensorBytes want = run_context(*exact, *ce, in), got = run_context(*approx, *ca, in);
      if (h.backend() == Backend::CPU) {
        CHECK(got == want);  // the CPU backend has nothing approximate: the same kernels run
      } else {
        // F(4x4) Winograd where the heuristic takes WINOGRAD: ~2e-5 of the magnitude a layer.
        check_close(*exact, got, want, m.first, 2e-4);
      }
    }
  }
}
