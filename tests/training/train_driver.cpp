// jet_train_driver: trains a .jet model on .npy batches with jet::Trainer on the CPU and prints
// the loss of every step, one per line; what tests/training/torch_match.py compares with
// PyTorch's. Not a user tool (samples/finetune is the user's view).
//
//   jet_train_driver MODEL.jet IMAGES.npy LABELS.npy STEPS OPTIMIZER LR [key=value ...]
//     OPTIMIZER sgd | adam | adamw; keys: momentum, weight_decay, clip, trainable (a pattern),
//     last_layers, save (a path for the trained model)
// IMAGES holds STEPS x N samples in the model's input layout, LABELS STEPS x N class indices.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "jet/trainer.h"
#include "npy.h"

int main(int argc, char** argv) {
  using namespace jet;
  if (argc < 7) {
    std::fprintf(stderr, "usage: %s MODEL IMAGES LABELS STEPS OPTIMIZER LR [key=value ...]\n", argv[0]);
    return 2;
  }
  TrainerConfig cfg;
  const std::string opt = argv[5];
  const float lr = std::strtof(argv[6], nullptr);
  cfg.optimizer = opt == "sgd" ? OptimizerKind::SGD : opt == "adam" ? OptimizerKind::ADAM : OptimizerKind::ADAMW;
  cfg.sgd.lr = lr;
  cfg.adam.lr = lr;
  std::string save;
  for (int i = 7; i < argc; ++i) {
    const std::string kv = argv[i];
    const size_t eq = kv.find('=');
    const std::string k = kv.substr(0, eq), v = eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (k == "momentum") {
      cfg.sgd.momentum = std::strtof(v.c_str(), nullptr);
    } else if (k == "weight_decay") {
      cfg.sgd.weight_decay = cfg.adam.weight_decay = std::strtof(v.c_str(), nullptr);
    } else if (k == "clip") {
      cfg.clip_grad_norm = std::strtof(v.c_str(), nullptr);
    } else if (k == "trainable") {
      cfg.trainable.push_back(v);
    } else if (k == "last_layers") {
      cfg.last_layers = std::atoi(v.c_str());
    } else if (k == "save") {
      save = v;
    } else {
      std::fprintf(stderr, "unknown option '%s'\n", kv.c_str());
      return 2;
    }
  }
  std::unique_ptr<Trainer> trainer;
  Status st = Trainer::create(argv[1], LoadOptions{Backend::CPU}, cfg, &trainer);
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  tools::HostArray images, labels;
  st = tools::read_npy(argv[2], &images);
  if (st.ok()) st = tools::read_npy(argv[3], &labels);
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  const int steps = std::atoi(argv[4]);
  const int64_t n = trainer->batch_size();
  const size_t per_image = images.values.size() / labels.values.size();
  if (labels.values.size() < static_cast<size_t>(steps * n)) {
    std::fprintf(stderr, "%d steps of %lld samples need more labels than %zu\n", steps, static_cast<long long>(n),
                 labels.values.size());
    return 1;
  }
  std::vector<int32_t> batch_labels(static_cast<size_t>(n));
  for (int s = 0; s < steps; ++s) {
    for (int64_t i = 0; i < n; ++i) batch_labels[static_cast<size_t>(i)] = static_cast<int32_t>(labels.values[static_cast<size_t>(s * n + i)]);
    TrainBatch b;
    b.input = images.values.data() + static_cast<size_t>(s * n) * per_image;
    b.labels = batch_labels.data();
    float loss = 0;
    st = trainer->step(b, &loss);
    if (!st.ok()) {
      std::fprintf(stderr, "step %d: %s\n", s, st.message().c_str());
      return 1;
    }
    std::printf("%.9g\n", static_cast<double>(loss));
  }
  if (!save.empty()) {
    st = trainer->save(save);
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.message().c_str());
      return 1;
    }
  }
  return 0;
}
