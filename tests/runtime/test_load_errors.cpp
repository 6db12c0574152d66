// Hostile model files: truncated, flipped, wrong identifiers and versions, and valid FlatBuffers
// whose contents lie (edited through the generated object API with a correct checksum, so the
// semantic checks are what is exercised). Every one must be rejected with a message naming the
// problem; none may crash, and files that do load (flips without checksum verification) must
// also run without crashing.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <limits>

#include "model_util.h"

using namespace jet;
using namespace jet::test;

namespace {

// A small tiny_cnn (every op type): batch 2, 6 x 7 images.
Bytes tiny_model() {
  ir::Graph g;
  ZooOptions opt = tiny_cnn_options(static_cast<uint64_t>(uniform_int(1, 1 << 30)));
  opt.image = 6;
  opt.width = 7;
  REQUIRE_OK(tiny_cnn(opt, &g));
  return model_bytes(g);
}

bool contains_any(const std::string& s, std::initializer_list<const char*> words) {
  for (const char* w : words) {
    if (s.find(w) != std::string::npos) return true;
  }
  return false;
}

fb::TensorT& tensor(fb::ModelT& m, const char* name) {
  const int t = tensor_index(m, name);
  REQUIRE(t >= 0);
  return *m.tensors[t];
}

// The plan's arena: up to the end of the last region (after regions were moved).
void fit_arena(fb::ModelT& m) {
  uint64_t end = 0;
  for (const auto& t : m.tensors) {
    if (t->arena_offset >= 0) end = std::max<uint64_t>(end, static_cast<uint64_t>(t->arena_offset) + t->arena_size);
  }
  m.plan->arena_bytes = end;
}

// Load (checksum off), then create a context and run with random inputs: must not crash. A
// damaged but consistent file may ask for a huge context (a flipped bit in the plan's workspace
// size, say): that is a valid request the test does not make (ASan would refuse it).
void load_and_run_if_valid(const Bytes& b, int* loaded) {
  std::shared_ptr<Engine> e;
  if (!load_cpu(b, false, &e).ok()) return;
  ++*loaded;
  if (e->context_memory_size() > (size_t(1) << 30)) return;
  std::unique_ptr<ExecutionContext> ctx;
  if (!e->create_context(&ctx).ok()) return;
  for (int i = 0; i < e->num_inputs(); ++i) {
    const Bytes in = random_tensor(e->tensor(e->input(i)));
    std::memcpy(ctx->tensor_data(e->input(i)), in.data(), in.size());
  }
  (void)ctx->run();  // a Status either way; weights may be garbage
}

}  // namespace

TEST_CASE("the unedited model and its object-API rebuild both load and agree") {
  const Bytes bytes = tiny_model();
  std::shared_ptr<Engine> a, b;
  REQUIRE_OK(load_cpu(bytes, true, &a));
  const Bytes rebuilt = rebuild_model(bytes, nullptr);
  REQUIRE_OK(load_cpu(rebuilt, true, &b));
  std::unique_ptr<ExecutionContext> ca, cb;
  REQUIRE_OK(a->create_context(&ca));
  REQUIRE_OK(b->create_context(&cb));
  const TensorBytes in = random_inputs(*a);
  check_identical(run_context(*a, *ca, in), run_context(*b, *cb, in), "rebuilt model");
}

TEST_CASE("truncated files are rejected at every length") {
  const Bytes bytes = tiny_model();
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 64; ++n) lengths.push_back(n);
  for (size_t n = bytes.size() - 80; n < bytes.size(); ++n) lengths.push_back(n);
  for (int i = 0; i < 300; ++i) lengths.push_back(static_cast<size_t>(uniform_int(0, static_cast<int64_t>(bytes.size()) - 1)));
  for (size_t n : lengths) {
    const Bytes cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    for (bool verify : {true, false}) {
      const Status st = load_cpu(cut, verify);
      INFO("length " << n << " of " << bytes.size() << ": " << st.to_string());
      REQUIRE_FALSE(st.ok());
      CHECK(contains_any(st.message(), {"too small", "truncated"}));
    }
  }
  // Through a file too: the message names the path.
  TempFile file("jet-test-truncated");
  std::FILE* f = std::fopen(file.path().c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(std::fwrite(bytes.data(), 1, bytes.size() / 2, f) == bytes.size() / 2);
  std::fclose(f);
  std::shared_ptr<Engine> e;
  LoadOptions o;
  o.backend = Backend::CPU;
  const Status st = Engine::load(file.path(), o, &e);
  INFO(st.to_string());
  CHECK_FALSE(st.ok());
  CHECK(st.message().find(file.path()) != std::string::npos);
  CHECK(st.message().find("truncated") != std::string::npos);
}

TEST_CASE("with checksum verification every flipped byte is rejected with a message") {
  const Bytes bytes = tiny_model();
  for (size_t pos = 0; pos < bytes.size(); ++pos) {
    Bytes b = bytes;
    b[pos] ^= static_cast<uint8_t>(uniform_int(1, 255));
    const Status st = load_cpu(b, true);
    INFO("byte " << pos << " of " << bytes.size() << ": " << st.to_string());
    REQUIRE_FALSE(st.ok());
    CHECK(contains_any(st.message(), {"checksum", "identifier", "footer"}));
  }
}

TEST_CASE("without checksum verification flipped bytes never crash loading or running") {
  const Bytes bytes = tiny_model();
  int loaded = 0, tried = 0;
  // Every byte of the FlatBuffer part once (the first weight buffer starts after it), and a
  // sample of the weights.
  const fb::Model* m = fb::GetModel(bytes.data());
  const size_t flatbuffer_end = m->buffers()->size() ? static_cast<size_t>(m->buffers()->Get(0)->offset()) : bytes.size();
  const int64_t flatbuffer_sampling = reduced_tests() ? 4 : 1;  // every n-th byte, on average
  for (size_t pos = 0; pos < bytes.size(); ++pos) {
    if (pos < flatbuffer_end && uniform_int(1, flatbuffer_sampling) != 1) continue;
    if (pos >= flatbuffer_end && uniform_int(0, 15) != 0) continue;
    Bytes b = bytes;
    b[pos] ^= static_cast<uint8_t>(1u << uniform_int(0, 7));
    ++tried;
    load_and_run_if_valid(b, &loaded);
  }
  // Multi-byte damage: random runs of random bytes.
  for (int i = 0; i < 300; ++i) {
    Bytes b = bytes;
    const size_t at = static_cast<size_t>(uniform_int(0, static_cast<int64_t>(flatbuffer_end) - 1));
    const size_t len = static_cast<size_t>(uniform_int(1, 16));
    for (size_t k = at; k < at + len && k < b.size(); ++k) b[k] = static_cast<uint8_t>(uniform_int(0, 255));
    ++tried;
    load_and_run_if_valid(b, &loaded);
  }
  MESSAGE(tried << " damaged files: " << loaded << " loaded (and ran), the rest were rejected");
  CHECK(loaded < tried);  // damage to the structure is caught
}

TEST_CASE("wrong identifier and wrong footer") {
  const Bytes bytes = tiny_model();
  Bytes b = bytes;
  std::memcpy(b.data() + 4, "ONNX", 4);
  fix_checksum(&b);
  expect_rejected(b, "identifier");
  b = bytes;
  std::memcpy(b.data() + b.size() - 8, "JETSUM02", 8);
  expect_rejected(b, "footer");
  expect_rejected(Bytes(40, 0), "identifier");
  expect_rejected(Bytes(10, 0), "too small");
}

TEST_CASE("a newer major schema version is refused naming both versions; a newer minor loads") {
  const Bytes bytes = tiny_model();
  const Bytes newer = rebuild_model(bytes, [](fb::ModelT& m) {
    m.schema_major = kSchemaMajor + 1;
    m.schema_minor = 3;
  });
  const Status st = load_cpu(newer);
  INFO(st.to_string());
  CHECK(st.code() == StatusCode::NOT_SUPPORTED);
  const std::string file_version = std::to_string(kSchemaMajor + 1) + ".3";
  const std::string ours = std::to_string(kSchemaMajor) + "." + std::to_string(kSchemaMinor);
  CHECK(st.message().find(file_version) != std::string::npos);
  CHECK(st.message().find(ours) != std::string::npos);
  REQUIRE_OK(load_cpu(rebuild_model(bytes, [](fb::ModelT& m) { m.schema_minor = kSchemaMinor + 5; })));
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { m.schema_major = 0; }), "invalid");
  expect_rejected(rebuild_model(bytes, nullptr, [](fb::ModelT& m) { m.file_size += 64; }), "truncated or padded");
}

TEST_CASE("out-of-range tensor and buffer indices are rejected") {
  const Bytes bytes = tiny_model();
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "pool1").inputs[0] = static_cast<int>(m.tensors.size()); }),
                  "out of range");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "conv2").inputs[1] = -7; }), "out of range");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "gate").outputs[0] = 1 << 20; }), "out of range");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { m.inputs[0] = 12345; }), "graph input 0");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { m.outputs[1] = -1; }), "graph output 1");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) {
                    tensor(m, "conv1.w").buffer = static_cast<int>(m.buffers.size());
                  }),
                  "buffers");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "fc").outputs.push_back(0); }), "outputs, expected 1");
}

TEST_CASE("arena regions past the arena, misaligned, too small or missing are rejected") {
  const Bytes bytes = tiny_model();
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) {
                    tensor(m, "conv1").arena_offset = static_cast<int64_t>(m.plan->arena_bytes + 255) / 256 * 256;
                  }),
                  "ends past the arena");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { tensor(m, "dw").arena_offset += 64; }), "not a multiple of 256");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { tensor(m, "bn").arena_size = 16; }), "smaller than");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { tensor(m, "image").arena_offset = -1; }), "no arena region");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { m.plan->arena_bytes = uint64_t(1) << 60; }), "implausibly large");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { m.plan->arena_bytes += 512; }), "larger than its regions need");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { m.plan.reset(); }), "no memory plan");
}

TEST_CASE("overlapping regions of tensors live at the same time are rejected") {
  const Bytes bytes = tiny_model();
  // The input (live from step 0 until conv1 reads it) and conv1's output (written at step 0).
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) {
                    fb::TensorT& x = tensor(m, "image");
                    fb::TensorT& y = tensor(m, "conv1");
                    y.arena_offset = x.arena_offset;
                    fit_arena(m);
                  }),
                  "overlap");
  // pool1 stays live until conv2 reads it as its residual: dw's output cannot take its bytes,
  // even half-overlapping.
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) {
                    fb::TensorT& p = tensor(m, "pool1");
                    fb::TensorT& d = tensor(m, "dw");
                    d.arena_offset = p.arena_offset + 256;
                    fit_arena(m);
                  }),
                  "overlap");
  // Graph inputs live to the end as well (runs never overwrite them): a late activation cannot
  // take the input's bytes, although the input's last reader ran long before.
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) {
                    fb::TensorT& x = tensor(m, "image");
                    fb::TensorT& late = tensor(m, "concat");
                    late.arena_offset = x.arena_offset;
                    fit_arena(m);
                  }),
                  "overlap");
  // Graph outputs live to the end: nothing produced after them may reuse their bytes.
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) {
                    fb::TensorT& f = tensor(m, "features");
                    fb::TensorT& p = tensor(m, "probs");
                    p.arena_offset = f.arena_offset;
                    fit_arena(m);
                  }),
                  "overlap");
}

TEST_CASE("weights outside the file, misaligned or of the wrong size are rejected") {
  const Bytes bytes = tiny_model();
  expect_rejected(rebuild_model(bytes, nullptr, [](fb::ModelT& m) { m.buffers[0]->offset = (m.file_size + 63) / 64 * 64; }),
                  "outside the file");
  expect_rejected(rebuild_model(bytes, nullptr, [](fb::ModelT& m) { m.buffers.back()->size += 4096; }), "outside the file");
  expect_rejected(rebuild_model(bytes, nullptr,
                                [](fb::ModelT& m) { m.buffers[1]->offset = std::numeric_limits<uint64_t>::max() - 63; }),
                  "outside the file");
  expect_rejected(rebuild_model(bytes, nullptr, [](fb::ModelT& m) { m.buffers[2]->offset += 8; }), "not a multiple of 64");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { m.buffers[tensor(m, "conv1.b").buffer]->size -= 4; }), "holds");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { tensor(m, "conv1.w").strides = {1, 8, 24, 72}; }), "packed");
}

TEST_CASE("weight buffers that overlap each other or the FlatBuffer are rejected") {
  const Bytes bytes = tiny_model();
  // One constant pointed into another's bytes (same offset, both non-empty).
  expect_rejected(rebuild_model(bytes, nullptr,
                                [](fb::ModelT& m) {
                                  REQUIRE(m.buffers.size() >= 2);
                                  REQUIRE(m.buffers[0]->size > 0);
                                  REQUIRE(m.buffers[1]->size > 0);
                                  m.buffers[1]->offset = m.buffers[0]->offset;
                                }),
                  "weight buffers overlap");
  // The smallest buffer moved to file byte 64, inside the FlatBuffer's tables.
  expect_rejected(rebuild_model(bytes, nullptr,
                                [](fb::ModelT& m) {
                                  size_t smallest = 0;
                                  for (size_t b = 1; b < m.buffers.size(); ++b) {
                                    if (m.buffers[b]->size > 0 && m.buffers[b]->size < m.buffers[smallest]->size) smallest = b;
                                  }
                                  m.buffers[smallest]->offset = 64;
                                }),
                  "overlaps the FlatBuffer");
}

TEST_CASE("a plan workspace larger than any op can use is rejected at load, not at allocation") {
  const Bytes bytes = tiny_model();
  for (uint64_t ws : {uint64_t(1) << 40, uint64_t(1) << 47}) {
    CAPTURE(ws);
    expect_rejected(rebuild_model(bytes, [&](fb::ModelT& m) { m.plan->workspace_bytes = ws; }),
                    "more than any op of the model can use");
  }
  // A plausible figure (what a GEMM convolution could ask for) still loads.
  std::shared_ptr<Engine> e;
  REQUIRE_OK(load_cpu(rebuild_model(bytes, [](fb::ModelT& m) { m.plan->workspace_bytes = 4096; }), true, &e));
  CHECK(e->context_memory_size() >= 4096);
}

TEST_CASE("ops out of execution order (use before production, cycles, double writes) are rejected") {
  const Bytes bytes = tiny_model();
  // pool1 reads conv1's output but now runs first.
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { std::swap(m.ops[0], m.ops[1]); }), "before any earlier op produces it");
  // An op reading its own output.
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "gate").inputs[0] = op_named(m, "gate").outputs[0]; }),
                  "before any earlier op produces it");
  // A two-op cycle: bn reads hswish's output, hswish reads bn's.
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "bn").inputs[0] = op_named(m, "hswish").outputs[0]; }),
                  "before any earlier op produces it");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "hswish").outputs[0] = op_named(m, "bn").outputs[0]; }),
                  "produced twice");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "gate").outputs[0] = tensor_index(m, "image"); }),
                  "graph input or a constant");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "gate").outputs[0] = tensor_index(m, "shift.value"); }),
                  "graph input or a constant");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { m.ops.clear(); }), "no ops");
}

TEST_CASE("inputs and outputs must match the tensors' kinds") {
  const Bytes bytes = tiny_model();
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { m.inputs.push_back(m.inputs[0]); }), "twice");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { m.inputs.clear(); }), "not in the model's inputs");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { m.outputs.clear(); }), "no graph outputs");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { m.outputs[0] = tensor_index(m, "conv1"); }), "expected Output");
}

TEST_CASE("tensor shapes, dtypes, strides and kinds are validated") {
  const Bytes bytes = tiny_model();
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { tensor(m, "dw").dtype = static_cast<fb::DType>(7); }),
                  "unknown dtype 7");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { tensor(m, "dw").shape[2] = 0; }), "dims must be >= 1");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { tensor(m, "dw").shape.assign(9, 1); }), "rank 9");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { tensor(m, "dw").shape.clear(); }), "rank 0");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) {
                    tensor(m, "dw").shape = {int64_t(1) << 40, int64_t(1) << 40, 2, 2};
                  }),
                  "overflows");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) {
                    fb::TensorT& t = tensor(m, "dw");
                    t.strides = {1, 1, 1, 1};  // every element at one address
                  }),
                  "overlap");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { tensor(m, "dw").strides = {1, 2}; }), "strides for rank");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { tensor(m, "dw").kind = static_cast<fb::TensorKind>(9); }),
                  "unknown kind");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { m.tensors.clear(); }), "no tensors");
}

TEST_CASE("op parameters and output shapes are re-inferred and compared") {
  const Bytes bytes = tiny_model();
  auto conv = [](fb::ModelT& m, const char* name) -> fb::ConvParamsT& {
    fb::ConvParamsT* p = op_named(m, name).params.AsConvParams();
    REQUIRE(p != nullptr);
    return *p;
  };
  expect_rejected(rebuild_model(bytes, [&](fb::ModelT& m) { conv(m, "conv1").strides = {2, 2}; }),
                  "but the op's inputs and parameters give");
  expect_rejected(rebuild_model(bytes, [&](fb::ModelT& m) { conv(m, "conv1").pad_begin = {1, 1, 1}; }),
                  "pad_begin has 3 entries");
  expect_rejected(rebuild_model(bytes, [&](fb::ModelT& m) { conv(m, "conv2").groups = 3; }), "groups");
  expect_rejected(rebuild_model(bytes, [&](fb::ModelT& m) { conv(m, "conv1").has_bias = false; }),
                  "has 3 inputs, expected 2");
  expect_rejected(rebuild_model(bytes, [&](fb::ModelT& m) { conv(m, "conv1").algo = static_cast<fb::ConvAlgo>(17); }),
                  "unknown convolution algorithm");
  expect_rejected(rebuild_model(bytes, [&](fb::ModelT& m) { conv(m, "conv1").alpha1 = std::numeric_limits<float>::infinity(); }),
                  "alpha1");
  expect_rejected(rebuild_model(bytes, [&](fb::ModelT& m) { conv(m, "conv1").activation->mode = 99; }), "unknown mode 99");
  // The stored output shape disagrees with the inputs and parameters.
  expect_rejected(rebuild_model(bytes, [&](fb::ModelT& m) { tensor(m, "conv1").shape[3] -= 1; }), "has dims");
  expect_rejected(rebuild_model(bytes, [&](fb::ModelT& m) { op_named(m, "pool1").params.AsPoolParams()->mode = 9; }),
                  "unknown pooling mode 9");
  expect_rejected(rebuild_model(bytes, [&](fb::ModelT& m) { op_named(m, "pool1").params.AsPoolParams()->window = {3}; }),
                  "window has 1 entries");
  expect_rejected(rebuild_model(bytes, [&](fb::ModelT& m) { op_named(m, "fc").params.AsGemmParams()->trans_b = false; }),
                  "K =");
  expect_rejected(rebuild_model(bytes, [&](fb::ModelT& m) { op_named(m, "probs").params.AsSoftmaxParams()->axis = 5; }),
                  "axis 5 out of range");
  expect_rejected(rebuild_model(bytes, [&](fb::ModelT& m) { op_named(m, "concat").params.AsConcatParams()->axis = 2; }),
                  "axis 2");
  expect_rejected(rebuild_model(bytes, [&](fb::ModelT& m) { op_named(m, "bn").params.AsBatchNormParams()->epsilon = 0; }),
                  "epsilon");
  expect_rejected(rebuild_model(bytes, [&](fb::ModelT& m) { op_named(m, "scale").params.AsOpTensorParams()->op = 42; }),
                  "unknown tensor op 42");
  expect_rejected(rebuild_model(bytes, [&](fb::ModelT& m) { op_named(m, "bn").inputs.pop_back(); }), "has 4 inputs, expected 5");
  // A Transform's output with other dims, a Reshape changing the element count.
  expect_rejected(rebuild_model(bytes, [&](fb::ModelT& m) { op_named(m, "to_f32").inputs[0] = tensor_index(m, "gap"); }),
                  "has dims");
  // The union's type: missing, or not one this runtime knows.
  expect_rejected(rebuild_model(bytes, [&](fb::ModelT& m) { op_named(m, "gate").params.Reset(); }), "no parameters");
  expect_rejected(rebuild_model(bytes, [&](fb::ModelT& m) {
                    op_named(m, "gate").params.Reset();
                    op_named(m, "gate").params.type = static_cast<fb::OpParams>(200);
                  }),
                  "unknown");
}
