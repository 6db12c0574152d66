// Test support for the kernel tests: host tensors in any layout, random data, NaN poisoning, and
// comparison of a routine's output against a float64 reference.
//
// Flow of a typical test (every backend against one float64 reference):
//   for (const Handle& h : test_handles()) {
//     HostTensor x(desc_x); x.fill_random();        // fresh random data, gaps included
//     HostTensor y(desc_y); y.poison();  (or y.fill_random() when beta != 0)
//     const HostTensor before = y;
//     Staging st(h);                                // host pointers on CPU, device copies on CUDA
//     REQUIRE_OK(jet::some_forward(h, ..., st.in(x), ..., st.out(y)));
//     st.finish();                                  // CUDA: wait, copy y back
//     std::vector<double> ref = ref::some(x.to_ref(), ...);        // packed, row-major
//     check_output(y, before, blend(ref, alpha, beta, before.to_ref()), tol_for(dtype));
//   }
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "jet/dnn.h"

namespace jet {
namespace test {

// JET_TEST_REDUCED=1: fewer shapes and layout combinations, the same kinds of checks. Set for the
// emulated aarch64 run of scripts/cross-check.sh and for gpu-check's compute-sanitizer step, where
// every kernel launch is instrumented (memcheck, racecheck) and the full sweeps would not fit.
bool reduced_tests();

// One generator per test process, seeded from std::random_device (or JET_TEST_SEED). The seed is
// printed once so that a failure can be replayed.
std::mt19937_64& rng();
double uniform(double lo, double hi);
int64_t uniform_int(int64_t lo, int64_t hi);  // inclusive

// A tensor in host memory with any layout. The buffer covers desc.span() elements; elements not
// addressed by the view ("gaps" of padded strides) are filled too, so a routine that writes
// outside its view is caught by check_output.
class HostTensor {
 public:
  HostTensor() = default;
  explicit HostTensor(const TensorDesc& desc);

  const TensorDesc& desc() const { return desc_; }
  void* data() { return bytes_.data(); }
  const void* data() const { return bytes_.data(); }

  void fill_random(double lo = -1.0, double hi = 1.0);  // every element of the span
  void poison();                                         // NaN everywhere
  void fill(double v);                                   // for invalid-input tests only
  // Sets `count` random logical elements to NaN, +inf, -inf (in turn): every kernel test feeds
  // them through to check that NaN comes out NaN and infinities follow the formula, as in ONNX
  // and PyTorch (a fault upstream must never vanish into a number).
  void plant_specials(int count = 3);

  // Logical element access by multi-index (desc's rank entries).
  double get(const int64_t* idx) const;
  void set(const int64_t* idx, double v);
  double get_flat(int64_t off) const;  // by element offset

  // The logical elements as a packed row-major float64 array (what references consume), and back.
  std::vector<double> to_ref() const;
  void from_ref(const std::vector<double>& packed);

 private:
  TensorDesc desc_;
  std::vector<unsigned char> bytes_;
};

// Random logical values already rounded to dtype t (packed row-major), so a reference computed
// from them sees exactly what a tensor stores.
std::vector<double> random_values(DType t, const std::vector<int64_t>& dims);
// A tensor of `desc` holding `values` (packed logical order), its gaps random.
HostTensor tensor_with(const TensorDesc& desc, const std::vector<double>& values);

// The same for packed values (what tensor_with takes): `count` random entries set to NaN, +inf,
// -inf in turn.
void plant_specials(std::vector<double>* values, int count = 3);
// True on every third call in this process: the sweeps plant NaN and +-inf in that share of their
// cases (in every case, reductions and normalizations would leave little finite output to check).
bool specials_turn();

// Layouts the sweeps cover. PADDED: channels-first with every stride padded (a strided
// sub-region of a larger tensor); REVERSED: dims laid out in reverse order (W slowest).
enum class Layout { CHANNELS_FIRST, CHANNELS_LAST, PADDED, REVERSED };
const char* layout_name(Layout l);
TensorDesc make_desc(DType t, const std::vector<int64_t>& dims, Layout layout);

// Tolerance for comparing a routine's output with the float64 reference: fp32 ~1e-5 relative,
// fp16 ~1e-2 relative (f16 storage, f32 math).
double tol_for(DType t);

// alpha * op + beta * before, elementwise (before ignored when beta == 0).
std::vector<double> blend(const std::vector<double>& op, double alpha, double beta,
                          const std::vector<double>& before);

// How check_output judges non-finite values. EXACT: NaN where the reference is NaN, the same
// infinity where it is +-inf, a finite close value elsewhere. SPREAD_IN_TILE, for Winograd: its
// transforms combine every input of a tile with every output of it, so one infinite or NaN input
// turns its whole output tile non-finite (inf - inf, inf * 0), as in cuDNN: a NaN reference still
// needs a NaN, an infinite one that infinity or NaN, and a finite one a close value or (only
// there) a non-finite one. A NaN never comes out as a number either way.
enum class InfRule { EXACT, SPREAD_IN_TILE };

// Checks every logical element of `got` against `ref` (packed row-major):
// |got - ref| <= tol * (|ref| + scale), with scale = rms(ref) + rms(before) unless given, so that
// values near zero produced by cancellation (within the op, or between alpha * op and beta * y)
// are judged against the magnitude of the terms they came from. NaN in got
// fails unless ref is NaN too. Gap elements (outside the view) must be bit-identical to `before`.
// Reports the first few mismatches with their indices.
void check_output(const HostTensor& got, const HostTensor& before, const std::vector<double>& ref,
                  double tol, double scale = -1.0, InfRule inf_rule = InfRule::EXACT);

// The handles every test sweeps: the CPU backend always, and the CUDA backend too when this build
// has it and a device is present (the GPU test machine). Without a device the CUDA half is
// skipped with a message, so CI (no GPU) still compiles and runs the CPU half.
std::vector<Handle> test_handles();
const char* backend_name(const Handle& h);

// Stages host tensors for one call on `handle`. On the CPU it hands out the host pointers. On
// CUDA it copies each tensor's whole span (gaps included) to the device; finish() waits for the
// stream, copies every out() tensor back and fails the test on any CUDA error. Usage:
//   Staging st(h);
//   REQUIRE_OK(routine(h, ..., st.in(x), ..., st.out(y)));
//   st.finish();
class Staging {
 public:
  explicit Staging(const Handle& h) : handle_(h) {}
  ~Staging();
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  const void* in(const HostTensor& t);
  void* out(HostTensor& t);  // copied in as well, so beta != 0 and gap checks work
  const float* in(const std::vector<float>& v);
  void* scratch(size_t bytes);  // workspace; nullptr for 0 bytes
  void finish();

 private:
  Handle handle_;
  std::vector<void*> device_buffers_;
  std::vector<std::pair<HostTensor*, void*>> outputs_;
  std::vector<std::vector<unsigned char>> host_scratch_;
};

// Number of logical elements of dims.
int64_t count(const std::vector<int64_t>& dims);
std::string dims_str(const std::vector<int64_t>& dims);

}  // namespace test
}  // namespace jet

// REQUIRE that a jet::Status is ok, printing its message when it is not.
#define REQUIRE_OK(expr)                                   \
  do {                                                     \
    ::jet::Status jet_s_ = (expr);                         \
    INFO(jet_s_.to_string());                              \
    REQUIRE(jet_s_.ok());                                  \
  } while (0)

// CHECK that a jet::Status has the given code and a non-empty message.
#define CHECK_STATUS(expr, expected_code)                  \
  do {                                                     \
    ::jet::Status jet_s_ = (expr);                         \
    INFO(jet_s_.to_string());                              \
    CHECK(jet_s_.code() == (expected_code));               \
    CHECK(!jet_s_.message().empty());                      \
  } while (0)
