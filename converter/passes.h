// Graph passes run before planning and writing: precision conversion and channels-last layout.
//
//   jet::ir::Graph g = ...;                              // e.g. jet::resnet50(opt, &g)
//   jet::Status st = jet::convert_precision(&g, jet::DType::F16);
//   if (st.ok()) st = jet::set_channels_last(&g);
//   // then jet::write_model(g, options, &bytes)          (write_model.h)
//
// Both passes keep the graph valid (Graph::topological_order succeeds and every op's tensors are
// consistent), keep the graph's interface (inputs and outputs keep their dtype, dims and packed
// layout: TRANSFORM nodes are inserted at the boundary, as TensorRT does), and are idempotent: a
// second application changes nothing. They can run in either order; a TRANSFORM inserted by one
// is reused by the other (one node then changes dtype and layout together). On error (BAD_PARAM
// naming the node or tensor) the graph may be partly changed: discard it.
//
// Inserted tensors and nodes are appended; their names derive from the tensor they convert
// ("image.f16", "image.nhwc", "x.packed"), made unique with a numeric suffix where needed.
#pragma once

#include "ir.h"

namespace jet {

// Activations and constants become `to` (F32 or F16). Constant values stay float32 in
// ir::Tensor::data (the writer converts). Exceptions: BatchNorm's scale/bias/mean/var and
// InstanceNorm's scale/bias stay F32, as their kernels read them as floats for every x dtype (a
// constant shared with another use is duplicated). Graph inputs and outputs keep their dtype: a TRANSFORM converts each
// input whose dtype differs from `to` (one per input, shared by its readers) and produces each
// such output from a `to` copy. TRANSFORM nodes already in the graph get `to` set to their output
// tensor's dtype (a transform between two converted activations becomes a copy).
// NOT_SUPPORTED when a BatchNorm or InstanceNorm parameter is not a constant.
// convert_io: the graph inputs and outputs become `to` as well (jet-convert --io-precision fp16,
// for callers that feed and read half), and no boundary TRANSFORM is inserted for them.
Status convert_precision(ir::Graph* g, DType to, bool convert_io = false);

// Channels-last strides (ir::Tensor::strides; dims stay N, C, spatial) for every rank-4/5
// activation written by an op that accepts any strides (the layout column of schema/op_list.h);
// weights, biases and norm parameters stay packed. SLICE reads any strides (its view
// is built on x's) and writes channels-last unless only packed readers read it. Tensors for which channels-last is the packed layout (C == 1 or all
// spatial dims 1) keep empty strides. Packed stays required for graph inputs and outputs, for
// RESHAPE (a view of the same bytes), GEMM and softmax over another axis: TRANSFORM nodes change
// the layout at each such boundary (input -> "<name>.nhwc", "<name>.packed" before a packed
// reader, a channels-last "<name>.nhwc" producing each rank-4/5 output). A TRANSFORM already in
// the graph writes channels-last unless only packed readers read it. In-place pairs (activation,
// op_tensor, batchnorm, softmax) always end up with one layout on both sides.
Status set_channels_last(ir::Graph* g);

}  // namespace jet
