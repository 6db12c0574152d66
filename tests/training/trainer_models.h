// Models and batches for the trainer's tests (trainer_test_api.cpp, trainer_cuda.cpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "jet/trainer.h"
#include "npy.h"
#include "runtime/model_util.h"

namespace jet {
namespace test {

constexpr int64_t kBatch = 4, kClasses = 5;  // small_model's batch and classes

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// image [4, 3, 9, 9] -> conv1 (3x3, bias, fused relu) -> bn1 -> max pool 2 -> [max] -> flatten
// -> fc (Gemm, bias) -> logits [4, 5]. `with_unsupported` puts a Reduce MAX over the width "max"
// (which has no backward) after the pool.
inline Bytes small_model(bool with_unsupported) {
  ir::Graph g;
  int x = -1, y = -1;
  REQUIRE_OK(g.add_input("image", DType::F32, {kBatch, 3, 9, 9}, &x));
  const int w1 = random_constant(g, "conv1.weight", {6, 3, 3, 3}, -0.3f, 0.3f);
  const int b1 = random_constant(g, "conv1.bias", {6}, -0.1f, 0.1f);
  ir::ConvAttrs ca;
  ca.pad_begin = ca.pad_end = {1, 1};
  ca.act = ActivationDesc::relu();
  REQUIRE_OK(g.conv("conv1", x, w1, b1, -1, ca, &y));
  const int scale = random_constant(g, "bn1.weight", {6}, 0.5f, 1.5f);
  const int shift = random_constant(g, "bn1.bias", {6}, -0.2f, 0.2f);
  const int mean = random_constant(g, "bn1.running_mean", {6}, -0.2f, 0.2f);
  const int var = random_constant(g, "bn1.running_var", {6}, 0.5f, 1.5f);
  REQUIRE_OK(g.batchnorm("bn1", y, scale, shift, mean, var, 1e-5, &y));
  REQUIRE_OK(g.max_pool("pool1", y, 2, 2, 0, &y));
  if (with_unsupported) REQUIRE_OK(g.reduce("max", y, ReduceOp::MAX, {3}, &y));
  REQUIRE_OK(g.flatten("flatten", y, 1, &y));
  const int wf = random_constant(g, "fc.weight", {kClasses, g.tensors[static_cast<size_t>(y)].dims[1]}, -0.1f, 0.1f);
  const int bf = random_constant(g, "fc.bias", {kClasses}, -0.1f, 0.1f);
  ir::GemmAttrs ga;
  ga.trans_b = true;
  ga.has_bias = true;
  REQUIRE_OK(g.gemm("fc", y, wf, bf, ga, &y));
  REQUIRE_OK(g.mark_output(y));
  return model_bytes(g);
}

struct Batch {
  std::vector<float> images = random_floats(kBatch * 3 * 9 * 9, -1.f, 1.f);
  std::vector<int32_t> labels;
  Batch() {
    for (int64_t i = 0; i < kBatch; ++i) labels.push_back(static_cast<int32_t>(uniform_int(0, kClasses - 1)));
  }
  TrainBatch view() const { return TrainBatch{images.data(), labels.data(), nullptr}; }
};

// image [4, 3, 48, 48] -> conv1 (3x3, bias) -> bn1 -> relu -> conv2 (3x3 stride 2, pad 1, fused
// relu) -> conv3 (1x1 stride 2) -> global average pool -> flatten -> fc -> logits [4, 5]: the
// strided data gradients (TRANSPOSED_FORWARD's phases, conv3's with phases no tap reaches) and a
// batch norm with 9216 values a channel (several blocks per channel on CUDA).
constexpr int64_t kStridedSide = 48;
inline Bytes strided_model() {
  ir::Graph g;
  int x = -1, y = -1;
  REQUIRE_OK(g.add_input("image", DType::F32, {kBatch, 3, kStridedSide, kStridedSide}, &x));
  ir::ConvAttrs c1;
  c1.pad_begin = c1.pad_end = {1, 1};
  REQUIRE_OK(g.conv("conv1", x, random_constant(g, "conv1.weight", {4, 3, 3, 3}, -0.3f, 0.3f),
                    random_constant(g, "conv1.bias", {4}, -0.1f, 0.1f), -1, c1, &y));
  REQUIRE_OK(g.batchnorm("bn1", y, random_constant(g, "bn1.weight", {4}, 0.5f, 1.5f),
                         random_constant(g, "bn1.bias", {4}, -0.2f, 0.2f),
                         random_constant(g, "bn1.running_mean", {4}, -0.2f, 0.2f),
                         random_constant(g, "bn1.running_var", {4}, 0.5f, 1.5f), 1e-5, &y));
  REQUIRE_OK(g.activation("relu1", y, ActivationDesc::relu(), &y));
  ir::ConvAttrs c2;
  c2.pad_begin = c2.pad_end = {1, 1};
  c2.strides = {2, 2};
  c2.act = ActivationDesc::relu();
  REQUIRE_OK(g.conv("conv2", y, random_constant(g, "conv2.weight", {6, 4, 3, 3}, -0.3f, 0.3f),
                    random_constant(g, "conv2.bias", {6}, -0.1f, 0.1f), -1, c2, &y));
  ir::ConvAttrs c3;
  c3.strides = {2, 2};
  REQUIRE_OK(g.conv("conv3", y, random_constant(g, "conv3.weight", {8, 6, 1, 1}, -0.5f, 0.5f),
                    random_constant(g, "conv3.bias", {8}, -0.1f, 0.1f), -1, c3, &y));
  REQUIRE_OK(g.global_avg_pool("gap", y, &y));
  REQUIRE_OK(g.flatten("flatten", y, 1, &y));
  ir::GemmAttrs ga;
  ga.trans_b = true;
  ga.has_bias = true;
  REQUIRE_OK(g.gemm("fc", y, random_constant(g, "fc.weight", {kClasses, 8}, -0.5f, 0.5f),
                    random_constant(g, "fc.bias", {kClasses}, -0.1f, 0.1f), ga, &y));
  REQUIRE_OK(g.mark_output(y));
  return model_bytes(g);
}

struct StridedBatch {
  std::vector<float> images = random_floats(kBatch * 3 * kStridedSide * kStridedSide, -1.f, 1.f);
  std::vector<int32_t> labels;
  StridedBatch() {
    for (int64_t i = 0; i < kBatch; ++i) labels.push_back(static_cast<int32_t>(uniform_int(0, kClasses - 1)));
  }
  TrainBatch view() const { return TrainBatch{images.data(), labels.data(), nullptr}; }
};

constexpr int64_t kRuleBatch = 2;  // every_rule_model's batch

// A network that chains every backward rule but batch norm's (trainer_test_gradients.cpp says
// which): image [2, 4, 6, 6] -> ... -> probs [2, 5], smooth in its parameters.
inline Bytes every_rule_model() {
  ir::Graph g;
  int x = -1;
  REQUIRE_OK(g.add_input("image", DType::F32, {kRuleBatch, 4, 6, 6}, &x));
  int c1 = -1, c2 = -1, p = -1, gp = -1, gate = -1, m = -1, pd = -1, rs = -1, l = -1, cat = -1, tr = -1, red = -1,
      flat = -1, fc = -1, probs = -1, ct = -1, sl = -1;
  ir::ConvAttrs ca;
  ca.pad_begin = ca.pad_end = {1, 1};
  ca.act = ActivationDesc::tanh();
  REQUIRE_OK(g.conv("conv1", x, random_constant(g, "conv1.weight", {6, 4, 3, 3}, -0.3f, 0.3f),
                    random_constant(g, "conv1.bias", {6}, -0.1f, 0.1f), -1, ca, &c1));
  // 1x1 conv with c1 as its residual (c1 is read twice) and a fused sigmoid.
  ir::ConvAttrs cr;
  cr.act = ActivationDesc::sigmoid();
  REQUIRE_OK(g.conv("conv2", c1, random_constant(g, "conv2.weight", {6, 6, 1, 1}, -0.5f, 0.5f),
                    random_constant(g, "conv2.bias", {6}, -0.1f, 0.1f), c1, cr, &c2));
  ir::PoolAttrs pa;
  pa.mode = PoolMode::AVG_INCLUDE_PAD;
  pa.window = {2, 2};
  pa.strides = {2, 2};
  REQUIRE_OK(g.pool("avgpool", c2, pa, &p));
  REQUIRE_OK(g.global_avg_pool("gap", c2, &gp));  // c2 read twice
  REQUIRE_OK(g.activation("gate", gp, ActivationDesc::sigmoid(), &gate));
  REQUIRE_OK(g.op_tensor("scale", TensorOp::MUL, p, gate, &m));  // broadcast over H, W
  REQUIRE_OK(g.instancenorm("inorm", m, random_constant(g, "inorm.weight", {6}, 0.5f, 1.5f),
                            random_constant(g, "inorm.bias", {6}, -0.2f, 0.2f), 1e-5, &m));
  ir::PadAttrs pda;
  pda.mode = PadMode::REFLECT;
  pda.pad_begin = {0, 0, 1, 1};
  pda.pad_end = {0, 0, 1, 0};
  REQUIRE_OK(g.pad("pad", m, pda, &pd));  // 2x6x5x4
  ir::ResizeAttrs ra;
  ra.mode = ResizeMode::LINEAR;
  REQUIRE_OK(g.resize("resize", pd, ra, {kRuleBatch, 6, 7, 6}, &rs));
  fb::LrnParamsT lrn;
  lrn.size = 3;
  lrn.alpha = 0.5;
  lrn.k = 1.0;
  REQUIRE_OK(g.add_op("lrn", {rs}, lrn, &l));
  // Layer norm over each image's rows and columns (axis 2: 7 x 6 elements a group, 12 groups).
  fb::LayerNormParamsT lna;
  lna.axis = 2;
  lna.epsilon = 1e-5;
  lna.has_scale = true;
  lna.has_bias = true;
  REQUIRE_OK(g.add_op("lnorm", {l, random_constant(g, "lnorm.weight", {7, 6}, 0.5f, 1.5f),
                                random_constant(g, "lnorm.bias", {7, 6}, -0.2f, 0.2f)},
                      lna, &l));
  // A transposed convolution (stride 2, bias) of c2 (read a third time), 2x3x12x12, and a slice of
  // it with a step and a permutation (most of ct gets a zero gradient), 2x3x7x6.
  ir::ConvTransposeAttrs ta;
  ta.strides = {2, 2};
  REQUIRE_OK(g.conv_transpose("deconv", c2, random_constant(g, "deconv.weight", {6, 3, 2, 2}, -0.4f, 0.4f),
                              random_constant(g, "deconv.bias", {3}, -0.1f, 0.1f), ta, {12, 12}, &ct));
  ir::SliceAttrs sa;
  sa.starts = {0, 0, 1, 2};
  sa.steps = {1, 1, 2, 1};
  sa.sizes = {kRuleBatch, 3, 6, 7};
  sa.perm = {0, 1, 3, 2};
  REQUIRE_OK(g.slice("slice", ct, sa, &sl));
  REQUIRE_OK(g.concat("concat", {l, rs, sl}, 1, &cat));  // rs read twice; 2x15x7x6
  REQUIRE_OK(g.transform("copy", cat, DType::F32, &tr));
  REQUIRE_OK(g.reduce("mean_w", tr, ReduceOp::MEAN, {3}, &red));  // 2x15x7x1
  REQUIRE_OK(g.flatten("flatten", red, 1, &flat));
  ir::GemmAttrs ga;
  ga.trans_b = true;
  ga.has_bias = true;
  REQUIRE_OK(g.gemm("fc", flat, random_constant(g, "fc.weight", {5, 105}, -0.3f, 0.3f),
                    random_constant(g, "fc.bias", {5}, -0.1f, 0.1f), ga, &fc));
  REQUIRE_OK(g.softmax("probs", fc, 1, &probs));
  REQUIRE_OK(g.mark_output(probs));
  return model_bytes(g);
}

// Replays tests/data/torch_small_cnn (torch_match.py --reference-out: the model, 20 batches, and
// PyTorch's losses for SGD with momentum, Adam with clipping, AdamW on the last layers) on
// `backend`: every step's loss within 1e-4 relative of PyTorch's, without PyTorch.
inline void check_torch_reference(Backend backend) {
  const std::string dir = JET_TEST_DATA_DIR "/torch_small_cnn";
  tools::HostArray images, labels;
  REQUIRE_OK(tools::read_npy(dir + "/images.npy", &images));
  REQUIRE_OK(tools::read_npy(dir + "/labels.npy", &labels));
  std::ifstream f(dir + "/losses.txt");
  REQUIRE(f.good());
  int runs = 0;
  for (std::string line; std::getline(f, line);) {
    if (line.empty() || line[0] == '#') continue;
    INFO(line.substr(0, line.find('|')));
    std::istringstream in(line);
    std::string name, word;
    float lr = 0.f;
    in >> name >> lr;
    TrainerConfig cfg;
    cfg.optimizer = name == "sgd" ? OptimizerKind::SGD : name == "adam" ? OptimizerKind::ADAM : OptimizerKind::ADAMW;
    cfg.sgd.lr = cfg.adam.lr = lr;
    while (in >> word && word != "|") {
      const std::string key = word.substr(0, word.find('=')), value = word.substr(word.find('=') + 1);
      const float v = std::strtof(value.c_str(), nullptr);
      if (key == "momentum") cfg.sgd.momentum = v;
      else if (key == "weight_decay") cfg.sgd.weight_decay = cfg.adam.weight_decay = v;
      else if (key == "clip") cfg.clip_grad_norm = v;
      else if (key == "last_layers") cfg.last_layers = static_cast<int>(v);
      else FAIL("unknown option " << key);
    }
    std::vector<double> want;
    for (double l; in >> l;) want.push_back(l);
    REQUIRE(want.size() == 20);
    LoadOptions load;
    load.backend = backend;
    std::unique_ptr<Trainer> t;
    REQUIRE_OK(Trainer::create(dir + "/small_cnn.jet", load, cfg, &t));
    const size_t n = static_cast<size_t>(t->batch_size());
    const size_t per_image = images.values.size() / labels.values.size();
    REQUIRE(labels.values.size() >= want.size() * n);
    std::vector<int32_t> batch_labels(n);
    double worst = 0;
    for (size_t s = 0; s < want.size(); ++s) {
      for (size_t i = 0; i < n; ++i) batch_labels[i] = static_cast<int32_t>(labels.values[s * n + i]);
      float loss = 0.f;
      REQUIRE_OK(t->step({images.values.data() + s * n * per_image, batch_labels.data(), nullptr}, &loss));
      const double rel = std::fabs(loss - want[s]) / std::fabs(want[s]);
      worst = std::max(worst, rel);
      INFO("step " << s << ": jetinfer " << loss << ", PyTorch " << want[s]);
      CHECK(rel <= 1e-4);
    }
    MESSAGE(name << ": the 20 losses within " << worst << " relative of PyTorch's");
    ++runs;
  }
  CHECK(runs == 3);
}

}  // namespace test
}  // namespace jet
