// jet_bench_train_step: the time of one jet::Trainer step (forward with batch statistics,
// softmax cross-entropy, backward, SGD with momentum) on a zoo network with random weights and
// every parameter trainable (issue 15's "training step of ResNet-18, batch 32, fp32").
//
//   jet_bench_train_step [--network resnet18|resnet18-bn|resnet50|mobilenet_v2|efficientnet_b0]
//                        [--batch 32] [--image 224] [--device cpu|cuda] [--steps 20] [--adam]
//                        [--profile] [--tune] [--approximate]
//
// The zoo networks have batch norm folded into their convolutions' biases. resnet18-bn is
// torchvision's ResNet-18 layer for layer, built here: convolutions without bias, each followed
// by a BatchNorm (batch statistics in the step, as PyTorch's train mode) and an explicit ReLU, the
// shortcut added by an explicit Add (what jet-convert makes of a torchvision export with
// --disable-pass fold_batchnorm and no epilogue fusion through batch norm).
//
// Prints the plan's memory and the median / min step time over --steps steps after 3 warm-up
// steps (on CUDA also with the batch already in device memory, as PyTorch's side keeps it), then the median time of evaluate() (the forward and the loss) and the difference.
// --profile then runs profiled steps (Trainer::set_profiling) and prints where the step's time
// goes: by phase and op type, and the slowest parts. --tune loads the engine with
// LoadOptions::tune (its forward convolutions chosen by measurement, as PyTorch's side runs with
// cudnn.benchmark). --approximate loads it with LoadOptions::approximate_convolutions: WINOGRAD's
// F(4x4, 3x3) for the 3x3 layers' forward and data gradient, as cuDNN's math lets PyTorch's side
// pick winograd_nonfused. CUDA:
// each step is timed to the end of its work (the loss is read back, one synchronization per
// step, as a training loop that prints the loss does).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if defined(JET_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

#include "jet/trainer.h"
#include "write_model.h"
#include "zoo.h"

using namespace jet;

namespace {

// torchvision's resnet18 with batch norm kept (see the header comment); He-uniform weights from a
// fixed LCG, batch norm at identity (scale 1, bias 0, running mean 0, variance 1).
class ResNet18Bn {
 public:
  explicit ResNet18Bn(ir::Graph* g) : g_(g) {}

  Status build(const ZooOptions& opt) {
    int x = -1;
    JET_RETURN_IF_ERROR(g_->add_input("image", DType::F32, {opt.batch, 3, opt.image, opt.image}, &x));
    JET_RETURN_IF_ERROR(conv_bn("conv1", x, 64, 7, 2, 3, true, &x));
    JET_RETURN_IF_ERROR(g_->max_pool("maxpool", x, 3, 2, 1, &x));
    int64_t cin = 64;
    for (int stage = 0; stage < 4; ++stage) {
      for (int b = 0; b < 2; ++b) {
        const int64_t cout = int64_t(64) << stage, stride = stage > 0 && b == 0 ? 2 : 1;
        const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(b);
        int shortcut = x, h = -1;
        if (stride != 1 || cin != cout)
          JET_RETURN_IF_ERROR(conv_bn(p + ".downsample", x, cout, 1, stride, 0, false, &shortcut));
        JET_RETURN_IF_ERROR(conv_bn(p + ".conv1", x, cout, 3, stride, 1, true, &h));
        JET_RETURN_IF_ERROR(conv_bn(p + ".conv2", h, cout, 3, 1, 1, false, &h));
        JET_RETURN_IF_ERROR(g_->add(p + ".add", h, shortcut, &h));
        JET_RETURN_IF_ERROR(g_->relu(p + ".relu", h, &x));
        cin = cout;
      }
    }
    JET_RETURN_IF_ERROR(g_->global_avg_pool("avgpool", x, &x));
    JET_RETURN_IF_ERROR(g_->flatten("flatten", x, 1, &x));
    int w = -1, b = -1;
    JET_RETURN_IF_ERROR(constant("fc.weight", {1000, 512}, 1.f / std::sqrt(512.f), &w));
    JET_RETURN_IF_ERROR(constant("fc.bias", {1, 1000}, 1.f / std::sqrt(512.f), &b));
    ir::GemmAttrs ga;
    ga.trans_b = true;
    JET_RETURN_IF_ERROR(g_->gemm("fc", x, w, b, ga, &x));
    return g_->mark_output(x);
  }

 private:
  // Uniform in [-bound, bound) (bound 0: the value `fill`).
  Status constant(const std::string& name, std::vector<int64_t> dims, float bound, int* t, float fill = 0.f) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    JET_RETURN_IF_ERROR(g_->add_constant(name, DType::F32, std::move(dims), t));
    std::vector<float>& v = g_->tensors[static_cast<size_t>(*t)].data;
    v.resize(static_cast<size_t>(n));
    for (float& e : v) {
      state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
      e = bound > 0.f ? bound * (static_cast<float>(state_ >> 40) * (2.f / 16777216.f) - 1.f) : fill;
    }
    return Status();
  }

  Status conv_bn(const std::string& name, int x, int64_t cout, int64_t k, int64_t stride, int64_t pad, bool relu,
                 int* y) {
    const int64_t cin = g_->tensors[static_cast<size_t>(x)].dims[1];
    int w = -1, scale = -1, bias = -1, mean = -1, var = -1;
    JET_RETURN_IF_ERROR(constant(name + ".weight", {cout, cin, k, k}, std::sqrt(6.f / static_cast<float>(cin * k * k)), &w));
    ir::ConvAttrs a;
    a.pad_begin = a.pad_end = {pad, pad};
    a.strides = {stride, stride};
    JET_RETURN_IF_ERROR(g_->conv(name, x, w, -1, -1, a, y));
    const std::string bn = name + ".bn";
    JET_RETURN_IF_ERROR(constant(bn + ".weight", {cout}, 0.f, &scale, 1.f));
    JET_RETURN_IF_ERROR(constant(bn + ".bias", {cout}, 0.f, &bias, 0.f));
    JET_RETURN_IF_ERROR(constant(bn + ".running_mean", {cout}, 0.f, &mean, 0.f));
    JET_RETURN_IF_ERROR(constant(bn + ".running_var", {cout}, 0.f, &var, 1.f));
    JET_RETURN_IF_ERROR(g_->batchnorm(bn, *y, scale, bias, mean, var, 1e-5, y));
    return relu ? g_->relu(name + ".relu", *y, y) : Status();
  }

  ir::Graph* g_;
  uint64_t state_ = 1;
};

// Times `steps` calls after 3 warm-up calls (wall clock: each call ends when its work has, the
// loss read back); *ms gets them sorted. False, with a message, when one fails.
template <class Call>
bool time_calls(int steps, const char* what, Call call, std::vector<double>* ms) {
  for (int i = 0; i < steps + 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const Status st = call();
    const double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!st.ok()) {
      std::fprintf(stderr, "jet_bench_train_step: %s %d: %s\n", what, i, st.message().c_str());
      return false;
    }
    if (i >= 3) ms->push_back(t);
  }
  std::sort(ms->begin(), ms->end());
  return true;
}

// Profiled steps: each part's median over 5 steps, summed by phase and op type, and the slowest
// parts. Events between the parts cost a little: the parts' sum exceeds an unprofiled step.
int print_profile(Trainer* trainer, const TrainBatch& batch) {
  Status st = trainer->set_profiling(true);
  std::vector<std::vector<double>> runs;
  std::vector<StepTime> parts;
  for (int i = 0; i < 6 && st.ok(); ++i) {
    st = trainer->step(batch, nullptr);
    if (st.ok()) st = trainer->step_times(&parts);
    if (!st.ok() || i == 0) continue;  // the first profiled step warms up
    if (runs.empty()) runs.resize(parts.size());
    for (size_t p = 0; p < parts.size(); ++p) runs[p].push_back(parts[p].ms);
  }
  if (!st.ok()) {
    std::fprintf(stderr, "jet_bench_train_step: profile: %s\n", st.message().c_str());
    return 1;
  }
  double total = 0;
  for (size_t p = 0; p < parts.size(); ++p) {
    std::sort(runs[p].begin(), runs[p].end());
    parts[p].ms = runs[p][runs[p].size() / 2];
    total += parts[p].ms;
  }
  std::vector<std::pair<std::string, double>> groups;
  for (const StepTime& t : parts) {
    const std::string key = std::string(t.phase) + (t.type.empty() ? "" : " " + t.type);
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == key; });
    if (g == groups.end()) groups.emplace_back(key, t.ms);
    else g->second += t.ms;
  }
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::printf("profile (median of 5 profiled steps, %zu parts): %.3f ms in all\n", parts.size(), total);
  for (const auto& g : groups) std::printf("  %-24s %8.3f ms  %5.1f%%\n", g.first.c_str(), g.second, 100 * g.second / total);
  std::vector<StepTime> slowest = parts;
  std::sort(slowest.begin(), slowest.end(), [](const StepTime& a, const StepTime& b) { return a.ms > b.ms; });
  std::printf("slowest parts:\n");
  for (size_t i = 0; i < slowest.size() && i < 25; ++i)
    std::printf("  %-8s %-12s %-28s %8.3f ms\n", slowest[i].phase, slowest[i].type.c_str(), slowest[i].name.c_str(),
                slowest[i].ms);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string network = "resnet18", device = "cuda";
  ZooOptions opt;
  opt.batch = 32;
  opt.image = 224;
  int steps = 20;
  bool adam = false, profile = false, tune = false, approximate = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--network") network = value();
    else if (a == "--batch") opt.batch = std::atoi(value().c_str());
    else if (a == "--image") opt.image = std::atoi(value().c_str());
    else if (a == "--device") device = value();
    else if (a == "--steps") steps = std::atoi(value().c_str());
    else if (a == "--adam") adam = true;
    else if (a == "--profile") profile = true;
    else if (a == "--tune") tune = true;
    else if (a == "--approximate") approximate = true;
    else {
      std::fprintf(stderr, "usage: %s [--network resnet18|resnet18-bn|resnet50|mobilenet_v2|efficientnet_b0] [--batch N] "
                           "[--image N] [--device cpu|cuda] [--steps N] [--adam] [--profile] [--tune] [--approximate]\n", argv[0]);
      return 2;
    }
  }
  if (opt.batch < 1 || opt.image < 32 || steps < 1) return std::fprintf(stderr, "bad sizes\n"), 2;
  ir::Graph g;
  ResNet18Bn r18bn(&g);
  Status st = network == "resnet18"          ? resnet18(opt, &g)
              : network == "resnet18-bn"     ? r18bn.build(opt)
              : network == "resnet50"        ? resnet50(opt, &g)
              : network == "mobilenet_v2"    ? mobilenet_v2(opt, &g)
              : network == "efficientnet_b0" ? efficientnet_b0(opt, &g)
                                             : Status(StatusCode::BAD_PARAM, "unknown network " + network);
  std::vector<uint8_t> bytes;
  if (st.ok()) st = write_model(g, WriteOptions{}, &bytes);
  LoadOptions load;
  load.backend = device == "cpu" ? Backend::CPU : Backend::CUDA;
  load.tune = tune;
  load.approximate_convolutions = approximate;
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
  std::printf("%s batch %lld %lldx%lld f32 on %s, %s, %lld trainable parameters%s%s\n", network.c_str(),
              static_cast<long long>(opt.batch), static_cast<long long>(opt.image), static_cast<long long>(opt.image),
              device.c_str(), adam ? "Adam" : "SGD momentum", static_cast<long long>(trainable),
              tune ? ", forward convolutions tuned at load" : "",
              approximate ? ", approximate convolutions (F(4x4) Winograd)" : "");
  std::printf("plan: %.1f MiB in one allocation (activations and their gradients %.1f MiB, %.1f unshared; parameter "
              "gradients %.1f, parameters %.1f, optimizer %.1f, workspace %.1f)\n",
              m.total / 1048576.0, m.activations / 1048576.0, m.activations_unshared / 1048576.0,
              m.gradients / 1048576.0, m.parameters / 1048576.0, m.optimizer / 1048576.0, m.workspace / 1048576.0);
  std::vector<double> ms;
  float loss = 0.f;
  if (!time_calls(steps, "step", [&] { return trainer->step(batch, &loss); }, &ms)) return 1;
  std::printf("step: median %.3f ms, min %.3f ms over %d steps (loss %.4f)\n", ms[ms.size() / 2], ms[0], steps,
              static_cast<double>(loss));
#if defined(JET_HAVE_CUDA)
  // The same steps with the batch already in device memory (TrainBatch::on_device): what PyTorch's
  // side times, whose batch stays on the GPU; the difference is the batch's upload from pageable
  // host memory.
  if (device == "cuda") {
    void* dev_images = nullptr;
    void* dev_labels = nullptr;
    const size_t ib = images.size() * sizeof(float), lb = labels.size() * sizeof(int32_t);
    if (cudaMalloc(&dev_images, ib) != cudaSuccess || cudaMalloc(&dev_labels, lb) != cudaSuccess ||
        cudaMemcpy(dev_images, images.data(), ib, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(dev_labels, labels.data(), lb, cudaMemcpyHostToDevice) != cudaSuccess) {
      std::fprintf(stderr, "jet_bench_train_step: could not stage the batch in device memory\n");
      return 1;
    }
    TrainBatch on_device{dev_images, static_cast<const int32_t*>(dev_labels), nullptr};
    on_device.on_device = true;
    std::vector<double> dms;
    if (!time_calls(steps, "step (batch on the device)", [&] { return trainer->step(on_device, &loss); }, &dms))
      return 1;
    std::printf("step, batch in device memory: median %.3f ms, min %.3f ms over %d steps (loss %.4f)\n",
                dms[dms.size() / 2], dms[0], steps, static_cast<double>(loss));
    cudaFree(dev_images);
    cudaFree(dev_labels);
  }
#endif
  // Where the step's time goes, roughly: evaluate() is the forward (inference-mode batch norm)
  // and the loss with the same upload and read-back, so step - evaluate is about the backward
  // and the optimizer.
  std::vector<double> eval_ms;
  EvalResult eval;
  if (!time_calls(steps, "evaluate", [&] { return trainer->evaluate(batch, &eval); }, &eval_ms)) return 1;
  const double fwd = eval_ms[eval_ms.size() / 2];
  std::printf("evaluate (forward + loss): median %.3f ms; step - evaluate (backward + update, about): %.3f ms\n",
              fwd, ms[ms.size() / 2] - fwd);
  return profile ? print_profile(trainer.get(), batch) : 0;
}
