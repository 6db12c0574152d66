// Convolution choices by measurement: the device identity that tuned files record, tuning at
// load (LoadOptions::tune), and write_tuned_model (what jet-tune writes).
//
// Tuning runs find_conv_forward_algo for every convolution on scratch buffers of the op's real
// descriptors (random values), allocated once for the largest op and freed before load returns,
// so contexts and runs are untouched: run() still allocates nothing.
#include "tuning.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cuda_util.h"
#include "device_memory.h"
#include "format.h"
#include "jet/schema/model_generated.h"
#include "loader.h"
#include "ops.h"

namespace jet {
namespace rt {

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

namespace {

// Scratch memory on the engine's backend, freed on destruction.
class Scratch {
 public:
  explicit Scratch(Backend backend) : backend_(backend) {}
  ~Scratch() {
    if (!ptr_) return;
    if (backend_ == Backend::CUDA) {
      device_free(ptr_);
    } else {
      host_free(ptr_);
    }
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  Status allocate(size_t bytes) {
    if (bytes == 0) return Status();
    if (backend_ == Backend::CUDA) return device_alloc(bytes, &ptr_, "the tuning scratch buffers");
    return host_alloc(bytes, &ptr_, "the tuning scratch buffers");
  }
  uint8_t* get() const { return static_cast<uint8_t*>(ptr_); }

 private:
  Backend backend_;
  void* ptr_ = nullptr;
};

// Uniform values in [-1, 1) from a splitmix64 stream, `bytes` worth of `dtype` elements (a tail
// that holds no whole element stays 0).
void fill_random(DType dtype, size_t bytes, uint8_t* out) {
  uint64_t state = 0x5eed5eed12345678ull;
  auto next = [&state]() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  std::memset(out, 0, bytes);
  const size_t esize = dtype_size(dtype);
  for (size_t i = 0; i + esize <= bytes; i += esize) {
    const float v = static_cast<float>(next() >> 40) / static_cast<float>(1ull << 23) - 1.f;
    if (dtype == DType::F16) {
      const uint16_t bits = half(v).bits;
      std::memcpy(out + i, &bits, 2);
    } else {
      std::memcpy(out + i, &v, 4);
    }
  }
}

Status copy_in(Backend backend, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return Status();
  if (backend == Backend::CPU) {
    std::memcpy(dst, src, bytes);
    return Status();
  }
#if defined(JET_HAVE_CUDA)
  const cudaError_t e = cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) return cuda_error("tuning: filling the scratch buffers (cudaMemcpy)", e);
  return Status();
#else
  return Status(StatusCode::NOT_SUPPORTED, "this build of jet has no CUDA backend");
#endif
}

// For convolution `p`: the largest workspace that an algorithm and tactic within `limit` bytes
// needs, and how many results find_conv_forward_algo can return.
void tuning_needs(const Handle& h, const PreparedOp& p, size_t limit, size_t* workspace, int* results) {
  const ConvPrepared& c = p.data.as<ConvPrepared>();
  *workspace = 0;
  *results = 0;
  for (int i = 0; i < static_cast<int>(ConvAlgo::COUNT); ++i) {
    const ConvAlgo algo = static_cast<ConvAlgo>(i);
    int tactics = 0;
    if (!conv_forward_tactic_count(h, p.in_descs[0], c.filter, c.conv.with_tactic(0), p.out_desc, algo, &tactics).ok()) {
      *results += 1;  // an entry saying why
      continue;
    }
    *results += 1 + tactics;
    for (int t = 0; t <= tactics; ++t) {
      size_t ws = 0;
      if (conv_forward_workspace_size(h, p.in_descs[0], c.filter, c.conv.with_tactic(t), p.out_desc, algo, &ws).ok() &&
          ws <= limit) {
        *workspace = std::max(*workspace, ws);
      }
    }
  }
}

}  // namespace

std::vector<TuningCandidate> network_candidates(const TuningCandidate& untuned, const ConvAlgoPerf* perf, int count,
                                                size_t limit, int max_others, float within) {
  std::vector<TuningCandidate> out;
  if (untuned.workspace_bytes <= limit) out.push_back(untuned);
  float fastest = -1.f;
  int others = 0;
  for (int r = 0; r < count; ++r) {
    const ConvAlgoPerf& q = perf[r];
    if (!q.status.ok() || q.workspace_bytes > limit || q.time_ms < 0) continue;
    TuningCandidate c;
    c.algo = q.algo;
    c.tactic = q.tactic;
    c.workspace_bytes = q.workspace_bytes;
    c.find_ms = q.time_ms;
    if (fastest < 0) fastest = q.time_ms;
    if (!out.empty() && out[0] == c) {
      out[0].find_ms = c.find_ms;  // the untuned choice's own time alone
      continue;
    }
    if (std::find(out.begin(), out.end(), c) != out.end()) continue;
    if (out.empty()) {  // the untuned choice does not fit: find's fastest is the reference
      out.push_back(c);
      continue;
    }
    if (others >= max_others || q.time_ms > within * fastest) continue;
    out.push_back(c);
    ++others;
  }
  return out;
}

int choose_candidate(const std::vector<double>& median_ms, double rel_margin, double abs_margin_ms) {
  if (median_ms.empty() || median_ms[0] < 0) return 0;
  int best = 0;
  for (size_t i = 1; i < median_ms.size(); ++i) {
    if (median_ms[i] >= 0 && median_ms[i] < median_ms[static_cast<size_t>(best)]) best = static_cast<int>(i);
  }
  const double reference = median_ms[0];
  return reference - median_ms[static_cast<size_t>(best)] > std::max(rel_margin * reference, abs_margin_ms) ? best : 0;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

namespace {

void apply_candidate(PreparedOp* p, const TuningCandidate& c) {
  p->data.as<ConvPrepared>().algo = c.algo;
  p->data.as<ConvPrepared>().conv = p->data.as<ConvPrepared>().conv.with_tactic(c.tactic);
  p->workspace_bytes = c.workspace_bytes;
}

// Runs of the whole network on memory of its own: the arena as planned, a workspace for the
// largest candidate, the engine's weights and random inputs. The ops' choices are whatever the
// caller set in impl->ops before each run.
class NetworkRunner {
 public:
  explicit NetworkRunner(Engine::Impl* impl) : impl_(impl), handle_(impl->handle), memory_(impl->handle.backend()) {}
  ~NetworkRunner() {
#if defined(JET_HAVE_CUDA)
    if (cuda()) {
      if (prefill_) cudaGraphExecDestroy(prefill_);
      for (cudaEvent_t ev : events_) {
        if (ev) cudaEventDestroy(ev);
      }
      if (stream_) cudaStreamDestroy(stream_);
    }
#endif
  }
  NetworkRunner(const NetworkRunner&) = delete;
  NetworkRunner& operator=(const NetworkRunner&) = delete;

  Status init(size_t workspace_bytes) {
    const size_t a = format::kArenaAlignment;
    size_t arena = 0;
    for (const TensorRecord& r : impl_->tensors) {
      if (r.in_arena) arena = std::max(arena, r.arena_offset + r.arena_size);
    }
    arena = align_up(arena, a);
    workspace_bytes_ = align_up(workspace_bytes, a);
    JET_RETURN_IF_ERROR(memory_.allocate(arena + workspace_bytes_ + a));
    uint8_t* base = memory_.get();
    workspace_ = workspace_bytes_ > 0 ? base + arena : nullptr;
    const size_t nt = impl_->tensors.size();
    std::vector<void*> ptr(nt, nullptr);
    for (size_t t = 0; t < nt; ++t) {
      const TensorRecord& r = impl_->tensors[t];
      if (r.constant) {
        ptr[t] = const_cast<void*>(impl_->weight_ptrs[t]);
      } else if (r.in_arena) {
        ptr[t] = base + r.arena_offset;
      }
    }
    in_ptrs_.assign(impl_->ops.size(), {});
    out_ptrs_.assign(impl_->ops.size(), nullptr);
    for (size_t i = 0; i < impl_->ops.size(); ++i) {
      for (int t : impl_->ops[i].inputs) in_ptrs_[i].push_back(ptr[static_cast<size_t>(t)]);
      out_ptrs_[i] = ptr[static_cast<size_t>(impl_->ops[i].output)];
    }
    // Random inputs (uniform in [-1, 1) for float inputs, zeros otherwise): finite values, so the
    // timed work is that of real data.
    for (int t : impl_->inputs) {
      const TensorRecord& r = impl_->tensors[static_cast<size_t>(t)];
      if (!ptr[static_cast<size_t>(t)] || r.bytes == 0) continue;
      std::vector<uint8_t> host(r.bytes, 0);
      if (r.desc.dtype() == DType::F32 || r.desc.dtype() == DType::F16) fill_random(r.desc.dtype(), r.bytes, host.data());
      JET_RETURN_IF_ERROR(copy_in(handle_.backend(), ptr[static_cast<size_t>(t)], host.data(), r.bytes));
    }
#if defined(JET_HAVE_CUDA)
    if (cuda()) {
      // A pageable cudaMemcpy may return before its DMA lands, ordered only on the legacy stream;
      // the runs go on a stream of their own.
      cudaError_t e = cudaDeviceSynchronize();
      if (e != cudaSuccess) return cuda_error("tuning: cudaDeviceSynchronize after the input upload", e);
      e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
      if (e != cudaSuccess) return cuda_error("tuning: cudaStreamCreate", e);
      handle_.set_stream(stream_);
      events_.assign(impl_->ops.size() + 1, nullptr);
      for (cudaEvent_t& ev : events_) {
        e = cudaEventCreate(&ev);
        if (e != cudaSuccess) return cuda_error("tuning: cudaEventCreate", e);
      }
    }
#endif
    return Status();
  }

  // One run, untimed: loads modules and sets kernel attributes on first launches.
  Status warm_up() {
    JET_RETURN_IF_ERROR(run_ops());
    return sync();
  }

  // CUDA: the current choices as the graph that keeps the GPU busy ahead of each timed run, and
  // how many of its replays cover the host's enqueueing of a run with per-op events.
  Status prepare_prefill() {
#if defined(JET_HAVE_CUDA)
    if (!cuda()) return Status();
    JET_RETURN_IF_ERROR(warm_up());
    if (!capture(&prefill_).ok()) {
      // A network that cannot be captured (jet-bench would say so too): plain runs keep the GPU
      // busy instead (host-bound, so less ahead), and whole networks are timed as plain runs.
      graphs_ok_ = false;
      prefill_replays_ = 2;
      return Status();
    }
    double graph_ms = 0;
    JET_RETURN_IF_ERROR(time_graph(prefill_, 3, &graph_ms));
    std::vector<double> op_ms;
    double enqueue_ms = 0;
    prefill_replays_ = 0;
    JET_RETURN_IF_ERROR(timed_run(&op_ms, &enqueue_ms));
    const double need = graph_ms > 0 ? 1.5 * enqueue_ms / graph_ms : 1.0;
    prefill_replays_ = static_cast<int>(std::min(64.0, std::ceil(need))) + 1;
#endif
    return Status();
  }

  // One run with each op's time (CUDA: between events, the run queued behind prefill replays;
  // CPU: steady clock). enqueue_ms (may be null): the host time the run's enqueueing took.
  Status timed_run(std::vector<double>* op_ms, double* enqueue_ms) {
    const size_t n = impl_->ops.size();
    op_ms->assign(n, 0.0);
    using clock = std::chrono::steady_clock;
#if defined(JET_HAVE_CUDA)
    if (cuda()) {
      for (int r = 0; r < prefill_replays_; ++r) {
        if (!prefill_) {
          JET_RETURN_IF_ERROR(run_ops());
          continue;
        }
        const cudaError_t e = cudaGraphLaunch(prefill_, stream_);
        if (e != cudaSuccess) return cuda_error("tuning: cudaGraphLaunch", e);
      }
      const auto t0 = clock::now();
      cudaError_t e = cudaEventRecord(events_[0], stream_);
      for (size_t i = 0; i < n && e == cudaSuccess; ++i) {
        JET_RETURN_IF_ERROR(run_op(i));
        e = cudaEventRecord(events_[i + 1], stream_);
      }
      if (e != cudaSuccess) return cuda_error("tuning: cudaEventRecord", e);
      if (enqueue_ms) *enqueue_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
      JET_RETURN_IF_ERROR(sync());
      for (size_t i = 0; i < n; ++i) {
        float ms = 0;
        e = cudaEventElapsedTime(&ms, events_[i], events_[i + 1]);
        if (e != cudaSuccess) return cuda_error("tuning: cudaEventElapsedTime", e);
        (*op_ms)[i] = ms;
      }
      return Status();
    }
#endif
    const auto t0 = clock::now();
    auto last = t0;
    for (size_t i = 0; i < n; ++i) {
      JET_RETURN_IF_ERROR(run_op(i));
      const auto now = clock::now();
      (*op_ms)[i] = std::chrono::duration<double, std::milli>(now - last).count();
      last = now;
    }
    if (enqueue_ms) *enqueue_ms = std::chrono::duration<double, std::milli>(last - t0).count();
    return Status();
  }

  // The median time of one run of each set of choices, over `rounds` rounds that take the sets in
  // turn (so drift in clocks affects them alike). CUDA: each set captured as a graph, `replays`
  // replays between two events per round.
  Status time_sets(const std::vector<std::vector<TuningCandidate>>& sets, const std::vector<int>& convs, int rounds,
                   std::vector<double>* median_ms) {
    median_ms->assign(sets.size(), 0.0);
    std::vector<std::vector<double>> samples(sets.size());
#if defined(JET_HAVE_CUDA)
    if (cuda() && graphs_ok_) {
      std::vector<cudaGraphExec_t> graphs(sets.size(), nullptr);
      auto destroy = [&graphs]() {
        for (cudaGraphExec_t& g : graphs) {
          if (g) cudaGraphExecDestroy(g);
          g = nullptr;
        }
      };
      Status st;
      double one_ms = 0;
      for (size_t s = 0; s < sets.size() && st.ok(); ++s) {
        apply(sets[s], convs);
        st = warm_up();
        if (st.ok()) st = capture(&graphs[s]);
        if (st.ok() && s == 0) st = time_graph(graphs[0], 2, &one_ms);
      }
      // About 2 ms of replays per sample: many short replays average out the events' resolution.
      const int replays = one_ms > 0 ? static_cast<int>(std::min(50.0, std::max(1.0, std::ceil(2.0 / one_ms)))) : 1;
      for (int r = 0; r < rounds && st.ok(); ++r) {
        for (size_t s = 0; s < sets.size() && st.ok(); ++s) {
          double ms = 0;
          st = time_graph(graphs[s], replays, &ms);
          samples[s].push_back(ms);
        }
      }
      destroy();
      JET_RETURN_IF_ERROR(st);
      for (size_t s = 0; s < sets.size(); ++s) (*median_ms)[s] = median_of(samples[s]);
      return Status();
    }
#endif
    // CPU, or CUDA without graphs: a run's time from its per-op times (CUDA: events, queued
    // behind the prefill runs).
    for (int r = 0; r < rounds; ++r) {
      for (size_t s = 0; s < sets.size(); ++s) {
        apply(sets[s], convs);
        std::vector<double> op_ms;
        JET_RETURN_IF_ERROR(timed_run(&op_ms, nullptr));
        double total = 0;
        for (double ms : op_ms) total += ms;
        samples[s].push_back(total);
      }
    }
    for (size_t s = 0; s < sets.size(); ++s) (*median_ms)[s] = median_of(samples[s]);
    return Status();
  }

  void apply(const std::vector<TuningCandidate>& set, const std::vector<int>& convs) {
    for (size_t k = 0; k < convs.size(); ++k) apply_candidate(&impl_->ops[static_cast<size_t>(convs[k])], set[k]);
  }

 private:
  bool cuda() const { return handle_.backend() == Backend::CUDA; }

  Status run_op(size_t i) {
    const Status st = execute_op(handle_, impl_->ops[i], in_ptrs_[i].data(), out_ptrs_[i], workspace_, workspace_bytes_);
    if (!st.ok()) return Status(st.code(), op_label(*impl_, static_cast<int>(i)) + ": tuning run: " + st.message());
    return Status();
  }

  Status run_ops() {
    for (size_t i = 0; i < impl_->ops.size(); ++i) JET_RETURN_IF_ERROR(run_op(i));
    return Status();
  }

  Status sync() {
#if defined(JET_HAVE_CUDA)
    if (cuda()) {
      const cudaError_t e = cudaStreamSynchronize(stream_);
      if (e != cudaSuccess) return cuda_error("tuning: cudaStreamSynchronize", e);
    }
#endif
    return Status();
  }

#if defined(JET_HAVE_CUDA)
  Status capture(cudaGraphExec_t* out) {
    *out = nullptr;
    cudaError_t e = cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal);
    if (e != cudaSuccess) return cuda_error("tuning: cudaStreamBeginCapture", e);
    const Status st = run_ops();
    cudaGraph_t graph = nullptr;
    e = cudaStreamEndCapture(stream_, &graph);
    if (!st.ok() || e != cudaSuccess || !graph) {
      if (graph) cudaGraphDestroy(graph);
      cudaGetLastError();
      if (!st.ok()) return st;
      return cuda_error("tuning: cudaStreamEndCapture", e);
    }
    e = cudaGraphInstantiateWithFlags(out, graph, 0);
    cudaGraphDestroy(graph);
    if (e != cudaSuccess) {
      *out = nullptr;
      return cuda_error("tuning: cudaGraphInstantiateWithFlags", e);
    }
    return Status();
  }

  // The time of one replay of `graph`: `replays` replays between two events, divided.
  Status time_graph(cudaGraphExec_t graph, int replays, double* ms_out) {
    cudaError_t e = cudaGraphLaunch(graph, stream_);  // not timed: the GPU starts busy
    if (e == cudaSuccess) e = cudaEventRecord(events_[0], stream_);
    for (int r = 0; r < replays && e == cudaSuccess; ++r) e = cudaGraphLaunch(graph, stream_);
    if (e == cudaSuccess) e = cudaEventRecord(events_[1], stream_);
    if (e != cudaSuccess) return cuda_error("tuning: timing graph replays", e);
    JET_RETURN_IF_ERROR(sync());
    float ms = 0;
    e = cudaEventElapsedTime(&ms, events_[0], events_[1]);
    if (e != cudaSuccess) return cuda_error("tuning: cudaEventElapsedTime", e);
    *ms_out = static_cast<double>(ms) / replays;
    return Status();
  }
#endif

  Engine::Impl* impl_;
  Handle handle_;
  Scratch memory_;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  std::vector<std::vector<const void*>> in_ptrs_;
  std::vector<void*> out_ptrs_;
#if defined(JET_HAVE_CUDA)
  cudaStream_t stream_ = nullptr;
  std::vector<cudaEvent_t> events_;
  cudaGraphExec_t prefill_ = nullptr;
  int prefill_replays_ = 0;
  bool graphs_ok_ = true;  // the network could be captured as a CUDA graph
#endif
};

// Step 1: find_conv_forward_algo on scratch buffers for every convolution; each op's candidate
// list (network_candidates) goes to candidates[i].
Status find_candidates(Engine::Impl* impl, int max_others, std::vector<std::vector<TuningCandidate>>* candidates) {
  const Handle& h = impl->handle;
  const Backend backend = h.backend();
  candidates->assign(impl->ops.size(), {});
  // One scratch block for the largest op: x, w, y and the workspace, each 256-aligned.
  std::vector<size_t> op_workspace(impl->ops.size(), 0);
  std::vector<int> op_results(impl->ops.size(), 0);
  size_t x_max = 0, w_max = 0, y_max = 0, ws_max = 0;
  int results_max = 0;
  for (size_t i = 0; i < impl->ops.size(); ++i) {
    PreparedOp& p = impl->ops[i];
    if (!is_op(p, fb::OpParams::ConvParams)) continue;
    const size_t limit = std::min(p.data.as<ConvPrepared>().workspace_limit, impl->options.tune_workspace_limit);
    tuning_needs(h, p, limit, &op_workspace[i], &op_results[i]);
    x_max = std::max(x_max, p.in_descs[0].span_bytes());
    w_max = std::max(w_max, p.in_descs[1].span_bytes());
    y_max = std::max(y_max, p.out_desc.span_bytes());
    ws_max = std::max(ws_max, op_workspace[i]);
    results_max = std::max(results_max, op_results[i]);
  }
  if (results_max == 0) return Status();  // no convolution
  const size_t a = format::kArenaAlignment;
  const size_t x_off = 0, w_off = align_up(x_max, a), y_off = w_off + align_up(w_max, a);
  const size_t ws_off = y_off + align_up(y_max, a);
  Scratch scratch(backend);
  JET_RETURN_IF_ERROR(scratch.allocate(ws_off + align_up(ws_max, a)));
  // Random x and w in each op's dtype (refilled only when the dtype changes from op to op);
  // timings do not depend on the values as long as they are finite.
  std::vector<uint8_t> host(std::max(x_max, w_max));
  bool filled = false;
  DType filled_dtype = DType::F32;
  std::vector<ConvAlgoPerf> perf(static_cast<size_t>(results_max));
  for (size_t i = 0; i < impl->ops.size(); ++i) {
    PreparedOp& p = impl->ops[i];
    if (!is_op(p, fb::OpParams::ConvParams)) continue;
    ConvPrepared& c = p.data.as<ConvPrepared>();
    if (!filled || filled_dtype != p.in_descs[0].dtype()) {
      filled = true;
      filled_dtype = p.in_descs[0].dtype();
      fill_random(filled_dtype, host.size(), host.data());
      JET_RETURN_IF_ERROR(copy_in(backend, scratch.get() + x_off, host.data(), x_max));
      JET_RETURN_IF_ERROR(copy_in(backend, scratch.get() + w_off, host.data(), w_max));
    }
    int returned = 0;
    const Status st = find_conv_forward_algo(h, p.in_descs[0], scratch.get() + x_off, c.filter, scratch.get() + w_off,
                                             c.conv.with_tactic(0), p.out_desc, scratch.get() + y_off,
                                             op_workspace[i] > 0 ? scratch.get() + ws_off : nullptr, op_workspace[i],
                                             op_results[i], &returned, perf.data());
    if (!st.ok()) return Status(st.code(), op_label(*impl, static_cast<int>(i)) + ": tuning: " + st.message());
    TuningCandidate untuned;  // what a load without tuning runs (prepare_conv's choice)
    untuned.algo = c.algo;
    untuned.tactic = c.conv.tactic();
    untuned.workspace_bytes = p.workspace_bytes;
    const size_t limit = std::min(c.workspace_limit, impl->options.tune_workspace_limit);
    (*candidates)[i] = network_candidates(untuned, perf.data(), returned, limit, max_others, 1.5f);
  }
  return Status();
}

}  // namespace

DeviceIdentity device_identity(const Handle& handle) {
  DeviceIdentity id;
  if (handle.backend() != Backend::CUDA) {
    id.name = "cpu";
    return id;
  }
#if defined(JET_HAVE_CUDA)
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, handle.device()) == cudaSuccess) {
    id.name = prop.name;
    id.cc_major = prop.major;
    id.cc_minor = prop.minor;
  } else {
    cudaGetLastError();
    id.name = "unknown CUDA device";
  }
#endif
  return id;
}

std::string device_text(const DeviceIdentity& d) {
  if (d.name == "cpu" && d.cc_major == 0 && d.cc_minor == 0) return "'cpu'";
  return "'" + d.name + "' (compute capability " + std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) + ")";
}

bool same_device(const DeviceIdentity& a, const DeviceIdentity& b) {
  return a.name == b.name && a.cc_major == b.cc_major && a.cc_minor == b.cc_minor;
}

Status tune_convolutions(Engine::Impl* impl) {
  const auto t0 = std::chrono::steady_clock::now();
  const bool cuda = impl->handle.backend() == Backend::CUDA;
#if defined(JET_HAVE_CUDA)
  std::unique_ptr<DeviceGuard> guard;
  if (cuda) guard.reset(new DeviceGuard(impl->options.device));
#endif
  auto finish = [&]() {
    impl->summary.tuned_at_load = true;
    impl->summary.tuning_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return Status();
  };
  // CUDA: up to 3 others besides the untuned choice, 11 timed runs each (a run of ResNet-50 at
  // batch 1 is ~0.5 ms). CPU: runs are long, the caches matter less than the algorithm: one other.
  const int max_others = cuda ? 3 : 1;
  const int rounds = cuda ? 11 : 3;
  // Margins against noise: CUDA events resolve ~0.5 us, medians of 11 about a quarter of that.
  const double rel_margin = 0.01, abs_margin_ms = cuda ? 0.0003 : 0.0;

  std::vector<std::vector<TuningCandidate>> found;
  JET_RETURN_IF_ERROR(find_candidates(impl, max_others, &found));
  std::vector<int> convs;
  std::vector<std::vector<TuningCandidate>> cands;  // per entry of convs
  size_t workspace = 0, most = 0;  // the runs' workspace: every op's, and every candidate's
  for (size_t i = 0; i < impl->ops.size(); ++i) {
    PreparedOp& p = impl->ops[i];
    workspace = std::max(workspace, p.workspace_bytes);
    if (!is_op(p, fb::OpParams::ConvParams)) continue;
    std::vector<TuningCandidate> c = found[i];
    if (c.empty()) {
      impl->summary.notes.push_back(op_label(*impl, static_cast<int>(i)) +
                                    ": tuning found no algorithm that runs within the workspace limit; "
                                    "it keeps the heuristic's choice");
      TuningCandidate keep;
      keep.algo = p.data.as<ConvPrepared>().algo;
      keep.tactic = p.data.as<ConvPrepared>().conv.tactic();
      keep.workspace_bytes = p.workspace_bytes;
      c.push_back(keep);
    }
    for (const TuningCandidate& k : c) workspace = std::max(workspace, k.workspace_bytes);
    most = std::max(most, c.size());
    convs.push_back(static_cast<int>(i));
    cands.push_back(std::move(c));
  }
  if (convs.empty()) return finish();

  // Step 2: each op's candidates as its share of whole-network runs. Set r gives every op its
  // candidate r (its reference, candidate 0, when it has fewer); the sets take turns per round.
  auto set_of = [&](const std::vector<int>& pick) {
    std::vector<TuningCandidate> s(convs.size());
    for (size_t k = 0; k < convs.size(); ++k) s[k] = cands[k][static_cast<size_t>(pick[k])];
    return s;
  };
  std::vector<int> reference_pick(convs.size(), 0);
  const std::vector<TuningCandidate> reference = set_of(reference_pick);
  NetworkRunner runner(impl);
  JET_RETURN_IF_ERROR(runner.init(workspace));
  runner.apply(reference, convs);
  JET_RETURN_IF_ERROR(runner.prepare_prefill());
  std::vector<std::vector<TuningCandidate>> sets(most);
  for (size_t r = 0; r < most; ++r) {
    std::vector<int> pick(convs.size());
    for (size_t k = 0; k < convs.size(); ++k) pick[k] = r < cands[k].size() ? static_cast<int>(r) : 0;
    sets[r] = set_of(pick);
    runner.apply(sets[r], convs);
    JET_RETURN_IF_ERROR(runner.warm_up());
  }
  std::vector<std::vector<std::vector<double>>> samples(convs.size());
  for (size_t k = 0; k < convs.size(); ++k) samples[k].resize(cands[k].size());
  std::vector<double> op_ms;
  for (int round = 0; round < (most > 1 ? rounds : std::min(rounds, 3)); ++round) {
    for (size_t r = 0; r < most; ++r) {
      runner.apply(sets[r], convs);
      JET_RETURN_IF_ERROR(runner.timed_run(&op_ms, nullptr));
      for (size_t k = 0; k < convs.size(); ++k) {
        if (r < cands[k].size()) samples[k][r].push_back(op_ms[static_cast<size_t>(convs[k])]);
      }
    }
  }
  std::vector<std::vector<double>> medians(convs.size());
  for (size_t k = 0; k < convs.size(); ++k) {
    for (const std::vector<double>& s : samples[k]) medians[k].push_back(s.empty() ? -1.0 : median_of(s));
  }
  auto picks_with = [&](double rel) {
    std::vector<int> pick(convs.size());
    for (size_t k = 0; k < convs.size(); ++k) pick[k] = choose_candidate(medians[k], rel, abs_margin_ms);
    return pick;
  };

  // Step 3: the chosen set against the reference as whole networks. Should it not be faster, a
  // set with only the clearer per-op gains (5%) gets the same test; else the reference stays.
  std::vector<int> final_pick = reference_pick;
  double tuned_ms = -1, untuned_ms = -1;
  std::vector<int> tried;
  for (const double rel : {rel_margin, 0.05}) {
    const std::vector<int> pick = picks_with(rel);
    if (pick == reference_pick || pick == tried) continue;
    tried = pick;
    std::vector<double> ms;
    JET_RETURN_IF_ERROR(runner.time_sets({reference, set_of(pick)}, convs, cuda ? 15 : 3, &ms));
    untuned_ms = ms[0];
    tuned_ms = ms[1];
    if (ms[1] < ms[0]) {
      final_pick = pick;
      break;
    }
  }
  int changed = 0;
  for (size_t k = 0; k < convs.size(); ++k) {
    PreparedOp& p = impl->ops[static_cast<size_t>(convs[k])];
    const TuningCandidate& c = cands[k][static_cast<size_t>(final_pick[k])];
    apply_candidate(&p, c);
    p.refused_choice.clear();
    OpInfo& info = impl->op_infos[static_cast<size_t>(convs[k])];
    info.algo = conv_algo_name(c.algo);
    info.tactic = c.tactic;
    info.workspace_bytes = c.workspace_bytes;
    info.tuned_ms = static_cast<float>(medians[k][static_cast<size_t>(final_pick[k])]);
    info.heuristic_ms = static_cast<float>(medians[k][0]);
    if (!(c == cands[k][0])) ++changed;
  }
  impl->summary.tuned_network_ms = final_pick == reference_pick && tuned_ms >= 0 ? untuned_ms : tuned_ms;
  impl->summary.untuned_network_ms = untuned_ms;
  impl->summary.tuned_convs_changed = changed;
  return finish();
}

}  // namespace rt

DeviceIdentity Engine::device_identity() const {
  return impl_->identity.name.empty() ? rt::device_identity(impl_->handle) : impl_->identity;
}

Status write_tuned_model(const Engine& engine, const void* data, size_t size, std::vector<uint8_t>* out) {
  auto bad = [](const std::string& m) { return Status(StatusCode::BAD_PARAM, "write_tuned_model: " + m); };
  if (!out) return bad("out is a null pointer");
  out->clear();
  if (!data) return bad("the model bytes are a null pointer");
  // Only a file that loads (the same checks as Engine::load) is re-written.
  const fb::Model* model = nullptr;
  JET_RETURN_IF_ERROR(rt::check_container(static_cast<const uint8_t*>(data), size, true, &model));
  if (model->schema_minor() > kSchemaMinor && model->schema_major() == kSchemaMajor) {
    return bad("the model has schema " + std::to_string(model->schema_major()) + "." +
               std::to_string(model->schema_minor()) + ", newer than this runtime's " + std::to_string(kSchemaMajor) +
               "." + std::to_string(kSchemaMinor) + ": re-writing it would drop the fields this runtime does not know");
  }
  std::unique_ptr<fb::ModelT> m(model->UnPack());
  const Engine::Impl& e = engine.impl();
  if (m->ops.size() != e.ops.size()) {
    return bad("the model has " + std::to_string(m->ops.size()) + " ops, the engine " + std::to_string(e.ops.size()) +
               ": not the model the engine was loaded from");
  }
  for (size_t i = 0; i < m->ops.size(); ++i) {
    fb::OpT& op = *m->ops[i];
    const bool file_conv = op.params.type == fb::OpParams::ConvParams;
    if (file_conv != rt::is_op(e.ops[i], fb::OpParams::ConvParams)) {
      return bad("op " + std::to_string(i) + " '" + op.name + "' differs from the engine's: not the model it was loaded from");
    }
    if (!file_conv) continue;
    fb::ConvParamsT* cp = op.params.AsConvParams();
    cp->algo = static_cast<fb::ConvAlgo>(static_cast<int32_t>(e.ops[i].data.as<rt::ConvPrepared>().algo));
    cp->tactic = e.ops[i].data.as<rt::ConvPrepared>().conv.tactic();
  }
  const DeviceIdentity id = engine.device_identity();
  m->tuned_on.reset(new fb::TunedDeviceT());
  m->tuned_on->name = id.name;
  m->tuned_on->cc_major = id.cc_major;
  m->tuned_on->cc_minor = id.cc_minor;
  m->schema_minor = std::max<uint32_t>(m->schema_minor, 2);  // tactic and tuned_on are 1.2 fields
  if (m->plan) m->plan->workspace_bytes = e.summary.workspace_bytes;

  // Weights behind the new FlatBuffer, each at a 64-aligned offset, then the footer. The
  // offsets live inside the FlatBuffer; with ForceDefaults its size does not depend on their
  // values, so the second pack has the first one's size (checked).
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  std::vector<std::pair<uint64_t, uint64_t>> source;  // per buffer: old offset, size
  for (const auto& b : m->buffers) {
    if (b->offset > size || b->size > size - b->offset) {
      return bad("buffer " + std::to_string(source.size()) + " lies outside the file");
    }
    source.emplace_back(b->offset, b->size);
  }
  flatbuffers::FlatBufferBuilder builder(1 << 16);
  auto pack = [&]() {
    builder.Clear();
    builder.ForceDefaults(true);
    fb::FinishModelBuffer(builder, fb::Model::Pack(builder, m.get()));
    return static_cast<size_t>(builder.GetSize());
  };
  const size_t fb_bytes = pack();
  size_t end = fb_bytes;
  for (size_t i = 0; i < m->buffers.size(); ++i) {
    m->buffers[i]->offset = rt::align_up(end, format::kBufferAlignment);
    end = static_cast<size_t>(m->buffers[i]->offset) + static_cast<size_t>(source[i].second);
  }
  const size_t footer = rt::align_up(end, 8);
  m->file_size = footer + format::kFooterBytes;
  if (pack() != fb_bytes) {
    return Status(StatusCode::INTERNAL_ERROR, "write_tuned_model: the file layout did not settle");
  }
  out->assign(footer + format::kFooterBytes, 0);
  std::memcpy(out->data(), builder.GetBufferPointer(), fb_bytes);
  for (size_t i = 0; i < m->buffers.size(); ++i) {
    std::memcpy(out->data() + m->buffers[i]->offset, bytes + source[i].first, static_cast<size_t>(source[i].second));
  }
  const uint64_t sum = model_checksum(out->data(), footer);
  for (int i = 0; i < 8; ++i) (*out)[footer + static_cast<size_t>(i)] = static_cast<uint8_t>(sum >> (8 * i));
  std::memcpy(out->data() + footer + 8, format::kFooterMagic, 8);
  return Status();
}

}  // namespace jet
