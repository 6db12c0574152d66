// Ops that become IR nodes: convolution, pooling, activations, element-wise arithmetic with
// broadcasting, Gemm/MatMul, Softmax, BatchNormalization, Concat, Cast, reductions over the
// spatial dims, and a zero Pad folded into the Conv that reads it.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

#include "importer.h"

namespace jet {
namespace onnx_import {

namespace {

using TP = onnx::TensorProto;

// The dtype of the op's computed inputs (the first non-constant one); false when all are constant.
bool computed_dtype(const Importer& im, int first, int count, DType* dt) {
  for (int i = first; i < first + count && i < im.input_count(); ++i) {
    if (im.has_input(i) && !im.is_constant(i) && im.input(i).tensor >= 0) {
      *dt = im.g->tensors[im.input(i).tensor].dtype;
      return true;
    }
  }
  return false;
}

std::vector<int64_t> left_pad(const std::vector<int64_t>& dims, size_t rank) {
  std::vector<int64_t> r(rank - std::min(rank, dims.size()), 1);
  r.insert(r.end(), dims.begin(), dims.end());
  return r;
}

// Input i as an IR tensor of `dtype` with dims `dims` (same elements: a padded rank or a
// regrouping): constants are materialized with those dims, computed tensors reshaped.
Status operand(Importer& im, int i, DType dtype, const std::vector<int64_t>& dims, const std::string& suffix, int* t) {
  Status st = im.require_input(i, "operand");
  if (!st.ok()) return st;
  if (im.is_constant(i)) {
    const Constant& c = im.constant(i);
    if (c.is_int() && !dtype_is_float(dtype)) {
      // An integer operand of a computed integer tensor (ir_int_constant: ONNX types must match).
      int k = -1;
      st = im.ir_int_constant(im.input(i).constant, dtype, &k);
      if (!st.ok()) return st;
      return im.reshape_to(k, dims, suffix, t);
    }
    if (c.is_int()) return im.unsupported("integer input '" + im.input_name(i) + "' (only float tensors are computed)");
    return im.ir_constant(im.input(i).constant, dtype, dims, t);
  }
  int x = -1;
  st = im.ir_input(i, dtype, &x);
  if (!st.ok()) return st;
  return im.reshape_to(x, dims, suffix, t);
}

// A scalar constant of `rank` ones-dims.
Status scalar_constant(Importer& im, const std::string& suffix, DType dt, size_t rank, float value, int* t) {
  return im.ir_constant_values(im.ir_name(suffix), dt, std::vector<int64_t>(std::max<size_t>(rank, 1), 1), {value}, t);
}

// An activation of a constant is evaluated here, by the kernels' own formula (the CPU backend's
// activation_forward), so that shape arithmetic through float (Cast, Mul, Floor, Cast) stays
// constant for the ops that need constant inputs. Integer constants take the modes that are exact
// on integers.
Status fold_activation(Importer& im, const ActivationDesc& act) {
  Constant r = im.constant(0);
  if (r.is_int()) {
    const int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
    for (int64_t& v : r.ints) {
      if (v == kMin && (act.mode == ActivationMode::NEG || act.mode == ActivationMode::ABS))
        return im.bad(std::string(activation_mode_name(act.mode)) + " of " + std::to_string(v) + " overflows int64");
      switch (act.mode) {
        case ActivationMode::IDENTITY:
        case ActivationMode::FLOOR:
        case ActivationMode::CEIL:
        case ActivationMode::ROUND: break;
        case ActivationMode::NEG: v = -v; break;
        case ActivationMode::ABS: v = v < 0 ? -v : v; break;
        case ActivationMode::SIGN: v = (v > 0) - (v < 0); break;
        case ActivationMode::RELU: v = v < 0 ? 0 : v; break;
        case ActivationMode::CLIPPED_RELU:
        case ActivationMode::CLIP: {  // integer Clip bounds are exact in float; the range saturates
          const double lo = act.mode == ActivationMode::CLIP ? act.alpha : 0.0;
          const double hi = act.mode == ActivationMode::CLIP ? act.beta : act.alpha;
          const double d = static_cast<double>(v);
          const double b = d < lo ? std::ceil(lo) : (d > hi ? std::floor(hi) : d);
          if (b != d) v = b >= 9.2233720368547758e18 ? kMax : (b <= -9.2233720368547758e18 ? kMin : static_cast<int64_t>(b));
          break;
        }
        default:
          return im.unsupported(std::string(activation_mode_name(act.mode)) + " of an integer tensor");
      }
    }
    return im.folded(std::move(r));
  }
  if (!r.floats.empty()) {
    const TensorDesc d = TensorDesc::packed(DType::F32, {static_cast<int64_t>(r.floats.size())});
    const Status st = activation_forward(Handle::cpu(), act, 1.f, d, r.floats.data(), 0.f, d, r.floats.data());
    if (!st.ok()) return im.bad(st.message());
  }
  return im.folded(std::move(r));
}

Status activation(Importer& im, const ActivationDesc& act) {
  Status st = im.require_input(0, "X");
  if (!st.ok()) return st;
  if (im.is_constant(0)) return fold_activation(im, act);
  int x = -1, y = -1;
  st = im.ir_input(0, &x);
  if (!st.ok()) return st;
  st = im.ir_check(im.g->activation(im.ir_name(), x, act, &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

// Spatial pads from auto_pad (NOTSET: the `pads` attribute). `window` is the dilated window extent.
Status resolve_pads(Importer& im, const std::vector<int64_t>& in, const std::vector<int64_t>& window,
                    const std::vector<int64_t>& strides, std::vector<int64_t>* begin, std::vector<int64_t>* end) {
  const size_t sr = in.size();
  std::string auto_pad;
  std::vector<int64_t> pads;
  Status st = im.attr_string("auto_pad", "NOTSET", &auto_pad);
  if (st.ok()) st = im.attr_ints("pads", &pads);
  if (!st.ok()) return st;
  begin->assign(sr, 0);
  end->assign(sr, 0);
  if (auto_pad == "NOTSET") {
    if (pads.empty()) return Status::success();
    if (pads.size() != 2 * sr) return im.bad("pads has " + std::to_string(pads.size()) + " entries, expected " + std::to_string(2 * sr));
    for (size_t d = 0; d < sr; ++d) {
      (*begin)[d] = pads[d];
      (*end)[d] = pads[d + sr];
    }
    return Status::success();
  }
  if (auto_pad == "VALID") return Status::success();
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") return im.bad("unknown auto_pad '" + auto_pad + "'");
  for (size_t d = 0; d < sr; ++d) {
    // SAME: the output is ceil(in / stride); the extra padding goes to the end (UPPER) or the
    // beginning (LOWER).
    const int64_t out = (in[d] + strides[d] - 1) / strides[d];
    const int64_t total = std::max<int64_t>(0, (out - 1) * strides[d] + window[d] - in[d]);
    const int64_t small = total / 2, large = total - small;
    (*begin)[d] = auto_pad == "SAME_UPPER" ? small : large;
    (*end)[d] = auto_pad == "SAME_UPPER" ? large : small;
  }
  return Status::success();
}

// kernel-sized attribute lists: `name` with sr entries, or all `def` when absent.
Status spatial_attr(Importer& im, const char* name, size_t sr, int64_t def, std::vector<int64_t>* out) {
  Status st = im.attr_ints(name, out);
  if (!st.ok()) return st;
  if (out->empty()) {
    out->assign(sr, def);
  } else if (out->size() != sr) {
    return im.bad(std::string(name) + " has " + std::to_string(out->size()) + " entries, expected " + std::to_string(sr));
  }
  return Status::success();
}

Status spatial_rank(Importer& im, int x, size_t* sr) {
  const size_t rank = im.g->tensors[x].dims.size();
  if (rank < 3 || rank > 5) {
    return im.unsupported("input of rank " + std::to_string(rank) + " (N, C and 1 to 3 spatial dims are supported)");
  }
  *sr = rank - 2;
  return Status::success();
}

// Input 0 as an IR tensor (`x`) of N, C and 1 to 3 spatial dims (`sr` of them).
Status spatial_input(Importer& im, int* x, size_t* sr) {
  Status st = im.ir_input(0, x);
  if (!st.ok()) return st;
  return spatial_rank(im, *x, sr);
}

}  // namespace

// ---- convolution and pooling ----------------------------------------------------------------------

Status import_conv(Importer& im) {
  Status st = im.require_input(0, "X");
  if (st.ok()) st = im.require_input(1, "W");
  if (!st.ok()) return st;
  const Value xv = im.input(0);
  int x = -1;
  if (xv.pending_pad) {
    x = xv.tensor;
  } else {
    st = im.ir_input(0, &x);
    if (!st.ok()) return st;
  }
  size_t sr = 0;
  st = spatial_rank(im, x, &sr);
  if (!st.ok()) return st;
  const DType dt = im.g->tensors[x].dtype;
  const Constant* wc = nullptr;
  st = im.constant_input(1, "weight", &wc);
  if (!st.ok()) return st;
  if (wc->dims.size() != sr + 2) return im.bad("W has dims " + dims_text(wc->dims) + ", expected rank " + std::to_string(sr + 2));
  std::vector<int64_t> kernel, strides, dilations;
  st = im.attr_ints("kernel_shape", &kernel);
  if (st.ok() && !kernel.empty() && kernel != std::vector<int64_t>(wc->dims.begin() + 2, wc->dims.end())) {
    st = im.bad("kernel_shape " + dims_text(kernel) + " differs from W's dims " + dims_text(wc->dims));
  }
  int64_t group = 1;
  if (st.ok()) st = spatial_attr(im, "strides", sr, 1, &strides);
  if (st.ok()) st = spatial_attr(im, "dilations", sr, 1, &dilations);
  if (st.ok()) st = im.attr_int("group", 1, &group);
  if (!st.ok()) return st;
  for (size_t d = 0; d < sr; ++d) {
    if (strides[d] < 1 || dilations[d] < 1) return im.bad("strides and dilations must be >= 1");
  }
  std::vector<int64_t> in(im.g->tensors[x].dims.begin() + 2, im.g->tensors[x].dims.end()), window(sr);
  for (size_t d = 0; d < sr; ++d) {
    window[d] = (wc->dims[d + 2] - 1) * dilations[d] + 1;
    if (xv.pending_pad) in[d] += xv.pad_begin[d] + xv.pad_end[d];
  }
  ir::ConvAttrs a;
  st = resolve_pads(im, in, window, strides, &a.pad_begin, &a.pad_end);
  if (!st.ok()) return st;
  if (xv.pending_pad) {
    for (size_t d = 0; d < sr; ++d) {
      a.pad_begin[d] += xv.pad_begin[d];
      a.pad_end[d] += xv.pad_end[d];
    }
    ++im.folded_ops["Pad"];
  }
  a.strides = strides;
  a.dilations = dilations;
  a.groups = group;
  int w = -1, bias = -1, y = -1;
  st = im.ir_constant(im.input(1).constant, dt, {}, &w);
  if (!st.ok()) return st;
  if (im.has_input(2)) {
    const Constant* bc = nullptr;
    st = im.constant_input(2, "bias", &bc);
    if (!st.ok()) return st;
    if (bc->elements() != wc->dims[0]) {
      return im.bad("B has dims " + dims_text(bc->dims) + ", expected " + std::to_string(wc->dims[0]) + " values (one per output channel)");
    }
    st = im.ir_constant(im.input(2).constant, dt, {wc->dims[0]}, &bias);
    if (!st.ok()) return st;
  }
  st = im.ir_check(im.g->conv(im.ir_name(), x, w, bias, -1, a, &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

namespace {

Status pool(Importer& im, bool average) {
  int x = -1;
  size_t sr = 0;
  Status st = spatial_input(im, &x, &sr);
  if (!st.ok()) return st;
  st = im.only_outputs_below(1);  // MaxPool's Indices
  if (!st.ok()) return st;
  ir::PoolAttrs a;
  std::vector<int64_t> dilations;
  int64_t ceil_mode = 0, include_pad = 0;
  st = im.attr_ints("kernel_shape", &a.window);
  if (st.ok() && a.window.size() != sr) {
    st = im.bad("kernel_shape has " + std::to_string(a.window.size()) + " entries, expected " + std::to_string(sr));
  }
  if (st.ok()) st = spatial_attr(im, "strides", sr, 1, &a.strides);
  if (st.ok()) st = spatial_attr(im, "dilations", sr, 1, &dilations);
  if (st.ok()) st = im.attr_int("ceil_mode", 0, &ceil_mode);
  if (st.ok() && average) st = im.attr_int("count_include_pad", 0, &include_pad);
  if (!st.ok()) return st;
  for (size_t d = 0; d < sr; ++d) {
    if (dilations[d] != 1) return im.unsupported("pooling with dilations is not in the IR yet");
    if (a.strides[d] < 1 || a.window[d] < 1) return im.bad("kernel_shape and strides must be >= 1");
  }
  const std::vector<int64_t> in(im.g->tensors[x].dims.begin() + 2, im.g->tensors[x].dims.end());
  st = resolve_pads(im, in, a.window, a.strides, &a.pad_begin, &a.pad_end);
  if (!st.ok()) return st;
  a.mode = !average ? PoolMode::MAX : include_pad ? PoolMode::AVG_INCLUDE_PAD : PoolMode::AVG_EXCLUDE_PAD;
  a.ceil_mode = ceil_mode != 0;
  int y = -1;
  st = im.ir_check(im.g->pool(im.ir_name(), x, a, &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

Status global_pool(Importer& im, PoolMode mode) {
  int x = -1, y = -1;
  size_t sr = 0;
  Status st = spatial_input(im, &x, &sr);
  if (!st.ok()) return st;
  st = im.ir_check(im.g->global_pool(im.ir_name(), x, mode, &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

}  // namespace

Status import_max_pool(Importer& im) { return pool(im, false); }
Status import_average_pool(Importer& im) { return pool(im, true); }
Status import_global_average_pool(Importer& im) { return global_pool(im, PoolMode::AVG_INCLUDE_PAD); }
Status import_global_max_pool(Importer& im) { return global_pool(im, PoolMode::MAX); }

// ---- activations ----------------------------------------------------------------------------------

Status import_activation_mode(Importer& im, ActivationMode mode) {
  DType dt = DType::F32;
  if ((mode == ActivationMode::NEG || mode == ActivationMode::ABS) && computed_dtype(im, 0, 1, &dt) &&
      (dt == DType::I32 || dt == DType::I64)) {
    // Integers: neg = 0 - x, abs = max(x, 0 - x), exact (op_tensor wraps the lowest value to
    // itself, as numpy and ONNX Runtime).
    int x = -1, zero = -1, neg = -1, y = -1;
    Status st = im.ir_input(0, &x);
    if (!st.ok()) return st;
    const size_t rank = im.g->tensors[x].dims.size();
    st = im.g->add_constant(im.ir_name("zero"), dt, std::vector<int64_t>(rank, 1), &zero);
    if (!st.ok()) return im.bad(st.message());
    im.g->tensors[zero].int_data = {0};
    if (mode == ActivationMode::NEG) {
      st = im.ir_check(im.g->op_tensor(im.ir_name(), TensorOp::SUB, zero, x, &y));
    } else {
      st = im.ir_check(im.g->op_tensor(im.ir_name("neg"), TensorOp::SUB, zero, x, &neg));
      if (st.ok()) st = im.ir_check(im.g->op_tensor(im.ir_name(), TensorOp::MAX, x, neg, &y));
    }
    if (!st.ok()) return st;
    return im.set_output(0, y);
  }
  return activation(im, ActivationDesc::of(mode));
}

Status import_gelu(Importer& im) {
  std::string approximate;
  Status st = im.attr_string("approximate", "none", &approximate);
  if (!st.ok()) return st;
  if (approximate == "none") return activation(im, ActivationDesc::of(ActivationMode::GELU));
  if (approximate == "tanh") return activation(im, ActivationDesc::of(ActivationMode::GELU_TANH));
  return im.bad("unknown approximate '" + approximate + "' (none or tanh)");
}

Status import_leaky_relu(Importer& im) {
  float alpha = 0.01f;
  Status st = im.attr_float("alpha", 0.01f, &alpha);
  if (!st.ok()) return st;
  return activation(im, ActivationDesc::leaky_relu(alpha));
}

Status import_elu(Importer& im) {
  float alpha = 1.f;
  Status st = im.attr_float("alpha", 1.f, &alpha);
  if (!st.ok()) return st;
  return activation(im, ActivationDesc::elu(alpha));
}

Status import_selu(Importer& im) {
  float alpha = 0.f, gamma = 0.f;
  Status st = im.attr_float("alpha", 1.67326319217681884765625f, &alpha);
  if (st.ok()) st = im.attr_float("gamma", 1.05070102214813232421875f, &gamma);
  if (!st.ok()) return st;
  return activation(im, ActivationDesc::selu(alpha, gamma));
}

Status import_hard_sigmoid(Importer& im) {
  float alpha = 0.f, beta = 0.f;
  Status st = im.attr_float("alpha", 0.2f, &alpha);
  if (st.ok()) st = im.attr_float("beta", 0.5f, &beta);
  if (!st.ok()) return st;
  return activation(im, ActivationDesc::hard_sigmoid(alpha, beta));
}

Status import_clip(Importer& im) {
  // Bounds: attributes min/max before opset 11, optional constant inputs from 11. Missing bounds
  // are the float range.
  float lo = -FLT_MAX, hi = FLT_MAX;
  bool has_lo = false, has_hi = false;
  Status st;
  if (im.opset < 11) {
    has_lo = im.has_attr("min");
    has_hi = im.has_attr("max");
    st = im.attr_float("min", -FLT_MAX, &lo);
    if (st.ok()) st = im.attr_float("max", FLT_MAX, &hi);
  } else {
    has_lo = im.has_input(1);
    has_hi = im.has_input(2);
    if (has_lo) st = im.float_scalar_input(1, "min", &lo);
    if (st.ok() && has_hi) st = im.float_scalar_input(2, "max", &hi);
  }
  if (!st.ok()) return st;
  if (!(lo <= hi)) return im.unsupported("Clip with min " + std::to_string(lo) + " > max " + std::to_string(hi));
  if (has_lo && lo == 0.f && has_hi && hi == 6.f) return activation(im, ActivationDesc::relu6());
  if (has_lo && lo == 0.f && !has_hi) return activation(im, ActivationDesc::relu());
  return activation(im, ActivationDesc::clip(lo, hi));
}

Status import_prelu(Importer& im) {
  int x = -1;
  Status st = im.ir_input(0, &x);
  if (!st.ok()) return st;
  const Constant* sc = nullptr;
  st = im.constant_input(1, "slope", &sc);
  if (!st.ok()) return st;
  if (sc->is_int()) return im.bad("slope must be a float tensor");
  const std::vector<int64_t> xd = im.g->tensors[x].dims;
  const DType dt = im.g->tensors[x].dtype;
  std::vector<int64_t> sd;
  if (im.opset < 7 && sc->elements() == (xd.size() > 1 ? xd[1] : -1) && sc->dims.size() == 1 && xd.size() > 2) {
    // Opset 6: a 1-D slope of C values is per channel.
    sd.assign(xd.size(), 1);
    sd[1] = xd[1];
  } else {
    if (sc->dims.size() > xd.size()) return im.bad("slope " + dims_text(sc->dims) + " has a higher rank than X " + dims_text(xd));
    sd = left_pad(sc->dims, xd.size());
    for (size_t d = 0; d < xd.size(); ++d) {
      if (sd[d] != 1 && sd[d] != xd[d]) return im.bad("slope " + dims_text(sc->dims) + " does not broadcast to X " + dims_text(xd));
    }
  }
  int slope = -1, y = -1;
  st = im.ir_constant(im.input(1).constant, dt, sd, &slope);
  if (!st.ok()) return st;
  bool unit = true;
  for (float s : sc->floats) unit = unit && s >= 0.f && s <= 1.f;
  if (unit) {
    // 0 <= slope <= 1: max(x, slope * x) is x for x >= 0 and slope * x below; exact.
    int sx = -1;
    st = im.ir_check(im.g->op_tensor(im.ir_name("scaled"), TensorOp::MUL, x, slope, &sx));
    if (st.ok()) st = im.ir_check(im.g->op_tensor(im.ir_name(), TensorOp::MAX, x, sx, &y));
  } else {
    // relu(x) + slope * min(x, 0): one of the terms is exactly 0.
    int r = -1, zero = -1, neg = -1, p = -1;
    st = im.ir_check(im.g->relu(im.ir_name("relu"), x, &r));
    if (st.ok()) st = scalar_constant(im, "zero", dt, xd.size(), 0.f, &zero);
    if (st.ok()) st = im.ir_check(im.g->op_tensor(im.ir_name("neg"), TensorOp::MIN, x, zero, &neg));
    if (st.ok()) st = im.ir_check(im.g->op_tensor(im.ir_name("scaled"), TensorOp::MUL, neg, slope, &p));
    if (st.ok()) st = im.ir_check(im.g->op_tensor(im.ir_name(), TensorOp::ADD, r, p, &y));
  }
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

// ---- element-wise arithmetic ----------------------------------------------------------------------

namespace {

// acc (an IR tensor) op input i, with numpy broadcasting: both sides padded to the output rank.
Status binary_step(Importer& im, TensorOp op, int acc, int i, DType dt, const std::string& name, int* y) {
  std::vector<int64_t> out;
  const std::vector<int64_t> ad = im.g->tensors[acc].dims, bd = im.input_dims(i);
  if (!broadcast_shapes(ad, bd, &out)) {
    return im.bad("inputs " + dims_text(ad) + " and " + dims_text(bd) + " do not broadcast");
  }
  int a = -1, b = -1;
  Status st = im.reshape_to(acc, left_pad(ad, out.size()), name + "/a_rank", &a);
  if (st.ok()) st = operand(im, i, dt, left_pad(bd, out.size()), name + "/b_rank", &b);
  if (st.ok()) st = im.ir_check(im.g->op_tensor(name, op, a, b, y));
  return st;
}

// Add, Sub, Mul, Div, Max, Min, Sum over inputs [0, n): folded when all are constant, else a
// chain of op_tensor nodes.
Status elementwise(Importer& im, TensorOp op, BinaryOp fold_op, bool variadic) {
  const int n = im.input_count();
  if (n < 1 || (!variadic && n != 2)) return im.bad("has " + std::to_string(n) + " inputs");
  for (int i = 0; i < n; ++i) {
    Status st = im.require_input(i, "operand");
    if (!st.ok()) return st;
  }
  DType dt = DType::F32;
  if (!computed_dtype(im, 0, n, &dt)) {
    Constant acc = im.constant(0);
    for (int i = 1; i < n; ++i) {
      Constant r;
      Status st = fold_binary(fold_op, acc, im.constant(i), im.node_label(), &r);
      if (!st.ok()) return st;
      acc = std::move(r);
    }
    return im.folded(std::move(acc));
  }
  if (n == 1) {
    ++im.removed_ops[im.node->op_type()];
    return im.set_output_value(0, im.input(0));
  }
  // Opset 6's legacy broadcasting (Add, Sub, Mul, Div): B, broadcast=1, is aligned with A
  // starting at `axis` (default: the trailing dims); broadcast=0 needs equal shapes.
  if (im.opset < 7 && !variadic) {
    int64_t broadcast = 0, axis = -1;
    Status st = im.attr_int("broadcast", 0, &broadcast);
    if (st.ok()) st = im.attr_int("axis", -1, &axis);
    if (!st.ok()) return st;
    const std::vector<int64_t> ad = im.input_dims(0), bd = im.input_dims(1);
    if (!broadcast) {
      if (ad != bd) return im.bad("A " + dims_text(ad) + " and B " + dims_text(bd) + " differ and broadcast is 0 (opset 6)");
    } else {
      const int64_t ra = static_cast<int64_t>(ad.size()), rb = static_cast<int64_t>(bd.size());
      if (!im.has_attr("axis")) axis = ra - rb;
      if (axis < 0) axis += ra;
      if (axis < 0 || axis + rb > ra) return im.bad("B " + dims_text(bd) + " does not fit A " + dims_text(ad) + " at axis " + std::to_string(axis));
      std::vector<int64_t> bpad(ra, 1);
      for (int64_t d = 0; d < rb; ++d) {
        if (bd[d] != ad[axis + d] && bd[d] != 1) {
          return im.bad("B " + dims_text(bd) + " does not match A " + dims_text(ad) + " at axis " + std::to_string(axis));
        }
        bpad[axis + d] = bd[d];
      }
      int a = -1, b = -1, y = -1;
      st = operand(im, 0, dt, ad, "a", &a);
      if (st.ok()) st = operand(im, 1, dt, bpad, "b_axis", &b);
      if (st.ok()) st = im.ir_check(im.g->op_tensor(im.ir_name(), op, a, b, &y));
      if (!st.ok()) return st;
      return im.set_output(0, y);
    }
  }
  int acc = -1;
  Status st = operand(im, 0, dt, im.input_dims(0).empty() ? std::vector<int64_t>{1} : im.input_dims(0), "a0", &acc);
  if (!st.ok()) return st;
  for (int i = 1; i < n; ++i) {
    int y = -1;
    st = binary_step(im, op, acc, i, dt, i + 1 == n ? im.ir_name() : im.ir_name(std::to_string(i)), &y);
    if (!st.ok()) return st;
    acc = y;
  }
  return im.set_output(0, acc);
}

}  // namespace

Status import_add(Importer& im) { return elementwise(im, TensorOp::ADD, BinaryOp::ADD, false); }
Status import_sub(Importer& im) { return elementwise(im, TensorOp::SUB, BinaryOp::SUB, false); }
Status import_mul(Importer& im) { return elementwise(im, TensorOp::MUL, BinaryOp::MUL, false); }
Status import_div(Importer& im) { return elementwise(im, TensorOp::DIV, BinaryOp::DIV, false); }
Status import_max(Importer& im) { return elementwise(im, TensorOp::MAX, BinaryOp::MAX, true); }
Status import_min(Importer& im) { return elementwise(im, TensorOp::MIN, BinaryOp::MIN, true); }
Status import_sum(Importer& im) { return elementwise(im, TensorOp::ADD, BinaryOp::ADD, true); }

namespace {

// Pow of a float base and an integer exponent (the exponent converted to the base's float type),
// or of an I32 / I64 base and a float exponent (computed in f32, then truncated to the base's
// type, as ONNX Runtime's cast of its result). One side at least is computed.
Status pow_mixed(Importer& im, bool int_base) {
  int b = -1, e = -1;
  Status st = int_base ? im.ir_input_any(0, &b) : im.ir_input(0, &b);
  if (!st.ok()) return st;
  const DType base_dt = im.g->tensors[b].dtype;
  if (int_base && base_dt != DType::I32 && base_dt != DType::I64) return im.unsupported("Pow of a " + std::string(dtype_name(base_dt)) + " base");
  DType f = int_base ? DType::F32 : base_dt;  // the type POW computes in
  if (int_base && !im.is_constant(1)) f = im.g->tensors[im.input(1).tensor].dtype;
  if (int_base) {
    st = im.ir_check(im.g->transform(im.ir_name("base"), b, f, &b));
    if (st.ok()) st = im.ir_input(1, f, &e);
  } else if (im.is_constant(1)) {
    const Constant& c = im.constant(1);
    std::vector<float> v(c.ints.begin(), c.ints.end());
    st = im.ir_constant_values(im.ir_name("exponent"), f, c.dims.empty() ? std::vector<int64_t>{1} : c.dims, v, &e);
  } else {
    st = im.ir_input_any(1, &e);
    const DType et = st.ok() ? im.g->tensors[e].dtype : DType::I64;
    if (st.ok() && et != DType::I32 && et != DType::I64) return im.unsupported("Pow with a " + std::string(dtype_name(et)) + " exponent");
    if (st.ok()) st = im.ir_check(im.g->transform(im.ir_name("exponent"), e, f, &e));
  }
  if (!st.ok()) return st;
  const std::vector<int64_t> bd = im.g->tensors[b].dims, ed = im.g->tensors[e].dims;
  std::vector<int64_t> out;
  if (!broadcast_shapes(bd, ed, &out)) return im.bad("X " + dims_text(bd) + " and Y " + dims_text(ed) + " do not broadcast");
  int y = -1;
  st = im.reshape_to(b, left_pad(bd, out.size()), "base_rank", &b);
  if (st.ok()) st = im.reshape_to(e, left_pad(ed, out.size()), "exponent_rank", &e);
  if (st.ok()) st = im.ir_check(im.g->op_tensor(int_base ? im.ir_name("pow") : im.ir_name(), TensorOp::POW, b, e, &y));
  if (st.ok() && int_base) st = im.ir_check(im.g->transform(im.ir_name(), y, base_dt, &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

}  // namespace

Status import_pow(Importer& im) {
  Status st = im.require_input(0, "X");
  if (st.ok()) st = im.require_input(1, "Y");
  if (!st.ok()) return st;
  if (im.is_constant(0) && im.is_constant(1)) {
    Constant r;
    st = fold_binary(BinaryOp::POW, im.constant(0), im.constant(1), im.node_label(), &r);
    if (!st.ok()) return st;
    return im.folded(std::move(r));
  }
  // Pow-12+ lets the exponent's type differ from the base's; the result has the base's type.
  const auto is_int = [&](int i) {
    return im.is_constant(i) ? im.constant(i).is_int()
                             : im.input(i).tensor >= 0 && !dtype_is_float(im.g->tensors[im.input(i).tensor].dtype);
  };
  if (is_int(0) != is_int(1)) return pow_mixed(im, is_int(0));
  DType dt0 = DType::F32;
  if (computed_dtype(im, 0, 1, &dt0) && !dtype_is_float(dt0)) {
    // An integer base: op_tensor POW in the base's type, with an exponent of the same type.
    const bool same = im.is_constant(1) ? im.constant(1).is_int() : im.g->tensors[im.input(1).tensor].dtype == dt0;
    if (!same) return im.unsupported("Pow of a computed " + std::string(dtype_name(dt0)) + " base with an exponent of another type");
    return elementwise(im, TensorOp::POW, BinaryOp::POW, false);
  }
  if (!im.is_constant(1) || im.constant(1).elements() != 1) {
    // A computed or non-scalar exponent: op_tensor POW with broadcasting (float operands).
    return elementwise(im, TensorOp::POW, BinaryOp::POW, false);
  }
  // A scalar exponent (float or integer): 1 and 2 exactly, others through POW.
  float e = 0.f;
  st = im.float_scalar_input(1, "exponent", &e);
  if (!st.ok()) return st;
  int x = -1, y = -1;
  st = im.ir_input(0, &x);
  if (!st.ok()) return st;
  const DType dt = im.g->tensors[x].dtype;
  const std::vector<int64_t> out = left_pad(im.g->tensors[x].dims, im.input_dims(1).size());
  if (e == 1.f) {
    st = im.reshape_to(x, out, "", &y);
  } else {
    st = im.reshape_to(x, out, "rank", &x);
    if (st.ok() && e == 2.f) {
      st = im.ir_check(im.g->op_tensor(im.ir_name(), TensorOp::MUL, x, x, &y));
    } else if (st.ok()) {
      int c = -1;
      st = scalar_constant(im, "exponent", dt, out.size(), e, &c);
      if (st.ok()) st = im.ir_check(im.g->op_tensor(im.ir_name(), TensorOp::POW, x, c, &y));
    }
  }
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

// Mod: fmod = 1 is C's fmod (the dividend's sign), the only form ONNX allows for floats; fmod = 0
// (the divisor's sign, integer semantics) is op_tensor MOD_FLOOR on computed integer tensors.
Status import_mod(Importer& im) {
  int64_t fmod = 0;
  Status st = im.attr_int("fmod", 0, &fmod);
  if (!st.ok()) return st;
  if (fmod != 0 && fmod != 1) return im.bad("fmod is " + std::to_string(fmod) + ", not 0 or 1");
  DType dt = DType::F32;
  if (!fmod && computed_dtype(im, 0, 2, &dt)) {
    if (dt != DType::I32 && dt != DType::I64) return im.unsupported("Mod with fmod = 0 of a float tensor (ONNX requires fmod = 1 for floats)");
    return elementwise(im, TensorOp::MOD_FLOOR, BinaryOp::MOD, false);
  }
  return elementwise(im, TensorOp::MOD, fmod ? BinaryOp::FMOD : BinaryOp::MOD, false);
}

// ---- Gemm and MatMul ------------------------------------------------------------------------------

Status import_gemm(Importer& im) {
  Status st = im.require_input(0, "A");
  if (st.ok()) st = im.require_input(1, "B");
  if (!st.ok()) return st;
  float alpha = 1.f, beta = 1.f;
  int64_t trans_a = 0, trans_b = 0, broadcast = 1;
  st = im.attr_float("alpha", 1.f, &alpha);
  if (st.ok()) st = im.attr_float("beta", 1.f, &beta);
  if (st.ok()) st = im.attr_int("transA", 0, &trans_a);
  if (st.ok()) st = im.attr_int("transB", 0, &trans_b);
  if (st.ok() && im.opset < 7) st = im.attr_int("broadcast", 0, &broadcast);
  if (!st.ok()) return st;
  const std::vector<int64_t> ad = im.input_dims(0), bd = im.input_dims(1);
  if (ad.size() != 2 || bd.size() != 2) return im.bad("A " + dims_text(ad) + " and B " + dims_text(bd) + " must be matrices");
  const int64_t m = trans_a ? ad[1] : ad[0], n = trans_b ? bd[0] : bd[1];
  DType dt = DType::F32;
  if (!computed_dtype(im, 0, 2, &dt)) {
    if (im.constant(0).type == TP::FLOAT16) dt = DType::F16;
  }
  // alpha scales a constant operand when there is one; otherwise a MUL follows the product.
  int a = -1, b = -1;
  bool alpha_done = alpha == 1.f;
  for (int i = 1; i >= 0; --i) {
    int* t = i == 0 ? &a : &b;
    if (!alpha_done && im.is_constant(i)) {
      const Constant& c = im.constant(i);
      if (c.is_int()) return im.unsupported("integer input '" + im.input_name(i) + "' (only float tensors are computed)");
      std::vector<float> scaled = c.floats;
      for (float& v : scaled) v *= alpha;
      st = im.ir_constant_values(im.input_name(i) + "*alpha", dt, c.dims, std::move(scaled), t);
      alpha_done = true;
    } else {
      st = operand(im, i, dt, i == 0 ? ad : bd, "", t);
    }
    if (!st.ok()) return st;
  }
  const bool has_c = im.has_input(2) && beta != 0.f;
  const std::vector<int64_t> cd = has_c ? im.input_dims(2) : std::vector<int64_t>{};
  if (has_c) {
    if (cd.size() > 2) return im.bad("C " + dims_text(cd) + " has rank > 2");
    const std::vector<int64_t> cp = left_pad(cd, 2);
    if (!((cp[0] == 1 || cp[0] == m) && (cp[1] == 1 || cp[1] == n))) {
      return im.bad("C " + dims_text(cd) + " does not broadcast to " + std::to_string(m) + "x" + std::to_string(n));
    }
    if (im.opset < 7 && !broadcast && cp != std::vector<int64_t>{m, n}) {
      return im.bad("C " + dims_text(cd) + " is not " + std::to_string(m) + "x" + std::to_string(n) + " and broadcast is 0 (opset 6)");
    }
  }
  // The bias: beta * C folded into a constant, or C itself when computed and beta is 1. When
  // alpha still has to be applied after the product, the bias is added after it.
  int bias = -1;
  if (has_c && alpha_done) {
    if (im.is_constant(2)) {
      const Constant& c = im.constant(2);
      if (c.is_int()) return im.unsupported("integer C (only float tensors are computed)");
      std::vector<float> scaled = c.floats;
      for (float& v : scaled) v *= beta;
      st = beta == 1.f ? im.ir_constant(im.input(2).constant, dt, left_pad(cd, 2), &bias)
                       : im.ir_constant_values(im.input_name(2) + "*beta", dt, left_pad(cd, 2), std::move(scaled), &bias);
    } else if (beta == 1.f) {
      st = operand(im, 2, dt, left_pad(cd, 2), "c", &bias);
    }
    if (!st.ok()) return st;
  }
  ir::GemmAttrs ga;
  ga.trans_a = trans_a != 0;
  ga.trans_b = trans_b != 0;
  const bool post = !alpha_done || (has_c && bias < 0);
  int y = -1;
  st = im.ir_check(im.g->gemm(post ? im.ir_name("gemm") : im.ir_name(), a, b, bias, ga, &y));
  if (!st.ok()) return st;
  if (!alpha_done) {
    int s = -1, z = -1;
    st = scalar_constant(im, "alpha", dt, 2, alpha, &s);
    if (st.ok()) st = im.ir_check(im.g->op_tensor(has_c ? im.ir_name("scaled") : im.ir_name(), TensorOp::MUL, y, s, &z));
    if (!st.ok()) return st;
    y = z;
  }
  if (has_c && bias < 0) {
    // A computed C with beta != 1, or alpha applied after the product: y + beta * C.
    int c = -1, z = -1;
    st = operand(im, 2, dt, left_pad(cd, 2), "c", &c);
    if (st.ok() && beta != 1.f) {
      int s = -1;
      st = scalar_constant(im, "beta", dt, 2, beta, &s);
      if (st.ok()) st = im.ir_check(im.g->op_tensor(im.ir_name("beta_c"), TensorOp::MUL, c, s, &c));
    }
    if (st.ok()) st = im.ir_check(im.g->op_tensor(im.ir_name(), TensorOp::ADD, y, c, &z));
    if (!st.ok()) return st;
    y = z;
  }
  return im.set_output(0, y);
}

Status import_matmul(Importer& im) {
  Status st = im.require_input(0, "A");
  if (st.ok()) st = im.require_input(1, "B");
  if (!st.ok()) return st;
  std::vector<int64_t> ad = im.input_dims(0), bd = im.input_dims(1);
  if (ad.empty() || bd.empty()) return im.bad("MatMul of a scalar");
  if (ad.size() == 1 && bd.size() == 1) return im.unsupported("MatMul of two vectors (a rank-0 result)");
  DType dt = DType::F32;
  if (!computed_dtype(im, 0, 2, &dt)) {
    if (im.constant(0).type == TP::FLOAT16) dt = DType::F16;
  }
  // numpy matmul: a vector A is 1 x K, a vector B is K x 1; those dims leave the result.
  const bool a_vec = ad.size() == 1, b_vec = bd.size() == 1;
  if (a_vec) ad.insert(ad.begin(), 1);
  if (b_vec) bd.push_back(1);
  const int64_t m = ad[ad.size() - 2], k = ad.back(), kb = bd[bd.size() - 2], n = bd.back();
  if (k != kb) return im.bad("A " + dims_text(im.input_dims(0)) + " and B " + dims_text(im.input_dims(1)) + " disagree on K");
  const std::vector<int64_t> batch_a(ad.begin(), ad.end() - 2), batch_b(bd.begin(), bd.end() - 2);
  std::vector<int64_t> batch;
  if (!broadcast_shapes(batch_a, batch_b, &batch)) {
    return im.bad("batch dims of A " + dims_text(ad) + " and B " + dims_text(bd) + " do not broadcast");
  }
  int64_t pa = 1, pb = 1;
  for (int64_t d : batch_a) pa *= d;
  for (int64_t d : batch_b) pb *= d;
  std::vector<int64_t> out = batch;
  if (!a_vec) out.push_back(m);
  if (!b_vec) out.push_back(n);
  int a = -1, b = -1, y = -1;
  std::vector<int64_t> gemm_out;
  if (pb == 1) {
    // B is one matrix: the batch of A folds into its rows, one 2-D GEMM.
    st = operand(im, 0, dt, {pa * m, k}, "a2d", &a);
    if (st.ok()) st = operand(im, 1, dt, {k, n}, "b2d", &b);
    gemm_out = {pa * m, n};
  } else if (pa == 1 || left_pad(batch_a, batch.size()) == left_pad(batch_b, batch.size())) {
    // One batch dim: equal batches, or one A for every B (the kernel broadcasts a batch of 1).
    st = operand(im, 0, dt, {pa, m, k}, "a3d", &a);
    if (st.ok()) st = operand(im, 1, dt, {pb, k, n}, "b3d", &b);
    gemm_out = {std::max(pa, pb), m, n};
  } else {
    return im.unsupported("MatMul whose batch dims broadcast partially (A " + dims_text(ad) + ", B " + dims_text(bd) + ")");
  }
  if (!st.ok()) return st;
  st = im.ir_check(im.g->gemm(gemm_out == out ? im.ir_name() : im.ir_name("gemm"), a, b, -1, ir::GemmAttrs(), &y));
  if (st.ok()) st = im.reshape_to(y, out, "", &y);
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

// ---- Softmax, BatchNormalization, Concat, Cast ----------------------------------------------------

namespace {

Status softmax(Importer& im, SoftmaxAlgo algo) {
  int x = -1, y = -1;
  Status st = im.ir_input(0, &x);
  if (!st.ok()) return st;
  const std::vector<int64_t> dims = im.g->tensors[x].dims;
  const int64_t rank = static_cast<int64_t>(dims.size());
  int64_t axis = 0;
  st = im.attr_int("axis", im.opset < 13 ? 1 : -1, &axis);
  if (st.ok()) st = im.normalize_axis(axis, rank, "axis", &axis);
  if (!st.ok()) return st;
  if (im.opset >= 13 || axis == rank - 1) {
    st = im.ir_check(im.g->softmax(im.ir_name(), x, static_cast<int>(axis), algo, &y));
    if (!st.ok()) return st;
    return im.set_output(0, y);
  }
  // Before opset 13 the input is coerced to 2D at `axis`: the softmax runs over all of the
  // trailing dims together.
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= dims[d];
  int x2 = -1, y2 = -1;
  st = im.reshape_to(x, {outer, inner}, "2d", &x2);
  if (st.ok()) st = im.ir_check(im.g->softmax(im.ir_name("softmax"), x2, 1, algo, &y2));
  if (st.ok()) st = im.reshape_to(y2, dims, "", &y);
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

}  // namespace

Status import_softmax(Importer& im) { return softmax(im, SoftmaxAlgo::ACCURATE); }
Status import_log_softmax(Importer& im) { return softmax(im, SoftmaxAlgo::LOG); }

Status import_batch_norm(Importer& im) {
  int x = -1;
  Status st = im.ir_input(0, &x);
  if (!st.ok()) return st;
  st = im.only_outputs_below(1);  // running mean/var, saved mean/var: training only
  if (!st.ok()) return st;
  int64_t training = 0, spatial = 1;
  float epsilon = 1e-5f;
  st = im.attr_float("epsilon", 1e-5f, &epsilon);
  if (st.ok() && im.opset >= 14) st = im.attr_int("training_mode", 0, &training);
  if (st.ok() && im.opset < 9) st = im.attr_int("spatial", 1, &spatial);
  if (!st.ok()) return st;
  if (training) return im.unsupported("BatchNormalization in training mode is not supported");
  const std::vector<int64_t> dims = im.g->tensors[x].dims;
  if (dims.size() < 2 || dims.size() > 5) return im.unsupported("BatchNormalization of a rank-" + std::to_string(dims.size()) + " input");
  const int64_t c = dims[1];
  int params[4] = {-1, -1, -1, -1};
  const char* names[4] = {"scale", "B", "mean", "var"};
  for (int i = 0; i < 4; ++i) {
    const Constant* pc = nullptr;
    st = im.constant_input(i + 1, names[i], &pc);
    if (!st.ok()) return st;
    if (pc->elements() != c) {
      if (!spatial) return im.unsupported("BatchNormalization with spatial = 0 and per-element parameters");
      return im.bad(std::string(names[i]) + " has dims " + dims_text(pc->dims) + ", expected " + std::to_string(c) + " values");
    }
    // batchnorm_forward_inference reads its parameters as float32 whatever x's dtype.
    st = im.ir_constant(im.input(i + 1).constant, DType::F32, {c}, &params[i]);
    if (!st.ok()) return st;
  }
  // The kernel wants N, C, spatial: a 2-D input (BatchNorm1d on features) runs as N x C x 1.
  int xs = x, y = -1;
  if (dims.size() == 2) st = im.reshape_to(x, {dims[0], c, 1}, "3d", &xs);
  if (st.ok()) {
    st = im.ir_check(im.g->batchnorm(dims.size() == 2 ? im.ir_name("bn") : im.ir_name(), xs, params[0], params[1],
                                     params[2], params[3], epsilon, &y));
  }
  if (st.ok() && dims.size() == 2) st = im.reshape_to(y, dims, "", &y);
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

Status import_concat(Importer& im) {
  const int n = im.input_count();
  if (n < 1) return im.bad("has no inputs");
  for (int i = 0; i < n; ++i) {
    Status st = im.require_input(i, "input");
    if (!st.ok()) return st;
  }
  const std::vector<int64_t> first = im.input_dims(0);
  const int64_t rank = static_cast<int64_t>(first.size());
  if (rank == 0) return im.bad("inputs are scalars");
  int64_t axis = 0;
  Status st = im.attr_int("axis", 0, &axis);
  if (st.ok() && !im.has_attr("axis")) st = im.bad("missing attribute 'axis'");
  if (st.ok()) st = im.normalize_axis(axis, rank, "axis", &axis);
  if (!st.ok()) return st;
  std::vector<int64_t> out = first;
  out[axis] = 0;
  for (int i = 0; i < n; ++i) {
    const std::vector<int64_t> d = im.input_dims(i);
    bool same = static_cast<int64_t>(d.size()) == rank;
    for (int64_t k = 0; same && k < rank; ++k) same = k == axis || d[k] == first[k];
    if (!same) return im.bad("input '" + im.input_name(i) + "' " + dims_text(d) + " differs from " + dims_text(first) + " outside axis " + std::to_string(axis));
    out[axis] += d[axis];
  }
  DType dt = DType::F32;
  if (!computed_dtype(im, 0, n, &dt)) {
    // All constant: concatenate the values.
    Constant r;
    r.type = im.constant(0).type;
    r.dims = out;
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= out[d];
    for (int i = 0; i < n; ++i) {
      if (im.constant(i).is_int() != r.is_int()) return im.bad("inputs differ in type");
    }
    for (int64_t o = 0; o < outer; ++o) {
      for (int i = 0; i < n; ++i) {
        const Constant& c = im.constant(i);
        const int64_t chunk = outer > 0 ? c.elements() / outer : 0;
        for (int64_t k = 0; k < chunk; ++k) {
          if (r.is_int()) {
            r.ints.push_back(c.ints[o * chunk + k]);
          } else {
            r.floats.push_back(c.floats[o * chunk + k]);
          }
        }
      }
    }
    return im.folded(std::move(r));
  }
  std::vector<int> xs;
  for (int i = 0; i < n; ++i) {
    if (im.input_dims(i)[axis] == 0) continue;  // an empty constant adds nothing
    int t = -1;
    st = im.ir_input(i, dt, &t);
    if (!st.ok()) return st;
    xs.push_back(t);
  }
  if (xs.size() == 1) {
    ++im.removed_ops[im.node->op_type()];
    return im.set_output(0, xs[0]);
  }
  int y = -1;
  st = im.ir_check(im.g->concat(im.ir_name(), xs, static_cast<int>(axis), &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

Status import_cast(Importer& im) {
  Status st = im.require_input(0, "input");
  if (!st.ok()) return st;
  int64_t to = 0;
  st = im.attr_int("to", 0, &to);
  if (st.ok() && !im.has_attr("to")) st = im.bad("missing attribute 'to'");
  if (!st.ok()) return st;
  if (im.is_constant(0)) {
    Constant r;
    st = cast_constant(im.constant(0), static_cast<int32_t>(to), im.node_label(), &r);
    if (!st.ok()) return st;
    return im.folded(std::move(r));
  }
  DType want = DType::F32;
  if (!ir_dtype_of(static_cast<int32_t>(to), &want)) {
    return im.unsupported("Cast of a computed tensor to " + onnx_type_name(static_cast<int32_t>(to)) +
                          " (computed tensors are FLOAT, FLOAT16, INT32, INT64 or BOOL)");
  }
  int x = -1, y = -1;
  st = im.ir_input(0, &x);
  if (!st.ok()) return st;
  if (im.g->tensors[x].dtype == want) {
    ++im.removed_ops[im.node->op_type()];
    return im.set_output_value(0, im.input(0));
  }
  st = im.ir_check(im.g->transform(im.ir_name(), x, want, &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

// ---- reductions -----------------------------------------------------------------------------------

namespace {

enum class Reduce { MEAN, MAX, MIN, SUM };

// A reduction's axes (normalized, sorted, unique; empty axes: all, unless noop), keepdims and the
// output dims. `axes_input_opset`: the opset from which axes is an input.
struct ReduceAxes {
  std::vector<int64_t> axes, out;
  bool keepdims = true;
  bool noop = false;  // no axes and noop_with_empty_axes: the input passes through
};

Status reduce_axes(Importer& im, int64_t axes_input_opset, ReduceAxes* r) {
  Status st = im.require_input(0, "data");
  if (!st.ok()) return st;
  int64_t keepdims = 1, noop = 0;
  st = im.attr_int("keepdims", 1, &keepdims);
  if (st.ok() && im.opset >= axes_input_opset) {
    st = im.attr_int("noop_with_empty_axes", 0, &noop);
    if (st.ok() && im.has_input(1)) st = im.ints_input(1, "axes", &r->axes);
  } else if (st.ok()) {
    st = im.attr_ints("axes", &r->axes);
  }
  if (!st.ok()) return st;
  r->keepdims = keepdims != 0;
  const std::vector<int64_t> dims = im.input_dims(0);
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (r->axes.empty() && noop) {
    r->noop = true;
    return Status::success();
  }
  if (r->axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) r->axes.push_back(d);
  }
  for (int64_t& a : r->axes) {
    st = im.normalize_axis(a, rank, "axis", &a);
    if (!st.ok()) return st;
  }
  std::sort(r->axes.begin(), r->axes.end());
  r->axes.erase(std::unique(r->axes.begin(), r->axes.end()), r->axes.end());
  for (int64_t d = 0; d < rank; ++d) {
    const bool reduced = std::binary_search(r->axes.begin(), r->axes.end(), d);
    if (!reduced) r->out.push_back(dims[d]);
    if (reduced && r->keepdims) r->out.push_back(1);
  }
  return Status::success();
}

// IR tensor x reduced over `axes` with its rank kept: over exactly the spatial dims a GLOBAL_POOL
// (SUM as the mean times the count), any other axes (and MIN) a REDUCE node.
Status reduce_ir(Importer& im, Reduce kind, int x, const std::vector<int64_t>& axes, const std::string& name, int* y) {
  const std::vector<int64_t> dims = im.g->tensors[x].dims;
  const int64_t rank = static_cast<int64_t>(dims.size());
  bool spatial = rank >= 3 && rank <= 5 && static_cast<int64_t>(axes.size()) == rank - 2;
  for (size_t i = 0; spatial && i < axes.size(); ++i) spatial = axes[i] == static_cast<int64_t>(i) + 2;
  if (!spatial || kind == Reduce::MIN) {
    static const ReduceOp ops[] = {ReduceOp::MEAN, ReduceOp::MAX, ReduceOp::MIN, ReduceOp::SUM};
    return im.ir_check(im.g->reduce(name, x, ops[static_cast<int>(kind)], axes, y));
  }
  Status st = im.ir_check(im.g->global_pool(kind == Reduce::SUM ? name + "/pool" : name, x,
                                            kind == Reduce::MAX ? PoolMode::MAX : PoolMode::AVG_INCLUDE_PAD, y));
  if (!st.ok() || kind != Reduce::SUM) return st;
  // sum = mean * count: the window holds every spatial element.
  int64_t count = 1;
  for (int64_t d = 2; d < rank; ++d) count *= dims[d];
  int s = -1;
  st = scalar_constant(im, "count", im.g->tensors[x].dtype, static_cast<size_t>(rank), static_cast<float>(count), &s);
  if (st.ok()) st = im.ir_check(im.g->op_tensor(name, TensorOp::MUL, *y, s, y));
  return st;
}

// Reductions of computed tensors; constants fold.
Status reduce(Importer& im, Reduce kind, int64_t axes_input_opset) {
  ReduceAxes r;
  Status st = reduce_axes(im, axes_input_opset, &r);
  if (!st.ok()) return st;
  if (r.noop) {
    ++im.removed_ops[im.node->op_type()];
    return im.set_output_value(0, im.input(0));
  }
  if (im.is_constant(0)) {
    static const ReduceKind kinds[] = {ReduceKind::MEAN, ReduceKind::MAX, ReduceKind::MIN, ReduceKind::SUM};
    Constant c;
    st = reduce_constant(im.constant(0), r.axes, r.keepdims, kinds[static_cast<int>(kind)], &c);
    if (!st.ok()) return st;
    return im.folded(std::move(c));
  }
  if (r.out.empty()) return im.unsupported("the result would be a rank-0 (scalar) computed tensor");
  int x = -1, y = -1;
  st = im.ir_input(0, &x);
  if (st.ok()) st = reduce_ir(im, kind, x, r.axes, r.keepdims ? im.ir_name() : im.ir_name("reduce"), &y);
  if (st.ok() && !r.keepdims) st = im.reshape_to(y, r.out, "", &y);
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

// ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp of float tensors, composed
// of a sum and element-wise math: sum(|x|), sqrt(sum(x^2)), sum(x^2), log(sum(x)), and
// m + log(sum(exp(x - m))) with m the max (no overflow of exp). Constants fold the same way.
enum class ReduceMath { L1, L2, SUM_SQUARE, LOG_SUM, LOG_SUM_EXP };

Status reduce_math(Importer& im, ReduceMath kind) {
  ReduceAxes r;
  Status st = reduce_axes(im, 18, &r);
  if (!st.ok()) return st;
  if (r.noop) return im.unsupported("noop_with_empty_axes with no axes");
  const bool squares = kind == ReduceMath::L2 || kind == ReduceMath::SUM_SQUARE;
  if (im.is_constant(0)) {
    Constant c = im.constant(0);
    if (c.is_int()) return im.unsupported("an integer tensor (float tensors only)");
    Constant m;
    if (kind == ReduceMath::LOG_SUM_EXP) {
      st = reduce_constant(c, r.axes, true, ReduceKind::MAX, &m);
      if (!st.ok()) return st;
      c = expand_constant(m, c.dims);
      for (size_t i = 0; i < c.floats.size(); ++i) c.floats[i] = std::exp(im.constant(0).floats[i] - c.floats[i]);
    }
    for (float& v : c.floats) v = kind == ReduceMath::L1 ? std::fabs(v) : (squares ? v * v : v);
    Constant s;
    st = reduce_constant(c, r.axes, true, ReduceKind::SUM, &s);
    if (!st.ok()) return st;
    for (size_t i = 0; i < s.floats.size(); ++i) {
      float& v = s.floats[i];
      if (kind == ReduceMath::L2) v = std::sqrt(v);
      if (kind == ReduceMath::LOG_SUM) v = std::log(v);
      if (kind == ReduceMath::LOG_SUM_EXP) v = std::log(v) + m.floats[i];
    }
    s.dims = r.out;
    return im.folded(std::move(s));
  }
  if (r.out.empty()) return im.unsupported("the result would be a rank-0 (scalar) computed tensor");
  int x = -1, t = -1, m = -1, y = -1;
  st = im.ir_input(0, &x);
  if (!st.ok()) return st;
  t = x;
  if (kind == ReduceMath::L1) {
    st = im.ir_check(im.g->activation(im.ir_name("abs"), x, ActivationDesc::of(ActivationMode::ABS), &t));
  } else if (squares) {
    st = im.ir_check(im.g->op_tensor(im.ir_name("square"), TensorOp::MUL, x, x, &t));
  } else if (kind == ReduceMath::LOG_SUM_EXP) {
    int d = -1;
    st = reduce_ir(im, Reduce::MAX, x, r.axes, im.ir_name("max"), &m);
    if (st.ok()) st = im.ir_check(im.g->op_tensor(im.ir_name("shifted"), TensorOp::SUB, x, m, &d));
    if (st.ok()) st = im.ir_check(im.g->activation(im.ir_name("exp"), d, ActivationDesc::of(ActivationMode::EXP), &t));
  }
  if (st.ok()) st = reduce_ir(im, Reduce::SUM, t, r.axes, im.ir_name("sum"), &y);
  if (st.ok() && kind == ReduceMath::L2)
    st = im.ir_check(im.g->activation(im.ir_name("sqrt"), y, ActivationDesc::of(ActivationMode::SQRT), &y));
  if (st.ok() && (kind == ReduceMath::LOG_SUM || kind == ReduceMath::LOG_SUM_EXP))
    st = im.ir_check(im.g->activation(im.ir_name("log"), y, ActivationDesc::of(ActivationMode::LOG), &y));
  if (st.ok() && kind == ReduceMath::LOG_SUM_EXP)
    st = im.ir_check(im.g->op_tensor(im.ir_name("plus_max"), TensorOp::ADD, y, m, &y));
  if (st.ok() && !r.keepdims) st = im.reshape_to(y, r.out, "", &y);
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

}  // namespace

Status import_reduce_mean(Importer& im) { return reduce(im, Reduce::MEAN, 18); }
Status import_reduce_max(Importer& im) { return reduce(im, Reduce::MAX, 18); }
Status import_reduce_min(Importer& im) { return reduce(im, Reduce::MIN, 18); }
Status import_reduce_sum(Importer& im) { return reduce(im, Reduce::SUM, 13); }
Status import_reduce_l1(Importer& im) { return reduce_math(im, ReduceMath::L1); }
Status import_reduce_l2(Importer& im) { return reduce_math(im, ReduceMath::L2); }
Status import_reduce_sum_square(Importer& im) { return reduce_math(im, ReduceMath::SUM_SQUARE); }
Status import_reduce_log_sum(Importer& im) { return reduce_math(im, ReduceMath::LOG_SUM); }
Status import_reduce_log_sum_exp(Importer& im) { return reduce_math(im, ReduceMath::LOG_SUM_EXP); }

// ---- Pad ------------------------------------------------------------------------------------------

Status import_pad(Importer& im) {
  Status st = im.require_input(0, "data");
  if (!st.ok()) return st;
  std::string mode;
  std::vector<int64_t> pads, axes;
  float value = 0.f;
  st = im.attr_string("mode", "constant", &mode);
  if (st.ok() && im.opset < 11) {
    st = im.attr_ints("pads", &pads);
    if (st.ok()) st = im.attr_float("value", 0.f, &value);
  } else if (st.ok()) {
    st = im.ints_input(1, "pads", &pads);
    if (st.ok() && im.has_input(2)) st = im.float_scalar_input(2, "constant_value", &value);
    if (st.ok() && im.opset >= 18 && im.has_input(3)) st = im.ints_input(3, "axes", &axes);
  }
  if (!st.ok()) return st;
  const std::vector<int64_t> dims = im.input_dims(0);
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (rank == 0) return im.bad("data is a scalar");
  const int64_t limit = int64_t(1) << 40;  // no real pad is larger; keeps the sums exact
  for (int64_t p : pads) {
    if (p > limit || p < -limit) return im.bad("pad " + std::to_string(p) + " is out of range");
  }
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (pads.size() != 2 * axes.size()) return im.bad("pads has " + std::to_string(pads.size()) + " entries, expected " + std::to_string(2 * axes.size()));
  std::vector<int64_t> begin(rank, 0), end(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = 0;
    st = im.normalize_axis(axes[i], rank, "axis", &a);
    if (!st.ok()) return st;
    begin[a] = pads[i];
    end[a] = pads[i + axes.size()];
  }
  bool zero = true, spatial_only = rank >= 3 && rank <= 5, non_negative = true;
  for (int64_t d = 0; d < rank; ++d) {
    zero = zero && begin[d] == 0 && end[d] == 0;
    if (d < 2) spatial_only = spatial_only && begin[d] == 0 && end[d] == 0;
    non_negative = non_negative && begin[d] >= 0 && end[d] >= 0;
  }
  if (zero) {
    ++im.removed_ops[im.node->op_type()];
    return im.set_output_value(0, im.input(0));
  }
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") return im.bad("unknown mode '" + mode + "'");
  if (mode == "wrap") return im.unsupported("Pad mode 'wrap' is not supported (constant, reflect and edge are)");
  if (im.is_constant(0) || mode != "constant" || value != 0.f || !spatial_only || !non_negative) {
    ir::PadAttrs a;
    a.mode = mode == "reflect" ? PadMode::REFLECT : mode == "edge" ? PadMode::EDGE : PadMode::CONSTANT;
    a.pad_begin = begin;
    a.pad_end = end;
    a.value = value;
    for (int64_t d = 0; d < rank; ++d) {
      if (dims[d] + begin[d] + end[d] < 1) {
        return im.unsupported("the Pad crops dim " + std::to_string(d) + " to nothing (empty tensors are not supported)");
      }
      if (a.mode == PadMode::REFLECT && (begin[d] >= dims[d] || end[d] >= dims[d])) {
        return im.unsupported("reflect pads of dim " + std::to_string(d) + " (" + std::to_string(begin[d]) + ", " +
                              std::to_string(end[d]) + ") reach past its size " + std::to_string(dims[d]) +
                              " (reflecting more than once is not supported)");
      }
    }
    int x = -1, y = -1;
    st = im.ir_input(0, &x);
    if (st.ok()) st = im.ir_check(im.g->pad(im.ir_name(), x, a, &y));
    if (!st.ok()) return st;
    return im.set_output(0, y);
  }
  // Folded into the Conv reading it (import_conv); any other reader gets a PAD node
  // (Importer::materialize_pad).
  int x = -1;
  st = im.ir_input(0, &x);
  if (!st.ok()) return st;
  Value v;
  v.tensor = x;
  v.pending_pad = true;
  v.pad_node = im.node_name;
  v.pad_begin.assign(begin.begin() + 2, begin.end());
  v.pad_end.assign(end.begin() + 2, end.end());
  return im.set_output_value(0, v);
}

// ---- ConvTranspose --------------------------------------------------------------------------------

Status import_conv_transpose(Importer& im) {
  Status st = im.require_input(0, "X");
  if (st.ok()) st = im.require_input(1, "W");
  if (!st.ok()) return st;
  int x = -1;
  size_t sr = 0;
  st = spatial_input(im, &x, &sr);
  if (!st.ok()) return st;
  const std::vector<int64_t> xd = im.g->tensors[x].dims;
  const DType dt = im.g->tensors[x].dtype;
  const Constant* wc = nullptr;
  st = im.constant_input(1, "weight", &wc);
  if (!st.ok()) return st;
  if (wc->is_int()) return im.bad("W must be a float tensor");
  if (wc->dims.size() != sr + 2) return im.bad("W has dims " + dims_text(wc->dims) + ", expected rank " + std::to_string(sr + 2));
  if (wc->dims[0] != xd[1]) {
    return im.bad("W " + dims_text(wc->dims) + " has " + std::to_string(wc->dims[0]) + " input channels but X " +
                  dims_text(xd) + " has " + std::to_string(xd[1]) + " (W is C_in x C_out/group x kernel)");
  }
  std::vector<int64_t> kernel, strides, dilations, out_pad, out_shape;
  int64_t group = 1;
  std::string auto_pad;
  st = im.attr_ints("kernel_shape", &kernel);
  if (st.ok() && !kernel.empty() && kernel != std::vector<int64_t>(wc->dims.begin() + 2, wc->dims.end())) {
    st = im.bad("kernel_shape " + dims_text(kernel) + " differs from W's dims " + dims_text(wc->dims));
  }
  if (st.ok()) st = spatial_attr(im, "strides", sr, 1, &strides);
  if (st.ok()) st = spatial_attr(im, "dilations", sr, 1, &dilations);
  if (st.ok()) st = spatial_attr(im, "output_padding", sr, 0, &out_pad);
  if (st.ok()) st = im.attr_ints("output_shape", &out_shape);
  if (st.ok()) st = im.attr_int("group", 1, &group);
  if (st.ok()) st = im.attr_string("auto_pad", "NOTSET", &auto_pad);
  if (!st.ok()) return st;
  if (group < 1 || wc->dims[0] % group != 0) {
    return im.bad("group " + std::to_string(group) + " does not divide W's " + std::to_string(wc->dims[0]) + " input channels");
  }
  // Some exporters write output_shape with N and C in front.
  if (out_shape.size() == sr + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  if (!out_shape.empty() && out_shape.size() != sr) {
    return im.bad("output_shape has " + std::to_string(out_shape.size()) + " entries, expected " + std::to_string(sr));
  }
  const int64_t big = int64_t(1) << 31;  // ConvDesc's limit; keeps the arithmetic below exact
  ir::ConvTransposeAttrs a;
  a.pad_begin.assign(sr, 0);
  a.pad_end.assign(sr, 0);
  std::vector<int64_t> pads, out(sr);
  st = im.attr_ints("pads", &pads);
  if (!st.ok()) return st;
  if (auto_pad == "NOTSET" && !pads.empty() && pads.size() != 2 * sr) {
    return im.bad("pads has " + std::to_string(pads.size()) + " entries, expected " + std::to_string(2 * sr));
  }
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    return im.bad("unknown auto_pad '" + auto_pad + "'");
  }
  for (size_t d = 0; d < sr; ++d) {
    const int64_t s = strides[d], dl = dilations[d], op = out_pad[d], k = wc->dims[d + 2];
    if (s < 1 || dl < 1 || s > big || dl > big) return im.bad("strides and dilations must be in 1..2^31");
    if (op < 0) return im.bad("output_padding must be >= 0");
    if (op >= s) {
      return im.unsupported("output_padding " + std::to_string(op) + " >= stride " + std::to_string(s) +
                            " (conv_backward_data needs output_padding < stride)");
    }
    // The full transposed extent: every tap of every input position, plus output_padding.
    const int64_t full = s * (xd[d + 2] - 1) + op + (k - 1) * dl + 1;
    int64_t total = 0;  // pad_begin + pad_end
    bool upper = true;  // where an odd total's extra pad goes (SAME_UPPER: the end)
    if (!out_shape.empty()) {
      out[d] = out_shape[d];
      total = full - out[d];
      upper = auto_pad == "SAME_UPPER";
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out[d] = xd[d + 2] * s;
      total = full - out[d];
      upper = auto_pad == "SAME_UPPER";
    } else {
      if (auto_pad == "NOTSET" && !pads.empty()) {
        a.pad_begin[d] = pads[d];
        a.pad_end[d] = pads[d + sr];
      }
      if (a.pad_begin[d] < 0 || a.pad_end[d] < 0 || a.pad_begin[d] > big || a.pad_end[d] > big) {
        return im.bad("pads must be in 0..2^31");
      }
      out[d] = full - a.pad_begin[d] - a.pad_end[d];
      continue;
    }
    if (total < 0) {
      return im.unsupported("output size " + std::to_string(out[d]) + " of spatial dim " + std::to_string(d) +
                            " exceeds the full transposed extent " + std::to_string(full) + " (negative padding)");
    }
    a.pad_begin[d] = upper ? total / 2 : total - total / 2;
    a.pad_end[d] = total - a.pad_begin[d];
  }
  for (size_t d = 0; d < sr; ++d) {
    if (out[d] < 1) return im.bad("the output would be empty along spatial dim " + std::to_string(d));
  }
  a.strides = strides;
  a.dilations = dilations;
  a.groups = group;
  int w = -1, bias = -1, y = -1;
  st = im.ir_constant(im.input(1).constant, dt, {}, &w);
  if (!st.ok()) return st;
  const int64_t c_out = wc->dims[1] * group;
  if (im.has_input(2)) {
    const Constant* bc = nullptr;
    st = im.constant_input(2, "bias", &bc);
    if (!st.ok()) return st;
    if (bc->elements() != c_out) {
      return im.bad("B has dims " + dims_text(bc->dims) + ", expected " + std::to_string(c_out) + " values (one per output channel)");
    }
    st = im.ir_constant(im.input(2).constant, dt, {c_out}, &bias);
    if (!st.ok()) return st;
  }
  st = im.ir_check(im.g->conv_transpose(im.ir_name(), x, w, bias, a, out, &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

// ---- InstanceNormalization, LRN -------------------------------------------------------------------

Status import_instance_norm(Importer& im) {
  int x = -1;
  size_t sr = 0;
  Status st = spatial_input(im, &x, &sr);
  if (!st.ok()) return st;
  float epsilon = 1e-5f;
  st = im.attr_float("epsilon", 1e-5f, &epsilon);
  if (!st.ok()) return st;
  if (!(epsilon > 0.f) || !std::isfinite(epsilon)) return im.bad("epsilon must be finite and > 0");
  const int64_t c = im.g->tensors[x].dims[1];
  int params[2] = {-1, -1};
  const char* names[2] = {"scale", "B"};
  for (int i = 0; i < 2; ++i) {
    const Constant* pc = nullptr;
    st = im.constant_input(i + 1, names[i], &pc);
    if (!st.ok()) return st;
    if (pc->is_int()) return im.bad(std::string(names[i]) + " must be a float tensor");
    if (pc->elements() != c) return im.bad(std::string(names[i]) + " has dims " + dims_text(pc->dims) + ", expected " + std::to_string(c) + " values");
    // instancenorm_forward reads its parameters as float32 whatever x's dtype.
    st = im.ir_constant(im.input(i + 1).constant, DType::F32, {c}, &params[i]);
    if (!st.ok()) return st;
  }
  int y = -1;
  st = im.ir_check(im.g->instancenorm(im.ir_name(), x, params[0], params[1], epsilon, &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

// LayerNormalization (opset 17): axis, epsilon; Scale and the optional B constant, each of the
// normalized shape (x's dims from axis on) or broadcast to it. stash_type is ignored: the
// statistics are always computed in f32 or better. Y is one LAYERNORM; the Mean and InvStdDev
// outputs, when used, are computed beside it from the definition (REDUCE MEAN; SUB, MUL, REDUCE
// MEAN, ADD eps, SQRT, RECIPROCAL), with the group's dims kept as 1.
Status import_layer_norm(Importer& im) {
  int x = -1;
  Status st = im.ir_input(0, &x);
  if (!st.ok()) return st;
  int64_t axis = -1;
  float epsilon = 1e-5f;
  st = im.attr_int("axis", -1, &axis);
  if (st.ok()) st = im.attr_float("epsilon", 1e-5f, &epsilon);
  if (!st.ok()) return st;
  const std::vector<int64_t> xd = im.g->tensors[x].dims;
  st = im.normalize_axis(axis, static_cast<int64_t>(xd.size()), "axis", &axis);
  if (!st.ok()) return st;
  if (!(epsilon > 0.f) || !std::isfinite(epsilon)) return im.bad("epsilon must be finite and > 0");
  const std::vector<int64_t> normalized(xd.begin() + axis, xd.end());
  int64_t inner = 1;
  for (int64_t d : normalized) inner *= d;
  int params[2] = {-1, -1};
  const char* names[2] = {"Scale", "B"};
  for (int i = 0; i < 2; ++i) {
    if (!im.has_input(i + 1)) {
      if (i == 0) return im.bad("has no Scale input");
      continue;
    }
    const Constant* pc = nullptr;
    st = im.constant_input(i + 1, names[i], &pc);
    if (!st.ok()) return st;
    if (pc->is_int()) return im.bad(std::string(names[i]) + " must be a float tensor");
    std::vector<int64_t> bd;
    if (pc->elements() == inner) {
      // layernorm_forward reads its parameters as float32 whatever x's dtype.
      st = im.ir_constant(im.input(i + 1).constant, DType::F32, {inner}, &params[i]);
    } else if (pc->dims.size() <= normalized.size() && broadcast_shapes(pc->dims, normalized, &bd) && bd == normalized) {
      const Constant e = expand_constant(*pc, normalized);
      st = im.ir_constant_values(im.ir_name(names[i]), DType::F32, {inner}, e.floats, &params[i]);
    } else {
      return im.bad(std::string(names[i]) + " has dims " + dims_text(pc->dims) + ", which do not broadcast to " +
                    dims_text(normalized) + " (x's dims from axis " + std::to_string(axis) + " on)");
    }
    if (!st.ok()) return st;
  }
  fb::LayerNormParamsT a;
  a.axis = static_cast<int>(axis);
  a.epsilon = epsilon;
  a.has_scale = params[0] >= 0;
  a.has_bias = params[1] >= 0;
  std::vector<int> inputs = {x};
  for (int p : params) {
    if (p >= 0) inputs.push_back(p);
  }
  int y = -1;
  st = im.ir_check(im.g->add_op(im.ir_name(), inputs, a, &y));
  if (st.ok()) st = im.set_output(0, y);
  if (!st.ok() || (!im.output_used(1) && !im.output_used(2))) return st;
  std::vector<int64_t> axes;
  for (int64_t d = axis; d < static_cast<int64_t>(xd.size()); ++d) axes.push_back(d);
  int mean = -1, d = -1, sq = -1, var = -1, eps = -1, ve = -1, sd = -1, inv = -1;
  st = im.ir_check(im.g->reduce(im.ir_name("mean"), x, ReduceOp::MEAN, axes, &mean));
  if (st.ok()) st = im.set_output(1, mean);
  if (!st.ok() || !im.output_used(2)) return st;
  const DType dt = im.g->tensors[x].dtype;
  st = im.ir_check(im.g->op_tensor(im.ir_name("centered"), TensorOp::SUB, x, mean, &d));
  if (st.ok()) st = im.ir_check(im.g->op_tensor(im.ir_name("squares"), TensorOp::MUL, d, d, &sq));
  if (st.ok()) st = im.ir_check(im.g->reduce(im.ir_name("var"), sq, ReduceOp::MEAN, axes, &var));
  if (st.ok()) st = scalar_constant(im, "epsilon", dt, xd.size(), epsilon, &eps);
  if (st.ok()) st = im.ir_check(im.g->op_tensor(im.ir_name("var_eps"), TensorOp::ADD, var, eps, &ve));
  if (st.ok()) st = im.ir_check(im.g->activation(im.ir_name("std"), ve, ActivationDesc::of(ActivationMode::SQRT), &sd));
  if (st.ok()) st = im.ir_check(im.g->activation(im.ir_name("inv_std"), sd, ActivationDesc::of(ActivationMode::RECIPROCAL), &inv));
  if (!st.ok()) return st;
  return im.set_output(2, inv);
}

// GroupNormalization (18+): x [N, C, ...] in num_groups groups of C / num_groups channels, each
// normalized over its channels and spatial dims, then a per-channel scale and bias: a RESHAPE to
// [N, G, rest], a LAYERNORM over the last dim, a RESHAPE back, OP_TENSOR MUL and ADD by constants.
// scale and bias have num_groups values before opset 21 (one per group) and C from 21.
Status import_group_norm(Importer& im) {
  int x = -1;
  Status st = im.ir_input(0, &x);
  if (!st.ok()) return st;
  int64_t groups = 0;
  float epsilon = 1e-5f;
  st = im.attr_int("num_groups", 0, &groups);
  if (st.ok()) st = im.attr_float("epsilon", 1e-5f, &epsilon);
  if (!st.ok()) return st;
  const std::vector<int64_t> xd = im.g->tensors[x].dims;
  const DType dt = im.g->tensors[x].dtype;
  if (xd.size() < 3) return im.bad("X " + dims_text(xd) + " must have rank >= 3");
  const int64_t c = xd[1];
  if (groups < 1 || c % groups != 0)
    return im.bad("num_groups " + std::to_string(groups) + " does not divide C = " + std::to_string(c));
  if (!(epsilon > 0.f) || !std::isfinite(epsilon)) return im.bad("epsilon must be finite and > 0");
  const int64_t per_param = im.opset >= 21 ? c : groups;
  std::vector<float> params[2];
  const char* names[2] = {"scale", "bias"};
  for (int i = 0; i < 2; ++i) {
    const Constant* pc = nullptr;
    st = im.constant_input(i + 1, names[i], &pc);
    if (!st.ok()) return st;
    if (pc->is_int() || pc->elements() != per_param)
      return im.bad(std::string(names[i]) + " has dims " + dims_text(pc->dims) + ", expected " + std::to_string(per_param) +
                    " float values");
    for (int64_t k = 0; k < c; ++k) params[i].push_back(pc->floats[static_cast<size_t>(im.opset >= 21 ? k : k / (c / groups))]);
  }
  int64_t rest = 1;
  for (size_t d = 1; d < xd.size(); ++d) rest *= xd[d];
  rest /= groups;
  std::vector<int64_t> pdims(xd.size(), 1);
  pdims[1] = c;
  int g3 = -1, n3 = -1, n = -1, s = -1, b = -1, scaled = -1, y = -1;
  st = im.ir_check(im.g->reshape(im.ir_name("groups"), x, {xd[0], groups, rest}, &g3));
  fb::LayerNormParamsT normalize;  // over each group, no scale or bias
  normalize.axis = 2;
  normalize.epsilon = epsilon;
  if (st.ok()) st = im.ir_check(im.g->add_op(im.ir_name("normalize"), {g3}, normalize, &n3));
  if (st.ok()) st = im.ir_check(im.g->reshape(im.ir_name("ungroup"), n3, xd, &n));
  if (st.ok()) st = im.ir_constant_values(im.ir_name("scale"), dt, pdims, params[0], &s);
  if (st.ok()) st = im.ir_constant_values(im.ir_name("bias"), dt, pdims, params[1], &b);
  if (st.ok()) st = im.ir_check(im.g->op_tensor(im.ir_name("scaled"), TensorOp::MUL, n, s, &scaled));
  if (st.ok()) st = im.ir_check(im.g->op_tensor(im.ir_name(), TensorOp::ADD, scaled, b, &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

Status import_lrn(Importer& im) {
  int x = -1;
  size_t sr = 0;
  Status st = spatial_input(im, &x, &sr);
  if (!st.ok()) return st;
  float alpha = 0.f, beta = 0.f, bias = 0.f;
  int64_t size = 0;
  st = im.attr_float("alpha", 1e-4f, &alpha);
  if (st.ok()) st = im.attr_float("beta", 0.75f, &beta);
  if (st.ok()) st = im.attr_float("bias", 1.f, &bias);
  if (st.ok()) st = im.attr_int("size", 0, &size);
  if (st.ok() && !im.has_attr("size")) st = im.bad("missing attribute 'size'");
  if (!st.ok()) return st;
  if (size < 1) return im.bad("size must be >= 1");
  LrnDesc l;
  l.n = size;
  l.alpha = alpha;
  l.beta = beta;
  l.k = bias;
  if (!std::isfinite(alpha) || !std::isfinite(beta) || !std::isfinite(bias)) return im.bad("alpha, beta and bias must be finite");
  st = l.validate();
  if (!st.ok()) return im.unsupported("LRN outside the kernel's limits: " + st.message());
  fb::LrnParamsT a;
  a.size = l.n;
  a.alpha = l.alpha;
  a.beta = l.beta;
  a.k = l.k;
  int y = -1;
  st = im.ir_check(im.g->add_op(im.ir_name(), {x}, a, &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

// ---- Resize, Upsample -----------------------------------------------------------------------------

namespace {

// A constant float list input (scales); absent or empty -> empty.
Status float_list_input(Importer& im, int i, const char* what, std::vector<float>* out) {
  out->clear();
  if (!im.has_input(i)) return Status::success();
  const Constant* c = nullptr;
  Status st = im.constant_input(i, what, &c);
  if (!st.ok()) return st;
  if (c->is_int()) return im.bad(std::string(what) + " must be a float tensor");
  *out = c->floats;
  return Status::success();
}

// The common tail of Resize and Upsample: full-rank scales (or sizes) -> a RESIZE node. N and C
// must keep their size.
Status resize_node(Importer& im, ir::ResizeAttrs a, const std::vector<float>& scales, const std::vector<int64_t>& sizes) {
  int x = -1;
  Status st = im.ir_input(0, &x);
  if (!st.ok()) return st;
  const std::vector<int64_t> xd = im.g->tensors[x].dims;
  const size_t rank = xd.size();
  if (rank < 3 || rank > 5) {
    return im.unsupported("resizing a rank-" + std::to_string(rank) + " tensor (N, C and 1 to 3 spatial dims are supported)");
  }
  std::vector<int64_t> out(rank);
  a.scales.assign(rank - 2, 0.f);
  for (size_t d = 0; d < rank; ++d) {
    if (!scales.empty()) {
      const float s = scales[d];
      if (!(s > 0.f) || !std::isfinite(s)) return im.bad("scale " + std::to_string(s) + " of dim " + std::to_string(d) + " must be finite and > 0");
      const double o = std::floor(static_cast<double>(xd[d]) * s);
      if (!(o >= 1) || o > static_cast<double>(int64_t(1) << 40)) {
        return im.unsupported("scale " + std::to_string(s) + " gives dim " + std::to_string(d) + " the size " + std::to_string(o));
      }
      out[d] = static_cast<int64_t>(o);
      if (d >= 2) a.scales[d - 2] = s;  // the coordinate mapping uses the scale itself
    } else {
      if (sizes[d] < 1) return im.unsupported("sizes give dim " + std::to_string(d) + " the size " + std::to_string(sizes[d]));
      out[d] = sizes[d];
    }
  }
  if (out[0] != xd[0] || out[1] != xd[1] || (!scales.empty() && (scales[0] != 1.f || scales[1] != 1.f))) {
    return im.unsupported("resizing the N or C dim (only the spatial dims 2.." + std::to_string(rank - 1) + " may change)");
  }
  int y = -1;
  st = im.ir_check(im.g->resize(im.ir_name(), x, a, out, &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

// ONNX's mode attribute: "nearest", "linear" (older files: "bilinear"), "cubic" (Resize-11+).
Status resize_mode(Importer& im, ir::ResizeAttrs* a) {
  std::string mode;
  Status st = im.attr_string("mode", "nearest", &mode);
  if (!st.ok()) return st;
  if (mode == "nearest") {
    a->mode = ResizeMode::NEAREST;
  } else if (mode == "linear" || mode == "bilinear" || mode == "trilinear") {
    a->mode = ResizeMode::LINEAR;
  } else if (mode == "cubic") {
    if (im.opset < 11) return im.bad("mode 'cubic' does not exist before Resize-11");
    a->mode = ResizeMode::CUBIC;
  } else {
    return im.bad("unknown mode '" + mode + "'");
  }
  return Status::success();
}

// Before Resize-11 (Upsample, Resize-10): asymmetric coordinates, and nearest rounds down when
// enlarging and up when shrinking (ONNX Runtime's "simple" mode, which the conformance data
// follows). One rounding serves all dims, so mixing the two directions is rejected.
Status legacy_nearest(Importer& im, const std::vector<float>& scales, ir::ResizeAttrs* a) {
  a->coord = ResizeCoord::ASYMMETRIC;
  bool up = false, down = false;
  for (size_t d = 2; d < scales.size(); ++d) {
    up = up || scales[d] > 1.f;
    down = down || scales[d] < 1.f;
  }
  if (a->mode == ResizeMode::NEAREST && up && down) {
    return im.unsupported("nearest resizing that enlarges some dims and shrinks others (before opset 11)");
  }
  a->nearest = down ? ResizeNearest::CEIL : ResizeNearest::FLOOR;
  return Status::success();
}

}  // namespace

Status import_upsample(Importer& im) {
  Status st = im.require_input(0, "X");
  if (!st.ok()) return st;
  if (im.opset < 7) return im.unsupported("Upsample before opset 7 (height_scale / width_scale attributes) is not supported");
  ir::ResizeAttrs a;
  st = resize_mode(im, &a);
  if (!st.ok()) return st;
  std::vector<float> scales;
  if (im.opset < 9) {
    st = im.attr_floats("scales", &scales);
    if (st.ok() && scales.empty()) st = im.bad("missing attribute 'scales'");
  } else {
    st = im.require_input(1, "scales");
    if (st.ok()) st = float_list_input(im, 1, "scales", &scales);
  }
  if (!st.ok()) return st;
  if (scales.size() != im.input_dims(0).size()) {
    return im.bad("scales has " + std::to_string(scales.size()) + " entries for X of rank " + std::to_string(im.input_dims(0).size()));
  }
  st = legacy_nearest(im, scales, &a);
  if (!st.ok()) return st;
  return resize_node(im, a, scales, {});
}

Status import_resize(Importer& im) {
  Status st = im.require_input(0, "X");
  if (!st.ok()) return st;
  ir::ResizeAttrs a;
  st = resize_mode(im, &a);
  if (!st.ok()) return st;
  const std::vector<int64_t> xd = im.input_dims(0);
  const size_t rank = xd.size();
  std::vector<float> scales;
  std::vector<int64_t> sizes;
  if (im.opset < 11) {
    st = im.require_input(1, "scales");
    if (st.ok()) st = float_list_input(im, 1, "scales", &scales);
    if (st.ok() && scales.size() != rank) st = im.bad("scales has " + std::to_string(scales.size()) + " entries for X of rank " + std::to_string(rank));
    if (st.ok()) st = legacy_nearest(im, scales, &a);
    if (!st.ok()) return st;
    return resize_node(im, a, scales, {});
  }
  // Opset 11+: X, roi, scales, sizes (exactly one of scales and sizes non-empty).
  std::string coord, nearest, policy = "stretch";
  int64_t exclude_outside = 0, antialias = 0;
  std::vector<int64_t> axes;
  st = im.attr_string("coordinate_transformation_mode", "half_pixel", &coord);
  if (st.ok()) st = im.attr_string("nearest_mode", "round_prefer_floor", &nearest);
  if (st.ok()) st = im.attr_int("exclude_outside", 0, &exclude_outside);
  if (st.ok() && im.opset >= 18) st = im.attr_int("antialias", 0, &antialias);
  if (st.ok() && im.opset >= 18) st = im.attr_ints("axes", &axes);
  if (st.ok() && im.opset >= 18) st = im.attr_string("keep_aspect_ratio_policy", "stretch", &policy);
  if (st.ok()) st = float_list_input(im, 2, "scales", &scales);
  if (st.ok() && im.has_input(3)) {
    const Constant* c = nullptr;
    st = im.constant_input(3, "sizes", &c);
    if (st.ok() && c->elements() > 0) st = im.ints_input(3, "sizes", &sizes);
  }
  if (!st.ok()) return st;
  static const char* const kCoords[] = {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                                        "tf_half_pixel_for_nn"};
  bool known = false;
  for (int i = 0; i < 5; ++i) {
    if (coord == kCoords[i]) {
      a.coord = static_cast<ResizeCoord>(i);
      known = true;
    }
  }
  if (!known) {
    if (coord == "tf_crop_and_resize" || coord == "half_pixel_symmetric") {
      return im.unsupported("coordinate_transformation_mode '" + coord + "' is not supported");
    }
    return im.bad("unknown coordinate_transformation_mode '" + coord + "'");
  }
  static const char* const kNearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  known = false;
  for (int i = 0; i < 4; ++i) {
    if (nearest == kNearest[i]) {
      a.nearest = static_cast<ResizeNearest>(i);
      known = true;
    }
  }
  if (!known) return im.bad("unknown nearest_mode '" + nearest + "'");
  if (exclude_outside != 0 && a.mode == ResizeMode::LINEAR) {
    return im.unsupported("exclude_outside = 1 with linear mode is not supported");
  }
  if (a.mode == ResizeMode::CUBIC) {
    float coeff = -0.75f;
    st = im.attr_float("cubic_coeff_a", -0.75f, &coeff);
    if (!st.ok()) return st;
    if (!std::isfinite(coeff)) return im.bad("cubic_coeff_a must be finite");
    a.cubic_coeff_a = coeff;
    a.exclude_outside = exclude_outside != 0;
  }
  if (policy != "stretch" && !sizes.empty()) {
    return im.unsupported("keep_aspect_ratio_policy '" + policy + "' is not supported (only 'stretch')");
  }
  if (scales.empty() == sizes.empty()) return im.bad("needs exactly one of scales and sizes");
  // axes (opset 18): scales / sizes cover only those dims; the others keep their size.
  std::vector<int64_t> which;
  if (axes.empty()) {
    for (size_t d = 0; d < rank; ++d) which.push_back(static_cast<int64_t>(d));
  } else {
    std::vector<bool> seen(rank, false);
    for (int64_t ax : axes) {
      int64_t n = 0;
      st = im.normalize_axis(ax, static_cast<int64_t>(rank), "axis", &n);
      if (!st.ok()) return st;
      if (seen[n]) return im.bad("axes list dim " + std::to_string(n) + " twice");
      seen[n] = true;
      which.push_back(n);
    }
  }
  const size_t given = scales.empty() ? sizes.size() : scales.size();
  if (given != which.size()) {
    return im.bad(std::string(scales.empty() ? "sizes" : "scales") + " has " + std::to_string(given) + " entries, expected " +
                  std::to_string(which.size()));
  }
  std::vector<float> full_scales;
  std::vector<int64_t> full_sizes;
  if (!scales.empty()) {
    full_scales.assign(rank, 1.f);
    for (size_t i = 0; i < which.size(); ++i) full_scales[which[i]] = scales[i];
  } else {
    full_sizes = xd;
    for (size_t i = 0; i < which.size(); ++i) full_sizes[which[i]] = sizes[i];
  }
  if (antialias != 0 && a.mode != ResizeMode::NEAREST) {
    for (size_t d = 0; d < rank; ++d) {
      const bool shrinks = scales.empty() ? full_sizes[d] < xd[d] : full_scales[d] < 1.f;
      if (shrinks) return im.unsupported("antialias = 1 when shrinking is not supported");
    }
  }
  return resize_node(im, a, full_scales, full_sizes);
}

// The ONNX ops this file imports: one row each, in docs/onnx.md's order (op_table.cpp says
// what the columns mean and joins the files' lists).
const OpEntry kNnOpRows[] = {
    {"Conv", 1, import_conv, false, "CONV",
     "1D/2D/3D; group (depthwise), dilations, strides, asymmetric pads, auto_pad SAME_UPPER / SAME_LOWER / "
     "VALID; optional bias. W and B must be constants"},
    {"MaxPool", 1, import_max_pool, false, "POOL (MAX)",
     "kernel_shape, strides, pads, auto_pad, ceil_mode (10+); dilations other than 1 and a used Indices "
     "output are unsupported"},
    {"AveragePool", 1, import_average_pool, false, "POOL (AVG_INCLUDE_PAD / AVG_EXCLUDE_PAD)",
     "count_include_pad (7+), ceil_mode (10+), asymmetric pads, auto_pad; dilations (19+) other than 1 "
     "unsupported"},
    {"GlobalAveragePool", 1, import_global_average_pool, false, "GLOBAL_POOL (AVG / MAX)",
     "rank 3..5"},
    {"GlobalMaxPool", 1, import_global_max_pool, false, "", ""},
    {"Relu", 1, import_activation<ActivationMode::RELU>, false, "ACTIVATION", ""},
    {"Sigmoid", 1, import_activation<ActivationMode::SIGMOID>, false, "", ""},
    {"Tanh", 1, import_activation<ActivationMode::TANH>, false, "", ""},
    {"Softplus", 1, import_activation<ActivationMode::SOFTPLUS>, false, "", ""},
    {"LeakyRelu", 1, import_leaky_relu, false, "ACTIVATION",
     "alpha / beta / gamma attributes with ONNX's defaults"},
    {"Elu", 1, import_elu, false, "", ""},
    {"Selu", 1, import_selu, false, "", ""},
    {"HardSigmoid", 1, import_hard_sigmoid, false, "", ""},
    {"HardSwish", 14, import_activation<ActivationMode::HARD_SWISH>, false, "ACTIVATION", ""},
    {"Mish", 18, import_activation<ActivationMode::MISH>, false, "", ""},
    {"Exp", 1, import_activation<ActivationMode::EXP>, false, "ACTIVATION",
     "one activation mode each (`jet::ActivationMode`: the same formula on every backend, fusable into a "
     "Conv's epilogue); Round halves to even; float tensors (integer constants: see folding above). Neg and "
     "Abs of INT32 / INT64 tensors: OP_TENSOR SUB (+ MAX), 0 - x, max(x, 0 - x): exact, the lowest integer "
     "wraps to itself (numpy)"},
    {"Log", 1, import_activation<ActivationMode::LOG>, false, "", ""},
    {"Sqrt", 1, import_activation<ActivationMode::SQRT>, false, "", ""},
    {"Reciprocal", 1, import_activation<ActivationMode::RECIPROCAL>, false, "", ""},
    {"Abs", 1, import_activation<ActivationMode::ABS>, true, "", ""},
    {"Neg", 1, import_activation<ActivationMode::NEG>, true, "", ""},
    {"Floor", 1, import_activation<ActivationMode::FLOOR>, false, "", ""},
    {"Ceil", 1, import_activation<ActivationMode::CEIL>, false, "", ""},
    {"Round", 11, import_activation<ActivationMode::ROUND>, false, "", ""},
    {"Sign", 9, import_activation<ActivationMode::SIGN>, false, "", ""},
    {"Sin", 7, import_activation<ActivationMode::SIN>, false, "", ""},
    {"Cos", 7, import_activation<ActivationMode::COS>, false, "", ""},
    {"Tan", 7, import_activation<ActivationMode::TAN>, false, "", ""},
    {"Erf", 9, import_activation<ActivationMode::ERF>, false, "", ""},
    {"Softsign", 1, import_activation<ActivationMode::SOFTSIGN>, false, "", ""},
    {"Gelu", 20, import_gelu, false, "ACTIVATION (GELU / GELU_TANH)",
     "approximate none or tanh"},
    {"Clip", 1, import_clip, false, "ACTIVATION",
     "bounds are attributes before 11, constant inputs from 11 (a computed bound is unsupported); min 0 / "
     "max 6 becomes CLIPPED_RELU (relu6), min 0 alone RELU, anything else CLIP (a missing bound is the float "
     "range)"},
    {"PRelu", 1, import_prelu, false, "OP_TENSOR x2 or ACTIVATION + OP_TENSOR x3",
     "constant slope broadcast to X (opset 6: a C-vector is per channel); slopes in [0, 1]: max(x, slope * "
     "x); otherwise relu(x) + slope * min(x, 0). Both exact"},
    {"Add", 1, import_add, true, "OP_TENSOR",
     "numpy broadcasting (lower ranks padded by a RESHAPE or constant dims); opset 6: `broadcast` / `axis` "
     "legacy broadcasting of Add/Sub/Mul/Div (broadcast = 0 needs equal shapes); Max/Min variadic. FLOAT, "
     "FLOAT16, and INT32 / INT64 tensors computed exactly in their type (Div truncates toward zero, a zero "
     "divisor gives 0, overflow wraps; `docs/ops.md`)"},
    {"Sub", 1, import_sub, true, "", ""},
    {"Mul", 1, import_mul, true, "", ""},
    {"Div", 1, import_div, true, "", ""},
    {"Max", 1, import_max, true, "", ""},
    {"Min", 1, import_min, true, "", ""},
    {"Sum", 1, import_sum, true, "chain of OP_TENSOR ADD",
     "variadic; one input is removed"},
    {"Pow", 1, import_pow, true, "OP_TENSOR POW (MUL, TRANSFORM)",
     "numpy broadcasting; a constant scalar exponent (float or integer) of 1 is removed, 2 is x * x. INT32 / "
     "INT64 base and exponent: exact integer power. Mixed types (12+): a float base with an integer exponent "
     "converts the exponent; an integer base with a float exponent computes in f32 and truncates to the "
     "base's type (as ONNX Runtime)"},
    {"Mod", 10, import_mod, true, "OP_TENSOR MOD or MOD_FLOOR",
     "fmod = 1: C's fmod, the dividend's sign (the only form ONNX allows for floats); fmod = 0 on INT32 / "
     "INT64 tensors: MOD_FLOOR, the divisor's sign (a zero divisor gives 0); numpy broadcasting; constants "
     "folded; fmod = 0 of a computed float tensor is unsupported"},
    {"Gemm", 1, import_gemm, false, "GEMM (+ OP_TENSOR)",
     "transA/transB; alpha folded into a constant A or B (else a MUL after); beta * C folded into a constant "
     "bias, C unidirectionally broadcast (scalar, N, 1xN, Mx1, MxN); a computed C is the bias when beta is "
     "1, else added after; opset 6 `broadcast`"},
    {"MatMul", 1, import_matmul, false, "GEMM (+ RESHAPE)",
     "2-D; batched with equal batch dims or one side with batch 1 (rank 3 GEMM); any-rank A times a matrix B "
     "(batch folded into the rows); vector operands (numpy's 1-D rules). Partially broadcast batch dims are "
     "unsupported"},
    {"Softmax", 1, import_softmax, false, "SOFTMAX (ACCURATE / LOG)",
     "before 13: axis default 1 and the input coerced to 2-D at axis (RESHAPE, softmax over the flattened "
     "trailing dims, RESHAPE back; no reshapes when axis is the last dim); from 13: axis default -1, one "
     "axis"},
    {"LogSoftmax", 1, import_log_softmax, false, "", ""},
    {"BatchNormalization", 1, import_batch_norm, false, "BATCHNORM",
     "all versions; epsilon; constant parameters (stored F32); rank 2 inputs run as N x C x 1; training "
     "outputs, training_mode = 1 and spatial = 0 with per-element parameters are unsupported"},
    {"Concat", 1, import_concat, true, "CONCAT",
     "negative axes; constant inputs materialized, empty constants skipped; all-constant inputs folded"},
    {"Cast", 1, import_cast, true, "TRANSFORM or removed",
     "computed tensors: between FLOAT, FLOAT16, INT32, INT64 and BOOL (TRANSFORM, or removed when the type "
     "does not change; float -> integer truncates, -> BOOL is != 0); constants: any numeric type"},
    {"ReduceMean", 1, import_reduce_mean, false, "GLOBAL_POOL or REDUCE (+ OP_TENSOR, RESHAPE)",
     "axes attribute before 18 (ReduceSum: before 13), constant input after; negative and repeated axes; no "
     "axes = all (noop_with_empty_axes removes the op); keepdims (0: a RESHAPE after). Computed tensors: "
     "Mean/Max/Sum over exactly the spatial dims are GLOBAL_POOL (ReduceSum = mean x count), everything else "
     "(ReduceMin, any other axes) a REDUCE. A rank-0 result of a computed tensor is unsupported. Constants: "
     "folded"},
    {"ReduceMax", 1, import_reduce_max, false, "", ""},
    {"ReduceSum", 1, import_reduce_sum, false, "", ""},
    {"ReduceMin", 1, import_reduce_min, false, "", ""},
    {"ReduceL1", 1, import_reduce_l1, false,
     "ACTIVATION / OP_TENSOR + REDUCE or GLOBAL_POOL (+ ACTIVATION, OP_TENSOR)",
     "as the reductions above (axes input from 18), composed: sum(abs x), sqrt(sum(x * x)), sum(x * x), "
     "log(sum x), max + log(sum(exp(x - max))) (no overflow); float tensors; constants folded; "
     "noop_with_empty_axes with no axes unsupported"},
    {"ReduceL2", 1, import_reduce_l2, false, "", ""},
    {"ReduceSumSquare", 1, import_reduce_sum_square, false, "", ""},
    {"ReduceLogSum", 1, import_reduce_log_sum, false, "", ""},
    {"ReduceLogSumExp", 1, import_reduce_log_sum_exp, false, "", ""},
    {"Pad", 1, import_pad, false, "PAD, or folded into Conv",
     "pads / value attributes before 11, pads / constant_value inputs from 11, axes input 18+; modes "
     "constant, reflect, edge (wrap unsupported; reflect pads must be < the dim); negative pads crop. A zero "
     "constant Pad of the spatial dims read by a Conv becomes the Conv's pads (any other reader of it gets a "
     "PAD); all-zero pads are removed"},
    {"ConvTranspose", 1, import_conv_transpose, false, "CONV_TRANSPOSE",
     "1D/2D/3D; W (C_in x C_out/group x kernel) and B constant; group, strides, dilations, pads, auto_pad "
     "(SAME_UPPER / SAME_LOWER: output = input x stride; VALID), output_padding, output_shape (spatial, or "
     "with N and C; its padding split as the ONNX spec says). Unsupported: output_padding >= stride, an "
     "output larger than the full transposed extent (negative padding)"},
    {"InstanceNormalization", 1, import_instance_norm, false, "INSTANCENORM",
     "rank 3..5; epsilon; constant scale and B (stored F32, also in f16 models)"},
    {"LayerNormalization", 17, import_layer_norm, false, "LAYERNORM",
     "axis (negative too), epsilon; constant Scale and optional B of the normalized shape or broadcast to it "
     "(stored F32); stash_type ignored (statistics in f32 or better always); the Mean and InvStdDev outputs, "
     "when used, are computed beside it (REDUCE MEAN, then SUB, MUL, REDUCE MEAN, ADD eps, SQRT, "
     "RECIPROCAL). The decomposed form exporters write (ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, "
     "Div, then Mul scale, Add bias) becomes one LAYERNORM in `optimize_graph` (`fuse_layernorm`)"},
    {"GroupNormalization", 18, import_group_norm, false,
     "RESHAPE, LAYERNORM, RESHAPE, OP_TENSOR MUL, ADD",
     "num_groups dividing C, epsilon; constant scale and bias: one value per group before opset 21, per "
     "channel from 21; rank >= 3"},
    {"LRN", 1, import_lrn, false, "LRN",
     "size, alpha, beta, bias; outside the kernel's limits (size 1..16, beta >= 0.01, bias >= 1e-5) "
     "unsupported"},
    {"Resize", 10, import_resize, false, "RESIZE",
     "10: scales input, asymmetric coordinates, nearest rounds down when enlarging and up when shrinking "
     "(ONNX Runtime's rule; mixing the two directions in one nearest op is unsupported). 11, 13, 18, 19: "
     "scales or sizes (roi ignored), coordinate_transformation_mode half_pixel / align_corners / asymmetric "
     "/ pytorch_half_pixel / tf_half_pixel_for_nn, nearest_mode, axes (18). Modes nearest, linear and cubic "
     "(11+: cubic_coeff_a, exclude_outside; ONNX's reference: the unclamped coordinate, 4 taps per axis, "
     "edge values beyond the border). Only spatial dims may change (rank 3..5). Unsupported: "
     "tf_crop_and_resize, half_pixel_symmetric (19), keep_aspect_ratio_policy other than stretch, antialias "
     "when shrinking with linear or cubic, exclude_outside with linear"},
    {"Upsample", 1, import_upsample, false, "RESIZE",
     "7: scales attribute, 9: scales input; nearest / linear as Resize 10. Before 7 unsupported"},
};
const OpList kNnOps = {kNnOpRows, std::size(kNnOpRows)};

}  // namespace onnx_import
}  // namespace jet
