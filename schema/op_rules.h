// The output rule of an op type whose IR attributes are its schema table's object-API struct
// (schema/op_list.h's Attrs column fb::<Params>T): the output's dtype and dims from the inputs and
// the parameters, or what is wrong with them. Written once, in runtime/ops.cpp next to the op's
// prepare and execute, and run by both sides of the file: the runtime's loader holds the output
// the file stores against it, and the converter's Graph::add_op infers the output it adds with it
// (converter/ir.cpp). So the op's shape inference and its load-time check cannot drift apart.
//
// One declaration per schema table, generated from op_list.h; only the tables of such ops have a
// definition (the others are never called: their ops have their own builder and prepare). An op
// of that kind without its rule fails to link.
#pragma once

#include <cstdint>

#include "jet/dnn/common.h"
#include "jet/dnn/tensor.h"
#include "jet/schema/model_generated.h"
#include "op_list.h"

namespace jet {
namespace rt {

struct OpOutput {
  DType dtype = DType::F32;
  int rank = 0;
  int64_t dims[kMaxRank] = {};
};

// input_descs: the op's input descriptors, as many as op_list.h's inputs column says (the callers
// check the count). BAD_PARAM saying what is wrong, naming inputs by their role (x, indices); the
// callers add the op's or the node's name.
#define JET_OP_OUTPUT_RULE(ENUM, fn, Attrs, Params, name, in_place, layout, f32_params, dtypes, backward, inputs) \
  Status infer_output(const fb::Params##T& params, const TensorDesc* input_descs, OpOutput* out);
JET_OPS(JET_OP_OUTPUT_RULE)
#undef JET_OP_OUTPUT_RULE

// The tensors of one run of an op: its inputs' descriptors and pointers (as many as the inputs
// column says) and its output's.
struct KernelCall {
  const TensorDesc* input_descs;
  const void* const* inputs;
  const TensorDesc& output_desc;
  void* output;
};

// The kernel rule of such an op: its kernel call, the table's fields mapped onto the routine's
// arguments. Written once, in runtime/ops.cpp beside the output rule: the runtime's execute_<fn>
// runs it (execute_by_rule) and so does the tests' reference executor
// (tests/common/ir_reference.cpp), which then needs nothing of the op. Ops whose prepare builds a
// descriptor or sizes a workspace for their kernel (LRN, NMS) keep their own execute and
// reference code instead and have no kernel rule; an op of neither kind fails to link.
#define JET_OP_KERNEL_RULE(ENUM, fn, Attrs, Params, name, in_place, layout, f32_params, dtypes, backward, inputs) \
  Status run_kernel(const Handle& handle, const fb::Params##T& params, const KernelCall& call);
JET_OPS(JET_OP_KERNEL_RULE)
#undef JET_OP_KERNEL_RULE

}  // namespace rt
}  // namespace jet
