// Convolution choices by measurement: the device identity that tuned files record, tuning at
// load (LoadOptions::tune), and write_tuned_model (what jet-tune writes).
//
// Tuning runs find_conv_forward_algo for every convolution on scratch buffers of the op's real
// descriptors (random values), allocated once for the largest op and freed before load returns,
// so contexts and runs are untouched: run() still allocates nothing.
#include "tuning.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cuda_util.h"
#include "device_memory.h"
#include "format.h"
#include "jet/schema/model_generated.h"
#include "loader.h"

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
  const ConvPrepared& c = p.conv;
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
  const Handle& h = impl->handle;
  const Backend backend = h.backend();
#if defined(JET_HAVE_CUDA)
  std::unique_ptr<DeviceGuard> guard;
  if (backend == Backend::CUDA) guard.reset(new DeviceGuard(impl->options.device));
#endif
  // One scratch block for the largest op: x, w, y and the workspace, each 256-aligned.
  std::vector<size_t> op_workspace(impl->ops.size(), 0);
  std::vector<int> op_results(impl->ops.size(), 0);
  size_t x_max = 0, w_max = 0, y_max = 0, ws_max = 0;
  int results_max = 0;
  for (size_t i = 0; i < impl->ops.size(); ++i) {
    PreparedOp& p = impl->ops[i];
    if (p.kind != OpKind::CONV) continue;
    const size_t limit = std::min(p.conv.workspace_limit, impl->options.tune_workspace_limit);
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
  JET_RT_TRY(scratch.allocate(ws_off + align_up(ws_max, a)));
  // Random x and w in each op's dtype (refilled only when the dtype changes from op to op);
  // timings do not depend on the values as long as they are finite.
  std::vector<uint8_t> host(std::max(x_max, w_max));
  bool filled = false;
  DType filled_dtype = DType::F32;
  std::vector<ConvAlgoPerf> perf(static_cast<size_t>(results_max));
  for (size_t i = 0; i < impl->ops.size(); ++i) {
    PreparedOp& p = impl->ops[i];
    if (p.kind != OpKind::CONV) continue;
    ConvPrepared& c = p.conv;
    OpInfo& info = impl->op_infos[i];
    if (!filled || filled_dtype != p.in_descs[0].dtype()) {
      filled = true;
      filled_dtype = p.in_descs[0].dtype();
      fill_random(filled_dtype, host.size(), host.data());
      JET_RT_TRY(copy_in(backend, scratch.get() + x_off, host.data(), x_max));
      JET_RT_TRY(copy_in(backend, scratch.get() + w_off, host.data(), w_max));
    }
    const ConvDesc heuristic_conv = c.conv.with_tactic(0);
    int returned = 0;
    const Status st = find_conv_forward_algo(h, p.in_descs[0], scratch.get() + x_off, c.filter, scratch.get() + w_off,
                                             heuristic_conv, p.out_desc, scratch.get() + y_off,
                                             op_workspace[i] > 0 ? scratch.get() + ws_off : nullptr, op_workspace[i],
                                             op_results[i], &returned, perf.data());
    if (!st.ok()) return Status(st.code(), op_label(*impl, static_cast<int>(i)) + ": tuning: " + st.message());
    // The heuristic's choice under the op's policy, to report what tuning gained.
    ConvAlgo heuristic = c.algo;
    const size_t limit = std::min(c.workspace_limit, impl->options.tune_workspace_limit);
    if (!choose_conv_forward_algo(h, p.in_descs[0], c.filter, heuristic_conv, p.out_desc, c.preference, limit, &heuristic)
             .ok()) {
      heuristic = c.algo;
    }
    const ConvAlgoPerf* best = nullptr;
    for (int r = 0; r < returned; ++r) {
      const ConvAlgoPerf& q = perf[static_cast<size_t>(r)];
      if (!q.status.ok()) continue;
      if (!best && q.workspace_bytes <= limit) best = &q;
      if (q.algo == heuristic && q.tactic == 0) info.heuristic_ms = q.time_ms;
    }
    if (!best) {
      impl->summary.notes.push_back(op_label(*impl, static_cast<int>(i)) +
                                    ": tuning found no algorithm that runs within the workspace limit; "
                                    "it keeps the heuristic's choice");
      continue;
    }
    c.algo = best->algo;
    c.conv = c.conv.with_tactic(best->tactic);
    p.workspace_bytes = best->workspace_bytes;
    p.refused_choice.clear();
    info.algo = conv_algo_name(c.algo);
    info.tactic = best->tactic;
    info.workspace_bytes = best->workspace_bytes;
    info.tuned_ms = best->time_ms;
  }
  impl->summary.tuned_at_load = true;
  impl->summary.tuning_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return Status();
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
  JET_RT_TRY(rt::check_container(static_cast<const uint8_t*>(data), size, true, &model));
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
    if (file_conv != (e.ops[i].kind == rt::OpKind::CONV)) {
      return bad("op " + std::to_string(i) + " '" + op.name + "' differs from the engine's: not the model it was loaded from");
    }
    if (!file_conv) continue;
    fb::ConvParamsT* cp = op.params.AsConvParams();
    cp->algo = static_cast<fb::ConvAlgo>(static_cast<int32_t>(e.ops[i].conv.algo));
    cp->tactic = e.ops[i].conv.conv.tactic();
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
