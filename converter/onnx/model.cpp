// ModelProto -> ir::Graph: opsets, initializers, graph inputs (with --input-shape), the walk over
// the nodes in dependency order (collecting every unsupported op), graph outputs, and clean-up
// (dead IR nodes removed, unique names).
#include <algorithm>
#include <climits>
#include <cstdio>
#include <exception>
#include <functional>
#include <new>
#include <sstream>

#include "importer.h"
#include "jet/file_io.h"

namespace jet {

namespace onnx_import {
namespace {

Status model_error(const std::string& what) { return Status(StatusCode::BAD_PARAM, what); }

bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

std::string join_counts(const std::map<std::string, int>& m) {
  std::string s;
  for (const auto& kv : m) {
    if (!s.empty()) s += ", ";
    s += kv.first + (kv.second > 1 ? " x" + std::to_string(kv.second) : "");
  }
  return s;
}

// Graph inputs: dtype and dims, with ImportOptions::input_shapes filling in dynamic dims. All
// inputs are checked before any error is returned, so one error names every dynamic input.
Status add_graph_inputs(const onnx::GraphProto& graph, const std::set<std::string>& initializers,
                        const ImportOptions& opt, Importer* im) {
  std::set<std::string> seen;
  std::vector<std::string> dynamic_errors;
  std::string input_list;
  for (const onnx::ValueInfoProto& vi : graph.input()) {
    if (initializers.count(vi.name())) continue;  // an initializer: a constant, not an input
    if (!input_list.empty()) input_list += ", ";
    input_list += "'" + vi.name() + "'";
  }
  for (const auto& kv : opt.input_shapes) {
    bool found = false;
    for (const onnx::ValueInfoProto& vi : graph.input()) found = found || (vi.name() == kv.first && !initializers.count(kv.first));
    if (!found) {
      return model_error("--input-shape names '" + kv.first + "', which is not a graph input (inputs: " +
                         (input_list.empty() ? std::string("none") : input_list) + ")");
    }
  }
  for (const onnx::ValueInfoProto& vi : graph.input()) {
    const std::string& name = vi.name();
    if (initializers.count(name)) continue;
    if (name.empty()) return model_error("a graph input has no name");
    if (!seen.insert(name).second) return model_error("graph input '" + name + "' is listed twice");
    if (!vi.type().has_tensor_type()) {
      return Status(StatusCode::NOT_SUPPORTED, "graph input '" + name + "' is not a tensor (sequences, maps and optionals are not supported)");
    }
    const onnx::TypeProto_Tensor& tt = vi.type().tensor_type();
    DType dtype = DType::F32;
    if (!ir_dtype_of(tt.elem_type(), &dtype)) {
      return Status(StatusCode::NOT_SUPPORTED, "graph input '" + name + "' has element type " + onnx_type_name(tt.elem_type()) +
                                                   "; inputs must be FLOAT, FLOAT16, INT32, INT64 or BOOL");
    }
    auto given = opt.input_shapes.find(name);
    std::vector<int64_t> dims;
    std::string dynamic;  // "dim 0 'N', dim 2 (unknown)"
    if (!tt.has_shape()) {
      dynamic = "unknown rank";
    } else {
      for (int d = 0; d < tt.shape().dim_size(); ++d) {
        const onnx::TensorShapeProto_Dimension& dim = tt.shape().dim(d);
        if (dim.has_dim_value()) {
          if (dim.dim_value() < 0) return model_error("graph input '" + name + "' has a negative dim " + std::to_string(dim.dim_value()));
          dims.push_back(dim.dim_value());
        } else {
          if (!dynamic.empty()) dynamic += ", ";
          dynamic += "dim " + std::to_string(d) + (dim.has_dim_param() && !dim.dim_param().empty() ? " '" + dim.dim_param() + "'" : " (unknown)");
          dims.push_back(-1);
        }
      }
    }
    if (given != opt.input_shapes.end()) {
      const std::vector<int64_t>& g = given->second;
      if (tt.has_shape() && g.size() != dims.size()) {
        return model_error("--input-shape " + name + "=" + dims_text(g) + " has rank " + std::to_string(g.size()) +
                           ", but the input has rank " + std::to_string(dims.size()));
      }
      for (size_t d = 0; d < g.size(); ++d) {
        // A 0 dim is an empty tensor: NOT_SUPPORTED below, as for a static 0 dim.
        if (g[d] < 0) return model_error("--input-shape " + name + "=" + dims_text(g) + " has a negative dim");
        if (tt.has_shape() && dims[d] >= 0 && dims[d] != g[d]) {
          return model_error("--input-shape " + name + "=" + dims_text(g) + " differs from the model's static dim " +
                             std::to_string(d) + " = " + std::to_string(dims[d]));
        }
      }
      dims = g;
    } else if (!dynamic.empty()) {
      dynamic_errors.push_back("'" + name + "' (" + dynamic + ")");
      continue;
    }
    if (dims.empty()) return Status(StatusCode::NOT_SUPPORTED, "graph input '" + name + "' is a scalar (rank 0); inputs need rank >= 1");
    int64_t elements = 0;
    Status size_st = checked_elements(dims, "graph input '" + name + "'", &elements);
    if (!size_st.ok()) return size_st;
    for (int64_t d : dims) {
      if (d == 0) return Status(StatusCode::NOT_SUPPORTED, "graph input '" + name + "' has dims " + dims_text(dims) + " (empty tensors are not supported)");
    }
    int t = -1;
    Status st = im->g->add_input(name, dtype, dims, &t);
    if (!st.ok()) return model_error("graph input '" + name + "': " + st.message());
    Value v;
    v.tensor = t;
    im->values[name] = v;
  }
  if (!dynamic_errors.empty()) {
    std::string msg = "graph inputs with dynamic dims need --input-shape NAME=DIMS (e.g. 1x3x224x224): ";
    for (size_t i = 0; i < dynamic_errors.size(); ++i) msg += (i ? "; " : "") + dynamic_errors[i];
    return model_error(msg);
  }
  return Status::success();
}

// How messages name ONNX node `index`: its name, or "<op_type>_<index>" when it has none (the
// same name the import walk gives it, so every message about one node agrees).
std::string node_name(const onnx::GraphProto& graph, int index) {
  const onnx::NodeProto& n = graph.node(index);
  return n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
}

// The nodes in an order where every input is produced first (ONNX requires sorted graphs; some
// tools write them unsorted). Among ready nodes the lowest index goes first.
Status sort_nodes(const onnx::GraphProto& graph, const std::set<std::string>& defined, std::vector<int>* order) {
  const int nn = graph.node_size();
  std::map<std::string, int> producer;
  for (int i = 0; i < nn; ++i) {
    const onnx::NodeProto& n = graph.node(i);
    if (n.op_type().empty()) {
      return model_error("node #" + std::to_string(i) + (n.name().empty() ? "" : " ('" + n.name() + "')") + " has no op_type");
    }
    for (const std::string& o : n.output()) {
      if (o.empty()) continue;
      if (defined.count(o)) {
        return model_error(n.op_type() + " '" + node_name(graph, i) + "': output '" + o + "' is also a graph input or initializer");
      }
      if (!producer.emplace(o, i).second) {
        return model_error("value '" + o + "' is produced by two nodes ('" + node_name(graph, producer[o]) + "' and '" +
                           node_name(graph, i) + "')");
      }
    }
  }
  std::vector<std::vector<int>> users(nn);
  std::vector<int> waiting(nn, 0);
  for (int i = 0; i < nn; ++i) {
    const onnx::NodeProto& n = graph.node(i);
    for (const std::string& in : n.input()) {
      if (in.empty()) continue;
      auto p = producer.find(in);
      if (p != producer.end()) {
        users[p->second].push_back(i);
        ++waiting[i];
      } else if (!defined.count(in)) {
        return model_error(n.op_type() + " '" + node_name(graph, i) + "': input '" + in +
                           "' is not produced by any node, initializer or graph input");
      }
    }
  }
  *order = ir::dependency_order(users, waiting);
  if (static_cast<int>(order->size()) != nn) {
    std::vector<char> done(nn, 0);
    for (int i : *order) done[i] = 1;
    for (int i = 0; i < nn; ++i) {
      if (!done[i]) return model_error("the graph has a cycle through node '" + node_name(graph, i) + "'");
    }
  }
  return Status::success();
}

// Removes IR nodes whose outputs no graph output depends on, and constants nothing reads.
// Returns the number of nodes removed.
int prune(ir::Graph* g) {
  const size_t nt = g->tensors.size(), nn = g->nodes.size();
  std::vector<bool> live_t(nt, false), live_n(nn, false);
  for (size_t t = 0; t < nt; ++t) live_t[t] = g->tensors[t].kind == ir::TensorKind::OUTPUT || g->tensors[t].kind == ir::TensorKind::INPUT;
  for (size_t i = nn; i-- > 0;) {  // nodes were added in execution order
    bool live = false;
    for (int t : g->nodes[i].outputs) live = live || live_t[t];
    if (!live) continue;
    live_n[i] = true;
    for (int t : g->nodes[i].inputs) live_t[t] = true;
  }
  ir::Graph out;
  std::vector<int> remap(nt, -1);
  for (size_t t = 0; t < nt; ++t) {
    if (live_t[t]) remap[t] = out.add_tensor(std::move(g->tensors[t]));
  }
  int removed = 0;
  for (size_t i = 0; i < nn; ++i) {
    if (!live_n[i]) {
      ++removed;
      continue;
    }
    ir::Node n = std::move(g->nodes[i]);
    for (int& t : n.inputs) t = remap[t];
    for (int& t : n.outputs) t = remap[t];
    out.add_node(std::move(n));
  }
  *g = std::move(out);
  return removed;
}

std::string unique_name(const std::string& base, std::set<std::string>* taken) {
  std::string name = base.empty() ? std::string("t") : base;
  for (int k = 1; taken->count(name); ++k) name = base + "_" + std::to_string(k);
  taken->insert(name);
  return name;
}

// Unique tensor names (graph inputs and outputs first, so they keep their ONNX names) and unique
// node names.
void unique_names(ir::Graph* g) {
  std::set<std::string> taken;
  for (int pass = 0; pass < 2; ++pass) {
    for (ir::Tensor& t : g->tensors) {
      const bool interface = t.kind == ir::TensorKind::INPUT || t.kind == ir::TensorKind::OUTPUT;
      if (interface == (pass == 0)) t.name = unique_name(t.name, &taken);
    }
  }
  std::set<std::string> node_names;
  for (ir::Node& n : g->nodes) n.name = unique_name(n.name, &node_names);
}

// Graph outputs: each becomes an OUTPUT tensor named after it. Outputs that are graph inputs,
// constants or already outputs get a TRANSFORM copy (an IR output is a node's output).
// `cut`: ImportOptions::outputs, which replace the model's outputs (no declared type to check).
Status mark_outputs(const onnx::GraphProto& graph, const std::vector<std::string>& cut, Importer* im) {
  ir::Graph& g = *im->g;
  std::vector<onnx::ValueInfoProto> outputs(graph.output().begin(), graph.output().end());
  if (!cut.empty()) {
    outputs.clear();
    for (const std::string& name : cut) {
      outputs.emplace_back();
      outputs.back().set_name(name);
    }
  }
  for (const onnx::ValueInfoProto& vi : outputs) {
    const std::string& name = vi.name();
    auto it = im->values.find(name);
    if (it == im->values.end()) {
      return model_error("graph output '" + name + "' is not produced by any node, initializer or graph input");
    }
    if (it->second.pending_pad) {
      int padded = -1;
      Status st = im->materialize_pad(name, &padded);
      if (!st.ok()) return st;
    }
    const Value& v = it->second;
    int t = v.tensor;
    if (v.constant >= 0) {
      const Constant& c = im->constants[v.constant];
      DType dt = DType::F32;
      if (!ir_dtype_of(c.type, &dt) || c.elements() == 0) {
        return Status(StatusCode::NOT_SUPPORTED, "graph output '" + name + "' is a constant " + onnx_type_name(c.type) +
                                                     " tensor of dims " + dims_text(c.dims) +
                                                     "; outputs must be FLOAT, FLOAT16, INT32, INT64 or BOOL tensors");
      }
      Status st = dtype_is_float(dt) ? im->ir_constant(v.constant, dt, {}, &t) : im->ir_int_constant(v.constant, dt, &t);
      if (!st.ok()) return st;
      im->note("graph output '" + name + "' is a constant: written by a copy from the weights");
    }
    if (g.tensors[t].kind != ir::TensorKind::ACTIVATION) {
      int y = -1;
      Status st = g.transform(name, t, g.tensors[t].dtype, &y);
      if (!st.ok()) return model_error("graph output '" + name + "': " + st.message());
      t = y;
    }
    Status st = g.mark_output(t);
    if (!st.ok()) return model_error("graph output '" + name + "': " + st.message());
    g.tensors[t].name = name;
    // The model's declared type and shape, where it gives them, should agree with what the
    // importer inferred; a difference is reported (a batch given by --input-shape changes them).
    if (vi.type().has_tensor_type()) {
      const onnx::TypeProto_Tensor& tt = vi.type().tensor_type();
      const int32_t want = onnx_type_of(g.tensors[t].dtype);
      DType declared = DType::F32;
      if (tt.elem_type() != 0 && !ir_dtype_of(tt.elem_type(), &declared)) {
        return Status(StatusCode::NOT_SUPPORTED, "graph output '" + name + "' is declared " + onnx_type_name(tt.elem_type()) +
                                                     "; outputs are FLOAT, FLOAT16, INT32, INT64 or BOOL");
      }
      if (tt.elem_type() != 0 && tt.elem_type() != want) {
        return model_error("graph output '" + name + "' is declared " + onnx_type_name(tt.elem_type()) + " but computes " +
                           onnx_type_name(want));
      }
      if (tt.has_shape()) {
        bool differs = tt.shape().dim_size() != static_cast<int>(g.tensors[t].dims.size());
        for (int d = 0; !differs && d < tt.shape().dim_size(); ++d) {
          const auto& dim = tt.shape().dim(d);
          differs = dim.has_dim_value() && dim.dim_value() != g.tensors[t].dims[d];
        }
        if (differs) {
          std::string declared;
          for (int d = 0; d < tt.shape().dim_size(); ++d) {
            const auto& dim = tt.shape().dim(d);
            declared += (d ? ", " : "[") + (dim.has_dim_value() ? std::to_string(dim.dim_value())
                                                               : dim.has_dim_param() ? dim.dim_param() : std::string("?"));
          }
          im->report->warnings.push_back("graph output '" + name + "' computes dims " + dims_text(g.tensors[t].dims) +
                                         " but the model declares " + (declared.empty() ? "a scalar" : declared + "]"));
        }
      }
    }
  }
  if (outputs.empty()) return model_error("the graph has no outputs");
  return Status::success();
}

// ImportOptions::outputs: which nodes (by index) the named values depend on. BAD_PARAM for a name
// that nothing defines, or one given twice.
Status nodes_for_outputs(const onnx::GraphProto& graph, const std::set<std::string>& defined,
                         const std::vector<std::string>& names, std::vector<bool>* needed) {
  std::map<std::string, int> producer;
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const std::string& o : graph.node(i).output()) {
      if (!o.empty()) producer.emplace(o, i);
    }
  }
  needed->assign(static_cast<size_t>(graph.node_size()), false);
  std::vector<std::string> pending;
  std::set<std::string> seen;
  for (const std::string& name : names) {
    if (!seen.insert(name).second) return model_error("--outputs names '" + name + "' twice");
    if (!producer.count(name) && !defined.count(name)) {
      std::string outputs, similar;
      for (const onnx::ValueInfoProto& vi : graph.output()) outputs += (outputs.empty() ? "'" : ", '") + vi.name() + "'";
      int shown = 0;  // node outputs whose names contain the one given, the first few
      for (const auto& kv : producer) {
        if (kv.first.find(name) == std::string::npos || shown == 8) continue;
        similar += (similar.empty() ? "'" : ", '") + kv.first + "'";
        ++shown;
      }
      return model_error("--outputs: the model has no tensor named '" + name +
                         "' (no node, initializer or graph input defines it); its outputs are " + outputs +
                         (similar.empty() ? std::string() : "; tensors whose names contain it: " + similar));
    }
    pending.push_back(name);
  }
  while (!pending.empty()) {
    const std::string name = pending.back();
    pending.pop_back();
    auto p = producer.find(name);
    if (p == producer.end() || (*needed)[static_cast<size_t>(p->second)]) continue;
    (*needed)[static_cast<size_t>(p->second)] = true;
    for (const std::string& in : graph.node(p->second).input()) {
      if (!in.empty()) pending.push_back(in);
    }
  }
  return Status::success();
}

Status import_model(const onnx::ModelProto& m, const ImportOptions& opt, const std::string& dir, ir::Graph* out,
                    ImportReport* report) {
  if (!m.has_graph()) return model_error("the model has no graph (is this an ONNX model?)");
  const onnx::GraphProto& graph = m.graph();

  // Opsets.
  int64_t opset = -1;
  std::map<std::string, int64_t> domain_opsets;
  for (const onnx::OperatorSetIdProto& os : m.opset_import()) {
    const std::string domain = is_default_domain(os.domain()) ? "" : os.domain();
    if (domain_opsets.count(domain)) return model_error("opset_import lists domain '" + os.domain() + "' twice");
    domain_opsets[domain] = os.version();
    if (domain.empty()) opset = os.version();
  }
  // A model whose nodes are all of other domains (training ops, ai.onnx.ml) may import no default
  // opset: its nodes are reported as unsupported by the walk below.
  bool default_domain_nodes = false;
  for (const onnx::NodeProto& n : graph.node()) default_domain_nodes = default_domain_nodes || is_default_domain(n.domain());
  if (opset < 0 && default_domain_nodes) return model_error("the model imports no opset of the default domain (ai.onnx)");
  if (opset >= 0 && (opset < 6 || opset > 21)) {
    return Status(StatusCode::NOT_SUPPORTED, "opset " + std::to_string(opset) +
                                                 " of the default domain is not supported (supported: 6 to 21)");
  }

  ir::Graph g;
  Importer im(opt, &g, report);
  im.opset = opset;
  im.external_dir = dir;
  report->onnx_nodes = graph.node_size();

  for (const onnx::NodeProto& n : graph.node()) {
    for (const std::string& in : n.input()) {
      if (!in.empty()) im.used.insert(in);
    }
  }
  for (const onnx::ValueInfoProto& vi : graph.output()) im.used.insert(vi.name());
  for (const std::string& name : opt.outputs) im.used.insert(name);

  // Initializers: constants (decoded only when something reads them).
  std::set<std::string> defined;
  int unused_initializers = 0;
  for (const onnx::TensorProto& t : graph.initializer()) {
    if (t.name().empty()) return model_error("an initializer has no name");
    if (!defined.insert(t.name()).second) return model_error("initializer '" + t.name() + "' is defined twice");
    if (!im.used.count(t.name())) {
      ++unused_initializers;
      continue;
    }
    Constant c;
    Status st = decode_tensor(t, "initializer '" + t.name() + "'", dir, &c);
    if (!st.ok()) return st;
    Value v;
    v.constant = im.add_constant(t.name(), std::move(c));
    im.values[t.name()] = v;
  }
  for (const onnx::SparseTensorProto& s : graph.sparse_initializer()) {
    const std::string& name = s.values().name();
    if (!defined.insert(name).second) return model_error("initializer '" + name + "' is defined twice");
    if (im.used.count(name)) return Status(StatusCode::NOT_SUPPORTED, "sparse initializer '" + name + "' is not supported");
  }
  if (unused_initializers > 0) im.note("ignored " + std::to_string(unused_initializers) + " unused initializers");

  Status st = add_graph_inputs(graph, defined, opt, &im);
  if (!st.ok()) return st;
  for (const onnx::ValueInfoProto& vi : graph.input()) defined.insert(vi.name());

  std::vector<int> order;
  st = sort_nodes(graph, defined, &order);
  if (!st.ok()) return st;
  std::vector<bool> needed(static_cast<size_t>(graph.node_size()), true);
  if (!opt.outputs.empty()) {
    st = nodes_for_outputs(graph, defined, opt.outputs, &needed);
    if (!st.ok()) return st;
    const int cut = static_cast<int>(std::count(needed.begin(), needed.end(), false));
    im.note("--outputs: " + std::to_string(cut) + " of " + std::to_string(graph.node_size()) +
            " nodes are not needed for the outputs given and were not imported");
  }

  // The walk: every node is imported or recorded as unsupported; readers of an unsupported node's
  // outputs are skipped (their op types are still checked against the table).
  for (int index : order) {
    if (!needed[static_cast<size_t>(index)]) continue;
    const onnx::NodeProto& n = graph.node(index);
    im.node = &n;
    im.node_name = node_name(graph, index);
    const bool default_domain = is_default_domain(n.domain());
    const std::string domain = default_domain ? "" : n.domain();
    const int64_t node_opset = domain_opsets.count(domain) ? domain_opsets[domain] : 0;
    auto poison_outputs = [&]() {
      for (const std::string& o : n.output()) {
        if (o.empty()) continue;
        Value v;
        v.poisoned = true;
        im.values[o] = v;
      }
    };
    auto record = [&](const std::string& reason) {
      report->unsupported.push_back({n.op_type(), im.node_name, n.domain(), node_opset, reason});
      poison_outputs();
    };
    bool poisoned = false;
    for (const std::string& in : n.input()) {
      auto it = in.empty() ? im.values.end() : im.values.find(in);
      poisoned = poisoned || (it != im.values.end() && it->second.poisoned);
    }
    const OpEntry* entry = default_domain ? find_op(n.op_type()) : nullptr;
    if (!default_domain) {
      record("domain '" + n.domain() + "' is not supported (only the default ONNX domain)");
      continue;
    }
    if (!entry) {
      record("no importer for this op type");
      continue;
    }
    if (poisoned) {
      // Behind an unsupported op there is nothing to build on: known op types, whose support may
      // depend on their inputs, are skipped.
      poison_outputs();
      continue;
    }
    if (opset < entry->since) {
      return model_error(im.node_label() + ": " + n.op_type() + " does not exist before opset " +
                         std::to_string(entry->since) + " (the model imports opset " + std::to_string(opset) + ")");
    }
    // Computed integer and bool tensors go only to the ops that take them.
    if (!op_takes_integer_tensors(n.op_type())) {
      std::string integer_input;
      for (const std::string& in : n.input()) {
        auto it = in.empty() ? im.values.end() : im.values.find(in);
        if (it == im.values.end() || it->second.tensor < 0 || it->second.constant >= 0) continue;
        const DType dt = g.tensors[it->second.tensor].dtype;
        if (!dtype_is_float(dt)) {
          integer_input = "'" + in + "' is a computed " + dtype_name(dt) + " tensor";
          break;
        }
      }
      if (!integer_input.empty()) {
        record(integer_input + "; " + n.op_type() + " computes on FLOAT and FLOAT16 tensors only");
        continue;
      }
    }
    const size_t ir_nodes_before = g.nodes.size(), ir_tensors_before = g.tensors.size();
    im.first_new_tensor = ir_tensors_before;
    st = entry->fn(im);
    if (st.code() == StatusCode::NOT_SUPPORTED) {
      record(st.message());
      continue;
    }
    if (!st.ok()) return st;
    // No tensor beyond 2^40 elements (a malformed model could ask for one; sizes must not wrap).
    for (size_t t = ir_tensors_before; t < g.tensors.size(); ++t) {
      int64_t elements = 0;
      st = checked_elements(g.tensors[t].dims, im.node_label() + ": tensor '" + g.tensors[t].name + "'", &elements);
      if (!st.ok()) return st;
    }
    std::string missing;
    for (int i = 0; i < n.output_size(); ++i) {
      if (im.output_used(i) && !im.values.count(n.output(i))) missing += (missing.empty() ? "'" : ", '") + n.output(i) + "'";
    }
    if (!missing.empty()) {
      record("output " + missing + " is not supported");
      continue;
    }
    if (opt.verbose) {
      std::string what;
      for (size_t k = ir_nodes_before; k < g.nodes.size(); ++k) {
        what += (what.empty() ? "" : " + ") + std::string(ir::op_type_name(g.nodes[k].op));
      }
      if (what.empty()) {
        what = (n.output_size() > 0 && im.values.count(n.output(0)) && im.values[n.output(0)].constant >= 0)
                   ? "folded to a constant"
                   : "removed";
      }
      im.note(im.node_label() + " -> " + what);
    }
  }

  if (!report->unsupported.empty()) {
    std::ostringstream msg;
    msg << report->unsupported.size() << " unsupported op" << (report->unsupported.size() > 1 ? "s" : "")
        << " (nothing was converted):";
    for (const ImportReport::Unsupported& u : report->unsupported) {
      msg << "\n  " << u.op_type << " '" << u.node_name << "'";
      if (!u.domain.empty()) msg << " domain '" << u.domain << "'";
      msg << " (opset " << u.opset << "): " << u.reason;
    }
    return Status(StatusCode::NOT_SUPPORTED, msg.str());
  }

  st = mark_outputs(graph, opt.outputs, &im);
  if (!st.ok()) return st;
  const int dead = prune(&g);
  unique_names(&g);

  if (!im.folded_ops.empty()) {
    int total = 0;
    for (const auto& kv : im.folded_ops) total += kv.second;
    im.note("folded " + std::to_string(total) + " nodes at import time: " + join_counts(im.folded_ops));
  }
  if (!im.removed_ops.empty()) im.note("removed: " + join_counts(im.removed_ops));
  if (dead > 0) im.note("removed " + std::to_string(dead) + " IR nodes that no graph output depends on");
  std::vector<int> ir_order;
  st = ir::check_graph(g, &ir_order);
  if (!st.ok()) return Status(StatusCode::INTERNAL_ERROR, "the imported graph is inconsistent: " + st.message());
  *out = std::move(g);
  return Status::success();
}

// Runs `body`, turning exceptions (libonnx and protobuf may throw; bad_alloc on huge models)
// into a Status.
Status guarded(const std::function<Status()>& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::ALLOC_FAILED, "out of memory while importing the ONNX model");
  } catch (const std::exception& e) {
    return Status(StatusCode::BAD_PARAM, std::string("ONNX import failed: ") + e.what());
  } catch (...) {
    return Status(StatusCode::INTERNAL_ERROR, "ONNX import failed with an unknown exception");
  }
}

Status import_common(const void* data, size_t size, const ImportOptions& options, const std::string& dir,
                     ir::Graph* out, ImportReport* report) {
  if (!out) return Status(StatusCode::BAD_PARAM, "import_onnx: null output graph");
  *out = ir::Graph();
  ImportReport local;
  if (!report) report = &local;
  *report = ImportReport();
  if (!data && size > 0) return Status(StatusCode::BAD_PARAM, "import_onnx: null data");
  if (size > static_cast<size_t>(INT_MAX)) {
    return Status(StatusCode::NOT_SUPPORTED, "the model is " + std::to_string(size) +
                                                 " bytes, over protobuf's 2 GiB message limit: store the weights as external data");
  }
  Status st = guarded([&]() -> Status {
    onnx::ModelProto m;
    if (!m.ParseFromArray(data, static_cast<int>(size))) {
      return Status(StatusCode::BAD_PARAM, "not a valid ONNX model: the protobuf message cannot be parsed (" +
                                               std::to_string(size) + " bytes; truncated or not an ONNX file)");
    }
    ir::Graph g;
    Status s = import_model(m, options, dir, &g, report);
    if (s.ok()) *out = std::move(g);
    return s;
  });
  if (!st.ok()) *out = ir::Graph();
  return st;
}

}  // namespace
}  // namespace onnx_import

Status import_onnx_bytes(const void* data, size_t size, const ImportOptions& options, ir::Graph* out,
                         ImportReport* report) {
  return onnx_import::import_common(data, size, options, options.external_data_dir, out, report);
}

Status import_onnx_file(const std::string& path, const ImportOptions& options, ir::Graph* out,
                        ImportReport* report) {
  if (out) *out = ir::Graph();
  // Regular files only (a FIFO or /dev/zero is refused without blocking), below protobuf's 2 GiB.
  std::vector<uint8_t> bytes;
  Status read = read_regular_file(path, (size_t(2) << 30) - 1, "an ONNX model (protobuf's limit)", &bytes);
  if (!read.ok()) return read;
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  Status st = onnx_import::import_common(bytes.data(), bytes.size(), options, dir, out, report);
  if (!st.ok()) return Status(st.code(), path + ": " + st.message());
  return st;
}

}  // namespace jet
