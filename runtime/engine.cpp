// Engine::load: the loader's steps in order (loader.h), then weights and the summary; and the
// Engine's accessors. Contexts are created in context.cpp.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <system_error>
#include <thread>
#include <utility>

#include "cuda_util.h"
#include "device_memory.h"
#include "format.h"
#include "loader.h"
#include "ops.h"
#include "tuning.h"

namespace jet {

namespace {

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

// Metadata the engine reports (ModelSummary): producer, plan, labels, properties, sizes.
void fill_summary(const fb::Model& m, size_t file_size, Engine::Impl* impl) {
  ModelSummary& s = impl->summary;
  s.schema_major = m.schema_major();
  s.schema_minor = m.schema_minor();
  if (const fb::Producer* p = m.producer()) {
    if (p->name()) s.producer = p->name()->str();
    if (p->version()) s.producer_version = p->version()->str();
    if (p->source_name()) s.source_name = p->source_name()->str();
    if (p->source_hash()) s.source_hash = p->source_hash()->str();
  }
  s.file_bytes = file_size;
  const fb::MemoryPlan* plan = m.plan();  // present: check_graph requires it
  s.arena_bytes = static_cast<size_t>(plan->arena_bytes());
  s.lower_bound_bytes = static_cast<size_t>(plan->lower_bound_bytes());
  s.planner = plan->planner() == fb::Planner::Naive ? "Naive" : plan->planner() == fb::Planner::GreedyBestFit
                                                                     ? "GreedyBestFit"
                                                                     : "unknown";
  std::vector<char> buffer_counted(m.buffers() ? m.buffers()->size() : 0, 0);
  for (const rt::TensorRecord& t : impl->tensors) {
    if (!t.constant) continue;
    s.parameter_count += t.desc.elements();
    if (!buffer_counted[t.buffer]) {
      buffer_counted[t.buffer] = 1;
      s.weight_bytes += t.bytes;
    }
  }
  if (const fb::Metadata* md = m.metadata()) {
    if (md->labels()) {
      for (flatbuffers::uoffset_t i = 0; i < md->labels()->size(); ++i) {
        const flatbuffers::String* l = md->labels()->Get(i);
        s.labels.push_back(l ? l->str() : std::string());
      }
    }
    if (md->properties()) {
      for (flatbuffers::uoffset_t i = 0; i < md->properties()->size(); ++i) {
        const fb::KeyValue* kv = md->properties()->Get(i);
        s.properties.emplace_back(kv->key() ? kv->key()->str() : std::string(),
                                  kv->value() ? kv->value()->str() : std::string());
      }
    }
  }
}

// Metadata.preprocessing: each entry must describe a rank-4 graph input image (C, H, W from its
// dims in the layout it names) with one finite mean and one finite non-zero std per channel (or
// neither: no normalization), a size that is the input's (0 in files before schema 1.3: taken
// from the dims), a known resize mode, crop_fraction in (0, 1] and pad_value in [0, 255]; else
// BAD_PARAM naming the entry. jet-run relies on these when it turns an image file into an input.
Status read_preprocessing(const fb::Model& m, Engine::Impl* impl) {
  const fb::Metadata* md = m.metadata();
  if (md == nullptr || md->preprocessing() == nullptr) return Status();
  for (flatbuffers::uoffset_t i = 0; i < md->preprocessing()->size(); ++i) {
    const fb::Preprocessing* p = md->preprocessing()->Get(i);
    const std::string label = "metadata.preprocessing[" + std::to_string(i) + "]";
    auto bad = [&](const std::string& why) { return Status(StatusCode::BAD_PARAM, label + ": " + why); };
    ImagePreprocessing pre;
    pre.input = p->input();
    if (std::find(impl->inputs.begin(), impl->inputs.end(), pre.input) == impl->inputs.end()) {
      return bad("tensor " + std::to_string(pre.input) + " is not a graph input");
    }
    const TensorInfo& info = impl->tensor_infos[static_cast<size_t>(pre.input)];
    if (info.dims.size() != 4) return bad("input '" + info.name + "' is not an image (rank 4) input");
    if (p->layout() != fb::ImageLayout::NCHW && p->layout() != fb::ImageLayout::NHWC) return bad("unknown layout");
    if (p->channel_order() != fb::ChannelOrder::RGB && p->channel_order() != fb::ChannelOrder::BGR) {
      return bad("unknown channel order");
    }
    pre.nhwc = p->layout() == fb::ImageLayout::NHWC;
    pre.bgr = p->channel_order() == fb::ChannelOrder::BGR;
    const int64_t channels = pre.nhwc ? info.dims[3] : info.dims[1];
    const int64_t height = pre.nhwc ? info.dims[1] : info.dims[2];
    const int64_t width = pre.nhwc ? info.dims[2] : info.dims[3];
    if (channels != 3) {
      return bad("input '" + info.name + "' has " + std::to_string(channels) + " channels in its " +
                 (pre.nhwc ? "NHWC" : "NCHW") + " dims; image preprocessing needs 3");
    }
    if ((p->height() != 0 || p->width() != 0) && (p->height() != height || p->width() != width)) {
      return bad("size " + std::to_string(p->height()) + "x" + std::to_string(p->width()) + " is not input '" +
                 info.name + "''s " + std::to_string(height) + "x" + std::to_string(width));
    }
    pre.height = static_cast<int>(height);
    pre.width = static_cast<int>(width);
    const size_t n_mean = p->mean() ? p->mean()->size() : 0, n_std = p->std() ? p->std()->size() : 0;
    if (n_mean != n_std || (n_mean != 0 && n_mean != static_cast<size_t>(channels))) {
      return bad(std::to_string(n_mean) + " means and " + std::to_string(n_std) + " stds for " +
                 std::to_string(channels) + " channels");
    }
    for (flatbuffers::uoffset_t c = 0; c < n_mean; ++c) {
      const float mean = p->mean()->Get(c), stdv = p->std()->Get(c);
      if (!std::isfinite(mean) || !std::isfinite(stdv) || stdv == 0.0f) {
        return bad("mean and std must be finite and std non-zero (channel " + std::to_string(c) + ")");
      }
      pre.mean.push_back(mean);
      pre.std.push_back(stdv);
    }
    switch (p->resize()) {
      case fb::ResizeMode::Stretch: pre.resize = ImagePreprocessing::Resize::STRETCH; break;
      case fb::ResizeMode::CenterCrop: pre.resize = ImagePreprocessing::Resize::CENTER_CROP; break;
      case fb::ResizeMode::Letterbox: pre.resize = ImagePreprocessing::Resize::LETTERBOX; break;
      default: return bad("unknown resize mode " + std::to_string(static_cast<int>(p->resize())));
    }
    pre.crop_fraction = p->crop_fraction();
    pre.pad_value = p->pad_value();
    if (!(pre.crop_fraction > 0.0f && pre.crop_fraction <= 1.0f)) return bad("crop_fraction must be in (0, 1]");
    if (!(pre.pad_value >= 0.0f && pre.pad_value <= 255.0f)) return bad("pad_value must be in [0, 255]");
    impl->summary.preprocessing.push_back(pre);
  }
  return Status();
}

// Whether the stored convolution choices apply here: Model.tuned_on (schema 1.2) against this
// device. Tuned elsewhere: the heuristic, said once in the notes. Tuning at load ignores them.
Status choose_stored_choices(const fb::Model& m, Engine::Impl* impl) {
  // The device's name costs a cudaGetDeviceProperties call: asked only when needed.
  const fb::TunedDevice* t = m.tuned_on();
  if (t || impl->options.tune) impl->identity = rt::device_identity(impl->handle);
  if (!t) return Status();
  ModelSummary& s = impl->summary;
  s.has_tuned_on = true;
  s.tuned_on.name = t->name() ? t->name()->str() : std::string();
  s.tuned_on.cc_major = t->cc_major();
  s.tuned_on.cc_minor = t->cc_minor();
  if (s.tuned_on.name.empty() || s.tuned_on.name.size() > 256 || s.tuned_on.cc_major < 0 || s.tuned_on.cc_minor < 0) {
    return Status(StatusCode::BAD_PARAM, "tuned_on names no valid device (name '" + s.tuned_on.name.substr(0, 256) +
                                             "', compute capability " + std::to_string(s.tuned_on.cc_major) + "." +
                                             std::to_string(s.tuned_on.cc_minor) + ")");
  }
  if (impl->options.tune) return Status();  // measured again below
  if (rt::same_device(s.tuned_on, impl->identity)) {
    impl->stored_choices = rt::StoredChoices::MATCH;
    s.stored_choices_used = true;
  } else {
    impl->stored_choices = rt::StoredChoices::MISMATCH;
    s.notes.push_back("the model was tuned on " + rt::device_text(s.tuned_on) + ", this is " +
                      rt::device_text(impl->identity) +
                      ": its stored convolution choices are not used, the heuristic chooses (re-tune with "
                      "jet-tune on this device)");
  }
  return Status();
}

// dst[k][t][c] = src[k][c][t]. The file's weights are 64-byte aligned and the staging block
// 256-byte aligned, so the element-width accesses are aligned.
template <class E>
void reorder_kcrs_to_krsc(const E* src, size_t k, size_t c, size_t taps, E* dst) {
  for (size_t ki = 0; ki < k; ++ki, src += c * taps, dst += c * taps)
    for (size_t ti = 0; ti < taps; ++ti)
      for (size_t ci = 0; ci < c; ++ci) dst[ti * c + ci] = src[ci * taps + ti];
}

// Engine::load's phases with their wall times (ModelSummary::load_phases): mark(name) closes the
// phase that began at the previous mark.
class PhaseClock {
 public:
  explicit PhaseClock(std::vector<ModelSummary::LoadPhase>* out) : out_(out), last_(std::chrono::steady_clock::now()) {}
  void mark(const char* name) {
    const auto now = std::chrono::steady_clock::now();
    out_->push_back({name, std::chrono::duration<double, std::milli>(now - last_).count()});
    last_ = now;
  }

 private:
  std::vector<ModelSummary::LoadPhase>* out_;
  std::chrono::steady_clock::time_point last_;
};

#if defined(JET_HAVE_CUDA)
// The weights as the device holds them: per buffer (in `order`, by increasing slot), the tensor
// that fills it, where its bytes are in the file, and the reorder of KRSC filters:
// reorder(t, dst, begin, count) writes bytes [begin, begin + count) of tensor t's KRSC form, whole
// output channels (row_bytes(t) each).
struct WeightSource {
  const std::vector<rt::TensorRecord>& tensors;
  const std::vector<int>& order;
  const std::vector<size_t>& slot;
  std::function<const uint8_t*(int)> src_of;
  std::function<void(int, uint8_t*, size_t, size_t)> reorder;
  std::function<size_t(int)> row_bytes;
};

// The upload through two pinned chunks that take turns: the host gathers (and reorders) the next
// chunk while the DMA engine copies the last one. No staging block of the whole size (whose fresh
// pages cost a fault each), no pageable cudaMemcpy, one wait at the end. ALLOC_FAILED when no
// pinned memory is to be had.
Status upload_pinned(const WeightSource& w, size_t total, size_t largest_row, void* device, PhaseClock* phases) {
  // Chunks of 1 MiB: pinning costs ~0.45 ms a MiB on the H200 test machine (two 4.7 MiB chunks,
  // sized for ResNet-50's largest filter when filters were reordered whole, took 3-7 ms), and the
  // host's gather, not the DMA, bounds the upload. A chunk holds the largest output channel's
  // filter (reorders are split by output channel) plus a slot's padding (gather_in_chunks).
  const size_t cap = std::max(std::min(size_t(1) << 20, align_up(total, format::kDeviceWeightAlignment)),
                              align_up(largest_row + format::kDeviceWeightAlignment, format::kDeviceWeightAlignment));
  void* ring_memory = nullptr;
  JET_RETURN_IF_ERROR(rt::pinned_host_alloc(2 * cap, &ring_memory, "the weight upload's pinned staging"));
  uint8_t* ring[2] = {static_cast<uint8_t*>(ring_memory), static_cast<uint8_t*>(ring_memory) + cap};
  cudaStream_t stream = nullptr;
  cudaEvent_t done[2] = {nullptr, nullptr};
  cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  for (int i = 0; i < 2 && e == cudaSuccess; ++i) e = cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming);
  phases->mark("weights: pinned staging allocation");
  std::vector<rt::UploadPiece> pieces;
  for (int t : w.order) {
    const rt::TensorRecord& r = w.tensors[static_cast<size_t>(t)];
    rt::UploadPiece p;
    p.offset = w.slot[static_cast<size_t>(r.buffer)];
    p.bytes = r.bytes;
    if (r.filter_krsc) {
      p.fill = [&w, t](uint8_t* dst, size_t begin, size_t count) { w.reorder(t, dst, begin, count); };
      p.granule = w.row_bytes(t);
    } else {
      p.src = w.src_of(t);
    }
    pieces.push_back(std::move(p));
  }
  uint8_t* dev = static_cast<uint8_t*>(device);
  auto send = [&](int c, size_t offset, const uint8_t* host, size_t bytes) {
    if (e == cudaSuccess) e = cudaMemcpyAsync(dev + offset, host, bytes, cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess) e = cudaEventRecord(done[c], stream);
    return e == cudaSuccess;
  };
  auto wait = [&](int c) {
    if (e == cudaSuccess) e = cudaEventSynchronize(done[c]);
    return e == cudaSuccess;
  };
  if (e == cudaSuccess) rt::gather_in_chunks(pieces, format::kDeviceWeightAlignment, ring, cap, send, wait);
  phases->mark("weights: gather and upload (overlapped)");
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);  // gather_in_chunks waited: nothing left
  const cudaError_t failed = e;
  for (cudaEvent_t ev : done) {
    if (ev) cudaEventDestroy(ev);
  }
  if (stream) cudaStreamDestroy(stream);
  rt::pinned_host_free(ring_memory);
  if (failed != cudaSuccess) return rt::cuda_error("uploading the weights (cudaMemcpyAsync from pinned memory)", failed);
  return Status();
}

// The fallback: one pageable staging block of the device layout, one cudaMemcpy.
Status upload_pageable(const WeightSource& w, size_t total, void* device, PhaseClock* phases) {
  void* staging = nullptr;
  JET_RETURN_IF_ERROR(rt::host_alloc(total, &staging, "the weight upload staging buffer"));
  for (int t : w.order) {
    const rt::TensorRecord& r = w.tensors[static_cast<size_t>(t)];
    uint8_t* dst = static_cast<uint8_t*>(staging) + w.slot[static_cast<size_t>(r.buffer)];
    if (r.bytes == 0) continue;
    if (r.filter_krsc) {
      w.reorder(t, dst, 0, r.bytes);
    } else {
      std::memcpy(dst, w.src_of(t), r.bytes);
    }
  }
  phases->mark("weights: host staging (pageable)");
  cudaError_t e = cudaMemcpy(device, staging, total, cudaMemcpyHostToDevice);
  // From pageable memory cudaMemcpy may return once the bytes are staged, before the DMA
  // reaches the device; the copy is ordered on the legacy default stream only, and runs on a
  // non-blocking stream would not wait for it (a test saw half-uploaded weights under load).
  // Loading is not on the inference path: wait for the upload here.
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  rt::host_free(staging);
  phases->mark("weights: upload (pageable)");
  if (e != cudaSuccess) return rt::cuda_error("uploading the weights (cudaMemcpy)", e);
  return Status();
}
#endif

// Weight pointers for the kernels. CPU: in place in the file (64-aligned offsets of a 64-aligned
// base). CUDA: one device allocation, each buffer in a 256-aligned slot, filled by one upload.
Status place_weights(const fb::Model& m, Engine::Impl* impl, PhaseClock* phases) {
  const size_t nt = impl->tensors.size();
  impl->weight_ptrs.assign(nt, nullptr);
  const auto* buffers = m.buffers();
  if (impl->handle.backend() == Backend::CPU) {
    (void)phases;  // marked by the caller: nothing is copied
    for (size_t t = 0; t < nt; ++t) {
      const rt::TensorRecord& r = impl->tensors[t];
      if (r.constant) {
        impl->weight_ptrs[t] = impl->file.data() + buffers->Get(static_cast<flatbuffers::uoffset_t>(r.buffer))->offset();
      }
    }
    return Status();
  }
#if defined(JET_HAVE_CUDA)
  const size_t nb = buffers ? buffers->size() : 0;
  std::vector<size_t> slot(nb, SIZE_MAX);
  std::vector<int> order;  // per buffer in slot order: the tensor that fills it
  size_t total = 0, largest_row = 0;
  for (size_t t = 0; t < nt; ++t) {
    const rt::TensorRecord& r = impl->tensors[t];
    if (!r.constant || slot[r.buffer] != SIZE_MAX) continue;
    slot[r.buffer] = total;
    order.push_back(static_cast<int>(t));
    if (r.filter_krsc && r.desc.dim(0) > 0) largest_row = std::max(largest_row, r.bytes / static_cast<size_t>(r.desc.dim(0)));
    total = align_up(total + r.bytes, format::kDeviceWeightAlignment);  // bytes <= file size
  }
  if (total == 0) return Status();
  rt::DeviceGuard guard(impl->options.device);
  void* device = nullptr;
  JET_RETURN_IF_ERROR(rt::device_alloc(total, &device, "the model's weights"));
  phases->mark("weights: device allocation");
  // Where each buffer's bytes are in the file, and the KRSC reorder of a KCRS filter.
  auto src_of = [&](int t) {
    const rt::TensorRecord& r = impl->tensors[static_cast<size_t>(t)];
    return impl->file.data() + buffers->Get(static_cast<flatbuffers::uoffset_t>(r.buffer))->offset();
  };
  // Bytes of one output channel's filter (K > 0 where a reorder has bytes to write).
  auto row_bytes = [&](int t) {
    const rt::TensorRecord& r = impl->tensors[static_cast<size_t>(t)];
    return r.desc.dim(0) > 0 ? r.bytes / static_cast<size_t>(r.desc.dim(0)) : 0;
  };
  auto reorder = [&](int t, uint8_t* dst, size_t begin, size_t count) {
    const rt::TensorRecord& r = impl->tensors[static_cast<size_t>(t)];
    const uint8_t* src = src_of(t) + begin;  // output channel begin / row_bytes(t), in both layouts
    // K, C, taps -> K, taps, C (the buffer's only tensor: prepare_ops checked), in the element's
    // width: a memcpy call per element made ResNet-50's load 100 ms slower.
    const size_t k = count / row_bytes(t), c = static_cast<size_t>(r.desc.dim(1));
    const size_t taps = static_cast<size_t>(r.desc.elements()) / (static_cast<size_t>(r.desc.dim(0)) * c);
    if (dtype_size(r.desc.dtype()) == 2)
      reorder_kcrs_to_krsc(reinterpret_cast<const uint16_t*>(src), k, c, taps, reinterpret_cast<uint16_t*>(dst));
    else
      reorder_kcrs_to_krsc(reinterpret_cast<const uint32_t*>(src), k, c, taps, reinterpret_cast<uint32_t*>(dst));
  };
  const WeightSource source{impl->tensors, order, slot, src_of, reorder, row_bytes};
  Status st = upload_pinned(source, total, largest_row, device, phases);
  if (st.code() == StatusCode::ALLOC_FAILED) {
    // No pinned memory to be had (a Jetson's pinned limit): one pageable staging block instead.
    st = upload_pageable(source, total, device, phases);
  }
  if (!st.ok()) {
    rt::device_free(device);
    return st;
  }
  impl->device_weights = device;
  impl->device_weight_bytes = total;
  impl->summary.weight_allocation_bytes = total;
  for (size_t t = 0; t < nt; ++t) {
    const rt::TensorRecord& r = impl->tensors[t];
    if (r.constant) impl->weight_ptrs[t] = static_cast<uint8_t*>(device) + slot[r.buffer];
  }
  return Status();
#else
  return Status(StatusCode::NOT_SUPPORTED, "this build of jet has no CUDA backend");
#endif
}

// The most workspace any convolution algorithm of any backend can ask for one conv: its im2col
// matrix twice over (the GEMM packs it too), Winograd-style transforms of the input and the output
// at 16 values per element, transformed filters at 16 per weight, in f32, plus 1 MiB of tables
// and alignment. Generous on purpose: it exists to refuse a plan whose workspace no convolution
// of the model could use, however and wherever it was tuned.
uint64_t conv_workspace_bound(const rt::PreparedOp& op) {
  const FilterDesc& w = op.data.as<rt::ConvPrepared>().filter;
  const uint64_t k = static_cast<uint64_t>(std::max<int64_t>(w.k(), 1));
  const uint64_t x_elements = static_cast<uint64_t>(op.in_descs.empty() ? 0 : op.in_descs[0].elements());
  const uint64_t y_elements = static_cast<uint64_t>(op.out_desc.elements());
  const uint64_t w_elements = static_cast<uint64_t>(w.elements());
  const uint64_t groups = op.in_descs.empty() || w.c() <= 0
                              ? 1
                              : static_cast<uint64_t>(std::max<int64_t>(op.in_descs[0].dim(1) / w.c(), 1));
  // For a hostile file the products can pass 64 bits: long double, then capped.
  const long double im2col = static_cast<long double>(w_elements / k) * static_cast<long double>(y_elements / k) *
                             static_cast<long double>(groups);
  const long double values = 2 * im2col + 16.0L * (x_elements + y_elements) + 16.0L * w_elements;
  const long double bytes = 4 * values + (1 << 20);
  return bytes > 1e18L ? uint64_t(1e18) : static_cast<uint64_t>(bytes);
}

// The kernel library's large CUDA modules, loaded on a second thread while the model is read and
// checked (load_cuda_modules). With CUDA's lazy module loading the first run would otherwise load
// them: ResNet-50 f16's first run took 13.6-24 ms on the H200 test machine, 1.0 ms with every
// module loaded beforehand (bench/NOTES.md). The thread loads the modules every network uses first
// (CudaModules::MOST), then waits to be told whether the model has f32 convolutions (need_f32),
// whose engine is a module of its own that an f16 model never loads. The backend handle is made
// before the thread starts: a module load holds a driver lock that the handle's module queries
// would wait for (18 ms in a ResNet-50 load). A failure here is not the load's to report:
// Handle::cuda and the first launches name a device that cannot run the kernels.
class ModulePreload {
 public:
  explicit ModulePreload(const LoadOptions& options) {
    if (options.backend != Backend::CUDA) return;
    try {
      thread_ = std::thread([this, device = options.device] {
        (void)load_cuda_modules(device, CudaModules::MOST);
        std::unique_lock<std::mutex> lock(mutex_);
        decided_.wait(lock, [this] { return f32_ >= 0; });
        const bool f32 = f32_ == 1;
        lock.unlock();
        if (f32) (void)load_cuda_modules(device, CudaModules::F32_CONVOLUTION);
      });
    } catch (const std::system_error&) {
      // No thread to be had: the modules load at their first launches, as they would without this.
    }
  }
  ModulePreload(const ModulePreload&) = delete;
  ModulePreload& operator=(const ModulePreload&) = delete;
  ~ModulePreload() { finish(); }
  // Whether the model needs the f32 convolution engine's module (the first answer counts).
  void need_f32(bool needed) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (f32_ < 0) f32_ = needed ? 1 : 0;
    }
    decided_.notify_one();
  }
  // Joins the thread: how long that waited (ms), the part of the preload the load did not hide.
  double finish() {
    if (!thread_.joinable()) return 0;
    need_f32(false);  // not said by now: the load failed, or has no convolution
    const auto t0 = std::chrono::steady_clock::now();
    thread_.join();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

 private:
  std::mutex mutex_;
  std::condition_variable decided_;
  int f32_ = -1;  // -1: not decided yet
  std::thread thread_;
};

constexpr const char* kModulePreloadPhase = "kernel modules (what their preload added)";

// The engine's backend handle, made before the module preload starts (ModulePreload says why);
// *ms: how long that took (the load's phase "backend handle").
Status make_handle(const LoadOptions& options, Handle* out, double* ms) {
  const auto t0 = std::chrono::steady_clock::now();
  Status st;
  if (options.backend == Backend::CPU) {
    *out = Handle::cpu();
  } else if (options.backend == Backend::CUDA) {
    st = Handle::cuda(options.device, nullptr, out);
  } else {
    st = Status(StatusCode::BAD_PARAM,
                "LoadOptions::backend " + std::to_string(static_cast<int>(options.backend)) + " is unknown");
  }
  *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

// The whole load after the bytes are in memory: checks, preparation, weights, summary.
Status load_bytes(rt::FileBytes file, const LoadOptions& options, const Handle& handle, ModulePreload* preload,
                  std::unique_ptr<Engine::Impl>* impl_out) {
  auto impl = std::make_unique<Engine::Impl>();
  impl->options = options;
  impl->handle = handle;
  PhaseClock phases(&impl->summary.load_phases);
  impl->file = std::move(file);
  const fb::Model* model = nullptr;
  uint64_t read_checksum = 0;
  const bool have_checksum = impl->file.payload_checksum(&read_checksum);
  JET_RETURN_IF_ERROR(rt::check_container(impl->file.data(), impl->file.size(), options.verify_checksum, &model,
                                          have_checksum ? &read_checksum : nullptr));
  phases.mark(options.verify_checksum ? "container and checksum" : "container");
  JET_RETURN_IF_ERROR(rt::check_graph(*model, impl->file.data(), impl->file.size(), impl.get()));
  JET_RETURN_IF_ERROR(choose_stored_choices(*model, impl.get()));
  phases.mark("graph checks");
  JET_RETURN_IF_ERROR(rt::prepare_ops(*model, impl.get()));
  JET_RETURN_IF_ERROR(rt::check_arena_overlaps(*impl));
  bool f32_convolutions = false;
  for (const rt::PreparedOp& op : impl->ops) {
    f32_convolutions |= rt::is_op(op, fb::OpParams::ConvParams) && !op.in_descs.empty() &&
                        op.in_descs[0].dtype() == DType::F32;
  }
  preload->need_f32(f32_convolutions);
  phases.mark("prepare ops");
  // The weights before tuning: tuning times whole-network runs on the real weights.
  JET_RETURN_IF_ERROR(place_weights(*model, impl.get(), &phases));
  if (impl->handle.backend() == Backend::CPU) phases.mark("weights (in place)");
  if (options.tune) {
    JET_RETURN_IF_ERROR(rt::tune_convolutions(impl.get()));
    phases.mark("tune");
  }

  // Context memory: the planned arena, then the workspace, each 256-aligned. Every size is below
  // 2^48 (check_graph), and op workspaces are bounded the same way here.
  size_t largest_op_workspace = 0;
  int largest_op = -1;
  uint64_t workspace_bound = 0;  // what the plan's workspace may claim (conv_workspace_bound)
  for (size_t i = 0; i < impl->ops.size(); ++i) {
    const rt::PreparedOp& op = impl->ops[i];
    if (op.workspace_bytes > (size_t(1) << 48)) {
      return Status(StatusCode::BAD_PARAM, "an op needs an implausible workspace of " +
                                               std::to_string(op.workspace_bytes) + " bytes");
    }
    if (op.workspace_bytes > largest_op_workspace) {
      largest_op_workspace = op.workspace_bytes;
      largest_op = static_cast<int>(i);
    }
    if (rt::is_op(op, fb::OpParams::ConvParams)) workspace_bound = std::max(workspace_bound, conv_workspace_bound(op));
  }
  // The plan's workspace (the largest that the converter's chosen algorithms need) is checked as
  // the arena is: no more than the model can use.
  const uint64_t plan_workspace = model->plan()->workspace_bytes();
  workspace_bound = std::max<uint64_t>(workspace_bound, largest_op_workspace);
  if (plan_workspace > workspace_bound) {
    return Status(StatusCode::BAD_PARAM, "the memory plan's workspace of " + std::to_string(plan_workspace) +
                                             " bytes is more than any op of the model can use (at most " +
                                             std::to_string(workspace_bound) + " bytes): a damaged plan");
  }
  const size_t workspace = std::max(largest_op_workspace, static_cast<size_t>(plan_workspace));
  impl->arena_bytes = align_up(static_cast<size_t>(model->plan()->arena_bytes()), format::kArenaAlignment);
  impl->workspace_bytes = align_up(workspace, format::kArenaAlignment);
  impl->context_bytes = impl->arena_bytes + impl->workspace_bytes;
  // What create_context says when it cannot allocate: what the bytes are for and where they come
  // from, so a huge figure points at its cause.
  int largest_tensor = -1;
  for (size_t t = 0; t < impl->tensors.size(); ++t) {
    if (impl->tensors[t].in_arena &&
        (largest_tensor < 0 || impl->tensors[t].arena_size > impl->tensors[static_cast<size_t>(largest_tensor)].arena_size)) {
      largest_tensor = static_cast<int>(t);
    }
  }
  std::string arena_why = "the memory plan's activations";
  if (largest_tensor >= 0) {
    const TensorInfo& info = impl->tensor_infos[static_cast<size_t>(largest_tensor)];
    std::string dims;
    for (size_t d = 0; d < info.dims.size(); ++d) dims += (d ? "x" : "") + std::to_string(info.dims[d]);
    arena_why += "; the largest is tensor '" + info.name + "', " + dims + " " + dtype_name(info.dtype) + ", " +
                 std::to_string(info.arena_size) + " bytes";
  }
  std::string workspace_why = "none needed";
  if (impl->workspace_bytes > 0) {
    workspace_why = largest_op >= 0 && largest_op_workspace >= plan_workspace
                        ? "op " + std::to_string(largest_op) + " '" + impl->op_infos[static_cast<size_t>(largest_op)].name +
                              "' (" + impl->op_infos[static_cast<size_t>(largest_op)].type + ") needs the most"
                        : std::string("the memory plan's workspace_bytes");
  }
  impl->context_what = "an execution context of " + std::to_string(impl->context_bytes) + " bytes: an arena of " +
                       std::to_string(impl->arena_bytes) + " bytes (" + arena_why + ") + a workspace of " +
                       std::to_string(impl->workspace_bytes) + " bytes (" + workspace_why + ")";

  fill_summary(*model, impl->file.size(), impl.get());
  JET_RETURN_IF_ERROR(read_preprocessing(*model, impl.get()));
  impl->summary.workspace_bytes = largest_op_workspace;
  // On CUDA the weights now live on the device and nothing else points into the file: let the
  // mapping go (Jetson shares DRAM between CPU and GPU, so this is memory the GPU gets back).
  if (impl->handle.backend() == Backend::CUDA) impl->file.release();
  phases.mark("summary and release");
  *impl_out = std::move(impl);
  return Status();
}

}  // namespace

Engine::Impl::~Impl() {
  if (device_weights) {
#if defined(JET_HAVE_CUDA)
    rt::DeviceGuard guard(options.device);
#endif
    rt::device_free(device_weights);
  }
}


Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::~Engine() = default;

Status Engine::load(const std::string& path, const LoadOptions& options,
                    std::shared_ptr<Engine>* out) {
  if (!out) return Status(StatusCode::BAD_PARAM, "Engine::load: out is a null pointer");
  out->reset();
  Handle handle;
  double handle_ms = 0;
  const Status handle_status = make_handle(options, &handle, &handle_ms);
  if (!handle_status.ok()) return Status(handle_status.code(), "model '" + path + "': " + handle_status.message());
  ModulePreload preload(options);
  rt::FileBytes file;
  const auto t0 = std::chrono::steady_clock::now();
  // Their messages name the path.
  JET_RETURN_IF_ERROR(options.copy_file ? rt::FileBytes::read_file(path, &file, options.verify_checksum)
                                        : rt::FileBytes::map_file(path, &file));
  const double read_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::unique_ptr<Impl> impl;
  const Status st = load_bytes(std::move(file), options, handle, &preload, &impl);
  if (!st.ok()) return Status(st.code(), "model '" + path + "': " + st.message());
  auto& phases = impl->summary.load_phases;
  phases.insert(phases.begin(), {options.copy_file ? (options.verify_checksum ? "read file (copy, checksum alongside)"
                                                                               : "read file (copy)")
                                                  : "map file",
                                 read_ms});
  phases.insert(phases.begin(), {"backend handle", handle_ms});
  if (options.backend == Backend::CUDA) phases.push_back({kModulePreloadPhase, preload.finish()});
  impl->source = "model '" + path + "'";
  out->reset(new Engine(std::move(impl)));
  return Status();
}

Status Engine::load(const void* data, size_t size, const LoadOptions& options,
                    std::shared_ptr<Engine>* out) {
  if (!out) return Status(StatusCode::BAD_PARAM, "Engine::load: out is a null pointer");
  out->reset();
  if (size < format::kMinFileBytes) {
    return Status(StatusCode::BAD_PARAM, "model in memory: " + std::to_string(size) +
                                             " bytes, too small for a .jet model (at least " +
                                             std::to_string(format::kMinFileBytes) + ")");
  }
  Handle handle;
  double handle_ms = 0;
  const Status handle_status = make_handle(options, &handle, &handle_ms);
  if (!handle_status.ok()) return Status(handle_status.code(), "model in memory: " + handle_status.message());
  ModulePreload preload(options);
  rt::FileBytes file;
  const auto t0 = std::chrono::steady_clock::now();
  JET_RETURN_IF_ERROR(rt::FileBytes::copy_of(data, size, &file));
  const double copy_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::unique_ptr<Impl> impl;
  const Status st = load_bytes(std::move(file), options, handle, &preload, &impl);
  if (!st.ok()) return Status(st.code(), "model in memory: " + st.message());
  auto& phases = impl->summary.load_phases;
  phases.insert(phases.begin(), {"copy the bytes", copy_ms});
  phases.insert(phases.begin(), {"backend handle", handle_ms});
  if (options.backend == Backend::CUDA) phases.push_back({kModulePreloadPhase, preload.finish()});
  impl->source = "model in memory";
  out->reset(new Engine(std::move(impl)));
  return Status();
}

Backend Engine::backend() const { return impl_->handle.backend(); }
int Engine::device() const { return impl_->handle.backend() == Backend::CUDA ? impl_->options.device : -1; }

int Engine::num_inputs() const { return static_cast<int>(impl_->inputs.size()); }
int Engine::num_outputs() const { return static_cast<int>(impl_->outputs.size()); }
int Engine::input(int i) const {
  return i >= 0 && i < num_inputs() ? impl_->inputs[i] : -1;
}
int Engine::output(int i) const {
  return i >= 0 && i < num_outputs() ? impl_->outputs[i] : -1;
}
int Engine::find_tensor(const std::string& name) const {
  auto it = impl_->tensor_by_name.find(name);
  return it == impl_->tensor_by_name.end() ? -1 : it->second;
}
int Engine::num_tensors() const { return static_cast<int>(impl_->tensor_infos.size()); }

const TensorInfo& Engine::tensor(int index) const {
  static const TensorInfo kNone{};  // out-of-range indices get an empty record, not a crash
  return index >= 0 && index < num_tensors() ? impl_->tensor_infos[index] : kNone;
}

int Engine::num_ops() const { return static_cast<int>(impl_->op_infos.size()); }

const OpInfo& Engine::op(int index) const {
  static const OpInfo kNone{};
  return index >= 0 && index < num_ops() ? impl_->op_infos[index] : kNone;
}

const ModelSummary& Engine::summary() const { return impl_->summary; }

size_t Engine::context_memory_size() const { return impl_->context_bytes; }

}  // namespace jet
