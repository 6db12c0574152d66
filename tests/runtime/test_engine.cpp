// End-to-end: models built through the IR, written by the converter, loaded and run by the
// runtime on every backend, compared with the same graph run op by op through direct kernel calls
// (model_util.h reference_run). CPU: bit-identical (same kernels, same order). CUDA: within
// fp32 1e-5 / fp16 1e-2 relative.
#include <doctest/doctest.h>

#include <cstring>

#include "model_util.h"
#include "passes.h"

using namespace jet;
using namespace jet::test;

namespace {

ir::Graph tiny(uint64_t seed, int64_t image = 17, int64_t width = 19) {
  ir::Graph g;
  ZooOptions opt = tiny_cnn_options(seed);
  opt.image = image;
  opt.width = width;
  REQUIRE_OK(tiny_cnn(opt, &g));
  return g;
}

ir::Graph resnet18_small(uint64_t seed) {
  ir::Graph g;
  ZooOptions opt;
  opt.image = reduced_tests() ? 32 : 64;
  opt.seed = seed;
  REQUIRE_OK(resnet18(opt, &g));
  return g;
}

}  // namespace

TEST_CASE("tiny_cnn (every op type) runs like the reference executor") {
  const uint64_t seed = static_cast<uint64_t>(uniform_int(1, 1 << 30));
  const ir::Graph g = tiny(seed);
  for (const Handle& h : test_handles()) check_against_reference(g, h, "tiny_cnn f32");
}

TEST_CASE("resnet18 at 64x64 (32x32 reduced) runs like the reference executor") {
  const ir::Graph g = resnet18_small(static_cast<uint64_t>(uniform_int(1, 1 << 30)));
  for (const Handle& h : test_handles()) check_against_reference(g, h, "resnet18 64x64 f32");
}

TEST_CASE("efficientnet_b0 at 64x64 (SiLU, squeeze-and-excitation gates, 5x5 depthwise) runs like the reference") {
  ZooOptions opt;
  opt.image = 64;
  opt.seed = static_cast<uint64_t>(uniform_int(1, 1 << 30));
  ir::Graph g;
  REQUIRE_OK(efficientnet_b0(opt, &g));
  int convs = 0;
  for (const ir::Node& n : g.nodes) convs += n.op == ir::OpType::CONV;
  CHECK(convs == 81);  // stem, 16 MBConv blocks (4 convs in the first, 5 in the others), head
  ir::Graph h16 = g;
  REQUIRE_OK(convert_precision(&h16, DType::F16));
  REQUIRE_OK(set_channels_last(&h16));
  for (const Handle& h : test_handles()) {
    check_against_reference(g, h, "efficientnet_b0 64x64 f32");
    check_against_reference(h16, h, "efficientnet_b0 64x64 f16 channels-last");
  }
}

TEST_CASE("f16 models (convert_precision) run like the reference executor") {
  ir::Graph g = tiny(static_cast<uint64_t>(uniform_int(1, 1 << 30)));
  REQUIRE_OK(convert_precision(&g, DType::F16));
  ir::Graph r = resnet18_small(static_cast<uint64_t>(uniform_int(1, 1 << 30)));
  REQUIRE_OK(convert_precision(&r, DType::F16));
  for (const Handle& h : test_handles()) {
    check_against_reference(g, h, "tiny_cnn f16");
    check_against_reference(r, h, "resnet18 f16");
  }
}

TEST_CASE("channels-last models (set_channels_last) run like the reference executor") {
  ir::Graph g = tiny(static_cast<uint64_t>(uniform_int(1, 1 << 30)));
  REQUIRE_OK(set_channels_last(&g));
  bool strided = false;
  for (const ir::Tensor& t : g.tensors) strided = strided || !t.is_packed();
  REQUIRE(strided);  // the pass did something: the runtime sees strided activations
  ir::Graph both = tiny(static_cast<uint64_t>(uniform_int(1, 1 << 30)));
  REQUIRE_OK(convert_precision(&both, DType::F16));
  REQUIRE_OK(set_channels_last(&both));
  ir::Graph r = resnet18_small(static_cast<uint64_t>(uniform_int(1, 1 << 30)));
  REQUIRE_OK(set_channels_last(&r));
  // f16 channels-last ResNet-18: on CUDA its 3x3 filters are reordered to KRSC at upload and
  // run on the tensor-core path (the default CUDA configuration of a converted model).
  ir::Graph r16 = resnet18_small(static_cast<uint64_t>(uniform_int(1, 1 << 30)));
  REQUIRE_OK(convert_precision(&r16, DType::F16));
  REQUIRE_OK(set_channels_last(&r16));
  for (const Handle& h : test_handles()) {
    check_against_reference(g, h, "tiny_cnn channels-last f32");
    check_against_reference(both, h, "tiny_cnn channels-last f16");
    check_against_reference(r, h, "resnet18 channels-last f32");
    check_against_reference(r16, h, "resnet18 channels-last f16");
  }
}

TEST_CASE("a model loaded from a file runs like the same model loaded from memory") {
  const ir::Graph g = tiny(static_cast<uint64_t>(uniform_int(1, 1 << 30)));
  TempFile file("jet-test-engine");
  WriteOptions opt;
  opt.producer_version = "test";
  REQUIRE_OK(write_model_file(g, opt, file.path()));
  const Bytes bytes = model_bytes(g);
  for (const Handle& h : test_handles()) {
    INFO(backend_name(h));
    std::shared_ptr<Engine> from_file;
    REQUIRE_OK(Engine::load(file.path(), load_options(h), &from_file));
    std::shared_ptr<Engine> from_memory = load_engine(bytes, h);
    CHECK(from_file->summary().file_bytes == bytes.size());
    REQUIRE(from_file->num_tensors() == from_memory->num_tensors());
    for (int t = 0; t < from_file->num_tensors(); ++t) {
      CHECK(from_file->tensor(t).name == from_memory->tensor(t).name);
      CHECK(from_file->tensor(t).dims == from_memory->tensor(t).dims);
      CHECK(from_file->tensor(t).arena_offset == from_memory->tensor(t).arena_offset);
    }
    std::unique_ptr<ExecutionContext> a, b;
    REQUIRE_OK(from_file->create_context(&a));
    REQUIRE_OK(from_memory->create_context(&b));
    const TensorBytes in = random_inputs(*from_file);
    check_identical(run_context(*from_file, *a, in), run_context(*from_memory, *b, in), "file vs memory");
  }
  // Errors name the path.
  std::shared_ptr<Engine> none;
  REQUIRE_FAILS_WITH(Engine::load(file.path() + ".missing", load_options(Handle::cpu()), &none),
                     file.path() + ".missing");
  CHECK(!none);
}

TEST_CASE("inputs and outputs bound zero-copy") {
  const ir::Graph g = tiny(static_cast<uint64_t>(uniform_int(1, 1 << 30)));
  const Bytes bytes = model_bytes(g);
  for (const Handle& h : test_handles()) {
    INFO(backend_name(h));
    std::shared_ptr<Engine> e = load_engine(bytes, h);
    std::unique_ptr<ExecutionContext> plain, bound;
    REQUIRE_OK(e->create_context(&plain));
    REQUIRE_OK(e->create_context(&bound));
    const TensorBytes in = random_inputs(*e);
    const TensorBytes want = run_context(*e, *plain, in);

    std::vector<std::unique_ptr<BackendBuffer>> buffers;
    for (const auto& kv : in) {
      buffers.emplace_back(new BackendBuffer(e->backend(), kv.second.size()));
      copy_to(*e, buffers.back()->get(), kv.second);
      REQUIRE_OK(bound->bind_tensor(kv.first, buffers.back()->get()));
      CHECK(bound->tensor_data(kv.first) == buffers.back()->get());
    }
    std::map<int, void*> out_ptr;
    for (int i = 0; i < e->num_outputs(); ++i) {
      const int t = e->output(i);
      buffers.emplace_back(new BackendBuffer(e->backend(), e->tensor(t).bytes));
      out_ptr[t] = buffers.back()->get();
      REQUIRE_OK(bound->bind_tensor(e->tensor(t).name, out_ptr[t]));  // by name
    }
    REQUIRE_OK(bound->run());
    TensorBytes got;
    for (const auto& kv : out_ptr) got[kv.first] = copy_from(*e, kv.second, e->tensor(kv.first).bytes);
    check_identical(got, want, "bound buffers vs arena");

    // nullptr restores the arena regions.
    for (size_t k = 0; k < in.size(); ++k) {
      const int t = std::next(in.begin(), static_cast<std::ptrdiff_t>(k))->first;
      REQUIRE_OK(bound->bind_tensor(t, nullptr));
      CHECK(bound->tensor_data(t) != nullptr);
      CHECK(bound->tensor_data(t) != buffers[k]->get());
    }
    for (const auto& kv : out_ptr) REQUIRE_OK(bound->bind_tensor(kv.first, nullptr));
    check_identical(run_context(*e, *bound, in), want, "after unbinding");

    // Only graph inputs and outputs, aligned pointers, known tensors.
    int constant = -1, activation = -1;
    for (int t = 0; t < e->num_tensors(); ++t) {
      if (e->tensor(t).role == TensorRole::CONSTANT && constant < 0) constant = t;
      if (e->tensor(t).role == TensorRole::ACTIVATION && activation < 0) activation = t;
    }
    REQUIRE(constant >= 0);
    REQUIRE(activation >= 0);
    void* aligned = buffers[0]->get();
    REQUIRE_FAILS_WITH(bound->bind_tensor(constant, aligned), "not a graph input or output");
    REQUIRE_FAILS_WITH(bound->bind_tensor(activation, aligned), "not a graph input or output");
    REQUIRE_FAILS_WITH(bound->bind_tensor(e->input(0), static_cast<char*>(aligned) + 16), "aligned");
    REQUIRE_FAILS_WITH(bound->bind_tensor(e->num_tensors(), aligned), "out of range");
    REQUIRE_FAILS_WITH(bound->bind_tensor("no such tensor", aligned), "no such tensor");
    CHECK(bound->tensor_data(constant) == nullptr);
    CHECK(bound->tensor_data(-1) == nullptr);
  }
}

TEST_CASE("contexts of several engines share one memory block, used one after another") {
  const ir::Graph ga = tiny(static_cast<uint64_t>(uniform_int(1, 1 << 30)));
  const ir::Graph gb = tiny(static_cast<uint64_t>(uniform_int(1, 1 << 30)), 11, 13);
  const Bytes ba = model_bytes(ga), bb = model_bytes(gb);
  for (const Handle& h : test_handles()) {
    INFO(backend_name(h));
    std::shared_ptr<Engine> ea = load_engine(ba, h), eb = load_engine(bb, h);
    const size_t bytes = std::max(ea->context_memory_size(), eb->context_memory_size());
    BackendBuffer block(h.backend(), bytes);
    std::unique_ptr<ExecutionContext> ca, cb, own_a, own_b;
    REQUIRE_OK(ea->create_context(block.get(), bytes, &ca));
    REQUIRE_OK(eb->create_context(block.get(), bytes, &cb));
    REQUIRE_OK(ea->create_context(&own_a));
    REQUIRE_OK(eb->create_context(&own_b));
    CHECK(ca->tensor_data(ea->input(0)) >= block.get());
    const TensorBytes in_a = random_inputs(*ea), in_b = random_inputs(*eb);
    const TensorBytes want_a = run_context(*ea, *own_a, in_a), want_b = run_context(*eb, *own_b, in_b);
    check_identical(run_context(*ea, *ca, in_a), want_a, "engine A in the shared block");
    check_identical(run_context(*eb, *cb, in_b), want_b, "engine B in the shared block");
    check_identical(run_context(*ea, *ca, in_a), want_a, "engine A again, after B used the block");

    std::unique_ptr<ExecutionContext> none;
    REQUIRE_FAILS_WITH(ea->create_context(block.get(), ea->context_memory_size() - 1, &none),
                       "context_memory_size");
    REQUIRE_FAILS_WITH(ea->create_context(static_cast<char*>(block.get()) + 64, bytes, &none), "aligned");
    REQUIRE_FAILS_WITH(ea->create_context(nullptr, bytes, &none), "null");
    CHECK(!none);
  }
}

TEST_CASE("the engine reports tensors, ops and a summary that match the graph") {
  const ir::Graph g = tiny(static_cast<uint64_t>(uniform_int(1, 1 << 30)));
  WriteOptions opt;
  opt.producer_version = "9.8.7";
  opt.source_name = "tiny.onnx";
  opt.labels = {"cat", "dog"};
  opt.properties = {{"author", "test"}, {"license", "none"}};
  Bytes bytes;
  ir::MemoryPlan plan;
  REQUIRE_OK(write_model(g, opt, &bytes, &plan));
  for (const Handle& h : test_handles()) {
    INFO(backend_name(h));
    std::shared_ptr<Engine> e = load_engine(bytes, h);
    CHECK(e->backend() == h.backend());
    REQUIRE(e->num_tensors() == static_cast<int>(g.tensors.size()));
    REQUIRE(e->num_ops() == static_cast<int>(g.nodes.size()));
    int64_t params = 0;
    size_t weight_bytes = 0;
    int inputs = 0, outputs = 0;
    for (int t = 0; t < e->num_tensors(); ++t) {
      const ir::Tensor& it = g.tensors[t];
      const TensorInfo& info = e->tensor(t);
      CHECK(info.name == it.name);
      CHECK(info.dims == it.dims);
      CHECK(info.dtype == it.dtype);
      CHECK(info.bytes == it.bytes());
      if (it.kind == ir::TensorKind::CONSTANT) {
        CHECK(info.role == TensorRole::CONSTANT);
        CHECK(info.arena_offset == -1);
        params += it.elements();
        weight_bytes += it.bytes();
      } else if (plan.tensors[t].in_arena) {
        CHECK(info.arena_offset == plan.tensors[t].offset);
        CHECK(info.arena_size == plan.tensors[t].size);
      }
      if (it.kind == ir::TensorKind::INPUT) ++inputs;
      if (it.kind == ir::TensorKind::OUTPUT) ++outputs;
      CHECK(e->find_tensor(it.name) >= 0);
    }
    CHECK(e->num_inputs() == inputs);
    CHECK(e->num_outputs() == outputs);
    CHECK(e->input(0) == e->find_tensor("image"));
    CHECK(e->input(-1) == -1);
    CHECK(e->output(e->num_outputs()) == -1);
    CHECK(e->find_tensor("no such tensor") == -1);
    CHECK(e->tensor(e->num_tensors()).name.empty());  // out of range: empty, no crash
    CHECK(e->op(-1).name.empty());
    int convs = 0;
    for (int i = 0; i < e->num_ops(); ++i) {
      const OpInfo& op = e->op(i);
      if (op.type == "Conv") {
        ++convs;
        CHECK(!op.algo.empty());
        CHECK(op.flops > 0);
      } else if (op.type == "Gemm") {
        CHECK(op.flops > 0);
      } else {
        CHECK(op.algo.empty());
      }
      CHECK(op.outputs.size() == 1);
    }
    CHECK(convs == 4);
    const ModelSummary& s = e->summary();
    CHECK(s.schema_major == kSchemaMajor);
    CHECK(s.producer == "jet-convert");
    CHECK(s.producer_version == "9.8.7");
    CHECK(s.source_name == "tiny.onnx");
    CHECK(s.file_bytes == bytes.size());
    CHECK(s.arena_bytes == plan.arena_bytes);
    CHECK(s.lower_bound_bytes == plan.lower_bound_bytes);
    CHECK(s.planner == "GreedyBestFit");
    CHECK(s.parameter_count == params);
    CHECK(s.weight_bytes == weight_bytes);
    CHECK(s.labels == opt.labels);
    CHECK(s.properties == opt.properties);
    CHECK(e->context_memory_size() >= plan.arena_bytes + s.workspace_bytes);
    CHECK(e->context_memory_size() % 256 == 0);
  }
}

TEST_CASE("a kernel error during run() names the op") {
  // input -> conv -> output, both 1x4x5x5: binding the output to the input's buffer makes the
  // convolution run in place, which conv_bias_act_forward refuses at run time.
  ir::Graph g;
  int x = -1, w = -1, y = -1;
  REQUIRE_OK(g.add_input("x", DType::F32, {1, 4, 5, 5}, &x));
  REQUIRE_OK(g.add_constant("w", DType::F32, {4, 4, 3, 3}, &w));
  g.tensors[w].data.assign(4 * 4 * 9, 0.1f);
  ir::ConvAttrs a;
  a.pad_begin = a.pad_end = {1, 1};
  REQUIRE_OK(g.conv("the_conv", x, w, -1, -1, a, &y));
  REQUIRE_OK(g.mark_output(y));
  const Bytes bytes = model_bytes(g);
  for (const Handle& h : test_handles()) {
    INFO(backend_name(h));
    std::shared_ptr<Engine> e = load_engine(bytes, h);
    std::unique_ptr<ExecutionContext> ctx;
    REQUIRE_OK(e->create_context(&ctx));
    BackendBuffer shared(h.backend(), e->tensor(e->input(0)).bytes);
    REQUIRE_OK(ctx->bind_tensor(e->input(0), shared.get()));
    REQUIRE_OK(ctx->bind_tensor(e->output(0), shared.get()));
    REQUIRE_FAILS_WITH(ctx->run(), "op 0 'the_conv' (Conv)");
    REQUIRE_OK(ctx->bind_tensor(e->output(0), nullptr));
    REQUIRE_OK(ctx->run());
  }
}

TEST_CASE("a CUDA engine in a build or on a machine without CUDA is refused with a reason") {
  if (built_with_cuda()) {
    Handle h;
    if (Handle::cuda(0, nullptr, &h).ok()) return;  // a device exists: the other tests use it
  }
  ir::Graph g;
  REQUIRE_OK(tiny_cnn(tiny_cnn_options(1), &g));
  const Bytes bytes = model_bytes(g);
  LoadOptions o;
  o.backend = Backend::CUDA;
  std::shared_ptr<Engine> e;
  const Status st = Engine::load(bytes.data(), bytes.size(), o, &e);
  INFO(st.to_string());
  CHECK_FALSE(st.ok());
  CHECK(st.message().find("CUDA") != std::string::npos);
  CHECK(!e);
}
