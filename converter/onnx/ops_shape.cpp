// Ops evaluated at import time on the constant table (shape arithmetic and weight
// transformations), and ops that only relabel a tensor's dims (Reshape, Flatten, Squeeze,
// Unsqueeze, relabelling Transposes), which become IR RESHAPE nodes on computed tensors.
#include <algorithm>
#include <cmath>
#include <limits>

#include "importer.h"

namespace jet {
namespace onnx_import {

namespace {

using TP = onnx::TensorProto;

// Constants made up at import time (ConstantOfShape, Expand, Range, ...) are capped: shape
// arithmetic is small, and a huge generated tensor is better computed at run time.
constexpr int64_t kMaxFoldElements = int64_t(1) << 24;

Status check_fold_size(const Importer& im, const std::vector<int64_t>& dims) {
  int64_t n = 0;
  Status st = checked_elements(dims, im.node_label(), &n);
  if (!st.ok()) return st;
  if (n > kMaxFoldElements) {
    return im.unsupported("the constant result (dims " + dims_text(dims) + ") is too large to fold at import time");
  }
  return Status::success();
}

// NOT_SUPPORTED unless inputs [0, count) that are present are all constants.
Status require_constants(const Importer& im, int count, const char* op_what) {
  for (int i = 0; i < count && i < im.input_count(); ++i) {
    if (im.has_input(i) && !im.is_constant(i)) {
      return im.unsupported(std::string(op_what) + " of a computed tensor ('" + im.input_name(i) +
                            "') has no IR op yet; only constant inputs (folded at import time) are supported");
    }
  }
  return Status::success();
}

Constant with_dims(Constant c, std::vector<int64_t> dims) {
  c.dims = std::move(dims);
  return c;
}

Constant int64_list(const std::vector<int64_t>& v) {
  Constant c;
  c.type = TP::INT64;
  c.dims = {static_cast<int64_t>(v.size())};
  c.ints = v;
  return c;
}

// Normalized, sorted, duplicate-free axes for a tensor of rank `rank`.
Status normalize_axes(const Importer& im, std::vector<int64_t> axes, int64_t rank, std::vector<int64_t>* out) {
  for (int64_t& a : axes) {
    Status st = im.normalize_axis(a, rank, "axis", &a);
    if (!st.ok()) return st;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return im.bad("axes list an axis twice");
  *out = std::move(axes);
  return Status::success();
}

// The output of an op whose result has `dims` and relabels input 0's elements in order: a
// constant gets the dims, a computed tensor a RESHAPE.
Status relabel(Importer& im, const std::vector<int64_t>& dims) {
  if (im.is_constant(0)) return im.folded(with_dims(im.constant(0), dims));
  if (dims.empty()) return im.unsupported("the result would be a rank-0 (scalar) computed tensor");
  int x = -1, y = -1;
  Status st = im.ir_input(0, &x);
  if (!st.ok()) return st;
  st = im.reshape_to(x, dims, "", &y);
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

// A SLICE node (a strided copy) of input 0 into output `output`; the node is named after the ONNX
// node (with `suffix`).
Status emit_slice(Importer& im, int output, const std::string& suffix, ir::SliceAttrs a, int* y = nullptr) {
  int x = -1, out = -1;
  Status st = im.ir_input(0, &x);
  if (st.ok()) st = im.ir_check(im.g->slice(im.ir_name(suffix), x, std::move(a), &out));
  if (!st.ok()) return st;
  if (y) *y = out;
  return output >= 0 ? im.set_output(output, out) : Status::success();
}

}  // namespace

Status import_constant(Importer& im) {
  const onnx::TensorProto* t = nullptr;
  Status st = im.attr_tensor("value", &t);
  if (!st.ok()) return st;
  int set = 0;
  for (const onnx::AttributeProto& a : im.node->attribute()) {
    set += a.name() == "value" || a.name() == "value_float" || a.name() == "value_floats" || a.name() == "value_int" ||
           a.name() == "value_ints" || a.name() == "value_string" || a.name() == "value_strings" ||
           a.name() == "sparse_value";
  }
  if (set != 1) return im.bad("needs exactly one value attribute, has " + std::to_string(set));
  Constant c;
  if (t) {
    st = decode_tensor(*t, im.node_label() + " value", im.external_dir, &c);
    if (!st.ok()) return st;
  } else if (im.has_attr("value_float")) {
    float v = 0.f;
    st = im.attr_float("value_float", 0.f, &v);
    if (!st.ok()) return st;
    c.floats = {v};
  } else if (im.has_attr("value_floats")) {
    st = im.attr_floats("value_floats", &c.floats);
    if (!st.ok()) return st;
    c.dims = {static_cast<int64_t>(c.floats.size())};
  } else if (im.has_attr("value_int")) {
    int64_t v = 0;
    st = im.attr_int("value_int", 0, &v);
    if (!st.ok()) return st;
    c.type = TP::INT64;
    c.ints = {v};
  } else if (im.has_attr("value_ints")) {
    st = im.attr_ints("value_ints", &c.ints);
    if (!st.ok()) return st;
    c.type = TP::INT64;
    c.dims = {static_cast<int64_t>(c.ints.size())};
  } else {
    return im.unsupported("string and sparse constants are not supported");
  }
  return im.folded(std::move(c));
}

Status import_identity(Importer& im) {
  Status st = im.require_input(0, "input");
  if (!st.ok()) return st;
  ++im.removed_ops[im.node->op_type()];
  return im.set_output_value(0, im.input(0));
}

Status import_dropout(Importer& im) {
  Status st = im.require_input(0, "data");
  if (!st.ok()) return st;
  st = im.only_outputs_below(1);  // the mask
  if (!st.ok()) return st;
  if (im.opset >= 12 && im.has_input(2)) {
    const Constant* c = nullptr;
    st = im.constant_input(2, "training_mode", &c);
    if (!st.ok()) return st;
    if (c->elements() != 1) return im.bad("training_mode must be a scalar");
    if (c->value(0) != 0) return im.unsupported("Dropout in training mode (training_mode = true) is not supported");
  }
  ++im.removed_ops[im.node->op_type()];
  return im.set_output_value(0, im.input(0));
}

Status import_shape(Importer& im) {
  Status st = im.require_input(0, "data");
  if (!st.ok()) return st;
  std::vector<int64_t> dims = im.input_dims(0);
  const int64_t rank = static_cast<int64_t>(dims.size());
  int64_t start = 0, end = rank;
  if (im.opset >= 15) {
    st = im.attr_int("start", 0, &start);
    if (st.ok()) st = im.attr_int("end", rank, &end);
    if (!st.ok()) return st;
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::min(std::max<int64_t>(start, 0), rank);
    end = std::min(std::max<int64_t>(end, 0), rank);
  }
  std::vector<int64_t> out;
  for (int64_t d = start; d < end; ++d) out.push_back(dims[d]);
  return im.folded(int64_list(out));
}

Status import_size(Importer& im) {
  Status st = im.require_input(0, "data");
  if (!st.ok()) return st;
  int64_t n = 0;
  st = checked_elements(im.input_dims(0), im.node_label(), &n);
  if (!st.ok()) return st;
  Constant c;
  c.type = TP::INT64;
  c.ints = {n};
  return im.folded(std::move(c));
}

Status import_gather(Importer& im) {
  Status st = im.require_input(0, "data");
  if (st.ok()) st = im.require_input(1, "indices");
  if (!st.ok()) return st;
  const std::vector<int64_t> dims = im.input_dims(0);
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (rank == 0) return im.bad("data is a scalar");
  int64_t axis = 0;
  st = im.attr_int("axis", 0, &axis);
  if (st.ok()) st = im.normalize_axis(axis, rank, "axis", &axis);
  if (!st.ok()) return st;
  if (!im.is_constant(1)) {
    // Computed indices (an embedding lookup, a computed position): a GATHER node.
    int x = -1, i = -1, y = -1;
    st = im.ir_input_any(0, &x);
    if (st.ok()) st = im.ir_input(1, &i);
    if (!st.ok()) return st;
    const DType it = im.g->tensors[i].dtype;
    if (it != DType::I32 && it != DType::I64) {
      return im.bad(std::string("indices are ") + dtype_name(it) + ", expected INT32 or INT64");
    }
    if (rank - 1 + static_cast<int64_t>(im.g->tensors[i].dims.size()) > kMaxRank) {
      return im.unsupported("the result would have a rank above " + std::to_string(kMaxRank));
    }
    fb::GatherParamsT a;
    a.axis = static_cast<int>(axis);
    st = im.ir_check(im.g->add_op(im.ir_name(), {x, i}, a, &y));
    if (!st.ok()) return st;
    return im.set_output(0, y);
  }
  const Constant* idx = nullptr;
  st = im.constant_input(1, "indices", &idx);
  if (!st.ok()) return st;
  if (!idx->is_int()) return im.bad("indices have type " + onnx_type_name(idx->type) + ", expected an integer type");
  std::vector<int64_t> indices = idx->ints;
  for (int64_t& i : indices) {
    if (i < -dims[axis] || i >= dims[axis]) {
      return im.bad("index " + std::to_string(i) + " is out of range for dim " + std::to_string(axis) + " of size " +
                    std::to_string(dims[axis]));
    }
    if (i < 0) i += dims[axis];
  }
  std::vector<int64_t> out_dims(dims.begin(), dims.begin() + axis);
  out_dims.insert(out_dims.end(), idx->dims.begin(), idx->dims.end());
  out_dims.insert(out_dims.end(), dims.begin() + axis + 1, dims.end());
  if (!im.is_constant(0)) {
    // Picking the only entry of a size-1 dim is a relabelling (x[:, 0] of an N x 1 x ... tensor).
    if (dims[axis] == 1 && indices.size() == 1) return relabel(im, out_dims);
    // Constant indices on a computed tensor: one SLICE of extent 1 per index along the axis,
    // concatenated when there are several, then relabelled to the output dims.
    if (out_dims.empty()) return im.unsupported("the result would be a rank-0 (scalar) computed tensor");
    if (indices.empty()) return im.unsupported("Gather with no indices gives an empty tensor");
    constexpr size_t kMaxGatherSlices = 64;
    if (indices.size() > kMaxGatherSlices) {
      return im.unsupported("Gather of " + std::to_string(indices.size()) + " indices from a computed tensor (at most " +
                            std::to_string(kMaxGatherSlices) + " are imported, as one slice each)");
    }
    std::vector<int> parts;
    for (size_t k = 0; k < indices.size(); ++k) {
      ir::SliceAttrs a;
      a.starts.assign(rank, 0);
      a.steps.assign(rank, 1);
      a.sizes = dims;
      a.starts[axis] = indices[k];
      a.sizes[axis] = 1;
      int part = -1;
      st = emit_slice(im, -1, indices.size() == 1 ? "slice" : "slice" + std::to_string(k), a, &part);
      if (!st.ok()) return st;
      parts.push_back(part);
    }
    int y = parts[0];
    if (parts.size() > 1) st = im.ir_check(im.g->concat(im.ir_name("concat"), parts, static_cast<int>(axis), &y));
    if (st.ok()) st = im.reshape_to(y, out_dims, "", &y);
    if (!st.ok()) return st;
    return im.set_output(0, y);
  }
  st = check_fold_size(im, out_dims);
  if (!st.ok()) return st;
  const Constant& data = im.constant(0);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= dims[d];
  Constant r;
  r.type = data.type;
  r.dims = out_dims;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i : indices) {
      for (int64_t k = 0; k < inner; ++k) {
        const int64_t src = (o * dims[axis] + i) * inner + k;
        if (data.is_int()) {
          r.ints.push_back(data.ints[src]);
        } else {
          r.floats.push_back(data.floats[src]);
        }
      }
    }
  }
  return im.folded(std::move(r));
}

Status import_unsqueeze(Importer& im) {
  Status st = im.require_input(0, "data");
  if (!st.ok()) return st;
  std::vector<int64_t> axes;
  if (im.opset >= 13) {
    st = im.ints_input(1, "axes", &axes);
  } else {
    st = im.attr_ints("axes", &axes);
    if (st.ok() && !im.has_attr("axes")) st = im.bad("missing attribute 'axes'");
  }
  if (!st.ok()) return st;
  const std::vector<int64_t> dims = im.input_dims(0);
  const int64_t out_rank = static_cast<int64_t>(dims.size() + axes.size());
  st = normalize_axes(im, axes, out_rank, &axes);
  if (!st.ok()) return st;
  std::vector<int64_t> out;
  size_t next_in = 0, next_axis = 0;
  for (int64_t d = 0; d < out_rank; ++d) {
    if (next_axis < axes.size() && axes[next_axis] == d) {
      out.push_back(1);
      ++next_axis;
    } else {
      out.push_back(dims[next_in++]);
    }
  }
  return relabel(im, out);
}

Status import_squeeze(Importer& im) {
  Status st = im.require_input(0, "data");
  if (!st.ok()) return st;
  std::vector<int64_t> axes;
  if (im.opset >= 13) {
    if (im.has_input(1)) st = im.ints_input(1, "axes", &axes);
  } else {
    st = im.attr_ints("axes", &axes);
  }
  if (!st.ok()) return st;
  const std::vector<int64_t> dims = im.input_dims(0);
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) {
      if (dims[d] == 1) axes.push_back(d);
    }
  }
  st = normalize_axes(im, axes, rank, &axes);
  if (!st.ok()) return st;
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::binary_search(axes.begin(), axes.end(), d)) {
      if (dims[d] != 1) return im.bad("cannot squeeze dim " + std::to_string(d) + " of size " + std::to_string(dims[d]));
    } else {
      out.push_back(dims[d]);
    }
  }
  return relabel(im, out);
}

Status import_slice(Importer& im) {
  Status st = im.require_input(0, "data");
  if (!st.ok()) return st;
  std::vector<int64_t> starts, ends, axes, steps;
  if (im.opset < 10) {
    st = im.attr_ints("starts", &starts);
    if (st.ok()) st = im.attr_ints("ends", &ends);
    if (st.ok()) st = im.attr_ints("axes", &axes);
    if (st.ok() && (!im.has_attr("starts") || !im.has_attr("ends"))) st = im.bad("missing attribute 'starts' or 'ends'");
  } else {
    st = im.ints_input(1, "starts", &starts);
    if (st.ok()) st = im.ints_input(2, "ends", &ends);
    if (st.ok() && im.has_input(3)) st = im.ints_input(3, "axes", &axes);
    if (st.ok() && im.has_input(4)) st = im.ints_input(4, "steps", &steps);
  }
  if (!st.ok()) return st;
  const std::vector<int64_t> dims = im.input_dims(0);
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    return im.bad("starts, ends, axes and steps differ in length");
  }
  std::vector<int64_t> begin(rank, 0), step(rank, 1), out_dims = dims;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t a = 0;
    st = im.normalize_axis(axes[i], rank, "axis", &a);
    if (!st.ok()) return st;
    if (seen[a]) return im.bad("axis " + std::to_string(a) + " is sliced twice");
    seen[a] = true;
    const int64_t dim = dims[a], s = steps[i];
    if (s == 0) return im.bad("step 0");
    // ONNX's clamping: negative indices count from the end; then clamp into the dim (for
    // negative steps into [-1, dim - 1] for the end).
    int64_t b = starts[i], e = ends[i];
    if (b < 0) b = b < -dim ? 0 : b + dim;  // written to avoid INT64_MIN + dim overflowing nothing
    if (e < 0) e = e < -dim ? -1 : e + dim;
    if (s > 0) {
      b = std::min(std::max<int64_t>(b, 0), dim);
      e = std::min(std::max<int64_t>(e, 0), dim);
    } else {
      b = std::min(std::max<int64_t>(b, 0), dim - 1);
      e = std::min(std::max<int64_t>(e, -1), dim - 1);
    }
    int64_t count = 0;  // written so that no step, however large, overflows
    if (s > 0 && e > b) count = (e - b - 1) / s + 1;
    if (s < 0 && b > e) count = (b - e - 1) / (s == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -s) + 1;
    begin[a] = b;
    step[a] = s;
    out_dims[a] = count;
  }
  if (!im.is_constant(0)) {
    bool whole = true;
    for (int64_t d = 0; d < rank; ++d) whole = whole && begin[d] == 0 && step[d] == 1 && out_dims[d] == dims[d];
    if (whole) {
      ++im.removed_ops[im.node->op_type()];
      return im.set_output_value(0, im.input(0));
    }
    ir::SliceAttrs a;
    for (int64_t d = 0; d < rank; ++d) {
      if (out_dims[d] == 0) return im.unsupported("the Slice is empty along dim " + std::to_string(d) + " (empty tensors are not supported)");
      // One element needs no direction; otherwise a negative step cannot be a TensorDesc stride.
      if (step[d] < 0 && out_dims[d] > 1) {
        return im.unsupported("Slice of a computed tensor with a negative step (" + std::to_string(step[d]) + " on dim " +
                              std::to_string(d) + ") is not supported: strided views only walk forward");
      }
      a.starts.push_back(begin[d]);
      a.steps.push_back(out_dims[d] == 1 ? 1 : step[d]);
      a.sizes.push_back(out_dims[d]);
    }
    return emit_slice(im, 0, "", std::move(a));
  }
  const Constant& data = im.constant(0);
  Constant r;
  r.type = data.type;
  r.dims = out_dims;
  int64_t n = 1;
  for (int64_t d : out_dims) n *= d;
  std::vector<int64_t> in_strides(rank, 1);
  for (int64_t d = rank - 1; d > 0; --d) in_strides[d - 1] = in_strides[d] * dims[d];
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d) src += (begin[d] + idx[d] * step[d]) * in_strides[d];
    if (data.is_int()) {
      r.ints.push_back(data.ints[src]);
    } else {
      r.floats.push_back(data.floats[src]);
    }
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < out_dims[d]) break;
      idx[d] = 0;
    }
  }
  return im.folded(std::move(r));
}

Status import_reshape(Importer& im) {
  Status st = im.require_input(0, "data");
  if (!st.ok()) return st;
  std::vector<int64_t> shape;
  st = im.ints_input(1, "shape", &shape);
  if (!st.ok()) return st;
  int64_t allowzero = 0;
  if (im.opset >= 14) {
    st = im.attr_int("allowzero", 0, &allowzero);
    if (!st.ok()) return st;
  }
  const std::vector<int64_t> dims = im.input_dims(0);
  int64_t total = 0;
  st = checked_elements(dims, im.node_label(), &total);
  if (!st.ok()) return st;
  std::vector<int64_t> out(shape.size());
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t s = shape[i];
    if (s == 0 && allowzero == 0) {
      if (i >= dims.size()) return im.bad("shape " + dims_text(shape) + " copies dim " + std::to_string(i) + ", which the input " + dims_text(dims) + " lacks");
      s = dims[i];
    }
    if (s == -1) {
      if (infer >= 0) return im.bad("shape " + dims_text(shape) + " has more than one -1");
      infer = static_cast<int>(i);
      continue;
    }
    if (s < 0) return im.bad("shape " + dims_text(shape) + " has the invalid entry " + std::to_string(s));
    if (s > 0 && known > (int64_t(1) << 40) / s) return im.bad("shape " + dims_text(shape) + " is too large");
    known *= s;
    out[i] = s;
  }
  if (infer >= 0) {
    if (known == 0 || total % known != 0) {
      return im.bad("cannot reshape " + dims_text(dims) + " to " + dims_text(shape));
    }
    out[infer] = total / known;
  } else if (known != total) {
    return im.bad("cannot reshape " + dims_text(dims) + " (" + std::to_string(total) + " elements) to " + dims_text(shape));
  }
  if (!im.is_constant(0) && total == 0) return im.unsupported("empty tensors are not supported");
  return relabel(im, out);
}

Status import_flatten(Importer& im) {
  Status st = im.require_input(0, "input");
  if (!st.ok()) return st;
  const std::vector<int64_t> dims = im.input_dims(0);
  const int64_t rank = static_cast<int64_t>(dims.size());
  int64_t axis = 1;
  st = im.attr_int("axis", 1, &axis);
  if (!st.ok()) return st;
  if (axis < -rank || axis > rank) return im.bad("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= dims[d];
  return relabel(im, {outer, inner});
}

Status import_constant_of_shape(Importer& im) {
  std::vector<int64_t> shape;
  Status st = im.ints_input(0, "shape", &shape);
  if (!st.ok()) return st;
  for (int64_t d : shape) {
    if (d < 0) return im.bad("shape " + dims_text(shape) + " has a negative dim");
  }
  st = check_fold_size(im, shape);
  if (!st.ok()) return st;
  const onnx::TensorProto* t = nullptr;
  st = im.attr_tensor("value", &t);
  if (!st.ok()) return st;
  Constant value;
  value.floats = {0.f};
  if (t) {
    st = decode_tensor(*t, im.node_label() + " value", im.external_dir, &value);
    if (!st.ok()) return st;
    if (value.elements() != 1) return im.bad("value must have one element, has " + std::to_string(value.elements()));
  }
  Constant r;
  r.type = value.type;
  r.dims = shape;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (value.is_int()) {
    r.ints.assign(static_cast<size_t>(n), value.ints[0]);
  } else {
    r.floats.assign(static_cast<size_t>(n), value.floats[0]);
  }
  return im.folded(std::move(r));
}

Status import_range(Importer& im) {
  const Constant *start = nullptr, *limit = nullptr, *delta = nullptr;
  Status st = im.constant_input(0, "start", &start);
  if (st.ok()) st = im.constant_input(1, "limit", &limit);
  if (st.ok()) st = im.constant_input(2, "delta", &delta);
  if (!st.ok()) return st;
  if (start->elements() != 1 || limit->elements() != 1 || delta->elements() != 1) return im.bad("start, limit and delta must be scalars");
  if (start->type != limit->type || start->type != delta->type) return im.bad("start, limit and delta differ in type");
  Constant r;
  r.type = start->type;
  if (start->is_int()) {
    const int64_t s = start->ints[0], l = limit->ints[0], d = delta->ints[0];
    if (d == 0) return im.bad("delta is 0");
    // ceil((limit - start) / delta), exactly (128-bit: the difference may not fit in int64).
    const __int128 span = static_cast<__int128>(l) - s;
    __int128 count = 0;
    if (d > 0 && span > 0) count = (span - 1) / d + 1;
    if (d < 0 && span < 0) count = (-span - 1) / -static_cast<__int128>(d) + 1;
    if (count > kMaxFoldElements) return im.unsupported("Range is too large to fold at import time");
    const int64_t n = static_cast<int64_t>(count);
    for (int64_t i = 0; i < n; ++i) r.ints.push_back(static_cast<int64_t>(s + static_cast<__int128>(i) * d));
    r.dims = {n};
  } else {
    const double s = start->floats[0], l = limit->floats[0], d = delta->floats[0];
    if (d == 0) return im.bad("delta is 0");
    const double count = std::ceil((l - s) / d);
    if (!(count < static_cast<double>(kMaxFoldElements))) return im.unsupported("Range is too large to fold");
    const int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
    for (int64_t i = 0; i < n; ++i) r.floats.push_back(static_cast<float>(s + static_cast<double>(i) * d));
    r.dims = {n};
  }
  return im.folded(std::move(r));
}

Status import_transpose(Importer& im) {
  Status st = im.require_input(0, "data");
  if (!st.ok()) return st;
  const std::vector<int64_t> dims = im.input_dims(0);
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> perm;
  st = im.attr_ints("perm", &perm);
  if (!st.ok()) return st;
  if (perm.empty()) {
    for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
  }
  if (static_cast<int64_t>(perm.size()) != rank) return im.bad("perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(rank));
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p]) return im.bad("perm is not a permutation of 0.." + std::to_string(rank - 1));
    seen[p] = true;
  }
  std::vector<int64_t> out(rank);
  for (int64_t d = 0; d < rank; ++d) out[d] = dims[perm[d]];
  if (im.is_constant(0)) return im.folded(transpose_constant(im.constant(0), perm));
  // A transpose that keeps the order of the dims larger than 1 moves no element: a relabelling.
  int64_t last = -1;
  bool relabelling = true;
  for (int64_t p : perm) {
    if (dims[p] == 1) continue;
    relabelling = relabelling && p > last;
    last = p;
  }
  if (relabelling) return relabel(im, out);
  ir::SliceAttrs a;
  a.starts.assign(rank, 0);
  a.steps.assign(rank, 1);
  a.sizes = dims;
  a.perm = perm;
  return emit_slice(im, 0, "", std::move(a));
}

Status import_expand(Importer& im) {
  Status st = im.require_input(0, "input");
  if (!st.ok()) return st;
  std::vector<int64_t> shape, out;
  st = im.ints_input(1, "shape", &shape);
  if (!st.ok()) return st;
  const std::vector<int64_t> dims = im.input_dims(0);
  if (!broadcast_shapes(dims, shape, &out)) return im.bad("input " + dims_text(dims) + " does not broadcast to " + dims_text(shape));
  if (im.is_constant(0)) {
    st = check_fold_size(im, out);
    if (!st.ok()) return st;
    Constant c = im.constant(0);
    return im.folded(expand_constant(c, out));
  }
  if (out == dims) {
    ++im.removed_ops[im.node->op_type()];
    return im.set_output_value(0, im.input(0));
  }
  // x * ones broadcast to the output: exact (x * 1 == x). The ones constant spans only the dims
  // that grow.
  int x = -1;
  st = im.ir_input(0, &x);
  if (!st.ok()) return st;
  const DType dt = im.g->tensors[x].dtype;
  std::vector<int64_t> padded(out.size() - dims.size(), 1);
  padded.insert(padded.end(), dims.begin(), dims.end());
  std::vector<int64_t> ones_dims(out.size());
  int64_t n = 1;
  for (size_t d = 0; d < out.size(); ++d) {
    ones_dims[d] = padded[d] == out[d] ? 1 : out[d];
    n *= ones_dims[d];
  }
  st = check_fold_size(im, ones_dims);
  if (!st.ok()) return st;
  int xr = -1, ones = -1, y = -1;
  st = im.reshape_to(x, padded, "rank", &xr);
  if (st.ok()) st = im.ir_constant_values(im.ir_name("ones"), dt, ones_dims, std::vector<float>(static_cast<size_t>(n), 1.f), &ones);
  if (st.ok()) st = im.ir_check(im.g->op_tensor(im.ir_name(), TensorOp::MUL, xr, ones, &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

namespace {

// The IR dtype of the computed inputs among [first, first + count) (the first one found), else
// of the first constant among them; false when no input has a type the runtime computes on.
bool operands_dtype(const Importer& im, int first, int count, DType* dt) {
  for (int i = first; i < first + count; ++i) {
    if (im.has_input(i) && !im.is_constant(i) && im.input(i).tensor >= 0) {
      *dt = im.g->tensors[im.input(i).tensor].dtype;
      return true;
    }
  }
  for (int i = first; i < first + count; ++i) {
    if (im.is_constant(i)) return ir_dtype_of(im.constant(i).type, dt);
  }
  return false;
}

bool all_constant(const Importer& im, int count) {
  for (int i = 0; i < count && i < im.input_count(); ++i) {
    if (im.has_input(i) && !im.is_constant(i)) return false;
  }
  return true;
}

// A comparison or logical op of two constants, with numpy broadcasting: a BOOL constant.
Status fold_logic(Importer& im, LogicOp op, const Constant& a, const Constant& b) {
  std::vector<int64_t> out;
  if (!broadcast_shapes(a.dims, b.dims, &out)) {
    return im.bad("A " + dims_text(a.dims) + " and B " + dims_text(b.dims) + " do not broadcast");
  }
  if (a.is_int() != b.is_int()) return im.bad("A and B differ in type");
  int64_t n = 0;
  Status st = checked_elements(out, im.node_label(), &n);
  if (!st.ok()) return st;
  const Constant ae = expand_constant(a, out), be = expand_constant(b, out);
  Constant r;
  r.type = onnx::TensorProto::BOOL;
  r.dims = out;
  r.ints.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    bool v = false;
    if (a.is_int()) {  // exact int64 comparisons
      const int64_t x = ae.ints[i], y = be.ints[i];
      switch (op) {
        case LogicOp::EQUAL: v = x == y; break;
        case LogicOp::LESS: v = x < y; break;
        case LogicOp::LESS_OR_EQUAL: v = x <= y; break;
        case LogicOp::GREATER: v = x > y; break;
        case LogicOp::GREATER_OR_EQUAL: v = x >= y; break;
        case LogicOp::AND: v = x != 0 && y != 0; break;
        case LogicOp::OR: v = x != 0 || y != 0; break;
        case LogicOp::XOR: v = (x != 0) != (y != 0); break;
      }
    } else {
      const float x = ae.floats[i], y = be.floats[i];
      switch (op) {
        case LogicOp::EQUAL: v = x == y; break;
        case LogicOp::LESS: v = x < y; break;
        case LogicOp::LESS_OR_EQUAL: v = x <= y; break;
        case LogicOp::GREATER: v = x > y; break;
        case LogicOp::GREATER_OR_EQUAL: v = x >= y; break;
        case LogicOp::AND:
        case LogicOp::OR:
        case LogicOp::XOR: return im.bad("A and B must be BOOL");
      }
    }
    r.ints[i] = v ? 1 : 0;
  }
  return im.folded(std::move(r));
}

// Equal, Less, ..., And, Or, Xor: folded when both inputs are constants, else a LOGIC node.
Status import_logic(Importer& im, LogicOp op) {
  Status st = im.require_input(0, "A");
  if (st.ok()) st = im.require_input(1, "B");
  if (!st.ok()) return st;
  if (all_constant(im, 2)) return fold_logic(im, op, im.constant(0), im.constant(1));
  DType dt = DType::F32;
  if (!operands_dtype(im, 0, 2, &dt)) return im.unsupported("no input of a type the runtime computes on");
  const bool logical = op == LogicOp::AND || op == LogicOp::OR || op == LogicOp::XOR;
  if (logical && dt != DType::BOOL) return im.bad(std::string("inputs are ") + dtype_name(dt) + ", expected BOOL");
  if (!logical && dt == DType::BOOL && op != LogicOp::EQUAL) {
    return im.bad(std::string(logic_op_name(op)) + " of BOOL tensors");
  }
  int a = -1, b = -1, y = -1;
  st = im.ir_input(0, dt, &a);
  if (st.ok()) st = im.ir_input(1, dt, &b);
  if (st.ok()) st = im.ir_check(im.g->logic(im.ir_name(), op, a, b, &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

}  // namespace

Status import_where(Importer& im) {
  Status st = im.require_input(0, "condition");
  if (st.ok()) st = im.require_input(1, "X");
  if (st.ok()) st = im.require_input(2, "Y");
  if (!st.ok()) return st;
  if (!all_constant(im, 3)) {
    DType dt = DType::F32;
    if (!operands_dtype(im, 1, 2, &dt)) return im.unsupported("X and Y have a type the runtime does not compute on");
    int c = -1, x = -1, y = -1, out = -1;
    st = im.ir_input(0, DType::BOOL, &c);
    if (st.ok()) st = im.ir_input(1, dt, &x);
    if (st.ok()) st = im.ir_input(2, dt, &y);
    if (st.ok()) st = im.ir_check(im.g->where(im.ir_name(), c, x, y, &out));
    if (!st.ok()) return st;
    return im.set_output(0, out);
  }
  const Constant &c = im.constant(0), &x = im.constant(1), &y = im.constant(2);
  if (!c.is_int()) return im.bad("condition must be BOOL");
  if (x.is_int() != y.is_int()) return im.bad("X and Y differ in type");
  std::vector<int64_t> xy, out;
  if (!broadcast_shapes(x.dims, y.dims, &xy) || !broadcast_shapes(c.dims, xy, &out)) {
    return im.bad("condition " + dims_text(c.dims) + ", X " + dims_text(x.dims) + " and Y " + dims_text(y.dims) + " do not broadcast");
  }
  st = check_fold_size(im, out);
  if (!st.ok()) return st;
  const Constant ce = expand_constant(c, out), xe = expand_constant(x, out), ye = expand_constant(y, out);
  Constant r = xe;
  for (int64_t i = 0; i < r.elements(); ++i) {
    if (ce.ints[i]) continue;
    if (r.is_int()) {
      r.ints[i] = ye.ints[i];
    } else {
      r.floats[i] = ye.floats[i];
    }
  }
  return im.folded(std::move(r));
}

Status import_not(Importer& im) {
  Status st = im.require_input(0, "X");
  if (!st.ok()) return st;
  if (!im.is_constant(0)) {
    // Not(x) = Xor(x, true): the LOGIC op, no kernel of its own.
    int x = -1, ones = -1, y = -1;
    st = im.ir_input(0, &x);
    if (!st.ok()) return st;
    if (im.g->tensors[x].dtype != DType::BOOL) return im.bad(std::string("X is ") + dtype_name(im.g->tensors[x].dtype) + ", expected BOOL");
    st = im.ir_check(im.g->add_constant(im.ir_name("true"), DType::BOOL, {1}, &ones));
    if (!st.ok()) return st;
    im.g->tensors[ones].int_data = {1};
    st = im.ir_check(im.g->logic(im.ir_name(), LogicOp::XOR, x, ones, &y));
    if (!st.ok()) return st;
    return im.set_output(0, y);
  }
  Constant r = im.constant(0);
  if (!r.is_int()) return im.bad("X must be BOOL");
  for (int64_t& v : r.ints) v = v == 0;
  return im.folded(std::move(r));
}

Status import_equal(Importer& im) { return import_logic(im, LogicOp::EQUAL); }
Status import_less(Importer& im) { return import_logic(im, LogicOp::LESS); }
Status import_greater(Importer& im) { return import_logic(im, LogicOp::GREATER); }
Status import_less_or_equal(Importer& im) { return import_logic(im, LogicOp::LESS_OR_EQUAL); }
Status import_greater_or_equal(Importer& im) { return import_logic(im, LogicOp::GREATER_OR_EQUAL); }
Status import_and(Importer& im) { return import_logic(im, LogicOp::AND); }
Status import_or(Importer& im) { return import_logic(im, LogicOp::OR); }
Status import_xor(Importer& im) { return import_logic(im, LogicOp::XOR); }

namespace {

// Whether v replaces `best` (at an earlier index) as ArgMax's (max) or ArgMin's value: NaN wins,
// ties keep the first index unless `last` (as arg_reduce_forward).
template <class T>
bool arg_better(T v, T best, bool max, bool last) {
  const bool v_nan = v != v, best_nan = best != best;
  if (best_nan) return last && v_nan;
  if (v_nan) return true;
  if (last) return max ? v >= best : v <= best;
  return max ? v > best : v < best;
}

// ArgMax / ArgMin: folded on constants, else an ARG_REDUCE node (plus a RESHAPE for keepdims 0).
Status import_arg_reduce(Importer& im, ArgReduceOp op) {
  Status st = im.require_input(0, "data");
  if (!st.ok()) return st;
  const std::vector<int64_t> dims = im.input_dims(0);
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (rank == 0) return im.bad("data is a scalar");
  int64_t axis = 0, keepdims = 1, last = 0;
  st = im.attr_int("axis", 0, &axis);
  if (st.ok()) st = im.attr_int("keepdims", 1, &keepdims);
  if (st.ok()) st = im.attr_int("select_last_index", 0, &last);
  if (st.ok()) st = im.normalize_axis(axis, rank, "axis", &axis);
  if (!st.ok()) return st;
  std::vector<int64_t> out = dims;
  if (keepdims) {
    out[axis] = 1;
  } else {
    out.erase(out.begin() + axis);
  }
  if (dims[axis] == 0) return im.bad("the reduced axis is empty");
  if (im.is_constant(0)) {
    const Constant& c = im.constant(0);
    if (c.elements() == 0) return im.unsupported("empty data");
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= dims[d];
    Constant r;
    r.type = onnx::TensorProto::INT64;
    r.dims = out;
    const bool max = op == ArgReduceOp::ARGMAX;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t k = 0; k < inner; ++k) {
        int64_t best_i = 0;
        for (int64_t i = 1; i < dims[axis]; ++i) {
          const int64_t p = (o * dims[axis] + i) * inner + k, b = (o * dims[axis] + best_i) * inner + k;
          const bool better = c.is_int() ? arg_better(c.ints[p], c.ints[b], max, last != 0)
                                         : arg_better(c.floats[p], c.floats[b], max, last != 0);
          if (better) best_i = i;
        }
        r.ints.push_back(best_i);
      }
    }
    return im.folded(std::move(r));
  }
  if (out.empty()) return im.unsupported("the result would be a rank-0 (scalar) computed tensor");
  int x = -1, y = -1;
  st = im.ir_input(0, &x);
  if (st.ok()) st = im.ir_check(im.g->arg_reduce(im.ir_name(keepdims ? "" : "arg"), x, op, static_cast<int>(axis), last != 0, &y));
  if (st.ok() && !keepdims) st = im.reshape_to(y, out, "", &y);
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

}  // namespace

Status import_arg_max(Importer& im) { return import_arg_reduce(im, ArgReduceOp::ARGMAX); }
Status import_arg_min(Importer& im) { return import_arg_reduce(im, ArgReduceOp::ARGMIN); }

Status import_reduce_prod(Importer& im) {
  Status st = require_constants(im, 1, "ReduceProd");
  if (st.ok()) st = im.require_input(0, "data");
  if (!st.ok()) return st;
  std::vector<int64_t> axes;
  int64_t keepdims = 1, noop = 0;
  st = im.attr_int("keepdims", 1, &keepdims);
  if (st.ok() && im.opset >= 18) {
    st = im.attr_int("noop_with_empty_axes", 0, &noop);
    if (st.ok() && im.has_input(1)) st = im.ints_input(1, "axes", &axes);
  } else if (st.ok()) {
    st = im.attr_ints("axes", &axes);
  }
  if (!st.ok()) return st;
  const Constant& c = im.constant(0);
  const int64_t rank = static_cast<int64_t>(c.dims.size());
  if (axes.empty()) {
    if (noop) return im.folded(c);
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  st = normalize_axes(im, axes, rank, &axes);
  if (!st.ok()) return st;
  Constant r;
  st = reduce_constant(c, axes, keepdims != 0, ReduceKind::PROD, &r);
  if (!st.ok()) return st;
  return im.folded(std::move(r));
}

Status import_split(Importer& im) {
  Status st = im.require_input(0, "input");
  if (!st.ok()) return st;
  const std::vector<int64_t> dims = im.input_dims(0);
  const int64_t rank = static_cast<int64_t>(dims.size());
  int64_t axis = 0;
  st = im.attr_int("axis", 0, &axis);
  if (st.ok()) st = im.normalize_axis(axis, rank, "axis", &axis);
  if (!st.ok()) return st;
  std::vector<int64_t> split;
  if (im.opset >= 13) {
    if (im.has_input(1)) st = im.ints_input(1, "split", &split);
  } else {
    st = im.attr_ints("split", &split);
  }
  if (!st.ok()) return st;
  const int outputs = im.output_count();
  if (outputs < 1) return im.bad("has no outputs");
  if (split.empty()) {
    int64_t parts = outputs;
    if (im.opset >= 18 && im.has_attr("num_outputs")) {
      st = im.attr_int("num_outputs", outputs, &parts);
      if (!st.ok()) return st;
      if (parts != outputs) return im.bad("num_outputs " + std::to_string(parts) + " differs from the " + std::to_string(outputs) + " outputs");
    }
    const int64_t chunk = (dims[axis] + parts - 1) / parts;
    if (im.opset < 18 && dims[axis] % parts != 0) {
      return im.bad("dim " + std::to_string(dims[axis]) + " does not split into " + std::to_string(parts) + " equal parts");
    }
    for (int64_t k = 0, left = dims[axis]; k < parts; ++k, left -= chunk) split.push_back(std::min(chunk, left));
  }
  if (static_cast<int>(split.size()) != outputs) return im.bad("split has " + std::to_string(split.size()) + " entries for " + std::to_string(outputs) + " outputs");
  int64_t sum = 0;
  for (int64_t s : split) {
    if (s < 0) return im.bad("split has a negative size");
    sum += s;
  }
  if (sum != dims[axis]) return im.bad("split sizes sum to " + std::to_string(sum) + ", not dim " + std::to_string(axis) + " = " + std::to_string(dims[axis]));
  if (!im.is_constant(0)) {
    if (outputs == 1) {
      ++im.removed_ops[im.node->op_type()];
      return im.set_output_value(0, im.input(0));
    }
    // One SLICE per used output (IR nodes have one output each).
    for (int k = 0; k < outputs; ++k) {
      if (im.output_used(k) && split[k] == 0) {
        return im.unsupported("output " + std::to_string(k) + " of the Split is empty (empty tensors are not supported)");
      }
    }
    int64_t offset = 0;
    for (int k = 0; k < outputs; ++k) {
      if (im.output_used(k)) {
        ir::SliceAttrs a;
        a.starts.assign(rank, 0);
        a.steps.assign(rank, 1);
        a.sizes = dims;
        a.starts[axis] = offset;
        a.sizes[axis] = split[k];
        st = emit_slice(im, k, std::to_string(k), std::move(a));
        if (!st.ok()) return st;
      }
      offset += split[k];
    }
    return Status::success();
  }
  const Constant& c = im.constant(0);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= dims[d];
  int64_t offset = 0;
  for (int k = 0; k < outputs; ++k) {
    Constant r;
    r.type = c.type;
    r.dims = dims;
    r.dims[axis] = split[k];
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < split[k] * inner; ++i) {
        const int64_t src = (o * dims[axis] + offset) * inner + i;
        if (c.is_int()) {
          r.ints.push_back(c.ints[src]);
        } else {
          r.floats.push_back(c.floats[src]);
        }
      }
    }
    offset += split[k];
    st = im.set_output_constant(k, std::move(r));
    if (!st.ok()) return st;
  }
  ++im.folded_ops[im.node->op_type()];
  return Status::success();
}

// The ONNX ops this file imports: one row each, in docs/onnx.md's order (op_table.cpp says
// what the columns mean and joins the files' lists).
const OpEntry kShapeOpRows[] = {
    {"Reshape", 5, import_reshape, true, "RESHAPE",
     "constant shape (folded subgraphs included), 0 copies a dim, -1 inferred, allowzero (14+)"},
    {"Flatten", 1, import_flatten, true, "RESHAPE",
     "axis (negative from 11)"},
    {"Squeeze", 1, import_squeeze, true, "RESHAPE",
     "axes attribute before 13, input from 13"},
    {"Unsqueeze", 1, import_unsqueeze, true, "", ""},
    {"Transpose", 1, import_transpose, true, "SLICE, RESHAPE or folded",
     "constants folded; a relabelling (moving only size-1 dims) is a RESHAPE; any other perm (default: "
     "reversed) a SLICE with that permutation"},
    {"Identity", 1, import_identity, true, "removed",
     "Dropout's mask output, or training_mode = true (12+), is unsupported"},
    {"Dropout", 1, import_dropout, false, "", ""},
    {"Equal", 1, import_equal, true, "LOGIC or folded",
     "numpy broadcasting (constant operands materialized in the computed operand's type); FLOAT, FLOAT16, "
     "INT32, INT64 operands compared exactly in their type (Equal also BOOL); And, Or, Xor of BOOL; a BOOL "
     "result. Constants folded (int64 compared as integers)"},
    {"Less", 1, import_less, true, "", ""},
    {"Greater", 1, import_greater, true, "", ""},
    {"LessOrEqual", 12, import_less_or_equal, true, "", ""},
    {"GreaterOrEqual", 12, import_greater_or_equal, true, "", ""},
    {"And", 7, import_and, true, "", ""},
    {"Or", 7, import_or, true, "", ""},
    {"Xor", 7, import_xor, true, "", ""},
    {"Not", 1, import_not, true, "LOGIC (XOR with a constant true) or folded",
     "BOOL"},
    {"Where", 9, import_where, true, "WHERE or folded",
     "condition BOOL; X and Y of any of the five types, constants materialized; numpy broadcasting of all "
     "three"},
    {"ArgMax", 1, import_arg_max, true, "ARG_REDUCE (+ RESHAPE) or folded",
     "axis (negative too), keepdims (0: a RESHAPE after; a rank-0 result is unsupported), select_last_index "
     "(12+); FLOAT, FLOAT16, INT32, INT64 data; an INT64 result. Ties give the first index (the last with "
     "select_last_index), a NaN wins"},
    {"ArgMin", 1, import_arg_min, true, "", ""},
    {"Gather", 1, import_gather, true, "folded, GATHER, RESHAPE or SLICE (+ CONCAT, RESHAPE)",
     "computed indices (INT32 / INT64; constant or computed data of any type): a GATHER node (an index out "
     "of range gives NaN, the lowest integer or false: the runtime cannot stop there). Constant data and "
     "indices folded; on a computed tensor constant indices (negative allowed): the single entry of a size-1 "
     "dim is a relabelling, otherwise one SLICE per index (at most 64), concatenated, reshaped to the output "
     "dims (a scalar index drops the axis). A rank-0 result is unsupported"},
    {"Slice", 1, import_slice, true, "SLICE or folded",
     "Slice: attributes before 10, constant inputs from 10 (steps, negative axes / starts / ends, ONNX "
     "clamping); Split: `split` attribute before 13 / input from 13, equal parts or num_outputs (18, the "
     "last part smaller). Constants folded; a whole-tensor Slice or single-output Split is removed; computed "
     "tensors get one SLICE per (used) output. A negative step over more than one element of a computed "
     "tensor, and empty results, are unsupported"},
    {"Split", 2, import_split, true, "", ""},
    {"Expand", 8, import_expand, false, "folded / OP_TENSOR MUL",
     "constants folded; a computed tensor is multiplied by a ones constant spanning the expanded dims "
     "(exact)"},
    {"Shape", 1, import_shape, true, "folded",
     "constants only (Shape and Size need only dims)"},
    {"Size", 1, import_size, true, "", ""},
    {"ConstantOfShape", 9, import_constant_of_shape, false, "", ""},
    {"Range", 11, import_range, false, "", ""},
    {"ReduceProd", 1, import_reduce_prod, false, "", ""},
    {"Constant", 1, import_constant, false, "", ""},
};
const OpList kShapeOps = {kShapeOpRows, std::size(kShapeOpRows)};

}  // namespace onnx_import
}  // namespace jet
