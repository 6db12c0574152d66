// The model zoo: well-known networks built programmatically through the graph IR, with
// deterministic random weights, for tests, benchmarks and round trips without ONNX files.
//
//   jet::ir::Graph g;
//   jet::ZooOptions opt;            // batch 1, 224 x 224, seed 1
//   jet::Status st = jet::resnet18(opt, &g);
//   if (!st.ok()) ...                    // BAD_PARAM naming the problem (e.g. an image too small)
//   // g: graph input "image" (F32, batch x 3 x image x width), graph output "fc" (logits).
//
//   jet::ir::Graph t;
//   st = jet::tiny_cnn(jet::tiny_cnn_options(/*seed=*/7), &t);  // 2 x 3 x 17 x 19
//
// Weights: every constant's ir::Tensor::data holds float32 values drawn from std::mt19937_64
// seeded with ZooOptions::seed, mapped to uniforms by bit arithmetic (not std::*_distribution,
// whose output differs between standard libraries), so a seed gives the same model everywhere.
// Scaling keeps activations O(1) through the whole network for inputs of O(1) (e.g. uniform in
// [-1, 1]): He-uniform weights (gain sqrt(2) before a ReLU, 1 otherwise), biases in [-0.05, 0.05],
// residual branches damped so that sums of branches do not grow with depth. BatchNorm is folded
// into the convolution biases (torchvision layouts otherwise), except in tiny_cnn.
//
// All builders replace *out (an empty graph on error) and never abort.
#pragma once

#include <cstdint>

#include "ir.h"

namespace jet {

struct ZooOptions {
  int64_t batch = 1;
  int64_t image = 224;  // input height
  uint64_t seed = 1;
  int64_t width = 0;    // input width; 0 = image (square)
};

// The tiny_cnn defaults: batch 2, 17 x 19 (odd sizes on purpose).
ZooOptions tiny_cnn_options(uint64_t seed = 1);

// torchvision resnet18: BasicBlocks [2, 2, 2, 2]; the second conv of a block takes the shortcut
// as its residual input with a fused ReLU; fc to 1000 classes. Needs image >= 32.
Status resnet18(const ZooOptions& opt, ir::Graph* out);

// ResNet-50 v1 (stride on the first 1x1 of a bottleneck), residual as an explicit Add + ReLU;
// fc to 1000 classes. Needs image >= 32.
Status resnet50(const ZooOptions& opt, ir::Graph* out);

// torchvision mobilenet_v2 (ReLU6, inverted residuals with explicit Adds); fc to 1000 classes.
// Needs image >= 32.
Status mobilenet_v2(const ZooOptions& opt, ir::Graph* out);

// torchvision efficientnet_b0 (SiLU, MBConv blocks with squeeze-and-excitation gates as a global
// pool, two 1x1 convs and a broadcast MUL, residual adds in the projection's epilogue); fc to
// 1000 classes. Needs image >= 32.
Status efficientnet_b0(const ZooOptions& opt, ir::Graph* out);

// A small network using every ir::OpType (two outputs, see zoo.cpp for the exact structure):
// conv + bias + relu; max pool with ceil_mode; depthwise conv; explicit BatchNorm; hard_swish;
// 1x1 conv with a residual input; average pool with explicit asymmetric pads; global pool +
// sigmoid gate (op_tensor MUL with broadcasting); op_tensor ADD of a broadcast constant; concat on
// channels; a TRANSFORM to F16 and back; a grouped strided conv "conv3" whose tanh is graph
// output "features" (2x12x5x5) and which is flattened into a gemm with bias and a softmax (graph
// output "probs", 2x10). Needs image >= 5 and width >= 5.
Status tiny_cnn(const ZooOptions& opt, ir::Graph* out);

}  // namespace jet
