#include "plan_memory.h"

#include <algorithm>
#include <limits>
#include <string>

namespace jet {
namespace ir {

namespace {

size_t align_up(size_t n) { return (n + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

bool in_arena_kind(TensorKind k) { return k != TensorKind::CONSTANT; }

// Liveness on `order` (assumed valid): [first, last] per tensor, -1 for tensors not in the arena.
void compute_liveness(const Graph& g, const std::vector<int>& order, std::vector<int>* first,
                      std::vector<int>* last) {
  const int nt = static_cast<int>(g.tensors.size());
  const int end = std::max(static_cast<int>(order.size()) - 1, 0);
  first->assign(nt, -1);
  last->assign(nt, -1);
  for (int t = 0; t < nt; ++t) {
    if (g.tensors[t].kind == TensorKind::INPUT) (*first)[t] = (*last)[t] = 0;
  }
  for (int s = 0; s < static_cast<int>(order.size()); ++s) {
    const Node& n = g.nodes[order[s]];
    for (int t : n.inputs) {
      if (in_arena_kind(g.tensors[t].kind)) (*last)[t] = std::max((*last)[t], s);
    }
    for (int t : n.outputs) {
      if (!in_arena_kind(g.tensors[t].kind)) continue;
      if ((*first)[t] < 0) (*first)[t] = s;
      (*last)[t] = std::max((*last)[t], s);
    }
  }
  // Graph inputs and outputs live for the whole pass: outputs must survive to the end, and
  // inputs must survive it too, so that a second run() (a CUDA-graph replay, a benchmark loop)
  // reads the same input without the caller writing it again. Costs the input's bytes only.
  for (int t = 0; t < nt; ++t) {
    const TensorKind k = g.tensors[t].kind;
    if ((k == TensorKind::OUTPUT || k == TensorKind::INPUT) && (*first)[t] >= 0) (*last)[t] = end;
  }
}

bool overlaps(int a0, int a1, int b0, int b1) { return a0 <= b1 && b0 <= a1; }

struct Buffer {
  int root = -1;  // the first tensor of the in-place chain
  size_t size = 0;
  int first = 0, last = 0;
  int64_t offset = -1;
};

// In place is only safe when the output's element i sits where the input's element i sat: a
// reshape between packed tensors, or an elementwise op whose input and output have the same dims
// and the same strides (a layout change must not run in place).
bool same_element_positions(const Graph& g, const Node& n, int x, int y) {
  const Tensor& tx = g.tensors[x];
  const Tensor& ty = g.tensors[y];
  if (tx.bytes() != ty.bytes()) return false;
  if (n.op == OpType::RESHAPE) return tx.is_packed() && ty.is_packed();
  if (tx.dims != ty.dims) return false;
  const std::vector<int64_t> sx = tx.strides.empty() ? packed_strides(tx.dims) : tx.strides;
  const std::vector<int64_t> sy = ty.strides.empty() ? packed_strides(ty.dims) : ty.strides;
  return sx == sy;
}

}  // namespace

MemoryPlan plan_memory(const Graph& g, const std::vector<int>& order, Planner kind) {
  MemoryPlan plan;
  plan.kind = kind;
  const int nt = static_cast<int>(g.tensors.size());
  plan.tensors.assign(nt, TensorPlacement{});
  std::vector<int> first, last;
  compute_liveness(g, order, &first, &last);

  // One buffer per used tensor, then in-place merges: buffer_of[t] indexes `buffers`.
  std::vector<int> buffer_of(nt, -1);
  std::vector<Buffer> buffers;
  for (int t = 0; t < nt; ++t) {
    if (first[t] < 0) continue;
    TensorPlacement& p = plan.tensors[t];
    p.in_arena = true;
    p.size = align_up(g.tensors[t].bytes());
    p.first_step = first[t];
    p.last_step = last[t];
    buffer_of[t] = static_cast<int>(buffers.size());
    buffers.push_back(Buffer{t, p.size, first[t], last[t], -1});
  }
  if (kind == Planner::GREEDY_BEST_FIT) {
    for (int s = 0; s < static_cast<int>(order.size()); ++s) {
      const Node& n = g.nodes[order[s]];
      if (!op_allows_in_place(n.op) || n.outputs.size() != 1) continue;
      const int y = n.outputs[0];
      if (buffer_of[y] < 0) continue;
      for (int x : n.inputs) {
        if (x == y || g.tensors[x].kind != TensorKind::ACTIVATION || buffer_of[x] < 0) continue;
        Buffer& bx = buffers[buffer_of[x]];
        if (last[x] != s || bx.last != s || !same_element_positions(g, n, x, y)) continue;
        // y takes over x's buffer: the merged buffer lives from x's chain start to y's end.
        Buffer& by = buffers[buffer_of[y]];
        bx.last = std::max(bx.last, by.last);
        by.size = 0;  // retired
        by.root = -1;
        buffer_of[y] = buffer_of[x];
        plan.tensors[y].shares_with = x;
        break;
      }
    }
  }
  std::vector<int> live;  // indices of buffers still in use
  for (int b = 0; b < static_cast<int>(buffers.size()); ++b) {
    if (buffers[b].root >= 0) live.push_back(b);
  }

  // Lower bound: the peak of simultaneously live aligned bytes.
  for (int s = 0; s < static_cast<int>(std::max<size_t>(order.size(), 1)); ++s) {
    size_t sum = 0;
    for (int b : live) {
      if (buffers[b].first <= s && s <= buffers[b].last) sum += buffers[b].size;
    }
    plan.lower_bound_bytes = std::max(plan.lower_bound_bytes, sum);
  }

  if (kind == Planner::NAIVE) {
    size_t offset = 0;
    for (int b : live) {
      buffers[b].offset = static_cast<int64_t>(offset);
      offset += buffers[b].size;
    }
  } else {
    std::vector<int> by_size = live;
    std::stable_sort(by_size.begin(), by_size.end(), [&](int a, int b) {
      if (buffers[a].size != buffers[b].size) return buffers[a].size > buffers[b].size;
      return buffers[a].first < buffers[b].first;
    });
    std::vector<int> placed;
    std::vector<int> conflicts;
    for (int b : by_size) {
      Buffer& cur = buffers[b];
      conflicts.clear();
      for (int p : placed) {
        if (overlaps(cur.first, cur.last, buffers[p].first, buffers[p].last)) conflicts.push_back(p);
      }
      std::sort(conflicts.begin(), conflicts.end(),
                [&](int a, int c) { return buffers[a].offset < buffers[c].offset; });
      // Scan the gaps between conflicting buffers; keep the smallest one that fits.
      size_t candidate = 0;  // start of the current gap
      size_t best = 0, best_gap = std::numeric_limits<size_t>::max();
      bool found = false;
      for (int p : conflicts) {
        const size_t po = static_cast<size_t>(buffers[p].offset);
        if (po >= candidate) {
          const size_t gap = po - candidate;
          if (gap >= cur.size && gap < best_gap) {
            best = candidate;
            best_gap = gap;
            found = true;
          }
        }
        candidate = std::max(candidate, align_up(po + buffers[p].size));
      }
      cur.offset = static_cast<int64_t>(found ? best : candidate);
      placed.push_back(b);
    }
  }

  for (int t = 0; t < nt; ++t) {
    if (buffer_of[t] < 0) continue;
    const Buffer& b = buffers[buffer_of[t]];
    plan.tensors[t].offset = b.offset;
    plan.arena_bytes = std::max(plan.arena_bytes, static_cast<size_t>(b.offset) + plan.tensors[t].size);
  }
  return plan;
}

Status validate_plan(const Graph& g, const std::vector<int>& order, const MemoryPlan& plan) {
  auto bad = [](const std::string& m) { return Status(StatusCode::BAD_PARAM, "validate_plan: " + m); };
  const int nt = static_cast<int>(g.tensors.size());
  const int nn = static_cast<int>(g.nodes.size());
  if (static_cast<int>(order.size()) != nn) {
    return bad("order has " + std::to_string(order.size()) + " steps for " + std::to_string(nn) + " nodes");
  }
  // The order runs every node once, after the producers of its inputs.
  std::vector<int> seen(nn, 0);
  std::vector<int> produced_at(nt, -1);
  for (int s = 0; s < nn; ++s) {
    const int i = order[s];
    if (i < 0 || i >= nn || seen[i]++) return bad("order step " + std::to_string(s) + " is invalid or repeated");
    for (int t : g.nodes[i].inputs) {
      if (t < 0 || t >= nt) return bad("node '" + g.nodes[i].name + "' has a bad input index");
      const TensorKind k = g.tensors[t].kind;
      if ((k == TensorKind::ACTIVATION || k == TensorKind::OUTPUT) && produced_at[t] < 0) {
        return bad("node '" + g.nodes[i].name + "' reads '" + g.tensors[t].name + "' before it is produced");
      }
    }
    for (int t : g.nodes[i].outputs) {
      if (t < 0 || t >= nt) return bad("node '" + g.nodes[i].name + "' has a bad output index");
      if (produced_at[t] >= 0) return bad("tensor '" + g.tensors[t].name + "' is produced twice");
      produced_at[t] = s;
    }
  }
  if (static_cast<int>(plan.tensors.size()) != nt) return bad("plan does not cover the graph's tensors");
  std::vector<int> first, last;
  compute_liveness(g, order, &first, &last);
  std::vector<int> used;
  for (int t = 0; t < nt; ++t) {
    if (first[t] < 0) continue;
    const TensorPlacement& p = plan.tensors[t];
    const std::string name = "tensor '" + g.tensors[t].name + "'";
    if (!p.in_arena || p.offset < 0) return bad(name + " has no arena region");
    if (static_cast<size_t>(p.offset) % kArenaAlignment != 0) {
      return bad(name + " offset " + std::to_string(p.offset) + " is not aligned to " + std::to_string(kArenaAlignment));
    }
    if (p.size < g.tensors[t].bytes()) return bad(name + " region is smaller than the tensor");
    if (static_cast<size_t>(p.offset) + p.size > plan.arena_bytes) return bad(name + " region ends past the arena");
    used.push_back(t);
  }
  for (size_t i = 0; i < used.size(); ++i) {
    for (size_t j = i + 1; j < used.size(); ++j) {
      const int a = used[i], b = used[j];
      if (!overlaps(first[a], last[a], first[b], last[b])) continue;
      const TensorPlacement& pa = plan.tensors[a];
      const TensorPlacement& pb = plan.tensors[b];
      const size_t a0 = static_cast<size_t>(pa.offset), b0 = static_cast<size_t>(pb.offset);
      if (a0 + pa.size <= b0 || b0 + pb.size <= a0) continue;
      // The only legal sharing: y = op(x, ...) in place, x dying at that step.
      bool in_place = false;
      for (int k = 0; k < 2 && !in_place; ++k) {
        const int x = k ? b : a, y = k ? a : b;
        const int s = first[y];
        if (last[x] != s || produced_at[y] != s || g.tensors[x].kind != TensorKind::ACTIVATION) continue;
        const Node& n = g.nodes[order[s]];
        const bool reads_x = std::find(n.inputs.begin(), n.inputs.end(), x) != n.inputs.end();
        in_place = op_allows_in_place(n.op) && reads_x && n.outputs.size() == 1 &&
                   plan.tensors[x].offset == plan.tensors[y].offset &&
                   same_element_positions(g, n, x, y);
      }
      if (!in_place) {
        return bad("tensors '" + g.tensors[a].name + "' (steps " + std::to_string(first[a]) + ".." +
                   std::to_string(last[a]) + ", bytes " + std::to_string(a0) + ".." +
                   std::to_string(a0 + pa.size) + ") and '" + g.tensors[b].name + "' (steps " +
                   std::to_string(first[b]) + ".." + std::to_string(last[b]) + ", bytes " +
                   std::to_string(b0) + ".." + std::to_string(b0 + pb.size) +
                   ") are live together and overlap");
      }
    }
  }
  return Status::success();
}

}  // namespace ir
}  // namespace jet
