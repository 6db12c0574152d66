#include "util.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#if defined(JET_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

namespace jet {
namespace test {

std::mt19937_64& rng() {
  static std::mt19937_64* gen = [] {
    uint64_t seed;
    if (const char* s = std::getenv("JET_TEST_SEED")) {
      seed = std::strtoull(s, nullptr, 10);
    } else {
      std::random_device rd;
      seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
    }
    std::fprintf(stderr, "jet tests: random seed %llu (set JET_TEST_SEED to replay)\n",
                 static_cast<unsigned long long>(seed));
    return new std::mt19937_64(seed);
  }();
  return *gen;
}

double uniform(double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng());
}

int64_t uniform_int(int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng());
}

HostTensor::HostTensor(const TensorDesc& desc) : desc_(desc) {
  bytes_.resize(desc.span_bytes());
}

// Integer and bool tensors store a double as the nearest integer; NaN (what poison() writes)
// becomes a byte pattern no routine writes (0x5A.. for integers, 0xA5 for bool, neither 0 nor 1),
// so an element a routine failed to write never passes as a result.
static void store_flat(DType t, unsigned char* base, int64_t off, double v) {
  switch (t) {
    case DType::F32: {
      const float f = static_cast<float>(v);
      std::memcpy(base + off * 4, &f, 4);
      return;
    }
    case DType::F16: {
      const uint16_t h = half::float_to_half_bits(static_cast<float>(v));
      std::memcpy(base + off * 2, &h, 2);
      return;
    }
    case DType::I32: {
      const int32_t i = std::isnan(v) ? 0x5A5A5A5A : static_cast<int32_t>(std::llround(v));
      std::memcpy(base + off * 4, &i, 4);
      return;
    }
    case DType::I64: {
      const int64_t i = std::isnan(v) ? 0x5A5A5A5A5A5A5A5ALL : static_cast<int64_t>(std::llround(v));
      std::memcpy(base + off * 8, &i, 8);
      return;
    }
    case DType::BOOL: base[off] = std::isnan(v) ? 0xA5 : (v != 0.0 ? 1 : 0); return;
  }
}

double HostTensor::get_flat(int64_t off) const {
  switch (desc_.dtype()) {
    case DType::F32: {
      float f;
      std::memcpy(&f, bytes_.data() + off * 4, 4);
      return f;
    }
    case DType::F16: {
      uint16_t h;
      std::memcpy(&h, bytes_.data() + off * 2, 2);
      return half::half_bits_to_float(h);
    }
    case DType::I32: {
      int32_t i;
      std::memcpy(&i, bytes_.data() + off * 4, 4);
      return i;
    }
    case DType::I64: {
      int64_t i;
      std::memcpy(&i, bytes_.data() + off * 8, 8);
      return static_cast<double>(i);
    }
    case DType::BOOL: return bytes_[static_cast<size_t>(off)];  // the raw byte: 0xA5 is no bool
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// Floats: uniform in [lo, hi). Integers: uniform integers in [4 lo, 4 hi] (ties are common, as
// comparisons and arg-reductions need). Bool: 0 or 1.
void HostTensor::fill_random(double lo, double hi) {
  const int64_t n = desc_.span();
  const DType t = desc_.dtype();
  for (int64_t i = 0; i < n; ++i) {
    double v = 0;
    if (t == DType::BOOL)
      v = static_cast<double>(uniform_int(0, 1));
    else if (dtype_is_integer(t))
      v = static_cast<double>(uniform_int(static_cast<int64_t>(std::floor(4 * lo)), static_cast<int64_t>(std::ceil(4 * hi))));
    else
      v = uniform(lo, hi);
    store_flat(t, bytes_.data(), i, v);
  }
}

void HostTensor::poison() {
  const int64_t n = desc_.span();
  for (int64_t i = 0; i < n; ++i)
    store_flat(desc_.dtype(), bytes_.data(), i, std::numeric_limits<double>::quiet_NaN());
}

void HostTensor::plant_specials(int count) {
  const int64_t n = desc_.elements();
  if (n == 0) return;
  const double specials[3] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity()};
  for (int k = 0; k < count; ++k) {
    int64_t rest = uniform_int(0, n - 1);
    int64_t idx[kMaxRank] = {};
    for (int i = desc_.rank() - 1; i >= 0; --i) {
      idx[i] = rest % desc_.dim(i);
      rest /= desc_.dim(i);
    }
    set(idx, specials[k % 3]);
  }
}

bool reduced_tests() {
  const char* v = std::getenv("JET_TEST_REDUCED");
  return v && *v && std::string(v) != "0";
}

void plant_specials(std::vector<double>* values, int count) {
  if (values->empty()) return;
  const double specials[3] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity()};
  for (int k = 0; k < count; ++k) {
    (*values)[static_cast<size_t>(uniform_int(0, static_cast<int64_t>(values->size()) - 1))] = specials[k % 3];
  }
}

bool specials_turn() {
  static unsigned calls = 0;
  return calls++ % 3 == 0;
}

void HostTensor::fill(double v) {
  const int64_t n = desc_.span();
  for (int64_t i = 0; i < n; ++i) store_flat(desc_.dtype(), bytes_.data(), i, v);
}

static int64_t offset_of(const TensorDesc& d, const int64_t* idx) {
  int64_t off = 0;
  for (int i = 0; i < d.rank(); ++i) off += idx[i] * d.stride(i);
  return off;
}

double HostTensor::get(const int64_t* idx) const { return get_flat(offset_of(desc_, idx)); }

void HostTensor::set(const int64_t* idx, double v) {
  store_flat(desc_.dtype(), bytes_.data(), offset_of(desc_, idx), v);
}

// Calls f(packed_index, element_offset) for every logical element in row-major order.
template <class F>
static void for_each_element(const TensorDesc& d, F f) {
  int64_t idx[kMaxRank] = {};
  const int64_t n = d.elements();
  for (int64_t p = 0; p < n; ++p) {
    f(p, offset_of(d, idx));
    for (int i = d.rank() - 1; i >= 0; --i) {
      if (++idx[i] < d.dim(i)) break;
      idx[i] = 0;
    }
  }
}

std::vector<double> HostTensor::to_ref() const {
  std::vector<double> out(static_cast<size_t>(desc_.elements()));
  for_each_element(desc_, [&](int64_t p, int64_t off) { out[p] = get_flat(off); });
  return out;
}

void HostTensor::from_ref(const std::vector<double>& packed) {
  for_each_element(desc_, [&](int64_t p, int64_t off) {
    store_flat(desc_.dtype(), bytes_.data(), off, packed[p]);
  });
}

std::vector<double> random_values(DType t, const std::vector<int64_t>& dims) {
  HostTensor h(TensorDesc::packed(t, static_cast<int>(dims.size()), dims.data()));
  h.fill_random();
  return h.to_ref();
}

HostTensor tensor_with(const TensorDesc& desc, const std::vector<double>& values) {
  HostTensor h(desc);
  h.fill_random();
  h.from_ref(values);
  return h;
}

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::CHANNELS_FIRST: return "channels-first";
    case Layout::CHANNELS_LAST: return "channels-last";
    case Layout::PADDED: return "padded-strides";
    case Layout::REVERSED: return "reversed";
  }
  return "?";
}

TensorDesc make_desc(DType t, const std::vector<int64_t>& dims, Layout layout) {
  const int r = static_cast<int>(dims.size());
  int64_t strides[kMaxRank] = {};
  // order[0] is the slowest-varying dim in memory.
  std::vector<int> order(r);
  for (int i = 0; i < r; ++i) order[i] = i;
  if (layout == Layout::CHANNELS_LAST && r >= 3) {
    order.clear();
    order.push_back(0);
    for (int i = 2; i < r; ++i) order.push_back(i);
    order.push_back(1);
  } else if (layout == Layout::REVERSED) {
    for (int i = 0; i < r; ++i) order[i] = r - 1 - i;
  }
  int64_t s = 1;
  for (int j = r - 1; j >= 0; --j) {
    const int i = order[j];
    strides[i] = s;
    // PADDED: leave a gap after every dim (e.g. W stride 1 but H stride W + 3).
    s *= dims[i] + (layout == Layout::PADDED ? (j % 2 == 0 ? 3 : 1) : 0);
  }
  return TensorDesc::strided(t, r, dims.data(), strides);
}

double tol_for(DType t) {
  if (t == DType::F32) return 1e-5;
  if (t == DType::F16) return 1e-2;
  return 0.0;  // integers and bool: exact
}

std::vector<double> blend(const std::vector<double>& op, double alpha, double beta,
                          const std::vector<double>& before) {
  std::vector<double> out(op.size());
  for (size_t i = 0; i < op.size(); ++i)
    out[i] = alpha * op[i] + (beta != 0.0 ? beta * before[i] : 0.0);
  return out;
}

void check_output(const HostTensor& got, const HostTensor& before, const std::vector<double>& ref,
                  double tol, double scale, InfRule inf_rule) {
  const TensorDesc& d = got.desc();
  REQUIRE(static_cast<int64_t>(ref.size()) == d.elements());
  if (scale < 0) {
    // The output's magnitude, plus that of the prior y: with beta != 0, alpha * op + beta * y can
    // cancel, leaving a result far smaller than the f32-rounded terms it came from.
    const auto rms = [](const std::vector<double>& v) {
      double ss = 0;
      for (double e : v) ss += std::isfinite(e) ? e * e : 0.0;
      return v.empty() ? 0.0 : std::sqrt(ss / static_cast<double>(v.size()));
    };
    scale = rms(ref) + rms(before.to_ref());
  }
  // Mark which offsets of the span belong to the view.
  std::vector<char> in_view(static_cast<size_t>(d.span()), 0);
  int failures = 0;
  int64_t idx[kMaxRank] = {};
  for (int64_t p = 0; p < d.elements(); ++p) {
    int64_t off = 0;
    for (int i = 0; i < d.rank(); ++i) off += idx[i] * d.stride(i);
    in_view[off] = 1;
    const double g = got.get_flat(off);
    const double r = ref[p];
    bool ok = false;
    if (std::isnan(r)) {
      ok = std::isnan(g);
    } else if (std::isinf(r)) {
      ok = g == r || (inf_rule == InfRule::SPREAD_IN_TILE && std::isnan(g));
    } else {
      ok = std::isfinite(g) ? std::fabs(g - r) <= tol * (std::fabs(r) + scale) : inf_rule == InfRule::SPREAD_IN_TILE;
    }
    if (!ok && failures++ < 8) {
      std::string where = "[";
      for (int i = 0; i < d.rank(); ++i) where += (i ? "," : "") + std::to_string(idx[i]);
      where += "]";
      FAIL_CHECK("element " << where << ": got " << g << ", expected " << r << " (tol " << tol
                            << ", scale " << scale << ")");
    }
    for (int i = d.rank() - 1; i >= 0; --i) {
      if (++idx[i] < d.dim(i)) break;
      idx[i] = 0;
    }
  }
  int gap_failures = 0;
  const size_t esz = dtype_size(d.dtype());
  const unsigned char* g = static_cast<const unsigned char*>(got.data());
  const unsigned char* b = static_cast<const unsigned char*>(before.data());
  for (int64_t off = 0; off < d.span(); ++off) {
    if (in_view[off]) continue;
    if (std::memcmp(g + off * esz, b + off * esz, esz) != 0 && gap_failures++ < 4)
      FAIL_CHECK("element offset " << off << " lies outside the output view but was written");
  }
  CHECK_MESSAGE(failures == 0, failures << " of " << d.elements() << " elements mismatched");
  CHECK(gap_failures == 0);
}

std::vector<Handle> test_handles() {
  std::vector<Handle> handles{Handle::cpu()};
  Handle h;
  const Status s = Handle::cuda(0, nullptr, &h);
  if (s.ok()) {
    handles.push_back(h);
  } else {
    static bool told = false;
    if (!told) std::fprintf(stderr, "jet tests: CUDA backend not tested here: %s\n", s.to_string().c_str());
    told = true;
  }
  return handles;
}

const char* backend_name(const Handle& h) { return h.backend() == Backend::CPU ? "cpu" : "cuda"; }

#if defined(JET_HAVE_CUDA)
#define JET_CUDA_REQUIRE(expr)                                              \
  do {                                                                      \
    const cudaError_t e_ = (expr);                                          \
    INFO(#expr << ": " << cudaGetErrorString(e_));                          \
    REQUIRE(e_ == cudaSuccess);                                             \
  } while (0)
#endif

Staging::~Staging() {
#if defined(JET_HAVE_CUDA)
  for (void* p : device_buffers_) cudaFree(p);
#endif
}

const void* Staging::in(const HostTensor& t) {
  if (handle_.backend() == Backend::CPU) return t.data();
#if defined(JET_HAVE_CUDA)
  void* d = nullptr;
  const size_t bytes = t.desc().span_bytes();
  JET_CUDA_REQUIRE(cudaMalloc(&d, bytes));
  device_buffers_.push_back(d);
  JET_CUDA_REQUIRE(cudaMemcpy(d, t.data(), bytes, cudaMemcpyHostToDevice));
  return d;
#else
  return nullptr;
#endif
}

void* Staging::out(HostTensor& t) {
  if (handle_.backend() == Backend::CPU) return t.data();
  void* d = const_cast<void*>(in(t));
  outputs_.emplace_back(&t, d);
  return d;
}

const float* Staging::in(const std::vector<float>& v) {
  if (handle_.backend() == Backend::CPU) return v.data();
#if defined(JET_HAVE_CUDA)
  void* d = nullptr;
  JET_CUDA_REQUIRE(cudaMalloc(&d, v.size() * sizeof(float) + 1));
  device_buffers_.push_back(d);
  JET_CUDA_REQUIRE(cudaMemcpy(d, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
  return static_cast<const float*>(d);
#else
  return nullptr;
#endif
}

void* Staging::scratch(size_t bytes) {
  if (bytes == 0) return nullptr;
  if (handle_.backend() == Backend::CPU) {
    host_scratch_.emplace_back(bytes, static_cast<unsigned char>(0xff));  // NaN bytes
    return host_scratch_.back().data();
  }
#if defined(JET_HAVE_CUDA)
  void* d = nullptr;
  JET_CUDA_REQUIRE(cudaMalloc(&d, bytes));
  device_buffers_.push_back(d);
  // Garbage in the workspace must not matter: fill it with NaN bytes.
  JET_CUDA_REQUIRE(cudaMemset(d, 0xff, bytes));
  return d;
#else
  return nullptr;
#endif
}

void Staging::finish() {
  if (handle_.backend() == Backend::CPU) return;
#if defined(JET_HAVE_CUDA)
  JET_CUDA_REQUIRE(cudaStreamSynchronize(handle_.stream()));
  JET_CUDA_REQUIRE(cudaGetLastError());
  for (auto& o : outputs_)
    JET_CUDA_REQUIRE(cudaMemcpy(o.first->data(), o.second, o.first->desc().span_bytes(),
                                cudaMemcpyDeviceToHost));
  outputs_.clear();
#endif
}

int64_t count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t v : dims) n *= v;
  return n;
}

std::string dims_str(const std::vector<int64_t>& dims) { return dims_text(dims); }

}  // namespace test
}  // namespace jet
