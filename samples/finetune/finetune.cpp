// finetune: on-device fine-tuning with jet::Trainer (docs/training.md). A small CNN that PyTorch
// trained on 8 of the 10 Fashion-MNIST classes (prepare.py) learns the two others from a few
// hundred images of all 10 classes; test accuracy per class before and after, a progress bar per
// epoch, the loss curve as SVG, and the time of a training step against PyTorch's on the same CPU or GPU.
//
//   finetune [--data DIR] [--device cpu|cuda] [--epochs N] [--lr LR] [--last-layers N]
//            [--svg loss.svg] [--save tuned.jet]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "command_line.h"
#include "jet/trainer.h"
#include "jet/training_progress.h"
#include "npy.h"

using namespace jet;

namespace {

const char* kUsage =
    "usage: finetune [--data DIR] [--device cpu|cuda] [--epochs N] [--lr LR] [--last-layers N]\n"
    "                [--svg FILE] [--save FILE]\n"
    "  --data         what prepare.py wrote (default: finetune_data)\n"
    "  --epochs       passes over the fine-tuning set (default 8)\n"
    "  --lr           SGD learning rate, momentum 0.9 (default 0.02)\n"
    "  --last-layers  train the parameters of the last N layers (default 3: the second batch norm\n"
    "                 and both linear layers; 0: every layer)\n"
    "  --svg          the loss curve (default: DIR/loss_curve.svg)\n"
    "  --save         write the fine-tuned model\n";

int fail(const std::string& message) {
  std::fprintf(stderr, "finetune: %s\n", message.c_str());
  return 1;
}

struct Dataset {
  std::vector<float> images;  // n x 784 pixels 0..255
  std::vector<int32_t> labels;
  size_t n = 0;
};

Status read_dataset(const std::string& dir, const std::string& stem, Dataset* d) {
  tools::HostArray images, labels;
  JET_RETURN_IF_ERROR(tools::read_npy(dir + "/" + stem + "_images.npy", &images));
  JET_RETURN_IF_ERROR(tools::read_npy(dir + "/" + stem + "_labels.npy", &labels));
  d->n = labels.values.size();
  if (images.values.size() != d->n * 784) return Status(StatusCode::BAD_PARAM, stem + ": images and labels disagree");
  d->images = std::move(images.values);
  for (float v : labels.values) d->labels.push_back(static_cast<int32_t>(v));
  return Status();
}

struct Accuracy {
  std::vector<int64_t> correct = std::vector<int64_t>(10, 0), total = std::vector<int64_t>(10, 0);
  double loss = 0;
  double of(int c) const { return total[c] ? static_cast<double>(correct[c]) / total[c] : 0.0; }
  double of(int first, int end) const {
    int64_t c = 0, t = 0;
    for (int k = first; k < end; ++k) c += correct[k], t += total[k];
    return t ? static_cast<double>(c) / t : 0.0;
  }
};

// The first `limit` test images in the model's batches (a last partial batch is left out).
Status evaluate(Trainer& t, const Dataset& test, size_t limit, Accuracy* acc) {
  const size_t b = static_cast<size_t>(t.batch_size());
  std::vector<int32_t> predicted(b);
  *acc = Accuracy();
  size_t batches = 0;
  for (size_t i = 0; i + b <= std::min(limit, test.n); i += b, ++batches) {
    EvalResult r;
    JET_RETURN_IF_ERROR(t.evaluate({test.images.data() + i * 784, test.labels.data() + i, nullptr}, &r, predicted.data()));
    acc->loss += r.loss;
    for (size_t k = 0; k < b; ++k) {
      const int label = test.labels[i + k];
      ++acc->total[label];
      acc->correct[label] += predicted[k] == label;
    }
  }
  acc->loss /= static_cast<double>(std::max<size_t>(batches, 1));
  return Status();
}

}  // namespace

int main(int argc, char** argv) {
  samples::CommandLine cl;
  std::string error;
  if (!samples::parse_command_line(argc, argv, kUsage, {"--data", "--epochs", "--lr", "--last-layers", "--svg", "--save"},
                                   {}, &cl, &error)) {
    return fail(error);
  }
  if (!cl.positional.empty()) return fail("unexpected argument '" + cl.positional[0] + "'\n" + kUsage);
  const std::string dir = cl.find("--data") ? *cl.find("--data") : "finetune_data";
  int epochs = 8, last_layers = 3;
  if (!cl.whole_number("--epochs", 1, 1000, &epochs, &error) ||
      !cl.whole_number("--last-layers", 0, 1000, &last_layers, &error)) {
    return fail(error);
  }
  float lr = 0.02f;
  if (const std::string* v = cl.find("--lr")) {
    char* end = nullptr;
    lr = std::strtof(v->c_str(), &end);
    if (end == v->c_str() || *end || !(lr > 0)) return fail("--lr takes a positive number, not '" + *v + "'");
  }
  const std::string svg = cl.find("--svg") ? *cl.find("--svg") : dir + "/loss_curve.svg";

  std::vector<std::string> names;
  {
    std::ifstream f(dir + "/labels.txt");
    for (std::string line; std::getline(f, line);) names.push_back(line);
  }
  if (names.size() != 10) return fail(dir + "/labels.txt: expected 10 class names (run prepare.py)");
  Dataset train, test;
  Status st = read_dataset(dir, "finetune", &train);
  if (st.ok()) st = read_dataset(dir, "test", &test);
  if (!st.ok()) return fail(st.message());

  TrainerConfig cfg;
  cfg.sgd.lr = lr;
  cfg.sgd.momentum = 0.9f;
  cfg.last_layers = last_layers;
  LoadOptions load;
  load.backend = cl.backend;
  std::unique_ptr<Trainer> trainer;
  st = Trainer::create(dir + "/pretrained.jet", load, cfg, &trainer);
  if (!st.ok()) return fail(st.message());
  std::printf("model %s/pretrained.jet on %s, batch %lld; trains:", dir.c_str(),
              cl.backend == Backend::CUDA ? "cuda" : "cpu", static_cast<long long>(trainer->batch_size()));
  for (const TrainerParameter& p : trainer->parameters()) {
    if (p.trainable) std::printf(" %s", p.name.c_str());
  }
  const TrainerMemory& mem = trainer->memory();
  std::printf("\nstep memory: %zu bytes in one allocation (activations and their gradients %zu, %zu unshared; "
              "parameter gradients %zu, parameters %zu, optimizer %zu, workspace %zu)\n",
              mem.total, mem.activations, mem.activations_unshared, mem.gradients, mem.parameters, mem.optimizer,
              mem.workspace);

  Accuracy before, after;
  st = evaluate(*trainer, test, test.n, &before);
  if (!st.ok()) return fail(st.message());

  const size_t b = static_cast<size_t>(trainer->batch_size());
  const size_t steps_per_epoch = train.n / b;
  if (steps_per_epoch == 0) return fail("the fine-tuning set is smaller than one batch");
  std::vector<size_t> order(train.n);
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::vector<float> batch_images(b * 784);
  std::vector<int32_t> batch_labels(b);
  std::mt19937 rng(1);
  LossCurve curve;
  curve.title = "fine-tuning on 10 Fashion-MNIST classes (" + std::to_string(train.n) + " images)";
  std::vector<double> step_ms;
  curve.evaluated.push_back({0, static_cast<float>(before.loss)});  // the red points: test loss
  for (int e = 0; e < epochs; ++e) {
    std::shuffle(order.begin(), order.end(), rng);
    ProgressBar bar("epoch " + std::to_string(e + 1) + "/" + std::to_string(epochs), static_cast<int64_t>(steps_per_epoch),
                    stdout);
    for (size_t s = 0; s < steps_per_epoch; ++s) {
      for (size_t k = 0; k < b; ++k) {
        const size_t i = order[s * b + k];
        std::copy_n(train.images.data() + i * 784, 784, batch_images.data() + k * 784);
        batch_labels[k] = train.labels[i];
      }
      float loss = 0.f;
      int64_t correct = 0;
      const auto t0 = std::chrono::steady_clock::now();
      st = trainer->step({batch_images.data(), batch_labels.data(), nullptr}, &loss, &correct);
      step_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      if (!st.ok()) return fail(st.message());
      curve.steps.push_back(loss);
      bar.update(static_cast<int64_t>(s + 1), loss, static_cast<double>(correct) / static_cast<double>(b));
    }
    bar.finish();
    // The curve's test loss: the first 2000 test images after every epoch but the last, which
    // gets the whole test set below.
    if (e + 1 < epochs) {
      Accuracy epoch_acc;
      st = evaluate(*trainer, test, 2000, &epoch_acc);
      if (!st.ok()) return fail(st.message());
      curve.evaluated.push_back({static_cast<int64_t>(curve.steps.size()) - 1, static_cast<float>(epoch_acc.loss)});
    }
  }
  st = evaluate(*trainer, test, test.n, &after);
  if (!st.ok()) return fail(st.message());
  curve.evaluated.push_back({static_cast<int64_t>(curve.steps.size()) - 1, static_cast<float>(after.loss)});

  std::printf("\ntest accuracy per class (%lld test images), before -> after fine-tuning:\n",
              static_cast<long long>(test.n / b * b));
  for (int c = 0; c < 10; ++c) {
    std::printf("  %d %-12s %6.1f%% -> %6.1f%%%s\n", c, names[c].c_str(), 100 * before.of(c), 100 * after.of(c),
                c >= 8 ? "   (new class)" : "");
  }
  std::printf("old classes 0-7: %.1f%% -> %.1f%%; new classes 8-9: %.1f%% -> %.1f%%; all: %.1f%% -> %.1f%%\n",
              100 * before.of(0, 8), 100 * after.of(0, 8), 100 * before.of(8, 10), 100 * after.of(8, 10),
              100 * before.of(0, 10), 100 * after.of(0, 10));
  std::printf("test loss %.4f -> %.4f\n", before.loss, after.loss);
  std::vector<double> sorted = step_ms;
  std::sort(sorted.begin(), sorted.end());
  std::printf("training step (batch %zu, %s): median %.3f ms over %zu steps", b,
              cl.backend == Backend::CUDA ? "cuda" : "cpu, one thread", sorted[sorted.size() / 2], sorted.size());
  std::ifstream torch_times(dir + "/pytorch_step_ms.txt");
  double one = 0, every = 0;
  int threads = 0;
  std::string version;
  if (cl.backend == Backend::CPU && torch_times >> one >> every >> threads >> version) {
    std::printf("; PyTorch %s on this CPU (prepare.py, same step): %.3f ms on 1 thread, %.3f ms on %d", version.c_str(),
                one, every, threads);
  }
  // torch_step.py --device cuda writes it on the GPU machine: "median_ms version gpu name".
  std::ifstream torch_cuda_times(dir + "/pytorch_step_ms_cuda.txt");
  std::string gpu_name;
  if (cl.backend == Backend::CUDA && torch_cuda_times >> one >> version && std::getline(torch_cuda_times, gpu_name)) {
    std::printf("; PyTorch %s on%s (torch_step.py, same step): %.3f ms", version.c_str(), gpu_name.c_str(), one);
  }
  std::printf("\n");
  st = curve.write_svg(svg);
  if (!st.ok()) return fail(st.message());
  std::printf("wrote %s\n", svg.c_str());
  if (const std::string* path = cl.find("--save")) {
    st = trainer->save(*path);
    if (!st.ok()) return fail(st.message());
    std::printf("wrote %s\n", path->c_str());
  }
  return 0;
}
