// jet-convert's newcomer options, run as a process: --preprocess (what the runtime reads back as
// ModelSummary::preprocessing), --labels (stored; only regular files of bounded size),
// --outputs (the graph cut at named tensors, unsupported ops behind them ignored), the
// per-op-type summary of unsupported ops, and --opt=value.
#include <doctest/doctest.h>

#if !defined(JET_HAVE_ONNX_IMPORT) || !defined(JET_CONVERT_PATH)

TEST_CASE("jet-convert options: not built (libonnx-dev and protobuf not found at configure time)") {
  MESSAGE("jet-convert is not part of this build");
}

#else

#include <sys/stat.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "jet/runtime.h"
#include "onnx_builder.h"

using namespace jet;
using namespace jet::test;

namespace {

struct Result {
  int status = -1;
  std::string output;  // stdout and stderr
};

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

bool contains(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

bool exists(const std::string& path) {
  struct stat sb;
  return stat(path.c_str(), &sb) == 0;
}

std::shared_ptr<Engine> load(const std::string& path) {
  LoadOptions lo;
  lo.backend = Backend::CPU;
  std::shared_ptr<Engine> e;
  const Status st = Engine::load(path, lo, &e);
  REQUIRE_MESSAGE(st.ok(), st.to_string());
  return e;
}

// x [dims] -> Relu -> "features" -> Acos (unsupported) -> "post" (the model's output).
std::string relu_then_acos(const std::vector<int64_t>& dims) {
  OnnxModel m(17);
  m.input("x", dims);
  m.node("Relu", {"x"}, {"features"}, "relu");
  m.node("Acos", {"features"}, {"post"}, "acos");
  m.output("post");
  return m.bytes();
}

// x [dims] -> Relu -> "y".
std::string relu(const std::vector<int64_t>& dims) {
  OnnxModel m(17);
  m.input("x", dims);
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y");
  return m.bytes();
}

}  // namespace

TEST_CASE("jet-convert: unsupported ops are summarized per op type, then all listed") {
  TempDir dir;
  OnnxModel m(17);
  m.input("x", {1, 3, 4, 4});
  m.node("Acos", {"x"}, {"e0"}, "acos0");
  m.node("Acos", {"x"}, {"e1"}, "acos1");
  m.node("Acos", {"x"}, {"e2"}, "acos2");
  m.node("Atan", {"x"}, {"c0"}, "atan0");
  for (const char* out : {"e0", "e1", "e2", "c0"}) m.output(out);
  dir.write("bad.onnx", m.bytes());
  const Result r = jet_convert("'" + dir.file("bad.onnx") + "' -o '" + dir.file("bad.jet") + "'");
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK(contains(r.output, "4 unsupported ops of 2 types"));
  const size_t acos_line = r.output.find("  Acos ");
  REQUIRE(acos_line != std::string::npos);
  const std::string line = r.output.substr(acos_line, r.output.find('\n', acos_line) - acos_line);
  CHECK(contains(line, " 3  first: 'acos0'"));
  CHECK(r.output.find("  Acos ") < r.output.find("  Atan "));  // the most frequent first
  const size_t full = r.output.find("the full list:");
  REQUIRE(full != std::string::npos);
  CHECK(acos_line < full);
  for (const char* node : {"'acos0'", "'acos1'", "'acos2'", "'atan0'"}) CHECK(r.output.find(node, full) != std::string::npos);
  CHECK(contains(r.output, "--outputs"));
  CHECK_FALSE(exists(dir.file("bad.jet")));
}

TEST_CASE("jet-convert --outputs: the graph is cut at the named tensors; an unknown name is an error") {
  TempDir dir;
  dir.write("m.onnx", relu_then_acos({1, 3, 4, 4}));
  const std::string in = "'" + dir.file("m.onnx") + "' -o '" + dir.file("m.jet") + "'";
  const Result whole = jet_convert(in);
  CHECK(whole.status == 1);  // Acos is unsupported
  const Result cut = jet_convert(in + " --outputs=features");
  INFO(cut.output);
  REQUIRE(cut.status == 0);
  CHECK(contains(cut.output, "output:        'features' f32 1x3x4x4"));
  CHECK(contains(cut.output, "1 of 2 nodes are not needed"));
  std::shared_ptr<Engine> e = load(dir.file("m.jet"));
  REQUIRE(e->num_outputs() == 1);
  CHECK(e->tensor(e->output(0)).name == "features");
  // It computes the ReLU.
  std::unique_ptr<ExecutionContext> ctx;
  REQUIRE(e->create_context(&ctx).ok());
  std::vector<float> x(48), y(48, 7.f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3.f;
  REQUIRE(ctx->copy_input(e->input(0), x.data(), x.size() * 4, DType::F32).ok());
  REQUIRE(ctx->run().ok());
  REQUIRE(ctx->copy_output(e->output(0), y.data(), y.size() * 4, DType::F32).ok());
  for (size_t i = 0; i < x.size(); ++i) CHECK(y[i] == (x[i] > 0 ? x[i] : 0.f));

  const Result unknown = jet_convert(in + " --outputs features,nope");
  CHECK(unknown.status == 1);
  CHECK(contains(unknown.output, "no tensor named 'nope'"));
  CHECK(contains(unknown.output, "'post'"));  // names the model's outputs
  const Result partial = jet_convert(in + " --outputs feat");
  CHECK(partial.status == 1);
  CHECK(contains(partial.output, "tensors whose names contain it: 'features'"));
  const Result empty = jet_convert(in + " --outputs features,");
  CHECK(empty.status == 2);
  CHECK(contains(empty.output, "empty name"));
}

TEST_CASE("jet-convert --preprocess: recorded in the metadata, read back by the runtime") {
  TempDir dir;
  dir.write("nchw.onnx", relu({1, 3, 8, 6}));
  dir.write("nhwc.onnx", relu({1, 8, 6, 3}));
  dir.write("four.onnx", relu({1, 4, 8, 6}));

  Result r = jet_convert("'" + dir.file("nchw.onnx") + "' -o '" + dir.file("a.jet") + "' --preprocess imagenet");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(contains(r.output, "8x6 centre crop 0.875"));
  std::shared_ptr<Engine> a = load(dir.file("a.jet"));
  REQUIRE(a->summary().preprocessing.size() == 1);
  const ImagePreprocessing& p = a->summary().preprocessing[0];
  CHECK(p.input == a->input(0));
  CHECK(p.height == 8);
  CHECK(p.width == 6);
  CHECK(p.resize == ImagePreprocessing::Resize::CENTER_CROP);
  CHECK(p.crop_fraction == doctest::Approx(0.875));
  CHECK_FALSE(p.nhwc);
  CHECK_FALSE(p.bgr);
  REQUIRE(p.mean.size() == 3);
  REQUIRE(p.std.size() == 3);
  CHECK(p.mean[1] == doctest::Approx(0.456));
  CHECK(p.std[2] == doctest::Approx(0.225));
  CHECK(a->summary().schema_minor == kSchemaMinor);

  // NHWC from the dims; range -1..1 is mean 0.5, std 0.5; letterbox with a pad; BGR.
  r = jet_convert("'" + dir.file("nhwc.onnx") + "' -o '" + dir.file("b.jet") +
                  "' --preprocess=range=-1:1,resize=letterbox,pad=114,order=bgr");
  REQUIRE(r.status == 0);
  std::shared_ptr<Engine> b = load(dir.file("b.jet"));
  REQUIRE(b->summary().preprocessing.size() == 1);
  const ImagePreprocessing& q = b->summary().preprocessing[0];
  CHECK(q.nhwc);
  CHECK(q.bgr);
  CHECK(q.height == 8);
  CHECK(q.width == 6);
  CHECK(q.resize == ImagePreprocessing::Resize::LETTERBOX);
  CHECK(q.pad_value == doctest::Approx(114));
  REQUIRE(q.mean.size() == 3);
  CHECK(q.mean[0] == doctest::Approx(0.5));
  CHECK(q.std[0] == doctest::Approx(0.5));

  // Errors: bad items exit 2; an input that is not a 3-channel image exits 1, no file written.
  r = jet_convert("'" + dir.file("nchw.onnx") + "' -o '" + dir.file("c.jet") + "' --preprocess resize=fill");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "bad item 'resize=fill'"));
  r = jet_convert("'" + dir.file("nchw.onnx") + "' -o '" + dir.file("c.jet") + "' --preprocess std=1:0:1");
  CHECK(r.status == 2);
  r = jet_convert("'" + dir.file("four.onnx") + "' -o '" + dir.file("c.jet") + "' --preprocess imagenet");
  CHECK(r.status == 1);
  CHECK(contains(r.output, "images need 3"));
  r = jet_convert("'" + dir.file("nchw.onnx") + "' -o '" + dir.file("c.jet") + "' --preprocess input=nope");
  CHECK(r.status == 1);
  CHECK(contains(r.output, "no input 'nope'"));
  CHECK_FALSE(exists(dir.file("c.jet")));
}

TEST_CASE("jet-convert --labels: stored; a FIFO, a directory or an oversized file is refused") {
  TempDir dir;
  dir.write("m.onnx", relu({1, 5}));
  const std::string in = "'" + dir.file("m.onnx") + "' -o '" + dir.file("m.jet") + "'";
  dir.write("labels.txt", "cat\r\ndog\n\nbird\nfish");
  Result r = jet_convert(in + " --labels '" + dir.file("labels.txt") + "'");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(contains(r.output, "5 labels from"));
  CHECK_FALSE(contains(r.output, "warning"));  // 5 values per image
  std::shared_ptr<Engine> e = load(dir.file("m.jet"));
  CHECK(e->summary().labels == std::vector<std::string>{"cat", "dog", "", "bird", "fish"});

  dir.write("three.txt", "a\nb\nc\n");
  r = jet_convert(in + " --labels='" + dir.file("three.txt") + "'");
  CHECK(r.status == 0);
  CHECK(contains(r.output, "3 labels from"));
  CHECK(contains(r.output, "warning: no output has that many values per image"));

  REQUIRE(mkfifo(dir.file("fifo").c_str(), 0600) == 0);
  r = jet_convert(in + " --labels '" + dir.file("fifo") + "'");  // must not block
  CHECK(r.status == 1);
  CHECK(contains(r.output, "not a regular file"));
  r = jet_convert(in + " --labels '" + dir.path + "'");
  CHECK(r.status == 1);
  CHECK(contains(r.output, "not a regular file"));
  dir.write("big.txt", std::string((size_t(4) << 20) + 1, 'x'));
  r = jet_convert(in + " --labels '" + dir.file("big.txt") + "'");
  CHECK(r.status == 1);
  CHECK(contains(r.output, "more than the 4194304 bytes allowed"));
  dir.write("long.txt", "ok\n" + std::string(1025, 'y') + "\n");
  r = jet_convert(in + " --labels '" + dir.file("long.txt") + "'");
  CHECK(r.status == 1);
  CHECK(contains(r.output, "line 2 has 1025 bytes"));
}

#endif
