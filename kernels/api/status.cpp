#include <cstdio>

#include "check.h"

namespace jet {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::SUCCESS: return "SUCCESS";
    case StatusCode::NOT_INITIALIZED: return "NOT_INITIALIZED";
    case StatusCode::ALLOC_FAILED: return "ALLOC_FAILED";
    case StatusCode::BAD_PARAM: return "BAD_PARAM";
    case StatusCode::INVALID_VALUE: return "INVALID_VALUE";
    case StatusCode::ARCH_MISMATCH: return "ARCH_MISMATCH";
    case StatusCode::EXECUTION_FAILED: return "EXECUTION_FAILED";
    case StatusCode::INTERNAL_ERROR: return "INTERNAL_ERROR";
    case StatusCode::NOT_SUPPORTED: return "NOT_SUPPORTED";
  }
  return "UNKNOWN_STATUS";
}

std::string Status::to_string() const {
  std::string s = status_code_name(code_);
  if (!message_.empty()) {
    s += ": ";
    s += message_;
  }
  return s;
}

Status make_status(StatusCode code, const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return Status(code, buf);
}

std::string dims_text(int rank, const int64_t* dims) {
  std::string s = "[";
  for (int i = 0; i < rank; ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

std::string dims_text(const std::vector<int64_t>& dims) {
  return dims_text(static_cast<int>(dims.size()), dims.data());
}

Status in_routine(const char* routine, Status s) {
  if (s.ok()) return s;
  return Status(s.code(), std::string(routine) + ": " + s.message());
}

Status check_ptr(const char* routine, const void* p, const char* what) {
  if (p) return Status();
  return make_status(StatusCode::BAD_PARAM, "%s: %s is a null pointer", routine, what);
}

Status check_same_dtype(const char* routine, const TensorDesc& a, const char* an,
                        const TensorDesc& b, const char* bn) {
  if (a.dtype() == b.dtype()) return Status();
  return make_status(StatusCode::BAD_PARAM, "%s: %s is %s but %s is %s", routine, an,
                     dtype_name(a.dtype()), bn, dtype_name(b.dtype()));
}

Status check_same_dims(const char* routine, const TensorDesc& a, const char* an,
                       const TensorDesc& b, const char* bn) {
  if (a.same_dims(b)) return Status();
  return make_status(StatusCode::BAD_PARAM, "%s: %s has dims %s but %s has dims %s", routine, an,
                     dims_text(a.rank(), a.dims()).c_str(), bn,
                     dims_text(b.rank(), b.dims()).c_str());
}

TensorDesc align_rank(const TensorDesc& d, int rank) {
  if (d.rank() >= rank) return d;
  const int pad = rank - d.rank();
  int64_t dims[kMaxRank], strides[kMaxRank];
  for (int i = 0; i < pad; ++i) {
    dims[i] = 1;
    strides[i] = 0;
  }
  for (int i = 0; i < d.rank(); ++i) {
    dims[pad + i] = d.dim(i);
    strides[pad + i] = d.stride(i);
  }
  return TensorDesc::strided(d.dtype(), rank, dims, strides);
}

Status check_broadcast(const char* routine, const TensorDesc& b, const char* bn,
                       const TensorDesc& c, const char* cn) {
  bool ok = b.rank() == c.rank();
  for (int i = 0; ok && i < b.rank(); ++i) ok = b.dim(i) == 1 || b.dim(i) == c.dim(i);
  if (ok) return Status();
  return make_status(StatusCode::BAD_PARAM,
                     "%s: %s with dims %s does not broadcast to %s with dims %s (same rank, "
                     "each dim 1 or equal)",
                     routine, bn, dims_text(b.rank(), b.dims()).c_str(), cn,
                     dims_text(c.rank(), c.dims()).c_str());
}

Status check_in_place(const char* routine, const void* in, const TensorDesc& in_desc,
                      const char* in_name, const void* out, const TensorDesc& out_desc,
                      const char* out_name) {
  if (in != out || in_desc.same_layout(out_desc)) return Status();
  return make_status(StatusCode::BAD_PARAM,
                     "%s: %s and %s are the same buffer but %s (dims %s, strides %s) does not "
                     "have %s's layout (dims %s, strides %s); in-place use needs one layout",
                     routine, in_name, out_name, in_name,
                     dims_text(in_desc.rank(), in_desc.dims()).c_str(),
                     dims_text(in_desc.rank(), in_desc.strides()).c_str(), out_name,
                     dims_text(out_desc.rank(), out_desc.dims()).c_str(),
                     dims_text(out_desc.rank(), out_desc.strides()).c_str());
}

Status check_index_dtype(const char* routine, const TensorDesc& indices) {
  if (indices.dtype() == DType::I32 || indices.dtype() == DType::I64) return Status();
  return make_status(StatusCode::BAD_PARAM, "%s: indices are %s, expected i32 or i64", routine,
                     dtype_name(indices.dtype()));
}

Status check_gather_descs(const char* routine, int axis, const TensorDesc& x_desc,
                          const TensorDesc& indices_desc, const TensorDesc& y_desc) {
  JET_RETURN_IF_ERROR(in_routine(routine, x_desc.validate_any_dtype("x")));
  JET_RETURN_IF_ERROR(in_routine(routine, indices_desc.validate_any_dtype("indices")));
  JET_RETURN_IF_ERROR(in_routine(routine, y_desc.validate_any_dtype("y")));
  JET_RETURN_IF_ERROR(check_same_dtype(routine, x_desc, "x", y_desc, "y"));
  JET_RETURN_IF_ERROR(check_index_dtype(routine, indices_desc));
  if (axis < 0 || axis >= x_desc.rank())
    return make_status(StatusCode::BAD_PARAM, "%s: axis %d is outside [0, %d)", routine, axis,
                       x_desc.rank());
  return Status();
}

Status check_gather_buffers(const char* routine, const void* x, const void* indices,
                            const void* y) {
  JET_RETURN_IF_ERROR(check_ptr(routine, x, "x"));
  JET_RETURN_IF_ERROR(check_ptr(routine, indices, "indices"));
  JET_RETURN_IF_ERROR(check_ptr(routine, y, "y"));
  if (y == x || y == indices)
    return make_status(StatusCode::BAD_PARAM, "%s: y is the same buffer as %s", routine,
                       y == x ? "x" : "indices");
  return Status();
}

Status check_broadcast_input(const char* routine, const void* in, const TensorDesc& in_desc,
                             const char* in_name, const void* out, const TensorDesc& out_desc,
                             const char* out_name, TensorDesc* aligned) {
  *aligned = align_rank(in_desc, out_desc.rank());
  JET_RETURN_IF_ERROR(check_broadcast(routine, *aligned, in_name, out_desc, out_name));
  JET_RETURN_IF_ERROR(check_ptr(routine, in, in_name));
  return check_in_place(routine, in, *aligned, in_name, out, out_desc, out_name);
}

static Status check_io_descs(const char* routine, Ranks ranks, const TensorDesc& x_desc,
                             const void* x, const TensorDesc& y_desc, const void* y) {
  if (ranks == Ranks::SPATIAL) {
    JET_RETURN_IF_ERROR(in_routine(routine, x_desc.validate_spatial("x")));
    JET_RETURN_IF_ERROR(in_routine(routine, y_desc.validate_spatial("y")));
  } else {
    JET_RETURN_IF_ERROR(in_routine(routine, x_desc.validate("x")));
    JET_RETURN_IF_ERROR(in_routine(routine, y_desc.validate("y")));
  }
  JET_RETURN_IF_ERROR(check_same_dtype(routine, x_desc, "x", y_desc, "y"));
  JET_RETURN_IF_ERROR(check_ptr(routine, x, "x"));
  return check_ptr(routine, y, "y");
}

Status check_elementwise_io(const char* routine, Ranks ranks, const TensorDesc& x_desc,
                            const void* x, const TensorDesc& y_desc, const void* y) {
  JET_RETURN_IF_ERROR(check_io_descs(routine, ranks, x_desc, x, y_desc, y));
  JET_RETURN_IF_ERROR(check_same_dims(routine, x_desc, "x", y_desc, "y"));
  return check_in_place(routine, x, x_desc, "x", y, y_desc, "y");
}

Status check_reshaping_io(const char* routine, Ranks ranks, const TensorDesc& x_desc,
                          const void* x, const TensorDesc& y_desc, const void* y) {
  JET_RETURN_IF_ERROR(check_io_descs(routine, ranks, x_desc, x, y_desc, y));
  if (x_desc.rank() == y_desc.rank()) return Status();
  return make_status(StatusCode::BAD_PARAM, "%s: x has rank %d but y has rank %d", routine,
                     x_desc.rank(), y_desc.rank());
}

Status cuda_not_available(const char* routine) {
  if (!built_with_cuda())
    return make_status(StatusCode::NOT_SUPPORTED,
                       "%s: this build of jet has no CUDA backend (configure with CUDA)", routine);
  return make_status(StatusCode::NOT_SUPPORTED,
                     "%s: the CUDA backend does not implement this routine yet", routine);
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::BOOL: return "bool";
  }
  return "unknown-dtype";
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32: return 4;
    case DType::F16: return 2;
    case DType::I32: return 4;
    case DType::I64: return 8;
    case DType::BOOL: return 1;
  }
  return 0;
}

}  // namespace jet
