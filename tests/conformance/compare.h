// How jet_conformance_run decides that an output matches ONNX's expected values (the rule is
// documented in docs/conformance.md "Tolerances"; test_compare.cpp checks it).
//
// Per output tensor, with scale = the largest finite |expected| of that tensor:
//   allowed_i = atol_min + atol_scale * scale + rtol * |expected_i|
//   element i matches when |actual_i - expected_i| <= allowed_i,
//   NaN matches only NaN, +inf / -inf only the same infinity.
// The absolute term scaled by the output's magnitude covers sums whose result cancels to near
// zero (a convolution's rounding error grows with its terms, not with its result).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace jet {
namespace conformance {

struct Tolerance {
  double rtol = 0;
  double atol_scale = 0;
  double atol_min = 0;
};

// fp32 models: rtol 1e-5, atol 1e-5 x scale, floor 1e-6.
Tolerance fp32_tolerance();
// fp16 models (weights and activations stored in half): rtol 1e-2, atol 1e-2 x scale, floor 1e-3.
Tolerance fp16_tolerance();

struct Comparison {
  bool ok = true;
  int64_t mismatches = 0;      // elements outside the tolerance
  int64_t worst_index = -1;    // the element furthest outside it (or with the largest error)
  double expected = 0, actual = 0, allowed = 0;
  double max_abs_error = 0;    // over finite pairs
  double worst_ratio = 0;      // largest |actual - expected| / allowed over finite pairs (<= 1 when ok)
  std::string message;         // empty when ok; otherwise what and where
};

// expected and actual must have the same size (the caller checks dims first).
Comparison compare_values(const std::vector<float>& expected, const std::vector<float>& actual, const Tolerance& tol);

// The padded-rows rule for outputs whose size depends on the data, which the runtime gives a
// fixed maximum of rows (NonMaxSuppression, docs/onnx.md): true when `actual` is an integer
// output of rank 2 with `expected`'s row width and more rows, and every row after the expected
// ones holds -1 in every column. The caller then compares the first rows as usual; any other
// dims difference stays a failure. *valid_rows = expected rows.
bool padded_rows(const std::vector<int64_t>& expected_dims, const std::vector<int64_t>& actual_dims, bool integer,
                 const std::vector<float>& actual, int64_t* valid_rows);

}  // namespace conformance
}  // namespace jet
