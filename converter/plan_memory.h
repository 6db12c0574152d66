// The offline memory planner: liveness intervals on the execution order, then arena offsets.
//
// Every non-constant tensor (graph inputs, activations, graph outputs) gets a buffer in one arena.
// A tensor is live from the step that produces it (graph inputs: step 0) to the last step that
// reads it; graph inputs and outputs stay live to the last step (inputs are never overwritten, so
// repeated runs need not rewrite them). Two buffers may share memory only when their
// lifetimes do not overlap, or when an in-place op's output takes over its input's buffer.
//
// GREEDY_BEST_FIT, in the style of TFLite Micro's GreedyMemoryPlanner: in-place pairs are merged
// into one buffer first (an op for which ir::op_allows_in_place holds, whose activation input dies
// at the op and has the output's byte size); then buffers are placed largest first, each into the
// smallest gap between the already placed buffers that it overlaps in time (or past the end).
// NAIVE gives every tensor its own region (no reuse, no in-place): for debugging.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir.h"

namespace jet {
namespace ir {

constexpr size_t kArenaAlignment = 256;

enum class Planner { GREEDY_BEST_FIT, NAIVE };

struct TensorPlacement {
  bool in_arena = false;  // false for constants and for tensors no step touches
  int64_t offset = -1;    // bytes from the arena base, a multiple of kArenaAlignment
  size_t size = 0;        // the tensor's bytes rounded up to kArenaAlignment
  int first_step = -1;    // liveness interval [first_step, last_step] in `order` positions
  int last_step = -1;
  int shares_with = -1;   // in-place: the input tensor whose buffer this one took over, else -1
};

struct MemoryPlan {
  Planner kind = Planner::GREEDY_BEST_FIT;
  size_t arena_bytes = 0;
  // The peak over steps of the aligned bytes live at that step (an in-place pair counted once):
  // no plan with the same in-place merges can use a smaller arena.
  size_t lower_bound_bytes = 0;
  std::vector<TensorPlacement> tensors;  // indexed like Graph::tensors

  double ratio() const {
    return lower_bound_bytes ? static_cast<double>(arena_bytes) / static_cast<double>(lower_bound_bytes) : 1.0;
  }
};

// `order` must be a valid execution order of all of the graph's nodes (topological_order gives
// one); validate_plan checks it.
MemoryPlan plan_memory(const Graph& graph, const std::vector<int>& order, Planner kind);

// BAD_PARAM naming the problem unless: `order` executes every node once, after the producers of
// its inputs; every non-constant tensor that is used has an arena region, aligned, large enough
// and inside arena_bytes; no two tensors whose lifetimes (recomputed from graph and order)
// overlap share a byte, except an in-place pair: the output of an op allowing in place and an
// input dying at that op, at the same offset with the same size.
Status validate_plan(const Graph& graph, const std::vector<int>& order, const MemoryPlan& plan);

}  // namespace ir
}  // namespace jet
