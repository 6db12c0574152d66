#include "passes.h"

#include <string>
#include <utility>
#include <vector>

namespace jet {

namespace {

Status bad(const std::string& what) { return Status(StatusCode::BAD_PARAM, what); }

using ir::NameSet;

// Appends `node_name`: TRANSFORM x -> a new activation (x's dims, dtype `to`, `strides`) named
// `tensor_name`. Returns the new tensor's index.
int add_transform(ir::Graph* g, int x, const std::string& tensor_name, const std::string& node_name,
                  DType to, std::vector<int64_t> strides) {
  ir::Tensor t;
  t.name = tensor_name;
  t.dtype = to;
  t.dims = g->tensors[x].dims;
  t.kind = ir::TensorKind::ACTIVATION;
  t.strides = std::move(strides);
  const int y = g->add_tensor(std::move(t));
  g->add_node(ir::Node{node_name, ir::OpType::TRANSFORM, {x}, {y}, ir::TransformAttrs{to}});
  return y;
}

std::vector<int> producers(const ir::Graph& g) {
  std::vector<int> p(g.tensors.size(), -1);
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    for (int t : g.nodes[i].outputs) p[t] = i;
  }
  return p;
}

// --- layouts ------------------------------------------------------------------------------------

enum class Layout {
  ANY,            // TRANSFORM: reads and writes any strides (it is the layout change)
  CHANNELS_LAST,  // accepts any strides; the pass gives it channels-last
  PACKED,         // needs packed row-major
};

// The layout column of schema/op_list.h.
enum class LayoutTrait { STRIDED, STRIDED_X, PACKED, ANY, SPECIAL };
#define JET_PASSES_OP_LAYOUT(ENUM, fn, Attrs, Params, name, in_place, layout, f32_params, dtypes, backward, inputs) LayoutTrait::layout,
constexpr LayoutTrait kLayoutTrait[] = {JET_OPS(JET_PASSES_OP_LAYOUT)};
#undef JET_PASSES_OP_LAYOUT
#define JET_PASSES_OP_F32(ENUM, fn, Attrs, Params, name, in_place, layout, f32_params, dtypes, backward, inputs) f32_params,
constexpr bool kF32Params[] = {JET_OPS(JET_PASSES_OP_F32)};
#undef JET_PASSES_OP_F32
static_assert(sizeof(kLayoutTrait) / sizeof(kLayoutTrait[0]) == static_cast<size_t>(ir::OpType::COUNT),
              "one layout per op type");
// SPECIAL ops are the ones reads() below names.
static_assert(kLayoutTrait[static_cast<size_t>(ir::OpType::CONV)] == LayoutTrait::SPECIAL &&
                  kLayoutTrait[static_cast<size_t>(ir::OpType::SOFTMAX)] == LayoutTrait::SPECIAL,
              "passes.cpp reads() decides Conv and Softmax");
constexpr int count_special() {
  int n = 0;
  for (LayoutTrait t : kLayoutTrait) n += t == LayoutTrait::SPECIAL ? 1 : 0;
  return n;
}
static_assert(count_special() == 2, "an op whose layout column is SPECIAL needs its case in passes.cpp reads()");

LayoutTrait layout_trait(ir::OpType op) {
  return static_cast<size_t>(op) < static_cast<size_t>(ir::OpType::COUNT) ? kLayoutTrait[static_cast<size_t>(op)]
                                                                          : LayoutTrait::STRIDED;
}

// What `n` needs of its input at position `pos`.
Layout reads(const ir::Node& n, size_t pos) {
  switch (layout_trait(n.op)) {
    case LayoutTrait::STRIDED: return Layout::CHANNELS_LAST;
    case LayoutTrait::STRIDED_X: return pos == 0 ? Layout::CHANNELS_LAST : Layout::PACKED;
    case LayoutTrait::PACKED: return Layout::PACKED;
    case LayoutTrait::ANY: return Layout::ANY;
    case LayoutTrait::SPECIAL: break;
  }
  if (n.op == ir::OpType::SOFTMAX) {
    // Axis 1 is the kernel's CHANNEL mode on the tensor itself; other axes are run on a packed
    // 3D view (outer, axis, inner) of it.
    const ir::SoftmaxAttrs* a = std::get_if<ir::SoftmaxAttrs>(&n.attrs);
    return a && a->axis == 1 ? Layout::CHANNELS_LAST : Layout::PACKED;
  }
  // CONV: x and the residual z follow the activations; the filter (FilterDesc, KCRS) and the bias
  // are packed.
  const ir::ConvAttrs* a = std::get_if<ir::ConvAttrs>(&n.attrs);
  if (pos == 0) return Layout::CHANNELS_LAST;
  if (a && a->has_residual && pos + 1 == n.inputs.size()) return Layout::CHANNELS_LAST;
  return Layout::PACKED;
}

// What `n` writes: channels-last unless its kernel needs packed, or it writes any strides (ANY:
// packed when only packed readers read it). Softmax's y has x's layout (it may run in place).
Layout writes(const ir::Node& n) {
  switch (layout_trait(n.op)) {
    case LayoutTrait::STRIDED:
    case LayoutTrait::STRIDED_X: return Layout::CHANNELS_LAST;
    case LayoutTrait::PACKED: return Layout::PACKED;
    case LayoutTrait::ANY: return Layout::ANY;
    case LayoutTrait::SPECIAL: break;
  }
  return n.op == ir::OpType::SOFTMAX ? reads(n, 0) : Layout::CHANNELS_LAST;
}

// Inputs that stay F32 whatever the precision: the f32_params column of schema/op_list.h
// (BatchNorm's and InstanceNorm's per-channel parameters: their kernels read float pointers for
// f16 x too).
bool is_f32_param(const ir::Node& n, size_t pos) {
  return pos > 0 && static_cast<size_t>(n.op) < static_cast<size_t>(ir::OpType::COUNT) &&
         kF32Params[static_cast<size_t>(n.op)];
}

// Rank 4/5 non-constant tensors where channels-last differs from packed: the ones the pass decides.
bool layout_matters(const ir::Tensor& t) {
  if (t.kind == ir::TensorKind::CONSTANT || t.dims.size() < 4 || t.dims.size() > 5) return false;
  ir::Tensor cl = t;
  cl.strides = ir::channels_last_strides(t.dims);
  return !cl.is_packed();
}

}  // namespace

Status convert_precision(ir::Graph* g, DType to, bool convert_io) {
  if (!g) return bad("convert_precision: graph is null");
  if (to != DType::F32 && to != DType::F16) {
    return bad("convert_precision: unsupported target dtype " + std::to_string(static_cast<int>(to)));
  }
  std::vector<int> order;
  Status st = ir::check_graph(*g, &order);
  if (!st.ok()) return Status(st.code(), "convert_precision: " + st.message());
  NameSet names(*g);
  const std::string suffix = dtype_name(to);
  const int nt = static_cast<int>(g->tensors.size());
  const int nn = static_cast<int>(g->nodes.size());

  // BatchNorm and InstanceNorm parameters stay F32 (their kernels take float pointers for any x).
  std::vector<char> bn_param(nt, 0), other_use(nt, 0);
  for (int i = 0; i < nn; ++i) {
    const ir::Node& n = g->nodes[i];
    for (size_t pos = 0; pos < n.inputs.size(); ++pos) {
      const int t = n.inputs[pos];
      if (is_f32_param(n, pos)) {
        if (g->tensors[t].kind != ir::TensorKind::CONSTANT) {
          return Status(StatusCode::NOT_SUPPORTED, "convert_precision: " + std::string(ir::op_type_name(n.op)) + " '" + n.name +
                                                       "' parameter '" + g->tensors[t].name +
                                                       "' is not a constant");
        }
        bn_param[t] = 1;
      } else {
        other_use[t] = 1;
      }
    }
  }
  // A constant that is both a BatchNorm parameter and something else gets a copy for the rest.
  for (int t = 0; t < nt; ++t) {
    if (!bn_param[t] || !other_use[t]) continue;
    ir::Tensor copy = g->tensors[t];
    copy.name = names.fresh(copy.name + "." + suffix);
    const int c = g->add_tensor(std::move(copy));
    for (ir::Node& n : g->nodes) {
      for (size_t pos = 0; pos < n.inputs.size(); ++pos) {
        if (n.inputs[pos] == t && !is_f32_param(n, pos)) n.inputs[pos] = c;
      }
    }
  }
  for (int t = 0; t < static_cast<int>(g->tensors.size()); ++t) {
    ir::Tensor& tt = g->tensors[t];
    if (tt.kind != ir::TensorKind::ACTIVATION && tt.kind != ir::TensorKind::CONSTANT) continue;
    if (!dtype_is_float(tt.dtype)) continue;  // integer and bool tensors keep their type
    tt.dtype = (t < nt && bn_param[t]) ? DType::F32 : to;
  }
  // The caller asked for the graph's interface in `to` too: no boundary transforms then.
  if (convert_io) {
    for (ir::Tensor& tt : g->tensors) {
      if ((tt.kind == ir::TensorKind::INPUT || tt.kind == ir::TensorKind::OUTPUT) && dtype_is_float(tt.dtype)) tt.dtype = to;
    }
  }

  // Graph inputs: one transform per input whose dtype differs, read by every non-transform reader.
  for (int t = 0; t < nt; ++t) {
    if (g->tensors[t].kind != ir::TensorKind::INPUT || g->tensors[t].dtype == to || !dtype_is_float(g->tensors[t].dtype)) {
      continue;
    }
    std::vector<std::pair<int, size_t>> readers;
    for (int i = 0; i < nn; ++i) {
      const ir::Node& n = g->nodes[i];
      if (n.op == ir::OpType::TRANSFORM) continue;
      for (size_t pos = 0; pos < n.inputs.size(); ++pos) {
        if (n.inputs[pos] == t) readers.push_back({i, pos});
      }
    }
    if (readers.empty()) continue;
    const std::string name = names.fresh(g->tensors[t].name + "." + suffix);
    const int y = add_transform(g, t, name, name, to, {});
    for (const auto& r : readers) g->nodes[r.first].inputs[r.second] = y;
  }

  // Graph outputs: the producer writes a `to` activation, a transform makes the output from it.
  const std::vector<int> producer = producers(*g);
  for (int t = 0; t < nt; ++t) {
    const ir::Tensor& out = g->tensors[t];
    if (out.kind != ir::TensorKind::OUTPUT || out.dtype == to || !dtype_is_float(out.dtype)) continue;
    const int p = producer[t];
    if (p < 0 || g->nodes[p].op == ir::OpType::TRANSFORM) continue;
    ir::Tensor inner;
    inner.name = names.fresh(out.name + "." + suffix);
    inner.dtype = to;
    inner.dims = out.dims;
    inner.strides = out.strides;
    inner.kind = ir::TensorKind::ACTIVATION;
    const DType out_dtype = out.dtype;
    const std::string node_name = names.fresh(out.name + "." + dtype_name(out_dtype));
    const int y = g->add_tensor(std::move(inner));
    for (int& o : g->nodes[p].outputs) {
      if (o == t) o = y;
    }
    // Other readers of the output read the `to` copy (same values, their dtype).
    for (ir::Node& n : g->nodes) {
      if (n.op == ir::OpType::TRANSFORM) continue;
      for (int& in : n.inputs) {
        if (in == t) in = y;
      }
    }
    g->add_node(ir::Node{node_name, ir::OpType::TRANSFORM, {y}, {t}, ir::TransformAttrs{out_dtype}});
  }

  // Transforms convert to whatever their output now is.
  for (ir::Node& n : g->nodes) {
    if (n.op == ir::OpType::TRANSFORM) n.attrs = ir::TransformAttrs{g->tensors[n.outputs[0]].dtype};
  }
  st = ir::check_graph(*g, &order);
  if (!st.ok()) return Status(StatusCode::INTERNAL_ERROR, "convert_precision left an invalid graph: " + st.message());
  return Status::success();
}

Status set_channels_last(ir::Graph* g) {
  if (!g) return bad("set_channels_last: graph is null");
  std::vector<int> order;
  Status st = ir::check_graph(*g, &order);
  if (!st.ok()) return Status(st.code(), "set_channels_last: " + st.message());
  for (const ir::Tensor& t : g->tensors) {
    const bool interface = t.kind == ir::TensorKind::INPUT || t.kind == ir::TensorKind::OUTPUT ||
                           t.kind == ir::TensorKind::CONSTANT;
    if (interface && !t.is_packed()) {
      return bad("set_channels_last: " + std::string(ir::tensor_kind_name(t.kind)) + " tensor '" +
                 t.name + "' is not packed (graph inputs, outputs and constants must be)");
    }
  }
  NameSet names(*g);
  const int nt = static_cast<int>(g->tensors.size());
  const std::vector<int> producer = producers(*g);
  std::vector<std::vector<std::pair<int, size_t>>> readers(nt);
  for (int i = 0; i < static_cast<int>(g->nodes.size()); ++i) {
    const ir::Node& n = g->nodes[i];
    for (size_t pos = 0; pos < n.inputs.size(); ++pos) readers[n.inputs[pos]].push_back({i, pos});
  }

  // 1. Each activation gets the layout its producer writes; a transform's output is channels-last
  //    unless only packed readers read it.
  for (int t = 0; t < nt; ++t) {
    ir::Tensor& tt = g->tensors[t];
    if (tt.kind != ir::TensorKind::ACTIVATION || !layout_matters(tt) || producer[t] < 0) continue;
    Layout w = writes(g->nodes[producer[t]]);
    if (w == Layout::ANY) {
      bool want_cl = false, want_packed = false;
      for (const auto& r : readers[t]) {
        const Layout need = reads(g->nodes[r.first], r.second);
        want_cl = want_cl || need == Layout::CHANNELS_LAST;
        want_packed = want_packed || need == Layout::PACKED;
      }
      w = want_packed && !want_cl ? Layout::PACKED : Layout::CHANNELS_LAST;
    }
    if (w == Layout::CHANNELS_LAST) {
      tt.strides = ir::channels_last_strides(tt.dims);
    } else {
      tt.strides.clear();
    }
  }

  // 2. A graph output written by a channels-last op: the op writes a channels-last activation,
  //    which its channels-last readers read too, and a transform packs it into the output.
  for (int t = 0; t < nt; ++t) {
    const ir::Tensor& out = g->tensors[t];
    if (out.kind != ir::TensorKind::OUTPUT || !layout_matters(out) || producer[t] < 0) continue;
    const int p = producer[t];
    if (writes(g->nodes[p]) != Layout::CHANNELS_LAST) continue;
    ir::Tensor inner;
    inner.name = names.fresh(out.name + ".nhwc");
    inner.dtype = out.dtype;
    inner.dims = out.dims;
    inner.strides = ir::channels_last_strides(out.dims);
    inner.kind = ir::TensorKind::ACTIVATION;
    const DType dtype = out.dtype;
    const std::string node_name = names.fresh(out.name + ".to_packed");
    const int y = g->add_tensor(std::move(inner));
    for (int& o : g->nodes[p].outputs) {
      if (o == t) o = y;
    }
    for (const auto& r : readers[t]) {
      ir::Node& n = g->nodes[r.first];
      if (reads(n, r.second) == Layout::CHANNELS_LAST) n.inputs[r.second] = y;
    }
    g->add_node(ir::Node{node_name, ir::OpType::TRANSFORM, {y}, {t}, ir::TransformAttrs{dtype}});
  }

  // 3. Every remaining mismatch between a tensor's layout and a reader's need gets a transform,
  //    one per tensor and direction, shared by the readers that need it.
  std::vector<int> cl_copy(nt, -1), packed_copy(nt, -1);
  const int nn = static_cast<int>(g->nodes.size());
  for (int i = 0; i < nn; ++i) {
    for (size_t pos = 0; pos < g->nodes[i].inputs.size(); ++pos) {
      const int t = g->nodes[i].inputs[pos];
      if (t >= nt || !layout_matters(g->tensors[t])) continue;  // inserted tensors match their readers
      const Layout need = reads(g->nodes[i], pos);
      const bool packed = g->tensors[t].is_packed();
      if (need == Layout::CHANNELS_LAST && packed) {
        if (cl_copy[t] < 0) {
          const std::string name = names.fresh(g->tensors[t].name + ".nhwc");
          cl_copy[t] = add_transform(g, t, name, name, g->tensors[t].dtype,
                                     ir::channels_last_strides(g->tensors[t].dims));
        }
        g->nodes[i].inputs[pos] = cl_copy[t];
      } else if (need == Layout::PACKED && !packed) {
        if (packed_copy[t] < 0) {
          const std::string name = names.fresh(g->tensors[t].name + ".packed");
          packed_copy[t] = add_transform(g, t, name, name, g->tensors[t].dtype, {});
        }
        g->nodes[i].inputs[pos] = packed_copy[t];
      }
    }
  }
  st = ir::check_graph(*g, &order);
  if (!st.ok()) return Status(StatusCode::INTERNAL_ERROR, "set_channels_last left an invalid graph: " + st.message());
  return Status::success();
}

}  // namespace jet
