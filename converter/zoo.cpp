#include "zoo.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace jet {

namespace {

// Uniform floats from std::mt19937_64 by bit arithmetic: the engine's output sequence is fixed by
// the standard, the distributions' are not, so this gives the same weights with any library.
class WeightSource {
 public:
  explicit WeightSource(uint64_t seed) : rng_(seed) {}

  // Uniform in [-bound, bound).
  float uniform(float bound) {
    const double u = static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
    return static_cast<float>((2.0 * u - 1.0) * bound);
  }
  // Uniform in [lo, hi).
  float between(float lo, float hi) { return lo + (hi - lo) * 0.5f * (uniform(1.f) + 1.f); }

  std::vector<float> uniform_values(int64_t count, float bound) {
    std::vector<float> v(static_cast<size_t>(count));
    for (float& x : v) x = uniform(bound);
    return v;
  }

 private:
  std::mt19937_64 rng_;
};

constexpr float kBiasBound = 0.05f;
const float kReluGain = std::sqrt(2.f);

// He-uniform bound: a uniform in [-b, b] has variance b^2 / 3 = gain^2 / fan_in.
float he_bound(int64_t fan_in, float gain) {
  return gain * std::sqrt(3.f / static_cast<float>(fan_in));
}

float gain_for(const ActivationDesc& act) {
  return act.mode == ActivationMode::IDENTITY || act.mode == ActivationMode::SIGMOID ? 1.f : kReluGain;
}

// Builds a network as straight-line code: every step is skipped once one has failed, and the
// first failure is kept in `status`.
struct NetBuilder {
  ir::Graph* g;
  WeightSource weights;
  Status status;

  NetBuilder(ir::Graph* graph, uint64_t seed) : g(graph), weights(seed) {}

  bool ok() const { return status.ok(); }
  int keep(const Status& st, int result) {
    if (!st.ok()) {
      status = st;
      return -1;
    }
    return result;
  }
  int64_t dim(int t, int i) const { return g->tensors[t].dims[i]; }

  int input(const std::string& name, std::vector<int64_t> dims) {
    if (!ok()) return -1;
    int t = -1;
    const Status st = g->add_input(name, DType::F32, std::move(dims), &t);
    return keep(st, t);
  }

  int constant(const std::string& name, std::vector<int64_t> dims, std::vector<float> values) {
    if (!ok()) return -1;
    int t = -1;
    const Status st = g->add_constant(name, DType::F32, std::move(dims), &t);
    if (!st.ok()) return keep(st, -1);
    g->tensors[t].data = std::move(values);
    return t;
  }

  // Square kernel, symmetric padding, He-scaled weights (times `damp` on residual branches),
  // small bias, fused activation, optional residual input.
  int conv(const std::string& name, int x, int64_t cout, int64_t k, int64_t stride, int64_t pad,
           int64_t groups = 1, ActivationDesc act = ActivationDesc::identity(), int residual = -1,
           float damp = 1.f) {
    if (!ok()) return -1;
    const int64_t cin = dim(x, 1);
    if (groups < 1 || cin % groups != 0) {
      return keep(Status(StatusCode::BAD_PARAM, "zoo: conv '" + name + "': groups " +
                                                    std::to_string(groups) + " do not divide " +
                                                    std::to_string(cin) + " channels"), -1);
    }
    const int64_t fan_in = cin / groups * k * k;
    const int w = constant(name + ".w", {cout, cin / groups, k, k},
                           weights.uniform_values(cout * fan_in, damp * he_bound(fan_in, gain_for(act))));
    const int b = constant(name + ".b", {cout}, weights.uniform_values(cout, kBiasBound));
    if (!ok()) return -1;
    ir::ConvAttrs a;
    a.pad_begin = a.pad_end = {pad, pad};
    a.strides = {stride, stride};
    a.groups = groups;
    a.act = act;
    int y = -1;
    const Status st = g->conv(name, x, w, b, residual, a, &y);
    return keep(st, y);
  }

  int max_pool(const std::string& name, int x, int64_t window, int64_t stride, int64_t pad) {
    if (!ok()) return -1;
    int y = -1;
    const Status st = g->max_pool(name, x, window, stride, pad, &y);
    return keep(st, y);
  }

  int pool(const std::string& name, int x, const ir::PoolAttrs& a) {
    if (!ok()) return -1;
    int y = -1;
    const Status st = g->pool(name, x, a, &y);
    return keep(st, y);
  }

  int global_avg_pool(const std::string& name, int x) {
    if (!ok()) return -1;
    int y = -1;
    const Status st = g->global_avg_pool(name, x, &y);
    return keep(st, y);
  }

  int activation(const std::string& name, int x, const ActivationDesc& act) {
    if (!ok()) return -1;
    int y = -1;
    const Status st = g->activation(name, x, act, &y);
    return keep(st, y);
  }

  int op_tensor(const std::string& name, TensorOp op, int a, int b) {
    if (!ok()) return -1;
    int y = -1;
    const Status st = g->op_tensor(name, op, a, b, &y);
    return keep(st, y);
  }

  int concat(const std::string& name, const std::vector<int>& xs, int axis) {
    if (!ok()) return -1;
    int y = -1;
    const Status st = g->concat(name, xs, axis, &y);
    return keep(st, y);
  }

  int flatten(const std::string& name, int x) {
    if (!ok()) return -1;
    int y = -1;
    const Status st = g->flatten(name, x, 1, &y);
    return keep(st, y);
  }

  int transform(const std::string& name, int x, DType to) {
    if (!ok()) return -1;
    int y = -1;
    const Status st = g->transform(name, x, to, &y);
    return keep(st, y);
  }

  int softmax(const std::string& name, int x, int axis) {
    if (!ok()) return -1;
    int y = -1;
    const Status st = g->softmax(name, x, axis, &y);
    return keep(st, y);
  }

  // Fully connected: y = x w^T + b, w stored {classes, features} (PyTorch's Linear), bias {1, N}.
  int linear(const std::string& name, int x, int64_t classes) {
    if (!ok()) return -1;
    const int64_t features = dim(x, 1);
    const int w = constant(name + ".w", {classes, features},
                           weights.uniform_values(classes * features, he_bound(features, 1.f)));
    const int b = constant(name + ".b", {1, classes}, weights.uniform_values(classes, kBiasBound));
    if (!ok()) return -1;
    ir::GemmAttrs ga;
    ga.trans_b = true;
    int y = -1;
    const Status st = g->gemm(name, x, w, b, ga, &y);
    return keep(st, y);
  }

  // Explicit inference BatchNorm with parameters near identity (scale, var in [0.5, 1.5]).
  int batchnorm(const std::string& name, int x) {
    if (!ok()) return -1;
    const int64_t c = dim(x, 1);
    std::vector<float> scale(static_cast<size_t>(c)), var(static_cast<size_t>(c));
    for (float& v : scale) v = weights.between(0.5f, 1.5f);
    for (float& v : var) v = weights.between(0.5f, 1.5f);
    const int s = constant(name + ".scale", {c}, std::move(scale));
    const int b = constant(name + ".bias", {c}, weights.uniform_values(c, 0.1f));
    const int m = constant(name + ".mean", {c}, weights.uniform_values(c, 0.1f));
    const int v = constant(name + ".var", {c}, std::move(var));
    if (!ok()) return -1;
    int y = -1;
    const Status st = g->batchnorm(name, x, s, b, m, v, 1e-5, &y);
    return keep(st, y);
  }

  void mark_output(int t) {
    if (ok()) keep(g->mark_output(t), t);
  }
};

Status check_options(const char* model, const ZooOptions& opt, int64_t min_image) {
  const int64_t width = opt.width ? opt.width : opt.image;
  if (opt.batch < 1 || opt.image < min_image || width < min_image) {
    return Status(StatusCode::BAD_PARAM,
                  std::string("zoo: ") + model + ": batch " + std::to_string(opt.batch) + ", image " +
                      std::to_string(opt.image) + " x " + std::to_string(width) +
                      " (needs batch >= 1 and both sizes >= " + std::to_string(min_image) + ")");
  }
  return Status::success();
}

std::vector<int64_t> image_dims(const ZooOptions& opt) {
  return {opt.batch, 3, opt.image, opt.width ? opt.width : opt.image};
}

Status finish(NetBuilder& b, ir::Graph* out) {
  if (!b.ok()) *out = ir::Graph{};
  return b.status;
}

// Residual branches are damped so that a stage of blocks keeps its activations near the scale of
// the block input instead of growing with every addition.
constexpr float kResidualDamp = 0.5f;

}  // namespace

ZooOptions tiny_cnn_options(uint64_t seed) {
  ZooOptions o;
  o.batch = 2;
  o.image = 17;
  o.width = 19;
  o.seed = seed;
  return o;
}

namespace {

// ResNet's basic block (ResNet-18/34): two 3x3 convs, the second with the shortcut as its
// residual; a 1x1 projection when the shape changes.
int basic_block(NetBuilder& b, const std::string& p, int x, int64_t w, int64_t stride) {
  const ActivationDesc relu = ActivationDesc::relu();
  int shortcut = x;
  if (stride != 1 || b.dim(x, 1) != w) shortcut = b.conv(p + ".downsample", x, w, 1, stride, 0);
  const int h = b.conv(p + ".conv1", x, w, 3, stride, 1, 1, relu);
  return b.conv(p + ".conv2", h, w, 3, 1, 1, 1, relu, shortcut, kResidualDamp);
}

// ResNet's bottleneck block (ResNet-50+) as torchvision builds it (v1.5: the stride on the 3x3):
// 1x1, 3x3, 1x1 to 4x the width, the shortcut added and the ReLU applied in conv3's epilogue, as
// the converter's fuse_epilogues pass leaves a torchvision export (tiny_cnn keeps an explicit
// OP_TENSOR and ACTIVATION for the tests).
int bottleneck_block(NetBuilder& b, const std::string& p, int x, int64_t w, int64_t stride) {
  const ActivationDesc relu = ActivationDesc::relu();
  int shortcut = x;
  if (stride != 1 || b.dim(x, 1) != 4 * w) shortcut = b.conv(p + ".downsample", x, 4 * w, 1, stride, 0);
  int h = b.conv(p + ".conv1", x, w, 1, 1, 0, 1, relu);
  h = b.conv(p + ".conv2", h, w, 3, stride, 1, 1, relu);
  return b.conv(p + ".conv3", h, 4 * w, 1, 1, 0, 1, relu, shortcut, kResidualDamp);
}

using ResNetBlock = int (*)(NetBuilder& b, const std::string& prefix, int x, int64_t width, int64_t stride);

// A whole ResNet: the 7x7 stem and max pool, four stages of blocks[s] blocks of width 64 << s
// (the first block of stages 2-4 with stride 2), global average pool and a 1000-way classifier.
Status resnet(const char* name, const ZooOptions& opt, const int blocks[4], ResNetBlock block, ir::Graph* out) {
  if (!out) return Status(StatusCode::BAD_PARAM, std::string("zoo: ") + name + ": out is null");
  *out = ir::Graph{};
  Status st = check_options(name, opt, 32);
  if (!st.ok()) return st;
  NetBuilder b(out, opt.seed);
  int x = b.input("image", image_dims(opt));
  x = b.conv("conv1", x, 64, 7, 2, 3, 1, ActivationDesc::relu());
  x = b.max_pool("maxpool", x, 3, 2, 1);
  for (int stage = 0; stage < 4 && b.ok(); ++stage) {
    for (int blk = 0; blk < blocks[stage] && b.ok(); ++blk) {
      const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(blk);
      x = block(b, p, x, int64_t(64) << stage, (stage > 0 && blk == 0) ? 2 : 1);
    }
  }
  x = b.global_avg_pool("avgpool", x);
  x = b.flatten("flatten", x);
  x = b.linear("fc", x, 1000);
  b.mark_output(x);
  return finish(b, out);
}

}  // namespace

Status resnet18(const ZooOptions& opt, ir::Graph* out) {
  const int blocks[4] = {2, 2, 2, 2};
  return resnet("resnet18", opt, blocks, basic_block, out);
}

Status resnet50(const ZooOptions& opt, ir::Graph* out) {
  const int blocks[4] = {3, 4, 6, 3};
  return resnet("resnet50", opt, blocks, bottleneck_block, out);
}

Status mobilenet_v2(const ZooOptions& opt, ir::Graph* out) {
  if (!out) return Status(StatusCode::BAD_PARAM, "zoo: mobilenet_v2: out is null");
  *out = ir::Graph{};
  Status st = check_options("mobilenet_v2", opt, 32);
  if (!st.ok()) return st;
  NetBuilder b(out, opt.seed);
  const ActivationDesc relu6 = ActivationDesc::relu6();
  int x = b.input("image", image_dims(opt));
  x = b.conv("features.0", x, 32, 3, 2, 1, 1, relu6);
  struct Cfg {
    int t;
    int64_t c;
    int n;
    int s;
  };
  const Cfg cfg[7] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                      {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int idx = 1;
  for (const Cfg& c : cfg) {
    for (int i = 0; i < c.n && b.ok(); ++i, ++idx) {
      const std::string p = "features." + std::to_string(idx);
      const int64_t cin = b.dim(x, 1);
      const int64_t hidden = cin * c.t;
      const int64_t stride = i == 0 ? c.s : 1;
      const bool residual = stride == 1 && cin == c.c;
      int h = x;
      if (c.t != 1) h = b.conv(p + ".expand", h, hidden, 1, 1, 0, 1, relu6);
      h = b.conv(p + ".dw", h, hidden, 3, stride, 1, hidden, relu6);
      // The residual add in the projection's epilogue, as fuse_epilogues leaves an export.
      h = b.conv(p + ".project", h, c.c, 1, 1, 0, 1, ActivationDesc::identity(),
                 residual ? x : -1, residual ? kResidualDamp : 1.f);
      x = h;
    }
  }
  x = b.conv("features.18", x, 1280, 1, 1, 0, 1, relu6);
  x = b.global_avg_pool("avgpool", x);
  x = b.flatten("flatten", x);
  x = b.linear("fc", x, 1000);
  b.mark_output(x);
  return finish(b, out);
}

Status efficientnet_b0(const ZooOptions& opt, ir::Graph* out) {
  if (!out) return Status(StatusCode::BAD_PARAM, "zoo: efficientnet_b0: out is null");
  *out = ir::Graph{};
  Status st = check_options("efficientnet_b0", opt, 32);
  if (!st.ok()) return st;
  NetBuilder b(out, opt.seed);
  const ActivationDesc silu = ActivationDesc::silu();
  int x = b.input("image", image_dims(opt));
  x = b.conv("features.0", x, 32, 3, 2, 1, 1, silu);
  // torchvision's MBConv stages: expansion, kernel, stride of the first block, channels, blocks.
  struct Cfg {
    int64_t t, k, s, c;
    int n;
  };
  const Cfg cfg[7] = {{1, 3, 1, 16, 1},  {6, 3, 2, 24, 2},  {6, 5, 2, 40, 2},  {6, 3, 2, 80, 3},
                      {6, 5, 1, 112, 3}, {6, 5, 2, 192, 4}, {6, 3, 1, 320, 1}};
  for (int stage = 0; stage < 7 && b.ok(); ++stage) {
    const Cfg& c = cfg[stage];
    for (int i = 0; i < c.n && b.ok(); ++i) {
      const std::string p = "features." + std::to_string(stage + 1) + "." + std::to_string(i);
      const int64_t cin = b.dim(x, 1);
      const int64_t hidden = cin * c.t;
      const int64_t stride = i == 0 ? c.s : 1;
      const bool residual = stride == 1 && cin == c.c;
      int h = x;
      if (c.t != 1) h = b.conv(p + ".expand", h, hidden, 1, 1, 0, 1, silu);
      h = b.conv(p + ".dw", h, hidden, c.k, stride, c.k / 2, hidden, silu);
      // Squeeze-and-excitation: pooled, squeezed to a quarter of the block's input channels,
      // a sigmoid gate per channel, broadcast over the spatial dims.
      int se = b.global_avg_pool(p + ".se.pool", h);
      se = b.conv(p + ".se.fc1", se, std::max<int64_t>(1, cin / 4), 1, 1, 0, 1, silu);
      se = b.conv(p + ".se.fc2", se, hidden, 1, 1, 0, 1, ActivationDesc::sigmoid());
      h = b.op_tensor(p + ".se.scale", TensorOp::MUL, h, se);
      // The residual add in the projection's epilogue, as fuse_epilogues leaves an export.
      h = b.conv(p + ".project", h, c.c, 1, 1, 0, 1, ActivationDesc::identity(), residual ? x : -1,
                 residual ? kResidualDamp : 1.f);
      x = h;
    }
  }
  x = b.conv("features.8", x, 1280, 1, 1, 0, 1, silu);
  x = b.global_avg_pool("avgpool", x);
  x = b.flatten("flatten", x);
  x = b.linear("fc", x, 1000);
  b.mark_output(x);
  return finish(b, out);
}

// Shapes for the default 2 x 3 x 17 x 19 input in the comments.
Status tiny_cnn(const ZooOptions& opt, ir::Graph* out) {
  if (!out) return Status(StatusCode::BAD_PARAM, "zoo: tiny_cnn: out is null");
  *out = ir::Graph{};
  Status st = check_options("tiny_cnn", opt, 5);
  if (!st.ok()) return st;
  NetBuilder b(out, opt.seed);
  const int x = b.input("image", image_dims(opt));
  // 2x8x17x19: conv + bias + relu.
  const int c1 = b.conv("conv1", x, 8, 3, 1, 1, 1, ActivationDesc::relu());
  // 2x8x9x10: max pool 3/2 pad 1 with ceil_mode (a last window starting in the padding is dropped).
  ir::PoolAttrs mp;
  mp.mode = PoolMode::MAX;
  mp.window = {3, 3};
  mp.pad_begin = mp.pad_end = {1, 1};
  mp.strides = {2, 2};
  mp.ceil_mode = true;
  const int p1 = b.pool("pool1", c1, mp);
  // Depthwise 3x3 (groups = C) with relu6, then an explicit BatchNorm and a hard_swish.
  const int dw = b.conv("dw", p1, 8, 3, 1, 1, 8, ActivationDesc::relu6());
  const int bn = b.batchnorm("bn", dw);
  const int hs = b.activation("hswish", bn, ActivationDesc::hard_swish());
  // 1x1 conv whose residual input is the pooled tensor: relu(conv(hs) + bias + p1).
  const int c2 = b.conv("conv2", hs, 8, 1, 1, 0, 1, ActivationDesc::relu(), p1, kResidualDamp);
  // Average pool excluding padding, 3x2 window, asymmetric pads: dims unchanged.
  ir::PoolAttrs ap;
  ap.mode = PoolMode::AVG_EXCLUDE_PAD;
  ap.window = {3, 2};
  ap.pad_begin = {1, 0};
  ap.pad_end = {1, 1};
  ap.strides = {1, 1};
  const int a2 = b.pool("avgpool", c2, ap);
  // Squeeze-and-excitation style gate: 2x8x1x1 sigmoid, broadcast multiply.
  const int gp = b.global_avg_pool("gap", c2);
  const int gate = b.activation("gate", gp, ActivationDesc::sigmoid());
  const int scaled = b.op_tensor("scale", TensorOp::MUL, a2, gate);
  // A per-channel constant (1x8x1x1) added with broadcasting over N and the spatial dims.
  const int shift = b.constant("shift.value", {1, 8, 1, 1}, b.weights.uniform_values(8, 0.5f));
  const int shifted = b.op_tensor("shift", TensorOp::ADD, scaled, shift);
  // 2x16x9x10: concat on channels, then a round trip through F16 (transform both ways).
  const int cat = b.concat("concat", {shifted, c2}, 1);
  const int half = b.transform("to_f16", cat, DType::F16);
  const int back = b.transform("to_f32", half, DType::F32);
  // 2x12x5x5: grouped (4 groups) strided conv with leaky relu; its tanh is graph output 1.
  const int c3 = b.conv("conv3", back, 12, 3, 2, 1, 4, ActivationDesc::leaky_relu(0.1f));
  const int features = b.activation("features", c3, ActivationDesc::tanh());
  b.mark_output(features);
  // 2x300 -> 2x10 -> softmax: graph output 2.
  const int flat = b.flatten("flatten", c3);
  const int fc = b.linear("fc", flat, 10);
  const int probs = b.softmax("probs", fc, 1);
  b.mark_output(probs);
  return finish(b, out);
}

}  // namespace jet
