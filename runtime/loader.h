// The loader's steps, in the order Engine::load runs them. Each returns a Status whose message
// names the problem (the tensor, op, buffer or field); nothing here trusts the file.
//
//   check_container    size, identifier, footer, checksum, FlatBuffers verifier, version, size
//   check_graph        buffers (disjoint, behind the FlatBuffer), tensors, inputs/outputs, op
//                      order, liveness, arena regions
//   prepare_ops        (ops.cpp) per-op parameters, shape inference, algorithms
//   check_arena_overlaps  no two live tensors share bytes unless they are an in-place pair
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "engine_impl.h"
#include "jet/schema/model_generated.h"

namespace jet {
namespace rt {

// Element i of a verified [long] vector. The FlatBuffers verifier checks a vector's 4-byte size
// prefix alignment but not that 8-byte elements are 8-aligned, so a damaged file can place one
// misaligned: read through memcpy (FlatBuffers data is little-endian, as are our targets).
inline int64_t read_i64(const flatbuffers::Vector<int64_t>* v, flatbuffers::uoffset_t i) {
  int64_t x;
  std::memcpy(&x, v->Data() + static_cast<size_t>(i) * sizeof(int64_t), sizeof x);
  return x;
}

// The container checks. On success *model points into `data`. `payload_checksum`: the checksum
// of every byte before the footer when the caller already has it (FileBytes::read_file computes
// it while reading), else nullptr.
Status check_container(const uint8_t* data, size_t size, bool verify_checksum,
                       const fb::Model** model, const uint64_t* payload_checksum = nullptr);

// Structure of the graph: fills impl->tensor_infos, tensors, inputs, outputs, the skeleton of
// impl->ops / op_infos (kind, inputs, output, name, type) and the plan sizes. `file_data` is the
// whole file (the weight buffers must not overlap each other or the FlatBuffer).
Status check_graph(const fb::Model& model, const uint8_t* file_data, size_t file_size, Engine::Impl* impl);

// After prepare_ops: the arena overlap rule (see converter/plan_memory.h validate_plan, which
// this reimplements so that the runtime does not depend on the converter).
Status check_arena_overlaps(const Engine::Impl& impl);

// "tensor 3 'conv1.w'" / "op 2 'conv1' (Conv)": how messages name things.
std::string tensor_label(const Engine::Impl& impl, int t);
std::string op_label(const Engine::Impl& impl, int op);

}  // namespace rt
}  // namespace jet
