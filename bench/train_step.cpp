// jet_bench_train_step: the time of one jet::Trainer step (forward with batch statistics,
// softmax cross-entropy, backward, SGD with momentum) on a zoo network with random weights and
// every parameter trainable (issue 15's "training step of ResNet-18, batch 32, fp32").
//
//   jet_bench_train_step [--network resnet18|resnet50|mobilenet_v2|efficientnet_b0] [--batch 32]
//                        [--image 224] [--device cpu|cuda] [--steps 20] [--adam]
//
// Prints the plan's memory and the median / min step time over --steps steps after 3 warm-up
// steps. CUDA: each step is timed to the end of its work (the loss is read back, one
// synchronization per step, as a training loop that prints the loss does).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "jet/trainer.h"
#include "write_model.h"
#include "zoo.h"

using namespace jet;

int main(int argc, char** argv) {
  std::string network = "resnet18", device = "cuda";
  ZooOptions opt;
  opt.batch = 32;
  opt.image = 224;
  int steps = 20;
  bool adam = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--network") network = value();
    else if (a == "--batch") opt.batch = std::atoi(value().c_str());
    else if (a == "--image") opt.image = std::atoi(value().c_str());
    else if (a == "--device") device = value();
    else if (a == "--steps") steps = std::atoi(value().c_str());
    else if (a == "--adam") adam = true;
    else {
      std::fprintf(stderr, "usage: %s [--network resnet18|resnet50|mobilenet_v2|efficientnet_b0] [--batch N] "
                           "[--image N] [--device cpu|cuda] [--steps N] [--adam]\n", argv[0]);
      return 2;
    }
  }
  if (opt.batch < 1 || opt.image < 32 || steps < 1) return std::fprintf(stderr, "bad sizes\n"), 2;
  ir::Graph g;
  Status st = network == "resnet18"          ? resnet18(opt, &g)
              : network == "resnet50"        ? resnet50(opt, &g)
              : network == "mobilenet_v2"    ? mobilenet_v2(opt, &g)
              : network == "efficientnet_b0" ? efficientnet_b0(opt, &g)
                                             : Status(StatusCode::BAD_PARAM, "unknown network " + network);
  std::vector<uint8_t> bytes;
  if (st.ok()) st = write_model(g, WriteOptions{}, &bytes);
  LoadOptions load;
  load.backend = device == "cpu" ? Backend::CPU : Backend::CUDA;
  std::shared_ptr<Engine> engine;
  if (st.ok()) st = Engine::load(bytes.data(), bytes.size(), load, &engine);
  TrainerConfig cfg;
  cfg.optimizer = adam ? OptimizerKind::ADAM : OptimizerKind::SGD;
  cfg.sgd.lr = 1e-3f;
  cfg.sgd.momentum = 0.9f;
  cfg.adam.lr = 1e-4f;
  std::unique_ptr<Trainer> trainer;
  if (st.ok()) st = Trainer::create(engine, cfg, &trainer);
  if (!st.ok()) {
    std::fprintf(stderr, "jet_bench_train_step: %s\n", st.message().c_str());
    return 1;
  }
  const TensorInfo& in = engine->tensor(engine->input(0));
  std::vector<float> images(in.bytes / sizeof(float));
  uint32_t state = 12345;
  for (float& v : images) v = static_cast<float>((state = state * 1664525u + 1013904223u) >> 8) / 16777216.f - 0.5f;
  std::vector<int32_t> labels(static_cast<size_t>(opt.batch));
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int32_t>((i * 37) % 1000);
  const TrainBatch batch{images.data(), labels.data(), nullptr};
  const TrainerMemory& m = trainer->memory();
  int64_t trainable = 0;
  for (const TrainerParameter& p : trainer->parameters()) trainable += p.trainable ? p.elements : 0;
  std::printf("%s batch %lld %lldx%lld f32 on %s, %s, %lld trainable parameters\n", network.c_str(),
              static_cast<long long>(opt.batch), static_cast<long long>(opt.image), static_cast<long long>(opt.image),
              device.c_str(), adam ? "Adam" : "SGD momentum", static_cast<long long>(trainable));
  std::printf("plan: %.1f MiB in one allocation (activations and their gradients %.1f MiB, %.1f unshared; parameter "
              "gradients %.1f, parameters %.1f, optimizer %.1f, workspace %.1f)\n",
              m.total / 1048576.0, m.activations / 1048576.0, m.activations_unshared / 1048576.0,
              m.gradients / 1048576.0, m.parameters / 1048576.0, m.optimizer / 1048576.0, m.workspace / 1048576.0);
  std::vector<double> ms;
  float loss = 0.f;
  for (int i = 0; i < steps + 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    st = trainer->step(batch, &loss);
    const double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!st.ok()) {
      std::fprintf(stderr, "jet_bench_train_step: step %d: %s\n", i, st.message().c_str());
      return 1;
    }
    if (i >= 3) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  std::printf("step: median %.3f ms, min %.3f ms over %d steps (loss %.4f)\n", ms[ms.size() / 2], ms[0], steps,
              static_cast<double>(loss));
  return 0;
}
