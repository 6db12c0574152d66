// jet::Engine and jet::ExecutionContext: load a .jet model file, verify it, allocate once, run.
//
//   std::shared_ptr<jet::Engine> engine;
//   jet::Status st = jet::Engine::load("resnet18.jet", jet::LoadOptions{}, &engine);
//   std::unique_ptr<jet::ExecutionContext> ctx;
//   st = engine->create_context(&ctx);                 // the one arena + workspace allocation
//   st = ctx->copy_input(engine->input(0), image, bytes, jet::DType::F32, stream);  // or bind_tensor
//   st = ctx->run(stream);                             // zero allocations, no host sync (CUDA)
//
// Thread safety: an Engine is immutable after load and may be shared by any number of threads.
// An ExecutionContext belongs to one thread (or stream) at a time; use one context per thread.
//
// Memory: Engine::load makes the engine's allocations (on CUDA: one device allocation holding
// every weight, uploaded once; on CPU the weights are used in place from the mmapped file when
// their alignment allows). create_context makes one more (arena + workspace), or none when the
// caller passes memory of context_memory_size() bytes. run() and capture() replay never allocate.
//
// Inputs and outputs keep their arena regions for the whole pass (the loader refuses a plan that
// reuses them): a run never overwrites an input, so repeated runs and graph replays read the same
// input without the caller writing it again; outputs stay valid until the next run().
// Loading checks everything a file says (docs/format.md "What the loader checks"), so that no
// file, however damaged or hostile, can make load() or run() touch memory out of bounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "jet/dnn/common.h"

namespace jet {

// The schema version this runtime reads (schema/model.fbs). Files with a newer major version are
// refused; newer minor versions load (their additions are ignored).
constexpr uint32_t kSchemaMajor = 1;
constexpr uint32_t kSchemaMinor = 6;

struct LoadOptions {
  Backend backend = Backend::CUDA;  // CPU runs everything on the calling thread
  int device = 0;                   // CUDA device ordinal
  bool verify_checksum = true;      // hash the whole file at load (catches flipped weight bytes)
  // Engine::load(path): read the file into memory the engine owns instead of mapping it. A
  // mapped file (the default: no copy, CPU kernels read the weights in place) must not be
  // changed in place while the engine lives: `cp new.jet live.jet` or a truncation rewrites the
  // pages under it (wrong results, or SIGBUS past the new end). Replacing the file by rename
  // (`cp new.jet live.jet.tmp && mv live.jet.tmp live.jet`, or any jet tool's output) is always
  // safe. Long-running processes that cannot control how the file is deployed set this; it
  // costs one copy of the file in host memory on CPU (on CUDA the copy is freed after upload).
  bool copy_file = false;
  // Tuning (like cudnn.benchmark / TensorRT tactics): for every convolution, time each algorithm
  // and tactic on scratch buffers of the op's real shapes (find_conv_forward_algo, random data;
  // the scratch memory is allocated and freed inside load) and run the fastest whose workspace
  // fits min(the op's stored workspace policy, tune_workspace_limit). Stored choices are then
  // ignored. The context's workspace is sized for the chosen algorithms; runs stay
  // allocation-free. ModelSummary::tuning_ms says what it cost; OpInfo the per-op times.
  bool tune = false;
  size_t tune_workspace_limit = SIZE_MAX;  // bytes
  // The convolutions' math (ConvMath in jet/dnn/conv.h). false (EXACT) keeps f32 within 1e-5
  // of float64; true (ALLOW_APPROXIMATE) lets the heuristic and tuning take WINOGRAD's F(4x4, 3x3)
  // in f32 (~2e-5 of the output's magnitude), as cuDNN's default math does for PyTorch: faster
  // 3x3 layers at large batches, and for the training add-on their data gradients too.
  bool approximate_convolutions = false;
};

// The device a model's stored convolution choices were measured on (schema Model.tuned_on), or
// the device an engine runs on (Engine::device_identity).
struct DeviceIdentity {
  std::string name;  // CUDA's device name; "cpu" for the CPU backend
  int cc_major = 0, cc_minor = 0;
};

enum class TensorRole { INPUT, OUTPUT, CONSTANT, ACTIVATION };

// A tensor of the model as the engine sees it.
struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;  // elements; packed row-major when the file says so
  TensorRole role = TensorRole::ACTIVATION;
  size_t bytes = 0;               // the span its elements cover (dtype_size * extent)
  int64_t arena_offset = -1;      // activations, inputs, outputs; -1 for constants
  size_t arena_size = 0;
};

// One op as the engine prepared it (what jet-inspect and the profiler print).
struct OpInfo {
  std::string name;
  std::string type;           // "Conv", "Pool", ...
  std::vector<int> inputs;    // tensor indices
  std::vector<int> outputs;
  std::string algo;           // conv: the algorithm this backend runs; empty otherwise
  int32_t tactic = 0;         // conv: its tactic (ConvDesc::with_tactic; 0 = the heuristic's)
  size_t workspace_bytes = 0; // what that algorithm needs
  // conv, when tuned at load (LoadOptions::tune): the time of the chosen algorithm and tactic,
  // and of the untuned choice (the heuristic's, or the converter's stored algorithm), each
  // measured as this op's share of runs of the whole network (median); -1 otherwise.
  float tuned_ms = -1.f, heuristic_ms = -1.f;
  double flops = 0;           // multiply-adds x 2 (conv, gemm); 0 when not meaningful
};

// How an image becomes a model input (jet-convert --preprocess; schema Preprocessing):
// resized to height x width as `resize` says, then x = (pixel / 255 - mean[c]) / std[c] per
// channel, in the channel order and layout given. What jet-run applies to an image file.
struct ImagePreprocessing {
  enum class Resize { STRETCH, CENTER_CROP, LETTERBOX };
  int input = -1;               // tensor index of the graph input it feeds
  int height = 0, width = 0;    // the input's image size
  Resize resize = Resize::STRETCH;
  float crop_fraction = 1.0f;   // CENTER_CROP, in (0, 1]
  float pad_value = 0.0f;       // LETTERBOX: the fill, a pixel value in [0, 255]
  std::vector<float> mean, std; // one per channel
  bool bgr = false;             // the channel order the model expects
  bool nhwc = false;            // the input's dims are [N, H, W, C] (else [N, C, H, W])
};

struct ModelSummary {
  uint32_t schema_major = 0, schema_minor = 0;
  std::string producer, producer_version, source_name, source_hash;
  size_t file_bytes = 0;
  size_t arena_bytes = 0;        // as planned in the file
  size_t lower_bound_bytes = 0;  // the planner's lower bound
  std::string planner;           // "GreedyBestFit" / "Naive"
  size_t workspace_bytes = 0;    // the largest workspace of any op on this engine's backend
                                 // (the context holds max(this, the plan's workspace_bytes))
  size_t weight_bytes = 0;       // sum of the constant buffers
  int64_t parameter_count = 0;   // sum of the constants' element counts
  // Optional metadata.
  std::vector<std::string> labels;
  std::vector<std::pair<std::string, std::string>> properties;
  std::vector<ImagePreprocessing> preprocessing;  // checked by the loader (docs/format.md)

  // Convolution choices (tuning).
  bool tuned_at_load = false;   // LoadOptions::tune measured them during this load
  double tuning_ms = 0;         // the wall time that measuring took (0 when not tuned)
  bool has_tuned_on = false;    // the file stores measured choices (schema 1.2 Model.tuned_on)...
  DeviceIdentity tuned_on;      // ...made on this device
  bool stored_choices_used = false;  // tuned_on matched this device and its choices were used
  // Tuning's final check (LoadOptions::tune): one run of the whole network with the tuned choices
  // and with the untuned ones (CUDA: a replayed CUDA graph; median, ms). Tuning keeps its choices
  // only when they measured faster; -1 when not tuned or when no convolution changed.
  double tuned_network_ms = -1, untuned_network_ms = -1;
  int tuned_convs_changed = 0;  // convolutions that run another algorithm or tactic than untuned
  // Things the loader wants the user to know, each said once per load (e.g. "tuned on another
  // device: using the heuristic"). Tools print them; nothing is written to stderr by the runtime.
  std::vector<std::string> notes;

  // Memory the engine allocated for the weights (CUDA: the device allocation, each buffer in a
  // 256-byte slot; CPU: 0, the weights are read from the mapped file). With
  // Engine::context_memory_size() (arena + workspace) per context: the runtime's accounting.
  size_t weight_allocation_bytes = 0;

  // Where Engine::load's time went, phase by phase in order (e.g. "read file", "checksum",
  // "prepare", "tune", "weights: host staging", "weights: upload"), wall-clock ms.
  struct LoadPhase {
    std::string name;
    double ms = 0;
  };
  std::vector<LoadPhase> load_phases;
};

// Per-layer timing from a profiled run (ExecutionContext::set_profiling).
struct LayerTime {
  int op = -1;
  std::string name, type;
  double ms = 0;  // GPU time between events on CUDA; steady-clock time on CPU
};

class ExecutionContext;

class Engine : public std::enable_shared_from_this<Engine> {
 public:
  // Maps the file read-only and verifies it. Errors name the problem and, for a bad file, the
  // path: a Status, never a crash, for any byte content (the loader is fuzzed). A CPU engine
  // reads its weights from the mapping for its whole life: do not truncate or rewrite the file
  // meanwhile (replace it by renaming a new file over it instead). A CUDA engine uploads the
  // weights and unmaps the file before load() returns.
  static Status load(const std::string& path, const LoadOptions& options,
                     std::shared_ptr<Engine>* out);
  // Same from memory; the bytes are copied, so `data` may be freed afterwards.
  static Status load(const void* data, size_t size, const LoadOptions& options,
                     std::shared_ptr<Engine>* out);

  virtual ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  Backend backend() const;
  int device() const;  // the CUDA device; -1 on the CPU backend
  // What a tuned model records (and must match to have its choices used): CUDA's name and compute
  // capability of device(), or "cpu" 0.0. (Queried from CUDA unless the load already did.)
  DeviceIdentity device_identity() const;

  // Graph inputs and outputs in binding order (values are tensor indices).
  int num_inputs() const;
  int num_outputs() const;
  int input(int i) const;   // tensor index of input i; -1 when out of range
  int output(int i) const;
  int find_tensor(const std::string& name) const;  // -1 when absent
  int num_tensors() const;
  const TensorInfo& tensor(int index) const;  // index must be in [0, num_tensors())
  int num_ops() const;
  const OpInfo& op(int index) const;
  const ModelSummary& summary() const;

  // Bytes create_context(memory) needs: arena + workspace, each 256-byte aligned.
  size_t context_memory_size() const;
  // A context owning its memory (one allocation: device memory on CUDA, host on CPU).
  Status create_context(std::unique_ptr<ExecutionContext>* out) const;
  // A context in caller-provided memory of at least context_memory_size() bytes, 256-byte
  // aligned (device memory on CUDA). Contexts of several engines may share one block when they
  // run one after another on one stream.
  Status create_context(void* memory, size_t bytes, std::unique_ptr<ExecutionContext>* out) const;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class ExecutionContext {
 public:
  ~ExecutionContext();
  ExecutionContext(const ExecutionContext&) = delete;
  ExecutionContext& operator=(const ExecutionContext&) = delete;

  const Engine& engine() const;

  // Where tensor `index` (an input, output or activation) lives for the next run: its arena
  // region unless bound elsewhere. Device memory on CUDA. nullptr for constants / bad indices.
  void* tensor_data(int index) const;

  // Zero-copy binding: the next runs read input `index` from (or write output `index` to) `data`
  // instead of the arena. `data` must stay valid while runs use it, be 256-byte aligned and hold
  // the tensor's bytes in its layout (device or mapped pinned memory on CUDA; host memory on CPU).
  // nullptr restores the arena region. Only graph inputs and outputs can be bound. Changing a
  // binding discards a captured CUDA graph (capture again to replay).
  Status bind_tensor(int index, void* data);
  Status bind_tensor(const std::string& name, void* data);
  // Typed binding: the same, after checking that `dtype`, what the caller's buffer holds, is the
  // tensor's dtype (BAD_PARAM naming both otherwise: float32 data bound to a float16 input would
  // be read as garbage). Prefer these to the untyped forms, which cannot check.
  Status bind_tensor(int index, void* data, DType dtype);
  Status bind_tensor(const std::string& name, void* data, DType dtype);

  // Typed copies between host memory and a graph input or output (its region for the next run,
  // or the buffer bound to it): `bytes` must be the tensor's bytes (TensorInfo::bytes, in its
  // layout) and `dtype` its dtype, else BAD_PARAM naming both. CUDA: cudaMemcpyAsync on `stream`
  // (ordered with run() on that stream; synchronize it before reading copied-out host memory).
  // CPU: memcpy (the stream is ignored). They allocate nothing.
  Status copy_input(int index, const void* host, size_t bytes, DType dtype, cudaStream_t stream = nullptr);
  Status copy_output(int index, void* host, size_t bytes, DType dtype, cudaStream_t stream = nullptr) const;

  // Runs the forward pass on `stream` (ignored on CPU). Asynchronous on CUDA: no host
  // synchronization, no blocking call, no allocation. Replays the captured graph when there is one.
  Status run(cudaStream_t stream = nullptr);

  // CUDA: runs the pass once uncaptured (warm-up), then records it into a CUDA graph on `stream`
  // (cudaStreamCaptureModeThreadLocal) and instantiates it; later run() calls replay it, on
  // whatever stream they are given. When capture is not possible (e.g. on the legacy default
  // stream, nullptr) the context stays in plain mode and the Status says why. CPU: NOT_SUPPORTED.
  Status capture(cudaStream_t stream);
  bool has_graph() const;

  // Debugging (jet-compare --layers): runs the pass op by op on `stream` and calls observer(i)
  // right after op i, when its output (engine().op(i).outputs, at tensor_data()) holds the op's
  // result and no later op has reused that arena region yet: the observer copies what it wants to
  // see. On CUDA the stream is synchronized before every call. A non-OK Status from the observer
  // stops the pass and is returned. Slow (a host synchronization per op on CUDA) and never
  // replays a captured graph; run() is the production path.
  using OpObserver = std::function<Status(int op)>;
  Status run_observed(cudaStream_t stream, const OpObserver& observer);
  // The captured graph's nodes by type: kernels launched per inference, and copies / memsets.
  // NOT_SUPPORTED on the CPU backend and before a capture (then every op is one routine call:
  // Engine::num_ops()).
  struct GraphNodeCounts {
    int kernels = 0, memcpys = 0, memsets = 0, others = 0;
  };
  Status graph_node_counts(GraphNodeCounts* out) const;

  // Per-layer timing: off by default and then free. When on, run() records a time per op (CUDA
  // events allocated here, not in run()); layer_times() reads them (it synchronizes the stream).
  // Profiled runs are plain runs: with profiling on, run() executes op by op (timing each) even
  // when a graph was captured; the graph is kept and replayed again once profiling is off.
  // layer_times() fails while profiling is off or before a profiled run has completed.
  Status set_profiling(bool on);
  Status layer_times(std::vector<LayerTime>* out) const;

  struct Impl;

 private:
  friend class Engine;
  explicit ExecutionContext(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The checksum of .jet files (and of source models in Producer.source_hash): 64-bit, FNV-1a
// style over little-endian 64-bit words (the tail zero-padded), then the length mixed in. Any
// single changed word changes it.
uint64_t model_checksum(const void* data, size_t size);

// What jet-tune writes: the model `data` (the .jet bytes `engine` was loaded from) with every
// convolution's algo and tactic set to what `engine` runs (tuned with LoadOptions::tune),
// Model.tuned_on set to engine.device_identity(), the plan's workspace to the engine's, schema
// 1.2 at least; the weights re-laid behind the new FlatBuffer (64-byte aligned, same bytes) and a
// fresh checksum footer. BAD_PARAM when the bytes are not a valid model, not the engine's model
// (op count or kinds differ), or of a newer schema minor (re-writing would drop its new fields).
Status write_tuned_model(const Engine& engine, const void* data, size_t size, std::vector<uint8_t>* out);

}  // namespace jet
