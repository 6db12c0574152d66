// One sample node of every op type: a graph of graph input "x" (f32), the op's constants and one
// node named "op" whose output is the graph's output. The runtime's op-table test writes, loads
// and runs each against the reference executor (tests/runtime/test_op_tables.cpp), and the
// fuzzer's seed corpus writes each as a .jet file (tests/fuzz/make_seeds.cpp, built only with
// JET_BUILD_FUZZERS under clang: hence a header of plain converter calls, no test framework).
// The switch names every op type without a default: a new op type needs its sample here.
//
// The constants come from a fixed sequence, so the same graph (and the same seed file) every run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir.h"

namespace jet {
namespace test {

// The op's constants, added in order; the first failure is kept (later calls add nothing).
struct SampleConstants {
  explicit SampleConstants(ir::Graph& graph) : g(graph) {}

  ir::Graph& g;
  uint32_t state = 12345;
  Status status;

  // f32 values uniform in [lo, hi).
  int uniform(const std::string& name, std::vector<int64_t> dims, float lo, float hi) {
    int t = -1;
    if (status.ok()) status = g.add_constant(name, DType::F32, std::move(dims), &t);
    if (!status.ok()) return -1;
    for (int64_t i = 0; i < g.tensors[t].elements(); ++i) {
      state = state * 1664525u + 1013904223u;  // Numerical Recipes' LCG: the same on every compiler
      g.tensors[t].data.push_back(lo + (hi - lo) * static_cast<float>(state >> 8) / 16777216.f);
    }
    return t;
  }
  // Integer or bool values, as given.
  int exact(const std::string& name, DType dtype, std::vector<int64_t> dims, std::vector<int64_t> values) {
    int t = -1;
    if (status.ok()) status = g.add_constant(name, dtype, std::move(dims), &t);
    if (!status.ok()) return -1;
    g.tensors[t].int_data = std::move(values);
    return t;
  }
};

// The sample of `op` on odd shapes (x: [2, 3, 5, 7] unless the op needs another) into an empty
// graph.
inline Status op_sample_graph(ir::OpType op, ir::Graph* out) {
  ir::Graph& g = *out;
  SampleConstants c(g);
  int x = -1, y = -1;
  const std::vector<int64_t> xdims = op == ir::OpType::GEMM  ? std::vector<int64_t>{3, 6}
                                     : op == ir::OpType::NMS ? std::vector<int64_t>{2, 7, 4}  // boxes
                                                             : std::vector<int64_t>{2, 3, 5, 7};
  JET_RETURN_IF_ERROR(g.add_input("x", DType::F32, xdims, &x));
  Status st;
  switch (op) {
    case ir::OpType::CONV: {
      ir::ConvAttrs a;
      a.pad_begin = {1, 0};
      a.pad_end = {1, 2};
      a.strides = {2, 1};
      a.act = ActivationDesc::relu();
      const int w = c.uniform("w", {4, 3, 3, 3}, -1, 1), b = c.uniform("b", {4}, -1, 1);
      if (c.status.ok()) st = g.conv("op", x, w, b, -1, a, &y);
      break;
    }
    case ir::OpType::POOL: st = g.max_pool("op", x, 3, 2, 1, &y); break;
    case ir::OpType::GLOBAL_POOL: st = g.global_avg_pool("op", x, &y); break;
    case ir::OpType::ACTIVATION: st = g.activation("op", x, ActivationDesc::leaky_relu(0.1f), &y); break;
    case ir::OpType::OP_TENSOR: {
      const int s = c.uniform("s", {1, 3, 1, 1}, -2, 2);
      if (c.status.ok()) st = g.op_tensor("op", TensorOp::MUL, x, s, &y);
      break;
    }
    case ir::OpType::GEMM: {
      ir::GemmAttrs a;
      a.trans_b = true;
      const int w = c.uniform("w", {5, 6}, -1, 1), b = c.uniform("b", {5}, -1, 1);
      if (c.status.ok()) st = g.gemm("op", x, w, b, a, &y);
      break;
    }
    case ir::OpType::SOFTMAX: st = g.softmax("op", x, 1, &y); break;
    case ir::OpType::CONCAT: {
      const int b = c.uniform("c", {2, 2, 5, 7}, -1, 1);
      if (c.status.ok()) st = g.concat("op", {x, b}, 1, &y);
      break;
    }
    case ir::OpType::RESHAPE: st = g.reshape("op", x, {2, -1}, &y); break;
    case ir::OpType::BATCHNORM: {
      const int scale = c.uniform("scale", {3}, 0.5f, 2), bias = c.uniform("bias", {3}, -1, 1),
                mean = c.uniform("mean", {3}, -1, 1), var = c.uniform("var", {3}, 0.5f, 2);
      if (c.status.ok()) st = g.batchnorm("op", x, scale, bias, mean, var, 1e-5, &y);
      break;
    }
    case ir::OpType::TRANSFORM: st = g.transform("op", x, DType::F16, &y); break;
    case ir::OpType::SLICE: {
      ir::SliceAttrs a;
      a.starts = {1, 0, 1, 2};
      a.steps = {1, 2, 1, 2};
      a.sizes = {1, 2, 3, 3};
      a.perm = {0, 1, 3, 2};
      st = g.slice("op", x, a, &y);
      break;
    }
    case ir::OpType::PAD: {
      ir::PadAttrs a;
      a.mode = PadMode::REFLECT;
      a.pad_begin = {0, 0, 2, -1};
      a.pad_end = {0, 1, 1, 3};
      st = g.pad("op", x, a, &y);
      break;
    }
    case ir::OpType::RESIZE: {
      ir::ResizeAttrs a;
      a.mode = ResizeMode::LINEAR;
      st = g.resize("op", x, a, {2, 3, 9, 4}, &y);
      break;
    }
    case ir::OpType::CONV_TRANSPOSE: {
      ir::ConvTransposeAttrs a;
      a.strides = {2, 1};
      const int w = c.uniform("w", {3, 2, 3, 2}, -1, 1), b = c.uniform("b", {2}, -1, 1);
      if (c.status.ok()) st = g.conv_transpose("op", x, w, b, a, {11, 8}, &y);
      break;
    }
    case ir::OpType::INSTANCENORM: {
      const int scale = c.uniform("scale", {3}, 0.5f, 2), bias = c.uniform("bias", {3}, -1, 1);
      if (c.status.ok()) st = g.instancenorm("op", x, scale, bias, 1e-5, &y);
      break;
    }
    case ir::OpType::LRN: {
      LrnDesc l;
      l.n = 3;
      l.k = 1.0;
      st = g.lrn("op", x, l, &y);
      break;
    }
    case ir::OpType::REDUCE: st = g.reduce("op", x, ReduceOp::MEAN, {1, 3}, &y); break;
    case ir::OpType::LAYERNORM: {
      const int scale = c.uniform("scale", {5, 7}, 0.5f, 2), bias = c.uniform("bias", {35}, -1, 1);
      if (c.status.ok()) st = g.layernorm("op", x, scale, bias, 2, 1e-5, &y);
      break;
    }
    case ir::OpType::LOGIC: {  // b of a lower rank: numpy's rank alignment
      const int b = c.uniform("b", {3, 1, 7}, -1, 1);
      if (c.status.ok()) st = g.logic("op", LogicOp::LESS, x, b, &y);
      break;
    }
    case ir::OpType::WHERE: {
      const int cond = c.exact("cond", DType::BOOL, {5, 1}, {1, 0, 0, 1, 1}), b = c.uniform("b", {3, 1, 1}, -1, 1);
      if (c.status.ok()) st = g.where("op", cond, x, b, &y);
      break;
    }
    case ir::OpType::ARG_REDUCE: st = g.arg_reduce("op", x, ArgReduceOp::ARGMIN, 2, true, &y); break;
    case ir::OpType::GATHER: {  // indices of rank 2, negative ones too
      const int idx = c.exact("idx", DType::I64, {2, 2}, {4, -1, 0, -5});
      if (c.status.ok()) st = g.gather("op", x, idx, 2, &y);
      break;
    }
    case ir::OpType::TOPK: {  // the indices of the 4 smallest along the last axis
      ir::TopKAttrs a;
      a.axis = 3;
      a.k = 4;
      a.largest = false;
      a.indices = true;
      st = g.topk("op", x, a, &y);
      break;
    }
    case ir::OpType::NMS: {  // random boxes, 3 classes, at most 2 per class, a score threshold
      ir::NmsAttrs a;
      a.max_output_boxes_per_class = 2;
      a.iou_threshold = 0.3f;
      a.has_score_threshold = true;
      a.score_threshold = -0.5f;
      const int scores = c.uniform("scores", {2, 3, 7}, -1, 1);
      if (c.status.ok()) st = g.nms("op", x, scores, a, &y);
      break;
    }
    case ir::OpType::GATHER_ELEMENTS: {  // indices smaller than x at dim 1, negative ones too
      std::vector<int64_t> v;
      for (int i = 0; i < 2 * 2 * 4 * 7; ++i) v.push_back(i % 9 - 4);
      const int idx = c.exact("idx", DType::I64, {2, 2, 4, 7}, v);
      if (c.status.ok()) st = g.gather_elements("op", x, idx, 2, &y);
      break;
    }
    case ir::OpType::TRILU: st = g.trilu("op", x, false, -1, &y); break;
    case ir::OpType::CUMSUM: st = g.cumsum("op", x, 1, true, true, &y); break;
    case ir::OpType::SCATTER: {  // ScatterND, slices x[i, j, :, :] accumulated (duplicate tuples too)
      const int idx = c.exact("idx", DType::I64, {3, 2}, {1, 2, 0, -1, 1, 2}), upd = c.uniform("upd", {3, 5, 7}, -1, 1);
      if (c.status.ok()) st = g.scatter("op", x, idx, upd, true, ScatterReduction::ADD, 0, &y);
      break;
    }
    case ir::OpType::COUNT: return Status(StatusCode::BAD_PARAM, "op_sample_graph: COUNT is not an op type");
  }
  JET_RETURN_IF_ERROR(c.status);
  JET_RETURN_IF_ERROR(st);
  return g.mark_output(y);
}

}  // namespace test
}  // namespace jet
