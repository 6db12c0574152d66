// float64 references for the tensor operations pad, resize and reduce. Tensors are packed
// row-major arrays with their dims given alongside.
// Naive float64 pad, resize and reduce, written from the ONNX definitions and independent of the
// backends: pad and resize work one axis at a time on packed arrays (as numpy.pad and ONNX's
// reference Resize do), reduce visits every x element once.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "jet/dnn/tensor_ops.h"

namespace jet {
namespace ref {

// Helpers of the definitions below (ref::detail is shared by every reference header).
namespace detail {

inline int64_t product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= dims[i];
  return p;
}

// Applies f(line_in, line_out) to every line along `axis` of a packed array whose dims are
// `dims`, producing an array whose dim `axis` is out_len.
template <class F>
inline std::vector<double> map_lines(const std::vector<double>& a, const std::vector<int64_t>& dims,
                                     size_t axis, int64_t out_len, F f) {
  const int64_t outer = product(dims, 0, axis);
  const int64_t inner = product(dims, axis + 1, dims.size());
  const int64_t in_len = dims[axis];
  std::vector<double> out(static_cast<size_t>(outer * out_len * inner));
  std::vector<double> line_in(static_cast<size_t>(in_len)), line_out(static_cast<size_t>(out_len));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t k = 0; k < in_len; ++k) line_in[k] = a[(o * in_len + k) * inner + i];
      f(line_in, line_out);
      for (int64_t k = 0; k < out_len; ++k) out[(o * out_len + k) * inner + i] = line_out[k];
    }
  }
  return out;
}

}  // namespace detail

// ONNX Pad (numpy.pad per axis, then negative pads crop): y dims = x dims + begin + end.
inline std::vector<double> pad(PadMode mode, const std::vector<double>& x,
                               const std::vector<int64_t>& x_dims,
                               const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                               double value) {
  std::vector<double> a = x;
  std::vector<int64_t> dims = x_dims;
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    // First add the positive pads to the whole line, then crop the negative ones.
    const int64_t add_begin = std::max<int64_t>(begin[axis], 0);
    const int64_t add_end = std::max<int64_t>(end[axis], 0);
    const int64_t crop_begin = std::max<int64_t>(-begin[axis], 0);
    const int64_t crop_end = std::max<int64_t>(-end[axis], 0);
    const int64_t out_len = dims[axis] + begin[axis] + end[axis];
    a = detail::map_lines(a, dims, axis, out_len,
                          [&](const std::vector<double>& in, std::vector<double>& out) {
      const int64_t n = static_cast<int64_t>(in.size());
      std::vector<double> padded;
      for (int64_t k = add_begin; k >= 1; --k) {  // the elements before in[0], outermost first
        if (mode == PadMode::CONSTANT) padded.push_back(value);
        if (mode == PadMode::EDGE) padded.push_back(in[0]);
        if (mode == PadMode::REFLECT) padded.push_back(in[k]);  // mirror about in[0]
      }
      padded.insert(padded.end(), in.begin(), in.end());
      for (int64_t k = 1; k <= add_end; ++k) {
        if (mode == PadMode::CONSTANT) padded.push_back(value);
        if (mode == PadMode::EDGE) padded.push_back(in[n - 1]);
        if (mode == PadMode::REFLECT) padded.push_back(in[n - 1 - k]);  // mirror about in[n-1]
      }
      const int64_t kept = static_cast<int64_t>(padded.size()) - crop_begin - crop_end;
      for (int64_t k = 0; k < kept; ++k) out[k] = padded[crop_begin + k];
    });
    dims[axis] = out_len;
  }
  return a;
}

// ONNX Resize (nearest / linear) over dims 2.. of a rank 3..5 tensor; y_dims gives the output
// sizes, resize.scales the scales (0: out / in).
inline std::vector<double> resize(const ResizeDesc& r, const std::vector<double>& x,
                                  const std::vector<int64_t>& x_dims,
                                  const std::vector<int64_t>& y_dims) {
  std::vector<double> a = x;
  std::vector<int64_t> dims = x_dims;
  // Multilinear interpolation and nearest sampling are separable: resize one spatial axis at a
  // time (ONNX's reference nests 1D interpolations the same way).
  for (size_t axis = 2; axis < dims.size(); ++axis) {
    const int64_t in_len = x_dims[axis];
    const int64_t out_len = y_dims[axis];
    const float given = r.scales[axis - 2];
    const double scale = given > 0.f ? static_cast<double>(given)
                                     : static_cast<double>(out_len) / static_cast<double>(in_len);
    a = detail::map_lines(a, dims, axis, out_len,
                          [&](const std::vector<double>& in, std::vector<double>& out) {
      // ONNX pads the input with its edge values: an index outside reads the nearest edge.
      const auto at = [&](int64_t i) { return in[std::min(std::max<int64_t>(i, 0), in_len - 1)]; };
      for (int64_t o = 0; o < out_len; ++o) {
        double c = 0.0;
        switch (r.coord) {
          case ResizeCoord::HALF_PIXEL: c = (o + 0.5) / scale - 0.5; break;
          case ResizeCoord::ALIGN_CORNERS: {
            // The resized length before rounding: in * scale (ONNX's length_resized).
            const double resized = static_cast<double>(in_len) * scale;
            c = resized <= 1.0 ? 0.0 : o * static_cast<double>(in_len - 1) / (resized - 1.0);
            break;
          }
          case ResizeCoord::ASYMMETRIC: c = o / scale; break;
          case ResizeCoord::PYTORCH_HALF_PIXEL:
            // ONNX's reference: -0.5 for a length-1 output (nearest and linear clamp it to 0).
            c = out_len > 1 ? (o + 0.5) / scale - 0.5 : (r.mode == ResizeMode::CUBIC ? -0.5 : 0.0);
            break;
          case ResizeCoord::TF_HALF_PIXEL_FOR_NN: c = (o + 0.5) / scale; break;
        }
        if (r.mode == ResizeMode::CUBIC) {
          // As ONNX's reference: the 4 indices nearest to c (ties to the lower index) in the
          // input padded by 2 edge values each side; ratio 1 for an integer c.
          const double A = r.cubic_coeff_a;
          const double ratio = c == std::floor(c) ? 1.0 : c - std::floor(c);
          const auto k1 = [&](double t) { return ((A + 2) * t - (A + 3)) * t * t + 1; };  // |t| <= 1
          const auto k2 = [&](double t) { return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A; };  // 1 < |t| < 2
          double coeff[4] = {k2(ratio + 1), k1(ratio), k1(1 - ratio), k2(2 - ratio)};
          // The 4 nearest lie within 4 of c: only that window of the padded positions competes.
          int64_t idx[9];
          int count = 0;
          const int64_t lo = std::max<int64_t>(-2, static_cast<int64_t>(std::floor(c)) - 4);
          const int64_t hi = std::min<int64_t>(in_len + 2, static_cast<int64_t>(std::floor(c)) + 5);
          for (int64_t p = lo; p < hi && count < 9; ++p) idx[count++] = p;
          std::stable_sort(idx, idx + count, [&](int64_t u, int64_t v) {
            return std::fabs(c - static_cast<double>(u)) < std::fabs(c - static_cast<double>(v));
          });
          std::sort(idx, idx + 4);
          if (r.exclude_outside) {
            double sum = 0.0;
            for (int j = 0; j < 4; ++j) {
              if (idx[j] < 0 || idx[j] >= in_len) coeff[j] = 0.0;
              sum += coeff[j];
            }
            for (double& w : coeff) w /= sum;
          }
          double v = 0.0;
          // A zero weight (an integer c's outer taps, an excluded one) reads nothing (inf stays
          // out), as the kernels and as the linear mode above.
          for (int j = 0; j < 4; ++j) v += coeff[j] != 0.0 ? coeff[j] * at(idx[j]) : 0.0;
          out[o] = v;
          continue;
        }
        const double fl = std::floor(c);
        const int64_t i = static_cast<int64_t>(fl);
        const double ratio = c - fl;
        if (r.mode == ResizeMode::LINEAR) {
          out[o] = ratio == 0.0 ? at(i) : (1.0 - ratio) * at(i) + ratio * at(i + 1);
          continue;
        }
        bool up = false;  // take i + 1 rather than i
        if (ratio != 0.0) {
          switch (r.nearest) {
            case ResizeNearest::ROUND_PREFER_FLOOR: up = ratio > 0.5; break;
            case ResizeNearest::ROUND_PREFER_CEIL: up = ratio >= 0.5; break;
            case ResizeNearest::FLOOR: up = false; break;
            case ResizeNearest::CEIL: up = true; break;
          }
        }
        out[o] = at(up ? i + 1 : i);
      }
    });
    dims[axis] = out_len;
  }
  return a;
}

// Reduces every dim where y_dims is 1 and x_dims is not.
inline std::vector<double> reduce(ReduceOp op, const std::vector<double>& x,
                                  const std::vector<int64_t>& x_dims,
                                  const std::vector<int64_t>& y_dims) {
  const size_t rank = x_dims.size();
  const int64_t y_count = detail::product(y_dims, 0, rank);
  std::vector<long double> acc(static_cast<size_t>(y_count), 0.0L);
  std::vector<int64_t> hits(static_cast<size_t>(y_count), 0);
  if (op == ReduceOp::MAX) std::fill(acc.begin(), acc.end(), -std::numeric_limits<long double>::infinity());
  if (op == ReduceOp::MIN) std::fill(acc.begin(), acc.end(), std::numeric_limits<long double>::infinity());
  std::vector<int64_t> idx(rank, 0);
  for (size_t p = 0; p < x.size(); ++p) {
    // The y element this x element folds into: reduced dims collapse to index 0.
    int64_t yp = 0;
    for (size_t d = 0; d < rank; ++d) yp = yp * y_dims[d] + (y_dims[d] == 1 ? 0 : idx[d]);
    const long double v = x[p];
    switch (op) {
      case ReduceOp::SUM:
      case ReduceOp::MEAN: acc[yp] += v; break;
      // ONNX ReduceMax/ReduceMin and PyTorch: a NaN anywhere in the group makes the result NaN
      // (std::max/min alone would drop a NaN that is not their first argument).
      case ReduceOp::MAX: acc[yp] = std::isnan(acc[yp]) || std::isnan(v) ? v + acc[yp] : std::max(acc[yp], v); break;
      case ReduceOp::MIN: acc[yp] = std::isnan(acc[yp]) || std::isnan(v) ? v + acc[yp] : std::min(acc[yp], v); break;
    }
    ++hits[yp];
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < x_dims[d]) break;
      idx[d] = 0;
    }
  }
  std::vector<double> y(static_cast<size_t>(y_count));
  for (int64_t i = 0; i < y_count; ++i)
    y[i] = static_cast<double>(op == ReduceOp::MEAN ? acc[i] / hits[i] : acc[i]);
  return y;
}

}  // namespace ref
}  // namespace jet
