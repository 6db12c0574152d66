#include "compare.h"

#include <cmath>
#include <cstdio>

namespace jet {
namespace conformance {

// Tolerance{rtol, atol_scale, atol_min}.
Tolerance fp32_tolerance() { return Tolerance{1e-5, 1e-5, 1e-6}; }
Tolerance fp16_tolerance() { return Tolerance{1e-2, 1e-2, 1e-3}; }

Comparison compare_values(const std::vector<float>& expected, const std::vector<float>& actual, const Tolerance& tol) {
  Comparison c;
  if (expected.size() != actual.size()) {
    c.ok = false;
    c.message = std::to_string(actual.size()) + " values, expected " + std::to_string(expected.size());
    return c;
  }
  double scale = 0;
  for (float e : expected) {
    if (std::isfinite(e)) scale = std::fmax(scale, std::fabs(static_cast<double>(e)));
  }
  const double atol = tol.atol_min + tol.atol_scale * scale;
  double worst_excess = -1;  // largest (error - allowed); infinity for a NaN / inf mismatch
  for (size_t i = 0; i < expected.size(); ++i) {
    const double e = expected[i], a = actual[i];
    const double allowed = atol + tol.rtol * std::fabs(e);
    double excess = 0;
    bool match = true;
    if (std::isnan(e) || std::isinf(e)) {
      match = std::isnan(e) ? std::isnan(a) : a == e;
      excess = match ? -allowed : INFINITY;
    } else if (!std::isfinite(a)) {
      match = false;
      excess = INFINITY;
    } else {
      const double err = std::fabs(a - e);
      c.max_abs_error = std::fmax(c.max_abs_error, err);
      c.worst_ratio = std::fmax(c.worst_ratio, err / allowed);
      excess = err - allowed;
      match = err <= allowed;
    }
    if (!match) ++c.mismatches;
    if (excess > worst_excess || c.worst_index < 0) {
      worst_excess = excess;
      c.worst_index = static_cast<int64_t>(i);
      c.expected = e;
      c.actual = a;
      c.allowed = allowed;
    }
  }
  c.ok = c.mismatches == 0;
  if (!c.ok) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%lld of %zu values differ; worst at [%lld]: got %.9g, expected %.9g (allowed error %.3g)",
                  static_cast<long long>(c.mismatches), expected.size(), static_cast<long long>(c.worst_index), c.actual,
                  c.expected, c.allowed);
    c.message = buf;
  }
  return c;
}

bool padded_rows(const std::vector<int64_t>& expected_dims, const std::vector<int64_t>& actual_dims, bool integer,
                 const std::vector<float>& actual, int64_t* valid_rows) {
  if (!integer || expected_dims.size() != 2 || actual_dims.size() != 2) return false;
  if (expected_dims[1] != actual_dims[1] || actual_dims[0] <= expected_dims[0]) return false;
  const int64_t width = actual_dims[1];
  if (static_cast<int64_t>(actual.size()) != actual_dims[0] * width) return false;
  for (int64_t i = expected_dims[0] * width; i < actual_dims[0] * width; ++i) {
    if (actual[static_cast<size_t>(i)] != -1.f) return false;
  }
  *valid_rows = expected_dims[0];
  return true;
}

}  // namespace conformance
}  // namespace jet
