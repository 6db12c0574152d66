// The model writer: graph IR -> .jet file bytes (schema/model.fbs).
//
//   jet::ir::Graph g = ...;                       // built, converted (passes.h), ready to run
//   jet::WriteOptions opt;
//   opt.producer_version = "0.1.0";
//   opt.labels = {...};                           // optional metadata
//   std::vector<uint8_t> bytes;
//   jet::ir::MemoryPlan plan;                     // optional: the plan that was written
//   jet::Status st = jet::write_model(g, opt, &bytes, &plan);
//   st = jet::write_model_file(g, opt, "model.jet");
//
// What it does: checks the graph (ir::check_graph, tensor dims/dtypes/strides, constants'
// data), computes the execution order (Graph::topological_order) and the memory plan
// (ir::plan_memory with opt.planner, which ir::validate_plan must accept), picks convolution
// algorithms, then writes
//   [FlatBuffer Model, identifier "JETM"][weights, each at a 64-byte aligned file offset]
//   [footer: u64 little-endian jet::model_checksum of every preceding byte, "JETSUM01"]
// Tensors keep their IR indices (so Preprocess::input, shares_with and op inputs are IR tensor
// indices); ops are written in execution order; inputs/outputs list the INPUT/OUTPUT tensors in
// index order. Constant data (float32 in ir::Tensor::data) is stored in the tensor's dtype (F16
// through jet::half: round to nearest even), little-endian, packed. Strides are written only for
// non-packed tensors.
//
// Convolutions: without a tune handle each conv is written with algo Auto, fallback =
// conv_preference and workspace_limit (the runtime chooses on its own device) and the plan's
// workspace_bytes is 0. With tune_handle, choose_conv_forward_algo runs on that handle for every
// conv, the result is stored, and workspace_bytes is the largest workspace among them.
//
// Errors: BAD_PARAM naming the node, tensor or option for an invalid graph, plan or metadata;
// the chooser's status for a conv it cannot serve; INTERNAL_ERROR if the file layout does not
// settle (a bug). *file is left empty on error. Nothing aborts.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir.h"
#include "jet/dnn/conv.h"
#include "jet/runtime.h"
#include "plan_memory.h"

namespace jet {

struct WriteOptions {
  std::string producer_version;  // Producer.version ("jet-convert" is Producer.name)
  std::string source_name;       // the source model's file name
  std::string source_hash;       // "fnv64w:<16 hex digits>" of the source file, or empty
  ir::Planner planner = ir::Planner::GREEDY_BEST_FIT;
  ConvPreference conv_preference = ConvPreference::PREFER_FASTEST;
  size_t workspace_limit = 0;         // for SPECIFY_WORKSPACE_LIMIT
  const Handle* tune_handle = nullptr;  // choose conv algorithms offline on this handle

  // Metadata.
  std::vector<std::string> labels;                               // class names
  std::vector<std::pair<std::string, std::string>> properties;   // unique keys
  // Image preprocessing per input (jet::ImagePreprocessing; `input` is the IR tensor index of a
  // graph input; height/width 0 = not recorded).
  using Preprocess = ImagePreprocessing;
  std::vector<Preprocess> preprocessing;
};

Status write_model(const ir::Graph& g, const WriteOptions& opts, std::vector<uint8_t>* file,
                   ir::MemoryPlan* plan_out = nullptr);

// write_model, then the bytes to `path` through jet::write_file_atomically (jet/file_io.h): a
// temporary file renamed into place, so a failed write leaves an existing file as it was;
// symlinks are followed, devices and FIFOs written through. BAD_PARAM naming the path and the
// system's reason when it cannot be written.
Status write_model_file(const ir::Graph& g, const WriteOptions& opts, const std::string& path);

}  // namespace jet
