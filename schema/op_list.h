// Every op type, declared once: on its parameter table in schema/model.fbs, whose `jet_op`
// attribute holds the columns below (all but Params, the table itself), and which the build turns
// into JET_OPS. The converter's IR (ir::OpType, ir::NodeAttrs, op_type_name,
// op_allows_in_place, op_takes_any_dtype, check_node's input count), the writer's parameter tables
// (Pack, or one ir::write_params per Attrs returning its Params table, converter/op_params.h), the
// runtime's op table (runtime/ops.cpp, indexed by the schema's OpParams union) and the trainer's
// backward table (runtime/training/backward.cpp) are generated from this list. A union member
// without its jet_op, a jet_op on a table outside the union or a row without its ten columns stops
// the build (op_list.cmake, naming the table); static_asserts still tie the list to the union; an
// IR attribute struct, a runtime prepare_<fn> / execute_<fn> or a backward_<fn> of a RULE that
// does not exist are compile errors (a missing write_params, a link error). docs/design.md "Adding an op" lists what else a new op needs;
// tests/runtime/test_op_tables.cpp checks the rest at test time.
//
// JET_OPS(X) calls X(ENUM, fn, Attrs, Params, "Name", in_place, layout, f32_params, dtypes, backward,
// inputs) once per IR op type, in the order of ir::OpType (union OpParams' order):
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
// A new table's member goes at the end of union OpParams (the union only ever grows there), so a
// new op type appends an ir::OpType value.
#pragma once

namespace jet {
// The dtypes column.
enum class OpDTypes { FLOAT, ANY };
}  // namespace jet

// JET_OPS itself, generated at build time from model.fbs's jet_op attributes (schema/op_list.cmake).
#include "jet/schema/op_list_generated.h"
