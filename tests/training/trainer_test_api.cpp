// jet::Trainer (runtime/training/): the one allocation at create and none per step, save() and a
// reload, frozen parameters, and the errors (an op without a backward, a pattern that matches
// nothing, last_layers past the model, a failed save keeping the user's file). The numbers
// themselves are checked against PyTorch by torch_match.py.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "common/alloc_counter.h"
#include "device_memory.h"
#include "jet/trainer.h"
#include "jet/training_progress.h"
#include "runtime/model_util.h"
#include "training/trainer_models.h"

using namespace jet;
using namespace jet::test;

namespace {

Status make_trainer(const Bytes& bytes, const TrainerConfig& cfg, std::unique_ptr<Trainer>* out) {
  std::shared_ptr<Engine> engine = load_engine(bytes, Handle::cpu());
  return Trainer::create(engine, cfg, out);
}

// The bytes of the buffer holding tensor `name` in a model file.
Bytes tensor_bytes(const Bytes& file, const std::string& name) {
  const fb::Model* m = fb::GetModel(file.data());
  for (flatbuffers::uoffset_t t = 0; t < m->tensors()->size(); ++t) {
    const fb::Tensor* tensor = m->tensors()->Get(t);
    if (tensor->name()->str() != name) continue;
    const fb::Buffer* b = m->buffers()->Get(static_cast<flatbuffers::uoffset_t>(tensor->buffer()));
    return Bytes(file.begin() + static_cast<std::ptrdiff_t>(b->offset()),
                 file.begin() + static_cast<std::ptrdiff_t>(b->offset() + b->size()));
  }
  FAIL("no tensor " << name);
  return {};
}

Bytes read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("create makes one allocation; step() and evaluate() make none") {
  const Bytes bytes = small_model(false);
  std::shared_ptr<Engine> engine = load_engine(bytes, Handle::cpu());
  for (OptimizerKind opt : {OptimizerKind::SGD, OptimizerKind::ADAM}) {
    TrainerConfig cfg;
    cfg.optimizer = opt;
    cfg.sgd.momentum = 0.9f;
    cfg.clip_grad_norm = 1.f;
    const uint64_t before = rt::host_alloc_count();
    std::unique_ptr<Trainer> trainer;
    REQUIRE_OK(Trainer::create(engine, cfg, &trainer));
    CHECK(rt::host_alloc_count() == before + 1);
    const TrainerMemory& m = trainer->memory();
    CHECK(m.total >= m.activations + m.gradients + m.parameters + m.optimizer + m.workspace + m.other);
    CHECK(m.optimizer > 0);
    Batch batch;
    float first = 0.f, loss = 0.f;
    REQUIRE_OK(trainer->step(batch.view(), &first));  // warm-up
    EvalResult eval;
    const bool counting = alloc_counting_available();
    if (!counting) MESSAGE("allocation counting skipped: a sanitizer owns malloc in this build");
    bool all_ok = true;
    if (counting) arm_alloc_counter();
    for (int i = 0; i < 30; ++i) {
      all_ok = all_ok && trainer->step(batch.view(), &loss).ok();
      all_ok = all_ok && trainer->evaluate(batch.view(), &eval).ok();
    }
    if (counting) CHECK(disarm_alloc_counter() == 0);
    CHECK(all_ok);
    CHECK(rt::host_alloc_count() == before + 1);
    // 30 steps on one batch learn it.
    REQUIRE_OK(trainer->step(batch.view(), &loss));
    CHECK(loss < 0.5f * first);
    CHECK(trainer->steps_done() >= 31);
  }
}

TEST_CASE("a profiled step times every forward op, the loss, every backward step and the update") {
  const Bytes bytes = small_model(false);
  std::shared_ptr<Engine> engine = load_engine(bytes, Handle::cpu());
  TrainerConfig cfg;
  cfg.clip_grad_norm = 1.f;
  std::unique_ptr<Trainer> trainer;
  REQUIRE_OK(Trainer::create(engine, cfg, &trainer));
  Batch batch;
  std::vector<StepTime> times;
  const auto refused = [&](const char* why) {
    const Status st = trainer->step_times(&times);
    INFO(st.to_string());
    CHECK(st.code() == StatusCode::BAD_PARAM);
    CHECK(contains(st.message(), why));
  };
  refused("profiling is off");
  REQUIRE_OK(trainer->set_profiling(true));
  refused("no profiled step");
  REQUIRE_OK(trainer->step(batch.view(), nullptr));
  // Profiling allocates at set_profiling, not per step.
  const bool counting = alloc_counting_available();
  if (counting) arm_alloc_counter();
  const bool ok = trainer->step(batch.view(), nullptr).ok();
  if (counting) CHECK(disarm_alloc_counter() == 0);
  CHECK(ok);
  REQUIRE_OK(trainer->step_times(&times));
  int forward = 0, loss = 0, backward = 0, clip = 0, update = 0;
  for (const StepTime& t : times) {
    const std::string phase = t.phase;
    forward += phase == "forward";
    loss += phase == "loss";
    backward += phase == "backward";
    clip += phase == "clip";
    update += phase == "update";
    CHECK(t.ms >= 0.0);
    if (phase == "forward" || phase == "backward") {
      REQUIRE(t.op >= 0);
      CHECK(t.name == engine->op(t.op).name);
      CHECK(t.type == engine->op(t.op).type);
    }
  }
  // Every op of small_model is on the loss's path and has a trainable parameter upstream of its
  // output, except none: each forward op has its backward step.
  CHECK(forward == engine->num_ops());
  CHECK(backward == forward);
  CHECK(loss == 1);
  CHECK(clip == 1);
  CHECK(update == 1);
  CHECK(times.size() == static_cast<size_t>(forward + backward + 3));
  // The parts are in step()'s order: the forward ops first, in the engine's order.
  for (int i = 0; i < forward; ++i) CHECK(times[static_cast<size_t>(i)].op == i);
  REQUIRE_OK(trainer->set_profiling(false));
  refused("profiling is off");
}

TEST_CASE("steps allocate nothing with strided convolutions and batch norm; they learn") {
  std::unique_ptr<Trainer> trainer;
  TrainerConfig cfg;
  cfg.sgd.lr = 0.05f;
  cfg.sgd.momentum = 0.9f;
  REQUIRE_OK(make_trainer(strided_model(), cfg, &trainer));
  StridedBatch batch;
  float first = 0.f, loss = 0.f;
  REQUIRE_OK(trainer->step(batch.view(), &first));  // warm-up
  const bool counting = alloc_counting_available();
  if (counting) arm_alloc_counter();
  bool all_ok = true;
  for (int i = 0; i < 15; ++i) all_ok = all_ok && trainer->step(batch.view(), &loss).ok();
  if (counting) CHECK(disarm_alloc_counter() == 0);
  CHECK(all_ok);
  CHECK(loss < first);
}

TEST_CASE("save writes the trained weights; the saved model reloads and evaluates the same") {
  const Bytes bytes = small_model(false);
  TrainerConfig cfg;
  cfg.sgd.lr = 0.05f;
  std::unique_ptr<Trainer> a;
  REQUIRE_OK(make_trainer(bytes, cfg, &a));
  Batch batch;
  EvalResult before, after;
  REQUIRE_OK(a->evaluate(batch.view(), &before));
  for (int i = 0; i < 5; ++i) REQUIRE_OK(a->step(batch.view(), nullptr));
  REQUIRE_OK(a->evaluate(batch.view(), &after));
  CHECK(after.loss != before.loss);
  CHECK(after.samples == kBatch);
  Bytes saved;
  REQUIRE_OK(a->save(&saved));
  REQUIRE(saved.size() == bytes.size());
  CHECK(tensor_bytes(saved, "conv1.weight") != tensor_bytes(bytes, "conv1.weight"));
  CHECK(tensor_bytes(saved, "bn1.running_mean") != tensor_bytes(bytes, "bn1.running_mean"));
  std::unique_ptr<Trainer> b;
  REQUIRE_OK(make_trainer(saved, cfg, &b));  // load() verifies the checksum
  EvalResult reloaded;
  REQUIRE_OK(b->evaluate(batch.view(), &reloaded));
  CHECK(reloaded.loss == after.loss);
  CHECK(reloaded.correct == after.correct);
  // The parameters the trainer reports are the saved ones.
  for (size_t i = 0; i < a->parameters().size(); ++i) {
    std::vector<float> va, vb;
    REQUIRE_OK(a->parameter_values(static_cast<int>(i), &va));
    REQUIRE_OK(b->parameter_values(static_cast<int>(i), &vb));
    CHECK(va == vb);
  }
  // And a file on disk, replacing an existing one.
  TempFile file("trainer_save");
  {
    std::ofstream(file.path(), std::ios::binary) << "an older file";
  }
  REQUIRE_OK(a->save(file.path()));
  CHECK(read_file(file.path()) == saved);
}

TEST_CASE("frozen parameters keep their values; patterns and last_layers choose") {
  const Bytes bytes = small_model(false);
  Batch batch;
  {
    TrainerConfig cfg;
    cfg.trainable = {"fc.*"};
    std::unique_ptr<Trainer> t;
    REQUIRE_OK(make_trainer(bytes, cfg, &t));
    int trainable = 0;
    for (const TrainerParameter& p : t->parameters()) trainable += p.trainable;
    CHECK(trainable == 2);
    // The frozen prefix's values are not kept for a backward: their regions are shared.
    CHECK(t->memory().activations < t->memory().activations_unshared);
    for (int i = 0; i < 3; ++i) REQUIRE_OK(t->step(batch.view(), nullptr));
    Bytes saved;
    REQUIRE_OK(t->save(&saved));
    CHECK(tensor_bytes(saved, "conv1.weight") == tensor_bytes(bytes, "conv1.weight"));
    CHECK(tensor_bytes(saved, "bn1.weight") == tensor_bytes(bytes, "bn1.weight"));
    CHECK(tensor_bytes(saved, "fc.weight") != tensor_bytes(bytes, "fc.weight"));
    // Batch norm still runs with batch statistics (PyTorch's train()): its running mean moves.
    CHECK(tensor_bytes(saved, "bn1.running_mean") != tensor_bytes(bytes, "bn1.running_mean"));
    std::vector<float> v;
    CHECK(t->parameter_values(0, &v).code() == StatusCode::NOT_SUPPORTED);  // conv1.weight, frozen
  }
  {
    TrainerConfig cfg;
    cfg.last_layers = 2;  // bn1 and fc
    std::unique_ptr<Trainer> t;
    REQUIRE_OK(make_trainer(bytes, cfg, &t));
    std::vector<std::string> names;
    for (const TrainerParameter& p : t->parameters()) {
      if (p.trainable) names.push_back(p.name);
    }
    CHECK(names == std::vector<std::string>{"bn1.weight", "bn1.bias", "fc.weight", "fc.bias"});
  }
}

TEST_CASE("an op without a backward before a trainable parameter is refused, naming it") {
  const Bytes bytes = small_model(true);
  TrainerConfig cfg;
  std::unique_ptr<Trainer> t;
  const Status st = make_trainer(bytes, cfg, &t);
  CHECK(st.code() == StatusCode::NOT_SUPPORTED);
  CHECK(contains(st.message(), "'max' (Reduce) has no backward (only Reduce SUM and MEAN have a backward)"));
  CHECK(contains(st.message(), "trainable parameter 'conv1.weight' is before it"));
  CHECK(!t);
  // Training only what is after it works.
  cfg.trainable = {"fc.*"};
  REQUIRE_OK(make_trainer(bytes, cfg, &t));
  Batch batch;
  float loss = 0.f;
  REQUIRE_OK(t->step(batch.view(), &loss));
  CHECK(loss > 0.f);
}

TEST_CASE("configuration errors name the problem") {
  const Bytes bytes = small_model(false);
  std::unique_ptr<Trainer> t;
  TrainerConfig cfg;
  cfg.trainable = {"fc.*", "conv9*"};
  Status st = make_trainer(bytes, cfg, &t);
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(contains(st.message(), "pattern 'conv9*' matches no parameter"));
  CHECK(contains(st.message(), "conv1.weight"));  // lists what there is
  cfg = TrainerConfig();
  cfg.last_layers = 4;
  st = make_trainer(bytes, cfg, &t);
  CHECK(contains(st.message(), "last_layers 4, but the model has 3 layers with parameters"));
  cfg = TrainerConfig();
  cfg.output = "probs";
  st = make_trainer(bytes, cfg, &t);
  CHECK(contains(st.message(), "no output 'probs'"));
  cfg = TrainerConfig();
  cfg.sgd.lr = -1.f;
  CHECK(!make_trainer(bytes, cfg, &t).ok());
  cfg = TrainerConfig();
  cfg.loss = LossKind::MSE;
  REQUIRE_OK(make_trainer(bytes, cfg, &t));
  Batch batch;
  CHECK(contains(t->step(batch.view(), nullptr).message(), "MSE needs the batch's targets"));
  std::vector<float> targets(kBatch * kClasses, 0.25f);
  float loss = 0.f;
  REQUIRE_OK(t->step(TrainBatch{batch.images.data(), nullptr, targets.data()}, &loss));
  CHECK(loss > 0.f);
}

TEST_CASE("a save that fails keeps the existing file") {
  const Bytes bytes = small_model(false);
  TrainerConfig cfg;
  std::unique_ptr<Trainer> t;
  REQUIRE_OK(make_trainer(bytes, cfg, &t));
  Batch batch;
  REQUIRE_OK(t->step(batch.view(), nullptr));
  TempFile file("trainer_keep");
  {
    std::ofstream f(file.path(), std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  // `ulimit -f` below the model's size, in a child so the limit does not stay with the test.
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {1024, 1024};
    setrlimit(RLIMIT_FSIZE, &lim);
    const Status st = t->save(file.path());
    _exit(!st.ok() && contains(st.message(), file.path()) ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(read_file(file.path()) == bytes);
  // A directory that does not exist: an error naming the path.
  const Status st = t->save("/nonexistent-dir/model.jet");
  CHECK(contains(st.message(), "/nonexistent-dir/model.jet"));
}

TEST_CASE("evaluate's predictions, the progress bar and the loss curve") {
  const Bytes bytes = small_model(false);
  TrainerConfig cfg;
  std::unique_ptr<Trainer> t;
  REQUIRE_OK(make_trainer(bytes, cfg, &t));
  Batch batch;
  LossCurve curve;
  curve.title = "small <model>";
  std::FILE* log = std::tmpfile();
  REQUIRE(log);
  ProgressBar bar("epoch 1/1", 8, log);
  for (int i = 0; i < 8; ++i) {
    float loss = 0.f;
    REQUIRE_OK(t->step(batch.view(), &loss));
    curve.steps.push_back(loss);
    bar.update(i + 1, loss, 0.5);
  }
  bar.finish();
  CHECK(bar.mean_loss() > 0.0);
  CHECK(bar.mean_accuracy() == doctest::Approx(0.5));
  std::rewind(log);
  char line[256] = {};
  REQUIRE(std::fgets(line, sizeof line, log));
  std::fclose(log);
  CHECK(contains(line, "epoch 1/1 [==============================] 8/8 loss "));
  CHECK(contains(line, "acc 50.0%"));
  std::vector<int32_t> predicted(kBatch, -1);
  EvalResult r;
  REQUIRE_OK(t->evaluate(batch.view(), &r, predicted.data()));
  int64_t agree = 0;
  for (int64_t i = 0; i < kBatch; ++i) {
    CHECK(predicted[static_cast<size_t>(i)] >= 0);
    CHECK(predicted[static_cast<size_t>(i)] < kClasses);
    agree += predicted[static_cast<size_t>(i)] == batch.labels[static_cast<size_t>(i)];
  }
  CHECK(agree == r.correct);
  curve.evaluated.push_back({7, r.loss});
  const std::string svg = curve.svg();
  CHECK(contains(svg, "<svg"));
  CHECK(contains(svg, "small &lt;model&gt;"));
  CHECK(contains(svg, "<polyline"));
  CHECK(contains(svg, "<circle"));
  TempFile file("loss_curve");
  REQUIRE_OK(curve.write_svg(file.path()));
  CHECK(read_file(file.path()).size() == svg.size());
  CHECK(LossCurve().write_svg(file.path()).code() == StatusCode::BAD_PARAM);
}

TEST_CASE("PyTorch's losses, replayed from tests/data/torch_small_cnn without PyTorch") {
  check_torch_reference(Backend::CPU);
}

TEST_CASE("cross-entropy on a Softmax's output is refused, MSE takes it") {
  ir::Graph g;
  int x = -1, y = -1;
  REQUIRE_OK(g.add_input("features", DType::F32, {kBatch, 7}, &x));
  ir::GemmAttrs ga;
  ga.trans_b = true;
  REQUIRE_OK(g.gemm("fc", x, random_constant(g, "fc.weight", {kClasses, 7}, -0.5f, 0.5f), -1, ga, &y));
  REQUIRE_OK(g.softmax("probs", y, 1, &y));
  REQUIRE_OK(g.mark_output(y));
  const Bytes bytes = model_bytes(g);
  TrainerConfig cfg;
  std::unique_ptr<Trainer> t;
  const Status st = make_trainer(bytes, cfg, &t);
  CHECK(contains(st.message(), "is a Softmax's: softmax cross-entropy takes the logits"));
  cfg.loss = LossKind::MSE;
  REQUIRE_OK(make_trainer(bytes, cfg, &t));
}
