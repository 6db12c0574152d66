// Index and data-movement ops on computed tensors: GatherElements (GATHER_ELEMENTS), Trilu
// (TRILU), CumSum (CUMSUM). Constant operands become IR constants; a node whose inputs are all
// constant is then folded by optimize's fold_constants with the same kernels.
#include "importer.h"

namespace jet {
namespace onnx_import {

Status import_gather_elements(Importer& im) {
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
  int x = -1, i = -1, y = -1;
  st = im.ir_input_any(0, &x);
  if (st.ok()) st = im.ir_input_any(1, &i);
  if (!st.ok()) return st;
  const DType it = im.g->tensors[i].dtype;
  if (it != DType::I32 && it != DType::I64) {
    return im.bad(std::string("indices are ") + dtype_name(it) + ", expected INT32 or INT64");
  }
  st = im.ir_check(im.g->gather_elements(im.ir_name(), x, i, static_cast<int>(axis), &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

Status import_trilu(Importer& im) {
  Status st = im.require_input(0, "input");
  if (!st.ok()) return st;
  int64_t upper = 1, k = 0;
  st = im.attr_int("upper", 1, &upper);
  if (!st.ok()) return st;
  if (im.has_input(1)) {
    if (!im.is_constant(1)) return im.unsupported("k is computed at run time (only a constant k is supported)");
    std::vector<int64_t> ks;
    st = im.ints_input(1, "k", &ks);
    if (!st.ok()) return st;
    if (ks.size() != 1) return im.bad("k has " + std::to_string(ks.size()) + " elements, expected one");
    k = ks[0];
  }
  if (im.input_dims(0).size() < 2) return im.bad("input has a rank below 2");
  int x = -1, y = -1;
  st = im.ir_input_any(0, &x);
  if (st.ok()) st = im.ir_check(im.g->trilu(im.ir_name(), x, upper != 0, k, &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

Status import_cumsum(Importer& im) {
  Status st = im.require_input(0, "x");
  if (st.ok()) st = im.require_input(1, "axis");
  if (!st.ok()) return st;
  if (!im.is_constant(1)) return im.unsupported("axis is computed at run time (only a constant axis is supported)");
  std::vector<int64_t> axes;
  st = im.ints_input(1, "axis", &axes);
  if (!st.ok()) return st;
  if (axes.size() != 1) return im.bad("axis has " + std::to_string(axes.size()) + " elements, expected one");
  const int64_t rank = static_cast<int64_t>(im.input_dims(0).size());
  if (rank == 0) return im.bad("x is a scalar");
  int64_t axis = 0, exclusive = 0, reverse = 0;
  st = im.normalize_axis(axes[0], rank, "axis", &axis);
  if (st.ok()) st = im.attr_int("exclusive", 0, &exclusive);
  if (st.ok()) st = im.attr_int("reverse", 0, &reverse);
  if (!st.ok()) return st;
  int x = -1, y = -1;
  st = im.ir_input_any(0, &x);
  if (!st.ok()) return st;
  if (im.g->tensors[x].dtype == DType::BOOL) return im.bad("x is BOOL");
  st = im.ir_check(im.g->cumsum(im.ir_name(), x, static_cast<int>(axis), exclusive != 0, reverse != 0, &y));
  if (!st.ok()) return st;
  return im.set_output(0, y);
}

}  // namespace onnx_import
}  // namespace jet
