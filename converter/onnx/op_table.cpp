// The op table: one entry per ONNX op type (default domain) -> the function that imports it.
// `since` is the first opset that has the op; version-specific behaviour (attributes that became
// inputs, changed defaults) is handled inside the functions by Importer::opset. Adding an op is
// one line here plus its function in ops_*.cpp. docs/onnx.md lists the table for users.
#include "importer.h"

namespace jet {
namespace onnx_import {

namespace {

const OpEntry kOps[] = {
    // Constants, aliases and shape arithmetic (folded at import time).
    {"Constant", 1, import_constant},
    {"Identity", 1, import_identity},
    {"Dropout", 1, import_dropout},
    {"Shape", 1, import_shape},
    {"Size", 1, import_size},
    {"Gather", 1, import_gather},
    {"Unsqueeze", 1, import_unsqueeze},
    {"Squeeze", 1, import_squeeze},
    {"Slice", 1, import_slice},
    {"Reshape", 5, import_reshape},
    {"Flatten", 1, import_flatten},
    {"ConstantOfShape", 9, import_constant_of_shape},
    {"Range", 11, import_range},
    {"Transpose", 1, import_transpose},
    {"Expand", 8, import_expand},
    {"Where", 9, import_where},
    {"Not", 1, import_not},
    {"Equal", 1, import_equal},
    {"Less", 1, import_less},
    {"Greater", 1, import_greater},
    {"ReduceProd", 1, import_reduce_prod},
    {"Split", 2, import_split},
    // Convolution and pooling.
    {"Conv", 1, import_conv},
    {"MaxPool", 1, import_max_pool},
    {"AveragePool", 1, import_average_pool},
    {"GlobalAveragePool", 1, import_global_average_pool},
    {"GlobalMaxPool", 1, import_global_max_pool},
    {"Pad", 1, import_pad},
    // Activations.
    {"Relu", 1, import_activation<ActivationMode::RELU>},
    {"LeakyRelu", 1, import_leaky_relu},
    {"PRelu", 1, import_prelu},
    {"Sigmoid", 1, import_activation<ActivationMode::SIGMOID>},
    {"Tanh", 1, import_activation<ActivationMode::TANH>},
    {"Clip", 1, import_clip},
    {"Elu", 1, import_elu},
    {"Selu", 1, import_selu},
    {"HardSigmoid", 1, import_hard_sigmoid},
    {"HardSwish", 14, import_activation<ActivationMode::HARD_SWISH>},
    {"Softplus", 1, import_activation<ActivationMode::SOFTPLUS>},
    {"Mish", 18, import_activation<ActivationMode::MISH>},
    {"Gelu", 20, import_gelu},
    // Element-wise math (activation modes too: one formula, fusable into a Conv's epilogue).
    {"Exp", 1, import_activation<ActivationMode::EXP>},
    {"Log", 1, import_activation<ActivationMode::LOG>},
    {"Sqrt", 1, import_activation<ActivationMode::SQRT>},
    {"Reciprocal", 1, import_activation<ActivationMode::RECIPROCAL>},
    {"Abs", 1, import_activation<ActivationMode::ABS>},
    {"Neg", 1, import_activation<ActivationMode::NEG>},
    {"Floor", 1, import_activation<ActivationMode::FLOOR>},
    {"Ceil", 1, import_activation<ActivationMode::CEIL>},
    {"Round", 11, import_activation<ActivationMode::ROUND>},
    {"Sign", 9, import_activation<ActivationMode::SIGN>},
    {"Sin", 7, import_activation<ActivationMode::SIN>},
    {"Cos", 7, import_activation<ActivationMode::COS>},
    {"Tan", 7, import_activation<ActivationMode::TAN>},
    {"Erf", 9, import_activation<ActivationMode::ERF>},
    {"Softsign", 1, import_activation<ActivationMode::SOFTSIGN>},
    // Element-wise arithmetic.
    {"Add", 1, import_add},
    {"Sub", 1, import_sub},
    {"Mul", 1, import_mul},
    {"Div", 1, import_div},
    {"Max", 1, import_max},
    {"Min", 1, import_min},
    {"Sum", 1, import_sum},
    {"Pow", 1, import_pow},
    {"Mod", 10, import_mod},
    // Matrix products, normalization, softmax.
    {"Gemm", 1, import_gemm},
    {"MatMul", 1, import_matmul},
    {"Softmax", 1, import_softmax},
    {"LogSoftmax", 1, import_log_softmax},
    {"BatchNormalization", 1, import_batch_norm},
    // Tensor ops.
    {"Concat", 1, import_concat},
    {"Cast", 1, import_cast},
    {"ReduceMean", 1, import_reduce_mean},
    {"ReduceMax", 1, import_reduce_max},
    {"ReduceMin", 1, import_reduce_min},
    {"ReduceSum", 1, import_reduce_sum},
    {"ReduceL1", 1, import_reduce_l1},
    {"ReduceL2", 1, import_reduce_l2},
    {"ReduceSumSquare", 1, import_reduce_sum_square},
    {"ReduceLogSum", 1, import_reduce_log_sum},
    {"ReduceLogSumExp", 1, import_reduce_log_sum_exp},
    // Transposed convolution, normalization across channels / per instance, resizing.
    {"ConvTranspose", 1, import_conv_transpose},
    {"LRN", 1, import_lrn},
    {"InstanceNormalization", 1, import_instance_norm},
    {"LayerNormalization", 17, import_layer_norm},
    {"GroupNormalization", 18, import_group_norm},
    {"Resize", 10, import_resize},
    {"Upsample", 1, import_upsample},
    // Integer and bool tensors (computed ones run in the runtime: LOGIC, WHERE, ARG_REDUCE).
    {"LessOrEqual", 12, import_less_or_equal},
    {"GreaterOrEqual", 12, import_greater_or_equal},
    {"And", 7, import_and},
    {"Or", 7, import_or},
    {"Xor", 7, import_xor},
    {"ArgMax", 1, import_arg_max},
    {"ArgMin", 1, import_arg_min},
    // Detection heads.
    {"TopK", 1, import_topk},
    {"NonMaxSuppression", 10, import_nms},
    // Index and data movement on computed tensors (ops_index.cpp).
    {"GatherElements", 11, import_gather_elements},
    {"Trilu", 14, import_trilu},
    {"CumSum", 11, import_cumsum},
    {"Scatter", 9, import_scatter_elements},
    {"ScatterElements", 11, import_scatter_elements},
    {"ScatterND", 11, import_scatter_nd},
    {"Tile", 6, import_tile},
    {"DepthToSpace", 1, import_depth_to_space},
    {"SpaceToDepth", 1, import_space_to_depth},
    {"OneHot", 9, import_one_hot},
    {"EyeLike", 9, import_eye_like},
};

// The ONNX op types whose importers take computed integer and bool tensors (the IR ops TRANSFORM,
// SLICE, CONCAT, RESHAPE, LOGIC, WHERE, ARG_REDUCE, or relabellings); a node of any other op type
// reading one is unsupported (model.cpp's walk), never computed as floats.
const char* const kIntegerOps[] = {
    "Identity", "Shape", "Size", "Gather", "Unsqueeze", "Squeeze", "Slice", "Reshape", "Flatten", "Transpose",
    "Split", "Concat", "Cast", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or",
    "Xor", "Not", "Where", "ArgMax", "ArgMin",
    // Integer arithmetic (op_tensor on I32 / I64; Neg and Abs composed of it).
    "Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Pow", "Mod", "Neg", "Abs",
    // TopK of integer tensors.
    "TopK",
    // Index and data movement (ops_index.cpp).
    "GatherElements", "Trilu", "CumSum", "Scatter", "ScatterElements", "ScatterND",
    "Tile", "OneHot", "EyeLike",
};

}  // namespace

bool op_takes_integer_tensors(const std::string& op_type) {
  for (const char* name : kIntegerOps) {
    if (op_type == name) return true;
  }
  return false;
}

const OpEntry* find_op(const std::string& op_type) {
  for (const OpEntry& e : kOps) {
    if (op_type == e.op_type) return &e;
  }
  return nullptr;
}

}  // namespace onnx_import
}  // namespace jet
