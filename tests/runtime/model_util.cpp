#include "model_util.h"

#include "common/ir_reference.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <variant>

#if defined(JET_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

namespace jet {
namespace test {

namespace {

#if defined(JET_HAVE_CUDA)
#define JET_CUDA_CHECK(expr)                                  \
  do {                                                        \
    const cudaError_t e_ = (expr);                            \
    INFO(#expr << ": " << cudaGetErrorString(e_));            \
    REQUIRE(e_ == cudaSuccess);                               \
  } while (0)
#endif

double element(DType t, const uint8_t* base, int64_t i) {
  switch (t) {
    case DType::F32: {
      float f;
      std::memcpy(&f, base + 4 * i, 4);
      return f;
    }
    case DType::F16: {
      uint16_t h;
      std::memcpy(&h, base + 2 * i, 2);
      return half::half_bits_to_float(h);
    }
    case DType::I32: {
      int32_t v;
      std::memcpy(&v, base + 4 * i, 4);
      return v;
    }
    case DType::I64: {
      int64_t v;
      std::memcpy(&v, base + 8 * i, 8);
      return static_cast<double>(v);
    }
    case DType::BOOL: return base[i];
  }
  return NAN;
}

void store(DType t, uint8_t* base, int64_t i, double v) {
  switch (t) {
    case DType::F32: {
      const float f = static_cast<float>(v);
      std::memcpy(base + 4 * i, &f, 4);
      return;
    }
    case DType::F16: {
      const uint16_t h = half::float_to_half_bits(static_cast<float>(v));
      std::memcpy(base + 2 * i, &h, 2);
      return;
    }
    case DType::I32: {
      const int32_t x = static_cast<int32_t>(v);
      std::memcpy(base + 4 * i, &x, 4);
      return;
    }
    case DType::I64: {
      const int64_t x = static_cast<int64_t>(v);
      std::memcpy(base + 8 * i, &x, 8);
      return;
    }
    case DType::BOOL: base[i] = v != 0 ? 1 : 0; return;
  }
}

}  // namespace

std::vector<float> random_floats(int64_t n, float lo, float hi) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>(uniform(lo, hi));
  return v;
}

int random_constant(ir::Graph& g, const std::string& name, std::vector<int64_t> dims, float lo, float hi) {
  int t = -1;
  REQUIRE_OK(g.add_constant(name, DType::F32, std::move(dims), &t));
  g.tensors[t].data = random_floats(g.tensors[t].elements(), lo, hi);
  return t;
}

Bytes model_bytes(const ir::Graph& g) {
  Bytes bytes;
  WriteOptions opt;
  opt.producer_version = "test";
  REQUIRE_OK(write_model(g, opt, &bytes));
  return bytes;
}

LoadOptions load_options(const Handle& h) {
  LoadOptions o;
  o.backend = h.backend();
  o.device = h.backend() == Backend::CUDA ? h.device() : 0;
  return o;
}

std::shared_ptr<Engine> load_engine(const Bytes& bytes, const Handle& h) {
  std::shared_ptr<Engine> e;
  REQUIRE_OK(Engine::load(bytes.data(), bytes.size(), load_options(h), &e));
  REQUIRE(static_cast<bool>(e));
  return e;
}

Bytes random_tensor(const TensorInfo& t) {
  Bytes b(t.bytes);
  const int64_t n = static_cast<int64_t>(t.bytes / dtype_size(t.dtype));
  for (int64_t i = 0; i < n; ++i) {
    // Integers in [-3, 3] and bools: ties and both truth values are common.
    const double v = dtype_is_float(t.dtype) ? uniform(-1.0, 1.0)
                     : t.dtype == DType::BOOL ? static_cast<double>(uniform_int(0, 1))
                                              : static_cast<double>(uniform_int(-3, 3));
    store(t.dtype, b.data(), i, v);
  }
  return b;
}

void copy_to(const Engine& e, void* dst, const Bytes& src) {
  if (e.backend() == Backend::CPU) {
    std::memcpy(dst, src.data(), src.size());
    return;
  }
#if defined(JET_HAVE_CUDA)
  JET_CUDA_CHECK(cudaMemcpy(dst, src.data(), src.size(), cudaMemcpyHostToDevice));
#else
  FAIL("CUDA engine in a build without CUDA");
#endif
}

Bytes copy_from(const Engine& e, const void* src, size_t bytes) {
  Bytes out(bytes);
  if (e.backend() == Backend::CPU) {
    std::memcpy(out.data(), src, bytes);
    return out;
  }
#if defined(JET_HAVE_CUDA)
  JET_CUDA_CHECK(cudaDeviceSynchronize());
  JET_CUDA_CHECK(cudaMemcpy(out.data(), src, bytes, cudaMemcpyDeviceToHost));
#else
  FAIL("CUDA engine in a build without CUDA");
#endif
  return out;
}

BackendBuffer::BackendBuffer(Backend backend, size_t bytes) : backend_(backend) {
  if (backend == Backend::CPU) {
    REQUIRE(posix_memalign(&ptr_, 256, bytes > 0 ? bytes : 1) == 0);
    return;
  }
#if defined(JET_HAVE_CUDA)
  JET_CUDA_CHECK(cudaMalloc(&ptr_, bytes > 0 ? bytes : 1));
#endif
}

BackendBuffer::~BackendBuffer() {
  if (backend_ == Backend::CPU) {
    std::free(ptr_);
    return;
  }
#if defined(JET_HAVE_CUDA)
  cudaFree(ptr_);
#endif
}

TensorBytes random_inputs(const Engine& e) {
  TensorBytes in;
  for (int i = 0; i < e.num_inputs(); ++i) in[e.input(i)] = random_tensor(e.tensor(e.input(i)));
  return in;
}

TensorBytes run_context(const Engine& e, ExecutionContext& ctx, const TensorBytes& inputs) {
  for (const auto& kv : inputs) {
    void* dst = ctx.tensor_data(kv.first);
    REQUIRE(dst != nullptr);
    copy_to(e, dst, kv.second);
  }
  REQUIRE_OK(ctx.run());
  TensorBytes out;
  for (int i = 0; i < e.num_outputs(); ++i) {
    const int t = e.output(i);
    out[t] = copy_from(e, ctx.tensor_data(t), e.tensor(t).bytes);
  }
  return out;
}

TensorBytes reference_run(const Handle& h, const ir::Graph& g, const TensorBytes& inputs) {
  const bool cuda = h.backend() == Backend::CUDA;
  const size_t nt = g.tensors.size();
  // One buffer per tensor, constants converted to their dtype here (independently of the writer).
  std::vector<Bytes> host;  // moving a Bytes keeps its data pointer: growth is fine
  std::vector<void*> ptr(nt, nullptr);
  std::vector<void*> device_buffers;
  auto backend_alloc = [&](size_t bytes) -> void* {
#if defined(JET_HAVE_CUDA)
    if (cuda) {
      void* d = nullptr;
      JET_CUDA_CHECK(cudaMalloc(&d, bytes > 0 ? bytes : 1));
      device_buffers.push_back(d);
      return d;
    }
#endif
    host.emplace_back(bytes > 0 ? bytes : 1);
    return host.back().data();
  };
  for (size_t t = 0; t < nt; ++t) {
    const ir::Tensor& tt = g.tensors[t];
    Bytes init;
    if (tt.kind == ir::TensorKind::CONSTANT) {
      init.resize(tt.bytes());
      for (size_t i = 0; i < tt.data.size(); ++i) store(tt.dtype, init.data(), static_cast<int64_t>(i), tt.data[i]);
      for (size_t i = 0; i < tt.int_data.size(); ++i) {
        store(tt.dtype, init.data(), static_cast<int64_t>(i), static_cast<double>(tt.int_data[i]));
      }
    } else if (tt.kind == ir::TensorKind::INPUT) {
      auto it = inputs.find(static_cast<int>(t));
      REQUIRE(it != inputs.end());
      REQUIRE(it->second.size() == tt.bytes());
      init = it->second;
    }
    ptr[t] = backend_alloc(tt.bytes());
    if (!init.empty()) {
      if (cuda) {
#if defined(JET_HAVE_CUDA)
        JET_CUDA_CHECK(cudaMemcpy(ptr[t], init.data(), init.size(), cudaMemcpyHostToDevice));
#endif
      } else {
        std::memcpy(ptr[t], init.data(), init.size());
      }
    }
  }
  std::vector<int> order;
  REQUIRE_OK(g.topological_order(&order));
  for (int ni : order) {
    const ir::Node& n = g.nodes[ni];
    INFO("reference: node '" << n.name << "' (" << ir::op_type_name(n.op) << ")");
    REQUIRE_OK(run_ir_node(h, g, n, ptr, backend_alloc));
  }
  TensorBytes out;
  for (size_t t = 0; t < nt; ++t) {
    if (g.tensors[t].kind != ir::TensorKind::OUTPUT) continue;
    Bytes b(g.tensors[t].bytes());
    if (cuda) {
#if defined(JET_HAVE_CUDA)
      JET_CUDA_CHECK(cudaDeviceSynchronize());
      JET_CUDA_CHECK(cudaMemcpy(b.data(), ptr[t], b.size(), cudaMemcpyDeviceToHost));
#endif
    } else {
      std::memcpy(b.data(), ptr[t], b.size());
    }
    out[static_cast<int>(t)] = std::move(b);
  }
#if defined(JET_HAVE_CUDA)
  for (void* d : device_buffers) cudaFree(d);
#endif
  return out;
}

void check_identical(const TensorBytes& got, const TensorBytes& want, const char* what) {
  INFO(std::string(what));
  REQUIRE(got.size() == want.size());
  for (const auto& kv : want) {
    auto it = got.find(kv.first);
    REQUIRE(it != got.end());
    REQUIRE(it->second.size() == kv.second.size());
    size_t first_diff = kv.second.size();
    for (size_t i = 0; i < kv.second.size(); ++i) {
      if (it->second[i] != kv.second[i]) {
        first_diff = i;
        break;
      }
    }
    INFO("output tensor " << kv.first << ": first differing byte " << first_diff << " of " << kv.second.size());
    CHECK(first_diff == kv.second.size());
  }
}

void check_close(const Engine& e, const TensorBytes& got, const TensorBytes& want, const char* what,
                 double f32_tol) {
  INFO(std::string(what));
  REQUIRE(got.size() == want.size());
  for (const auto& kv : want) {
    auto it = got.find(kv.first);
    REQUIRE(it != got.end());
    const TensorInfo& t = e.tensor(kv.first);
    const int64_t n = static_cast<int64_t>(t.bytes / dtype_size(t.dtype));
    // A network that computes in half (any f16 tensor) gets f16's tolerance even where its
    // outputs are f32: two backends may round an intermediate activation differently.
    bool half = false;
    for (int i = 0; i < e.num_tensors(); ++i) half = half || e.tensor(i).dtype == DType::F16;
    const double tol = half ? 1e-2 : f32_tol;
    double rms = 0;
    for (int64_t i = 0; i < n; ++i) rms += element(t.dtype, kv.second.data(), i) * element(t.dtype, kv.second.data(), i);
    rms = std::sqrt(rms / static_cast<double>(n > 0 ? n : 1));
    int bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double a = element(t.dtype, it->second.data(), i);
      const double b = element(t.dtype, kv.second.data(), i);
      if (!(std::fabs(a - b) <= tol * (std::fabs(b) + rms))) {
        if (bad++ < 5) {
          INFO("tensor '" << t.name << "' element " << i << ": got " << a << ", want " << b);
          CHECK(false);
        }
      }
    }
    INFO("tensor '" << t.name << "': " << bad << " of " << n << " elements out of tolerance " << tol);
    CHECK(bad == 0);
  }
}

void fix_checksum(Bytes* file) {
  REQUIRE(file->size() >= 16);
  const size_t payload = file->size() - 16;
  const uint64_t sum = model_checksum(file->data(), payload);
  for (int i = 0; i < 8; ++i) (*file)[payload + i] = static_cast<uint8_t>(sum >> (8 * i));
}

void check_against_reference(const ir::Graph& g, const Handle& h, const char* what) {
  INFO(what << " on " << backend_name(h));
  const Bytes bytes = model_bytes(g);
  std::shared_ptr<Engine> e = load_engine(bytes, h);
  std::unique_ptr<ExecutionContext> ctx;
  REQUIRE_OK(e->create_context(&ctx));
  for (int run = 0; run < 2; ++run) {
    const TensorBytes in = random_inputs(*e);
    const TensorBytes got = run_context(*e, *ctx, in);
    const TensorBytes want = reference_run(h, g, in);
    if (h.backend() == Backend::CPU) {
      check_identical(got, want, what);
    } else {
      check_close(*e, got, want, what);
    }
  }
}

Status load_cpu(const Bytes& bytes, bool verify_checksum, std::shared_ptr<Engine>* out) {
  LoadOptions o;
  o.backend = Backend::CPU;
  o.verify_checksum = verify_checksum;
  std::shared_ptr<Engine> e;
  const Status st = Engine::load(bytes.data(), bytes.size(), o, &e);
  if (st.ok() != static_cast<bool>(e)) return Status(StatusCode::INTERNAL_ERROR, "engine set on failure or missing on success");
  if (out) *out = e;
  return st;
}

void expect_rejected(const Bytes& bytes, const std::string& text) {
  const Status st = load_cpu(bytes);
  INFO("expected a message containing '" << text << "', got: " << st.to_string());
  CHECK_FALSE(st.ok());
  CHECK(st.message().find(text) != std::string::npos);
}

Bytes rebuild_model(const Bytes& file, const std::function<void(fb::ModelT&)>& edit,
                    const std::function<void(fb::ModelT&)>& after_layout) {
  const fb::Model* original = fb::GetModel(file.data());
  std::unique_ptr<fb::ModelT> m(original->UnPack());
  std::vector<Bytes> weights;  // per buffer index, the original bytes
  for (const auto& b : m->buffers) {
    REQUIRE(b->offset + b->size <= file.size());
    weights.emplace_back(file.begin() + static_cast<std::ptrdiff_t>(b->offset),
                         file.begin() + static_cast<std::ptrdiff_t>(b->offset + b->size));
  }
  if (edit) edit(*m);
  auto pack = [](const fb::ModelT& model, flatbuffers::FlatBufferBuilder* b) {
    b->Clear();
    b->ForceDefaults(true);  // the size then does not depend on the values of scalar fields
    fb::FinishModelBuffer(*b, fb::Model::Pack(*b, &model));
  };
  flatbuffers::FlatBufferBuilder builder;
  pack(*m, &builder);
  const size_t fb_size = builder.GetSize();
  // Weights behind the FlatBuffer, each 64-aligned, then the footer.
  size_t end = fb_size;
  std::vector<size_t> offsets;
  for (const auto& b : m->buffers) {
    const size_t off = (end + 63) / 64 * 64;
    offsets.push_back(off);
    end = off + static_cast<size_t>(b->size);
  }
  const size_t footer = (end + 7) / 8 * 8;
  for (size_t i = 0; i < m->buffers.size(); ++i) m->buffers[i]->offset = offsets[i];
  m->file_size = footer + 16;
  const std::vector<uint64_t> sizes = [&] {
    std::vector<uint64_t> s;
    for (const auto& b : m->buffers) s.push_back(b->size);
    return s;
  }();
  if (after_layout) after_layout(*m);
  pack(*m, &builder);
  REQUIRE(builder.GetSize() == fb_size);  // scalar edits after the layout must not move anything
  Bytes out(footer + 16, 0);
  std::memcpy(out.data(), builder.GetBufferPointer(), fb_size);
  for (size_t i = 0; i < offsets.size() && i < weights.size(); ++i) {
    const size_t n = std::min<size_t>(weights[i].size(), static_cast<size_t>(sizes[i]));
    std::memcpy(out.data() + offsets[i], weights[i].data(), n);
  }
  std::memcpy(out.data() + footer + 8, "JETSUM01", 8);
  fix_checksum(&out);
  return out;
}

int tensor_index(const fb::ModelT& m, const std::string& name) {
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    if (m.tensors[i]->name == name) return static_cast<int>(i);
  }
  return -1;
}

int op_index(const fb::ModelT& m, const std::string& name) {
  for (size_t i = 0; i < m.ops.size(); ++i) {
    if (m.ops[i]->name == name) return static_cast<int>(i);
  }
  return -1;
}

fb::OpT& op_named(fb::ModelT& m, const std::string& name) {
  const int i = op_index(m, name);
  REQUIRE(i >= 0);
  return *m.ops[static_cast<size_t>(i)];
}

TempFile::TempFile(const std::string& stem) {
  const char* dir = std::getenv("TMPDIR");
  path_ = std::string(dir && *dir ? dir : "/tmp") + "/" + stem + "-" + std::to_string(getpid()) + "-" +
          std::to_string(uniform_int(0, 1 << 30)) + ".jet";
}

TempFile::~TempFile() { std::remove(path_.c_str()); }

}  // namespace test
}  // namespace jet
