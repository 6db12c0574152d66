// A small CPU interpreter for converter graphs (ir::Graph), for tests that check what a graph
// computes without the runtime: each node is one jet:: kernel call; every activation lives at its
// planned offset of one arena that starts out as NaN (0xff bytes), so a graph or plan that lets
// tensors clobber each other shows up as wrong outputs.
//
//   std::vector<std::vector<float>> outputs;  // OUTPUT tensors in index order
//   jet::Status st = jet::test::interpret(g, {input0_values, ...}, &outputs);
//
// Inputs are given as logical row-major values for the INPUT tensors in index order; outputs come
// back the same way. f16 tensors are converted on the way in and out.
//
// Header-only (inline) because tests/CMakeLists.txt builds each tests/converter/test_*.cpp as its
// own executable from that one source.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "ir.h"
#include "jet/dnn.h"
#include "plan_memory.h"

namespace jet {
namespace test {

inline std::vector<int64_t> strides_or_packed(const ir::Tensor& t) {
  return t.strides.empty() ? ir::packed_strides(t.dims) : t.strides;
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
    if (t.dtype == DType::F16) {
      uint16_t bits;
      std::memcpy(&bits, base + 2 * off, 2);
      v = static_cast<float>(half::from_bits(bits));
    } else {
      std::memcpy(&v, base + 4 * off, 4);
    }
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
    if (t.dtype == DType::F16) {
      const uint16_t bits = half(v).bits;
      std::memcpy(base + 2 * off, &bits, 2);
    } else {
      std::memcpy(base + 4 * off, &v, 4);
    }
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < t.dims[d]) break;
      idx[d] = 0;
    }
  }
}

// Runs one node; `ptr` holds every tensor's memory.
inline Status interpret_node(const Handle& h, const ir::Graph& g, const ir::Node& n, const std::vector<uint8_t*>& ptr) {
  const ir::Tensor& y = g.tensors[n.outputs[0]];
  uint8_t* yp = ptr[n.outputs[0]];
  const TensorDesc yd = y.desc();
  auto in = [&](size_t k) { return ptr[n.inputs[k]]; };
  auto ind = [&](size_t k) { return g.tensors[n.inputs[k]].desc(); };
  auto p = [](const std::vector<int64_t>& v) { return v.empty() ? nullptr : v.data(); };
  switch (n.op) {
    case ir::OpType::CONV: {
      const ir::ConvAttrs& a = std::get<ir::ConvAttrs>(n.attrs);
      const ir::Tensor& w = g.tensors[n.inputs[1]];
      const int rank = static_cast<int>(w.dims.size());
      const ConvDesc cd = ir::conv_desc(a, rank - 2);
      const FilterDesc wd = FilterDesc::make(w.dtype, FilterLayout::KCRS, rank, w.dims.data());
      ConvAlgo algo = ConvAlgo::DIRECT;
      Status st = choose_conv_forward_algo(h, ind(0), wd, cd, yd, ConvPreference::PREFER_FASTEST, 0, &algo);
      if (!st.ok()) return st;
      size_t ws_bytes = 0;
      st = conv_forward_workspace_size(h, ind(0), wd, cd, yd, algo, &ws_bytes);
      if (!st.ok()) return st;
      std::vector<uint64_t> ws(ws_bytes / 8 + 1);
      std::vector<int64_t> bias_dims(rank, 1);
      bias_dims[1] = y.dims[1];
      const TensorDesc bd = TensorDesc::packed(y.dtype, rank, bias_dims.data());
      const void* bias = a.has_bias ? in(2) : nullptr;
      const size_t zi = n.inputs.size() - 1;
      const TensorDesc zd = a.has_residual ? ind(zi) : yd;
      const void* z = a.has_residual ? in(zi) : nullptr;
      return conv_bias_act_forward(h, 1.f, ind(0), in(0), wd, in(1), cd, algo, ws.data(), ws_bytes, 1.f, zd, z, bd,
                                   bias, a.act, yd, yp);
    }
    case ir::OpType::POOL: {
      const ir::PoolAttrs& a = std::get<ir::PoolAttrs>(n.attrs);
      const PoolDesc pd = PoolDesc::make(a.mode, static_cast<int>(a.window.size()), a.window.data(), p(a.pad_begin),
                                         p(a.pad_end), p(a.strides), nullptr, a.ceil_mode);
      return pool_forward(h, pd, 1.f, ind(0), in(0), 0.f, yd, yp);
    }
    case ir::OpType::GLOBAL_POOL: {
      const PoolDesc pd = PoolDesc::global(std::get<ir::GlobalPoolAttrs>(n.attrs).mode, yd.rank() - 2);
      return pool_forward(h, pd, 1.f, ind(0), in(0), 0.f, yd, yp);
    }
    case ir::OpType::ACTIVATION:
      return activation_forward(h, std::get<ir::ActivationAttrs>(n.attrs).act, 1.f, ind(0), in(0), 0.f, yd, yp);
    case ir::OpType::OP_TENSOR:
      return op_tensor(h, std::get<ir::OpTensorAttrs>(n.attrs).op, 1.f, ind(0), in(0), 1.f, ind(1), in(1), 0.f, yd, yp);
    case ir::OpType::GEMM: {
      const ir::GemmAttrs& a = std::get<ir::GemmAttrs>(n.attrs);
      TensorDesc bias_desc = yd;
      const void* bias = nullptr;
      if (a.has_bias) {
        std::vector<int64_t> bdims = g.tensors[n.inputs[2]].dims;
        while (bdims.size() < y.dims.size()) bdims.insert(bdims.begin(), 1);
        bias_desc = TensorDesc::packed(y.dtype, static_cast<int>(bdims.size()), bdims.data());
        bias = in(2);
      }
      return gemm_forward(h, GemmDesc{a.trans_a, a.trans_b}, 1.f, ind(0), in(0), ind(1), in(1), bias_desc, bias, 0.f,
                          yd, yp);
    }
    case ir::OpType::SOFTMAX: {
      const ir::SoftmaxAttrs& a = std::get<ir::SoftmaxAttrs>(n.attrs);
      TensorDesc xd = ind(0), od = yd;
      if (!(a.axis == 1 && y.dims.size() >= 3)) {  // packed: a 3D (outer, axis, inner) view
        int64_t outer = 1, inner = 1;
        for (int d = 0; d < a.axis; ++d) outer *= y.dims[d];
        for (size_t d = a.axis + 1; d < y.dims.size(); ++d) inner *= y.dims[d];
        xd = TensorDesc::packed(g.tensors[n.inputs[0]].dtype, {outer, y.dims[a.axis], inner});
        od = TensorDesc::packed(y.dtype, {outer, y.dims[a.axis], inner});
      }
      return softmax_forward(h, a.algo, SoftmaxMode::CHANNEL, 1.f, xd, in(0), 0.f, od, yp);
    }
    case ir::OpType::CONCAT: {
      std::vector<TensorDesc> descs;
      std::vector<const void*> xs;
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        descs.push_back(ind(k));
        xs.push_back(in(k));
      }
      return concat_forward(h, std::get<ir::ConcatAttrs>(n.attrs).axis, static_cast<int>(xs.size()), descs.data(),
                            xs.data(), 1.f, 0.f, yd, yp);
    }
    case ir::OpType::RESHAPE:
      if (!g.tensors[n.inputs[0]].is_packed() || !y.is_packed()) {
        return Status(StatusCode::BAD_PARAM, "reshape of a strided tensor");
      }
      if (in(0) != yp) std::memmove(yp, in(0), y.bytes());
      return Status::success();
    case ir::OpType::BATCHNORM:
      for (size_t k = 1; k < 5; ++k) {
        if (g.tensors[n.inputs[k]].dtype != DType::F32) return Status(StatusCode::BAD_PARAM, "batchnorm parameter is not f32");
      }
      return batchnorm_forward_inference(h, 1.f, 0.f, ind(0), in(0), yd, yp, reinterpret_cast<const float*>(in(1)),
                                         reinterpret_cast<const float*>(in(2)), reinterpret_cast<const float*>(in(3)),
                                         reinterpret_cast<const float*>(in(4)),
                                         std::get<ir::BatchNormAttrs>(n.attrs).epsilon);
    case ir::OpType::TRANSFORM:
      return transform_tensor(h, 1.f, ind(0), in(0), 0.f, yd, yp);
    case ir::OpType::SLICE: {
      // The strided view of x the attributes describe, on x's own strides.
      const ir::SliceAttrs& a = std::get<ir::SliceAttrs>(n.attrs);
      const TensorDesc xd = ind(0);
      const int rank = xd.rank();
      std::vector<int64_t> strides(rank);
      int64_t offset = 0;
      for (int d = 0; d < rank; ++d) {
        const int k = static_cast<int>(a.perm[d]);
        strides[d] = y.dims[d] == 1 ? xd.stride(k) : xd.stride(k) * a.steps[k];  // a size-1 dim never moves
        offset += a.starts[k] * xd.stride(k);
      }
      const TensorDesc view = TensorDesc::strided(xd.dtype(), rank, y.dims.data(), strides.data());
      return transform_tensor(h, 1.f, view, in(0) + offset * static_cast<int64_t>(dtype_size(xd.dtype())), 0.f, yd, yp);
    }
    case ir::OpType::PAD: {
      const ir::PadAttrs& a = std::get<ir::PadAttrs>(n.attrs);
      return pad_forward(h, a.mode, a.pad_begin.data(), a.pad_end.data(), a.value, 1.f, ind(0), in(0), 0.f, yd, yp);
    }
    case ir::OpType::RESIZE: {
      const ir::ResizeAttrs& a = std::get<ir::ResizeAttrs>(n.attrs);
      return resize_forward(h, ir::resize_desc(a), 1.f, ind(0), in(0), 0.f, yd, yp);
    }
    case ir::OpType::CONV_TRANSPOSE: {
      const ir::ConvTransposeAttrs& a = std::get<ir::ConvTransposeAttrs>(n.attrs);
      const ir::Tensor& w = g.tensors[n.inputs[1]];
      const int rank = static_cast<int>(w.dims.size());
      const ConvDesc cd = ir::conv_desc(a, rank - 2);
      const FilterDesc wd = FilterDesc::make(w.dtype, FilterLayout::KCRS, rank, w.dims.data());
      Status st = conv_backward_data(h, 1.f, wd, in(1), ind(0), in(0), cd, 0.f, yd, yp);
      if (!st.ok() || !a.has_bias) return st;
      std::vector<int64_t> bias_dims(rank, 1);
      bias_dims[1] = y.dims[1];
      return add_tensor(h, 1.f, TensorDesc::packed(y.dtype, rank, bias_dims.data()), in(2), 1.f, yd, yp);
    }
    case ir::OpType::INSTANCENORM:
      for (size_t k = 1; k < 3; ++k) {
        if (g.tensors[n.inputs[k]].dtype != DType::F32) return Status(StatusCode::BAD_PARAM, "instancenorm parameter is not f32");
      }
      return instancenorm_forward(h, 1.f, 0.f, ind(0), in(0), yd, yp, reinterpret_cast<const float*>(in(1)),
                                  reinterpret_cast<const float*>(in(2)), std::get<ir::InstanceNormAttrs>(n.attrs).epsilon);
    case ir::OpType::LRN:
      return lrn_cross_channel_forward(h, std::get<ir::LrnAttrs>(n.attrs).lrn, 1.f, ind(0), in(0), 0.f, yd, yp);
    case ir::OpType::REDUCE:
      return reduce_forward(h, std::get<ir::ReduceAttrs>(n.attrs).op, 1.f, ind(0), in(0), 0.f, yd, yp);
    case ir::OpType::COUNT:
      break;
  }
  return Status(StatusCode::NOT_SUPPORTED, std::string("interpreter: no kernel call for op ") + ir::op_type_name(n.op));
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
  std::vector<uint8_t*> ptr(g.tensors.size(), nullptr);
  size_t next_input = 0;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const ir::Tensor& tt = g.tensors[t];
    if (tt.kind == ir::TensorKind::CONSTANT) {
      constant_words[t].assign(tt.bytes() / 8 + 1, 0);
      ptr[t] = reinterpret_cast<uint8_t*>(constant_words[t].data());
      if (tt.data.size() != static_cast<size_t>(tt.elements())) {
        return Status(StatusCode::BAD_PARAM, "constant '" + tt.name + "' has no data");
      }
      write_tensor(tt, tt.data, ptr[t]);
    } else if (plan.tensors[t].in_arena) {
      ptr[t] = arena + plan.tensors[t].offset;
    }
    if (tt.kind == ir::TensorKind::INPUT) {
      if (next_input >= inputs.size() || inputs[next_input].size() != static_cast<size_t>(tt.elements())) {
        return Status(StatusCode::BAD_PARAM, "no values for input '" + tt.name + "'");
      }
      if (ptr[t]) write_tensor(tt, inputs[next_input], ptr[t]);
      ++next_input;
    }
  }
  if (produced) produced->assign(g.tensors.size(), std::vector<float>());
  for (int i : order) {
    const ir::Node& n = g.nodes[i];
    st = interpret_node(h, g, n, ptr);
    if (!st.ok()) return Status(st.code(), "node '" + n.name + "': " + st.message());
    if (produced) (*produced)[n.outputs[0]] = read_tensor(g.tensors[n.outputs[0]], ptr[n.outputs[0]]);
  }
  outputs->clear();
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (g.tensors[t].kind == ir::TensorKind::OUTPUT) outputs->push_back(read_tensor(g.tensors[t], ptr[t]));
  }
  return Status::success();
}

inline Status interpret(const ir::Graph& g, const std::vector<std::vector<float>>& inputs,
                        std::vector<std::vector<float>>* outputs) {
  return interpret(g, inputs, outputs, nullptr);
}

}  // namespace test
}  // namespace jet
