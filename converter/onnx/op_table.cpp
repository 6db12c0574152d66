// The op table: one line per ONNX op type (default domain), the only place that lists them; the
// lookup table, the importers' declarations and the list of op types that take integer tensors are
// generated from it. Adding an op is one line here plus its function in ops_*.cpp (a line naming a
// function that no ops_*.cpp defines fails to link). docs/onnx.md lists the table for users.
//
// JET_ONNX_OPS(OP, ACT) calls
//   OP("Name", since, fn, ints)     imported by Status fn(Importer& im), defined in ops_*.cpp
//   ACT("Name", since, MODE, ints)  an activation without attributes: import_activation<ActivationMode::MODE>
//                                   (importer.h; constant inputs fold through the same formula)
//   since  the first opset that has the op; version-specific behaviour (attributes that became
//          inputs, changed defaults) is handled inside the functions by Importer::opset
//   ints   the importer takes computed integer and bool tensors (IR ops TRANSFORM, SLICE, CONCAT,
//          RESHAPE, LOGIC, WHERE, ARG_REDUCE, ..., or relabellings); a node of any other op type
//          reading one is unsupported (model.cpp's walk), never computed as floats
#include "importer.h"

namespace jet {
namespace onnx_import {

// clang-format off
#define JET_ONNX_OPS(OP, ACT) \
  /* Constants, aliases and shape arithmetic (folded at import time). */                       \
  OP("Constant",               1,  import_constant,              false)                        \
  OP("Identity",               1,  import_identity,              true)                         \
  OP("Dropout",                1,  import_dropout,               false)                        \
  OP("Shape",                  1,  import_shape,                 true)                         \
  OP("Size",                   1,  import_size,                  true)                         \
  OP("Gather",                 1,  import_gather,                true)                         \
  OP("Unsqueeze",              1,  import_unsqueeze,             true)                         \
  OP("Squeeze",                1,  import_squeeze,               true)                         \
  OP("Slice",                  1,  import_slice,                 true)                         \
  OP("Reshape",                5,  import_reshape,               true)                         \
  OP("Flatten",                1,  import_flatten,               true)                         \
  OP("ConstantOfShape",        9,  import_constant_of_shape,     false)                        \
  OP("Range",                  11, import_range,                 false)                        \
  OP("Transpose",              1,  import_transpose,             true)                         \
  OP("Expand",                 8,  import_expand,                false)                        \
  OP("Where",                  9,  import_where,                 true)                         \
  OP("Not",                    1,  import_not,                   true)                         \
  OP("Equal",                  1,  import_equal,                 true)                         \
  OP("Less",                   1,  import_less,                  true)                         \
  OP("Greater",                1,  import_greater,               true)                         \
  OP("ReduceProd",             1,  import_reduce_prod,           false)                        \
  OP("Split",                  2,  import_split,                 true)                         \
  /* Convolution and pooling. */                                                               \
  OP("Conv",                   1,  import_conv,                  false)                        \
  OP("MaxPool",                1,  import_max_pool,              false)                        \
  OP("AveragePool",            1,  import_average_pool,          false)                        \
  OP("GlobalAveragePool",      1,  import_global_average_pool,   false)                        \
  OP("GlobalMaxPool",          1,  import_global_max_pool,       false)                        \
  OP("Pad",                    1,  import_pad,                   false)                        \
  /* Activations. */                                                                           \
  ACT("Relu",                  1,  RELU,                         false)                        \
  OP("LeakyRelu",              1,  import_leaky_relu,            false)                        \
  OP("PRelu",                  1,  import_prelu,                 false)                        \
  ACT("Sigmoid",               1,  SIGMOID,                      false)                        \
  ACT("Tanh",                  1,  TANH,                         false)                        \
  OP("Clip",                   1,  import_clip,                  false)                        \
  OP("Elu",                    1,  import_elu,                   false)                        \
  OP("Selu",                   1,  import_selu,                  false)                        \
  OP("HardSigmoid",            1,  import_hard_sigmoid,          false)                        \
  ACT("HardSwish",             14, HARD_SWISH,                   false)                        \
  ACT("Softplus",              1,  SOFTPLUS,                     false)                        \
  ACT("Mish",                  18, MISH,                         false)                        \
  OP("Gelu",                   20, import_gelu,                  false)                        \
  /* Element-wise math (activation modes too: one formula, fusable into a Conv's epilogue). */ \
  ACT("Exp",                   1,  EXP,                          false)                        \
  ACT("Log",                   1,  LOG,                          false)                        \
  ACT("Sqrt",                  1,  SQRT,                         false)                        \
  ACT("Reciprocal",            1,  RECIPROCAL,                   false)                        \
  ACT("Abs",                   1,  ABS,                          true)                         \
  ACT("Neg",                   1,  NEG,                          true)                         \
  ACT("Floor",                 1,  FLOOR,                        false)                        \
  ACT("Ceil",                  1,  CEIL,                         false)                        \
  ACT("Round",                 11, ROUND,                        false)                        \
  ACT("Sign",                  9,  SIGN,                         false)                        \
  ACT("Sin",                   7,  SIN,                          false)                        \
  ACT("Cos",                   7,  COS,                          false)                        \
  ACT("Tan",                   7,  TAN,                          false)                        \
  ACT("Erf",                   9,  ERF,                          false)                        \
  ACT("Softsign",              1,  SOFTSIGN,                     false)                        \
  /* Element-wise arithmetic. */                                                               \
  OP("Add",                    1,  import_add,                   true)                         \
  OP("Sub",                    1,  import_sub,                   true)                         \
  OP("Mul",                    1,  import_mul,                   true)                         \
  OP("Div",                    1,  import_div,                   true)                         \
  OP("Max",                    1,  import_max,                   true)                         \
  OP("Min",                    1,  import_min,                   true)                         \
  OP("Sum",                    1,  import_sum,                   true)                         \
  OP("Pow",                    1,  import_pow,                   true)                         \
  OP("Mod",                    10, import_mod,                   true)                         \
  /* Matrix products, normalization, softmax. */                                               \
  OP("Gemm",                   1,  import_gemm,                  false)                        \
  OP("MatMul",                 1,  import_matmul,                false)                        \
  OP("Softmax",                1,  import_softmax,               false)                        \
  OP("LogSoftmax",             1,  import_log_softmax,           false)                        \
  OP("BatchNormalization",     1,  import_batch_norm,            false)                        \
  /* Tensor ops. */                                                                            \
  OP("Concat",                 1,  import_concat,                true)                         \
  OP("Cast",                   1,  import_cast,                  true)                         \
  OP("ReduceMean",             1,  import_reduce_mean,           false)                        \
  OP("ReduceMax",              1,  import_reduce_max,            false)                        \
  OP("ReduceMin",              1,  import_reduce_min,            false)                        \
  OP("ReduceSum",              1,  import_reduce_sum,            false)                        \
  OP("ReduceL1",               1,  import_reduce_l1,             false)                        \
  OP("ReduceL2",               1,  import_reduce_l2,             false)                        \
  OP("ReduceSumSquare",        1,  import_reduce_sum_square,     false)                        \
  OP("ReduceLogSum",           1,  import_reduce_log_sum,        false)                        \
  OP("ReduceLogSumExp",        1,  import_reduce_log_sum_exp,    false)                        \
  /* Transposed convolution, normalization across channels / per instance, resizing. */        \
  OP("ConvTranspose",          1,  import_conv_transpose,        false)                        \
  OP("LRN",                    1,  import_lrn,                   false)                        \
  OP("InstanceNormalization",  1,  import_instance_norm,         false)                        \
  OP("LayerNormalization",     17, import_layer_norm,            false)                        \
  OP("GroupNormalization",     18, import_group_norm,            false)                        \
  OP("Resize",                 10, import_resize,                false)                        \
  OP("Upsample",               1,  import_upsample,              false)                        \
  /* Integer and bool tensors (computed ones run in the runtime: LOGIC, WHERE, ARG_REDUCE). */ \
  OP("LessOrEqual",            12, import_less_or_equal,         true)                         \
  OP("GreaterOrEqual",         12, import_greater_or_equal,      true)                         \
  OP("And",                    7,  import_and,                   true)                         \
  OP("Or",                     7,  import_or,                    true)                         \
  OP("Xor",                    7,  import_xor,                   true)                         \
  OP("ArgMax",                 1,  import_arg_max,               true)                         \
  OP("ArgMin",                 1,  import_arg_min,               true)                         \
  /* Detection heads. */                                                                       \
  OP("TopK",                   1,  import_topk,                  true)                         \
  OP("NonMaxSuppression",      10, import_nms,                   false)                        \
  /* Index and data movement on computed tensors (ops_index.cpp). */                           \
  OP("GatherElements",         11, import_gather_elements,       true)                         \
  OP("Trilu",                  14, import_trilu,                 true)                         \
  OP("CumSum",                 11, import_cumsum,                true)                         \
  OP("Scatter",                9,  import_scatter_elements,      true)                         \
  OP("ScatterElements",        11, import_scatter_elements,      true)                         \
  OP("ScatterND",              11, import_scatter_nd,            true)                         \
  OP("Tile",                   6,  import_tile,                  true)                         \
  OP("DepthToSpace",           1,  import_depth_to_space,        false)                        \
  OP("SpaceToDepth",           1,  import_space_to_depth,        false)                        \
  OP("OneHot",                 9,  import_one_hot,               true)                         \
  OP("EyeLike",                9,  import_eye_like,              true)
// clang-format on

#define JET_ONNX_DECLARE(name, since, fn, ints) Status fn(Importer& im);
#define JET_ONNX_NO_DECLARATION(name, since, mode, ints)
JET_ONNX_OPS(JET_ONNX_DECLARE, JET_ONNX_NO_DECLARATION)
#undef JET_ONNX_DECLARE
#undef JET_ONNX_NO_DECLARATION

namespace {

struct OpRow {
  OpEntry entry;
  bool ints;
};

#define JET_ONNX_ROW(name, since, fn, ints) {{name, since, fn}, ints},
#define JET_ONNX_ACTIVATION_ROW(name, since, mode, ints) {{name, since, import_activation<ActivationMode::mode>}, ints},
const OpRow kOps[] = {JET_ONNX_OPS(JET_ONNX_ROW, JET_ONNX_ACTIVATION_ROW)};
#undef JET_ONNX_ROW
#undef JET_ONNX_ACTIVATION_ROW

const OpRow* find_row(const std::string& op_type) {
  for (const OpRow& r : kOps) {
    if (op_type == r.entry.op_type) return &r;
  }
  return nullptr;
}

}  // namespace

bool op_takes_integer_tensors(const std::string& op_type) {
  const OpRow* r = find_row(op_type);
  return r && r->ints;
}

const OpEntry* find_op(const std::string& op_type) {
  const OpRow* r = find_row(op_type);
  return r ? &r->entry : nullptr;
}

}  // namespace onnx_import
}  // namespace jet
