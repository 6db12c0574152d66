// The op types added in schema 1.1 (Slice, Pad, Resize, ConvTranspose, InstanceNorm, LRN, Reduce)
// end to end: an IR graph with each of them (odd shapes, random weights and inputs), written by
// the converter, loaded and run by the runtime, compared with the reference executor
// (model_util.h), also after the f16 and channels-last passes; and hostile edits of each op's
// parameters, each rejected at load with a message naming the problem.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model_util.h"
#include "passes.h"

using namespace jet;
using namespace jet::test;

namespace {

ir::PadAttrs pad_attrs(PadMode mode, std::vector<int64_t> begin, std::vector<int64_t> end, float value = 0.f) {
  ir::PadAttrs a;
  a.mode = mode;
  a.pad_begin = std::move(begin);
  a.pad_end = std::move(end);
  a.value = value;
  return a;
}

// x: 2 x 6 x 7 x 9, every new op type at least once; each result is a graph output.
ir::Graph new_ops_graph() {
  ir::Graph g;
  int x = -1, y = -1;
  REQUIRE_OK(g.add_input("x", DType::F32, {2, 6, 7, 9}, &x));
  auto out = [&](int t) { REQUIRE_OK(g.mark_output(t)); };

  ir::SliceAttrs s;  // a transposing, strided slice: dims 2 x 3 x 9 x 2
  s.starts = {0, 1, 1, 0};
  s.steps = {1, 2, 3, 1};
  s.sizes = {2, 3, 2, 9};
  s.perm = {0, 1, 3, 2};
  REQUIRE_OK(g.slice("slice", x, s, &y));
  out(y);

  int p1 = -1;
  REQUIRE_OK(g.pad("pad_reflect", x, pad_attrs(PadMode::REFLECT, {0, 0, 2, 1}, {0, 0, 1, -2}), &p1));
  REQUIRE_OK(g.pad("pad_constant", p1, pad_attrs(PadMode::CONSTANT, {0, 1, -1, 2}, {1, 0, 0, 0}, 0.5f), &y));
  out(y);
  REQUIRE_OK(g.pad("pad_edge", x, pad_attrs(PadMode::EDGE, {0, 0, 3, 0}, {0, 0, 0, 2}), &y));
  out(y);

  ir::ResizeAttrs lin;
  lin.mode = ResizeMode::LINEAR;
  REQUIRE_OK(g.resize("resize_linear", x, lin, {2, 6, 14, 5}, &y));
  out(y);
  ir::ResizeAttrs nn;
  nn.coord = ResizeCoord::ASYMMETRIC;
  nn.nearest = ResizeNearest::FLOOR;
  nn.scales = {2.f, 1.5f};
  REQUIRE_OK(g.resize("resize_nearest", x, nn, {2, 6, 14, 13}, &y));
  out(y);

  ir::ConvTransposeAttrs ct;  // groups 3: C_in 6, C_out 3 x 2
  ct.pad_begin = {1, 0};
  ct.pad_end = {0, 1};
  ct.strides = {2, 1};
  ct.dilations = {1, 2};
  ct.groups = 3;
  const int w = random_constant(g, "ct.w", {6, 2, 3, 2}, -0.5f, 0.5f);
  const int b = random_constant(g, "ct.b", {6}, -1.f, 1.f);
  // H: 2 * 6 + 1 (output padding) + 2 + 1 - 1 = 15; W: 8 + 2 + 1 - 1 = 10.
  REQUIRE_OK(g.conv_transpose("conv_transpose", x, w, b, ct, {15, 10}, &y));
  out(y);

  int a = -1, in = -1;
  REQUIRE_OK(g.relu("relu", x, &a));
  const int scale = random_constant(g, "in.scale", {6}, 0.5f, 1.5f);
  const int bias = random_constant(g, "in.bias", {6}, -1.f, 1.f);
  REQUIRE_OK(g.instancenorm("instancenorm", a, scale, bias, 1e-5, &in));
  fb::LrnParamsT l;
  l.size = 3;
  l.alpha = 0.2;
  l.beta = 0.75;
  l.k = 1.5;
  REQUIRE_OK(g.add_op("lrn", {in}, l, &y));
  out(y);

  REQUIRE_OK(g.reduce("reduce_max", x, ReduceOp::MAX, {1, 3}, &y));
  out(y);
  REQUIRE_OK(g.reduce("reduce_mean", x, ReduceOp::MEAN, {0}, &y));
  out(y);
  return g;
}

}  // namespace

TEST_CASE("schema 1.1 ops run like the reference executor (f32, f16, channels-last)") {
  const ir::Graph g = new_ops_graph();
  ir::Graph half = new_ops_graph();
  REQUIRE_OK(convert_precision(&half, DType::F16));
  ir::Graph cl = new_ops_graph();
  REQUIRE_OK(set_channels_last(&cl));
  bool strided = false;
  for (const ir::Tensor& t : cl.tensors) strided = strided || !t.is_packed();
  REQUIRE(strided);
  ir::Graph both = new_ops_graph();
  REQUIRE_OK(convert_precision(&both, DType::F16));
  REQUIRE_OK(set_channels_last(&both));
  for (const Handle& h : test_handles()) {
    check_against_reference(g, h, "new ops f32");
    check_against_reference(half, h, "new ops f16");
    check_against_reference(cl, h, "new ops channels-last");
    check_against_reference(both, h, "new ops f16 channels-last");
  }
}

TEST_CASE("the engine reports the new op types by name") {
  const Bytes bytes = model_bytes(new_ops_graph());
  std::shared_ptr<Engine> e = load_engine(bytes, Handle::cpu());
  std::vector<std::string> types;
  for (int i = 0; i < e->num_ops(); ++i) types.push_back(e->op(i).type);
  for (const char* want : {"Slice", "Pad", "Resize", "ConvTranspose", "InstanceNorm", "LRN", "Reduce"}) {
    INFO(want);
    CHECK(std::find(types.begin(), types.end(), want) != types.end());
  }
}

TEST_CASE("hostile parameters of the schema 1.1 ops are rejected at load, naming the problem") {
  const Bytes bytes = model_bytes(new_ops_graph());
  REQUIRE_OK(load_cpu(rebuild_model(bytes, nullptr)));
  // Slice: a view past x's end, a bad permutation, a missing vector, a zero step.
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "slice").params.AsSliceParams()->starts[2] = 6; }),
                  "outside x");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "slice").params.AsSliceParams()->perm[0] = 3; }),
                  "permutation");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "slice").params.AsSliceParams()->steps.clear(); }),
                  "steps has 0 entries");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "slice").params.AsSliceParams()->steps[3] = 0; }),
                  "outside x");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) {
                    op_named(m, "slice").params.AsSliceParams()->starts[1] = int64_t(1) << 62;
                  }),
                  "outside x");
  // Pad: dims that do not add up, an unknown mode, a reflect pad past the dim, a huge pad.
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "pad_edge").params.AsPadParams()->pad_end[3] = 1; }),
                  "but the op's inputs and parameters give");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "pad_edge").params.AsPadParams()->mode = 3; }),
                  "unknown pad mode");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) {
                    auto* p = op_named(m, "pad_reflect").params.AsPadParams();
                    p->pad_begin[2] = 7;
                    p->pad_end[2] = -4;
                  }),
                  "reflect pads");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) {
                    op_named(m, "pad_edge").params.AsPadParams()->pad_begin[0] = INT64_MIN;
                  }),
                  "out of range");
  // Resize: unknown modes, scales of the wrong count or value.
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "resize_linear").params.AsResizeParams()->mode = 3; }),  // 2 is cubic (1.5)
                  "unknown resize mode");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "resize_linear").params.AsResizeParams()->coord = -1; }),
                  "coordinate");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "resize_nearest").params.AsResizeParams()->scales.push_back(1.f); }),
                  "scales has 3 entries");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) {
                    op_named(m, "resize_nearest").params.AsResizeParams()->scales[0] = -NAN;
                  }),
                  "finite");
  // ConvTranspose: groups that do not fit, an output that does not convolve back to x, a
  // missing bias input.
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "conv_transpose").params.AsConvTransposeParams()->groups = 4; }),
                  "groups");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) {
                    op_named(m, "conv_transpose").params.AsConvTransposeParams()->strides = {3, 1};
                  }),
                  "convolves back");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "conv_transpose").inputs.pop_back(); }),
                  "has_bias");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) {
                    op_named(m, "conv_transpose").params.AsConvTransposeParams()->groups = INT64_MAX;
                  }),
                  "groups");
  // InstanceNorm, LRN, Reduce.
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "instancenorm").params.AsInstanceNormParams()->epsilon = -1; }),
                  "epsilon");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "lrn").params.AsLrnParams()->size = 0; }), "LRN");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "lrn").params.AsLrnParams()->alpha = NAN; }), "finite");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) { op_named(m, "reduce_max").params.AsReduceParams()->op = 9; }),
                  "unknown reduce op");
  expect_rejected(rebuild_model(bytes, [](fb::ModelT& m) {
                    op_named(m, "reduce_mean").inputs[0] = op_named(m, "slice").outputs[0];
                  }),
                  "reduced dims set to 1");
}
