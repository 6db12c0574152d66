#include "model_util.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
  if (t == DType::F32) {
    float f;
    std::memcpy(&f, base + 4 * i, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, base + 2 * i, 2);
  return half::half_bits_to_float(h);
}

void store(DType t, uint8_t* base, int64_t i, float v) {
  if (t == DType::F32) {
    std::memcpy(base + 4 * i, &v, 4);
  } else {
    const uint16_t h = half::float_to_half_bits(v);
    std::memcpy(base + 2 * i, &h, 2);
  }
}

const int64_t* ptr_or_null(const std::vector<int64_t>& v) { return v.empty() ? nullptr : v.data(); }

// The (outer, axis, inner) view of a packed or nested tensor for softmax over `axis`.
TensorDesc softmax_view(const TensorDesc& d, int axis) {
  if (axis == 1 && d.rank() >= 3 && d.rank() <= 5) return d;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= d.dim(i);
  for (int i = axis + 1; i < d.rank(); ++i) inner *= d.dim(i);
  const int64_t dims[3] = {outer, d.dim(axis), inner};
  // The runtime checks nesting; the reference handles the layouts the passes produce (packed
  // around the axis), whose innermost stride is 1 when there are inner dims.
  const int64_t strides[3] = {d.dim(axis) * d.stride(axis), d.stride(axis), 1};
  return TensorDesc::strided(d.dtype(), 3, dims, strides);
}

}  // namespace

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
  for (int64_t i = 0; i < n; ++i) store(t.dtype, b.data(), i, static_cast<float>(uniform(-1.0, 1.0)));
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
    const ir::Tensor& ty = g.tensors[n.outputs[0]];
    const TensorDesc y = ty.desc();
    void* yp = ptr[n.outputs[0]];
    auto in = [&](size_t k) { return ptr[n.inputs[k]]; };
    auto in_desc = [&](size_t k) { return g.tensors[n.inputs[k]].desc(); };
    switch (n.op) {
      case ir::OpType::CONV: {
        const ir::ConvAttrs& a = std::get<ir::ConvAttrs>(n.attrs);
        const TensorDesc x = in_desc(0);
        const ir::Tensor& tw = g.tensors[n.inputs[1]];
        const int sr = x.rank() - 2;
        const ConvDesc cd = ir::conv_desc(a, sr);
        const FilterDesc wd = FilterDesc::make(tw.dtype, FilterLayout::KCRS, x.rank(), tw.dims.data());
        // The writer stores Auto with PREFER_FASTEST: the runtime asks the same heuristic.
        ConvAlgo algo = ConvAlgo::DIRECT;
        REQUIRE_OK(choose_conv_forward_algo(h, x, wd, cd, y, ConvPreference::PREFER_FASTEST, 0, &algo));
        size_t ws_bytes = 0;
        REQUIRE_OK(conv_forward_workspace_size(h, x, wd, cd, y, algo, &ws_bytes));
        void* ws = ws_bytes ? backend_alloc(ws_bytes) : nullptr;
        size_t next = 2;
        const void* bias = nullptr;
        TensorDesc bias_desc;
        if (a.has_bias) {
          const int64_t bdims[5] = {1, y.dim(1), 1, 1, 1};
          bias_desc = TensorDesc::packed(y.dtype(), y.rank(), bdims);
          bias = in(next++);
        }
        const void* z = a.has_residual ? in(next) : nullptr;
        const TensorDesc z_desc = a.has_residual ? in_desc(next) : y;
        REQUIRE_OK(conv_bias_act_forward(h, 1.f, x, in(0), wd, in(1), cd, algo, ws, ws_bytes, 1.f,
                                         z_desc, z, bias_desc, bias, a.act, y, yp));
        break;
      }
      case ir::OpType::POOL: {
        const ir::PoolAttrs& a = std::get<ir::PoolAttrs>(n.attrs);
        const TensorDesc x = in_desc(0);
        const PoolDesc pd = PoolDesc::make(a.mode, x.rank() - 2, a.window.data(), ptr_or_null(a.pad_begin),
                                           ptr_or_null(a.pad_end), ptr_or_null(a.strides), nullptr, a.ceil_mode);
        REQUIRE_OK(pool_forward(h, pd, 1.f, x, in(0), 0.f, y, yp));
        break;
      }
      case ir::OpType::GLOBAL_POOL: {
        const ir::GlobalPoolAttrs& a = std::get<ir::GlobalPoolAttrs>(n.attrs);
        const TensorDesc x = in_desc(0);
        REQUIRE_OK(pool_forward(h, PoolDesc::global(a.mode, x.rank() - 2), 1.f, x, in(0), 0.f, y, yp));
        break;
      }
      case ir::OpType::ACTIVATION:
        REQUIRE_OK(activation_forward(h, std::get<ir::ActivationAttrs>(n.attrs).act, 1.f, in_desc(0), in(0),
                                      0.f, y, yp));
        break;
      case ir::OpType::OP_TENSOR:
        REQUIRE_OK(op_tensor(h, std::get<ir::OpTensorAttrs>(n.attrs).op, 1.f, in_desc(0), in(0), 1.f,
                             in_desc(1), in(1), 0.f, y, yp));
        break;
      case ir::OpType::GEMM: {
        const ir::GemmAttrs& a = std::get<ir::GemmAttrs>(n.attrs);
        GemmDesc gd;
        gd.trans_a = a.trans_a;
        gd.trans_b = a.trans_b;
        TensorDesc bias_desc;
        const void* bias = nullptr;
        if (a.has_bias) {
          const ir::Tensor& tb = g.tensors[n.inputs[2]];
          if (static_cast<int>(tb.dims.size()) == y.rank()) {
            bias_desc = tb.desc();
          } else {
            int64_t bdims[3] = {1, 1, 1};
            bdims[y.rank() - 1] = y.dim(y.rank() - 1);
            bias_desc = TensorDesc::packed(tb.dtype, y.rank(), bdims);
          }
          bias = in(2);
        }
        REQUIRE_OK(gemm_forward(h, gd, 1.f, in_desc(0), in(0), in_desc(1), in(1), bias_desc, bias, 0.f, y, yp));
        break;
      }
      case ir::OpType::SOFTMAX: {
        const ir::SoftmaxAttrs& a = std::get<ir::SoftmaxAttrs>(n.attrs);
        REQUIRE_OK(softmax_forward(h, a.algo, SoftmaxMode::CHANNEL, 1.f, softmax_view(in_desc(0), a.axis),
                                   in(0), 0.f, softmax_view(y, a.axis), yp));
        break;
      }
      case ir::OpType::CONCAT: {
        std::vector<TensorDesc> xd;
        std::vector<const void*> xp;
        for (size_t k = 0; k < n.inputs.size(); ++k) {
          xd.push_back(in_desc(k));
          xp.push_back(in(k));
        }
        REQUIRE_OK(concat_forward(h, std::get<ir::ConcatAttrs>(n.attrs).axis, static_cast<int>(xd.size()),
                                  xd.data(), xp.data(), 1.f, 0.f, y, yp));
        break;
      }
      case ir::OpType::RESHAPE: {
        const int64_t count = y.elements();
        REQUIRE_OK(transform_tensor(h, 1.f, TensorDesc::packed(in_desc(0).dtype(), 1, &count), in(0), 0.f,
                                    TensorDesc::packed(y.dtype(), 1, &count), yp));
        break;
      }
      case ir::OpType::BATCHNORM:
        REQUIRE_OK(batchnorm_forward_inference(
            h, 1.f, 0.f, in_desc(0), in(0), y, yp, static_cast<const float*>(in(1)),
            static_cast<const float*>(in(2)), static_cast<const float*>(in(3)),
            static_cast<const float*>(in(4)), std::get<ir::BatchNormAttrs>(n.attrs).epsilon));
        break;
      case ir::OpType::TRANSFORM:
        REQUIRE_OK(transform_tensor(h, 1.f, in_desc(0), in(0), 0.f, y, yp));
        break;
      case ir::OpType::SLICE: {
        // One transform per output row (the last dim), each from a 1-D strided view of x: an
        // independent path to the runtime's single rank-n view.
        const ir::SliceAttrs& a = std::get<ir::SliceAttrs>(n.attrs);
        const TensorDesc x = in_desc(0);
        const int rank = x.rank();
        const size_t es = dtype_size(x.dtype());
        const int last = static_cast<int>(a.perm[rank - 1]);
        const int64_t row = y.dim(rank - 1);
        const int64_t xs = row == 1 ? x.stride(last) : x.stride(last) * a.steps[last];
        const TensorDesc src = TensorDesc::strided(x.dtype(), 1, &row, &xs);
        const int64_t ys = y.stride(rank - 1);
        const TensorDesc dst = TensorDesc::strided(y.dtype(), 1, &row, &ys);
        std::vector<int64_t> idx(rank, 0);
        for (int64_t r = 0; r < y.elements() / row; ++r) {
          int64_t xoff = a.starts[last] * x.stride(last), yoff = 0;
          for (int d = 0; d < rank - 1; ++d) {
            const int k = static_cast<int>(a.perm[d]);
            xoff += (a.starts[k] + idx[d] * a.steps[k]) * x.stride(k);
            yoff += idx[d] * y.stride(d);
          }
          REQUIRE_OK(transform_tensor(h, 1.f, src, static_cast<const uint8_t*>(in(0)) + xoff * es, 0.f, dst,
                                      static_cast<uint8_t*>(yp) + yoff * es));
          for (int d = rank - 1; d-- > 0;) {
            if (++idx[d] < y.dim(d)) break;
            idx[d] = 0;
          }
        }
        break;
      }
      case ir::OpType::PAD: {
        const ir::PadAttrs& a = std::get<ir::PadAttrs>(n.attrs);
        REQUIRE_OK(pad_forward(h, a.mode, a.pad_begin.data(), a.pad_end.data(), a.value, 1.f, in_desc(0), in(0), 0.f,
                               y, yp));
        break;
      }
      case ir::OpType::RESIZE: {
        const ir::ResizeAttrs& a = std::get<ir::ResizeAttrs>(n.attrs);
        REQUIRE_OK(resize_forward(h, ir::resize_desc(a), 1.f, in_desc(0), in(0), 0.f, y, yp));
        break;
      }
      case ir::OpType::CONV_TRANSPOSE: {
        const ir::ConvTransposeAttrs& a = std::get<ir::ConvTransposeAttrs>(n.attrs);
        const ir::Tensor& tw = g.tensors[n.inputs[1]];
        const int rank = y.rank();
        const ConvDesc cd = ir::conv_desc(a, rank - 2);
        const FilterDesc wd = FilterDesc::make(tw.dtype, FilterLayout::KCRS, rank, tw.dims.data());
        REQUIRE_OK(conv_backward_data(h, 1.f, wd, in(1), in_desc(0), in(0), cd, 0.f, y, yp));
        if (a.has_bias) {
          const int64_t bdims[5] = {1, y.dim(1), 1, 1, 1};
          REQUIRE_OK(add_tensor(h, 1.f, TensorDesc::packed(y.dtype(), rank, bdims), in(2), 1.f, y, yp));
        }
        break;
      }
      case ir::OpType::INSTANCENORM:
        REQUIRE_OK(instancenorm_forward(h, 1.f, 0.f, in_desc(0), in(0), y, yp, static_cast<const float*>(in(1)),
                                        static_cast<const float*>(in(2)),
                                        std::get<ir::InstanceNormAttrs>(n.attrs).epsilon));
        break;
      case ir::OpType::LRN:
        REQUIRE_OK(lrn_cross_channel_forward(h, std::get<ir::LrnAttrs>(n.attrs).lrn, 1.f, in_desc(0), in(0), 0.f, y,
                                             yp));
        break;
      case ir::OpType::REDUCE:
        REQUIRE_OK(reduce_forward(h, std::get<ir::ReduceAttrs>(n.attrs).op, 1.f, in_desc(0), in(0), 0.f, y, yp));
        break;
      case ir::OpType::COUNT:
        FAIL("not an op type");
    }
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

void check_close(const Engine& e, const TensorBytes& got, const TensorBytes& want, const char* what) {
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
    const double tol = half ? 1e-2 : 1e-5;
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
