#include "common/ir_reference.h"

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "op_rules.h"

namespace jet {
namespace test {

namespace {

const int64_t* ptr_or_null(const std::vector<int64_t>& v) { return v.empty() ? nullptr : v.data(); }

// The (outer, axis, inner) view of a packed or nested tensor for softmax over `axis`; the tensor
// itself for axis 1 of rank 3..5 (the kernel's CHANNEL mode on any strides).
TensorDesc softmax_view(const TensorDesc& d, int axis) {
  if (axis == 1 && d.rank() >= 3 && d.rank() <= 5) return d;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= d.dim(i);
  for (int i = axis + 1; i < d.rank(); ++i) inner *= d.dim(i);
  const int64_t dims[3] = {outer, d.dim(axis), inner};
  // The runtime checks nesting; the reference handles the layouts the passes produce (packed
  // around the axis), whose innermost stride is 1 when there are inner dims.
  const int64_t strides[3] = {d.dim(axis) * d.stride(axis), d.stride(axis), 1};
  return TensorDesc::strided(d.dtype(), 3, dims, strides);
}

// [1, channels, 1, ...] at `rank`: a per-channel bias as add_tensor and the conv epilogue see it.
TensorDesc channel_bias(DType dtype, int rank, int64_t channels) {
  std::vector<int64_t> dims(static_cast<size_t>(rank), 1);
  dims[1] = channels;
  return TensorDesc::packed(dtype, rank, dims.data());
}

Status f32_params(const ir::Graph& g, const ir::Node& n, size_t first, const char* what) {
  for (size_t k = first; k < n.inputs.size(); ++k) {
    if (g.tensors[n.inputs[k]].dtype != DType::F32) {
      return Status(StatusCode::BAD_PARAM, std::string(what) + " parameter is not f32");
    }
  }
  return Status::success();
}

// The op's constants, added in order; the first failure is kept (later calls add nothing).
struct SampleConstants {
  explicit SampleConstants(ir::Graph& graph) : g(graph) {}

  ir::Graph& g;
  uint32_t state = 12345;
  Status status;

  // f32 values uniform in [lo, hi).
  int uniform(const std::string& name, std::vector<int64_t> dims, float lo, float hi) {
    int t = -1;
    if (status.ok()) status = g.add_constant(name, DType::F32, std::move(dims), &t);
    if (!status.ok()) return -1;
    for (int64_t i = 0; i < g.tensors[t].elements(); ++i) {
      state = state * 1664525u + 1013904223u;  // Numerical Recipes' LCG: the same on every compiler
      g.tensors[t].data.push_back(lo + (hi - lo) * static_cast<float>(state >> 8) / 16777216.f);
    }
    return t;
  }
  // Integer or bool values, as given.
  int exact(const std::string& name, DType dtype, std::vector<int64_t> dims, std::vector<int64_t> values) {
    int t = -1;
    if (status.ok()) status = g.add_constant(name, dtype, std::move(dims), &t);
    if (!status.ok()) return -1;
    g.tensors[t].int_data = std::move(values);
    return t;
  }
};

// One node's kernel call, by the node's attribute struct (one per op type: ir.h's NodeAttrs). An
// op whose attributes are its schema table's struct runs the runtime's kernel rule for it
// (rt::run_kernel, schema/op_rules.h: the template at the end), so nothing here names it; LRN and
// NMS, whose runtime prepare builds a descriptor or sizes a workspace, have their own call. An
// op type with its own IR attribute struct and no call here is a compile error.
struct NodeKernelCall {
  const Handle& h;
  const ir::Graph& g;
  const ir::Node& n;
  const std::vector<void*>& ptr;
  const ScratchFn& scratch;
  const ir::Tensor& ty;
  const TensorDesc y;
  void* yp;

  void* in(size_t k) const { return ptr[n.inputs[k]]; }
  TensorDesc in_desc(size_t k) const { return g.tensors[n.inputs[k]].desc(); }

  Status operator()(const ir::ConvAttrs& a) const {
    const TensorDesc x = in_desc(0);
    const ir::Tensor& tw = g.tensors[n.inputs[1]];
    const ConvDesc cd = ir::conv_desc(a, x.rank() - 2);
    const FilterDesc wd = FilterDesc::make(tw.dtype, FilterLayout::KCRS, x.rank(), tw.dims.data());
    // The writer stores Auto with PREFER_FASTEST: the runtime asks the same heuristic.
    ConvAlgo algo = ConvAlgo::DIRECT;
    Status st = choose_conv_forward_algo(h, x, wd, cd, y, ConvPreference::PREFER_FASTEST, 0, &algo);
    size_t ws_bytes = 0;
    if (st.ok()) st = conv_forward_workspace_size(h, x, wd, cd, y, algo, &ws_bytes);
    if (!st.ok()) return st;
    void* ws = ws_bytes ? scratch(ws_bytes) : nullptr;
    size_t next = 2;
    const void* bias = nullptr;
    TensorDesc bias_desc;
    if (a.has_bias) {
      bias_desc = channel_bias(y.dtype(), y.rank(), y.dim(1));
      bias = in(next++);
    }
    const void* z = a.has_residual ? in(next) : nullptr;
    const TensorDesc z_desc = a.has_residual ? in_desc(next) : y;
    return conv_bias_act_forward(h, 1.f, x, in(0), wd, in(1), cd, algo, ws, ws_bytes, 1.f, z_desc, z, bias_desc,
                                 bias, a.act, y, yp);
  }

  Status operator()(const ir::PoolAttrs& a) const {
    const TensorDesc x = in_desc(0);
    const PoolDesc pd = PoolDesc::make(a.mode, x.rank() - 2, a.window.data(), ptr_or_null(a.pad_begin),
                                       ptr_or_null(a.pad_end), ptr_or_null(a.strides), nullptr, a.ceil_mode);
    return pool_forward(h, pd, 1.f, x, in(0), 0.f, y, yp);
  }

  Status operator()(const ir::GlobalPoolAttrs& a) const {
    const TensorDesc x = in_desc(0);
    return pool_forward(h, PoolDesc::global(a.mode, x.rank() - 2), 1.f, x, in(0), 0.f, y, yp);
  }

  Status operator()(const ir::ActivationAttrs& a) const {
    return activation_forward(h, a.act, 1.f, in_desc(0), in(0), 0.f, y, yp);
  }

  Status operator()(const ir::OpTensorAttrs& a) const {
    return op_tensor(h, a.op, 1.f, in_desc(0), in(0), 1.f, in_desc(1), in(1), 0.f, y, yp);
  }

  Status operator()(const ir::GemmAttrs& a) const {
    GemmDesc gd;
    gd.trans_a = a.trans_a;
    gd.trans_b = a.trans_b;
    TensorDesc bias_desc;
    const void* bias = nullptr;
    if (a.has_bias) {  // broadcast: leading 1s up to y's rank
      const ir::Tensor& tb = g.tensors[n.inputs[2]];
      std::vector<int64_t> bdims = tb.dims;
      while (static_cast<int>(bdims.size()) < y.rank()) bdims.insert(bdims.begin(), 1);
      bias_desc = TensorDesc::packed(tb.dtype, static_cast<int>(bdims.size()), bdims.data());
      bias = in(2);
    }
    return gemm_forward(h, gd, 1.f, in_desc(0), in(0), in_desc(1), in(1), bias_desc, bias, 0.f, y, yp);
  }

  Status operator()(const ir::SoftmaxAttrs& a) const {
    return softmax_forward(h, a.algo, SoftmaxMode::CHANNEL, 1.f, softmax_view(in_desc(0), a.axis), in(0), 0.f,
                           softmax_view(y, a.axis), yp);
  }

  Status operator()(const ir::ConcatAttrs& a) const {
    std::vector<TensorDesc> xd;
    std::vector<const void*> xp;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      xd.push_back(in_desc(k));
      xp.push_back(in(k));
    }
    return concat_forward(h, a.axis, static_cast<int>(xd.size()), xd.data(), xp.data(), 1.f, 0.f, y, yp);
  }

  Status operator()(const ir::ReshapeAttrs&) const {
    if (!g.tensors[n.inputs[0]].is_packed() || !ty.is_packed()) {
      return Status(StatusCode::BAD_PARAM, "reshape of a strided tensor");
    }
    if (in(0) == yp) return Status::success();  // in place: the bytes are already there
    const int64_t count = y.elements();
    return transform_tensor(h, 1.f, TensorDesc::packed(in_desc(0).dtype(), 1, &count), in(0), 0.f,
                            TensorDesc::packed(y.dtype(), 1, &count), yp);
  }

  Status operator()(const ir::BatchNormAttrs& a) const {
    const Status st = f32_params(g, n, 1, "batchnorm");
    if (!st.ok()) return st;
    return batchnorm_forward_inference(h, 1.f, 0.f, in_desc(0), in(0), y, yp, static_cast<const float*>(in(1)),
                                       static_cast<const float*>(in(2)), static_cast<const float*>(in(3)),
                                       static_cast<const float*>(in(4)), a.epsilon);
  }

  Status operator()(const ir::TransformAttrs&) const {
    return transform_tensor(h, 1.f, in_desc(0), in(0), 0.f, y, yp);
  }

  Status operator()(const ir::SliceAttrs& a) const {
    // One transform per output row (the last dim), each from a 1-D strided view of x: an
    // independent path to the runtime's single rank-n view.
    const TensorDesc x = in_desc(0);
    const int rank = x.rank();
    const size_t es = dtype_size(x.dtype());
    const int last = static_cast<int>(a.perm[rank - 1]);
    const int64_t row = y.dim(rank - 1);
    const int64_t xs = row == 1 ? x.stride(last) : x.stride(last) * a.steps[last];
    const TensorDesc src = TensorDesc::strided(x.dtype(), 1, &row, &xs);
    const int64_t ys = y.stride(rank - 1);
    const TensorDesc dst = TensorDesc::strided(y.dtype(), 1, &row, &ys);
    std::vector<int64_t> idx(rank, 0);
    for (int64_t r = 0; r < y.elements() / row; ++r) {
      int64_t xoff = a.starts[last] * x.stride(last), yoff = 0;
      for (int d = 0; d < rank - 1; ++d) {
        const int k = static_cast<int>(a.perm[d]);
        xoff += (a.starts[k] + idx[d] * a.steps[k]) * x.stride(k);
        yoff += idx[d] * y.stride(d);
      }
      const Status st = transform_tensor(h, 1.f, src, static_cast<const uint8_t*>(in(0)) + xoff * es, 0.f, dst,
                                         static_cast<uint8_t*>(yp) + yoff * es);
      if (!st.ok()) return st;
      for (int d = rank - 1; d-- > 0;) {
        if (++idx[d] < y.dim(d)) break;
        idx[d] = 0;
      }
    }
    return Status::success();
  }

  Status operator()(const ir::PadAttrs& a) const {
    return pad_forward(h, a.mode, a.pad_begin.data(), a.pad_end.data(), a.value, 1.f, in_desc(0), in(0), 0.f, y, yp);
  }

  Status operator()(const ir::ResizeAttrs& a) const {
    return resize_forward(h, ir::resize_desc(a), 1.f, in_desc(0), in(0), 0.f, y, yp);
  }

  Status operator()(const ir::ConvTransposeAttrs& a) const {
    const ir::Tensor& tw = g.tensors[n.inputs[1]];
    const int rank = y.rank();
    const ConvDesc cd = ir::conv_desc(a, rank - 2);
    const FilterDesc wd = FilterDesc::make(tw.dtype, FilterLayout::KCRS, rank, tw.dims.data());
    const Status st = conv_backward_data(h, 1.f, wd, in(1), in_desc(0), in(0), cd, 0.f, y, yp);
    if (!st.ok() || !a.has_bias) return st;
    return add_tensor(h, 1.f, channel_bias(y.dtype(), rank, y.dim(1)), in(2), 1.f, y, yp);
  }

  Status operator()(const ir::InstanceNormAttrs& a) const {
    const Status st = f32_params(g, n, 1, "instancenorm");
    if (!st.ok()) return st;
    return instancenorm_forward(h, 1.f, 0.f, in_desc(0), in(0), y, yp, static_cast<const float*>(in(1)),
                                static_cast<const float*>(in(2)), a.epsilon);
  }

  Status operator()(const fb::LrnParamsT& a) const {
    LrnDesc l;
    l.n = a.size;
    l.alpha = a.alpha;
    l.beta = a.beta;
    l.k = a.k;
    return lrn_cross_channel_forward(h, l, 1.f, in_desc(0), in(0), 0.f, y, yp);
  }

  Status operator()(const ir::ReduceAttrs& a) const {
    return reduce_forward(h, a.op, 1.f, in_desc(0), in(0), 0.f, y, yp);
  }

  Status operator()(const ir::LogicAttrs& a) const {
    return logic_tensor(h, a.op, in_desc(0), in(0), in_desc(1), in(1), y, yp);
  }

  Status operator()(const ir::WhereAttrs&) const {
    return where_forward(h, in_desc(0), in(0), in_desc(1), in(1), in_desc(2), in(2), y, yp);
  }

  Status operator()(const ir::ArgReduceAttrs& a) const {
    return arg_reduce_forward(h, a.op, a.axis, a.select_last_index, in_desc(0), in(0), y, yp);
  }

  Status operator()(const fb::NmsParamsT& a) const {
    NmsDesc d;
    d.center_point_box = a.center_point_box;
    d.max_output_boxes_per_class = a.max_output_boxes_per_class;
    d.iou_threshold = a.iou_threshold;
    d.has_score_threshold = a.has_score_threshold;
    d.score_threshold = a.score_threshold;
    size_t ws_bytes = 0;
    JET_RETURN_IF_ERROR(nms_workspace_size(h, d, in_desc(0), in_desc(1), &ws_bytes));
    void* ws = ws_bytes ? scratch(ws_bytes) : nullptr;
    return nms_forward(h, d, in_desc(0), in(0), in_desc(1), in(1), ws, ws_bytes, y, yp);
  }

  Status operator()(const ir::ScatterAttrs& a) const {
    if (a.nd) return scatter_nd_forward(h, a.reduction, in_desc(0), in(0), in_desc(1), in(1), in_desc(2), in(2), y, yp);
    return scatter_elements_forward(h, a.reduction, a.axis, in_desc(0), in(0), in_desc(1), in(1), in_desc(2), in(2),
                                    y, yp);
  }

  template <typename Table>
  Status operator()(const Table& a) const {
    static_assert(std::is_base_of<flatbuffers::NativeTable, Table>::value,
                  "an op type with its own IR attribute struct needs its kernel call in NodeKernelCall");
    std::vector<TensorDesc> descs;
    std::vector<const void*> inputs;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      descs.push_back(in_desc(k));
      inputs.push_back(in(k));
    }
    return rt::run_kernel(h, a, rt::KernelCall{descs.data(), inputs.data(), y, yp});
  }
};

}  // namespace

Status run_ir_node(const Handle& h, const ir::Graph& g, const ir::Node& n, const std::vector<void*>& ptr,
                   const ScratchFn& scratch) {
  const ir::Tensor& ty = g.tensors[n.outputs[0]];
  return std::visit(NodeKernelCall{h, g, n, ptr, scratch, ty, ty.desc(), ptr[n.outputs[0]]}, n.attrs);
}

namespace {

// The sample of each op type, by its attribute struct (default-constructed: the overloads build
// their own, the template takes the table's defaults). An op whose attributes are its schema
// table's struct and whose only input is x needs nothing here (the template); one with more
// inputs, or whose defaults do not make a valid node, has an overload. An op type with its own
// IR attribute struct and no overload is a compile error.
struct SampleNode {
  ir::Graph& g;
  SampleConstants& c;
  int x;
  int* y;

  Status operator()(const ir::ConvAttrs&) const {
    ir::ConvAttrs a;
    a.pad_begin = {1, 0};
    a.pad_end = {1, 2};
    a.strides = {2, 1};
    a.act = ActivationDesc::relu();
    const int w = c.uniform("w", {4, 3, 3, 3}, -1, 1), b = c.uniform("b", {4}, -1, 1);
    if (!c.status.ok()) return c.status;
    return g.conv("op", x, w, b, -1, a, y);
  }

  Status operator()(const ir::PoolAttrs&) const {
    return g.max_pool("op", x, 3, 2, 1, y);
  }

  Status operator()(const ir::GlobalPoolAttrs&) const {
    return g.global_avg_pool("op", x, y);
  }

  Status operator()(const ir::ActivationAttrs&) const {
    return g.activation("op", x, ActivationDesc::leaky_relu(0.1f), y);
  }

  Status operator()(const ir::OpTensorAttrs&) const {
    const int s = c.uniform("s", {1, 3, 1, 1}, -2, 2);
    if (!c.status.ok()) return c.status;
    return g.op_tensor("op", TensorOp::MUL, x, s, y);
  }

  Status operator()(const ir::GemmAttrs&) const {
    ir::GemmAttrs a;
    a.trans_b = true;
    const int w = c.uniform("w", {5, 6}, -1, 1), b = c.uniform("b", {5}, -1, 1);
    if (!c.status.ok()) return c.status;
    return g.gemm("op", x, w, b, a, y);
  }

  Status operator()(const ir::SoftmaxAttrs&) const {
    return g.softmax("op", x, 1, y);
  }

  Status operator()(const ir::ConcatAttrs&) const {
    const int b = c.uniform("c", {2, 2, 5, 7}, -1, 1);
    if (!c.status.ok()) return c.status;
    return g.concat("op", {x, b}, 1, y);
  }

  Status operator()(const ir::ReshapeAttrs&) const {
    return g.reshape("op", x, {2, -1}, y);
  }

  Status operator()(const ir::BatchNormAttrs&) const {
    const int scale = c.uniform("scale", {3}, 0.5f, 2), bias = c.uniform("bias", {3}, -1, 1),
              mean = c.uniform("mean", {3}, -1, 1), var = c.uniform("var", {3}, 0.5f, 2);
    if (!c.status.ok()) return c.status;
    return g.batchnorm("op", x, scale, bias, mean, var, 1e-5, y);
  }

  Status operator()(const ir::TransformAttrs&) const {
    return g.transform("op", x, DType::F16, y);
  }

  Status operator()(const ir::SliceAttrs&) const {
    ir::SliceAttrs a;
    a.starts = {1, 0, 1, 2};
    a.steps = {1, 2, 1, 2};
    a.sizes = {1, 2, 3, 3};
    a.perm = {0, 1, 3, 2};
    return g.slice("op", x, a, y);
  }

  Status operator()(const ir::PadAttrs&) const {
    ir::PadAttrs a;
    a.mode = PadMode::REFLECT;
    a.pad_begin = {0, 0, 2, -1};
    a.pad_end = {0, 1, 1, 3};
    return g.pad("op", x, a, y);
  }

  Status operator()(const ir::ResizeAttrs&) const {
    ir::ResizeAttrs a;
    a.mode = ResizeMode::LINEAR;
    return g.resize("op", x, a, {2, 3, 9, 4}, y);
  }

  Status operator()(const ir::ConvTransposeAttrs&) const {
    ir::ConvTransposeAttrs a;
    a.strides = {2, 1};
    const int w = c.uniform("w", {3, 2, 3, 2}, -1, 1), b = c.uniform("b", {2}, -1, 1);
    if (!c.status.ok()) return c.status;
    return g.conv_transpose("op", x, w, b, a, {11, 8}, y);
  }

  Status operator()(const ir::InstanceNormAttrs&) const {
    const int scale = c.uniform("scale", {3}, 0.5f, 2), bias = c.uniform("bias", {3}, -1, 1);
    if (!c.status.ok()) return c.status;
    return g.instancenorm("op", x, scale, bias, 1e-5, y);
  }

  Status operator()(const fb::LrnParamsT&) const {
    fb::LrnParamsT a;
    a.size = 3;
    a.k = 1.0;
    return g.add_op("op", {x}, a, y);
  }

  Status operator()(const ir::ReduceAttrs&) const {
    return g.reduce("op", x, ReduceOp::MEAN, {1, 3}, y);
  }

  Status operator()(const fb::LayerNormParamsT&) const {
    const int scale = c.uniform("scale", {5, 7}, 0.5f, 2), bias = c.uniform("bias", {35}, -1, 1);
    fb::LayerNormParamsT a;
    a.axis = 2;
    a.epsilon = 1e-5;
    a.has_scale = true;
    a.has_bias = true;
    if (!c.status.ok()) return c.status;
    return g.add_op("op", {x, scale, bias}, a, y);
  }

  Status operator()(const ir::LogicAttrs&) const {  // b of a lower rank: numpy's rank alignment
    const int b = c.uniform("b", {3, 1, 7}, -1, 1);
    if (!c.status.ok()) return c.status;
    return g.logic("op", LogicOp::LESS, x, b, y);
  }

  Status operator()(const ir::WhereAttrs&) const {
    const int cond = c.exact("cond", DType::BOOL, {5, 1}, {1, 0, 0, 1, 1}), b = c.uniform("b", {3, 1, 1}, -1, 1);
    if (!c.status.ok()) return c.status;
    return g.where("op", cond, x, b, y);
  }

  Status operator()(const ir::ArgReduceAttrs&) const {
    return g.arg_reduce("op", x, ArgReduceOp::ARGMIN, 2, true, y);
  }

  Status operator()(const fb::GatherParamsT&) const {  // indices of rank 2, negative ones too
    const int idx = c.exact("idx", DType::I64, {2, 2}, {4, -1, 0, -5});
    fb::GatherParamsT a;
    a.axis = 2;
    if (!c.status.ok()) return c.status;
    return g.add_op("op", {x, idx}, a, y);
  }

  Status operator()(const fb::TopKParamsT&) const {  // the indices of the 4 smallest along the last axis
    fb::TopKParamsT a;
    a.axis = 3;
    a.k = 4;
    a.largest = false;
    a.indices = true;
    return g.add_op("op", {x}, a, y);
  }

  Status operator()(const fb::NmsParamsT&) const {  // random boxes, 3 classes, at most 2 per class, a score threshold
    fb::NmsParamsT a;
    a.max_output_boxes_per_class = 2;
    a.iou_threshold = 0.3f;
    a.has_score_threshold = true;
    a.score_threshold = -0.5f;
    const int scores = c.uniform("scores", {2, 3, 7}, -1, 1);
    if (!c.status.ok()) return c.status;
    return g.add_op("op", {x, scores}, a, y);
  }

  Status operator()(const fb::GatherElementsParamsT&) const {  // indices smaller than x at dim 1, negative ones too
    std::vector<int64_t> v;
    for (int i = 0; i < 2 * 2 * 4 * 7; ++i) v.push_back(i % 9 - 4);
    const int idx = c.exact("idx", DType::I64, {2, 2, 4, 7}, v);
    fb::GatherElementsParamsT a;
    a.axis = 2;
    if (!c.status.ok()) return c.status;
    return g.add_op("op", {x, idx}, a, y);
  }

  Status operator()(const fb::CumSumParamsT&) const {
    fb::CumSumParamsT a;
    a.axis = 1;
    a.exclusive = true;
    a.reverse = true;
    return g.add_op("op", {x}, a, y);
  }

  Status operator()(const ir::ScatterAttrs&) const {  // ScatterND, slices x[i, j, :, :] accumulated (duplicate tuples too)
    const int idx = c.exact("idx", DType::I64, {3, 2}, {1, 2, 0, -1, 1, 2}), upd = c.uniform("upd", {3, 5, 7}, -1, 1);
    if (!c.status.ok()) return c.status;
    return g.scatter("op", x, idx, upd, true, ScatterReduction::ADD, 0, y);
  }

  template <typename Table>
  Status operator()(const Table& defaults) const {
    static_assert(std::is_base_of<flatbuffers::NativeTable, Table>::value,
                  "an op type with its own IR attribute struct needs its sample in SampleNode");
    return g.add_op("op", {x}, defaults, y);
  }
};

}  // namespace

Status op_sample_graph(ir::OpType op, ir::Graph* out) {
  ir::Graph& g = *out;
  SampleConstants c(g);
  int x = -1, y = -1;
  const std::vector<int64_t> xdims = op == ir::OpType::GEMM  ? std::vector<int64_t>{3, 6}
                                     : op == ir::OpType::NMS ? std::vector<int64_t>{2, 7, 4}  // boxes
                                                             : std::vector<int64_t>{2, 3, 5, 7};
  JET_RETURN_IF_ERROR(g.add_input("x", DType::F32, xdims, &x));
  ir::NodeAttrs attrs;  // op's alternative, default-constructed
  switch (op) {
#define JET_SAMPLE_ATTRS(ENUM, fn, Attrs, Params, name, in_place, layout, f32_params, dtypes, backward, inputs) \
  case ir::OpType::ENUM:                                                                                        \
    attrs.emplace<static_cast<size_t>(ir::OpType::ENUM)>();                                                     \
    break;
    JET_OPS(JET_SAMPLE_ATTRS)
#undef JET_SAMPLE_ATTRS
    case ir::OpType::COUNT: return Status(StatusCode::BAD_PARAM, "op_sample_graph: COUNT is not an op type");
  }
  const Status st = std::visit(SampleNode{g, c, x, &y}, attrs);
  JET_RETURN_IF_ERROR(c.status);
  JET_RETURN_IF_ERROR(st);
  return g.mark_output(y);
}

}  // namespace test
}  // namespace jet
