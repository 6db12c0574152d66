// A CPU interpreter for converter graphs (ir::Graph), for tests that check what a graph computes
// without the runtime: each node runs through the tests' one reference executor
// (tests/common/ir_reference.h); every activation lives at its planned offset of one arena that
// starts out as NaN (0xff bytes), so a graph or plan that lets tensors clobber each other shows up
// as wrong outputs.
//
//   std::vector<std::vector<float>> outputs;  // OUTPUT tensors in index order
//   jet::Status st = jet::test::interpret(g, {input0_values, ...}, &outputs);
//
// Inputs are given as logical row-major values for the INPUT tensors in index order; outputs come
// back the same way. f16 tensors are converted on the way in and out.
//
// Header-only (inline): tests/CMakeLists.txt builds each tests/converter/test_*.cpp as its own
// executable from that one source plus the jet_ir_reference library.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "common/ir_reference.h"
#include "ir.h"
#include "jet/dnn.h"
#include "plan_memory.h"

namespace jet {
namespace test {

inline std::vector<int64_t> strides_or_packed(const ir::Tensor& t) {
  return t.strides.empty() ? ir::packed_strides(t.dims) : t.strides;
}

// One element of dtype t at element offset `off`, as a float (integers: exact below 2^24, which
// is all the tests use; bool: 0 or 1, any other byte as read).
inline float load_element(DType t, const uint8_t* base, int64_t off) {
  switch (t) {
    case DType::F32: {
      float v;
      std::memcpy(&v, base + 4 * off, 4);
      return v;
    }
    case DType::F16: {
      uint16_t bits;
      std::memcpy(&bits, base + 2 * off, 2);
      return static_cast<float>(half::from_bits(bits));
    }
    case DType::I32: {
      int32_t v;
      std::memcpy(&v, base + 4 * off, 4);
      return static_cast<float>(v);
    }
    case DType::I64: {
      int64_t v;
      std::memcpy(&v, base + 8 * off, 8);
      return static_cast<float>(v);
    }
    case DType::BOOL: return base[off];
  }
  return NAN;
}

inline void store_element(DType t, uint8_t* base, int64_t off, float v) {
  switch (t) {
    case DType::F32: std::memcpy(base + 4 * off, &v, 4); return;
    case DType::F16: {
      const uint16_t bits = half(v).bits;
      std::memcpy(base + 2 * off, &bits, 2);
      return;
    }
    case DType::I32: {
      const int32_t i = static_cast<int32_t>(v);
      std::memcpy(base + 4 * off, &i, 4);
      return;
    }
    case DType::I64: {
      const int64_t i = static_cast<int64_t>(v);
      std::memcpy(base + 8 * off, &i, 8);
      return;
    }
    case DType::BOOL: base[off] = v != 0.f ? 1 : 0; return;
  }
}

// Logical (row-major over dims) values of a tensor stored at `base` with its strides and dtype.
inline std::vector<float> read_tensor(const ir::Tensor& t, const uint8_t* base) {
  const std::vector<int64_t> st = strides_or_packed(t);
  const size_t rank = t.dims.size();
  std::vector<float> out(static_cast<size_t>(t.elements()));
  std::vector<int64_t> idx(rank, 0);
  for (float& v : out) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) off += idx[d] * st[d];
    v = load_element(t.dtype, base, off);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < t.dims[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

inline void write_tensor(const ir::Tensor& t, const std::vector<float>& values, uint8_t* base) {
  const std::vector<int64_t> st = strides_or_packed(t);
  const size_t rank = t.dims.size();
  std::vector<int64_t> idx(rank, 0);
  for (float v : values) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) off += idx[d] * st[d];
    store_element(t.dtype, base, off, v);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < t.dims[d]) break;
      idx[d] = 0;
    }
  }
}

// Runs `g` on the CPU backend (check_graph, plan, validate_plan, then one kernel call per node).
// When `produced` is not null it gets, per tensor index, the logical values of each node's output
// read right after that node ran (before later nodes may reuse its arena bytes); tensors that no
// node produces stay empty.
inline Status interpret(const ir::Graph& g, const std::vector<std::vector<float>>& inputs,
                        std::vector<std::vector<float>>* outputs, std::vector<std::vector<float>>* produced) {
  std::vector<int> order;
  Status st = ir::check_graph(g, &order);
  if (!st.ok()) return st;
  const ir::MemoryPlan plan = ir::plan_memory(g, order, ir::Planner::GREEDY_BEST_FIT);
  st = ir::validate_plan(g, order, plan);
  if (!st.ok()) return st;
  const Handle h = Handle::cpu();
  std::vector<uint64_t> arena_words(plan.arena_bytes / 8 + 1);
  uint8_t* arena = reinterpret_cast<uint8_t*>(arena_words.data());
  std::memset(arena, 0xff, arena_words.size() * 8);  // NaN in f32 and f16: unwritten reads show
  std::vector<std::vector<uint64_t>> constant_words(g.tensors.size());
  std::vector<void*> ptr(g.tensors.size(), nullptr);
  size_t next_input = 0;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const ir::Tensor& tt = g.tensors[t];
    if (tt.kind == ir::TensorKind::CONSTANT) {
      constant_words[t].assign(tt.bytes() / 8 + 1, 0);
      ptr[t] = constant_words[t].data();
      const std::vector<float> values =
          dtype_is_float(tt.dtype) ? tt.data : std::vector<float>(tt.int_data.begin(), tt.int_data.end());
      if (values.size() != static_cast<size_t>(tt.elements())) {
        return Status(StatusCode::BAD_PARAM, "constant '" + tt.name + "' has no data");
      }
      write_tensor(tt, values, static_cast<uint8_t*>(ptr[t]));
    } else if (plan.tensors[t].in_arena) {
      ptr[t] = arena + plan.tensors[t].offset;
    }
    if (tt.kind == ir::TensorKind::INPUT) {
      if (next_input >= inputs.size() || inputs[next_input].size() != static_cast<size_t>(tt.elements())) {
        return Status(StatusCode::BAD_PARAM, "no values for input '" + tt.name + "'");
      }
      if (ptr[t]) write_tensor(tt, inputs[next_input], static_cast<uint8_t*>(ptr[t]));
      ++next_input;
    }
  }
  if (produced) produced->assign(g.tensors.size(), std::vector<float>());
  std::vector<std::vector<uint64_t>> scratch;  // workspaces, alive until the end
  const ScratchFn scratch_fn = [&](size_t bytes) -> void* {
    scratch.emplace_back(bytes / 8 + 1);
    return scratch.back().data();
  };
  for (int i : order) {
    const ir::Node& n = g.nodes[i];
    st = run_ir_node(h, g, n, ptr, scratch_fn);
    if (!st.ok()) return Status(st.code(), "node '" + n.name + "': " + st.message());
    if (produced) {
      (*produced)[n.outputs[0]] = read_tensor(g.tensors[n.outputs[0]], static_cast<const uint8_t*>(ptr[n.outputs[0]]));
    }
  }
  outputs->clear();
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (g.tensors[t].kind == ir::TensorKind::OUTPUT) {
      outputs->push_back(read_tensor(g.tensors[t], static_cast<const uint8_t*>(ptr[t])));
    }
  }
  return Status::success();
}

inline Status interpret(const ir::Graph& g, const std::vector<std::vector<float>>& inputs,
                        std::vector<std::vector<float>>* outputs) {
  return interpret(g, inputs, outputs, nullptr);
}

}  // namespace test
}  // namespace jet
