// Engine::Impl: everything load() verified and prepared, immutable afterwards. Internal to the
// runtime (runtime/*.cpp); the public view is jet/runtime.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <string>
#include <unordered_map>
#include <vector>

#include "file_bytes.h"
#include "jet/dnn.h"
#include "jet/runtime.h"

namespace jet {
namespace rt {

struct OpEntry;  // ops.h: an op type's row of the runtime's table

// A tensor as validated: its descriptor, byte span and where it lives.
struct TensorRecord {
  TensorDesc desc;        // validated (rank, dims, strides, span)
  size_t bytes = 0;       // desc.span_bytes()
  bool constant = false;
  int buffer = -1;        // constants: index into the file's buffers
  bool in_arena = false;  // non-constants that some step touches
  size_t arena_offset = 0;
  size_t arena_size = 0;
  int first_step = -1;    // liveness on the op order (like the converter's planner)
  int last_step = -1;
  int producer = -1;      // the op that writes it; -1 for inputs and constants
  bool filter_krsc = false;  // CUDA: a KCRS conv filter the upload stores KRSC (place_weights)
};

// An op's own prepared parameters: the struct its prepare function fills (runtime/ops.cpp defines
// it next to the op's functions; ConvPrepared is in ops.h, tuning reads it), kept in place in the
// PreparedOp: no allocation at load or run time, and PreparedOp does not change when an op is
// added. The structs are trivially copyable (copied with the PreparedOp as bytes).
class OpData {
 public:
  static constexpr size_t kBytes = 640;

  // Starts the op's struct (value-initialized) and returns it.
  template <typename T>
  T& emplace() {
    static_assert(std::is_trivially_copyable<T>::value && std::is_trivially_destructible<T>::value,
                  "an op's prepared data is copied as bytes");
    static_assert(sizeof(T) <= kBytes && alignof(T) <= alignof(std::max_align_t),
                  "an op's prepared data must fit OpData::kBytes");
    return *new (bytes_) T();
  }
  // The struct emplace<T> started (the op type's own: only its prepare and execute read it).
  template <typename T>
  T& as() {
    return *std::launder(reinterpret_cast<T*>(bytes_));
  }
  template <typename T>
  const T& as() const {
    return *std::launder(reinterpret_cast<const T*>(bytes_));
  }

 private:
  alignas(std::max_align_t) unsigned char bytes_[kBytes] = {};
};

// One op ready to execute: the descriptors built once, the algorithm resolved for the backend.
struct PreparedOp {
  const OpEntry* type = nullptr;    // the op type's row (ops.h), set by the loader
  std::vector<int> inputs;          // tensor indices
  int output = -1;                  // tensor index
  std::vector<TensorDesc> in_descs; // the inputs' descriptors (the kernel's views)
  TensorDesc out_desc;
  size_t workspace_bytes = 0;
  // A stored (tuned) choice the backend refused, and why: the loader says so once (notes).
  std::string refused_choice;

  OpData data;  // the op type's prepared parameters
};

// How prepare_conv treats the stored algo/tactic (Model.tuned_on against this device).
enum class StoredChoices {
  UNTUNED,   // no tuned_on: the stored algo when this backend runs it (converter's choice), tactic 0
  MATCH,     // tuned here: the stored algo and tactic, the heuristic when the backend refuses them
  MISMATCH,  // tuned on another device: the heuristic's choice for every convolution
};

}  // namespace rt

struct Engine::Impl {
  LoadOptions options;
  Handle handle;  // the engine's backend (CUDA: device, no stream); contexts copy it
  DeviceIdentity identity;  // what Model.tuned_on must match (empty unless the load needed it)
  rt::StoredChoices stored_choices = rt::StoredChoices::UNTUNED;

  rt::FileBytes file;  // kept on CPU (weights are used in place); released on CUDA after upload

  std::vector<TensorInfo> tensor_infos;
  std::vector<rt::TensorRecord> tensors;
  std::vector<OpInfo> op_infos;
  std::vector<rt::PreparedOp> ops;
  std::vector<int> inputs, outputs;
  std::unordered_map<std::string, int> tensor_by_name;  // first tensor of each name
  ModelSummary summary;

  // Constants: where each tensor's weights are for kernels (host file memory on CPU, the device
  // allocation on CUDA); nullptr for the other tensors.
  std::vector<const void*> weight_ptrs;
  void* device_weights = nullptr;  // CUDA: the one allocation holding every weight buffer
  size_t device_weight_bytes = 0;

  size_t arena_bytes = 0;      // the plan's arena, rounded up to the arena alignment
  size_t workspace_bytes = 0;  // max(plan, every op's workspace on this backend), aligned
  size_t context_bytes = 0;    // arena + workspace
  std::string context_what;    // names the context allocation and its parts (error messages)
  std::string source;          // "model 'path'" or "model in memory", for messages after load

  ~Impl();
};

}  // namespace jet
