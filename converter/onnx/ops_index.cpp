// Index and data-movement ops on computed tensors: ScatterElements / Scatter / ScatterND (SCATTER),
// Tile (CONCAT), DepthToSpace / SpaceToDepth (RESHAPE, SLICE, RESHAPE), OneHot (LOGIC, WHERE),
// EyeLike (folded). (GatherElements, Trilu and CumSum need no function: ops_by_fields.cpp imports
// them by field name.) Constant operands become IR constants; a node whose inputs are all constant
// is then folded by optimize's fold_constants with the same kernels.
#include "importer.h"

namespace jet {
namespace onnx_import {

namespace {

Status scatter_reduction(Importer& im, ScatterReduction* r) {
  std::string name;
  Status st = im.attr_string("reduction", "none", &name);
  if (!st.ok()) return st;
  if (name == "none") *r = ScatterReduction::NONE;
  else if (name == "add") *r = ScatterReduction::ADD;
  else if (name == "mul") *r = ScatterReduction::MUL;
  else if (name == "max") *r = ScatterReduction::MAX;
  else if (name == "min") *r = ScatterReduction::MIN;
  else return im.bad("unknown reduction '" + name + "'");
  return Status::success();
}

// ScatterElements, Scatter (its opset 9-10 name) and ScatterND: one SCATTER node.
Status import_scatter_any(Importer& im, bool nd) {
  Status st = im.require_input(0, "data");
  if (st.ok()) st = im.require_input(1, "indices");
  if (st.ok()) st = im.require_input(2, "updates");
  if (!st.ok()) return st;
  const int64_t rank = static_cast<int64_t>(im.input_dims(0).size());
  if (rank == 0) return im.bad("data is a scalar");
  ScatterReduction red = ScatterReduction::NONE;
  int64_t axis = 0;
  st = scatter_reduction(im, &red);
  if (st.ok() && !nd) st = im.attr_int("axis", 0, &axis);
  if (st.ok() && !nd) st = im.normalize_axis(axis, rank, "axis", &axis);
  if (!st.ok()) return st;
  int x = -1, i = -1, u = -1, y = -1;
  st = im.ir_input_any(0, &x);
  if (st.ok()) st = im.ir_input_any(1, &i);
  if (st.ok()) st = im.ir_input_any(2, &u);
  if (!st.ok()) return st;
  const DType it = im.g->tensors[i].dtype;
  if (it != DType::I32 && it != DType::I64) {
    return im.bad(std::string("indices are ") + dtype_name(it) + ", expected INT32 or INT64");
  }
  st = im.ir_check(im.g->scatter(im.ir_name(), x, i, u, nd, red, static_cast<int>(axis), &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

}  // namespace

Status import_scatter_elements(Importer& im) { return import_scatter_any(im, false); }
Status import_scatter_nd(Importer& im) { return import_scatter_any(im, true); }

// Tile: for every axis repeated r > 1 times, one CONCAT of r copies along it (any dtype; constant
// input: folded by fold_constants).
Status import_tile(Importer& im) {
  Status st = im.require_input(0, "input");
  if (st.ok()) st = im.require_input(1, "repeats");
  if (!st.ok()) return st;
  if (!im.is_constant(1)) return im.unsupported("repeats are computed at run time (only constant repeats are supported)");
  std::vector<int64_t> reps;
  st = im.ints_input(1, "repeats", &reps);
  if (!st.ok()) return st;
  const std::vector<int64_t> dims = im.input_dims(0);
  if (dims.empty()) return im.bad("input is a scalar");
  if (reps.size() != dims.size()) {
    return im.bad("repeats have " + std::to_string(reps.size()) + " entries for an input of rank " +
                  std::to_string(dims.size()));
  }
  constexpr int64_t kMaxCopies = 64;
  for (int64_t r : reps) {
    if (r < 0) return im.bad("a negative repeat " + std::to_string(r));
    if (r == 0) return im.unsupported("a repeat of 0 gives an empty tensor");
    if (r > kMaxCopies) {
      return im.unsupported("a repeat of " + std::to_string(r) + " (at most " + std::to_string(kMaxCopies) +
                            " copies per axis are imported, as one CONCAT input each)");
    }
  }
  bool any = false;
  for (int64_t r : reps) any = any || r != 1;
  if (!any) {
    ++im.removed_ops[im.node->op_type()];
    return im.set_output_value(0, im.input(0));
  }
  int x = -1;
  st = im.ir_input_any(0, &x);
  if (!st.ok()) return st;
  for (size_t d = 0; d < reps.size(); ++d) {
    if (reps[d] == 1) continue;
    int y = -1;
    st = im.ir_check(im.g->concat(im.ir_name("axis" + std::to_string(d)), std::vector<int>(static_cast<size_t>(reps[d]), x),
                                  static_cast<int>(d), &y));
    if (!st.ok()) return st;
    x = y;
  }
  return im.set_output(0, x);
}

namespace {

// DepthToSpace / SpaceToDepth of a computed NCHW tensor: RESHAPE to 6 dims, a SLICE that permutes
// them, RESHAPE to the result (the moves ONNX's definition spells out).
Status import_block_shuffle(Importer& im, bool to_space) {
  Status st = im.require_input(0, "input");
  if (!st.ok()) return st;
  const std::vector<int64_t> d = im.input_dims(0);
  if (d.size() != 4) return im.bad("input " + dims_text(d) + " is not 4-D (N, C, H, W)");
  int64_t b = 0;
  st = im.attr_int("blocksize", 0, &b);
  if (!st.ok()) return st;
  if (b < 1) return im.bad("blocksize " + std::to_string(b) + " is not positive");
  std::string mode = "DCR";
  if (to_space) {
    st = im.attr_string("mode", "DCR", &mode);
    if (!st.ok()) return st;
    if (mode != "DCR" && mode != "CRD") return im.bad("unknown mode '" + mode + "'");
  }
  const int64_t n = d[0], c = d[1], h = d[2], w = d[3];
  std::vector<int64_t> mid, perm, out;
  if (to_space) {
    if (c % (b * b) != 0) return im.bad("C = " + std::to_string(c) + " is not a multiple of blocksize^2");
    const int64_t cb = c / (b * b);
    if (mode == "DCR") {
      mid = {n, b, b, cb, h, w};
      perm = {0, 3, 4, 1, 5, 2};
    } else {
      mid = {n, cb, b, b, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    }
    out = {n, cb, h * b, w * b};
  } else {
    if (h % b != 0 || w % b != 0) return im.bad("H and W are not multiples of blocksize " + std::to_string(b));
    mid = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    out = {n, c * b * b, h / b, w / b};
  }
  int x = -1, r = -1, t = -1, y = -1;
  st = im.ir_input(0, &x);
  if (st.ok()) st = im.reshape_to(x, mid, "split", &r);
  ir::SliceAttrs a;
  a.starts.assign(6, 0);
  a.steps.assign(6, 1);
  a.sizes = mid;
  a.perm = perm;
  if (st.ok()) st = im.ir_check(im.g->slice(im.ir_name("permute"), r, std::move(a), &t));
  if (st.ok()) st = im.reshape_to(t, out, "", &y);
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

}  // namespace

Status import_depth_to_space(Importer& im) { return import_block_shuffle(im, true); }
Status import_space_to_depth(Importer& im) { return import_block_shuffle(im, false); }

// OneHot: mask = Equal(indices, 0..depth-1) Or Equal(indices, -depth..-1) (the indices given a
// size-1 dim at axis, the ranges constants spanning only that dim: negative indices count from the
// end without integer arithmetic), then Where(mask, values[1], values[0]) (SLICEs of values).
// Indices of any numeric runtime type, computed or constant; depth a constant.
Status import_one_hot(Importer& im) {
  Status st = im.require_input(0, "indices");
  if (st.ok()) st = im.require_input(1, "depth");
  if (st.ok()) st = im.require_input(2, "values");
  if (!st.ok()) return st;
  if (!im.is_constant(1)) return im.unsupported("depth is computed at run time (only a constant depth is supported)");
  const Constant& dc = im.constant(1);
  if (dc.elements() != 1) return im.bad("depth has " + std::to_string(dc.elements()) + " elements, expected one");
  const int64_t depth = dc.is_int() ? dc.ints[0] : static_cast<int64_t>(dc.floats[0]);
  if (depth < 1) return im.unsupported("depth " + std::to_string(depth) + " gives an empty tensor");
  constexpr int64_t kMaxDepth = int64_t{1} << 20;
  if (depth > kMaxDepth) return im.unsupported("depth " + std::to_string(depth) + " is above 2^20");
  if (im.input_dims(2) != std::vector<int64_t>{2}) return im.bad("values are not a 2-element tensor");
  const std::vector<int64_t> idims = im.input_dims(0);
  const int64_t out_rank = static_cast<int64_t>(idims.size()) + 1;
  if (out_rank > kMaxRank) return im.unsupported("the result would have a rank above " + std::to_string(kMaxRank));
  int64_t axis = -1;
  st = im.attr_int("axis", -1, &axis);
  if (st.ok()) st = im.normalize_axis(axis, out_rank, "axis", &axis);
  if (!st.ok()) return st;
  int idx = -1, vals = -1;
  st = im.ir_input_any(0, &idx);
  if (st.ok()) st = im.ir_input_any(2, &vals);
  if (!st.ok()) return st;
  const DType it = im.g->tensors[idx].dtype;
  if (it == DType::BOOL) return im.bad("indices are BOOL");
  std::vector<int64_t> with_axis = idims, range_dims(static_cast<size_t>(out_rank), 1);
  with_axis.insert(with_axis.begin() + axis, 1);
  range_dims[static_cast<size_t>(axis)] = depth;
  int idx_r = -1, pos = -1, neg = -1;
  st = im.reshape_to(idx, with_axis, "unsqueeze", &idx_r);
  for (int sign = 0; st.ok() && sign < 2; ++sign) {
    int* t = sign == 0 ? &pos : &neg;
    const std::string name = im.ir_name(sign == 0 ? "range" : "range_from_end");
    if (dtype_is_float(it)) {
      std::vector<float> v(static_cast<size_t>(depth));
      for (int64_t i = 0; i < depth; ++i) v[static_cast<size_t>(i)] = static_cast<float>(sign == 0 ? i : i - depth);
      st = im.ir_constant_values(name, it, range_dims, std::move(v), t);
    } else {
      st = im.g->add_constant(name, it, range_dims, t);
      if (!st.ok()) return im.bad(st.message());
      for (int64_t i = 0; i < depth; ++i) im.g->tensors[*t].int_data.push_back(sign == 0 ? i : i - depth);
    }
  }
  int m_pos = -1, m_neg = -1, mask = -1, on = -1, off = -1, y = -1;
  if (st.ok()) st = im.ir_check(im.g->logic(im.ir_name("is"), LogicOp::EQUAL, idx_r, pos, &m_pos));
  if (st.ok()) st = im.ir_check(im.g->logic(im.ir_name("is_from_end"), LogicOp::EQUAL, idx_r, neg, &m_neg));
  if (st.ok()) st = im.ir_check(im.g->logic(im.ir_name("mask"), LogicOp::OR, m_pos, m_neg, &mask));
  for (int k = 0; st.ok() && k < 2; ++k) {
    ir::SliceAttrs a;
    a.starts = {k == 0 ? 1 : 0};
    a.steps = {1};
    a.sizes = {1};
    st = im.ir_check(im.g->slice(im.ir_name(k == 0 ? "on" : "off"), vals, std::move(a), k == 0 ? &on : &off));
  }
  if (st.ok()) st = im.ir_check(im.g->where(im.ir_name(), mask, on, off, &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

// EyeLike: ones on diagonal k of a 2-D tensor of the input's dims, zeros elsewhere; the input
// gives only its dims (and, without `dtype`, the element type), so the result is a constant.
Status import_eye_like(Importer& im) {
  Status st = im.require_input(0, "input");
  if (!st.ok()) return st;
  const std::vector<int64_t> dims = im.input_dims(0);
  if (dims.size() != 2) return im.bad("input " + dims_text(dims) + " is not 2-D");
  int64_t k = 0, dtype = -1;
  st = im.attr_int("k", 0, &k);
  if (st.ok()) st = im.attr_int("dtype", -1, &dtype);
  if (!st.ok()) return st;
  Constant c;
  if (dtype >= 0) {
    c.type = static_cast<int32_t>(dtype);
  } else if (im.is_constant(0)) {
    c.type = im.constant(0).type;
  } else {
    c.type = onnx_type_of(im.g->tensors[im.input(0).tensor].dtype);
  }
  c.dims = dims;
  int64_t n = 0;
  st = checked_elements(dims, im.node_label() + " output", &n);
  if (!st.ok()) return st;
  constexpr int64_t kMaxEye = int64_t{1} << 24;
  if (n > kMaxEye) return im.unsupported("an EyeLike result of " + std::to_string(n) + " elements (at most 2^24 are folded)");
  if (c.is_int()) {
    c.ints.assign(static_cast<size_t>(n), 0);
  } else {
    c.floats.assign(static_cast<size_t>(n), 0.f);
  }
  for (int64_t r = 0; r < dims[0]; ++r) {
    const int64_t col = r + k;
    if (col < 0 || col >= dims[1]) continue;
    const size_t at = static_cast<size_t>(r * dims[1] + col);
    if (c.is_int()) {
      c.ints[at] = 1;
    } else {
      c.floats[at] = 1.f;
    }
  }
  return im.folded(std::move(c));
}

// The ONNX ops this file imports: one row each, in docs/onnx.md's order (op_table.cpp says
// what the columns mean and joins the files' lists).
const OpEntry kIndexOpRows[] = {
    {"ScatterElements", 11, import_scatter_elements, true, "SCATTER",
     "Scatter: ScatterElements' name in opsets 9 and 10. axis (ScatterElements, Scatter; negative too), "
     "reduction none / add / mul (16+) / max / min (18+); "
     "data and updates of any of the five types (BOOL with none only), INT32 / INT64 indices (negative too), "
     "computed or constant. Duplicate indices are applied in the updates' order. An index out of range gives "
     "NaN / the lowest integer / false (ScatterElements: on the line along the axis it was meant for; "
     "ScatterND: everywhere)"},
    {"Scatter", 9, import_scatter_elements, true, "", ""},
    {"ScatterND", 11, import_scatter_nd, true, "", ""},
    {"OneHot", 9, import_one_hot, true, "RESHAPE, LOGIC (EQUAL, EQUAL, OR), SLICE, WHERE",
     "depth a constant (at most 2^20); axis (negative too); indices FLOAT, FLOAT16, INT32 or INT64, computed "
     "or constant: the mask is Equal(indices, 0..depth-1) Or Equal(indices, -depth..-1) (negative indices "
     "count from the end; out of range ones give an all-off row), then Where(mask, values[1], values[0])"},
    {"EyeLike", 9, import_eye_like, true, "folded",
     "2-D input (computed or constant: only its dims are read), k, dtype (default: the input's type); the "
     "ones-on-diagonal-k result is a constant (at most 2^24 elements)"},
    {"DepthToSpace", 1, import_depth_to_space, false, "RESHAPE, SLICE, RESHAPE",
     "4-D (N, C, H, W) float tensors; blocksize; DepthToSpace's mode DCR (default) or CRD: the 6-D reshape "
     "and permutation of ONNX's definition"},
    {"SpaceToDepth", 1, import_space_to_depth, false, "", ""},
    {"Tile", 6, import_tile, true, "CONCAT or removed",
     "constant repeats: one CONCAT of r copies per axis repeated r > 1 times (at most 64); any of the five "
     "types; all repeats 1: removed. A repeat of 0 (an empty result) and computed repeats are unsupported"},
};
const OpList kIndexOps = {kIndexOpRows, std::size(kIndexOpRows)};

}  // namespace onnx_import
}  // namespace jet
