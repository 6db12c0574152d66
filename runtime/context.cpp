// ExecutionContext: one block of memory (arena + workspace), the per-op pointers resolved ahead
// of time, run() as a plain loop of kernel calls, bindings, CUDA graph capture and profiling.
//
// run() allocates nothing and blocks on nothing: every pointer it passes is precomputed
// (refresh_pointers, called at creation and on every binding change), the Handle is a copy whose
// stream is set per call, and profiling costs one branch per op while off.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_util.h"
#include "device_memory.h"
#include "format.h"
#include "loader.h"
#include "ops.h"

namespace jet {

struct ExecutionContext::Impl {
  std::shared_ptr<const Engine> engine_ref;  // keeps the engine (weights) alive
  const Engine::Impl* e = nullptr;
  Handle handle;

  void* memory = nullptr;  // arena, then workspace
  bool owns_memory = false;
  uint8_t* arena = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;

  std::vector<void*> bound;             // per tensor: the caller's buffer, or nullptr (arena)
  std::vector<void*> tensor_ptrs;       // per tensor: where it lives for the next run
  std::vector<const void*> op_in_ptrs;  // every op's input pointers, op after op
  std::vector<size_t> op_in_begin;      // op i's inputs start at op_in_ptrs[op_in_begin[i]]
  std::vector<void*> op_out_ptrs;

  // Profiling: off by default. CPU: milliseconds per op. CUDA: an event at every op boundary.
  bool profiling = false;
  bool profile_ready = false;  // a profiled run has completed (its times can be read)
  std::vector<double> cpu_ms;
#if defined(JET_HAVE_CUDA)
  std::vector<cudaEvent_t> events;  // num_ops + 1
  cudaGraphExec_t graph = nullptr;
  ExecutionContext::GraphNodeCounts graph_nodes;  // of the captured graph
#endif

  ~Impl();
  void refresh_pointers();
  Status run_ops(cudaStream_t stream, bool profile);
  void discard_graph();
  void destroy_events();
  bool is_cuda() const { return handle.backend() == Backend::CUDA; }
};

ExecutionContext::Impl::~Impl() {
#if defined(JET_HAVE_CUDA)
  if (is_cuda()) {
    rt::DeviceGuard guard(handle.device());
    discard_graph();
    destroy_events();
    if (owns_memory) rt::device_free(memory);
    return;
  }
#endif
  if (owns_memory) rt::host_free(memory);
}

void ExecutionContext::Impl::refresh_pointers() {
  const size_t nt = e->tensors.size();
  for (size_t t = 0; t < nt; ++t) {
    const rt::TensorRecord& r = e->tensors[t];
    if (r.constant) {
      tensor_ptrs[t] = const_cast<void*>(e->weight_ptrs[t]);  // never an op's output
    } else if (bound[t]) {
      tensor_ptrs[t] = bound[t];
    } else if (r.in_arena) {
      tensor_ptrs[t] = arena + r.arena_offset;
    } else {
      tensor_ptrs[t] = nullptr;
    }
  }
  for (size_t i = 0; i < e->ops.size(); ++i) {
    const rt::PreparedOp& op = e->ops[i];
    for (size_t k = 0; k < op.inputs.size(); ++k) op_in_ptrs[op_in_begin[i] + k] = tensor_ptrs[op.inputs[k]];
    op_out_ptrs[i] = tensor_ptrs[op.output];
  }
}

void ExecutionContext::Impl::discard_graph() {
#if defined(JET_HAVE_CUDA)
  if (graph) {
    cudaGraphExecDestroy(graph);
    graph = nullptr;
  }
#endif
}

void ExecutionContext::Impl::destroy_events() {
#if defined(JET_HAVE_CUDA)
  for (cudaEvent_t ev : events) {
    if (ev) cudaEventDestroy(ev);
  }
  events.clear();
#endif
}

// The forward pass. Error paths build messages (allocating); the success path does not. The
// plain loop has no profiling branch at all; profiled runs take the second loop.
Status ExecutionContext::Impl::run_ops(cudaStream_t stream, bool profile) {
  handle.set_stream(stream);
  const size_t n = e->ops.size();
  profile_ready = false;
  if (!profile) {
    for (size_t i = 0; i < n; ++i) {
      const Status st = rt::execute_op(handle, e->ops[i], op_in_ptrs.data() + op_in_begin[i],
                                       op_out_ptrs[i], workspace, workspace_bytes);
      if (!st.ok()) return Status(st.code(), rt::op_label(*e, static_cast<int>(i)) + ": " + st.message());
    }
    return Status();
  }
#if defined(JET_HAVE_CUDA)
  if (is_cuda()) {
    cudaError_t err = cudaEventRecord(events[0], stream);
    if (err != cudaSuccess) return rt::cuda_error("profiling: cudaEventRecord", err);
    for (size_t i = 0; i < n; ++i) {
      const Status st = rt::execute_op(handle, e->ops[i], op_in_ptrs.data() + op_in_begin[i],
                                       op_out_ptrs[i], workspace, workspace_bytes);
      if (!st.ok()) return Status(st.code(), rt::op_label(*e, static_cast<int>(i)) + ": " + st.message());
      err = cudaEventRecord(events[i + 1], stream);
      if (err != cudaSuccess) return rt::cuda_error("profiling: cudaEventRecord", err);
    }
    profile_ready = true;
    return Status();
  }
#endif
  for (size_t i = 0; i < n; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const Status st = rt::execute_op(handle, e->ops[i], op_in_ptrs.data() + op_in_begin[i],
                                     op_out_ptrs[i], workspace, workspace_bytes);
    if (!st.ok()) return Status(st.code(), rt::op_label(*e, static_cast<int>(i)) + ": " + st.message());
    cpu_ms[i] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  profile_ready = true;
  return Status();
}

// ---- Engine: contexts ------------------------------------------------------------------------

Status Engine::create_context(std::unique_ptr<ExecutionContext>* out) const {
  if (!out) return Status(StatusCode::BAD_PARAM, "create_context: out is a null pointer");
  out->reset();
  void* memory = nullptr;
  if (impl_->handle.backend() == Backend::CUDA) {
#if defined(JET_HAVE_CUDA)
    rt::DeviceGuard guard(impl_->options.device);
#endif
    const Status alloc = rt::device_alloc(impl_->context_bytes, &memory, impl_->context_what.c_str());
    if (!alloc.ok()) return Status(alloc.code(), impl_->source + ": " + alloc.message());
  } else {
    const Status alloc = rt::host_alloc(impl_->context_bytes, &memory, impl_->context_what.c_str());
    if (!alloc.ok()) return Status(alloc.code(), impl_->source + ": " + alloc.message());
  }
  const Status st = create_context(memory, impl_->context_bytes, out);
  if (!st.ok()) {
    if (impl_->handle.backend() == Backend::CUDA) {
      rt::device_free(memory);
    } else {
      rt::host_free(memory);
    }
    return st;
  }
  (*out)->impl_->owns_memory = true;
  return Status();
}

Status Engine::create_context(void* memory, size_t bytes, std::unique_ptr<ExecutionContext>* out) const {
  if (!out) return Status(StatusCode::BAD_PARAM, "create_context: out is a null pointer");
  out->reset();
  if (!memory) return Status(StatusCode::BAD_PARAM, "create_context: memory is a null pointer");
  if (bytes < impl_->context_bytes) {
    return Status(StatusCode::BAD_PARAM, "create_context: " + std::to_string(bytes) +
                                             " bytes given, the context needs context_memory_size() = " +
                                             std::to_string(impl_->context_bytes));
  }
  if (reinterpret_cast<uintptr_t>(memory) % format::kArenaAlignment != 0) {
    return Status(StatusCode::BAD_PARAM, "create_context: memory is not " +
                                             std::to_string(format::kArenaAlignment) + "-byte aligned");
  }
#if defined(JET_HAVE_CUDA)
  if (impl_->handle.backend() == Backend::CUDA) {
    JET_RETURN_IF_ERROR(rt::check_device_pointer(memory, impl_->options.device, "create_context: memory"));
  }
#endif
  auto c = std::make_unique<ExecutionContext::Impl>();
  c->engine_ref = shared_from_this();
  c->e = impl_.get();
  c->handle = impl_->handle;
  c->memory = memory;
  c->arena = static_cast<uint8_t*>(memory);
  c->workspace_bytes = impl_->workspace_bytes;
  c->workspace = impl_->workspace_bytes > 0 ? c->arena + impl_->arena_bytes : nullptr;
  const size_t nt = impl_->tensors.size();
  c->bound.assign(nt, nullptr);
  c->tensor_ptrs.assign(nt, nullptr);
  size_t total_inputs = 0;
  for (const rt::PreparedOp& op : impl_->ops) {
    c->op_in_begin.push_back(total_inputs);
    total_inputs += op.inputs.size();
  }
  c->op_in_ptrs.assign(total_inputs, nullptr);
  c->op_out_ptrs.assign(impl_->ops.size(), nullptr);
  c->refresh_pointers();
  out->reset(new ExecutionContext(std::move(c)));
  return Status();
}

// ---- ExecutionContext ----------------------------------------------------------------------

ExecutionContext::ExecutionContext(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ExecutionContext::~ExecutionContext() = default;

const Engine& ExecutionContext::engine() const { return *impl_->engine_ref; }

void* ExecutionContext::tensor_data(int index) const {
  const Impl& c = *impl_;
  if (index < 0 || index >= static_cast<int>(c.tensor_ptrs.size()) || c.e->tensors[index].constant) {
    return nullptr;
  }
  return c.tensor_ptrs[index];
}

Status ExecutionContext::bind_tensor(int index, void* data) {
  Impl& c = *impl_;
  if (index < 0 || index >= static_cast<int>(c.tensor_ptrs.size())) {
    return Status(StatusCode::BAD_PARAM, "bind_tensor: tensor index " + std::to_string(index) +
                                             " out of range [0, " + std::to_string(c.tensor_ptrs.size()) + ")");
  }
  const TensorRole role = c.e->tensor_infos[index].role;
  if (role != TensorRole::INPUT && role != TensorRole::OUTPUT) {
    return Status(StatusCode::BAD_PARAM, "bind_tensor: " + rt::tensor_label(*c.e, index) +
                                             " is not a graph input or output; only those can be bound");
  }
  if (data && reinterpret_cast<uintptr_t>(data) % format::kArenaAlignment != 0) {
    return Status(StatusCode::BAD_PARAM, "bind_tensor: the buffer for " + rt::tensor_label(*c.e, index) +
                                             " is not " + std::to_string(format::kArenaAlignment) +
                                             "-byte aligned");
  }
#if defined(JET_HAVE_CUDA)
  if (data && c.is_cuda()) {
    JET_RETURN_IF_ERROR(rt::check_device_pointer(data, c.handle.device(),
                                        "bind_tensor: the buffer for " + rt::tensor_label(*c.e, index)));
  }
#endif
  if (c.bound[index] == data) return Status();  // no change: keep a captured graph
  c.bound[index] = data;
  c.discard_graph();  // the graph holds the old pointers
  c.refresh_pointers();
  return Status();
}

Status ExecutionContext::bind_tensor(const std::string& name, void* data) {
  const int index = impl_->e->tensor_by_name.count(name) ? impl_->e->tensor_by_name.at(name) : -1;
  if (index < 0) return Status(StatusCode::BAD_PARAM, "bind_tensor: the model has no tensor named '" + name + "'");
  return bind_tensor(index, data);
}

namespace {

enum class Access { BIND, COPY_IN, COPY_OUT };

// BAD_PARAM unless `index` names a graph input or output (an input for COPY_IN, an output for
// COPY_OUT) of dtype `dtype`, and, for copies, spanning `bytes` bytes. `what` names the call.
Status check_typed_access(const Engine::Impl& e, const char* what, Access access, int index, DType dtype,
                          size_t bytes) {
  const bool inputs_only = access == Access::COPY_IN, outputs_only = access == Access::COPY_OUT;
  if (index < 0 || index >= static_cast<int>(e.tensor_infos.size())) {
    return Status(StatusCode::BAD_PARAM, std::string(what) + ": tensor index " + std::to_string(index) +
                                             " out of range [0, " + std::to_string(e.tensor_infos.size()) + ")");
  }
  const TensorInfo& info = e.tensor_infos[index];
  const bool input = info.role == TensorRole::INPUT, output = info.role == TensorRole::OUTPUT;
  if ((inputs_only && !input) || (outputs_only && !output) || (!input && !output)) {
    return Status(StatusCode::BAD_PARAM, std::string(what) + ": " + rt::tensor_label(e, index) + " is not a graph " +
                                             (inputs_only ? "input" : outputs_only ? "output" : "input or output"));
  }
  if (!dtype_is_valid(static_cast<int64_t>(dtype))) {
    return Status(StatusCode::BAD_PARAM, std::string(what) + ": dtype value " +
                                             std::to_string(static_cast<int>(dtype)) + " is not a DType");
  }
  if (dtype != info.dtype) {
    return Status(StatusCode::BAD_PARAM, std::string(what) + ": " + rt::tensor_label(e, index) + " is " +
                                             dtype_name(info.dtype) + ", but the data is " + dtype_name(dtype) +
                                             "; convert the data to " + dtype_name(info.dtype) +
                                             " (or the model's inputs and outputs: jet-convert --io-precision)");
  }
  if (access != Access::BIND && bytes != info.bytes) {
    return Status(StatusCode::BAD_PARAM, std::string(what) + ": " + rt::tensor_label(e, index) + " holds " +
                                             std::to_string(info.bytes) + " bytes, but " + std::to_string(bytes) +
                                             " were given");
  }
  return Status();
}

}  // namespace

Status ExecutionContext::bind_tensor(int index, void* data, DType dtype) {
  JET_RETURN_IF_ERROR(check_typed_access(*impl_->e, "bind_tensor", Access::BIND, index, dtype, 0));
  return bind_tensor(index, data);
}

Status ExecutionContext::bind_tensor(const std::string& name, void* data, DType dtype) {
  const int index = impl_->e->tensor_by_name.count(name) ? impl_->e->tensor_by_name.at(name) : -1;
  if (index < 0) return Status(StatusCode::BAD_PARAM, "bind_tensor: the model has no tensor named '" + name + "'");
  return bind_tensor(index, data, dtype);
}

Status ExecutionContext::copy_input(int index, const void* host, size_t bytes, DType dtype, cudaStream_t stream) {
  const Impl& c = *impl_;
  JET_RETURN_IF_ERROR(check_typed_access(*c.e, "copy_input", Access::COPY_IN, index, dtype, bytes));
  if (host == nullptr && bytes > 0) return Status(StatusCode::BAD_PARAM, "copy_input: host is null");
  if (bytes == 0) return Status();
#if defined(JET_HAVE_CUDA)
  if (c.is_cuda()) {
    rt::DeviceGuard guard(c.handle.device());
    const cudaError_t err = cudaMemcpyAsync(c.tensor_ptrs[index], host, bytes, cudaMemcpyHostToDevice, stream);
    if (err != cudaSuccess) return rt::cuda_error("copy_input: cudaMemcpyAsync", err);
    return Status();
  }
#endif
  (void)stream;
  std::memcpy(c.tensor_ptrs[index], host, bytes);
  return Status();
}

Status ExecutionContext::copy_output(int index, void* host, size_t bytes, DType dtype, cudaStream_t stream) const {
  const Impl& c = *impl_;
  JET_RETURN_IF_ERROR(check_typed_access(*c.e, "copy_output", Access::COPY_OUT, index, dtype, bytes));
  if (host == nullptr && bytes > 0) return Status(StatusCode::BAD_PARAM, "copy_output: host is null");
  if (bytes == 0) return Status();
#if defined(JET_HAVE_CUDA)
  if (c.is_cuda()) {
    rt::DeviceGuard guard(c.handle.device());
    const cudaError_t err = cudaMemcpyAsync(host, c.tensor_ptrs[index], bytes, cudaMemcpyDeviceToHost, stream);
    if (err != cudaSuccess) return rt::cuda_error("copy_output: cudaMemcpyAsync", err);
    return Status();
  }
#endif
  (void)stream;
  std::memcpy(host, c.tensor_ptrs[index], bytes);
  return Status();
}

Status ExecutionContext::run(cudaStream_t stream) {
  Impl& c = *impl_;
#if defined(JET_HAVE_CUDA)
  if (c.is_cuda()) {
    rt::DeviceGuard guard(c.handle.device());
    // A profiled run is a plain run (op by op, with events); the graph stays for later runs.
    if (c.graph && !c.profiling) {
      const cudaError_t err = cudaGraphLaunch(c.graph, stream);
      if (err != cudaSuccess) return rt::cuda_error("run: cudaGraphLaunch", err);
      return Status();
    }
    return c.run_ops(stream, c.profiling);
  }
#endif
  return c.run_ops(stream, c.profiling);
}

Status ExecutionContext::run_observed(cudaStream_t stream, const OpObserver& observer) {
  Impl& c = *impl_;
  if (!observer) return Status(StatusCode::BAD_PARAM, "run_observed: no observer");
  auto pass = [&]() -> Status {
    c.handle.set_stream(stream);
    c.profile_ready = false;
    for (size_t i = 0; i < c.e->ops.size(); ++i) {
      const Status st = rt::execute_op(c.handle, c.e->ops[i], c.op_in_ptrs.data() + c.op_in_begin[i],
                                       c.op_out_ptrs[i], c.workspace, c.workspace_bytes);
      if (!st.ok()) return Status(st.code(), rt::op_label(*c.e, static_cast<int>(i)) + ": " + st.message());
#if defined(JET_HAVE_CUDA)
      if (c.is_cuda()) {
        const cudaError_t err = cudaStreamSynchronize(stream);
        if (err != cudaSuccess) return rt::cuda_error("run_observed: cudaStreamSynchronize", err);
      }
#endif
      JET_RETURN_IF_ERROR(observer(static_cast<int>(i)));
    }
    return Status();
  };
#if defined(JET_HAVE_CUDA)
  if (c.is_cuda()) {
    rt::DeviceGuard guard(c.handle.device());
    return pass();
  }
#endif
  return pass();
}

Status ExecutionContext::capture(cudaStream_t stream) {
  Impl& c = *impl_;
  if (!c.is_cuda()) {
    return Status(StatusCode::NOT_SUPPORTED, "capture: CUDA graphs need the CUDA backend; this context runs on the CPU");
  }
#if defined(JET_HAVE_CUDA)
  rt::DeviceGuard guard(c.handle.device());
  c.discard_graph();
  // Warm-up: first launches may load modules or set kernel attributes, which must not happen
  // while the stream is being captured.
  Status st = c.run_ops(stream, false);
  if (!st.ok()) return Status(st.code(), "capture: the warm-up run failed: " + st.message());
  cudaError_t err = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  if (err != cudaSuccess) {
    cudaGetLastError();  // the failure is reported here: leave no error behind for the caller
    return Status(StatusCode::EXECUTION_FAILED,
                  std::string("capture: cudaStreamBeginCapture failed: ") + cudaGetErrorString(err) +
                      (stream == nullptr ? " (the legacy default stream cannot be captured; pass a created stream)" : "") +
                      "; the context stays in plain mode");
  }
  st = c.run_ops(stream, false);
  cudaGraph_t graph = nullptr;
  err = cudaStreamEndCapture(stream, &graph);  // always ends the capture, also after a failure
  if (!st.ok() || err != cudaSuccess || !graph) {
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    if (!st.ok()) return Status(st.code(), "capture: a run during capture failed (plain mode kept): " + st.message());
    return Status(StatusCode::EXECUTION_FAILED,
                  std::string("capture: cudaStreamEndCapture failed: ") + cudaGetErrorString(err) +
                      "; the context stays in plain mode");
  }
  // What one replay launches, for jet-bench (kernels per inference).
  ExecutionContext::GraphNodeCounts counts;
  size_t num_nodes = 0;
  err = cudaGraphGetNodes(graph, nullptr, &num_nodes);
  std::vector<cudaGraphNode_t> nodes(err == cudaSuccess ? num_nodes : 0);
  if (err == cudaSuccess && num_nodes > 0) err = cudaGraphGetNodes(graph, nodes.data(), &num_nodes);
  for (size_t i = 0; err == cudaSuccess && i < num_nodes; ++i) {
    cudaGraphNodeType type;
    err = cudaGraphNodeGetType(nodes[i], &type);
    if (err != cudaSuccess) break;
    if (type == cudaGraphNodeTypeKernel) {
      ++counts.kernels;
    } else if (type == cudaGraphNodeTypeMemcpy) {
      ++counts.memcpys;
    } else if (type == cudaGraphNodeTypeMemset) {
      ++counts.memsets;
    } else {
      ++counts.others;
    }
  }
  if (err != cudaSuccess) {
    cudaGraphDestroy(graph);
    return rt::cuda_error("capture: reading the captured graph's nodes failed (plain mode kept)", err);
  }
  cudaGraphExec_t exec = nullptr;
  err = cudaGraphInstantiateWithFlags(&exec, graph, 0);
  cudaGraphDestroy(graph);  // the executable graph does not need it
  if (err != cudaSuccess) {
    if (exec) cudaGraphExecDestroy(exec);
    return rt::cuda_error("capture: cudaGraphInstantiateWithFlags failed (plain mode kept)", err);
  }
  c.graph = exec;
  c.graph_nodes = counts;
  return Status();
#else
  (void)stream;
  return Status(StatusCode::NOT_SUPPORTED, "capture: this build of jet has no CUDA backend");
#endif
}

bool ExecutionContext::has_graph() const {
#if defined(JET_HAVE_CUDA)
  return impl_->graph != nullptr;
#else
  return false;
#endif
}

Status ExecutionContext::graph_node_counts(GraphNodeCounts* out) const {
  if (!out) return Status(StatusCode::BAD_PARAM, "graph_node_counts: out is a null pointer");
  *out = GraphNodeCounts();
#if defined(JET_HAVE_CUDA)
  if (impl_->graph) {
    *out = impl_->graph_nodes;
    return Status();
  }
#endif
  return Status(StatusCode::NOT_SUPPORTED, impl_->is_cuda() ? "graph_node_counts: no CUDA graph has been captured"
                                                            : "graph_node_counts: CUDA graphs need the CUDA backend");
}

Status ExecutionContext::set_profiling(bool on) {
  Impl& c = *impl_;
  if (on == c.profiling) return Status();
  c.profile_ready = false;
  if (!on) {
    c.profiling = false;
#if defined(JET_HAVE_CUDA)
    if (c.is_cuda()) {
      rt::DeviceGuard guard(c.handle.device());
      c.destroy_events();
    }
#endif
    return Status();
  }
  const size_t n = c.e->ops.size();
  if (!c.is_cuda()) {
    c.cpu_ms.assign(n, 0.0);
    c.profiling = true;
    return Status();
  }
#if defined(JET_HAVE_CUDA)
  rt::DeviceGuard guard(c.handle.device());
  c.events.assign(n + 1, nullptr);
  for (size_t i = 0; i <= n; ++i) {
    const cudaError_t err = cudaEventCreate(&c.events[i]);
    if (err != cudaSuccess) {
      c.destroy_events();
      return rt::cuda_error("set_profiling: cudaEventCreate", err);
    }
  }
  c.profiling = true;
  return Status();
#else
  return Status(StatusCode::NOT_SUPPORTED, "set_profiling: this build of jet has no CUDA backend");
#endif
}

Status ExecutionContext::layer_times(std::vector<LayerTime>* out) const {
  const Impl& c = *impl_;
  if (!out) return Status(StatusCode::BAD_PARAM, "layer_times: out is a null pointer");
  out->clear();
  if (!c.profiling) return Status(StatusCode::BAD_PARAM, "layer_times: profiling is off (call set_profiling(true), then run())");
  if (!c.profile_ready) return Status(StatusCode::BAD_PARAM, "layer_times: no profiled run has completed since profiling was turned on");
  const size_t n = c.e->ops.size();
  std::vector<double> ms(n, 0.0);
  if (!c.is_cuda()) {
    ms = c.cpu_ms;
  }
#if defined(JET_HAVE_CUDA)
  if (c.is_cuda()) {
    rt::DeviceGuard guard(c.handle.device());
    cudaError_t err = cudaEventSynchronize(c.events[n]);
    if (err != cudaSuccess) return rt::cuda_error("layer_times: cudaEventSynchronize", err);
    for (size_t i = 0; i < n; ++i) {
      float t = 0.f;
      err = cudaEventElapsedTime(&t, c.events[i], c.events[i + 1]);
      if (err != cudaSuccess) return rt::cuda_error("layer_times: cudaEventElapsedTime", err);
      ms[i] = t;
    }
  }
#endif
  for (size_t i = 0; i < n; ++i) {
    LayerTime lt;
    lt.op = static_cast<int>(i);
    lt.name = c.e->op_infos[i].name;
    lt.type = c.e->op_infos[i].type;
    lt.ms = ms[i];
    out->push_back(lt);
  }
  return Status();
}

}  // namespace jet
