// jet-bench: trtexec-style timing of a .jet model. Warm-up runs, then N timed iterations:
// latency statistics and throughput; on CUDA also GPU compute time (CUDA events around each run)
// against host enqueue time (the run() call alone), without and with a CUDA graph; optionally the
// per-layer profile and a JSON report. Also what one inference costs besides time: kernels
// launched (the captured CUDA graph's kernel nodes; ops on CPU), device memory (the runtime's
// accounting and cudaMemGetInfo around the load) and the cold load time to the first result.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "jet/runtime.h"

#if JET_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace {

using jet::Status;
using jet::StatusCode;
using namespace jet::tools;

const char kUsage[] =
    "usage: jet-bench model.jet [--device cpu|cuda] [--warmup N] [--iterations N] [--batch-runs]\n"
    "                 [--no-graph] [--profile] [--tune] [--json]\n"
    "  --device      backend (default: cuda when built with CUDA, else cpu)\n"
    "  --warmup      untimed runs before each timed phase (default 10)\n"
    "  --iterations  timed runs per phase (default 100)\n"
    "  --batch-runs  CUDA: enqueue the timed runs back to back and wait once at the end\n"
    "                (throughput; no per-run latency). CPU runs are synchronous anyway.\n"
    "  --no-graph    CUDA: skip the CUDA graph phase\n"
    "  --profile     per-layer times (ExecutionContext::layer_times) after the timed phases\n"
    "  --tune        measure every convolution's algorithms and tactics at load (LoadOptions::tune)\n"
    "  --json        print one JSON object with every figure instead of the text report\n";

struct Options {
  std::string model;
  jet::Backend backend = jet::built_with_cuda() ? jet::Backend::CUDA : jet::Backend::CPU;
  int64_t warmup = 10;
  int64_t iterations = 100;
  bool batch_runs = false;
  bool graph = true;
  bool profile = false;
  bool tune = false;
  bool json = false;
};

// From a standing start to the first result: Engine::load, create_context, the input upload and
// the first run (waited for). The CUDA context already exists (cudaFree(0) before the clock).
// Where the time goes: Engine::load's own phases (ModelSummary::load_phases), and a second run
// right after the first (not part of the total): first run - second run is what first launches
// cost (module loading under CUDA_MODULE_LOADING=LAZY, kernel attributes).
struct ColdLoad {
  double load_ms = 0, context_ms = 0, inputs_ms = 0, first_run_ms = 0, total_ms = 0;
  double second_run_ms = 0;
};

// Device memory: the runtime's accounting, and what cudaMemGetInfo saw before the load and after
// the first run (CUDA; 0 on CPU).
struct Memory {
  size_t weights = 0;    // the engine's weight allocation (CPU: the weights mapped from the file)
  size_t arena = 0, workspace = 0;  // one context's block
  size_t free_before = 0, free_after = 0, total = 0;
  bool measured = false;  // cudaMemGetInfo figures present
};

struct Stats {
  bool valid = false;
  double min = 0, median = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};

// Nearest-rank percentiles; the median averages the middle pair for an even count.
Stats summarize(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  auto rank = [&](double p) {
    size_t k = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
    return v[k == 0 ? 0 : std::min(k, n) - 1];
  };
  s.valid = true;
  s.min = v.front();
  s.max = v.back();
  s.median = n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  s.p90 = rank(90);
  s.p99 = rank(99);
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(n);
  return s;
}

struct Phase {
  std::string name;        // "plain" / "graph"
  bool ran = false;
  std::string error;       // why it did not run (capture failure)
  Stats latency, enqueue, gpu;
  double total_s = 0;      // wall time of the timed loop, final synchronization included
  double throughput = 0;   // timed runs per second
};

struct LayerRow {
  int op = -1;
  std::string name, type;
  double ms = 0;  // mean over the profiled runs
};

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

#if JET_HAVE_CUDA
Status cuda_status(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return Status::success();
  return Status(StatusCode::EXECUTION_FAILED, std::string(what) + ": " + cudaGetErrorString(err));
}

// Events for the timed runs, created before timing so the loop allocates nothing.
struct EventPool {
  std::vector<cudaEvent_t> start, stop;
  ~EventPool() {
    for (cudaEvent_t e : start) cudaEventDestroy(e);
    for (cudaEvent_t e : stop) cudaEventDestroy(e);
  }
  Status create(size_t n) {
    for (size_t i = 0; i < n; ++i) {
      cudaEvent_t a = nullptr, b = nullptr;
      Status st = cuda_status(cudaEventCreate(&a), "cudaEventCreate");
      if (!st.ok()) return st;
      start.push_back(a);
      st = cuda_status(cudaEventCreate(&b), "cudaEventCreate");
      if (!st.ok()) return st;
      stop.push_back(b);
    }
    return Status::success();
  }
};
#endif

Status time_phase(jet::ExecutionContext* ctx, const Options& opt, cudaStream_t stream, Phase* phase) {
  for (int64_t i = 0; i < opt.warmup; ++i) {
    Status st = ctx->run(stream);
    if (!st.ok()) return st;
  }
  Status st = synchronize(opt.backend, stream);
  if (!st.ok()) return st;

  const size_t n = static_cast<size_t>(opt.iterations);
  std::vector<double> latency, enqueue, gpu;
  latency.reserve(n);
  enqueue.reserve(n);
  gpu.reserve(n);
  using clock = std::chrono::steady_clock;

  if (opt.backend == jet::Backend::CPU) {
    const clock::time_point begin = clock::now();
    for (size_t i = 0; i < n; ++i) {
      const clock::time_point t0 = clock::now();
      st = ctx->run(stream);
      const clock::time_point t1 = clock::now();
      if (!st.ok()) return st;
      latency.push_back(seconds_between(t0, t1) * 1e3);
    }
    phase->total_s = seconds_between(begin, clock::now());
    // No enqueue time on CPU: a run returns when it is done (that is the latency).
  } else {
#if JET_HAVE_CUDA
    EventPool events;
    st = events.create(n);
    if (!st.ok()) return st;
    const clock::time_point begin = clock::now();
    for (size_t i = 0; i < n; ++i) {
      st = cuda_status(cudaEventRecord(events.start[i], stream), "cudaEventRecord");
      if (!st.ok()) return st;
      const clock::time_point t0 = clock::now();
      st = ctx->run(stream);
      const clock::time_point t1 = clock::now();
      if (!st.ok()) return st;
      st = cuda_status(cudaEventRecord(events.stop[i], stream), "cudaEventRecord");
      if (!st.ok()) return st;
      enqueue.push_back(seconds_between(t0, t1) * 1e3);
      if (!opt.batch_runs) {
        st = synchronize(opt.backend, stream);
        if (!st.ok()) return st;
        latency.push_back(seconds_between(t0, clock::now()) * 1e3);
      }
    }
    st = synchronize(opt.backend, stream);
    if (!st.ok()) return st;
    phase->total_s = seconds_between(begin, clock::now());
    for (size_t i = 0; i < n; ++i) {
      float ms = 0;
      st = cuda_status(cudaEventElapsedTime(&ms, events.start[i], events.stop[i]), "cudaEventElapsedTime");
      if (!st.ok()) return st;
      gpu.push_back(ms);
    }
#else
    return Status(StatusCode::NOT_SUPPORTED, "this jet-bench was built without CUDA");
#endif
  }
  phase->ran = true;
  phase->latency = summarize(latency);
  phase->enqueue = summarize(enqueue);
  phase->gpu = summarize(gpu);
  phase->throughput = phase->total_s > 0 ? static_cast<double>(n) / phase->total_s : 0.0;
  return Status::success();
}

// Profiled runs on their own context (profiling must not disturb the timed contexts): the mean
// time of each layer over `runs` runs, in execution order.
Status profile_layers(const jet::Engine& engine, cudaStream_t stream, int runs, std::vector<LayerRow>* rows) {
  std::unique_ptr<jet::ExecutionContext> ctx;
  Status st = engine.create_context(&ctx);
  if (!st.ok()) return st;
  st = ctx->set_profiling(true);
  if (!st.ok()) return st;
  rows->clear();
  std::vector<jet::LayerTime> times;
  for (int r = 0; r < runs; ++r) {
    st = ctx->run(stream);
    if (!st.ok()) return st;
    st = ctx->layer_times(&times);
    if (!st.ok()) return st;
    if (rows->empty()) {
      for (const jet::LayerTime& t : times) rows->push_back(LayerRow{t.op, t.name, t.type, 0.0});
    }
    if (times.size() != rows->size()) {
      return Status(StatusCode::INTERNAL_ERROR, "layer_times returned a different number of layers between runs");
    }
    for (size_t i = 0; i < times.size(); ++i) (*rows)[i].ms += times[i].ms / runs;
  }
  return Status::success();
}

std::string stats_json(const Stats& s) {
  if (!s.valid) return "null";
  return "{\"min\": " + json_number(s.min) + ", \"median\": " + json_number(s.median) +
         ", \"p90\": " + json_number(s.p90) + ", \"p99\": " + json_number(s.p99) + ", \"max\": " +
         json_number(s.max) + ", \"mean\": " + json_number(s.mean) + "}";
}

std::string phase_json(const Phase& p) {
  std::string s = "{\"ran\": " + std::string(p.ran ? "true" : "false");
  s += ", \"error\": " + (p.error.empty() ? std::string("null") : json_string(p.error));
  s += ", \"latency_ms\": " + stats_json(p.latency);
  s += ", \"enqueue_ms\": " + stats_json(p.enqueue);
  s += ", \"gpu_compute_ms\": " + stats_json(p.gpu);
  s += ", \"total_s\": " + json_number(p.total_s);
  s += ", \"throughput_per_s\": " + json_number(p.throughput) + "}";
  return s;
}

void print_stats(const char* label, const Stats& s) {
  if (!s.valid) return;
  std::printf("  %-12s min %.4f  median %.4f  p90 %.4f  p99 %.4f  max %.4f  mean %.4f ms\n", label, s.min,
              s.median, s.p90, s.p99, s.max, s.mean);
}

void print_phase(const Phase& p, const Options& opt) {
  if (!p.ran) {
    std::printf("%s: not run: %s\n", p.name.c_str(), p.error.c_str());
    return;
  }
  std::printf("%s:\n", p.name.c_str());
  print_stats("latency", p.latency);
  if (opt.backend == jet::Backend::CUDA) {
    print_stats("gpu compute", p.gpu);
    print_stats("enqueue", p.enqueue);
  }
  std::printf("  throughput   %.2f inferences/s (%lld runs in %.4f s)\n", p.throughput,
              static_cast<long long>(opt.iterations), p.total_s);
}

int usage_error(const std::string& message) { return jet::tools::usage_error("jet-bench", kUsage, message); }
int fail(const Status& st) { return jet::tools::fail("jet-bench", st); }

Status memory_info(size_t* free_bytes, size_t* total_bytes) {
#if JET_HAVE_CUDA
  return cuda_status(cudaMemGetInfo(free_bytes, total_bytes), "cudaMemGetInfo");
#else
  (void)free_bytes;
  (void)total_bytes;
  return Status(StatusCode::NOT_SUPPORTED, "this jet-bench was built without CUDA");
#endif
}

int bench(const Options& opt) {
  using clock = std::chrono::steady_clock;
  Memory memory;
  cudaStream_t stream = nullptr;
#if JET_HAVE_CUDA
  if (opt.backend == jet::Backend::CUDA) {
    // CUDA context creation is not part of the cold load: create it (and the stream) first.
    int devices = 0;
    const cudaError_t count_err = cudaGetDeviceCount(&devices);
    if (count_err != cudaSuccess || devices == 0) {
      cudaGetLastError();
      return fail(Status(StatusCode::EXECUTION_FAILED,
                         std::string("no CUDA device available (") +
                             (count_err != cudaSuccess ? cudaGetErrorString(count_err) : "no devices") +
                             "); run on the CPU with --device cpu"));
    }
    Status st = cuda_status(cudaFree(nullptr), "creating the CUDA context (cudaFree(0))");
    if (st.ok()) st = cuda_status(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    if (st.ok()) st = memory_info(&memory.free_before, &memory.total);
    if (!st.ok()) return fail(st);
  }
#endif
  ColdLoad cold;
  const clock::time_point t0 = clock::now();
  std::shared_ptr<jet::Engine> engine;
  std::unique_ptr<jet::ExecutionContext> ctx;
  jet::LoadOptions load;
  load.backend = opt.backend;
  load.tune = opt.tune;
  // A copy of the file: a model rewritten in place while jet-bench runs cannot crash it
  // (runtime/README.md, "Replacing a model file under a running process").
  load.copy_file = true;
  Status st = jet::Engine::load(opt.model, load, &engine);
  if (!st.ok()) return fail(st);
  const clock::time_point t1 = clock::now();
  st = engine->create_context(&ctx);
  if (!st.ok()) return fail(st);
  const clock::time_point t2 = clock::now();

  // Inputs: seeded uniform values, so the timed work is that of real data. Making them is the
  // caller's work, not the load's: only their upload is timed.
  std::vector<std::vector<uint8_t>> input_bytes(static_cast<size_t>(engine->num_inputs()));
  const clock::time_point t_made = clock::now();
  for (int i = 0; i < engine->num_inputs(); ++i)
    random_tensor_bytes(engine->tensor(engine->input(i)), 1 + static_cast<uint64_t>(i), &input_bytes[static_cast<size_t>(i)]);
  const clock::time_point t_upload = clock::now();
  for (int i = 0; i < engine->num_inputs(); ++i) {
    const std::vector<uint8_t>& bytes = input_bytes[static_cast<size_t>(i)];
    st = copy_to_tensor(opt.backend, ctx->tensor_data(engine->input(i)), bytes.data(), bytes.size());
    if (!st.ok()) return fail(st);
  }
  st = synchronize(opt.backend, stream);
  if (!st.ok()) return fail(st);
  const clock::time_point t_inputs = clock::now();
  st = ctx->run(stream);
  if (st.ok()) st = synchronize(opt.backend, stream);
  if (!st.ok()) return fail(st);
  const clock::time_point t3 = clock::now();
  st = ctx->run(stream);
  if (st.ok()) st = synchronize(opt.backend, stream);
  if (!st.ok()) return fail(st);
  const clock::time_point t4 = clock::now();
  auto ms_between = [](clock::time_point a, clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  cold.load_ms = ms_between(t0, t1);
  cold.context_ms = ms_between(t1, t2);
  cold.inputs_ms = ms_between(t_upload, t_inputs);
  cold.first_run_ms = ms_between(t_inputs, t3);
  cold.total_ms = ms_between(t0, t3) - ms_between(t_made, t_upload);
  cold.second_run_ms = ms_between(t3, t4);

  const jet::ModelSummary& sum = engine->summary();
  memory.weights = opt.backend == jet::Backend::CUDA ? sum.weight_allocation_bytes : sum.weight_bytes;
  memory.arena = (sum.arena_bytes + 255) / 256 * 256;
  memory.workspace = engine->context_memory_size() - std::min(memory.arena, engine->context_memory_size());
  if (opt.backend == jet::Backend::CUDA) {
    size_t total = 0;
    st = memory_info(&memory.free_after, &total);
    if (!st.ok()) return fail(st);
    memory.measured = true;
  }

  Phase plain;
  plain.name = opt.backend == jet::Backend::CUDA ? "plain (no CUDA graph)" : "cpu";
  st = time_phase(ctx.get(), opt, stream, &plain);
  if (!st.ok()) return fail(st);

  Phase graph;
  graph.name = "CUDA graph";
  const bool try_graph = opt.backend == jet::Backend::CUDA && opt.graph;
  // Launches per inference: the captured graph's kernel nodes on CUDA; on CPU each op is one
  // routine call. Unknown (-1) on CUDA without a graph.
  jet::ExecutionContext::GraphNodeCounts nodes;
  int kernels = opt.backend == jet::Backend::CPU ? engine->num_ops() : -1;
  if (try_graph) {
    st = ctx->capture(stream);
    if (st.ok()) {
      st = ctx->graph_node_counts(&nodes);
      if (!st.ok()) return fail(st);
      kernels = nodes.kernels;
      st = time_phase(ctx.get(), opt, stream, &graph);
      if (!st.ok()) return fail(st);
    } else {
      graph.error = "capture failed: " + st.to_string();
    }
  }

  std::vector<LayerRow> layers;
  int profile_runs = 0;
  double layer_total = 0;
  if (opt.profile) {
    profile_runs = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(opt.iterations, 20)));
    st = profile_layers(*engine, stream, profile_runs, &layers);
    if (!st.ok()) return fail(st);
    for (const LayerRow& r : layers) layer_total += r.ms;
  }

#if JET_HAVE_CUDA
  if (stream != nullptr) cudaStreamDestroy(stream);
#endif

  if (opt.json) {
    std::string s = "{\"model\": " + json_string(opt.model);
    s += ", \"device\": " + json_string(backend_name(opt.backend));
    s += ", \"warmup\": " + std::to_string(opt.warmup);
    s += ", \"iterations\": " + std::to_string(opt.iterations);
    s += ", \"batch_runs\": " + std::string(opt.batch_runs ? "true" : "false");
    s += ", \"ops\": " + std::to_string(engine->num_ops());
    s += ", \"kernels_per_inference\": " + (kernels >= 0 ? std::to_string(kernels) : std::string("null"));
    s += ", \"graph_nodes\": " + (try_graph && graph.error.empty()
                                      ? "{\"kernels\": " + std::to_string(nodes.kernels) + ", \"memcpys\": " +
                                            std::to_string(nodes.memcpys) + ", \"memsets\": " +
                                            std::to_string(nodes.memsets) + ", \"others\": " +
                                            std::to_string(nodes.others) + "}"
                                      : std::string("null"));
    s += ", \"memory\": {\"weights_bytes\": " + std::to_string(memory.weights) + ", \"arena_bytes\": " +
         std::to_string(memory.arena) + ", \"workspace_bytes\": " + std::to_string(memory.workspace) +
         ", \"runtime_total_bytes\": " + std::to_string(memory.weights + memory.arena + memory.workspace);
    if (memory.measured) {
      s += ", \"device_free_before\": " + std::to_string(memory.free_before) + ", \"device_free_after_first_run\": " +
           std::to_string(memory.free_after) + ", \"device_used_delta\": " +
           json_number(static_cast<double>(memory.free_before) - static_cast<double>(memory.free_after)) +
           ", \"device_total\": " + std::to_string(memory.total);
    } else {
      s += ", \"device_free_before\": null, \"device_free_after_first_run\": null, \"device_used_delta\": null";
    }
    s += "}";
    s += ", \"cold_load_ms\": {\"load\": " + json_number(cold.load_ms) + ", \"context\": " +
         json_number(cold.context_ms) + ", \"inputs\": " + json_number(cold.inputs_ms) + ", \"first_run\": " +
         json_number(cold.first_run_ms) + ", \"total\": " + json_number(cold.total_ms) + ", \"second_run\": " +
         json_number(cold.second_run_ms) + ", \"load_phases\": [";
    for (size_t i = 0; i < sum.load_phases.size(); ++i) {
      s += std::string(i ? ", " : "") + "{\"phase\": " + json_string(sum.load_phases[i].name) + ", \"ms\": " +
           json_number(sum.load_phases[i].ms) + "}";
    }
    const char* module_loading = std::getenv("CUDA_MODULE_LOADING");
    s += "], \"cuda_module_loading\": " + (module_loading ? json_string(module_loading) : std::string("null")) + "}";
    s += ", \"tuning\": {\"tuned_at_load\": " + std::string(sum.tuned_at_load ? "true" : "false") +
         ", \"tuning_ms\": " + json_number(sum.tuning_ms) + ", \"stored_choices_used\": " +
         std::string(sum.stored_choices_used ? "true" : "false") + ", \"tuned_on\": " +
         (sum.has_tuned_on ? json_string(sum.tuned_on.name + " " + std::to_string(sum.tuned_on.cc_major) + "." +
                                         std::to_string(sum.tuned_on.cc_minor))
                           : std::string("null")) +
         ", \"convs_changed\": " + std::to_string(sum.tuned_convs_changed) + ", \"network_ms_tuned\": " +
         (sum.tuned_network_ms >= 0 ? json_number(sum.tuned_network_ms) : std::string("null")) +
         ", \"network_ms_untuned\": " +
         (sum.untuned_network_ms >= 0 ? json_number(sum.untuned_network_ms) : std::string("null")) + "}";
    s += ", \"notes\": [";
    for (size_t i = 0; i < sum.notes.size(); ++i) s += (i ? ", " : "") + json_string(sum.notes[i]);
    s += "]";
    s += ", \"plain\": " + phase_json(plain);
    s += ", \"graph\": " + (try_graph ? phase_json(graph) : std::string("null"));
    if (opt.profile) {
      s += ", \"profile\": {\"runs\": " + std::to_string(profile_runs) + ", \"total_ms\": " + json_number(layer_total) +
           ", \"layers\": [";
      for (size_t i = 0; i < layers.size(); ++i) {
        const LayerRow& r = layers[i];
        s += std::string(i > 0 ? ", " : "") + "{\"op\": " + std::to_string(r.op) + ", \"name\": " + json_string(r.name) +
             ", \"type\": " + json_string(r.type) + ", \"ms\": " + json_number(r.ms) + ", \"percent\": " +
             json_number(layer_total > 0 ? 100.0 * r.ms / layer_total : 0.0) + "}";
      }
      s += "]}";
    } else {
      s += ", \"profile\": null";
    }
    s += "}";
    std::printf("%s\n", s.c_str());
    return 0;
  }

  std::printf("jet-bench: %s on %s: %d ops, %lld warm-up + %lld timed runs per phase%s\n", printable(opt.model).c_str(),
              backend_name(opt.backend), engine->num_ops(), static_cast<long long>(opt.warmup),
              static_cast<long long>(opt.iterations), opt.batch_runs ? ", batched" : "");
  for (const std::string& note : sum.notes) std::printf("note: %s\n", note.c_str());
  print_phase(plain, opt);
  if (try_graph) print_phase(graph, opt);
  if (kernels >= 0) {
    std::printf("kernels per inference: %d", kernels);
    if (opt.backend == jet::Backend::CPU) {
      std::printf(" (CPU: one routine call per op)\n");
    } else {
      std::printf(" (CUDA graph nodes: %d kernels, %d memcpy, %d memset, %d other)\n", nodes.kernels, nodes.memcpys,
                  nodes.memsets, nodes.others);
    }
  } else {
    std::printf("kernels per inference: unknown (no CUDA graph captured)\n");
  }
  std::printf("memory (runtime): weights %s + arena %s + workspace %s = %s\n", format_bytes(memory.weights).c_str(),
              format_bytes(memory.arena).c_str(), format_bytes(memory.workspace).c_str(),
              format_bytes(memory.weights + memory.arena + memory.workspace).c_str());
  if (memory.measured) {
    std::printf("memory (cudaMemGetInfo): %s used from before the load to after the first run\n",
                format_bytes(memory.free_before > memory.free_after ? memory.free_before - memory.free_after : 0).c_str());
  }
  std::printf("cold load to first result: %.2f ms (load %.2f, context %.2f, inputs %.2f, first run %.2f)%s\n",
              cold.total_ms, cold.load_ms, cold.context_ms, cold.inputs_ms, cold.first_run_ms,
              opt.backend == jet::Backend::CUDA ? ", CUDA context creation excluded" : "");
  std::printf("  load phases:");
  for (const auto& ph : sum.load_phases) std::printf(" %s %.2f;", ph.name.c_str(), ph.ms);
  std::printf("\n  second run %.2f ms (first run - second run: what first launches cost)\n", cold.second_run_ms);
  if (sum.tuned_at_load) {
    std::printf("tuning at load: %.1f ms (part of load), %d convolutions changed", sum.tuning_ms,
                sum.tuned_convs_changed);
    if (sum.untuned_network_ms >= 0) {
      std::printf("; whole network at load: tuned %.4f ms, untuned %.4f ms (%s)", sum.tuned_network_ms,
                  sum.untuned_network_ms, sum.tuned_convs_changed > 0 ? "tuned kept" : "untuned kept");
    }
    std::printf("\n");
  }
  if (sum.stored_choices_used) {
    std::printf("convolution choices: stored, tuned on this device (%s %d.%d)\n", sum.tuned_on.name.c_str(),
                sum.tuned_on.cc_major, sum.tuned_on.cc_minor);
  }
  if (opt.profile) {
    std::printf("per-layer times (mean of %d profiled runs), total %.4f ms:\n", profile_runs, layer_total);
    std::printf("  %4s  %-32s %-12s %10s %7s\n", "op", "name", "type", "ms", "%");
    for (const LayerRow& r : layers) {
      std::printf("  %4d  %-32s %-12s %10.4f %6.2f%%\n", r.op, printable(r.name).c_str(), r.type.c_str(), r.ms,
                  layer_total > 0 ? 100.0 * r.ms / layer_total : 0.0);
    }
    std::vector<LayerRow> sorted = layers;
    std::stable_sort(sorted.begin(), sorted.end(), [](const LayerRow& a, const LayerRow& b) { return a.ms > b.ms; });
    const size_t top = std::min<size_t>(10, sorted.size());
    std::printf("top %zu layers:\n", top);
    for (size_t i = 0; i < top; ++i) {
      const LayerRow& r = sorted[i];
      std::printf("  %4d  %-32s %-12s %10.4f %6.2f%%\n", r.op, printable(r.name).c_str(), r.type.c_str(), r.ms,
                  layer_total > 0 ? 100.0 * r.ms / layer_total : 0.0);
    }
  }
  return 0;
}

}  // namespace

static int tool_main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (print_usage_if_help(arg, kUsage)) return 0;
    if (arg == "--device") {
      if (!has_value || !parse_backend(argv[++i], &opt.backend)) return usage_error("--device takes cpu or cuda");
    } else if (arg == "--warmup") {
      if (!has_value || !parse_int64(argv[++i], 0, 1000000, &opt.warmup)) {
        return usage_error("--warmup takes an integer in [0, 1000000]");
      }
    } else if (arg == "--iterations") {
      if (!has_value || !parse_int64(argv[++i], 1, 1000000, &opt.iterations)) {
        return usage_error("--iterations takes an integer in [1, 1000000]");
      }
    } else if (arg == "--batch-runs") {
      opt.batch_runs = true;
    } else if (arg == "--no-graph") {
      opt.graph = false;
    } else if (arg == "--profile") {
      opt.profile = true;
    } else if (arg == "--tune") {
      opt.tune = true;
    } else if (arg == "--json") {
      opt.json = true;
    } else {
      std::string error;
      if (!take_model_argument(arg, &opt.model, &error)) return usage_error(error);
    }
  }
  if (opt.model.empty()) return usage_error("no model file given");
  return bench(opt);
}

// No exception escapes main (cli_common.h run_tool).
int main(int argc, char** argv) { return jet::tools::run_tool("jet-bench", tool_main, argc, argv); }
