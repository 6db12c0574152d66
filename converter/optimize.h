// Graph optimization passes, run by jet-convert between the import and the precision / layout
// passes (passes.h):
//
//   jet::OptimizeOptions opt;            // every pass on; turn one off to debug a model
//   jet::OptimizeReport report;
//   jet::Status st = jet::optimize_graph(&g, opt, &report);
//
// optimize_graph runs, in order and until nothing changes:
//   fold_constants        a node whose inputs are all constants is run once, on the CPU backend,
//                         and its output becomes a constant (the kernels are the oracle, so the
//                         folded values are the ones the runtime would compute);
//   fold_reshapes         RESHAPE of a RESHAPE reads the first one's input; a RESHAPE to its own
//                         input's dims disappears;
//   fold_batchnorm        BATCHNORM after a CONV (or after GEMM -> RESHAPE, as the importer
//                         lowers a 2D BatchNormalization) becomes the conv's / gemm's weights
//                         and bias;
//   fuse_epilogues        CONV -> ADD of a per-channel constant (bias), CONV -> ADD of a tensor
//                         of the conv's dims (the residual z), CONV -> ACTIVATION: one CONV with
//                         act(conv(x, w) + z + bias), the order conv_bias_act_forward computes;
//                         Mul(x, Sigmoid(x)) -> ACTIVATION swish (SiLU);
//   fuse_layernorm        layer normalization written out as ONNX exporters do, ReduceMean ->
//                         Sub -> Pow(2) (or Mul of itself) -> ReduceMean -> Add(eps) -> Sqrt ->
//                         Div [-> Mul(scale) [-> Add(bias)]] over a suffix of x's dims with
//                         constant eps, scale and bias: one LAYERNORM;
//   eliminate_dead_nodes  nodes whose outputs nobody reads (and that are not graph outputs), and
//                         constants and activations nothing refers to any more.
// The importer already removes Identity and Dropout and evaluates shape subgraphs (Shape, Gather,
// Concat of shapes, ...) on its own constant table; that folding is part of importing (a Reshape
// cannot be imported without its shape), so it is not switchable.
//
// A fusion only applies when the intermediate tensor has exactly one reader and is not a graph
// output, so no value the user can observe changes; the numbers change only by rounding (folded
// batchnorm weights are computed in double, then stored as float). Passes keep graph inputs and
// outputs (names, dims, dtypes) and leave a valid graph (ir::check_graph). Run them on an f32,
// packed graph, before convert_precision and set_channels_last. On error the graph may be partly
// changed: discard it.
#pragma once

#include <string>
#include <vector>

#include "ir.h"

namespace jet {

struct OptimizeOptions {
  bool fold_constants = true;
  bool fold_reshapes = true;
  bool fold_batchnorm = true;
  bool fuse_epilogues = true;
  bool fuse_layernorm = true;
  bool eliminate_dead_nodes = true;

  // Turns off the pass named `name` (the names above; "fuse" turns off fold_batchnorm,
  // fuse_epilogues and fuse_layernorm, as jet-convert --no-fuse). false for an unknown name.
  bool disable(const std::string& name);
};

struct OptimizeReport {
  int nodes_in = 0, nodes_out = 0;
  int constants_folded = 0;   // nodes replaced by their constant output
  int reshapes_folded = 0;    // reshapes removed or shortened
  int batchnorms_folded = 0;  // batchnorms merged into conv / gemm weights
  int biases_fused = 0;       // constant adds merged into a conv's bias
  int residuals_fused = 0;    // adds merged into a conv as its residual input
  int activations_fused = 0;  // activations merged into a conv's epilogue
  int swish_fused = 0;        // Mul(x, Sigmoid(x)) pairs that became one swish activation
  int layernorms_fused = 0;   // decomposed layer normalizations that became one LAYERNORM
  int dead_removed = 0;       // nodes removed because nothing read them
  // One line per pass that changed something ("fold_batchnorm: 20 batchnorms into conv weights").
  std::vector<std::string> notes;
};

// Every enabled pass; report may be null.
Status optimize_graph(ir::Graph* g, const OptimizeOptions& options, OptimizeReport* report);

// The passes one by one (each adds to *report's counters; report may be null). Each drops the
// nodes it replaced and every tensor no node refers to any more (graph inputs and outputs stay).
Status fold_constants(ir::Graph* g, OptimizeReport* report);
Status fold_reshapes(ir::Graph* g, OptimizeReport* report);
Status fold_batchnorm(ir::Graph* g, OptimizeReport* report);
Status fuse_epilogues(ir::Graph* g, OptimizeReport* report);
Status fuse_layernorm(ir::Graph* g, OptimizeReport* report);
Status eliminate_dead_nodes(ir::Graph* g, OptimizeReport* report);

}  // namespace jet
