// conv_backward_filter, its workspace query and conv_backward_bias: validation and dispatch. The
// GEMM algorithm is composed here: the backend lowers x and dy into the workspace, then
// gemm_forward (either backend) computes every group's dw = dy_g @ col_g^T as one batched GEMM,
// or, split along the N x output positions it sums over (ungrouped problems), the partial
// products of the chunks as one batched GEMM into the workspace and their sum by reduce_forward.
// WINOGRAD likewise: the backend's transforms, one batched gemm_forward of the 16 transformed
// products (36 with ConvMath::ALLOW_APPROXIMATE: F(3x3, 4x4)) and reduce_forward over the
// chunks, then the backend's output transform into dw.
//
// CPU convolution backward filter and bias gradient.
//  - implicit: each dw element is a sum over images and output positions, in double, with x
//    addressed on the fly (kernels/training/conv_grad.h); taps in the padding contribute 0.
//  - lower: the GEMM algorithm's im2col of x and packing of dy (the GEMM itself is
//    gemm_forward, called by the front end).
//  - bias: per channel, a double sum over images and positions.

#include <algorithm>

#include "../winograd_grad.h"
#include "../api/train_check.h"
#include "../../cpu/cpu_common.h"
#include "../backend.h"
#include "../conv_grad.h"

namespace jet {

JET_CPU_ENTRY(conv_backward_bias, float alpha, const TensorDesc& dy_desc, const void* dy,
              float beta, const TensorDesc& db_desc, void* db);
JET_CUDA_ENTRY(conv_backward_bias, float alpha, const TensorDesc& dy_desc, const void* dy,
               float beta, const TensorDesc& db_desc, void* db, void* workspace);
JET_CUDA_ENTRY(conv_backward_bias_activation, const ActivationDesc& act, const TensorDesc& x_desc,
               const void* x, const TensorDesc& dy_desc, const void* dy,
               const TensorDesc& dpre_desc, void* dpre, float alpha, float beta,
               const TensorDesc& db_desc, void* db, void* workspace);
JET_BACKEND_ENTRIES(conv_backward_filter_implicit, float alpha, const TensorDesc& x_desc,
                    const void* x, const TensorDesc& dy_desc, const void* dy, const ConvDesc& conv,
                    float beta, const FilterDesc& dw_desc, void* dw);
// The GEMM algorithm's lowering: col[g][j][(n, o)] = x at filter offset j of group g's filter
// row (j = c * ws_c + taps . ws, the filter layout's own order; 0 in the padding), and
// dyp[g][kk][(n, o)] = dy[n, g * K/groups + kk, o]. Both packed, the sum's index (n, o) fastest
// in both, so the GEMM reads each operand along its depth (gemm_forward's fastest form).
JET_BACKEND_ENTRIES(conv_backward_filter_lower, const TensorDesc& x_desc, const void* x,
                    const TensorDesc& dy_desc, const void* dy, const ConvDesc& conv,
                    const FilterDesc& dw_desc, float* col, float* dyp);
// WINOGRAD's transforms (winograd_grad.h): V and U, chunk-major, from x and dy; and dw from the
// summed products M (planes x K x C), blended with alpha and beta.
JET_BACKEND_ENTRIES(conv_backward_filter_winograd_transform, const TensorDesc& x_desc,
                    const void* x, const TensorDesc& dy_desc, const void* dy, const ConvDesc& conv,
                    const FilterDesc& dw_desc, int64_t chunks, float* v, float* u);
JET_BACKEND_ENTRIES(conv_backward_filter_winograd_output, const TensorDesc& x_desc,
                    const TensorDesc& dy_desc, const ConvDesc& conv, const FilterDesc& dw_desc,
                    const float* m, float alpha, float beta, void* dw);
// The bias gradient's workspace for dy (0: one block per channel fills the GPU); workspace null:
// one block per channel, else it holds that many bytes (several blocks per channel).
namespace cuda {
size_t conv_backward_bias_workspace_size(const Handle& h, const TensorDesc& dy_desc);
}  // namespace cuda

const char* conv_bwd_filter_algo_name(ConvBwdFilterAlgo a) {
  switch (a) {
    case ConvBwdFilterAlgo::IMPLICIT_GEMM: return "implicit_gemm";
    case ConvBwdFilterAlgo::GEMM: return "gemm";
    case ConvBwdFilterAlgo::WINOGRAD: return "winograd";
    case ConvBwdFilterAlgo::COUNT: break;
  }
  return "unknown-conv-bwd-filter-algo";
}

namespace {

// Descriptors of x, dy, dw and the convolution agree: dy is exactly conv_output_dims(x, dw).
Status check_filter_problem(const char* fn, const TensorDesc& x_desc, const TensorDesc& dy_desc,
                            const ConvDesc& conv, const FilterDesc& dw_desc) {
  JET_TRY(in_routine(fn, x_desc.validate_spatial("x")));
  JET_TRY(in_routine(fn, dy_desc.validate_spatial("dy")));
  JET_TRY(in_routine(fn, dw_desc.validate("dw")));
  int64_t expected[5];
  JET_TRY(in_routine(fn, conv_output_dims(x_desc, dw_desc, conv, expected)));
  bool same = dy_desc.rank() == x_desc.rank();
  for (int i = 0; same && i < dy_desc.rank(); ++i) same = dy_desc.dim(i) == expected[i];
  if (!same)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: dy has dims %s but the convolution of x (dims %s) with dw gives %s",
                       fn, dims_string(dy_desc.rank(), dy_desc.dims()).c_str(),
                       dims_string(x_desc.rank(), x_desc.dims()).c_str(),
                       dims_string(x_desc.rank(), expected).c_str());
  for (const TensorDesc* d : {&x_desc, &dy_desc})
    if (d->dtype() != DType::F32)
      return make_status(StatusCode::NOT_SUPPORTED,
                         "%s: %s is %s; the training routines take f32 tensors only", fn,
                         d == &x_desc ? "x" : "dy", dtype_name(d->dtype()));
  if (dw_desc.dtype() != DType::F32)
    return make_status(StatusCode::NOT_SUPPORTED,
                       "%s: dw is %s; the training routines take f32 tensors only", fn,
                       dtype_name(dw_desc.dtype()));
  return Status();
}

// The GEMM algorithm's two workspace arrays, in floats: col (C * taps x N * positions) and the
// packed dy (K x N * positions).
void gemm_parts(const TensorDesc& x_desc, const TensorDesc& dy_desc, const FilterDesc& dw_desc,
                int64_t* col, int64_t* dyp) {
  int64_t rows = dy_desc.dim(0);  // N * output positions
  for (int i = 2; i < dy_desc.rank(); ++i) rows *= dy_desc.dim(i);
  int64_t taps = 1;
  for (int i = 0; i < dw_desc.spatial_rank(); ++i) taps *= dw_desc.spatial(i);
  *col = rows * x_desc.dim(1) * taps;
  *dyp = rows * dy_desc.dim(1);
}

// How many chunks GEMM splits its sum over `rows` (N x output positions) into: the tactic when
// one is given (NOT_SUPPORTED unless it divides rows and the problem has one group), else on CUDA
// enough chunks for about eight CTAs of 64 x 64 outputs per SM when dw alone has fewer (at most
// 256 chunks, each at least 128 rows, a divisor of rows), else 1. dw's rows are few and long for
// the early layers (64 x 576 outputs summed over 100352 rows for ResNet's first 3x3 at batch 32):
// without the split a handful of CTAs would do the whole sum. Eight, 256 and 128 come from a sweep
// of the chunk count over ResNet-50's layers at N = 1 and 32 (bench/conv_bwd --filter-chunks,
// H200, 2026-11-27 seventh session): geomean vs cuDNN over the swept layers 0.57 with two CTAs,
// 64 chunks and 256 rows, about 0.62 with these (the best chunk count per layer: 0.70).
// The most chunks worth splitting a sum into on CUDA, for GEMMs whose outputs make `tiles` CTAs
// of 64 x 64: enough for about eight CTAs an SM, at most 256; 1 when the outputs alone fill it.
// GEMM's and WINOGRAD's splits take it as their upper bound.
int64_t chunks_to_fill(const Handle& handle, int64_t tiles) {
  const int64_t target = 8 * static_cast<int64_t>(handle.sm_count());
  return tiles >= target ? 1 : std::min<int64_t>(256, (target + tiles - 1) / tiles);
}

Status gemm_splits(const char* fn, const Handle& handle, const ConvDesc& conv, int64_t groups,
                   int64_t rows, int64_t k, int64_t row, int64_t* splits) {
  const int64_t t = conv.tactic();
  if (t > 0) {
    if (rows % t != 0 || (t > 1 && groups != 1))
      return make_status(StatusCode::NOT_SUPPORTED,
                         "%s: GEMM tactic %lld (the number of chunks of the %lld-row sum) must "
                         "divide it and needs one group (%lld)",
                         fn, static_cast<long long>(t), static_cast<long long>(rows),
                         static_cast<long long>(groups));
    *splits = t;
    return Status();
  }
  *splits = 1;
  if (handle.backend() != Backend::CUDA || groups != 1) return Status();
  for (int64_t s = chunks_to_fill(handle, ((k + 63) / 64) * ((row + 63) / 64)); s > 1; --s) {
    if (rows % s == 0 && rows / s >= 128) {
      *splits = s;
      break;
    }
  }
  return Status();
}

// WINOGRAD's geometry and chunks: NOT_SUPPORTED unless the problem is a 2D 3x3 stride-1
// undilated ungrouped convolution. The chunks: the tactic when one is given (at most the tiles),
// else on CUDA enough for about eight CTAs of 64 x 64 outputs per SM over the 16 or 36 products (up
// to 256 chunks of at least 32 tiles), else 1.
Status winograd_plan(const char* fn, const Handle& handle, const TensorDesc& x_desc,
                     const TensorDesc& dy_desc, const ConvDesc& conv, const FilterDesc& dw_desc,
                     WinogradGradGeom* w) {
  const ConvGradGeom g = make_conv_grad_geom(x_desc, dy_desc, conv, dw_desc);
  if (!winograd_grad_applies(g, conv.spatial_rank()))
    return make_status(StatusCode::NOT_SUPPORTED,
                       "%s: WINOGRAD takes 2D 3x3 filters with stride 1, no dilation and one "
                       "group", fn);
  const int m = winograd_grad_tile(conv);
  const WinogradGradGeom one = make_winograd_grad_geom(g, m, 1);
  int64_t chunks = 1;
  const int64_t t = conv.tactic();
  if (t > 0) {
    if (t > one.tiles)
      return make_status(StatusCode::NOT_SUPPORTED,
                         "%s: WINOGRAD tactic %lld (the number of chunks of the %lld tiles) must "
                         "not exceed them",
                         fn, static_cast<long long>(t), static_cast<long long>(one.tiles));
    chunks = t;
  } else if (handle.backend() == Backend::CUDA) {
    const int64_t most = chunks_to_fill(handle, one.planes * ((g.kg + 63) / 64) * ((g.cg + 63) / 64));
    chunks = std::max<int64_t>(1, std::min<int64_t>(most, one.tiles / 32));
  }
  *w = make_winograd_grad_geom(g, m, chunks);
  return Status();
}

// WINOGRAD's workspace in floats: V, U, the chunks' partial M, and M itself when split.
int64_t winograd_floats(const WinogradGradGeom& w) {
  return w.v_floats() + w.u_floats() + w.m_floats() * (w.chunks + (w.chunks > 1 ? 1 : 0));
}

}  // namespace

Status conv_backward_filter_workspace_size(const Handle& handle, const TensorDesc& x_desc,
                                           const TensorDesc& dy_desc, const ConvDesc& conv,
                                           const FilterDesc& dw_desc, ConvBwdFilterAlgo algo,
                                           size_t* bytes) {
  const char* fn = "conv_backward_filter_workspace_size";
  JET_TRY(check_ptr(fn, bytes, "bytes"));
  JET_TRY(check_filter_problem(fn, x_desc, dy_desc, conv, dw_desc));
  switch (algo) {
    case ConvBwdFilterAlgo::IMPLICIT_GEMM: *bytes = 0; return Status();
    case ConvBwdFilterAlgo::GEMM: {
      int64_t col, dyp, splits;
      gemm_parts(x_desc, dy_desc, dw_desc, &col, &dyp);
      const int64_t rows = dyp / dw_desc.k();
      const int64_t row = col / rows;  // one group: C * taps
      JET_TRY(gemm_splits(fn, handle, conv, conv.groups(), rows, dw_desc.k(), row, &splits));
      const int64_t partials = splits > 1 ? splits * dw_desc.k() * row : 0;
      *bytes = static_cast<size_t>(col + dyp + partials) * sizeof(float);
      return Status();
    }
    case ConvBwdFilterAlgo::WINOGRAD: {
      WinogradGradGeom w;
      JET_TRY(winograd_plan(fn, handle, x_desc, dy_desc, conv, dw_desc, &w));
      *bytes = static_cast<size_t>(winograd_floats(w)) * sizeof(float);
      return Status();
    }
    case ConvBwdFilterAlgo::COUNT: break;
  }
  return make_status(StatusCode::BAD_PARAM, "%s: unknown algorithm %d", fn,
                     static_cast<int>(algo));
}

Status conv_backward_filter(const Handle& handle, float alpha, const TensorDesc& x_desc,
                            const void* x, const TensorDesc& dy_desc, const void* dy,
                            const ConvDesc& conv, ConvBwdFilterAlgo algo, void* workspace,
                            size_t workspace_bytes, float beta, const FilterDesc& dw_desc,
                            void* dw) {
  const char* fn = "conv_backward_filter";
  size_t needed = 0;
  JET_TRY(conv_backward_filter_workspace_size(handle, x_desc, dy_desc, conv, dw_desc, algo,
                                              &needed));
  JET_TRY(check_ptr(fn, x, "x"));
  JET_TRY(check_ptr(fn, dy, "dy"));
  JET_TRY(check_ptr(fn, dw, "dw"));
  if (dw == x || dw == dy)
    return make_status(StatusCode::BAD_PARAM, "%s: dw must not be the same buffer as %s", fn,
                       dw == x ? "x" : "dy");
  if (workspace_bytes < needed || (needed > 0 && !workspace))
    return make_status(StatusCode::BAD_PARAM,
                       "%s: algorithm %s needs %zu bytes of workspace, got %zu%s", fn,
                       conv_bwd_filter_algo_name(algo), needed, workspace_bytes,
                       workspace ? "" : " (a null pointer)");
  const bool cpu = handle.backend() == Backend::CPU;
#if !defined(JET_HAVE_CUDA)
  if (!cpu) return cuda_not_available(fn);
#endif
  if (algo == ConvBwdFilterAlgo::IMPLICIT_GEMM) {
    if (cpu)
      return in_routine(fn, cpu::conv_backward_filter_implicit(alpha, x_desc, x, dy_desc, dy,
                                                               conv, beta, dw_desc, dw));
#if defined(JET_HAVE_CUDA)
    return in_routine(fn, cuda::conv_backward_filter_implicit(handle, alpha, x_desc, x, dy_desc,
                                                              dy, conv, beta, dw_desc, dw));
#endif
  }
  if (algo == ConvBwdFilterAlgo::WINOGRAD) {
    WinogradGradGeom w;
    JET_TRY(winograd_plan(fn, handle, x_desc, dy_desc, conv, dw_desc, &w));
    float* v = static_cast<float*>(workspace);
    float* u = v + w.v_floats();
    float* partial = u + w.u_floats();
    if (cpu) {
      JET_TRY(in_routine(fn, cpu::conv_backward_filter_winograd_transform(
                                 x_desc, x, dy_desc, dy, conv, dw_desc, w.chunks, v, u)));
    } else {
#if defined(JET_HAVE_CUDA)
      JET_TRY(in_routine(fn, cuda::conv_backward_filter_winograd_transform(
                                 handle, x_desc, x, dy_desc, dy, conv, dw_desc, w.chunks, v, u)));
#endif
    }
    // Batch entry b = chunk * planes + z: M_b (K x C) = U_b @ V_b^T over the chunk's tiles.
    const int64_t b = w.chunks * w.planes, k = w.g.kg, c = w.g.cg, tc = w.chunk_tiles;
    GemmDesc nt;
    nt.trans_b = true;
    const TensorDesc ud = TensorDesc::strided(DType::F32, {b, k, tc}, {k * tc, tc, 1});
    const TensorDesc vd = TensorDesc::strided(DType::F32, {b, c, tc}, {c * tc, tc, 1});
    const TensorDesc pd = TensorDesc::strided(DType::F32, {b, k, c}, {k * c, c, 1});
    JET_TRY(in_routine(fn, gemm_forward(handle, nt, 1.f, ud, u, vd, v, TensorDesc(), nullptr, 0.f,
                                        pd, partial)));
    const float* m = partial;
    if (w.chunks > 1) {  // M = the sum of the chunks' partial products
      float* sum = partial + w.chunks * w.m_floats();
      const TensorDesc parts =
          TensorDesc::strided(DType::F32, {w.chunks, w.m_floats()}, {w.m_floats(), 1});
      const TensorDesc total = TensorDesc::strided(DType::F32, {1, w.m_floats()}, {w.m_floats(), 1});
      JET_TRY(in_routine(fn, reduce_forward(handle, ReduceOp::SUM, 1.f, parts, partial, 0.f, total, sum)));
      m = sum;
    }
    if (cpu)
      return in_routine(fn, cpu::conv_backward_filter_winograd_output(x_desc, dy_desc, conv, dw_desc,
                                                                      m, alpha, beta, dw));
#if defined(JET_HAVE_CUDA)
    return in_routine(fn, cuda::conv_backward_filter_winograd_output(
                              handle, x_desc, dy_desc, conv, dw_desc, m, alpha, beta, dw));
#endif
  }
  // GEMM: lower, then dw[g] (Kg x C/groups * taps, rows ws_k apart) = dyp[g] @ col[g]^T.
  int64_t col_n, dyp_n;
  gemm_parts(x_desc, dy_desc, dw_desc, &col_n, &dyp_n);
  float* col = static_cast<float*>(workspace);
  float* dyp = col + col_n;
  if (cpu) {
    JET_TRY(in_routine(fn, cpu::conv_backward_filter_lower(x_desc, x, dy_desc, dy, conv, dw_desc,
                                                           col, dyp)));
  } else {
#if defined(JET_HAVE_CUDA)
    JET_TRY(in_routine(fn, cuda::conv_backward_filter_lower(handle, x_desc, x, dy_desc, dy, conv,
                                                            dw_desc, col, dyp)));
#endif
  }
  const int64_t groups = conv.groups();
  const int64_t kg = dw_desc.k() / groups;
  const int64_t rows = dyp_n / dw_desc.k();  // N * output positions
  const int64_t row = col_n / rows / groups;  // C / groups * taps
  const int64_t ws_k = dw_desc.as_tensor().stride(0);
  const TensorDesc y = TensorDesc::strided(DType::F32, {groups, kg, row}, {kg * ws_k, ws_k, 1});
  int64_t splits = 1;
  JET_TRY(gemm_splits(fn, handle, conv, groups, rows, kg, row, &splits));
  GemmDesc nt;  // dw = dyp @ col^T: both operands along the sum's index
  nt.trans_b = true;
  if (splits == 1) {
    const TensorDesc a = TensorDesc::strided(DType::F32, {groups, kg, rows}, {kg * rows, rows, 1});
    const TensorDesc b = TensorDesc::strided(DType::F32, {groups, row, rows}, {row * rows, rows, 1});
    return in_routine(fn, gemm_forward(handle, nt, alpha, a, dyp, b, col, TensorDesc(), nullptr,
                                       beta, y, dw));
  }
  // One group: chunk s of the rows gives partial[s] = dyp[:, chunk] @ col[:, chunk]^T, then
  // dw = alpha * sum over s + beta * dw (reduce_forward over the chunks' dim).
  const int64_t chunk = rows / splits;
  float* partial = dyp + dyp_n;
  const TensorDesc a = TensorDesc::strided(DType::F32, {splits, kg, chunk}, {chunk, rows, 1});
  const TensorDesc b = TensorDesc::strided(DType::F32, {splits, row, chunk}, {chunk, rows, 1});
  const TensorDesc p = TensorDesc::strided(DType::F32, {splits, kg, row}, {kg * row, row, 1});
  JET_TRY(in_routine(fn, gemm_forward(handle, nt, 1.f, a, dyp, b, col, TensorDesc(), nullptr, 0.f,
                                      p, partial)));
  const TensorDesc sum = TensorDesc::strided(DType::F32, {1, kg, row}, {kg * ws_k, ws_k, 1});
  return in_routine(fn, reduce_forward(handle, ReduceOp::SUM, alpha, p, partial, beta, sum, dw));
}

Status conv_backward_bias_workspace_size(const Handle& handle, const TensorDesc& dy_desc,
                                         size_t* bytes) {
  const char* fn = "conv_backward_bias_workspace_size";
  JET_TRY(check_ptr(fn, bytes, "bytes"));
  *bytes = 0;
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, dy_desc, &dy_desc, "dy"));
  if (handle.backend() == Backend::CPU) return Status();
#if defined(JET_HAVE_CUDA)
  *bytes = cuda::conv_backward_bias_workspace_size(handle, dy_desc);
  return Status();
#else
  return cuda_not_available(fn);
#endif
}

Status conv_backward_bias(const Handle& handle, float alpha, const TensorDesc& dy_desc,
                          const void* dy, float beta, const TensorDesc& db_desc, void* db) {
  return conv_backward_bias(handle, alpha, dy_desc, dy, beta, db_desc, db, nullptr, 0);
}

namespace {

// The bias gradient's checks: db's dims for dy's ([1, K, 1...]), not dy's buffer, and the
// optional workspace (none, or conv_backward_bias_workspace_size's bytes): *ws is what the
// backend may use.
Status check_bias_grad(const char* fn, const Handle& handle, const TensorDesc& dy_desc,
                       const void* dy, const TensorDesc& db_desc, const void* db, void* workspace,
                       size_t workspace_bytes, void** ws) {
  JET_TRY(check_train_tensor(fn, Ranks::ANY, db_desc, db, "db"));
  bool ok = db_desc.rank() == dy_desc.rank();
  for (int i = 0; ok && i < db_desc.rank(); ++i) ok = db_desc.dim(i) == (i == 1 ? dy_desc.dim(1) : 1);
  if (!ok)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: db has dims %s; for dy with dims %s it must be [1, %lld, 1...] "
                       "(one value per channel, dy's rank)",
                       fn, dims_string(db_desc.rank(), db_desc.dims()).c_str(),
                       dims_string(dy_desc.rank(), dy_desc.dims()).c_str(),
                       static_cast<long long>(dy_desc.dim(1)));
  if (db == dy)
    return make_status(StatusCode::BAD_PARAM, "%s: db must not be the same buffer as dy", fn);
  size_t need = 0;
  if (workspace || workspace_bytes != 0)
    JET_TRY(conv_backward_bias_workspace_size(handle, dy_desc, &need));
  return optional_workspace(fn, need, workspace, workspace_bytes, ws);
}

}  // namespace

Status conv_backward_bias(const Handle& handle, float alpha, const TensorDesc& dy_desc,
                          const void* dy, float beta, const TensorDesc& db_desc, void* db,
                          void* workspace, size_t workspace_bytes) {
  const char* fn = "conv_backward_bias";
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, dy_desc, dy, "dy"));
  void* ws = nullptr;
  JET_TRY(check_bias_grad(fn, handle, dy_desc, dy, db_desc, db, workspace, workspace_bytes, &ws));
  if (handle.backend() == Backend::CPU) {
    (void)ws;  // the CPU sums each channel in one pass
    return cpu::conv_backward_bias(alpha, dy_desc, dy, beta, db_desc, db);
  }
#if defined(JET_HAVE_CUDA)
  return cuda::conv_backward_bias(handle, alpha, dy_desc, dy, beta, db_desc, db, ws);
#else
  return cuda_not_available(fn);
#endif
}

Status conv_backward_bias_activation(const Handle& handle, const ActivationDesc& act,
                                     const TensorDesc& x_desc, const void* x,
                                     const TensorDesc& dy_desc, const void* dy,
                                     const TensorDesc& dpre_desc, void* dpre, float alpha,
                                     float beta, const TensorDesc& db_desc, void* db,
                                     void* workspace, size_t workspace_bytes) {
  const char* fn = "conv_backward_bias_activation";
  JET_TRY(in_routine(fn, act.validate()));
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, x_desc, x, "x"));
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, dy_desc, dy, "dy"));
  JET_TRY(check_train_tensor(fn, Ranks::SPATIAL, dpre_desc, dpre, "dpre"));
  JET_TRY(check_dims_as(fn, dy_desc, "dy", x_desc, "x"));
  JET_TRY(check_dims_as(fn, dpre_desc, "dpre", x_desc, "x"));
  // Element by element: dpre may overwrite dy or x when it has the same layout.
  JET_TRY(check_in_place(fn, dy, dy_desc, "dy", dpre, dpre_desc, "dpre"));
  JET_TRY(check_in_place(fn, x, x_desc, "x", dpre, dpre_desc, "dpre"));
  if (db == x || db == dpre)
    return make_status(StatusCode::BAD_PARAM, "%s: db must not be the same buffer as x or dpre", fn);
  void* ws = nullptr;
  JET_TRY(check_bias_grad(fn, handle, dy_desc, dy, db_desc, db, workspace, workspace_bytes, &ws));
  if (handle.backend() == Backend::CPU) {
    // The CPU reference composes the two routines (dpre is complete before it is summed).
    JET_TRY(in_routine(fn, activation_backward(handle, act, 1.f, x_desc, x, dy_desc, dy, 0.f, dpre_desc, dpre)));
    return in_routine(fn, conv_backward_bias(handle, alpha, dpre_desc, dpre, beta, db_desc, db, workspace,
                                             workspace_bytes));
  }
#if defined(JET_HAVE_CUDA)
  return cuda::conv_backward_bias_activation(handle, act, x_desc, x, dy_desc, dy, dpre_desc, dpre, alpha, beta,
                                             db_desc, db, ws);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {

Status conv_backward_filter_implicit(float alpha, const TensorDesc& x_desc, const void* x,
                                     const TensorDesc& dy_desc, const void* dy,
                                     const ConvDesc& conv, float beta, const FilterDesc& dw_desc,
                                     void* dw) {
  const ConvGradGeom g = make_conv_grad_geom(x_desc, dy_desc, conv, dw_desc);
  const float* xp = static_cast<const float*>(x);
  const float* dyp = static_cast<const float*>(dy);
  for (int64_t k = 0; k < g.groups * g.kg; ++k) {
    const int64_t c_first = k / g.kg * g.cg;  // the group's first input channel
    for (int64_t j = 0; j < g.row(); ++j) {
      const FilterTap f = filter_tap(g, j);
      double acc = 0.0;
      for (int64_t n = 0; n < g.n; ++n) {
        for (int64_t p = 0; p < g.positions; ++p) {
          int64_t o[3];
          conv_grad_position(g, p, o);
          const int64_t xo = conv_grad_x_offset(g, f, n, o);
          if (xo < 0) continue;
          const float d = dyp[n * g.ys_n + k * g.ys_c + o[0] * g.ys[0] + o[1] * g.ys[1] +
                              o[2] * g.ys[2]];
          acc += static_cast<double>(d) * xp[xo + c_first * g.xs_c];
        }
      }
      blend_store(DType::F32, dw, k * g.ws_k + filter_offset(g, f), alpha,
                  static_cast<float>(acc), beta);
    }
  }
  return Status();
}

Status conv_backward_filter_lower(const TensorDesc& x_desc, const void* x,
                                  const TensorDesc& dy_desc, const void* dy, const ConvDesc& conv,
                                  const FilterDesc& dw_desc, float* col, float* dyp) {
  const ConvGradGeom g = make_conv_grad_geom(x_desc, dy_desc, conv, dw_desc);
  const float* xp = static_cast<const float*>(x);
  const float* dp = static_cast<const float*>(dy);
  const int64_t rows = g.n * g.positions, row = g.row();
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t n = r / g.positions;
      int64_t o[3];
      conv_grad_position(g, r % g.positions, o);
      for (int64_t j = 0; j < row; ++j) {
        const FilterTap f = filter_tap(g, j);
        const int64_t xo = conv_grad_x_offset(g, f, n, o);
        // Row j of the lowered matrix is dw's element at offset j of a filter row.
        col[(grp * row + filter_offset(g, f)) * rows + r] = xo < 0 ? 0.f : xp[xo + grp * g.cg * g.xs_c];
      }
    }
  }
  for (int64_t k = 0; k < g.groups * g.kg; ++k)
    for (int64_t r = 0; r < rows; ++r) {
      int64_t o[3];
      conv_grad_position(g, r % g.positions, o);
      dyp[k * rows + r] = dp[r / g.positions * g.ys_n + k * g.ys_c + o[0] * g.ys[0] +
                             o[1] * g.ys[1] + o[2] * g.ys[2]];
    }
  return Status();
}

namespace {

template <int M>
void winograd_transform(const WinogradGradGeom& w, const float* xp, const float* dp, float* v, float* u) {
  float tile[(M + 2) * (M + 2)];
  for (int64_t t = 0; t < w.chunks * w.chunk_tiles; ++t) {
    int64_t n = 0, ty = 0, tx = 0;
    const bool real = t < w.tiles;  // the last chunk's padding tiles are zeros in both
    if (real) winograd_tile_at(w, t, &n, &ty, &tx);
    for (int64_t c = 0; c < w.g.cg; ++c) {
      if (real) winograd_data_tile<M>(w, xp, n, c, ty, tx, tile);
      for (int z = 0; z < w.planes; ++z) v[w.v_offset(t, z, c)] = real ? tile[z] : 0.f;
    }
    for (int64_t k = 0; k < w.g.kg; ++k) {
      if (real) winograd_delta_tile<M>(w, dp, n, k, ty, tx, tile);
      for (int z = 0; z < w.planes; ++z) u[w.u_offset(t, z, k)] = real ? tile[z] : 0.f;
    }
  }
}

template <int M>
void winograd_output(const ConvGradGeom& g, const float* m, float alpha, float beta, void* dw) {
  const int64_t kc = g.kg * g.cg;
  float mm[(M + 2) * (M + 2)], out[9];
  for (int64_t k = 0; k < g.kg; ++k)
    for (int64_t c = 0; c < g.cg; ++c) {
      for (int z = 0; z < (M + 2) * (M + 2); ++z) mm[z] = m[z * kc + k * g.cg + c];
      winograd_filter_tile<M>(mm, out);
      for (int r = 0; r < 3; ++r)
        for (int q = 0; q < 3; ++q)
          blend_store(DType::F32, dw, winograd_dw_offset(g, k, c, r, q), alpha, out[r * 3 + q], beta);
    }
}

}  // namespace

Status conv_backward_filter_winograd_transform(const TensorDesc& x_desc, const void* x,
                                               const TensorDesc& dy_desc, const void* dy,
                                               const ConvDesc& conv, const FilterDesc& dw_desc,
                                               int64_t chunks, float* v, float* u) {
  const WinogradGradGeom w = make_winograd_grad_geom(make_conv_grad_geom(x_desc, dy_desc, conv, dw_desc),
                                                     winograd_grad_tile(conv), chunks);
  const float* xp = static_cast<const float*>(x);
  const float* dp = static_cast<const float*>(dy);
  if (w.m == 4)
    winograd_transform<4>(w, xp, dp, v, u);
  else
    winograd_transform<2>(w, xp, dp, v, u);
  return Status();
}

Status conv_backward_filter_winograd_output(const TensorDesc& x_desc, const TensorDesc& dy_desc,
                                            const ConvDesc& conv, const FilterDesc& dw_desc,
                                            const float* m, float alpha, float beta, void* dw) {
  const ConvGradGeom g = make_conv_grad_geom(x_desc, dy_desc, conv, dw_desc);
  if (winograd_grad_tile(conv) == 4)
    winograd_output<4>(g, m, alpha, beta, dw);
  else
    winograd_output<2>(g, m, alpha, beta, dw);
  return Status();
}

Status conv_backward_bias(float alpha, const TensorDesc& dy_desc, const void* dy, float beta,
                          const TensorDesc& db_desc, void* db) {
  const float* dp = static_cast<const float*>(dy);
  // Every dim but C, with dy's strides.
  int64_t dims[kMaxRank], strides[kMaxRank];
  int rank = 0;
  for (int i = 0; i < dy_desc.rank(); ++i) {
    if (i == 1) continue;
    dims[rank] = dy_desc.dim(i);
    strides[rank++] = dy_desc.stride(i);
  }
  for (int64_t k = 0; k < dy_desc.dim(1); ++k) {
    double acc = 0.0;
    StridedWalk w(rank, dims, strides);
    do {
      acc += dp[k * dy_desc.stride(1) + w.off[0]];
    } while (w.next());
    blend_store(DType::F32, db, k * db_desc.stride(1), alpha, static_cast<float>(acc), beta);
  }
  return Status();
}

}  // namespace cpu

}  // namespace jet
