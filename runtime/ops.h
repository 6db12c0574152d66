// The op types the runtime executes: one row per member of the schema's OpParams union, each with
// a prepare function (parameter validation, shape inference against the stored output,
// descriptors, algorithm choice) and an execute function (one kernel call). The table is generated
// from schema/op_list.h (a row of JET_OPS names prepare_<fn> / execute_<fn> in ops.cpp) and
// static_asserts that every union member has a row.
#pragma once

#include <string>
#include <vector>

#include "engine_impl.h"
#include "jet/schema/model_generated.h"

namespace jet {
namespace rt {

// A convolution's prepared parameters (its OpData; tuning.cpp and engine.cpp read them too).
struct ConvPrepared {
  FilterDesc filter;        // KCRS as stored, or KRSC when the upload reorders it (filter_krsc)
  bool filter_krsc = false;
  ConvDesc conv;
  ConvAlgo algo = ConvAlgo::DIRECT;  // the tactic is conv.tactic()
  ConvPreference preference = ConvPreference::PREFER_FASTEST;  // the file's fallback policy
  size_t workspace_limit = SIZE_MAX;  // what that policy allows
  ActivationDesc act;
  float alpha1 = 1.f, alpha2 = 1.f;
  int bias_input = -1;      // position in the op's inputs, -1 for none
  int residual_input = -1;
  TensorDesc bias_view;     // 1, K, 1... over the bias constant
};

// The prepared data of the ops whose backward rules (the training add-on, runtime/training/)
// read it too; the other ops' structs are defined next to their functions in ops.cpp (an op
// prepared by its output rule keeps its table's struct fb::<Params>T, which the rules read).
struct GemmPrepared {
  GemmDesc gemm;
  float alpha = 1.f;
  int bias_input = -1;
  TensorDesc bias_view;  // y's rank
};

struct SoftmaxPrepared {
  SoftmaxAlgo algo = SoftmaxAlgo::ACCURATE;
  SoftmaxMode mode = SoftmaxMode::CHANNEL;
  TensorDesc x_view, y_view;  // rank 3..5 views the kernel takes
};

struct ReshapePrepared {
  TensorDesc x_view, y_view;  // 1-D views of the same element count
};

struct PadPrepared {
  PadMode mode = PadMode::CONSTANT;
  int64_t pad_begin[kMaxRank] = {};
  int64_t pad_end[kMaxRank] = {};
  float value = 0.f;
};

struct SlicePrepared {
  TensorDesc view;     // the strided view of x that is copied into y
  size_t offset_bytes = 0;  // where the view starts in x
};

struct ConvTransposePrepared {
  FilterDesc filter;  // C_in x C_out/groups x window (the forward convolution's K x C)
  ConvDesc conv;
  int bias_input = -1;
  TensorDesc bias_view;  // 1, C_out, 1...
};

// What a prepare function gets: the op as stored, the validated tensors, the backend.
struct PrepareArgs {
  const fb::Op& op;
  const std::vector<TensorRecord>& tensors;
  const std::vector<TensorInfo>& infos;
  const Handle& handle;
  const std::vector<int>& sole_user;  // per tensor: the only op reading it, -1 when none or several
  int step;                           // this op's index
  StoredChoices stored_choices;  // conv: whether the stored algo/tactic were tuned on this device
  ConvMath conv_math;            // conv: from LoadOptions::approximate_convolutions
};

// Fills out (descriptors, parameters, workspace) and info (algo, flops). The op's kind, inputs
// and output are already set and checked for range and order.
using PrepareFn = Status (*)(const PrepareArgs& args, PreparedOp* out, OpInfo* info);
// One kernel call. in[i] / out are the op's tensors' current pointers.
using ExecuteFn = Status (*)(const Handle& handle, const PreparedOp& op, const void* const* in,
                             void* out, void* workspace, size_t workspace_bytes);

struct OpEntry {
  fb::OpParams params;   // the schema's union member
  const char* name;      // OpInfo::type
  bool allows_in_place;  // the output may take over a dying activation input's region
  bool takes_any_dtype;  // integer and bool tensors too (dtypes ANY); else every tensor is f32 / f16
  PrepareFn prepare;
  ExecuteFn execute;
};

// nullptr for NONE and for union members this runtime does not know.
const OpEntry* find_op_entry(fb::OpParams params);

inline bool is_op(const PreparedOp& op, fb::OpParams params) { return op.type->params == params; }

// Runs every op's prepare function (messages name the op); fills workspace and flops. Stored
// tuned choices the backend refused are summed up in one note (impl->summary.notes).
Status prepare_ops(const fb::Model& model, Engine::Impl* impl);

// The run() loop's body.
inline Status execute_op(const Handle& handle, const PreparedOp& op, const void* const* in,
                         void* out, void* workspace, size_t workspace_bytes) {
  return op.type->execute(handle, op, in, out, workspace, workspace_bytes);
}

}  // namespace rt
}  // namespace jet
