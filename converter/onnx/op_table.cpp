// The op table: one line per ONNX op type (default domain), the only place that lists them; the
// lookup table, the importers' declarations, the list of op types that take integer tensors and
// docs/onnx.md's op table are generated from it. Adding an op is one line here plus its function
// in ops_*.cpp (a line naming a function that no ops_*.cpp defines fails to link).
//
// JET_ONNX_OPS(OP, ACT) calls
//   OP("Name", since, fn, ints, "IR", "notes")     imported by Status fn(Importer& im), defined in
//                                                  ops_*.cpp
//   ACT("Name", since, MODE, ints, "IR", "notes")  an activation without attributes:
//                                                  import_activation<ActivationMode::MODE>
//                                                  (importer.h; constant inputs fold through the
//                                                  same formula)
//   since  the first opset that has the op; version-specific behaviour (attributes that became
//          inputs, changed defaults) is handled inside the functions by Importer::opset
//   ints   the importer takes computed integer and bool tensors (IR ops TRANSFORM, SLICE, CONCAT,
//          RESHAPE, LOGIC, WHERE, ARG_REDUCE, ..., or relabellings); a node of any other op type
//          reading one is unsupported (model.cpp's walk), never computed as floats
//   IR, notes  the op's row of docs/onnx.md's op table (what it becomes; attributes, limits, what
//          is unsupported), which tests/runtime/test_op_tables.cpp generates from these lines
//          (JET_UPDATE_DOCS=1 rewrites it). IR "" (and notes "") puts the op in the row of the
//          line above: related ops share one row, so the lines are in the doc's order.
#include "importer.h"

namespace jet {
namespace onnx_import {

// clang-format off
#define JET_ONNX_OPS(OP, ACT)                                                                                  \
  OP("Conv",                  1,  import_conv,                  false, "CONV",                                  \
      "1D/2D/3D; group (depthwise), dilations, strides, asymmetric pads, auto_pad SAME_UPPER / SAME_LOWER / "   \
      "VALID; optional bias. W and B must be constants")                                                        \
  OP("MaxPool",               1,  import_max_pool,              false, "POOL (MAX)",                            \
      "kernel_shape, strides, pads, auto_pad, ceil_mode (10+); dilations other than 1 and a used Indices "      \
      "output are unsupported")                                                                                 \
  OP("AveragePool",           1,  import_average_pool,          false,                                          \
      "POOL (AVG_INCLUDE_PAD / AVG_EXCLUDE_PAD)",                                                               \
      "count_include_pad (7+), ceil_mode (10+), asymmetric pads, auto_pad; dilations (19+) other than 1 "       \
      "unsupported")                                                                                            \
  OP("GlobalAveragePool",     1,  import_global_average_pool,   false, "GLOBAL_POOL (AVG / MAX)",               \
      "rank 3..5")                                                                                              \
  OP("GlobalMaxPool",         1,  import_global_max_pool,       false, "", "")                                  \
  ACT("Relu",                 1,  RELU,                         false, "ACTIVATION", "")                        \
  ACT("Sigmoid",              1,  SIGMOID,                      false, "", "")                                  \
  ACT("Tanh",                 1,  TANH,                         false, "", "")                                  \
  ACT("Softplus",             1,  SOFTPLUS,                     false, "", "")                                  \
  OP("LeakyRelu",             1,  import_leaky_relu,            false, "ACTIVATION",                            \
      "alpha / beta / gamma attributes with ONNX's defaults")                                                   \
  OP("Elu",                   1,  import_elu,                   false, "", "")                                  \
  OP("Selu",                  1,  import_selu,                  false, "", "")                                  \
  OP("HardSigmoid",           1,  import_hard_sigmoid,          false, "", "")                                  \
  ACT("HardSwish",            14, HARD_SWISH,                   false, "ACTIVATION", "")                        \
  ACT("Mish",                 18, MISH,                         false, "", "")                                  \
  ACT("Exp",                  1,  EXP,                          false, "ACTIVATION",                            \
      "one activation mode each (`jet::ActivationMode`: the same formula on every backend, fusable into a "     \
      "Conv's epilogue); Round halves to even; float tensors (integer constants: see folding above). Neg and "  \
      "Abs of INT32 / INT64 tensors: OP_TENSOR SUB (+ MAX), 0 - x, max(x, 0 - x): exact, the lowest integer "   \
      "wraps to itself (numpy)")                                                                                \
  ACT("Log",                  1,  LOG,                          false, "", "")                                  \
  ACT("Sqrt",                 1,  SQRT,                         false, "", "")                                  \
  ACT("Reciprocal",           1,  RECIPROCAL,                   false, "", "")                                  \
  ACT("Abs",                  1,  ABS,                          true,  "", "")                                  \
  ACT("Neg",                  1,  NEG,                          true,  "", "")                                  \
  ACT("Floor",                1,  FLOOR,                        false, "", "")                                  \
  ACT("Ceil",                 1,  CEIL,                         false, "", "")                                  \
  ACT("Round",                11, ROUND,                        false, "", "")                                  \
  ACT("Sign",                 9,  SIGN,                         false, "", "")                                  \
  ACT("Sin",                  7,  SIN,                          false, "", "")                                  \
  ACT("Cos",                  7,  COS,                          false, "", "")                                  \
  ACT("Tan",                  7,  TAN,                          false, "", "")                                  \
  ACT("Erf",                  9,  ERF,                          false, "", "")                                  \
  ACT("Softsign",             1,  SOFTSIGN,                     false, "", "")                                  \
  OP("Gelu",                  20, import_gelu,                  false, "ACTIVATION (GELU / GELU_TANH)",         \
      "approximate none or tanh")                                                                               \
  OP("Clip",                  1,  import_clip,                  false, "ACTIVATION",                            \
      "bounds are attributes before 11, constant inputs from 11 (a computed bound is unsupported); min 0 / "    \
      "max 6 becomes CLIPPED_RELU (relu6), min 0 alone RELU, anything else CLIP (a missing bound is the float " \
      "range)")                                                                                                 \
  OP("PRelu",                 1,  import_prelu,                 false,                                          \
      "OP_TENSOR x2 or ACTIVATION + OP_TENSOR x3",                                                              \
      "constant slope broadcast to X (opset 6: a C-vector is per channel); slopes in [0, 1]: max(x, slope * "   \
      "x); otherwise relu(x) + slope * min(x, 0). Both exact")                                                  \
  OP("Add",                   1,  import_add,                   true,  "OP_TENSOR",                             \
      "numpy broadcasting (lower ranks padded by a RESHAPE or constant dims); opset 6: `broadcast` / `axis` "   \
      "legacy broadcasting of Add/Sub/Mul/Div (broadcast = 0 needs equal shapes); Max/Min variadic. FLOAT, "    \
      "FLOAT16, and INT32 / INT64 tensors computed exactly in their type (Div truncates toward zero, a zero "   \
      "divisor gives 0, overflow wraps; `docs/ops.md`)")                                                        \
  OP("Sub",                   1,  import_sub,                   true,  "", "")                                  \
  OP("Mul",                   1,  import_mul,                   true,  "", "")                                  \
  OP("Div",                   1,  import_div,                   true,  "", "")                                  \
  OP("Max",                   1,  import_max,                   true,  "", "")                                  \
  OP("Min",                   1,  import_min,                   true,  "", "")                                  \
  OP("Sum",                   1,  import_sum,                   true,  "chain of OP_TENSOR ADD",                \
      "variadic; one input is removed")                                                                         \
  OP("Pow",                   1,  import_pow,                   true,  "OP_TENSOR POW (MUL, TRANSFORM)",        \
      "numpy broadcasting; a constant scalar exponent (float or integer) of 1 is removed, 2 is x * x. INT32 / " \
      "INT64 base and exponent: exact integer power. Mixed types (12+): a float base with an integer exponent " \
      "converts the exponent; an integer base with a float exponent computes in f32 and truncates to the "      \
      "base's type (as ONNX Runtime)")                                                                          \
  OP("Mod",                   10, import_mod,                   true,  "OP_TENSOR MOD or MOD_FLOOR",            \
      "fmod = 1: C's fmod, the dividend's sign (the only form ONNX allows for floats); fmod = 0 on INT32 / "    \
      "INT64 tensors: MOD_FLOOR, the divisor's sign (a zero divisor gives 0); numpy broadcasting; constants "   \
      "folded; fmod = 0 of a computed float tensor is unsupported")                                             \
  OP("TopK",                  1,  import_topk,                  true,  "TOPK (one node per used output)",       \
      "K an attribute before 10, a constant input from 10 (K = 0, an empty result, unsupported); axis "         \
      "(negative too), largest (11+); sorted is always honoured (sorted = 0 allows any order). FLOAT, "         \
      "FLOAT16, INT32, INT64 data. Values and Indices are two TOPK nodes (the runtime's ops have one output "   \
      "each); only the outputs read are computed. Ties: the lower index first; NaN above every number")         \
  OP("NonMaxSuppression",     10, import_nms,                   false, "NMS",                                   \
      "boxes and scores computed or constant (FLOAT / FLOAT16); max_output_boxes_per_class, iou_threshold, "    \
      "score_threshold constant (absent max_output_boxes_per_class, or 0, gives an empty output in ONNX: "      \
      "unsupported); center_point_box 0 / 1. **Fixed-size output**: the runtime's shapes are static, so "       \
      "selected_indices is INT64 [batches x classes x min(max_output_boxes_per_class, boxes), 3], the most "    \
      "rows ONNX's output can have: the selected (batch, class, box) rows first, in ONNX's order, then rows "   \
      "of -1. The number of valid rows is the count before the first -1 row (as TensorRT's EfficientNMS pads "  \
      "its detections; there is no second count output, since ONNX's node has one). A model that reads ONNX's " \
      "exact number of rows downstream (e.g. Gather on the selected rows then a reduction) sees the -1 rows "   \
      "too: such graphs need the padding handled (Gather of a -1 index reads the last element). The "           \
      "conformance comparer accepts this output by its padded-rows rule (`docs/conformance.md`)")               \
  OP("Gemm",                  1,  import_gemm,                  false, "GEMM (+ OP_TENSOR)",                    \
      "transA/transB; alpha folded into a constant A or B (else a MUL after); beta * C folded into a constant " \
      "bias, C unidirectionally broadcast (scalar, N, 1xN, Mx1, MxN); a computed C is the bias when beta is "   \
      "1, else added after; opset 6 `broadcast`")                                                               \
  OP("MatMul",                1,  import_matmul,                false, "GEMM (+ RESHAPE)",                      \
      "2-D; batched with equal batch dims or one side with batch 1 (rank 3 GEMM); any-rank A times a matrix B " \
      "(batch folded into the rows); vector operands (numpy's 1-D rules). Partially broadcast batch dims are "  \
      "unsupported")                                                                                            \
  OP("Softmax",               1,  import_softmax,               false, "SOFTMAX (ACCURATE / LOG)",              \
      "before 13: axis default 1 and the input coerced to 2-D at axis (RESHAPE, softmax over the flattened "    \
      "trailing dims, RESHAPE back; no reshapes when axis is the last dim); from 13: axis default -1, one "     \
      "axis")                                                                                                   \
  OP("LogSoftmax",            1,  import_log_softmax,           false, "", "")                                  \
  OP("BatchNormalization",    1,  import_batch_norm,            false, "BATCHNORM",                             \
      "all versions; epsilon; constant parameters (stored F32); rank 2 inputs run as N x C x 1; training "      \
      "outputs, training_mode = 1 and spatial = 0 with per-element parameters are unsupported")                 \
  OP("Concat",                1,  import_concat,                true,  "CONCAT",                                \
      "negative axes; constant inputs materialized, empty constants skipped; all-constant inputs folded")       \
  OP("Reshape",               5,  import_reshape,               true,  "RESHAPE",                               \
      "constant shape (folded subgraphs included), 0 copies a dim, -1 inferred, allowzero (14+)")               \
  OP("Flatten",               1,  import_flatten,               true,  "RESHAPE",                               \
      "axis (negative from 11)")                                                                                \
  OP("Squeeze",               1,  import_squeeze,               true,  "RESHAPE",                               \
      "axes attribute before 13, input from 13")                                                                \
  OP("Unsqueeze",             1,  import_unsqueeze,             true,  "", "")                                  \
  OP("Transpose",             1,  import_transpose,             true,  "SLICE, RESHAPE or folded",              \
      "constants folded; a relabelling (moving only size-1 dims) is a RESHAPE; any other perm (default: "       \
      "reversed) a SLICE with that permutation")                                                                \
  OP("Identity",              1,  import_identity,              true,  "removed",                               \
      "Dropout's mask output, or training_mode = true (12+), is unsupported")                                   \
  OP("Dropout",               1,  import_dropout,               false, "", "")                                  \
  OP("Cast",                  1,  import_cast,                  true,  "TRANSFORM or removed",                  \
      "computed tensors: between FLOAT, FLOAT16, INT32, INT64 and BOOL (TRANSFORM, or removed when the type "   \
      "does not change; float -> integer truncates, -> BOOL is != 0); constants: any numeric type")             \
  OP("Equal",                 1,  import_equal,                 true,  "LOGIC or folded",                       \
      "numpy broadcasting (constant operands materialized in the computed operand's type); FLOAT, FLOAT16, "    \
      "INT32, INT64 operands compared exactly in their type (Equal also BOOL); And, Or, Xor of BOOL; a BOOL "   \
      "result. Constants folded (int64 compared as integers)")                                                  \
  OP("Less",                  1,  import_less,                  true,  "", "")                                  \
  OP("Greater",               1,  import_greater,               true,  "", "")                                  \
  OP("LessOrEqual",           12, import_less_or_equal,         true,  "", "")                                  \
  OP("GreaterOrEqual",        12, import_greater_or_equal,      true,  "", "")                                  \
  OP("And",                   7,  import_and,                   true,  "", "")                                  \
  OP("Or",                    7,  import_or,                    true,  "", "")                                  \
  OP("Xor",                   7,  import_xor,                   true,  "", "")                                  \
  OP("Not",                   1,  import_not,                   true,                                           \
      "LOGIC (XOR with a constant true) or folded",                                                             \
      "BOOL")                                                                                                   \
  OP("Where",                 9,  import_where,                 true,  "WHERE or folded",                       \
      "condition BOOL; X and Y of any of the five types, constants materialized; numpy broadcasting of all "    \
      "three")                                                                                                  \
  OP("ArgMax",                1,  import_arg_max,               true,  "ARG_REDUCE (+ RESHAPE) or folded",      \
      "axis (negative too), keepdims (0: a RESHAPE after; a rank-0 result is unsupported), select_last_index "  \
      "(12+); FLOAT, FLOAT16, INT32, INT64 data; an INT64 result. Ties give the first index (the last with "    \
      "select_last_index), a NaN wins")                                                                         \
  OP("ArgMin",                1,  import_arg_min,               true,  "", "")                                  \
  OP("ReduceMean",            1,  import_reduce_mean,           false,                                          \
      "GLOBAL_POOL or REDUCE (+ OP_TENSOR, RESHAPE)",                                                           \
      "axes attribute before 18 (ReduceSum: before 13), constant input after; negative and repeated axes; no "  \
      "axes = all (noop_with_empty_axes removes the op); keepdims (0: a RESHAPE after). Computed tensors: "     \
      "Mean/Max/Sum over exactly the spatial dims are GLOBAL_POOL (ReduceSum = mean x count), everything else " \
      "(ReduceMin, any other axes) a REDUCE. A rank-0 result of a computed tensor is unsupported. Constants: "  \
      "folded")                                                                                                 \
  OP("ReduceMax",             1,  import_reduce_max,            false, "", "")                                  \
  OP("ReduceSum",             1,  import_reduce_sum,            false, "", "")                                  \
  OP("ReduceMin",             1,  import_reduce_min,            false, "", "")                                  \
  OP("ReduceL1",              1,  import_reduce_l1,             false,                                          \
      "ACTIVATION / OP_TENSOR + REDUCE or GLOBAL_POOL (+ ACTIVATION, OP_TENSOR)",                               \
      "as the reductions above (axes input from 18), composed: sum(abs x), sqrt(sum(x * x)), sum(x * x), "      \
      "log(sum x), max + log(sum(exp(x - max))) (no overflow); float tensors; constants folded; "               \
      "noop_with_empty_axes with no axes unsupported")                                                          \
  OP("ReduceL2",              1,  import_reduce_l2,             false, "", "")                                  \
  OP("ReduceSumSquare",       1,  import_reduce_sum_square,     false, "", "")                                  \
  OP("ReduceLogSum",          1,  import_reduce_log_sum,        false, "", "")                                  \
  OP("ReduceLogSumExp",       1,  import_reduce_log_sum_exp,    false, "", "")                                  \
  OP("Pad",                   1,  import_pad,                   false, "PAD, or folded into Conv",              \
      "pads / value attributes before 11, pads / constant_value inputs from 11, axes input 18+; modes "         \
      "constant, reflect, edge (wrap unsupported; reflect pads must be < the dim); negative pads crop. A zero " \
      "constant Pad of the spatial dims read by a Conv becomes the Conv's pads (any other reader of it gets a " \
      "PAD); all-zero pads are removed")                                                                        \
  OP("Gather",                1,  import_gather,                true,                                           \
      "folded, GATHER, RESHAPE or SLICE (+ CONCAT, RESHAPE)",                                                   \
      "computed indices (INT32 / INT64; constant or computed data of any type): a GATHER node (an index out "   \
      "of range gives NaN, the lowest integer or false: the runtime cannot stop there). Constant data and "     \
      "indices folded; on a computed tensor constant indices (negative allowed): the single entry of a size-1 " \
      "dim is a relabelling, otherwise one SLICE per index (at most 64), concatenated, reshaped to the output " \
      "dims (a scalar index drops the axis). A rank-0 result is unsupported")                                   \
  OP("GatherElements",        11, import_gather_elements,       true,  "GATHER_ELEMENTS",                       \
      "axis (negative too); data of any of the five types, INT32 / INT64 indices (negative too), computed or "  \
      "constant (an index out of range gives NaN, the lowest integer or false, as Gather). All-constant "       \
      "inputs are folded by `fold_constants`")                                                                  \
  OP("Trilu",                 14, import_trilu,                 true,  "TRILU",                                 \
      "upper; k a constant input (computed k unsupported); any of the five types, rank >= 2")                   \
  OP("CumSum",                11, import_cumsum,                true,  "CUMSUM",                                \
      "axis a constant input (negative too; computed unsupported), exclusive, reverse; FLOAT, FLOAT16, INT32, " \
      "INT64 (integers wrap)")                                                                                  \
  OP("ScatterElements",       11, import_scatter_elements,      true,  "SCATTER",                               \
      "Scatter: ScatterElements' name in opsets 9 and 10. axis (ScatterElements, Scatter; negative too), "      \
      "reduction none / add / mul (16+) / max / min (18+); "                                                    \
      "data and updates of any of the five types (BOOL with none only), INT32 / INT64 indices (negative too), " \
      "computed or constant. Duplicate indices are applied in the updates' order. An index out of range gives " \
      "NaN / the lowest integer / false (ScatterElements: on the line along the axis it was meant for; "        \
      "ScatterND: everywhere)")                                                                                 \
  OP("Scatter",               9,  import_scatter_elements,      true,  "", "")                                  \
  OP("ScatterND",             11, import_scatter_nd,            true,  "", "")                                  \
  OP("OneHot",                9,  import_one_hot,               true,                                           \
      "RESHAPE, LOGIC (EQUAL, EQUAL, OR), SLICE, WHERE",                                                        \
      "depth a constant (at most 2^20); axis (negative too); indices FLOAT, FLOAT16, INT32 or INT64, computed " \
      "or constant: the mask is Equal(indices, 0..depth-1) Or Equal(indices, -depth..-1) (negative indices "    \
      "count from the end; out of range ones give an all-off row), then Where(mask, values[1], values[0])")     \
  OP("EyeLike",               9,  import_eye_like,              true,  "folded",                                \
      "2-D input (computed or constant: only its dims are read), k, dtype (default: the input's type); the "    \
      "ones-on-diagonal-k result is a constant (at most 2^24 elements)")                                        \
  OP("DepthToSpace",          1,  import_depth_to_space,        false, "RESHAPE, SLICE, RESHAPE",               \
      "4-D (N, C, H, W) float tensors; blocksize; DepthToSpace's mode DCR (default) or CRD: the 6-D reshape "   \
      "and permutation of ONNX's definition")                                                                   \
  OP("SpaceToDepth",          1,  import_space_to_depth,        false, "", "")                                  \
  OP("Tile",                  6,  import_tile,                  true,  "CONCAT or removed",                     \
      "constant repeats: one CONCAT of r copies per axis repeated r > 1 times (at most 64); any of the five "   \
      "types; all repeats 1: removed. A repeat of 0 (an empty result) and computed repeats are unsupported")    \
  OP("Slice",                 1,  import_slice,                 true,  "SLICE or folded",                       \
      "Slice: attributes before 10, constant inputs from 10 (steps, negative axes / starts / ends, ONNX "       \
      "clamping); Split: `split` attribute before 13 / input from 13, equal parts or num_outputs (18, the "     \
      "last part smaller). Constants folded; a whole-tensor Slice or single-output Split is removed; computed " \
      "tensors get one SLICE per (used) output. A negative step over more than one element of a computed "      \
      "tensor, and empty results, are unsupported")                                                             \
  OP("Split",                 2,  import_split,                 true,  "", "")                                  \
  OP("Expand",                8,  import_expand,                false, "folded / OP_TENSOR MUL",                \
      "constants folded; a computed tensor is multiplied by a ones constant spanning the expanded dims "        \
      "(exact)")                                                                                                \
  OP("Shape",                 1,  import_shape,                 true,  "folded",                                \
      "constants only (Shape and Size need only dims)")                                                         \
  OP("Size",                  1,  import_size,                  true,  "", "")                                  \
  OP("ConstantOfShape",       9,  import_constant_of_shape,     false, "", "")                                  \
  OP("Range",                 11, import_range,                 false, "", "")                                  \
  OP("ReduceProd",            1,  import_reduce_prod,           false, "", "")                                  \
  OP("Constant",              1,  import_constant,              false, "", "")                                  \
  OP("ConvTranspose",         1,  import_conv_transpose,        false, "CONV_TRANSPOSE",                        \
      "1D/2D/3D; W (C_in x C_out/group x kernel) and B constant; group, strides, dilations, pads, auto_pad "    \
      "(SAME_UPPER / SAME_LOWER: output = input x stride; VALID), output_padding, output_shape (spatial, or "   \
      "with N and C; its padding split as the ONNX spec says). Unsupported: output_padding >= stride, an "      \
      "output larger than the full transposed extent (negative padding)")                                       \
  OP("InstanceNormalization", 1,  import_instance_norm,         false, "INSTANCENORM",                          \
      "rank 3..5; epsilon; constant scale and B (stored F32, also in f16 models)")                              \
  OP("LayerNormalization",    17, import_layer_norm,            false, "LAYERNORM",                             \
      "axis (negative too), epsilon; constant Scale and optional B of the normalized shape or broadcast to it " \
      "(stored F32); stash_type ignored (statistics in f32 or better always); the Mean and InvStdDev outputs, " \
      "when used, are computed beside it (REDUCE MEAN, then SUB, MUL, REDUCE MEAN, ADD eps, SQRT, "             \
      "RECIPROCAL). The decomposed form exporters write (ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, "   \
      "Div, then Mul scale, Add bias) becomes one LAYERNORM in `optimize_graph` (`fuse_layernorm`)")            \
  OP("GroupNormalization",    18, import_group_norm,            false,                                          \
      "RESHAPE, LAYERNORM, RESHAPE, OP_TENSOR MUL, ADD",                                                        \
      "num_groups dividing C, epsilon; constant scale and bias: one value per group before opset 21, per "      \
      "channel from 21; rank >= 3")                                                                             \
  OP("LRN",                   1,  import_lrn,                   false, "LRN",                                   \
      "size, alpha, beta, bias; outside the kernel's limits (size 1..16, beta >= 0.01, bias >= 1e-5) "          \
      "unsupported")                                                                                            \
  OP("Resize",                10, import_resize,                false, "RESIZE",                                \
      "10: scales input, asymmetric coordinates, nearest rounds down when enlarging and up when shrinking "     \
      "(ONNX Runtime's rule; mixing the two directions in one nearest op is unsupported). 11, 13, 18, 19: "     \
      "scales or sizes (roi ignored), coordinate_transformation_mode half_pixel / align_corners / asymmetric "  \
      "/ pytorch_half_pixel / tf_half_pixel_for_nn, nearest_mode, axes (18). Modes nearest, linear and cubic "  \
      "(11+: cubic_coeff_a, exclude_outside; ONNX's reference: the unclamped coordinate, 4 taps per axis, "     \
      "edge values beyond the border). Only spatial dims may change (rank 3..5). Unsupported: "                 \
      "tf_crop_and_resize, half_pixel_symmetric (19), keep_aspect_ratio_policy other than stretch, antialias "  \
      "when shrinking with linear or cubic, exclude_outside with linear")                                       \
  OP("Upsample",              1,  import_upsample,              false, "RESIZE",                                \
      "7: scales attribute, 9: scales input; nearest / linear as Resize 10. Before 7 unsupported")
// clang-format on

#define JET_ONNX_DECLARE(name, since, fn, ints, ir, notes) Status fn(Importer& im);
#define JET_ONNX_NO_DECLARATION(name, since, mode, ints, ir, notes)
JET_ONNX_OPS(JET_ONNX_DECLARE, JET_ONNX_NO_DECLARATION)
#undef JET_ONNX_DECLARE
#undef JET_ONNX_NO_DECLARATION

namespace {

struct OpRow {
  OpEntry entry;
  bool ints;
};

#define JET_ONNX_ROW(name, since, fn, ints, ir, notes) {{name, since, fn}, ints},
#define JET_ONNX_ACTIVATION_ROW(name, since, mode, ints, ir, notes) \
  {{name, since, import_activation<ActivationMode::mode>}, ints},
const OpRow kOps[] = {JET_ONNX_OPS(JET_ONNX_ROW, JET_ONNX_ACTIVATION_ROW)};
#undef JET_ONNX_ROW
#undef JET_ONNX_ACTIVATION_ROW

const OpRow* find_row(const std::string& op_type) {
  for (const OpRow& r : kOps) {
    if (op_type == r.entry.op_type) return &r;
  }
  return nullptr;
}

}  // namespace

bool op_takes_integer_tensors(const std::string& op_type) {
  const OpRow* r = find_row(op_type);
  return r && r->ints;
}

const OpEntry* find_op(const std::string& op_type) {
  const OpRow* r = find_row(op_type);
  return r ? &r->entry : nullptr;
}

}  // namespace onnx_import

std::vector<OnnxOpInfo> onnx_op_table() {
#define JET_ONNX_INFO(name, since, fn, ints, ir, notes) {name, since, ints, ir, notes},
  return {JET_ONNX_OPS(JET_ONNX_INFO, JET_ONNX_INFO)};
#undef JET_ONNX_INFO
}

}  // namespace jet
