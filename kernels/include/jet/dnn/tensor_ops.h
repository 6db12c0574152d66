// Tensor operations: add (bias), op-tensor, transform (layout and dtype), concat, pad, resize,
// reduce. All take any strides; unless stated, rank is 1..8 and dims follow the descriptors.
#pragma once

#include "jet/dnn/tensor.h"

namespace jet {

// c = alpha * b + beta * c, with b broadcast to c (each dim of b is 1 or equal to c's; same
// rank, same dtype). The bias-add of cudnnAddTensor.
// docs/ops.md routines: | `add_tensor` | b broadcast to c; rank 1..8 | yes | yes | yes | yes | yes
//   | -- | -- |
Status add_tensor(const Handle& handle, float alpha, const TensorDesc& b_desc, const void* b,
                  float beta, const TensorDesc& c_desc, void* c);

// Values are stable: they are written into model files. The formulas:
// kernels/common/tensor_op_math.h. MIN and MAX propagate NaN; POW is powf (a negative base with a
// non-integer exponent is NaN); MOD is C's fmod (the result has a's sign: ONNX Mod with fmod = 1);
// MOD_FLOOR has b's sign (Python's %, ONNX Mod with fmod = 0): fmod(a, b) + b where the two signs
// differ and the remainder is not 0.
enum class TensorOp : int32_t {
  ADD = 0, SUB = 1, MUL = 2, DIV = 3, MIN = 4, MAX = 5, POW = 6, MOD = 7, MOD_FLOOR = 8
};
template <>
struct EnumCount<TensorOp> {
  static constexpr int32_t value = static_cast<int32_t>(TensorOp::MOD_FLOOR) + 1;
};

const char* tensor_op_name(TensorOp op);

// c = op(alpha1 * a, alpha2 * b) + beta * c. a and b broadcast to c in both directions (each dim
// 1 or equal to c's), as ONNX's multidirectional broadcasting once ranks are aligned (pad the
// shorter with leading 1s). c may alias a or b when it has the same layout.
// Integer tensors (a, b and c all I32 or all I64; alpha1 = alpha2 = 1 and beta = 0, NOT_SUPPORTED
// otherwise) compute exactly in their own type, as ONNX Runtime's integer kernels: ADD, SUB, MUL
// wrap around (two's complement); DIV truncates toward zero; MOD has a's sign (C's %), MOD_FLOOR
// b's sign; MIN, MAX; POW by repeated squaring (wrapping), a negative exponent gives 1 / a^-b
// truncated (1 for a = 1, +-1 for a = -1, else 0). A zero divisor of DIV, MOD and MOD_FLOOR gives
// 0 (a GPU kernel cannot trap), and INT_MIN / -1 wraps to INT_MIN. Bool tensors: NOT_SUPPORTED.
// docs/ops.md routines: | `op_tensor` | add, sub, mul, div, min, max, pow, mod (C's fmod),
//   mod_floor (the divisor's sign, Python's %); a and b broadcast (lower ranks padded with leading
//   1s); c may alias a or b; i32 / i64 too (table below) | yes | yes | yes | yes | yes | -- | Add,
//   Sub, Mul, Div, Max, Min, Sum, PRelu, Pow, Mod, Expand |
// docs/ops.md integer: | `op_tensor` | i32, i64 (a, b, c one dtype): add, sub, mul wrap around; div
//   truncates toward zero; mod (the dividend's sign), mod_floor (the divisor's); min, max; pow by
//   squaring (a negative exponent truncates 1 / a^-b); a zero divisor gives 0 and INT_MIN / -1
//   wraps (a GPU kernel cannot trap) | yes | yes | Add, Sub, Mul, Div, Mod (fmod 0 and 1), Max,
//   Min, Sum, Pow (an integer base; a float exponent computes in f32 and truncates), Neg (0 - x),
//   Abs (max(x, 0 - x)) of integer tensors |
Status op_tensor(const Handle& handle, TensorOp op, float alpha1, const TensorDesc& a_desc,
                 const void* a, float alpha2, const TensorDesc& b_desc, const void* b, float beta,
                 const TensorDesc& c_desc, void* c);

// y = alpha * x + beta * y between any two layouts/strides of the same dims, converting
// f32 <-> f16 as the descriptors say. This is also the slice, split and transpose primitive:
// describe the source or destination as a strided view.
// docs/ops.md routines: | `transform_tensor` | any layout to any layout, f32 <-> f16; slices,
//   transposes | yes | yes | yes | yes | yes | -- | Cast (float types), Transpose, Slice, Split,
//   Gather (constant indices) |
// docs/ops.md integer: | `transform_tensor` | between all five dtypes: float -> integer truncates
//   toward zero (NaN and out of range: the integer's lowest value), -> bool is != 0, bool -> 0 / 1,
//   i64 -> i32 wraps | yes | yes | Cast (FLOAT, FLOAT16, INT32, INT64, BOOL); Slice, Transpose,
//   Split, Gather of integer tensors |
Status transform_tensor(const Handle& handle, float alpha, const TensorDesc& x_desc,
                        const void* x, float beta, const TensorDesc& y_desc, void* y);

// Concatenates inputs along `axis` (0 <= axis < rank; no negative axes) into y by transforming
// each into its sub-region view of y, so inputs may be f32 or f16 whatever y is. Inputs match y
// in every dim but `axis`; their `axis` dims sum to y's; they must not overlap y.
// y = alpha * cat + beta * y. Everything is validated before anything is written.
// docs/ops.md routines: | `concat_forward` | any axis, via sub-region views and transform_tensor |
//   yes | yes | yes | yes | yes | -- | Concat |
// docs/ops.md integer: | `concat_forward` | any dtype (through transform_tensor) | yes | yes |
//   Concat of integer tensors |
Status concat_forward(const Handle& handle, int axis, int count, const TensorDesc* x_descs,
                      const void* const* xs, float alpha, float beta, const TensorDesc& y_desc,
                      void* y);

enum class PadMode : int32_t {
  CONSTANT = 0,  // fill with `value`
  REFLECT = 1,   // mirror without repeating the edge (pad < dim required)
  EDGE = 2,      // repeat the edge element
};
template <>
struct EnumCount<PadMode> {
  static constexpr int32_t value = static_cast<int32_t>(PadMode::EDGE) + 1;
};

// y = alpha * pad(x) + beta * y. pad_begin/pad_end have x's rank entries; y's dims are
// x's + pad_begin + pad_end. Negative pads crop, as in ONNX (pad, then crop: REFLECT and EDGE
// measure from the full x). REFLECT needs each pad < the dim (INVALID_VALUE otherwise).
// docs/ops.md routines: | `pad_forward` | constant, reflect, edge; negative pads crop | yes | yes |
//   yes | yes | yes | -- | Pad |
Status pad_forward(const Handle& handle, PadMode mode, const int64_t* pad_begin,
                   const int64_t* pad_end, float value, float alpha, const TensorDesc& x_desc,
                   const void* x, float beta, const TensorDesc& y_desc, void* y);

// LINEAR: bi/trilinear. CUBIC: ONNX's cubic (Keys' kernel with coefficient cubic_coeff_a, 4 taps
// per spatial axis, their product over the axes).
enum class ResizeMode : int32_t { NEAREST = 0, LINEAR = 1, CUBIC = 2 };
template <>
struct EnumCount<ResizeMode> {
  static constexpr int32_t value = static_cast<int32_t>(ResizeMode::CUBIC) + 1;
};

// ONNX's coordinate_transformation_mode: how an output coordinate maps to an input one.
enum class ResizeCoord : int32_t {
  HALF_PIXEL = 0,          // (o + 0.5) / scale - 0.5
  ALIGN_CORNERS = 1,       // o * (in - 1) / (in * scale - 1), 0 when in * scale <= 1
                           // (in * scale is out unless scales are given, as in ONNX)
  ASYMMETRIC = 2,          // o / scale
  PYTORCH_HALF_PIXEL = 3,  // out > 1 ? (o + 0.5) / scale - 0.5 : 0
  TF_HALF_PIXEL_FOR_NN = 4,  // (o + 0.5) / scale
};
template <>
struct EnumCount<ResizeCoord> {
  static constexpr int32_t value = static_cast<int32_t>(ResizeCoord::TF_HALF_PIXEL_FOR_NN) + 1;
};

// ONNX's nearest_mode: how NEAREST rounds the mapped coordinate.
enum class ResizeNearest : int32_t { ROUND_PREFER_FLOOR = 0, ROUND_PREFER_CEIL = 1, FLOOR = 2, CEIL = 3 };
template <>
struct EnumCount<ResizeNearest> {
  static constexpr int32_t value = static_cast<int32_t>(ResizeNearest::CEIL) + 1;
};

struct ResizeDesc {
  ResizeMode mode = ResizeMode::NEAREST;
  ResizeCoord coord = ResizeCoord::HALF_PIXEL;
  ResizeNearest nearest = ResizeNearest::ROUND_PREFER_FLOOR;
  // Per spatial dim; 0 means out / in. ONNX models that give `scales` pass them here, since the
  // coordinate mapping uses the scale, not the rounded output size.
  float scales[3] = {0.f, 0.f, 0.f};
  // CUBIC only (ONNX's attributes): the kernel's coefficient a (-0.75 as ONNX; PyTorch uses
  // -0.75, TensorFlow -0.5), and whether taps outside the input get weight 0 (the other weights
  // renormalized to sum 1) instead of repeating the edge.
  float cubic_coeff_a = -0.75f;
  bool exclude_outside = false;
};

// y = alpha * resize(x) + beta * y over the spatial dims of rank 3..5 tensors (N and C kept).
// Linear modes clamp the sampled coordinate to the input, as ONNX specifies. CUBIC samples the
// unclamped coordinate c with taps floor'(c) - 1 .. floor'(c) + 2 (floor'(c) = ceil(c) - 1, so an
// integer c weighs x[c] alone), each tap outside the input reading the edge (exclude_outside:
// weight 0, renormalized); with pytorch_half_pixel an output of length 1 samples c = -0.5 (ONNX's
// reference). Weights in double, sums in f32.
// docs/ops.md routines: | `resize_forward` | nearest (4 rounding modes), linear/bilinear/trilinear,
//   cubic (ONNX's: coefficient a, exclude_outside; 4 taps per spatial axis, edge taps repeat the
//   border); half_pixel, align_corners, asymmetric, pytorch_half_pixel, tf_half_pixel_for_nn | yes
//   | yes | yes | yes | yes | -- | Resize (10+; cubic 11+), Upsample (7, 9) |
Status resize_forward(const Handle& handle, const ResizeDesc& resize, float alpha,
                      const TensorDesc& x_desc, const void* x, float beta,
                      const TensorDesc& y_desc, void* y);

enum class ReduceOp : int32_t { SUM = 0, MEAN = 1, MAX = 2, MIN = 3 };
template <>
struct EnumCount<ReduceOp> {
  static constexpr int32_t value = static_cast<int32_t>(ReduceOp::MIN) + 1;
};

// y = alpha * reduce(x) + beta * y. x and y have one rank; every dim where y is 1 and x is not
// is reduced (as cudnnReduceTensor); other dims must match. Accumulates in at least f32 (the CPU
// uses double), f16 storage too. MAX and MIN propagate NaN.
// docs/ops.md routines: | `reduce_forward` | sum, mean, max, min over any set of axes | yes | yes |
//   yes | yes | yes | -- | ReduceMean, ReduceSum, ReduceMax, ReduceMin; with activations and
//   op_tensor: ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp |
Status reduce_forward(const Handle& handle, ReduceOp op, float alpha, const TensorDesc& x_desc,
                      const void* x, float beta, const TensorDesc& y_desc, void* y);

// ---- Integer and bool tensors (DType I32, I64, BOOL) ----
// transform_tensor converts between all five dtypes (ONNX Cast): float -> integer truncates
// toward zero (a value outside the integer's range, or NaN, gives an unspecified value, as in
// C and ONNX Runtime); anything -> BOOL is != 0 (NaN is true); BOOL -> anything is 0 or 1;
// I64 -> I32 keeps the low 32 bits. When either side is not f32/f16, alpha must be 1 and beta 0
// (NOT_SUPPORTED otherwise). concat_forward takes any dtype by the same rule.

// Values are stable: they are written into model files. Comparisons take a and b of one dtype
// (F32, F16, I32, I64; EQUAL also BOOL) and compare exactly in that type (integers as integers,
// f16 as its float value; NaN compares unequal to everything, so every comparison with NaN is
// false). AND, OR, XOR take BOOL a and b (any nonzero byte is true).
enum class LogicOp : int32_t {
  EQUAL = 0,
  LESS = 1,
  LESS_OR_EQUAL = 2,
  GREATER = 3,
  GREATER_OR_EQUAL = 4,
  AND = 5,
  OR = 6,
  XOR = 7,
};
template <>
struct EnumCount<LogicOp> {
  static constexpr int32_t value = static_cast<int32_t>(LogicOp::XOR) + 1;
};

const char* logic_op_name(LogicOp op);

// c = op(a, b), a BOOL tensor of 0s and 1s. a and b broadcast to c in both directions (ranks
// aligned by leading 1s, each dim 1 or c's), as op_tensor. c may not alias a or b.
// docs/ops.md integer: | `logic_tensor` | equal, less, less_or_equal, greater, greater_or_equal
//   (f32, f16, i32, i64; equal also bool) and and, or, xor (bool); bool result; broadcasting both
//   ways | yes | yes | Equal, Less, LessOrEqual (12+), Greater, GreaterOrEqual (12+), And, Or, Xor,
//   Not (as xor with true) |
Status logic_tensor(const Handle& handle, LogicOp op, const TensorDesc& a_desc, const void* a,
                    const TensorDesc& b_desc, const void* b, const TensorDesc& c_desc, void* c);

// y = cond ? a : b element by element (ONNX Where). cond is BOOL; a, b and y share any one dtype;
// all three inputs broadcast to y as in logic_tensor. y may not alias an input.
// docs/ops.md integer: | `where_forward` | cond (bool) ? a : b, any dtype, all three broadcast |
//   yes | yes | Where |
Status where_forward(const Handle& handle, const TensorDesc& cond_desc, const void* cond,
                     const TensorDesc& a_desc, const void* a, const TensorDesc& b_desc,
                     const void* b, const TensorDesc& y_desc, void* y);

// Values are stable: they are written into model files.
enum class ArgReduceOp : int32_t { ARGMAX = 0, ARGMIN = 1 };
template <>
struct EnumCount<ArgReduceOp> {
  static constexpr int32_t value = static_cast<int32_t>(ArgReduceOp::ARGMIN) + 1;
};

// y = the index along `axis` of the largest (ARGMAX) or smallest (ARGMIN) element of x (ONNX
// ArgMax / ArgMin). x is F32, F16, I32 or I64; y is I64 with x's rank and dims, but 1 at `axis`
// (0 <= axis < rank). Ties give the first index, or the last with select_last_index. A NaN is
// larger and smaller than everything: the first (last) NaN wins, as numpy's argmax.
// docs/ops.md integer: | `arg_reduce_forward` | argmax, argmin along one axis of f32, f16, i32, i64
//   x; i64 indices; first or last index of ties (select_last_index); NaN wins (numpy) | yes | yes |
//   ArgMax, ArgMin (keepdims, select_last_index) |
Status arg_reduce_forward(const Handle& handle, ArgReduceOp op, int axis, bool select_last_index,
                          const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
                          void* y);

// y = x gathered along `axis` at `indices` (ONNX Gather): y's dims are x's dims before axis, then
// indices' dims, then x's dims after axis (rank 1..8; indices of rank 1..8). x and y share any
// dtype; indices are I32 or I64, a negative index counts from the end. An index outside
// [-n, n) (n = x's dim at axis) cannot be reported by a GPU kernel: every backend writes NaN
// there in a float y, the type's lowest value in an integer y and false in a bool y, so the fault
// shows instead of passing as data. Any strides; y may not alias x or indices.
// docs/ops.md integer: | `gather_forward` | x of any dtype gathered along one axis at i32 / i64
//   indices of any rank (negative from the end); an index out of range gives NaN, the integer's
//   lowest value or false (a GPU kernel cannot report it) | yes | yes | Gather by computed indices
//   (embedding lookups) |
Status gather_forward(const Handle& handle, int axis, const TensorDesc& x_desc, const void* x,
                      const TensorDesc& indices_desc, const void* indices,
                      const TensorDesc& y_desc, void* y);

// ---- Index and data-movement ops on computed tensors (GatherElements, Trilu, CumSum) ----

// y[i0, .., ia, .., ir] = x[i0, .., indices[i0, .., ia, .., ir], .., ir] (ONNX GatherElements):
// indices (I32 or I64, negative from the end) have x's rank and each dim at most x's; y has the
// indices' dims and x's dtype (any). An index outside [-n, n) (n = x's dim at axis) writes what
// gather_forward writes (NaN, the lowest integer, false). Any strides; y may not alias x or indices.
// docs/ops.md integer: | `gather_elements_forward` | x of any dtype; y[.., i_axis, ..] = x[..,
//   indices[..], ..]: i32 / i64 indices of x's rank (each dim at most x's; negative from the end),
//   y has the indices' dims; an index out of range gives what `gather_forward` gives | yes | yes |
//   GatherElements |
Status gather_elements_forward(const Handle& handle, int axis, const TensorDesc& x_desc, const void* x,
                               const TensorDesc& indices_desc, const void* indices,
                               const TensorDesc& y_desc, void* y);

// y = the upper (upper = true: elements with col - row >= k) or lower (col - row <= k) triangle of
// every matrix of x (its last two dims; rank >= 2), zero elsewhere (ONNX Trilu). x and y share
// dtype (any) and dims; any strides; y may not alias x.
// docs/ops.md integer: | `trilu_forward` | the upper (col - row >= k) or lower (col - row <= k)
//   triangle of each matrix (last two dims) of x of any dtype, zeros elsewhere; any k | yes | yes |
//   Trilu |
Status trilu_forward(const Handle& handle, bool upper, int64_t k, const TensorDesc& x_desc, const void* x,
                     const TensorDesc& y_desc, void* y);

// y = the running sum of x along `axis` (ONNX CumSum): exclusive leaves out the element itself
// (the first sum is 0), reverse sums from the end. x and y share dtype (F32, F16, I32, I64) and
// dims; floats are summed in f32 in order (f16 stored rounded), integers in their own type
// (wrapping). Any strides; y may not alias x.
// docs/ops.md integer: | `cumsum_forward` | running sum along one axis of f32, f16 (summed in f32,
//   in order), i32, i64 (wrapping) x; exclusive, reverse | yes | yes | CumSum |
Status cumsum_forward(const Handle& handle, int axis, bool exclusive, bool reverse, const TensorDesc& x_desc,
                      const void* x, const TensorDesc& y_desc, void* y);

// How a scatter combines an update with the element it lands on (ONNX's `reduction`). Values are
// stable: they are written into model files.
enum class ScatterReduction : int32_t { NONE = 0, ADD = 1, MUL = 2, MAX = 3, MIN = 4 };
template <>
struct EnumCount<ScatterReduction> {
  static constexpr int32_t value = static_cast<int32_t>(ScatterReduction::MIN) + 1;
};
const char* scatter_reduction_name(ScatterReduction r);

// y = x with the updates written at `indices` along `axis` (ONNX ScatterElements): the update at
// position p goes to y at p with p[axis] replaced by indices[p]. indices (I32 / I64, negative from
// the end) and updates have one shape, of x's rank, each dim at most x's (at the axis any). x,
// updates and y share a dtype (any; BOOL only with NONE) and y has x's dims. Updates landing on one
// element are applied in row-major order of the updates (NONE: the last one wins; ADD, MUL in the
// element's type: f32 for floats, wrapping integers; MAX, MIN propagate NaN). An index outside
// [-n, n) cannot be reported by a GPU kernel: every element of the line along the axis it was
// meant for gets gather_forward's invalid value (NaN, the lowest integer, false). Each element of y
// reads its candidate updates (n of them along the axis): no atomics, deterministic on every
// backend. Any strides; y may not alias indices or updates (it may alias x with x's layout).
// docs/ops.md integer: | `scatter_elements_forward`, `scatter_nd_forward` | y = x with updates
//   written along an axis at i32 / i64 indices (ScatterElements) or at index tuples addressing
//   slices (ScatterND); reduction none, add, mul, max, min (any dtype; bool with none only);
//   duplicates applied in the updates' order on every backend (each element of y scans its
//   candidate updates: no atomics, deterministic; ScatterND costs y's elements x tuples). An index
//   out of range gives the invalid value to the line along the axis it was meant for
//   (ScatterElements) or to all of y (ScatterND) | yes | yes | ScatterElements, Scatter, ScatterND
//   |
Status scatter_elements_forward(const Handle& handle, ScatterReduction reduction, int axis,
                                const TensorDesc& x_desc, const void* x, const TensorDesc& indices_desc,
                                const void* indices, const TensorDesc& updates_desc, const void* updates,
                                const TensorDesc& y_desc, void* y);

// y = x with slices replaced at `indices` (ONNX ScatterND): indices (I32 / I64) have rank q >= 1
// and last dim k in [1, rank(x)]; each of their prod(dims[:-1]) tuples addresses x's slice
// x[i0, .., ik-1, :, ..], replaced by (or combined with, `reduction` as in scatter_elements_forward)
// the matching slice of updates, whose dims are indices' dims[:-1] then x's dims from k on. Tuples
// are applied in order. Any index outside [-n, n) makes every element of y the invalid value. Each
// element of y scans every tuple (cost: y's elements x tuples): meant for the small scatters of
// model heads. Same dtypes, strides and aliasing rules as scatter_elements_forward.
Status scatter_nd_forward(const Handle& handle, ScatterReduction reduction, const TensorDesc& x_desc, const void* x,
                          const TensorDesc& indices_desc, const void* indices, const TensorDesc& updates_desc,
                          const void* updates, const TensorDesc& y_desc, void* y);

}  // namespace jet
