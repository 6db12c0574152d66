// Models and batches for the trainer's tests (trainer_test_api.cpp, trainer_cuda.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "jet/trainer.h"
#include "runtime/model_util.h"

namespace jet {
namespace test {

constexpr int64_t kBatch = 4, kClasses = 5;  // small_model's batch and classes

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// image [4, 3, 9, 9] -> conv1 (3x3, bias, fused relu) -> bn1 -> max pool 2 -> [slice] -> flatten
// -> fc (Gemm, bias) -> logits [4, 5]. `with_slice` puts an identity Slice (no backward) after
// the pool.
inline Bytes small_model(bool with_slice) {
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
  if (with_slice) {
    ir::SliceAttrs sa;
    sa.starts = {0, 0, 0, 0};
    sa.steps = {1, 1, 1, 1};
    sa.sizes = {kBatch, 6, 4, 4};
    REQUIRE_OK(g.slice("crop", y, sa, &y));
  }
  REQUIRE_OK(g.flatten("flatten", y, 1, &y));
  const int wf = random_constant(g, "fc.weight", {kClasses, 96}, -0.1f, 0.1f);
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

}  // namespace test
}  // namespace jet
