// Old files keep loading: tests/data/tiny_v1_0.jet was written by schema 1.0 (see
// tests/data/README.md). This test loads it and checks it against the same model rebuilt today by
// the zoo with the same options and seed: same tensors, ops and weight bytes, same outputs. A
// schema or loader change that silently misreads old files fails here.
//
// The file must NOT be regenerated when the schema changes (that would defeat the test). It was
// written by running this test with JET_WRITE_COMPAT_MODEL=<path> (see the first test case).
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "model_util.h"

using namespace jet;
using namespace jet::test;

namespace {

const char* kCompatFile = JET_TEST_DATA_DIR "/tiny_v1_0.jet";

// The model in the file: tiny_cnn, batch 1, 5 x 6 images, this seed.
ir::Graph compat_graph() {
  ZooOptions opt = tiny_cnn_options(20261122);
  opt.batch = 1;
  opt.image = 5;
  opt.width = 6;
  ir::Graph g;
  REQUIRE_OK(tiny_cnn(opt, &g));
  return g;
}

Bytes read_file(const char* path) {
  std::ifstream f(path, std::ios::binary);
  INFO("reading " << path);
  REQUIRE(f.good());
  return Bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// The bytes of every constant's buffer, by tensor name.
std::map<std::string, Bytes> constant_bytes(const Bytes& file) {
  std::map<std::string, Bytes> out;
  const fb::Model* m = fb::GetModel(file.data());
  for (flatbuffers::uoffset_t i = 0; i < m->tensors()->size(); ++i) {
    const fb::Tensor* t = m->tensors()->Get(i);
    if (t->kind() != fb::TensorKind::Constant) continue;
    const fb::Buffer* b = m->buffers()->Get(static_cast<flatbuffers::uoffset_t>(t->buffer()));
    out[t->name()->str()] = Bytes(file.begin() + static_cast<std::ptrdiff_t>(b->offset()),
                                  file.begin() + static_cast<std::ptrdiff_t>(b->offset() + b->size()));
  }
  return out;
}

}  // namespace

TEST_CASE("(maintenance) JET_WRITE_COMPAT_MODEL=<path> writes the compatibility model") {
  const char* path = std::getenv("JET_WRITE_COMPAT_MODEL");
  if (!path) return;
  WriteOptions opt;
  opt.producer_version = "schema-1.0 compatibility file";
  REQUIRE_OK(write_model_file(compat_graph(), opt, path));
  MESSAGE("wrote " << path);
}

TEST_CASE("a schema 1.0 file still loads, equals today's rebuild and computes the same outputs") {
  const Bytes old_bytes = read_file(kCompatFile);
  const ir::Graph g = compat_graph();
  const Bytes new_bytes = model_bytes(g);
  for (const Handle& h : test_handles()) {
    INFO(backend_name(h));
    std::shared_ptr<Engine> old_engine;
    REQUIRE_OK(Engine::load(kCompatFile, load_options(h), &old_engine));
    std::shared_ptr<Engine> now = load_engine(new_bytes, h);
    CHECK(old_engine->summary().schema_major == 1);
    CHECK(old_engine->summary().schema_minor == 0);
    CHECK(old_engine->summary().file_bytes == old_bytes.size());

    REQUIRE(old_engine->num_tensors() == now->num_tensors());
    for (int t = 0; t < now->num_tensors(); ++t) {
      const TensorInfo& a = old_engine->tensor(t);
      const TensorInfo& b = now->tensor(t);
      INFO("tensor " << t << " '" << b.name << "'");
      CHECK(a.name == b.name);
      CHECK(a.dtype == b.dtype);
      CHECK(a.dims == b.dims);
      CHECK(a.strides == b.strides);
      CHECK(a.role == b.role);
      CHECK(a.bytes == b.bytes);
    }
    REQUIRE(old_engine->num_ops() == now->num_ops());
    for (int i = 0; i < now->num_ops(); ++i) {
      INFO("op " << i << " '" << now->op(i).name << "'");
      CHECK(old_engine->op(i).name == now->op(i).name);
      CHECK(old_engine->op(i).type == now->op(i).type);
      CHECK(old_engine->op(i).inputs == now->op(i).inputs);
      CHECK(old_engine->op(i).outputs == now->op(i).outputs);
    }
    CHECK(old_engine->num_inputs() == now->num_inputs());
    CHECK(old_engine->num_outputs() == now->num_outputs());
    CHECK(old_engine->summary().parameter_count == now->summary().parameter_count);

    std::unique_ptr<ExecutionContext> a, b;
    REQUIRE_OK(old_engine->create_context(&a));
    REQUIRE_OK(now->create_context(&b));
    for (int k = 0; k < 3; ++k) {
      const TensorBytes in = random_inputs(*now);
      const TensorBytes got = run_context(*old_engine, *a, in);
      const TensorBytes want = run_context(*now, *b, in);
      if (h.backend() == Backend::CPU) {
        check_identical(got, want, "old file vs today's model");
        check_identical(got, reference_run(h, g, in), "old file vs the reference executor");
      } else {
        check_close(*now, got, want, "old file vs today's model");
      }
    }
  }
  // The weights are stored as they were: same bytes for every constant.
  const std::map<std::string, Bytes> old_weights = constant_bytes(old_bytes);
  const std::map<std::string, Bytes> new_weights = constant_bytes(new_bytes);
  REQUIRE(old_weights.size() == new_weights.size());
  for (const auto& kv : new_weights) {
    INFO("constant '" << kv.first << "'");
    auto it = old_weights.find(kv.first);
    REQUIRE(it != old_weights.end());
    CHECK(it->second == kv.second);
  }
}
