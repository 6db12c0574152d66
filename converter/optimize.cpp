#include "optimize.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jet/runtime.h"
#include "write_model.h"

namespace jet {

namespace {

Status bad(const std::string& what) { return Status(StatusCode::BAD_PARAM, what); }

std::string count_text(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Who reads each tensor: node indices, once per input slot (Mul(x, x) lists its node twice).
// Nodes marked in `dropped` (removed by the pass running) read nothing.
std::vector<std::vector<int>> readers_of(const ir::Graph& g, const std::vector<bool>& dropped) {
  std::vector<std::vector<int>> r(g.tensors.size());
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    if (dropped[i]) continue;
    for (int t : g.nodes[i].inputs) r[t].push_back(i);
  }
  return r;
}

std::vector<int> producers_of(const ir::Graph& g, const std::vector<bool>& dropped) {
  std::vector<int> p(g.tensors.size(), -1);
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    if (dropped[i]) continue;
    for (int t : g.nodes[i].outputs) p[t] = i;
  }
  return p;
}

using ir::NameSet;

// A value the passes may fuse away: an activation (not a graph output) read by exactly one input
// slot of one node. Returns that node, or -1.
int only_reader(const ir::Graph& g, const std::vector<std::vector<int>>& readers, int t) {
  if (g.tensors[t].kind != ir::TensorKind::ACTIVATION || readers[t].size() != 1) return -1;
  return readers[t][0];
}

bool is_f32_constant(const ir::Tensor& t) {
  return t.kind == ir::TensorKind::CONSTANT && t.dtype == DType::F32 &&
         static_cast<int64_t>(t.data.size()) == t.elements();
}

// Removes the nodes marked in `drop` and then every tensor no remaining node refers to, except
// graph inputs and outputs. Indices are renumbered; order is kept.
void compact(ir::Graph* g, const std::vector<bool>& drop) {
  std::vector<ir::Node> nodes;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    if (!drop[i]) nodes.push_back(std::move(g->nodes[i]));
  }
  std::vector<bool> keep(g->tensors.size(), false);
  for (size_t t = 0; t < g->tensors.size(); ++t) {
    const ir::TensorKind k = g->tensors[t].kind;
    keep[t] = k == ir::TensorKind::INPUT || k == ir::TensorKind::OUTPUT;
  }
  for (const ir::Node& n : nodes) {
    for (int t : n.inputs) keep[t] = true;
    for (int t : n.outputs) keep[t] = true;
  }
  std::vector<int> index(g->tensors.size(), -1);
  std::vector<ir::Tensor> tensors;
  for (size_t t = 0; t < g->tensors.size(); ++t) {
    if (!keep[t]) continue;
    index[t] = static_cast<int>(tensors.size());
    tensors.push_back(std::move(g->tensors[t]));
  }
  for (ir::Node& n : nodes) {
    for (int& t : n.inputs) t = index[t];
    for (int& t : n.outputs) t = index[t];
  }
  g->nodes = std::move(nodes);
  g->tensors = std::move(tensors);
}

Status finish(ir::Graph* g, const std::vector<bool>& drop, const char* pass) {
  compact(g, drop);
  std::vector<int> order;
  Status st = ir::check_graph(*g, &order);
  if (!st.ok()) return Status(StatusCode::INTERNAL_ERROR, std::string(pass) + " left an invalid graph: " + st.message());
  return Status::success();
}

// A SLICE reading all of a packed x (starts 0, steps 1, full sizes) whose permutation keeps the
// order of the dims larger than 1: the elements come out in x's own order.
bool is_relabelling(const ir::Graph& g, const ir::Node& n) {
  const ir::SliceAttrs& a = std::get<ir::SliceAttrs>(n.attrs);
  const ir::Tensor& x = g.tensors[n.inputs[0]];
  const ir::Tensor& y = g.tensors[n.outputs[0]];
  if (!x.is_packed() || !y.is_packed() || x.dtype != y.dtype) return false;
  const size_t rank = x.dims.size();
  if (a.starts.size() != rank || a.steps.size() != rank || a.sizes.size() != rank || a.perm.size() != rank) return false;
  for (size_t d = 0; d < rank; ++d) {
    if (a.starts[d] != 0 || a.steps[d] != 1 || a.sizes[d] != x.dims[d]) return false;
  }
  int64_t last = -1;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t from = a.perm[d];
    if (from < 0 || from >= static_cast<int64_t>(rank)) return false;
    if (x.dims[from] == 1) continue;
    if (from < last) return false;
    last = from;
  }
  return true;
}

// ---- constant folding --------------------------------------------------------------------------

// Runs node `n` (all inputs f32 constants) once on the CPU backend through the runtime and
// returns its output's values.
Status evaluate_node(const ir::Graph& g, const ir::Node& n, std::vector<float>* out) {
  ir::Graph m;
  std::vector<int> index(g.tensors.size(), -1);
  std::vector<const std::vector<float>*> values;  // by mini-graph tensor index
  ir::Node copy = n;
  for (int& t : copy.inputs) {
    if (index[t] < 0) {
      ir::Tensor in = g.tensors[t];
      in.kind = ir::TensorKind::INPUT;
      in.strides.clear();
      in.data.clear();
      index[t] = m.add_tensor(std::move(in));
      values.push_back(&g.tensors[t].data);
    }
    t = index[t];
  }
  ir::Tensor y = g.tensors[n.outputs[0]];
  y.kind = ir::TensorKind::OUTPUT;
  y.strides.clear();
  y.data.clear();
  copy.outputs = {m.add_tensor(std::move(y))};
  m.add_node(std::move(copy));

  WriteOptions wo;
  wo.producer_version = "fold_constants";
  wo.conv_preference = ConvPreference::NO_WORKSPACE;
  std::vector<uint8_t> file;
  Status st = write_model(m, wo, &file);
  if (!st.ok()) return st;
  LoadOptions lo;
  lo.backend = Backend::CPU;
  std::shared_ptr<Engine> engine;
  st = Engine::load(file.data(), file.size(), lo, &engine);
  if (!st.ok()) return st;
  std::unique_ptr<ExecutionContext> ctx;
  st = engine->create_context(&ctx);
  if (!st.ok()) return st;
  // The engine lists inputs and outputs in IR tensor index order, as the writer does.
  for (int i = 0; i < engine->num_inputs(); ++i) {
    const std::vector<float>& v = *values[engine->input(i)];
    std::memcpy(ctx->tensor_data(engine->input(i)), v.data(), v.size() * sizeof(float));
  }
  st = ctx->run();
  if (!st.ok()) return st;
  const ir::Tensor& ty = m.tensors[engine->output(0)];
  out->resize(static_cast<size_t>(ty.elements()));
  std::memcpy(out->data(), ctx->tensor_data(engine->output(0)), out->size() * sizeof(float));
  return Status::success();
}

// Folding beyond this many output elements would grow the model file for little gain.
const int64_t kMaxFoldedElements = int64_t(1) << 24;

// ---- batchnorm folding -------------------------------------------------------------------------

struct BatchNormScale {
  std::vector<double> scale, shift;  // bn(y) = scale * y + shift, per channel
};

bool batchnorm_scale(const ir::Graph& g, const ir::Node& bn, BatchNormScale* out) {
  for (size_t i = 1; i < 5; ++i) {
    if (!is_f32_constant(g.tensors[bn.inputs[i]])) return false;
  }
  const std::vector<float>& gamma = g.tensors[bn.inputs[1]].data;
  const std::vector<float>& beta = g.tensors[bn.inputs[2]].data;
  const std::vector<float>& mean = g.tensors[bn.inputs[3]].data;
  const std::vector<float>& var = g.tensors[bn.inputs[4]].data;
  const double eps = std::get<ir::BatchNormAttrs>(bn.attrs).epsilon;
  const size_t c = gamma.size();
  if (beta.size() != c || mean.size() != c || var.size() != c) return false;
  out->scale.resize(c);
  out->shift.resize(c);
  for (size_t k = 0; k < c; ++k) {
    out->scale[k] = gamma[k] / std::sqrt(static_cast<double>(var[k]) + eps);
    out->shift[k] = beta[k] - mean[k] * out->scale[k];
  }
  return true;
}

int add_constant(ir::Graph* g, NameSet* names, const std::string& base, std::vector<int64_t> dims,
                 std::vector<float> data) {
  ir::Tensor t;
  t.name = names->fresh(base);
  t.dtype = DType::F32;
  t.dims = std::move(dims);
  t.kind = ir::TensorKind::CONSTANT;
  t.data = std::move(data);
  return g->add_tensor(std::move(t));
}

// Conv weights (K, C/g, window...) and bias scaled per output channel k. *w / *bias get new
// constants (the old ones may be shared with other convs).
void fold_into_conv(ir::Graph* g, NameSet* names, ir::Node* conv, const BatchNormScale& bn) {
  ir::ConvAttrs& a = std::get<ir::ConvAttrs>(conv->attrs);
  const ir::Tensor& w = g->tensors[conv->inputs[1]];
  const int64_t k = w.dims[0];
  const int64_t per_k = w.elements() / k;
  std::vector<float> wd = w.data;
  for (int64_t o = 0; o < k; ++o) {
    for (int64_t i = 0; i < per_k; ++i) {
      wd[o * per_k + i] = static_cast<float>(wd[o * per_k + i] * bn.scale[o]);
    }
  }
  std::vector<float> bd(static_cast<size_t>(k));
  for (int64_t o = 0; o < k; ++o) {
    const double b = a.has_bias ? g->tensors[conv->inputs[2]].data[o] : 0.0;
    bd[o] = static_cast<float>(b * bn.scale[o] + bn.shift[o]);
  }
  // add_constant may move g->tensors: take what is needed of w first.
  const std::string wname = w.name;
  std::vector<int64_t> wdims = w.dims;
  std::vector<int64_t> bdims(w.dims.size(), 1);
  bdims[1] = k;
  const int nw = add_constant(g, names, wname + ".bnfold", std::move(wdims), std::move(wd));
  const int nb = add_constant(g, names, conv->name + ".bias.bnfold", bdims, std::move(bd));
  conv->inputs[1] = nw;
  if (a.has_bias) {
    conv->inputs[2] = nb;
  } else {
    conv->inputs.insert(conv->inputs.begin() + 2, nb);
    a.has_bias = true;
  }
}

// Gemm B (Kin x N, or N x Kin transposed) and bias scaled per output column. False when the bias
// is not per column (a full M x N bias).
bool fold_into_gemm(ir::Graph* g, NameSet* names, ir::Node* gemm, const BatchNormScale& bn) {
  ir::GemmAttrs& a = std::get<ir::GemmAttrs>(gemm->attrs);
  const ir::Tensor& b = g->tensors[gemm->inputs[1]];
  const int64_t n = a.trans_b ? b.dims[0] : b.dims[1];
  const int64_t kin = a.trans_b ? b.dims[1] : b.dims[0];
  if (static_cast<int64_t>(bn.scale.size()) != n) return false;
  if (a.has_bias) {
    const ir::Tensor& c = g->tensors[gemm->inputs[2]];
    if (c.elements() != n || c.dims.back() != n) return false;
  }
  std::vector<float> bd = b.data;
  for (int64_t i = 0; i < kin; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float& v = a.trans_b ? bd[j * kin + i] : bd[i * n + j];
      v = static_cast<float>(v * bn.scale[j]);
    }
  }
  std::vector<float> cd(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    const double c = a.has_bias ? g->tensors[gemm->inputs[2]].data[j] : 0.0;
    cd[j] = static_cast<float>(c * bn.scale[j] + bn.shift[j]);
  }
  std::vector<int64_t> bdims = b.dims;
  const int nb = add_constant(g, names, b.name + ".bnfold", std::move(bdims), std::move(bd));
  const int nc = add_constant(g, names, gemm->name + ".bias.bnfold", {n}, std::move(cd));
  gemm->inputs[1] = nb;
  if (a.has_bias) {
    gemm->inputs[2] = nc;
  } else {
    gemm->inputs.push_back(nc);
    a.has_bias = true;
  }
  return true;
}

// ---- epilogue fusion ---------------------------------------------------------------------------

// A constant of dims (1, K, 1, ...) (rank `rank`) or (K, 1, ...) (rank - 1): one value per
// output channel of a conv, as a broadcast Add of a bias reads it.
bool is_channel_constant(const ir::Tensor& t, size_t rank, int64_t k) {
  if (!is_f32_constant(t) || t.elements() != k) return false;
  if (t.dims.size() == rank) {
    for (size_t i = 0; i < rank; ++i) {
      if (t.dims[i] != (i == 1 ? k : 1)) return false;
    }
    return true;
  }
  return false;
}

}  // namespace

bool OptimizeOptions::disable(const std::string& name) {
  if (name == "fold_constants") {
    fold_constants = false;
  } else if (name == "fold_reshapes") {
    fold_reshapes = false;
  } else if (name == "fold_batchnorm") {
    fold_batchnorm = false;
  } else if (name == "fuse_epilogues") {
    fuse_epilogues = false;
  } else if (name == "fuse_layernorm") {
    fuse_layernorm = false;
  } else if (name == "eliminate_dead_nodes") {
    eliminate_dead_nodes = false;
  } else if (name == "fuse") {
    fold_batchnorm = false;
    fuse_epilogues = false;
    fuse_layernorm = false;
  } else {
    return false;
  }
  return true;
}

Status fold_constants(ir::Graph* g, OptimizeReport* report) {
  if (!g) return bad("fold_constants: graph is null");
  std::vector<int> order;
  Status st = ir::check_graph(*g, &order);
  if (!st.ok()) return st;
  std::vector<bool> drop(g->nodes.size(), false);
  int folded = 0;
  for (int i : order) {
    const ir::Node& n = g->nodes[i];
    if (n.outputs.size() != 1) continue;
    ir::Tensor& y = g->tensors[n.outputs[0]];
    if (y.kind != ir::TensorKind::ACTIVATION || y.dtype != DType::F32 || y.elements() > kMaxFoldedElements) continue;
    bool all_constant = !n.inputs.empty();
    for (int t : n.inputs) all_constant = all_constant && is_f32_constant(g->tensors[t]);
    if (!all_constant) continue;
    std::vector<float> values;
    st = evaluate_node(*g, n, &values);
    if (!st.ok()) return Status(st.code(), "fold_constants: node '" + n.name + "': " + st.message());
    y.kind = ir::TensorKind::CONSTANT;
    y.strides.clear();
    y.data = std::move(values);
    drop[i] = true;
    ++folded;
  }
  if (report) {
    report->constants_folded += folded;
    if (folded) report->notes.push_back("fold_constants: " + count_text(folded, "node", "nodes") + " evaluated into constants");
  }
  return finish(g, drop, "fold_constants");
}

Status fold_reshapes(ir::Graph* g, OptimizeReport* report) {
  if (!g) return bad("fold_reshapes: graph is null");
  std::vector<int> order;
  Status st = ir::check_graph(*g, &order);
  if (!st.ok()) return st;
  std::vector<bool> drop(g->nodes.size(), false);
  int folded = 0;
  int relabels = 0;
  for (int i : order) {
    ir::Node& n = g->nodes[i];
    if (n.op == ir::OpType::SLICE && is_relabelling(*g, n)) {
      // A whole-tensor transpose that only moves size-1 dims keeps the element order: a reshape.
      n.op = ir::OpType::RESHAPE;
      n.attrs = ir::ReshapeAttrs{g->tensors[n.outputs[0]].dims};
      ++relabels;
    }
    if (n.op != ir::OpType::RESHAPE) continue;
    // A reshape of a reshape reads the first one's input (the first may then be dead).
    std::vector<int> producer = producers_of(*g, drop);
    int x = n.inputs[0];
    const int p = producer[x];
    if (p >= 0 && !drop[p] && g->nodes[p].op == ir::OpType::RESHAPE) {
      n.inputs[0] = g->nodes[p].inputs[0];
      x = n.inputs[0];
      ++folded;
    }
    // A reshape to its input's dims is a copy: its readers read the input instead. When its
    // output is a graph output, the input's producer writes the output directly (if the input is
    // an activation nobody else reads); a graph input copied to an output stays.
    const int y = n.outputs[0];
    if (g->tensors[x].dims != g->tensors[y].dims) continue;
    std::vector<std::vector<int>> readers = readers_of(*g, drop);
    if (g->tensors[y].kind == ir::TensorKind::OUTPUT) {
      const int px = producers_of(*g, drop)[x];
      if (px < 0 || only_reader(*g, readers, x) != i) continue;
      g->nodes[px].outputs[0] = y;
    } else {
      for (ir::Node& r : g->nodes) {
        for (int& t : r.inputs) {
          if (t == y) t = x;
        }
      }
    }
    drop[i] = true;
    ++folded;
  }
  if (report) {
    report->reshapes_folded += folded + relabels;
    if (relabels) report->notes.push_back("fold_reshapes: " + count_text(relabels, "transpose", "transposes") + " of size-1 dims became reshapes");
    if (folded) report->notes.push_back("fold_reshapes: " + count_text(folded, "reshape", "reshapes") + " removed or shortened");
  }
  // Reshapes that lost their readers are left to eliminate_dead_nodes.
  return finish(g, drop, "fold_reshapes");
}

Status fold_batchnorm(ir::Graph* g, OptimizeReport* report) {
  if (!g) return bad("fold_batchnorm: graph is null");
  std::vector<int> order;
  Status st = ir::check_graph(*g, &order);
  if (!st.ok()) return st;
  NameSet names(*g);
  std::vector<bool> drop(g->nodes.size(), false);
  int into_conv = 0, into_gemm = 0;
  for (int i : order) {
    if (g->nodes[i].op != ir::OpType::BATCHNORM) continue;
    const std::vector<std::vector<int>> readers = readers_of(*g, drop);
    const std::vector<int> producer = producers_of(*g, drop);
    const ir::Node& bn = g->nodes[i];
    BatchNormScale s;
    if (!batchnorm_scale(*g, bn, &s)) continue;
    const int x = bn.inputs[0];
    const int p = producer[x];
    if (p < 0 || only_reader(*g, readers, x) != i) continue;
    ir::Node& prev = g->nodes[p];
    if (prev.op == ir::OpType::CONV) {
      // conv(x, w) + b, then the affine batchnorm: only when nothing follows the convolution yet.
      const ir::ConvAttrs& a = std::get<ir::ConvAttrs>(prev.attrs);
      if (a.has_residual || a.act.mode != ActivationMode::IDENTITY) continue;
      if (!is_f32_constant(g->tensors[prev.inputs[1]])) continue;
      if (a.has_bias && !is_f32_constant(g->tensors[prev.inputs[2]])) continue;
      if (g->tensors[prev.inputs[1]].dims[0] != static_cast<int64_t>(s.scale.size())) continue;
      const int y = bn.outputs[0];
      fold_into_conv(g, &names, &prev, s);
      prev.outputs[0] = y;
      drop[i] = true;
      ++into_conv;
    } else if (prev.op == ir::OpType::RESHAPE) {
      // The importer's 2D batchnorm: GEMM (M x N) -> RESHAPE (M x N x 1) -> BATCHNORM. The
      // reshape then writes the batchnorm's output itself.
      const int g_out = prev.inputs[0];
      const int pg = producer[g_out];
      if (pg < 0 || only_reader(*g, readers, g_out) != p || g->nodes[pg].op != ir::OpType::GEMM) continue;
      ir::Node& gemm = g->nodes[pg];
      const ir::GemmAttrs& ga = std::get<ir::GemmAttrs>(gemm.attrs);
      const ir::Tensor& tg = g->tensors[g_out];
      const ir::Tensor& tx = g->tensors[x];
      if (tg.dims.size() != 2 || tx.dims.size() != 3 || tx.dims[0] != tg.dims[0] || tx.dims[1] != tg.dims[1]) continue;
      if (g->tensors[gemm.inputs[1]].dims.size() != 2 || !is_f32_constant(g->tensors[gemm.inputs[1]])) continue;
      if (ga.has_bias && !is_f32_constant(g->tensors[gemm.inputs[2]])) continue;
      const int y = bn.outputs[0];
      if (!fold_into_gemm(g, &names, &g->nodes[pg], s)) continue;
      g->nodes[p].outputs[0] = y;
      drop[i] = true;
      ++into_gemm;
    }
  }
  const int folded = into_conv + into_gemm;
  if (report) {
    report->batchnorms_folded += folded;
    if (folded) {
      report->notes.push_back("fold_batchnorm: " + count_text(folded, "batchnorm", "batchnorms") + " folded into weights (" +
                              std::to_string(into_conv) + " conv, " + std::to_string(into_gemm) + " gemm)");
    }
  }
  return finish(g, drop, "fold_batchnorm");
}

Status fuse_epilogues(ir::Graph* g, OptimizeReport* report) {
  if (!g) return bad("fuse_epilogues: graph is null");
  std::vector<int> order;
  Status st = ir::check_graph(*g, &order);
  if (!st.ok()) return st;
  NameSet names(*g);
  std::vector<bool> drop(g->nodes.size(), false);
  int swish = 0, biases = 0, residuals = 0, acts = 0;

  // Mul(x, Sigmoid(x)) -> swish(x): the Mul node becomes the activation, the sigmoid goes.
  for (int i : order) {
    const ir::Node& s = g->nodes[i];
    if (s.op != ir::OpType::ACTIVATION || std::get<ir::ActivationAttrs>(s.attrs).act.mode != ActivationMode::SIGMOID) continue;
    const std::vector<std::vector<int>> readers = readers_of(*g, drop);
    const int x = s.inputs[0], t = s.outputs[0];
    const int m = only_reader(*g, readers, t);
    if (m < 0 || drop[m]) continue;
    ir::Node& mul = g->nodes[m];
    if (mul.op != ir::OpType::OP_TENSOR || std::get<ir::OpTensorAttrs>(mul.attrs).op != TensorOp::MUL) continue;
    const int other = mul.inputs[0] == t ? mul.inputs[1] : mul.inputs[0];
    if (other != x || g->tensors[x].dims != g->tensors[mul.outputs[0]].dims) continue;
    mul.op = ir::OpType::ACTIVATION;
    mul.attrs = ir::ActivationAttrs{ActivationDesc::silu()};
    mul.inputs = {x};
    drop[i] = true;
    ++swish;
  }

  // Conv epilogues, in the order conv_bias_act_forward applies them: y = act(conv + z + bias).
  // Each conv absorbs its single reader while that reader is a bias add, a residual add or an
  // activation the epilogue can still take.
  for (int i : order) {
    if (drop[i] || g->nodes[i].op != ir::OpType::CONV) continue;
    while (true) {
      ir::Node& conv = g->nodes[i];
      ir::ConvAttrs& a = std::get<ir::ConvAttrs>(conv.attrs);
      if (a.act.mode != ActivationMode::IDENTITY) break;
      const std::vector<std::vector<int>> readers = readers_of(*g, drop);
      const int t = conv.outputs[0];
      const int r = only_reader(*g, readers, t);
      if (r < 0 || drop[r]) break;
      ir::Node& next = g->nodes[r];
      const ir::Tensor& ty = g->tensors[t];
      if (next.op == ir::OpType::ACTIVATION) {
        a.act = std::get<ir::ActivationAttrs>(next.attrs).act;
        ++acts;
      } else if (next.op == ir::OpType::OP_TENSOR && std::get<ir::OpTensorAttrs>(next.attrs).op == TensorOp::ADD) {
        const int other = next.inputs[0] == t ? next.inputs[1] : next.inputs[0];
        if (other == t || g->tensors[next.outputs[0]].dims != ty.dims) break;
        const ir::Tensor& to = g->tensors[other];
        const int64_t k = ty.dims[1];
        if (is_channel_constant(to, ty.dims.size(), k) && (!a.has_bias || is_f32_constant(g->tensors[conv.inputs[2]]))) {
          std::vector<float> bias(static_cast<size_t>(k));
          for (int64_t c = 0; c < k; ++c) {
            bias[c] = to.data[c] + (a.has_bias ? g->tensors[conv.inputs[2]].data[c] : 0.f);
          }
          std::vector<int64_t> bdims(ty.dims.size(), 1);
          bdims[1] = k;
          const int nb = add_constant(g, &names, conv.name + ".bias", bdims, std::move(bias));
          if (a.has_bias) {
            conv.inputs[2] = nb;
          } else {
            conv.inputs.insert(conv.inputs.begin() + 2, nb);
            a.has_bias = true;
          }
          ++biases;
        } else if (!a.has_residual && to.dims == ty.dims && to.dtype == ty.dtype) {
          conv.inputs.push_back(other);
          a.has_residual = true;
          ++residuals;
        } else {
          break;
        }
      } else {
        break;
      }
      g->nodes[i].outputs[0] = g->nodes[r].outputs[0];
      drop[r] = true;
    }
  }
  if (report) {
    report->swish_fused += swish;
    report->biases_fused += biases;
    report->residuals_fused += residuals;
    report->activations_fused += acts;
    if (swish) report->notes.push_back("fuse_epilogues: " + std::to_string(swish) + " Mul(x, Sigmoid(x)) became swish");
    if (biases + residuals + acts) {
      report->notes.push_back("fuse_epilogues: into convolutions: " + count_text(biases, "bias add", "bias adds") + ", " +
                              count_text(residuals, "residual add", "residual adds") + ", " +
                              count_text(acts, "activation", "activations"));
    }
  }
  return finish(g, drop, "fuse_epilogues");
}

namespace {

bool is_node(const ir::Graph& g, int i, ir::OpType op) { return i >= 0 && g.nodes[i].op == op; }
bool is_tensor_op(const ir::Graph& g, int i, TensorOp op) {
  return is_node(g, i, ir::OpType::OP_TENSOR) && std::get<ir::OpTensorAttrs>(g.nodes[i].attrs).op == op;
}
// A mean over some dims: REDUCE MEAN, or GLOBAL_POOL AVG (the importer's form of a mean over
// exactly the spatial dims; there is no padding, so both averages agree).
bool is_mean(const ir::Graph& g, int i) {
  if (is_node(g, i, ir::OpType::REDUCE)) return std::get<ir::ReduceAttrs>(g.nodes[i].attrs).op == ReduceOp::MEAN;
  if (!is_node(g, i, ir::OpType::GLOBAL_POOL)) return false;
  const PoolMode m = std::get<ir::GlobalPoolAttrs>(g.nodes[i].attrs).mode;
  return m == PoolMode::AVG_INCLUDE_PAD || m == PoolMode::AVG_EXCLUDE_PAD;
}
// The other input of binary node i than t, or -1 when both are t.
int other_input(const ir::Node& n, int t) {
  if (n.inputs[0] == t && n.inputs[1] != t) return n.inputs[1];
  if (n.inputs[1] == t && n.inputs[0] != t) return n.inputs[0];
  return -1;
}
// The first dim a REDUCE from x to m reduces, when the reduced dims are exactly x's dims from it
// on (dims of size 1 anywhere count as either); -1 otherwise.
int reduced_suffix(const std::vector<int64_t>& x, const std::vector<int64_t>& m) {
  if (x.size() != m.size()) return -1;
  int axis = static_cast<int>(x.size());
  while (axis > 0 && (m[axis - 1] == 1 || x[axis - 1] == 1)) --axis;
  for (int d = 0; d < axis; ++d) {
    if (m[d] != x[d]) return -1;
  }
  for (size_t d = axis; d < x.size(); ++d) {
    if (m[d] != 1) return -1;
  }
  return axis < static_cast<int>(x.size()) ? axis : -1;
}
// A constant that broadcasts to dims `out` varying only in the dims from `axis` on, as the
// normalized group's inner values (row-major); false otherwise.
bool group_values(const ir::Tensor& c, const std::vector<int64_t>& out, int axis, std::vector<float>* v) {
  if (!is_f32_constant(c) || c.dims.size() > out.size()) return false;
  const size_t pad = out.size() - c.dims.size();
  for (size_t d = 0; d < out.size(); ++d) {
    const int64_t cd = d < pad ? 1 : c.dims[d - pad];
    if (cd != 1 && (cd != out[d] || static_cast<int>(d) < axis)) return false;
  }
  int64_t inner = 1;
  for (size_t d = axis; d < out.size(); ++d) inner *= out[d];
  v->assign(static_cast<size_t>(inner), 0.f);
  std::vector<int64_t> idx(out.size(), 0);
  for (int64_t i = 0; i < inner; ++i) {
    int64_t rest = i, flat = 0;
    for (size_t d = out.size(); d-- > static_cast<size_t>(axis);) {
      idx[d] = rest % out[d];
      rest /= out[d];
    }
    for (size_t d = pad; d < out.size(); ++d) {
      const int64_t cd = c.dims[d - pad];
      flat = flat * cd + (cd == 1 ? 0 : idx[d]);
    }
    (*v)[static_cast<size_t>(i)] = c.data[static_cast<size_t>(flat)];
  }
  return true;
}

}  // namespace

Status fuse_layernorm(ir::Graph* g, OptimizeReport* report) {
  if (!g) return bad("fuse_layernorm: graph is null");
  std::vector<int> order;
  Status st = ir::check_graph(*g, &order);
  if (!st.ok()) return st;
  NameSet names(*g);
  std::vector<bool> drop(g->nodes.size(), false);
  int fused = 0;
  for (int r1 : order) {
    if (drop[r1] || !is_mean(*g, r1)) continue;
    const std::vector<std::vector<int>> readers = readers_of(*g, drop);
    const int x = g->nodes[r1].inputs[0], m = g->nodes[r1].outputs[0];
    const std::vector<int64_t>& xd = g->tensors[x].dims;
    const int axis = reduced_suffix(xd, g->tensors[m].dims);
    if (axis < 0) continue;
    // d = x - mean, read by the square and by the division.
    const int sub = only_reader(*g, readers, m);
    if (!is_tensor_op(*g, sub, TensorOp::SUB) || g->nodes[sub].inputs[0] != x || g->nodes[sub].inputs[1] != m) continue;
    const int d = g->nodes[sub].outputs[0];
    if (g->tensors[d].kind != ir::TensorKind::ACTIVATION || g->tensors[d].dims != xd || readers[d].size() != 3) continue;
    int sq = -1, div = -1;
    for (int r : readers[d]) {
      if (is_tensor_op(*g, r, TensorOp::MUL) && g->nodes[r].inputs[0] == d && g->nodes[r].inputs[1] == d) sq = r;
      if (is_tensor_op(*g, r, TensorOp::DIV) && g->nodes[r].inputs[0] == d) div = r;
    }
    if (sq < 0 || div < 0) continue;
    const int r2 = only_reader(*g, readers, g->nodes[sq].outputs[0]);
    if (!is_mean(*g, r2) || g->tensors[g->nodes[r2].outputs[0]].dims != g->tensors[m].dims) continue;
    const int v = g->nodes[r2].outputs[0];
    const int add = only_reader(*g, readers, v);
    if (!is_tensor_op(*g, add, TensorOp::ADD)) continue;
    const int eps_t = other_input(g->nodes[add], v);
    if (eps_t < 0 || !is_f32_constant(g->tensors[eps_t]) || g->tensors[eps_t].elements() != 1) continue;
    const double eps = g->tensors[eps_t].data[0];
    if (!(eps > 0) || !std::isfinite(eps)) continue;
    const int sqrt_n = only_reader(*g, readers, g->nodes[add].outputs[0]);
    if (!is_node(*g, sqrt_n, ir::OpType::ACTIVATION) ||
        std::get<ir::ActivationAttrs>(g->nodes[sqrt_n].attrs).act.mode != ActivationMode::SQRT)
      continue;
    if (only_reader(*g, readers, g->nodes[sqrt_n].outputs[0]) != div || g->nodes[div].inputs[1] != g->nodes[sqrt_n].outputs[0])
      continue;
    // Optional scale (Mul) and bias (Add) by constants that vary only over the normalized dims.
    int last = div;
    std::vector<float> scale, bias;
    const int mul = only_reader(*g, readers, g->nodes[div].outputs[0]);
    if (is_tensor_op(*g, mul, TensorOp::MUL) && g->tensors[g->nodes[mul].outputs[0]].dims == xd) {
      const int c = other_input(g->nodes[mul], g->nodes[div].outputs[0]);
      if (c >= 0 && group_values(g->tensors[c], xd, axis, &scale)) last = mul;
    }
    const int badd = only_reader(*g, readers, g->nodes[last].outputs[0]);
    if (is_tensor_op(*g, badd, TensorOp::ADD) && g->tensors[g->nodes[badd].outputs[0]].dims == xd) {
      const int c = other_input(g->nodes[badd], g->nodes[last].outputs[0]);
      if (c >= 0 && group_values(g->tensors[c], xd, axis, &bias)) last = badd;
    }
    ir::Node& ln = g->nodes[last];
    const std::string base = g->nodes[r1].name;
    ln.op = ir::OpType::LAYERNORM;
    fb::LayerNormParamsT attrs;
    attrs.axis = axis;
    attrs.epsilon = eps;
    attrs.has_scale = !scale.empty();
    attrs.has_bias = !bias.empty();
    ln.attrs = attrs;
    ln.inputs = {x};
    const int64_t inner = static_cast<int64_t>(std::max(scale.size(), bias.size()));
    if (!scale.empty()) ln.inputs.push_back(add_constant(g, &names, base + ".scale", {inner}, std::move(scale)));
    if (!bias.empty()) ln.inputs.push_back(add_constant(g, &names, base + ".bias", {inner}, std::move(bias)));
    for (int n : {r1, sub, sq, r2, add, sqrt_n, div, mul}) {
      if (n >= 0 && n != last && (n != mul || last != div)) drop[n] = true;
    }
    ++fused;
  }
  if (report) {
    report->layernorms_fused += fused;
    if (fused) report->notes.push_back("fuse_layernorm: " + count_text(fused, "decomposed layer normalization", "decomposed layer normalizations") + " became LAYERNORM");
  }
  return finish(g, drop, "fuse_layernorm");
}

Status eliminate_dead_nodes(ir::Graph* g, OptimizeReport* report) {
  if (!g) return bad("eliminate_dead_nodes: graph is null");
  std::vector<int> order;
  Status st = ir::check_graph(*g, &order);
  if (!st.ok()) return st;
  // In reverse execution order, so a chain that only fed a dead node dies in one sweep.
  std::vector<int> reads(g->tensors.size(), 0);
  for (const ir::Node& n : g->nodes) {
    for (int t : n.inputs) ++reads[t];
  }
  std::vector<bool> drop(g->nodes.size(), false);
  int removed = 0;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const ir::Node& n = g->nodes[*it];
    bool needed = false;
    for (int t : n.outputs) needed = needed || reads[t] > 0 || g->tensors[t].kind == ir::TensorKind::OUTPUT;
    if (needed) continue;
    drop[*it] = true;
    for (int t : n.inputs) --reads[t];
    ++removed;
  }
  if (report) {
    report->dead_removed += removed;
    if (removed) report->notes.push_back("eliminate_dead_nodes: " + count_text(removed, "node", "nodes") + " nothing read removed");
  }
  return finish(g, drop, "eliminate_dead_nodes");
}

Status optimize_graph(ir::Graph* g, const OptimizeOptions& options, OptimizeReport* report) {
  if (!g) return bad("optimize_graph: graph is null");
  OptimizeReport local;
  OptimizeReport* r = report ? report : &local;
  r->nodes_in = static_cast<int>(g->nodes.size());
  // Each pass can expose work for another (a folded batchnorm leaves a conv whose activation can
  // now fuse; a folded reshape leaves a dead one); a few rounds reach the fixed point.
  for (int round = 0; round < 4; ++round) {
    const size_t before = g->nodes.size();
    Status st;
    if (options.fold_constants && (st = fold_constants(g, r), !st.ok())) return st;
    if (options.fold_reshapes && (st = fold_reshapes(g, r), !st.ok())) return st;
    if (options.fold_batchnorm && (st = fold_batchnorm(g, r), !st.ok())) return st;
    if (options.fuse_epilogues && (st = fuse_epilogues(g, r), !st.ok())) return st;
    if (options.fuse_layernorm && (st = fuse_layernorm(g, r), !st.ok())) return st;
    if (options.eliminate_dead_nodes && (st = eliminate_dead_nodes(g, r), !st.ok())) return st;
    if (g->nodes.size() == before) break;
  }
  r->nodes_out = static_cast<int>(g->nodes.size());
  return Status::success();
}

}  // namespace jet
