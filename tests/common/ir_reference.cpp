#include "common/ir_reference.h"

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

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

}  // namespace

Status run_ir_node(const Handle& h, const ir::Graph& g, const ir::Node& n, const std::vector<void*>& ptr,
                   const ScratchFn& scratch) {
  const ir::Tensor& ty = g.tensors[n.outputs[0]];
  const TensorDesc y = ty.desc();
  void* yp = ptr[n.outputs[0]];
  auto in = [&](size_t k) { return ptr[n.inputs[k]]; };
  auto in_desc = [&](size_t k) { return g.tensors[n.inputs[k]].desc(); };
  switch (n.op) {
    case ir::OpType::CONV: {
      const ir::ConvAttrs& a = std::get<ir::ConvAttrs>(n.attrs);
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
    case ir::OpType::POOL: {
      const ir::PoolAttrs& a = std::get<ir::PoolAttrs>(n.attrs);
      const TensorDesc x = in_desc(0);
      const PoolDesc pd = PoolDesc::make(a.mode, x.rank() - 2, a.window.data(), ptr_or_null(a.pad_begin),
                                         ptr_or_null(a.pad_end), ptr_or_null(a.strides), nullptr, a.ceil_mode);
      return pool_forward(h, pd, 1.f, x, in(0), 0.f, y, yp);
    }
    case ir::OpType::GLOBAL_POOL: {
      const ir::GlobalPoolAttrs& a = std::get<ir::GlobalPoolAttrs>(n.attrs);
      const TensorDesc x = in_desc(0);
      return pool_forward(h, PoolDesc::global(a.mode, x.rank() - 2), 1.f, x, in(0), 0.f, y, yp);
    }
    case ir::OpType::ACTIVATION:
      return activation_forward(h, std::get<ir::ActivationAttrs>(n.attrs).act, 1.f, in_desc(0), in(0), 0.f, y, yp);
    case ir::OpType::OP_TENSOR:
      return op_tensor(h, std::get<ir::OpTensorAttrs>(n.attrs).op, 1.f, in_desc(0), in(0), 1.f, in_desc(1), in(1),
                       0.f, y, yp);
    case ir::OpType::GEMM: {
      const ir::GemmAttrs& a = std::get<ir::GemmAttrs>(n.attrs);
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
    case ir::OpType::SOFTMAX: {
      const ir::SoftmaxAttrs& a = std::get<ir::SoftmaxAttrs>(n.attrs);
      return softmax_forward(h, a.algo, SoftmaxMode::CHANNEL, 1.f, softmax_view(in_desc(0), a.axis), in(0), 0.f,
                             softmax_view(y, a.axis), yp);
    }
    case ir::OpType::CONCAT: {
      std::vector<TensorDesc> xd;
      std::vector<const void*> xp;
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        xd.push_back(in_desc(k));
        xp.push_back(in(k));
      }
      return concat_forward(h, std::get<ir::ConcatAttrs>(n.attrs).axis, static_cast<int>(xd.size()), xd.data(),
                            xp.data(), 1.f, 0.f, y, yp);
    }
    case ir::OpType::RESHAPE: {
      if (!g.tensors[n.inputs[0]].is_packed() || !ty.is_packed()) {
        return Status(StatusCode::BAD_PARAM, "reshape of a strided tensor");
      }
      if (in(0) == yp) return Status::success();  // in place: the bytes are already there
      const int64_t count = y.elements();
      return transform_tensor(h, 1.f, TensorDesc::packed(in_desc(0).dtype(), 1, &count), in(0), 0.f,
                              TensorDesc::packed(y.dtype(), 1, &count), yp);
    }
    case ir::OpType::BATCHNORM: {
      const Status st = f32_params(g, n, 1, "batchnorm");
      if (!st.ok()) return st;
      return batchnorm_forward_inference(h, 1.f, 0.f, in_desc(0), in(0), y, yp, static_cast<const float*>(in(1)),
                                         static_cast<const float*>(in(2)), static_cast<const float*>(in(3)),
                                         static_cast<const float*>(in(4)),
                                         std::get<ir::BatchNormAttrs>(n.attrs).epsilon);
    }
    case ir::OpType::TRANSFORM:
      return transform_tensor(h, 1.f, in_desc(0), in(0), 0.f, y, yp);
    case ir::OpType::SLICE: {
      // One transform per output row (the last dim), each from a 1-D strided view of x: an
      // independent path to the runtime's single rank-n view.
      const ir::SliceAttrs& a = std::get<ir::SliceAttrs>(n.attrs);
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
    case ir::OpType::PAD: {
      const ir::PadAttrs& a = std::get<ir::PadAttrs>(n.attrs);
      return pad_forward(h, a.mode, a.pad_begin.data(), a.pad_end.data(), a.value, 1.f, in_desc(0), in(0), 0.f, y,
                         yp);
    }
    case ir::OpType::RESIZE:
      return resize_forward(h, ir::resize_desc(std::get<ir::ResizeAttrs>(n.attrs)), 1.f, in_desc(0), in(0), 0.f, y,
                            yp);
    case ir::OpType::CONV_TRANSPOSE: {
      const ir::ConvTransposeAttrs& a = std::get<ir::ConvTransposeAttrs>(n.attrs);
      const ir::Tensor& tw = g.tensors[n.inputs[1]];
      const int rank = y.rank();
      const ConvDesc cd = ir::conv_desc(a, rank - 2);
      const FilterDesc wd = FilterDesc::make(tw.dtype, FilterLayout::KCRS, rank, tw.dims.data());
      const Status st = conv_backward_data(h, 1.f, wd, in(1), in_desc(0), in(0), cd, 0.f, y, yp);
      if (!st.ok() || !a.has_bias) return st;
      return add_tensor(h, 1.f, channel_bias(y.dtype(), rank, y.dim(1)), in(2), 1.f, y, yp);
    }
    case ir::OpType::INSTANCENORM: {
      const Status st = f32_params(g, n, 1, "instancenorm");
      if (!st.ok()) return st;
      return instancenorm_forward(h, 1.f, 0.f, in_desc(0), in(0), y, yp, static_cast<const float*>(in(1)),
                                  static_cast<const float*>(in(2)), std::get<ir::InstanceNormAttrs>(n.attrs).epsilon);
    }
    case ir::OpType::LAYERNORM: {
      const Status st = f32_params(g, n, 1, "layernorm");
      if (!st.ok()) return st;
      const fb::LayerNormParamsT& a = std::get<fb::LayerNormParamsT>(n.attrs);
      const float* scale = a.has_scale ? static_cast<const float*>(in(1)) : nullptr;
      const float* bias = a.has_bias ? static_cast<const float*>(in(a.has_scale ? 2 : 1)) : nullptr;
      return layernorm_forward(h, a.axis, 1.f, 0.f, in_desc(0), in(0), y, yp, scale, bias, a.epsilon);
    }
    case ir::OpType::LRN: {
      const fb::LrnParamsT& a = std::get<fb::LrnParamsT>(n.attrs);
      LrnDesc l;
      l.n = a.size;
      l.alpha = a.alpha;
      l.beta = a.beta;
      l.k = a.k;
      return lrn_cross_channel_forward(h, l, 1.f, in_desc(0), in(0), 0.f, y, yp);
    }
    case ir::OpType::REDUCE:
      return reduce_forward(h, std::get<ir::ReduceAttrs>(n.attrs).op, 1.f, in_desc(0), in(0), 0.f, y, yp);
    case ir::OpType::LOGIC:
      return logic_tensor(h, std::get<ir::LogicAttrs>(n.attrs).op, in_desc(0), in(0), in_desc(1), in(1), y, yp);
    case ir::OpType::WHERE:
      return where_forward(h, in_desc(0), in(0), in_desc(1), in(1), in_desc(2), in(2), y, yp);
    case ir::OpType::ARG_REDUCE: {
      const ir::ArgReduceAttrs& a = std::get<ir::ArgReduceAttrs>(n.attrs);
      return arg_reduce_forward(h, a.op, a.axis, a.select_last_index, in_desc(0), in(0), y, yp);
    }
    case ir::OpType::GATHER:
      return gather_forward(h, std::get<fb::GatherParamsT>(n.attrs).axis, in_desc(0), in(0), in_desc(1), in(1), y, yp);
    case ir::OpType::TOPK: {
      const fb::TopKParamsT& a = std::get<fb::TopKParamsT>(n.attrs);
      return topk_forward(h, a.axis, a.k, a.largest, in_desc(0), in(0), y, a.indices ? nullptr : yp, y,
                          a.indices ? yp : nullptr);
    }
    case ir::OpType::NMS: {
      const fb::NmsParamsT& a = std::get<fb::NmsParamsT>(n.attrs);
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
    case ir::OpType::GATHER_ELEMENTS:
      return gather_elements_forward(h, std::get<fb::GatherElementsParamsT>(n.attrs).axis, in_desc(0), in(0),
                                     in_desc(1), in(1), y, yp);
    case ir::OpType::TRILU: {
      const fb::TriluParamsT& a = std::get<fb::TriluParamsT>(n.attrs);
      return trilu_forward(h, a.upper, a.k, in_desc(0), in(0), y, yp);
    }
    case ir::OpType::CUMSUM: {
      const fb::CumSumParamsT& a = std::get<fb::CumSumParamsT>(n.attrs);
      return cumsum_forward(h, a.axis, a.exclusive, a.reverse, in_desc(0), in(0), y, yp);
    }
    case ir::OpType::SCATTER: {
      const ir::ScatterAttrs& a = std::get<ir::ScatterAttrs>(n.attrs);
      if (a.nd) return scatter_nd_forward(h, a.reduction, in_desc(0), in(0), in_desc(1), in(1), in_desc(2), in(2), y, yp);
      return scatter_elements_forward(h, a.reduction, a.axis, in_desc(0), in(0), in_desc(1), in(1), in_desc(2), in(2),
                                      y, yp);
    }
    case ir::OpType::COUNT:
      break;
  }
  return Status(StatusCode::NOT_SUPPORTED, std::string("reference executor: no kernel call for op ") +
                                               ir::op_type_name(n.op));
}

// The samples: one switch over every op type, as run_ir_node's, with no default.
Status op_sample_graph(ir::OpType op, ir::Graph* out) {
  ir::Graph& g = *out;
  SampleConstants c(g);
  int x = -1, y = -1;
  const std::vector<int64_t> xdims = op == ir::OpType::GEMM  ? std::vector<int64_t>{3, 6}
                                     : op == ir::OpType::NMS ? std::vector<int64_t>{2, 7, 4}  // boxes
                                                             : std::vector<int64_t>{2, 3, 5, 7};
  JET_RETURN_IF_ERROR(g.add_input("x", DType::F32, xdims, &x));
  Status st;
  switch (op) {
    case ir::OpType::CONV: {
      ir::ConvAttrs a;
      a.pad_begin = {1, 0};
      a.pad_end = {1, 2};
      a.strides = {2, 1};
      a.act = ActivationDesc::relu();
      const int w = c.uniform("w", {4, 3, 3, 3}, -1, 1), b = c.uniform("b", {4}, -1, 1);
      if (c.status.ok()) st = g.conv("op", x, w, b, -1, a, &y);
      break;
    }
    case ir::OpType::POOL: st = g.max_pool("op", x, 3, 2, 1, &y); break;
    case ir::OpType::GLOBAL_POOL: st = g.global_avg_pool("op", x, &y); break;
    case ir::OpType::ACTIVATION: st = g.activation("op", x, ActivationDesc::leaky_relu(0.1f), &y); break;
    case ir::OpType::OP_TENSOR: {
      const int s = c.uniform("s", {1, 3, 1, 1}, -2, 2);
      if (c.status.ok()) st = g.op_tensor("op", TensorOp::MUL, x, s, &y);
      break;
    }
    case ir::OpType::GEMM: {
      ir::GemmAttrs a;
      a.trans_b = true;
      const int w = c.uniform("w", {5, 6}, -1, 1), b = c.uniform("b", {5}, -1, 1);
      if (c.status.ok()) st = g.gemm("op", x, w, b, a, &y);
      break;
    }
    case ir::OpType::SOFTMAX: st = g.softmax("op", x, 1, &y); break;
    case ir::OpType::CONCAT: {
      const int b = c.uniform("c", {2, 2, 5, 7}, -1, 1);
      if (c.status.ok()) st = g.concat("op", {x, b}, 1, &y);
      break;
    }
    case ir::OpType::RESHAPE: st = g.reshape("op", x, {2, -1}, &y); break;
    case ir::OpType::BATCHNORM: {
      const int scale = c.uniform("scale", {3}, 0.5f, 2), bias = c.uniform("bias", {3}, -1, 1),
                mean = c.uniform("mean", {3}, -1, 1), var = c.uniform("var", {3}, 0.5f, 2);
      if (c.status.ok()) st = g.batchnorm("op", x, scale, bias, mean, var, 1e-5, &y);
      break;
    }
    case ir::OpType::TRANSFORM: st = g.transform("op", x, DType::F16, &y); break;
    case ir::OpType::SLICE: {
      ir::SliceAttrs a;
      a.starts = {1, 0, 1, 2};
      a.steps = {1, 2, 1, 2};
      a.sizes = {1, 2, 3, 3};
      a.perm = {0, 1, 3, 2};
      st = g.slice("op", x, a, &y);
      break;
    }
    case ir::OpType::PAD: {
      ir::PadAttrs a;
      a.mode = PadMode::REFLECT;
      a.pad_begin = {0, 0, 2, -1};
      a.pad_end = {0, 1, 1, 3};
      st = g.pad("op", x, a, &y);
      break;
    }
    case ir::OpType::RESIZE: {
      ir::ResizeAttrs a;
      a.mode = ResizeMode::LINEAR;
      st = g.resize("op", x, a, {2, 3, 9, 4}, &y);
      break;
    }
    case ir::OpType::CONV_TRANSPOSE: {
      ir::ConvTransposeAttrs a;
      a.strides = {2, 1};
      const int w = c.uniform("w", {3, 2, 3, 2}, -1, 1), b = c.uniform("b", {2}, -1, 1);
      if (c.status.ok()) st = g.conv_transpose("op", x, w, b, a, {11, 8}, &y);
      break;
    }
    case ir::OpType::INSTANCENORM: {
      const int scale = c.uniform("scale", {3}, 0.5f, 2), bias = c.uniform("bias", {3}, -1, 1);
      if (c.status.ok()) st = g.instancenorm("op", x, scale, bias, 1e-5, &y);
      break;
    }
    case ir::OpType::LRN: {
      fb::LrnParamsT a;
      a.size = 3;
      a.k = 1.0;
      st = g.add_op("op", {x}, a, &y);
      break;
    }
    case ir::OpType::REDUCE: st = g.reduce("op", x, ReduceOp::MEAN, {1, 3}, &y); break;
    case ir::OpType::LAYERNORM: {
      const int scale = c.uniform("scale", {5, 7}, 0.5f, 2), bias = c.uniform("bias", {35}, -1, 1);
      fb::LayerNormParamsT a;
      a.axis = 2;
      a.epsilon = 1e-5;
      a.has_scale = true;
      a.has_bias = true;
      if (c.status.ok()) st = g.add_op("op", {x, scale, bias}, a, &y);
      break;
    }
    case ir::OpType::LOGIC: {  // b of a lower rank: numpy's rank alignment
      const int b = c.uniform("b", {3, 1, 7}, -1, 1);
      if (c.status.ok()) st = g.logic("op", LogicOp::LESS, x, b, &y);
      break;
    }
    case ir::OpType::WHERE: {
      const int cond = c.exact("cond", DType::BOOL, {5, 1}, {1, 0, 0, 1, 1}), b = c.uniform("b", {3, 1, 1}, -1, 1);
      if (c.status.ok()) st = g.where("op", cond, x, b, &y);
      break;
    }
    case ir::OpType::ARG_REDUCE: st = g.arg_reduce("op", x, ArgReduceOp::ARGMIN, 2, true, &y); break;
    case ir::OpType::GATHER: {  // indices of rank 2, negative ones too
      const int idx = c.exact("idx", DType::I64, {2, 2}, {4, -1, 0, -5});
      fb::GatherParamsT a;
      a.axis = 2;
      if (c.status.ok()) st = g.add_op("op", {x, idx}, a, &y);
      break;
    }
    case ir::OpType::TOPK: {  // the indices of the 4 smallest along the last axis
      fb::TopKParamsT a;
      a.axis = 3;
      a.k = 4;
      a.largest = false;
      a.indices = true;
      st = g.add_op("op", {x}, a, &y);
      break;
    }
    case ir::OpType::NMS: {  // random boxes, 3 classes, at most 2 per class, a score threshold
      fb::NmsParamsT a;
      a.max_output_boxes_per_class = 2;
      a.iou_threshold = 0.3f;
      a.has_score_threshold = true;
      a.score_threshold = -0.5f;
      const int scores = c.uniform("scores", {2, 3, 7}, -1, 1);
      if (c.status.ok()) st = g.add_op("op", {x, scores}, a, &y);
      break;
    }
    case ir::OpType::GATHER_ELEMENTS: {  // indices smaller than x at dim 1, negative ones too
      std::vector<int64_t> v;
      for (int i = 0; i < 2 * 2 * 4 * 7; ++i) v.push_back(i % 9 - 4);
      const int idx = c.exact("idx", DType::I64, {2, 2, 4, 7}, v);
      fb::GatherElementsParamsT a;
      a.axis = 2;
      if (c.status.ok()) st = g.add_op("op", {x, idx}, a, &y);
      break;
    }
    case ir::OpType::TRILU: {
      fb::TriluParamsT a;
      a.upper = false;
      a.k = -1;
      st = g.add_op("op", {x}, a, &y);
      break;
    }
    case ir::OpType::CUMSUM: {
      fb::CumSumParamsT a;
      a.axis = 1;
      a.exclusive = true;
      a.reverse = true;
      st = g.add_op("op", {x}, a, &y);
      break;
    }
    case ir::OpType::SCATTER: {  // ScatterND, slices x[i, j, :, :] accumulated (duplicate tuples too)
      const int idx = c.exact("idx", DType::I64, {3, 2}, {1, 2, 0, -1, 1, 2}), upd = c.uniform("upd", {3, 5, 7}, -1, 1);
      if (c.status.ok()) st = g.scatter("op", x, idx, upd, true, ScatterReduction::ADD, 0, &y);
      break;
    }
    case ir::OpType::COUNT: return Status(StatusCode::BAD_PARAM, "op_sample_graph: COUNT is not an op type");
  }
  JET_RETURN_IF_ERROR(c.status);
  JET_RETURN_IF_ERROR(st);
  return g.mark_output(y);
}

}  // namespace test
}  // namespace jet
