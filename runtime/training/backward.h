// The backward rule of every op type the runtime executes: reverse-mode differentiation of one
// op, composed from the training add-on's kernels (jet/dnn/training.h). The table is generated
// from schema/op_list.h: an op whose backward column is RULE has its backward_<fn> in backward.cpp
// (one per runtime function stem, like ops.cpp's prepare_<fn> and execute_<fn>; a training build
// does not compile without it), one that is NOT_YET or NO_GRADIENT gets a rule without run and
// the reason. Every op type's jet_op row must say which. Internal to the trainer (runtime/training/).
#pragma once

#include <cstddef>
#include <cstdint>

#include "../ops.h"

namespace jet {
namespace rt {

// What a rule decided at Trainer::create for one op (stored by the trainer, passed back to run).
struct BackwardPlan {
  size_t workspace_limit = SIZE_MAX;  // in: the most workspace the rule may choose to use
  size_t workspace_bytes = 0;         // out
  int32_t algo = 0;                   // out; conv: the ConvBwdFilterAlgo
};

// One op's backward: din[k] = dL/d(input k) from dy = dL/d(output), for the inputs whose din[k]
// is not null, overwriting din[k] (din_beta[k] == 0) or adding to it (1: another reader of the
// same tensor wrote it first). Gradient buffers have their tensors' descriptors (strides
// included), so the op's own descriptors describe them.
struct BackwardArgs {
  const Handle& handle;
  const PreparedOp& op;
  const BackwardPlan& plan;
  const void* const* in;  // the forward's input values
  const void* out;        // the forward's output value
  const void* pre;        // Conv with a fused activation: the values before it; else null
  void* dy;               // the output's gradient; the rule may overwrite it (nothing reads it later)
  void* const* din;
  const float* din_beta;
  void* workspace;
  size_t workspace_bytes;
  // BatchNorm in training mode: the batch's mean and 1/sqrt(var + eps) saved by the forward.
  const float* saved_mean;
  const float* saved_inv_std;
  const float* zero;  // one f32 0 in the handle's memory (a broadcast source for clearing)
};

using BackwardRunFn = Status (*)(const BackwardArgs& args);
// The plan for `op` when the inputs in `grad_inputs` (bit k: input k) need gradients; a problem
// the rule cannot differentiate (Reduce MAX, a broadcast batch in Gemm) is NOT_SUPPORTED here, at
// create, never in a step.
using BackwardPlanFn = Status (*)(const Handle& handle, const PreparedOp& op, uint32_t grad_inputs,
                                  BackwardPlan* plan);
// Bit k: input k, when it is a constant, is a learnable parameter of the op.
using ParamInputsFn = uint32_t (*)(const PreparedOp& op);

// The forward values run reads: bit k input k, kReadsOutput the output. The trainer keeps exactly
// these until the rule has run; the others may be overwritten once the forward is past them.
using ReadsFn = uint32_t (*)(const PreparedOp& op);
constexpr uint32_t kReadsOutput = 1u << 31;

struct BackwardRule {
  BackwardRunFn run = nullptr;  // null: the op type has no backward
  BackwardPlanFn plan = nullptr;
  ParamInputsFn params = nullptr;  // null: no learnable inputs
  ReadsFn reads = nullptr;         // null: reads nothing of the forward (with run: only dy)
  const char* why_not = nullptr;   // for an op type without backward: what is missing
};

// The rule of `op`'s type (never null; run is null for an op type without a backward).
const BackwardRule& backward_rule(const PreparedOp& op);

// Conv: whether the trainer must keep the values before the fused activation (the backward of a
// non-identity activation reads its input; ReLU's reads the output instead).
bool conv_needs_pre_activation(const PreparedOp& op);

}  // namespace rt
}  // namespace jet
