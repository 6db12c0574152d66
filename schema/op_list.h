// Every op type, declared once. The converter's IR (ir::OpType, ir::NodeAttrs, op_type_name,
// op_allows_in_place, op_takes_any_dtype, check_node's input count), the writer's parameter tables
// (Pack, or one ir::write_params per Attrs returning its Params table, converter/op_params.h), the
// runtime's op table (runtime/ops.cpp, indexed by the schema's OpParams union) and the trainer's
// backward table (runtime/training/backward.cpp) are generated from this list, and static_asserts
// tie it to the schema: a union member without a line here, a line naming no union member, an IR
// attribute struct, a runtime prepare_<fn> / execute_<fn> or a backward_<fn> of a RULE that does
// not exist are compile errors (a missing write_params, a link error; a missing column, a macro
// arity error). docs/design.md "Adding an op" lists what else a new op needs;
// tests/runtime/test_op_tables.cpp checks the rest at test time.
//
// JET_OPS(X) calls X(ENUM, fn, Attrs, Params, "Name", in_place, layout, f32_params, dtypes, backward,
// inputs) once per IR op type, in the order of ir::OpType:
//   ENUM      the ir::OpType value
//   fn        the runtime's prepare_<fn> / execute_<fn> (runtime/ops.cpp)
//   Attrs     the IR attribute struct, one per op type: fb::<Params>T, the schema table's own
//             object-API struct (flatc --gen-object-api), where the IR needs exactly the table's
//             fields (the writer stores it with the generated Pack; Graph::add_op builds the node
//             with the op's infer_output in converter/ir.cpp); else ir::<Attrs> (converter/ir.h)
//             with the op's own builder and write_params, where the IR keeps more or richer fields
//             than the file (kernel descriptors, enums, flags of optional inputs)
//   Params    the schema's parameter table, fb::OpParams::<Params> (schema/model.fbs). Several IR
//             ops may share one (POOL and GLOBAL_POOL: PoolParams with `global`); the runtime
//             takes name, fn, in_place and dtypes from the first of them (the others must agree).
//   "Name"    the IR's op_type_name and, for the first op of a Params, the runtime's OpInfo::type
//   in_place  the output may take over the region of an activation input that dies at the op
//             (the kernel allows x == y, or the op is a view): the converter's planner and the
//             runtime's overlap check both read it
//   layout    what the op's kernel takes (converter/passes.cpp set_channels_last):
//               STRIDED    any strides on every input and the output (they become channels-last)
//               STRIDED_X  any strides on x (input 0) and the output; the other inputs (filters,
//                          biases, per-channel parameters) packed
//               PACKED     packed row-major everywhere
//               ANY        reads and writes any strides as they come (a layout change or a view)
//               SPECIAL    decided by passes.cpp itself (Conv's residual, Softmax's axis)
//   f32_params the inputs after x stay f32 whatever the precision (per-channel parameters the
//             kernel reads as float pointers; converter/passes.cpp convert_precision)
//   dtypes    what the op's kernels compute on (OpDTypes below): FLOAT, f32 and f16 tensors only
//             (the converter's builders and the runtime's loader refuse any other, naming it);
//             ANY, integer and bool tensors too (the op's builder and prepare check which)
//   backward  the trainer's backward of the op (runtime/training/backward.cpp): RULE, its rule
//             backward_<fn> there (a training build does not compile without it); NOT_YET, none
//             written; NO_GRADIENT, none exists (integer or bool results). The trainer refuses a
//             model where a trainable parameter's gradient would pass such an op, saying why.
//   inputs    how many inputs a node of the op has (converter/ir.cpp check_node): a number, an
//             expression of the op's attribute struct `a` for optional inputs (2 + a.has_bias),
//             or ONE_OR_MORE (Concat)
// Appending a line appends an ir::OpType value; the schema's union only ever grows at the end.
#pragma once

namespace jet {
// The dtypes column.
enum class OpDTypes { FLOAT, ANY };
}  // namespace jet

// clang-format off
#define JET_OPS(X)                                                                                                                                                                         \
  X(CONV,            conv,            ConvAttrs,                 ConvParams,           "Conv",              false, SPECIAL,   false, FLOAT, RULE,        2 + a.has_bias + a.has_residual)  \
  X(POOL,            pool,            PoolAttrs,                 PoolParams,           "Pool",              false, STRIDED,   false, FLOAT, RULE,        1)                                \
  X(GLOBAL_POOL,     pool,            GlobalPoolAttrs,           PoolParams,           "GlobalPool",        false, STRIDED,   false, FLOAT, RULE,        1)                                \
  X(ACTIVATION,      activation,      ActivationAttrs,           ActivationParams,     "Activation",        true,  STRIDED,   false, FLOAT, RULE,        1)                                \
  X(OP_TENSOR,       op_tensor,       OpTensorAttrs,             OpTensorParams,       "OpTensor",          true,  STRIDED,   false, ANY,   RULE,        2)                                \
  X(GEMM,            gemm,            GemmAttrs,                 GemmParams,           "Gemm",              false, PACKED,    false, FLOAT, RULE,        2 + a.has_bias)                   \
  X(SOFTMAX,         softmax,         SoftmaxAttrs,              SoftmaxParams,        "Softmax",           true,  SPECIAL,   false, FLOAT, RULE,        1)                                \
  X(CONCAT,          concat,          ConcatAttrs,               ConcatParams,         "Concat",            false, STRIDED,   false, ANY,   RULE,        ONE_OR_MORE)                      \
  X(RESHAPE,         reshape,         ReshapeAttrs,              ReshapeParams,        "Reshape",           true,  PACKED,    false, ANY,   RULE,        1)                                \
  X(BATCHNORM,       batchnorm,       BatchNormAttrs,            BatchNormParams,      "BatchNorm",         true,  STRIDED_X, true,  FLOAT, RULE,        5)                                \
  X(TRANSFORM,       transform,       TransformAttrs,            TransformParams,      "Transform",         false, ANY,       false, ANY,   RULE,        1)                                \
  X(SLICE,           slice,           SliceAttrs,                SliceParams,          "Slice",             false, ANY,       false, ANY,   RULE,        1)                                \
  X(PAD,             pad,             PadAttrs,                  PadParams,            "Pad",               false, STRIDED,   false, FLOAT, RULE,        1)                                \
  X(RESIZE,          resize,          ResizeAttrs,               ResizeParams,         "Resize",            false, STRIDED,   false, FLOAT, RULE,        1)                                \
  X(CONV_TRANSPOSE,  conv_transpose,  ConvTransposeAttrs,        ConvTransposeParams,  "ConvTranspose",     false, STRIDED_X, false, FLOAT, RULE,        2 + a.has_bias)                   \
  X(INSTANCENORM,    instancenorm,    InstanceNormAttrs,         InstanceNormParams,   "InstanceNorm",      true,  STRIDED_X, true,  FLOAT, RULE,        3)                                \
  X(LRN,             lrn,             fb::LrnParamsT,            LrnParams,            "LRN",               true,  STRIDED,   false, FLOAT, RULE,        1)                                \
  X(REDUCE,          reduce,          ReduceAttrs,               ReduceParams,         "Reduce",            false, STRIDED,   false, FLOAT, RULE,        1)                                \
  X(LAYERNORM,       layernorm,       fb::LayerNormParamsT,      LayerNormParams,      "LayerNorm",         true,  STRIDED_X, true,  FLOAT, RULE,        1 + a.has_scale + a.has_bias)     \
  X(LOGIC,           logic,           LogicAttrs,                LogicParams,          "Logic",             false, STRIDED,   false, ANY,   NO_GRADIENT, 2)                                \
  X(WHERE,           where,           WhereAttrs,                WhereParams,          "Where",             false, STRIDED,   false, ANY,   NOT_YET,     3)                                \
  X(ARG_REDUCE,      arg_reduce,      ArgReduceAttrs,            ArgReduceParams,      "ArgReduce",         false, STRIDED,   false, ANY,   NO_GRADIENT, 1)                                \
  X(GATHER,          gather,          fb::GatherParamsT,         GatherParams,         "Gather",            false, STRIDED,   false, ANY,   NOT_YET,     2)                                \
  X(TOPK,            topk,            fb::TopKParamsT,           TopKParams,           "TopK",              false, STRIDED,   false, ANY,   NOT_YET,     1)                                \
  X(NMS,             nms,             fb::NmsParamsT,            NmsParams,            "NonMaxSuppression", false, PACKED,    false, ANY,   NO_GRADIENT, 2)                                \
  X(GATHER_ELEMENTS, gather_elements, fb::GatherElementsParamsT, GatherElementsParams, "GatherElements",    false, STRIDED,   false, ANY,   NOT_YET,     2)                                \
  X(TRILU,           trilu,           fb::TriluParamsT,          TriluParams,          "Trilu",             false, STRIDED,   false, ANY,   NOT_YET,     1)                                \
  X(CUMSUM,          cumsum,          fb::CumSumParamsT,         CumSumParams,         "CumSum",            false, STRIDED,   false, ANY,   NOT_YET,     1)                                \
  X(SCATTER,         scatter,         ScatterAttrs,              ScatterParams,        "Scatter",           false, STRIDED,   false, ANY,   NOT_YET,     3)
// clang-format on
