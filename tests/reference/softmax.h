// float64 reference softmax on packed row-major arrays.
// Naive float64 softmax from the definitions: FAST is exp(x) / sum exp(x) as written, ACCURATE
// and LOG subtract the group's max first.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "jet/dnn/softmax.h"

namespace jet {
namespace ref {

// x has dims (N, C, spatial...), packed row-major.
inline std::vector<double> softmax_forward(SoftmaxAlgo algo, SoftmaxMode mode,
                                           const std::vector<int64_t>& dims,
                                           const std::vector<double>& x) {
  int64_t spatial = 1;
  for (size_t i = 2; i < dims.size(); ++i) spatial *= dims[i];
  const int64_t N = dims[0], C = dims[1];
  // Element (n, c, s) sits at (n * C + c) * spatial + s. A group is the set of (c, s) pairs that
  // share a softmax: all of them (INSTANCE) or one s (CHANNEL).
  const int64_t groups_per_n = mode == SoftmaxMode::CHANNEL ? spatial : 1;
  std::vector<double> y(x.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < groups_per_n; ++g) {
      std::vector<size_t> members;
      for (int64_t c = 0; c < C; ++c)
        for (int64_t s = 0; s < spatial; ++s)
          if (mode == SoftmaxMode::INSTANCE || s == g)
            members.push_back(static_cast<size_t>((n * C + c) * spatial + s));
      double max_v = x[members[0]];
      for (size_t i : members) max_v = std::max(max_v, x[i]);
      if (algo == SoftmaxAlgo::FAST) {
        double sum = 0;
        for (size_t i : members) sum += std::exp(x[i]);
        for (size_t i : members) y[i] = std::exp(x[i]) / sum;
      } else {
        double sum = 0;
        for (size_t i : members) sum += std::exp(x[i] - max_v);
        for (size_t i : members)
          y[i] = algo == SoftmaxAlgo::LOG ? x[i] - max_v - std::log(sum)
                                          : std::exp(x[i] - max_v) / sum;
      }
    }
  return y;
}

}  // namespace ref
}  // namespace jet
