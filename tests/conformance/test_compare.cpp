// The conformance harness's own pieces: the tolerance rule (compare.h) and the manifest format
// (manifest.h). The harness is only as good as its comparison, so the rule is checked on random
// data against an independent restatement of it, and on the cases it must reject.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "compare.h"
#include "manifest.h"

using jet::conformance::compare_values;
using jet::conformance::Tolerance;

namespace {

std::vector<float> random_values(std::mt19937* rng, size_t n, float magnitude) {
  std::uniform_real_distribution<float> dist(-magnitude, magnitude);
  std::vector<float> v(n);
  for (float& x : v) x = dist(*rng);
  return v;
}

}  // namespace

TEST_CASE("compare_values accepts errors inside the bound and rejects the first one outside it") {
  std::random_device seed_source;
  const unsigned seed = seed_source();
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  for (const Tolerance& tol : {jet::conformance::fp32_tolerance(), jet::conformance::fp16_tolerance()}) {
    const std::vector<float> expected = random_values(&rng, 257, 50.0f);
    double scale = 0;
    for (float e : expected) scale = std::max(scale, std::fabs(static_cast<double>(e)));
    // Errors at 90% of each element's bound pass.
    std::vector<float> actual(expected.size());
    std::uniform_int_distribution<int> sign(0, 1);
    for (size_t i = 0; i < expected.size(); ++i) {
      const double bound = tol.atol_min + tol.atol_scale * scale + tol.rtol * std::fabs(expected[i]);
      actual[i] = static_cast<float>(expected[i] + (sign(rng) ? 0.9 : -0.9) * bound);
    }
    jet::conformance::Comparison c = compare_values(expected, actual, tol);
    CHECK(c.ok);
    CHECK(c.mismatches == 0);
    CHECK(c.message.empty());
    // One element at 120% of its bound fails, and is the one reported.
    std::uniform_int_distribution<size_t> pick(0, expected.size() - 1);
    const size_t bad = pick(rng);
    const double bound = tol.atol_min + tol.atol_scale * scale + tol.rtol * std::fabs(expected[bad]);
    actual[bad] = static_cast<float>(expected[bad] + 1.2 * bound);
    c = compare_values(expected, actual, tol);
    CHECK_FALSE(c.ok);
    CHECK(c.mismatches == 1);
    CHECK(c.worst_index == static_cast<int64_t>(bad));
    CHECK(c.message.find("1 of 257") != std::string::npos);
  }
}

TEST_CASE("compare_values: NaN and infinities match only themselves; sizes must agree") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const Tolerance tol = jet::conformance::fp16_tolerance();
  CHECK(compare_values({nan, inf, -inf, 1.0f}, {nan, inf, -inf, 1.0f}, tol).ok);
  CHECK_FALSE(compare_values({nan, 1.0f}, {0.0f, 1.0f}, tol).ok);
  CHECK_FALSE(compare_values({1.0f, 1.0f}, {nan, 1.0f}, tol).ok);
  CHECK_FALSE(compare_values({inf, 1.0f}, {-inf, 1.0f}, tol).ok);
  CHECK_FALSE(compare_values({inf, 1.0f}, {65504.0f, 1.0f}, tol).ok);
  CHECK_FALSE(compare_values({1.0f, 1.0f}, {inf, 1.0f}, tol).ok);
  CHECK_FALSE(compare_values({1.0f, 2.0f}, {1.0f}, tol).ok);
  // The absolute term follows the tensor's magnitude: 0.5 off a zero passes next to a 100
  // in fp16 (allowed 0.001 + 1.0), not next to a 1 (allowed 0.011).
  CHECK(compare_values({0.0f, 100.0f}, {0.5f, 100.0f}, tol).ok);
  CHECK_FALSE(compare_values({0.0f, 1.0f}, {0.5f, 1.0f}, tol).ok);
}

TEST_CASE("manifest lines round-trip any bytes in names and values") {
  std::random_device seed_source;
  const unsigned seed = seed_source();
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255), length(0, 24);
  auto random_text = [&](int min_length) {
    std::string s;
    const int n = std::max(min_length, length(rng));
    for (int i = 0; i < n; ++i) s += static_cast<char>(byte(rng));
    return s;
  };
  for (int round = 0; round < 200; ++round) {
    jet::conformance::ManifestEntry e;
    e.name = random_text(1);
    e.status = random_text(0);
    for (int k = length(rng) % 5; k > 0; --k) e.add(random_text(1), random_text(0));
    const std::string line = jet::conformance::format_entry(e);
    CHECK(line.find('\n') == std::string::npos);
    jet::conformance::ManifestEntry back;
    REQUIRE(jet::conformance::parse_entry(line, &back).ok());
    CHECK(back.name == e.name);
    CHECK(back.status == e.status);
    CHECK(back.fields == e.fields);
  }
  jet::conformance::ManifestEntry bad;
  CHECK_FALSE(jet::conformance::parse_entry("node/x", &bad).ok());               // no status
  CHECK_FALSE(jet::conformance::parse_entry("node/x\tsupported\tf32", &bad).ok());  // not KEY=VALUE
  CHECK_FALSE(jet::conformance::parse_entry("node/x%4\tsupported", &bad).ok());    // bad escape
  std::string name, file;
  REQUIRE(jet::conformance::split_name_file("gpu_0/softmax:0:node/t/output_0.npy", &name, &file).ok());
  CHECK(name == "gpu_0/softmax:0");
  CHECK(file == "node/t/output_0.npy");
  CHECK_FALSE(jet::conformance::split_name_file("no_separator", &name, &file).ok());
}

TEST_CASE("padded_rows: only integer rank-2 outputs with more rows, all extra rows -1") {
  using jet::conformance::padded_rows;
  int64_t rows = -7;
  const std::vector<float> good = {0, 0, 3, 0, 1, 2, -1, -1, -1, -1, -1, -1};  // [4, 3]: 2 valid
  CHECK(padded_rows({2, 3}, {4, 3}, true, good, &rows));
  CHECK(rows == 2);
  CHECK(padded_rows({0, 3}, {4, 3}, true, std::vector<float>(12, -1.f), &rows));
  CHECK(rows == 0);
  rows = -7;
  CHECK_FALSE(padded_rows({2, 3}, {4, 3}, false, good, &rows));  // float outputs: never
  CHECK_FALSE(padded_rows({1, 3}, {4, 3}, true, good, &rows));    // row 1 is not padding
  CHECK_FALSE(padded_rows({2, 3}, {2, 3}, true, good, &rows));    // not more rows
  CHECK_FALSE(padded_rows({5, 3}, {4, 3}, true, good, &rows));    // fewer rows
  CHECK_FALSE(padded_rows({2, 4}, {4, 3}, true, good, &rows));    // another width
  CHECK_FALSE(padded_rows({2}, {4}, true, good, &rows));          // rank 1
  std::vector<float> bad = good;
  bad[10] = 0;  // one column of a padding row is not -1
  CHECK_FALSE(padded_rows({2, 3}, {4, 3}, true, bad, &rows));
  CHECK(rows == -7);
}
