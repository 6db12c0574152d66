// Test support for the training add-on (issue 15): central finite differences in float64, and the
// staging of the CUDA-against-CPU comparisons.
//
// A backward routine computes a vector-Jacobian product: for y = f(x) and an upstream gradient
// dy, dx = J(x)^T dy = d<dy, f(x)>/dx. numeric_vjp() estimates it element by element from a
// float64 forward reference (tests/reference/), independently of jet:
//   dx[i] ~ (<dy, f(x + h e_i)> - <dy, f(x - h e_i)>) / (2h),
// whose error in float64 (h^2 f''' + 1e-16 / h) is far below the 1e-5 the routines are held to.
#pragma once

#include <functional>
#include <vector>

#include "jet/dnn/training.h"
#include "kernels/util.h"

namespace jet {
namespace test {

using RefFn = std::function<std::vector<double>(const std::vector<double>&)>;

// d<dy, f(x)>/dx by central differences with step h, one element of x at a time: value[j] =
// sum_i dy_i J_ij, and magnitude[j] = sum_i |dy_i J_ij|, the size of the terms a backward routine
// adds up for element j. A gradient that is small only because its terms cancel (a sum over a
// broadcast dim, softmax's dy - sum) can only be held to f32 rounding of those terms.
struct Vjp {
  std::vector<double> value, magnitude;
};
Vjp numeric_vjp(const RefFn& f, const std::vector<double>& x, const std::vector<double>& dy,
                double h = 1e-6);

// The check of every central-difference test: got = alpha * want.value + beta * before within
// tol * (|expected| + scale), scale = |alpha| * (rms(want.magnitude) + extra_scale) +
// |beta| * rms(before). extra_scale covers cancellation inside a routine's own formula that the
// Jacobian does not show (batch normalization's dx). Gaps must be untouched (check_output).
void check_vjp(const HostTensor& got, const HostTensor& before, const Vjp& want, double alpha,
               double beta, double tol = 1e-5, double extra_scale = 0.0);

// Root mean square of v.
double rms(const std::vector<double>& v);

// Random odd-leaning dims: each in [lo, hi].
std::vector<int64_t> random_dims(int rank, int64_t lo, int64_t hi);

// A random layout among those the forward routines accept.
Layout random_layout();

// The CUDA handle of the GPU test executable (tests/training/gpu_main.cpp made sure one exists).
Handle gpu_handle();

// One CUDA-against-CPU comparison: run(handle, staging, outs) is called on the CPU with copies
// of `outs`, then on CUDA with other copies; each CUDA output must match the CPU's within tol
// (check_against). run stages its inputs with st.in() and its outputs with st.out(outs[i]).
using BackendRun = std::function<void(const Handle&, Staging&, std::vector<HostTensor>&)>;
void compare_cuda_with_cpu(const BackendRun& run, const std::vector<HostTensor>& outs,
                           double tol);

// An int32 array staged as the bytes of an f32 tensor (Staging moves bytes; the routine reads
// int32): class labels for the cross-entropy.
HostTensor int32_tensor(const std::vector<int32_t>& values);

// |got - want| <= tol * (|want| + rms(want)) for every logical element of `got` against a
// tensor computed on another backend, gaps (outside the view) bit-identical to `before`.
void check_against(const HostTensor& got, const HostTensor& before, const HostTensor& want,
                   double tol);

}  // namespace test
}  // namespace jet
