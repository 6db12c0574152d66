// jet::dnn common types: status codes, element types, the half type and the Handle.
//
// Thread-safety rules (they hold for every routine in jet/dnn):
//  - A Handle is used by one host thread at a time. Create one handle per thread (or per stream).
//  - Descriptors (TensorDesc, FilterDesc, ConvDesc, ...) are immutable values once built: they can
//    be copied freely and shared between threads.
//  - Routines never allocate memory and never throw. Scratch memory comes from the caller as a
//    workspace whose size the matching *_workspace_size() query reports.
//  - On the CUDA backend every routine is asynchronous on the handle's stream; on the CPU backend
//    it runs to completion on the calling thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

// Forward declaration compatible with cuda_runtime.h, so CPU-only users need no CUDA headers.
struct CUstream_st;
using cudaStream_t = CUstream_st*;

namespace jet {

// Status codes, modelled on cudnnStatus_t.
enum class StatusCode {
  SUCCESS = 0,
  NOT_INITIALIZED,   // a handle or descriptor was used before it was set up
  ALLOC_FAILED,      // a resource the caller asked us to create could not be allocated
  BAD_PARAM,         // an argument is invalid: null pointer, bad dims, inconsistent descriptors
  INVALID_VALUE,     // a value is out of its allowed range (e.g. LRN window, epsilon)
  ARCH_MISMATCH,     // the device cannot run the code this library was built with
  EXECUTION_FAILED,  // a kernel launch or device operation failed
  INTERNAL_ERROR,    // a bug in jet: please report it
  NOT_SUPPORTED,     // valid request that this backend/algorithm does not implement (see docs/ops.md)
};

const char* status_code_name(StatusCode code);

// The result of every jet routine: a code plus a human-readable message naming the problem.
// A successful Status carries an empty message and costs no allocation.
class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status success() { return Status(); }

  bool ok() const { return code_ == StatusCode::SUCCESS; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "BAD_PARAM: conv_forward: x has 3 channels but w expects 4"
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::SUCCESS;
  std::string message_;
};

// Returns early from the enclosing function when `expr` yields an error Status: the one
// early-return helper of the project (kernels, runtime, converter).
#define JET_RETURN_IF_ERROR(expr)                          \
  do {                                                     \
    ::jet::Status jet_return_if_error_ = (expr);           \
    if (!jet_return_if_error_.ok()) return jet_return_if_error_; \
  } while (0)

// Dims as every message prints them: "[1, 3, 224, 224]" (the one dims formatter).
std::string dims_text(int rank, const int64_t* dims);
std::string dims_text(const std::vector<int64_t>& dims);

// The number of values of an enum whose values are 0 .. count - 1 and are written into model
// files or validated at an API boundary: one `template <> struct EnumCount<E>` right after each such
// enum is the one bound every range check uses (enum_in_range), so appending a value means
// updating the count next to it and nothing else. (Not a COUNT enumerator: the backends' switches
// over these enums name every value, without a default, so that -Wswitch finds them.)
template <typename E>
struct EnumCount;

// True when v is a value of E (0 <= v < EnumCount<E>::value).
template <typename E>
constexpr bool enum_in_range(int64_t v) {
  return v >= 0 && v < static_cast<int64_t>(EnumCount<E>::value);
}
template <typename E>
constexpr bool enum_in_range(E e) {
  return enum_in_range<E>(static_cast<int64_t>(e));
}

// Element types. Values are stable: they are written into model files.
// 2 is reserved for int8 (quantized inference). I32, I64 and BOOL carry integer and logical
// tensors (indices, shapes, masks): only the routines that say so take them (transform_tensor,
// concat_forward, op_tensor's comparison and logical ops, where_forward, reduce_forward's
// ARGMAX / ARGMIN); every other routine takes F32 and F16 only. BOOL is one byte per element,
// 0 or 1 (a routine reading any other byte value treats it as true).
enum class DType : int32_t {
  F32 = 0,
  F16 = 1,
  I32 = 3,
  I64 = 4,
  BOOL = 5,
};

// "f32", "f16", "i32", "i64", "bool"; "unknown-dtype" for a value that is no DType.
const char* dtype_name(DType t);
// Bytes per element; 0 for a value that is no DType.
size_t dtype_size(DType t);
// True for the values of DType (a dtype read from a file or an API caller is checked by it).
inline bool dtype_is_valid(int64_t v) {
  return v == 0 || v == 1 || v == 3 || v == 4 || v == 5;
}
// F32 and F16: the dtypes every float routine takes.
inline bool dtype_is_float(DType t) { return t == DType::F32 || t == DType::F16; }
// I32 and I64.
inline bool dtype_is_integer(DType t) { return t == DType::I32 || t == DType::I64; }

// IEEE 754 binary16 storage type with round-to-nearest-even conversion. Arithmetic is done by
// converting to float; the CPU backend computes in f32 on f16 storage.
struct half {
  uint16_t bits = 0;

  half() = default;
  explicit half(float f) : bits(float_to_half_bits(f)) {}
  explicit operator float() const { return half_bits_to_float(bits); }

  static half from_bits(uint16_t b) {
    half h;
    h.bits = b;
    return h;
  }

  static uint16_t float_to_half_bits(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) {  // inf or NaN
      return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0u));
    }
    if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
    if (absx < 0x38800000u) {  // result is subnormal or zero
      if (absx < 0x33000000u) return static_cast<uint16_t>(sign);  // below half of the smallest subnormal
      const uint32_t mant = (absx & 0x007fffffu) | 0x00800000u;
      const int shift = 126 - static_cast<int>(absx >> 23);  // 14..24
      uint32_t h = mant >> shift;
      const uint32_t rem = mant & ((1u << shift) - 1u);
      const uint32_t halfway = 1u << (shift - 1);
      if (rem > halfway || (rem == halfway && (h & 1u))) ++h;
      return static_cast<uint16_t>(sign | h);
    }
    uint32_t h = ((absx - 0x38000000u) >> 13);  // rebias exponent 127 -> 15
    const uint32_t rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }

  static float half_bits_to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t x;
    if (exp == 0) {
      if (mant == 0) {
        x = sign;
      } else {  // subnormal: normalize
        int e = -1;
        do {
          ++e;
          mant <<= 1;
        } while ((mant & 0x400u) == 0);
        x = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
      }
    } else if (exp == 31) {
      x = sign | 0x7f800000u | (mant << 13);
    } else {
      x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &x, 4);
    return f;
  }
};
static_assert(sizeof(half) == 2, "jet::half must be 2 bytes");

enum class Backend { CPU, CUDA };

// Which backend runs the routines, and for CUDA which device and stream.
// Cheap to copy; see the thread-safety rules at the top of this file.
class Handle {
 public:
  // A CPU handle: routines take host pointers and run on the calling thread.
  static Handle cpu() { return Handle(); }

  // A CUDA handle on `device`, issuing work on `stream` (nullptr = the default stream).
  // Returns NOT_SUPPORTED when jet was built without CUDA, EXECUTION_FAILED when no usable
  // device exists, and ARCH_MISMATCH when the device cannot run the code jet was built for.
  static Status cuda(int device, cudaStream_t stream, Handle* out);

  Backend backend() const { return backend_; }
  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  void set_stream(cudaStream_t s) { stream_ = s; }

  // Device facts read once at creation (zero on CPU); the algorithm heuristics use them.
  int sm_count() const { return sm_count_; }
  int compute_capability() const { return cc_; }  // e.g. 87 for Orin, 90 for H100
  // From here on, take only the code paths of compute capability cc and below (never above the
  // device's own): 72 runs what a Xavier runs (no cp.async, no mma.sync kernels) on a newer GPU,
  // which is how the tests check those paths on their test machine.
  void limit_code_paths(int cc) {
    if (cc < cc_) cc_ = cc;
  }

 private:
  Backend backend_ = Backend::CPU;
  int device_ = -1;
  cudaStream_t stream_ = nullptr;
  int sm_count_ = 0;
  int cc_ = 0;
};

// True when this build of jet contains the CUDA backend.
bool built_with_cuda();

// True when `h` can run the Hopper tensor-core tiles (warpgroup MMA, the H100 and H200): a CUDA
// handle on an sm_90 device, not limited below 90 (Handle::limit_code_paths), with sm_90a code in
// this build (CMAKE_CUDA_ARCHITECTURES lists 90a). Tactics naming those tiles are NOT_SUPPORTED
// elsewhere; the heuristics and tuning consider them only here.
bool hopper_mma_available(const Handle& h);

// The kernel library's large CUDA modules, in the groups load_cuda_modules loads.
enum class CudaModules : int {
  // What networks use most: the f16 convolution and GEMM engines, the GEMM module, element-wise,
  // pooling, reductions, softmax, layout transforms, direct and Winograd convolution.
  MOST = 0,
  // The f32 convolution engine's kernels (its own module: 10.9 MB of sm_90a code, 23-31 ms to
  // load on the H200 test machine): needed only by models with f32 convolutions, so an f16 model
  // need not load it.
  F32_CONVOLUTION = 1,
  ALL = 2,  // both groups
};

// Loads the CUDA modules of `group` on `device` now. With CUDA's lazy module loading (the default
// from CUDA 12.2) a module's whole image is loaded at the first launch of one of its kernels,
// 5-30 ms for each of the GEMM and convolution engines' modules on the H200 test machine, which
// a network's first run would otherwise wait for. A runtime can call this on a second thread while
// it reads a model (jet::Engine::load does). Loading a module holds a lock of the CUDA driver that
// other threads' module queries wait for: create the Handle first (Handle::cuda makes every
// module query a handle needs later). Any thread, any number of times. NOT_SUPPORTED without
// CUDA; EXECUTION_FAILED naming the CUDA error otherwise.
Status load_cuda_modules(int device, CudaModules group = CudaModules::ALL);

}  // namespace jet
