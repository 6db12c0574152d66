// The jet-convert command line, run as a process: exit status, report, output file, and what the
// written model computes (through the runtime, against the imported graph run by the CPU
// interpreter with no optimization).
//
// The models are built in memory (onnx_builder.h) and written to a temporary directory.
#include <doctest/doctest.h>

#if !defined(JET_HAVE_ONNX_IMPORT) || !defined(JET_CONVERT_PATH)

TEST_CASE("jet-convert: not built (libonnx-dev and protobuf not found at configure time)") {
  MESSAGE("jet-convert is not part of this build");
}

#else

#include <sys/stat.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "interpret.h"
#include "ir.h"
#include "jet/runtime.h"
#include "onnx_builder.h"
#include "onnx_import.h"

using namespace jet;
using namespace jet::test;

namespace {

struct Result {
  int status = -1;     // the exit status
  std::string output;  // stdout and stderr
};

// Runs jet-convert with `args` (already quoted where needed).
Result jet_convert(const std::string& args) {
  Result r;
  const std::string cmd = std::string("'") + JET_CONVERT_PATH + "' " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t got = 0;
  while ((got = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, got);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

bool exists(const std::string& path) {
  struct stat sb;
  return stat(path.c_str(), &sb) == 0;
}

bool contains(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

std::vector<float> random_values(size_t n, std::mt19937_64* rng, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(*rng);
  return v;
}

void batch_norm(OnnxModel* m, const std::string& name, const std::string& x, const std::string& y, int64_t c,
                std::mt19937_64* rng) {
  m->initializer(name + ".scale", {c}, random_values(c, rng, 0.5f, 1.5f));
  m->initializer(name + ".bias", {c}, random_values(c, rng));
  m->initializer(name + ".mean", {c}, random_values(c, rng));
  m->initializer(name + ".var", {c}, random_values(c, rng, 0.5f, 2.f));
  m->node("BatchNormalization", {x, name + ".scale", name + ".bias", name + ".mean", name + ".var"}, {y}, name);
}

// A residual block and a classifier head, batch dim dynamic ("N"):
// x -> Conv -> BN -> Relu -> Conv -> BN -> Add(x) -> Relu -> GlobalAveragePool -> Flatten -> Gemm
// -> Softmax. 11 ONNX nodes.
OnnxModel residual_block(std::mt19937_64* rng) {
  const int64_t c = 4;
  OnnxModel m(13);
  m.input("x", {-1, c, 6, 6});
  m.initializer("w1", {c, c, 3, 3}, random_values(c * c * 9, rng, -0.3f, 0.3f));
  m.initializer("b1", {c}, random_values(c, rng));
  m.initializer("w2", {c, c, 3, 3}, random_values(c * c * 9, rng, -0.3f, 0.3f));
  m.initializer("fc.w", {5, c}, random_values(5 * c, rng));
  m.initializer("fc.b", {5}, random_values(5, rng));
  attr_ints(m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  batch_norm(&m, "bn1", "c1", "n1", c, rng);
  m.node("Relu", {"n1"}, {"r1"}, "relu1");
  attr_ints(m.node("Conv", {"r1", "w2"}, {"c2"}, "conv2"), "pads", {1, 1, 1, 1});
  batch_norm(&m, "bn2", "c2", "n2", c, rng);
  m.node("Add", {"n2", "x"}, {"sum"}, "add");
  m.node("Relu", {"sum"}, {"r2"}, "relu2");
  m.node("GlobalAveragePool", {"r2"}, {"pooled"}, "pool");
  m.node("Flatten", {"pooled"}, {"flat"}, "flatten");
  attr_int(m.node("Gemm", {"flat", "fc.w", "fc.b"}, {"logits"}, "fc"), "transB", 1);
  m.node("Softmax", {"logits"}, {"probs"}, "softmax");
  m.output("probs");
  return m;
}

// Loads `path` on the CPU, runs it on `x`, returns output 0.
std::vector<float> run_model(const std::string& path, const std::vector<float>& x) {
  LoadOptions lo;
  lo.backend = Backend::CPU;
  std::shared_ptr<Engine> e;
  Status st = Engine::load(path, lo, &e);
  REQUIRE_MESSAGE(st.ok(), st.to_string());
  std::unique_ptr<ExecutionContext> ctx;
  REQUIRE(e->create_context(&ctx).ok());
  REQUIRE(e->num_inputs() == 1);
  REQUIRE(e->tensor(e->input(0)).bytes == x.size() * sizeof(float));
  std::memcpy(ctx->tensor_data(e->input(0)), x.data(), x.size() * sizeof(float));
  st = ctx->run();
  REQUIRE_MESSAGE(st.ok(), st.to_string());
  const TensorInfo& out = e->tensor(e->output(0));
  REQUIRE(out.dtype == DType::F32);
  std::vector<float> y(out.bytes / sizeof(float));
  std::memcpy(y.data(), ctx->tensor_data(e->output(0)), out.bytes);
  return y;
}

// The same model imported without any pass and run by the CPU interpreter.
std::vector<float> reference(const std::string& bytes, const std::vector<int64_t>& shape, const std::vector<float>& x) {
  ImportOptions opt;
  opt.input_shapes["x"] = shape;
  ir::Graph g;
  Status st = import_onnx_bytes(bytes.data(), bytes.size(), opt, &g, nullptr);
  REQUIRE_MESSAGE(st.ok(), st.to_string());
  std::vector<std::vector<float>> out;
  st = interpret(g, {x}, &out);
  REQUIRE_MESSAGE(st.ok(), st.to_string());
  REQUIRE(out.size() == 1);
  return out[0];
}

void check_close(const std::vector<float>& got, const std::vector<float>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": " << got[i] << " vs " << want[i]);
    CHECK(std::fabs(double(got[i]) - want[i]) <= tol * std::max(1.0, std::fabs(double(want[i]))));
  }
}

uint64_t fresh_seed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace

TEST_CASE("jet-convert: a residual block converts, reports what it folded and fused, and computes the model") {
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  const std::string bytes = residual_block(&rng).bytes();
  dir.write("block.onnx", bytes);
  const std::string in = "'" + dir.file("block.onnx") + "'";
  const std::vector<float> x = random_values(2 * 4 * 6 * 6, &rng, -2.f, 2.f);
  const std::vector<float> want = reference(bytes, {2, 4, 6, 6}, x);

  SUBCASE("a dynamic dim without --input-shape is an error naming the input and the dim") {
    const Result r = jet_convert(in + " -o '" + dir.file("a.jet") + "'");
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK(contains(r.output, "'x'"));
    CHECK(contains(r.output, "'N'"));
    CHECK_FALSE(exists(dir.file("a.jet")));
  }
  SUBCASE("fp32: batchnorms folded, epilogues fused, same numbers as the unoptimized graph") {
    const Result r = jet_convert(in + " -o '" + dir.file("b.jet") + "' --input-shape x=2x4x6x6");
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK(contains(r.output, "ONNX nodes in:  11"));
    CHECK(contains(r.output, "fold_batchnorm: 2 batchnorms folded into weights (2 conv, 0 gemm)"));
    CHECK(contains(r.output, "1 residual add"));
    CHECK(contains(r.output, "2 activations"));
    CHECK_FALSE(contains(r.output, "BatchNorm"));
    CHECK(contains(r.output, "precision:      fp32, layout nchw"));
    check_close(run_model(dir.file("b.jet"), x), want, 1e-5);
  }
  SUBCASE("--no-fuse keeps the batchnorms and activations as their own ops, with the same numbers") {
    const Result r = jet_convert(in + " -o '" + dir.file("c.jet") + "' --input-shape x=2x4x6x6 --no-fuse");
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK(contains(r.output, "BatchNorm 2"));
    CHECK_FALSE(contains(r.output, "fold_batchnorm"));
    CHECK_FALSE(contains(r.output, "fuse_epilogues"));
    check_close(run_model(dir.file("c.jet"), x), want, 1e-5);
  }
  SUBCASE("fp16 in channels-last keeps fp32 inputs and outputs and stays within fp16 accuracy") {
    const Result r = jet_convert(in + " -o '" + dir.file("d.jet") + "' --input-shape x=2x4x6x6 --precision fp16");
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK(contains(r.output, "precision:      fp16, layout nhwc"));
    check_close(run_model(dir.file("d.jet"), x), want, 1e-2);
  }
}

TEST_CASE("jet-convert: --io-precision fp16 gives a model whose inputs and outputs are half") {
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  dir.write("block.onnx", residual_block(&rng).bytes());
  const std::string in = "'" + dir.file("block.onnx") + "' --input-shape x=2x4x6x6 -o '" + dir.file("h.jet") + "'";
  const Result bad = jet_convert(in + " --io-precision fp16");
  CHECK(bad.status == 2);
  CHECK(contains(bad.output, "--io-precision fp16 needs --precision fp16"));
  const Result r = jet_convert(in + " --precision fp16 --io-precision fp16");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(contains(r.output, "inputs and outputs too"));
  CHECK(contains(r.output, "'x' f16 2x4x6x6"));
  CHECK(contains(r.output, "'probs' f16 2x5"));
  LoadOptions lo;
  lo.backend = Backend::CPU;
  std::shared_ptr<Engine> e;
  const Status st = Engine::load(dir.file("h.jet"), lo, &e);
  REQUIRE_MESSAGE(st.ok(), st.to_string());
  CHECK(e->tensor(e->input(0)).dtype == DType::F16);
  CHECK(e->tensor(e->output(0)).dtype == DType::F16);
}

TEST_CASE("jet-convert: every unsupported op is listed in one run, and no file is written") {
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  OnnxModel m(17);
  m.input("x", {1, 3, 4, 4});
  m.node("Relu", {"x"}, {"a"}, "relu");
  m.node("Acos", {"a"}, {"b"}, "acos_node");
  m.node("Asin", {"b"}, {"c"}, "asin_node");
  m.node("Sigmoid", {"x"}, {"d"}, "sigmoid");
  m.node("Atan", {"d"}, {"e"}, "atan_node");
  m.output("c");
  m.output("e");
  dir.write("bad.onnx", m.bytes());
  const Result r = jet_convert("'" + dir.file("bad.onnx") + "' -o '" + dir.file("bad.jet") + "'");
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK(contains(r.output, "Acos 'acos_node' (opset 17)"));
  CHECK(contains(r.output, "Atan 'atan_node' (opset 17)"));
  // Asin reads the unsupported Acos's output: it is listed too, since it is unsupported itself.
  CHECK(contains(r.output, "Asin 'asin_node'"));
  CHECK(contains(r.output, "no output file was written"));
  CHECK_FALSE(exists(dir.file("bad.jet")));
  (void)rng;
}

TEST_CASE("jet-convert: bad command lines exit with status 2 and say why") {
  const Result none = jet_convert("");
  CHECK(none.status == 2);
  CHECK(contains(none.output, "no ONNX model given"));
  const Result no_out = jet_convert("model.onnx");
  CHECK(no_out.status == 2);
  CHECK(contains(no_out.output, "no output file given"));
  const Result bad_pass = jet_convert("model.onnx -o m.jet --disable-pass fold_everything");
  CHECK(bad_pass.status == 2);
  CHECK(contains(bad_pass.output, "unknown pass 'fold_everything'"));
  const Result bad_precision = jet_convert("model.onnx -o m.jet --precision int8");
  CHECK(bad_precision.status == 2);
  const Result missing = jet_convert("/nonexistent/model.onnx -o /tmp/never.jet");
  CHECK(missing.status == 1);
  CHECK(contains(missing.output, "cannot open '/nonexistent/model.onnx': No such file or directory"));
}

namespace {

std::string file_text(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return "<missing>";
  std::string s;
  char buf[4096];
  size_t got = 0;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, got);
  std::fclose(f);
  return s;
}

bool is_fifo(const std::string& path) {
  struct stat sb;
  return lstat(path.c_str(), &sb) == 0 && S_ISFIFO(sb.st_mode);
}

bool is_symlink(const std::string& path) {
  struct stat sb;
  return lstat(path.c_str(), &sb) == 0 && S_ISLNK(sb.st_mode);
}

// A one-node model: y = Relu(x), x of 1x3x4x4.
OnnxModel relu_model() {
  OnnxModel m(13);
  m.input("x", {1, 3, 4, 4});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y");
  return m;
}

}  // namespace

TEST_CASE("jet-convert: files: never over its input, special files refused or written through, failed writes keep the old file") {
  TempDir dir;
  dir.write("m.onnx", relu_model().bytes());
  const std::string in = "'" + dir.file("m.onnx") + "'";
  const std::string model = file_text(dir.file("m.onnx"));

  // The output is the input (directly or through a link): refused, the input untouched.
  Result r = jet_convert(in + " -o " + in);
  CHECK(r.status == 2);
  CHECK(contains(r.output, "is the input model"));
  REQUIRE(symlink("m.onnx", dir.file("link.onnx").c_str()) == 0);
  r = jet_convert(in + " -o '" + dir.file("link.onnx") + "'");
  CHECK(r.status == 2);
  CHECK(file_text(dir.file("m.onnx")) == model);

  // Inputs that are not regular files: refused at once, never read without end or waited on.
  r = jet_convert("/dev/zero -o '" + dir.file("z.jet") + "'");
  CHECK(r.status == 1);
  CHECK(contains(r.output, "'/dev/zero': it is a character device, not a regular file"));
  REQUIRE(mkfifo(dir.file("labels.fifo").c_str(), 0644) == 0);
  r = jet_convert(in + " -o '" + dir.file("l.jet") + "' --labels '" + dir.file("labels.fifo") + "'");
  CHECK(r.status == 1);
  CHECK(contains(r.output, "is a FIFO, not a regular file"));
  CHECK_FALSE(exists(dir.file("l.jet")));

  // A symbolic link as the output is written through; a FIFO without a reader is refused.
  dir.write("target.jet", "old");
  REQUIRE(symlink("target.jet", dir.file("out.jet").c_str()) == 0);
  r = jet_convert(in + " -o '" + dir.file("out.jet") + "'");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(is_symlink(dir.file("out.jet")));
  CHECK(file_text(dir.file("target.jet")).size() > 100);
  REQUIRE(mkfifo(dir.file("out.fifo").c_str(), 0644) == 0);
  r = jet_convert(in + " -o '" + dir.file("out.fifo") + "'");
  CHECK(r.status == 1);
  CHECK(contains(r.output, "FIFO with no reader"));
  CHECK(is_fifo(dir.file("out.fifo")));

  // A write that fails part-way (`ulimit -f`): the previous file stays, the message gives the
  // system's reason and names the output, never a temporary file, and none is left behind.
  // The previous file is an fp16 conversion, so it differs from what the failed run would write.
  r = jet_convert(in + " -o '" + dir.file("keep.jet") + "' --precision fp16");
  REQUIRE(r.status == 0);
  const std::string good = file_text(dir.file("keep.jet"));
  REQUIRE(good.size() > 1024);
  Result limited;  // 1 block of 512 bytes: less than any model
  {
    const std::string c = "ulimit -f 1; '" + std::string(JET_CONVERT_PATH) + "' " + in + " -o '" + dir.file("keep.jet") +
                          "' 2>&1";
    FILE* p = popen(c.c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[4096];
    size_t got = 0;
    while ((got = std::fread(buf, 1, sizeof buf, p)) > 0) limited.output.append(buf, got);
    const int st = pclose(p);
    limited.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  INFO(limited.output);
  CHECK(limited.status == 1);
  CHECK(contains(limited.output, "cannot write '" + dir.file("keep.jet") + "': File too large"));
  CHECK_FALSE(contains(limited.output, ".tmp"));
  CHECK(file_text(dir.file("keep.jet")) == good);
  FILE* ls = popen(("ls -A '" + dir.path + "' | grep -c tmp").c_str(), "r");
  REQUIRE(ls != nullptr);
  char count[16] = {};
  CHECK(std::fgets(count, sizeof count, ls) != nullptr);
  pclose(ls);
  CHECK(std::string(count) == "0\n");
}

TEST_CASE("jet-convert: messages: synthesized node names, declared-shape warnings, control characters escaped") {
  TempDir dir;
  // Two unnamed unsupported nodes: each gets "<op_type>_<index>" in the report.
  {
    OnnxModel m(17);
    m.input("x", {1, 3, 4, 4});
    m.node("Acos", {"x"}, {"a"})->set_name("");
    m.node("Acos", {"a"}, {"b"})->set_name("");
    m.output("b");
    dir.write("unnamed.onnx", m.bytes());
    const Result r = jet_convert("'" + dir.file("unnamed.onnx") + "' -o '" + dir.file("u.jet") + "'");
    CHECK(r.status == 1);
    CHECK(contains(r.output, "Acos 'Acos_0'"));
    CHECK(contains(r.output, "Acos 'Acos_1'"));
    CHECK_FALSE(contains(r.output, "''"));
  }
  // An unnamed node reading a value nobody produces: named the same way.
  {
    OnnxModel m(13);
    m.input("x", {1, 3, 4, 4});
    m.node("Relu", {"nowhere"}, {"y"})->set_name("");
    m.output("y");
    dir.write("dangling.onnx", m.bytes());
    const Result r = jet_convert("'" + dir.file("dangling.onnx") + "' -o '" + dir.file("d.jet") + "'");
    CHECK(r.status == 1);
    CHECK(contains(r.output, "Relu 'Relu_0': input 'nowhere'"));
  }
  // The model declares y as 1x3x5x5; Relu computes 1x3x4x4: converted, with a warning.
  {
    OnnxModel m = relu_model();
    auto* shape = m.graph->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int64_t d : {1, 3, 5, 5}) shape->add_dim()->set_dim_value(d);
    dir.write("declared.onnx", m.bytes());
    const Result r = jet_convert("'" + dir.file("declared.onnx") + "' -o '" + dir.file("w.jet") + "'");
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK(contains(r.output, "warning: graph output 'y' computes dims [1, 3, 4, 4] but the model declares [1, 3, 5, 5]"));
  }
  // Control characters in a name (an ESC sequence, a NUL) are escaped, never printed raw.
  {
    OnnxModel m(17);
    m.input("x", {1, 3, 4, 4});
    m.node("Acos", {"x"}, {"y"})->set_name(std::string("evil\x1b[31m\0name", 15));
    m.output("y");
    dir.write("ctl.onnx", m.bytes());
    const Result r = jet_convert("'" + dir.file("ctl.onnx") + "' -o '" + dir.file("c.jet") + "'");
    CHECK(r.status == 1);
    CHECK(contains(r.output, "evil\\x1b[31m\\x00name"));
    CHECK(r.output.find('\x1b') == std::string::npos);
  }
}

#endif
