// CPU layer normalization: per group (the dims from `axis` on), the mean and biased variance
// (group_mean_var: two sweeps), then a sweep writing the outputs; all in double, f16 storage
// widened on load. A group is fully read before any of
// it is written, which makes x == y (same layout) safe. No allocation.
#include <cmath>

#include "../api/backend.h"
#include "cpu_common.h"

namespace jet {
namespace cpu {

Status layernorm_forward(int axis, float alpha, float beta, const TensorDesc& x_desc, const void* x,
                         const TensorDesc& y_desc, void* y, const float* scale, const float* bias,
                         double epsilon) {
  const DType t = x_desc.dtype();
  const int inner_rank = x_desc.rank() - axis;
  const int64_t* dims = x_desc.dims() + axis;
  const int64_t* xs = x_desc.strides() + axis;
  const int64_t* ys = y_desc.strides() + axis;
  StridedWalk groups(axis, x_desc.dims(), x_desc.strides(), y_desc.strides());
  do {
    const int64_t xo = groups.off[0], yo = groups.off[1];
    double mean = 0.0, var = 0.0;
    group_mean_var(t, x, xo, inner_rank, dims, xs, &mean, &var);
    const double inv_std = 1.0 / std::sqrt(var + epsilon);
    StridedWalk w(inner_rank, dims, xs, ys);
    int64_t i = 0;
    do {
      double v = (load(t, x, xo + w.off[0]) - mean) * inv_std;
      if (scale) v *= scale[i];
      if (bias) v += bias[i];
      blend_store(t, y, yo + w.off[1], alpha, static_cast<float>(v), beta);
      ++i;
    } while (w.next());
  } while (groups.next());
  return Status();
}

}  // namespace cpu
}  // namespace jet
