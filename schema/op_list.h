// Every op type, declared once. The converter's IR (ir::OpType, ir::NodeAttrs, op_type_name,
// op_allows_in_place) and the runtime's op table (runtime/ops.cpp, indexed by the schema's
// OpParams union) are generated from this list, and static_asserts tie it to the schema: a union
// member without a line here, a line naming no union member, an IR attribute struct, a runtime
// prepare_<fn> / execute_<fn> that does not exist are compile errors. docs/design.md "Adding an op"
// lists what else a new op needs; tests/runtime/test_op_tables.cpp checks the rest at test time.
//
// JET_OPS(X) calls X(ENUM, fn, Attrs, Params, "Name", in_place) once per IR op type, in the order
// of ir::OpType:
//   ENUM      the ir::OpType value
//   fn        the runtime's prepare_<fn> / execute_<fn> (runtime/ops.cpp)
//   Attrs     the IR attribute struct ir::<Attrs> (converter/ir.h), one per op type
//   Params    the schema's parameter table, fb::OpParams::<Params> (schema/model.fbs). Several IR
//             ops may share one (POOL and GLOBAL_POOL: PoolParams with `global`); the runtime
//             takes name, fn and in_place from the first of them.
//   "Name"    the IR's op_type_name and, for the first op of a Params, the runtime's OpInfo::type
//   in_place  the output may take over the region of an activation input that dies at the op
//             (the kernel allows x == y, or the op is a view): the converter's planner and the
//             runtime's overlap check both read it
// Appending a line appends an ir::OpType value; the schema's union only ever grows at the end.
#pragma once

// clang-format off
#define JET_OPS(X)                                                                              \
  X(CONV,           conv,           ConvAttrs,          ConvParams,          "Conv",          false) \
  X(POOL,           pool,           PoolAttrs,          PoolParams,          "Pool",          false) \
  X(GLOBAL_POOL,    pool,           GlobalPoolAttrs,    PoolParams,          "GlobalPool",    false) \
  X(ACTIVATION,     activation,     ActivationAttrs,    ActivationParams,    "Activation",    true)  \
  X(OP_TENSOR,      op_tensor,      OpTensorAttrs,      OpTensorParams,      "OpTensor",      true)  \
  X(GEMM,           gemm,           GemmAttrs,          GemmParams,          "Gemm",          false) \
  X(SOFTMAX,        softmax,        SoftmaxAttrs,       SoftmaxParams,       "Softmax",       true)  \
  X(CONCAT,         concat,         ConcatAttrs,        ConcatParams,        "Concat",        false) \
  X(RESHAPE,        reshape,        ReshapeAttrs,       ReshapeParams,       "Reshape",       true)  \
  X(BATCHNORM,      batchnorm,      BatchNormAttrs,     BatchNormParams,     "BatchNorm",     true)  \
  X(TRANSFORM,      transform,      TransformAttrs,     TransformParams,     "Transform",     false) \
  X(SLICE,          slice,          SliceAttrs,         SliceParams,         "Slice",         false) \
  X(PAD,            pad,            PadAttrs,           PadParams,           "Pad",           false) \
  X(RESIZE,         resize,         ResizeAttrs,        ResizeParams,        "Resize",        false) \
  X(CONV_TRANSPOSE, conv_transpose, ConvTransposeAttrs, ConvTransposeParams, "ConvTranspose", false) \
  X(INSTANCENORM,   instancenorm,   InstanceNormAttrs,  InstanceNormParams,  "InstanceNorm",  true)  \
  X(LRN,            lrn,            LrnAttrs,           LrnParams,           "LRN",           true)  \
  X(REDUCE,         reduce,         ReduceAttrs,        ReduceParams,        "Reduce",        false)
// clang-format on
