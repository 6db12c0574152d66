// Validation helpers shared by the routines' front ends (kernels/cpu/<op>.cpp,
// kernels/api/concat.cpp).
#pragma once

#include <cstdarg>
#include <string>

#include "jet/dnn.h"

namespace jet {

// Status with a printf-style message.
Status make_status(StatusCode code, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

// The old name of dims_text (jet/dnn/common.h), for sources that still spell it (the training
// add-on's front ends, in another branch at the time of the rename).
inline std::string dims_string(int rank, const int64_t* dims) { return dims_text(rank, dims); }

// The old name of JET_RETURN_IF_ERROR (jet/dnn/common.h), kept for the sources that still spell it
// (kernels/cuda's GEMM and conv files, the training add-on: renamed when nobody else edits them).
#define JET_TRY(expr) JET_RETURN_IF_ERROR(expr)

// Prefixes a failing status's message with the routine's name.
Status in_routine(const char* routine, Status s);

// BAD_PARAM naming the pointer when it is null.
Status check_ptr(const char* routine, const void* p, const char* what);

// BAD_PARAM unless `a` and `b` have the same dtype.
Status check_same_dtype(const char* routine, const TensorDesc& a, const char* an,
                        const TensorDesc& b, const char* bn);

// BAD_PARAM unless `a` and `b` have the same dims.
Status check_same_dims(const char* routine, const TensorDesc& a, const char* an,
                       const TensorDesc& b, const char* bn);

// d with leading dims of size 1 (stride 0) added up to `rank` (ONNX's rank alignment for
// broadcasting). A d of rank >= `rank` is returned unchanged; check_broadcast then reports a
// mismatch.
TensorDesc align_rank(const TensorDesc& d, int rank);

// BAD_PARAM unless b broadcasts to c: same rank, each dim of b 1 or equal to c's.
Status check_broadcast(const char* routine, const TensorDesc& b, const char* bn,
                       const TensorDesc& c, const char* cn);

// BAD_PARAM when `in` and `out` are the same buffer but their descriptors address different
// elements: routines that run element by element may work in place only with one layout.
Status check_in_place(const char* routine, const void* in, const TensorDesc& in_desc,
                      const char* in_name, const void* out, const TensorDesc& out_desc,
                      const char* out_name);

// The checks of an input that broadcasts to the output of an element-wise routine (op_tensor,
// logic_tensor, where_forward): *aligned = align_rank(in_desc, out_desc's rank), which must
// broadcast to out_desc; `in` non-null; and, when it is the output's buffer, one layout.
Status check_broadcast_input(const char* routine, const void* in, const TensorDesc& in_desc,
                             const char* in_name, const void* out, const TensorDesc& out_desc,
                             const char* out_name, TensorDesc* aligned);

// BAD_PARAM unless `indices` are I32 or I64 (gather, gather_elements, the scatters).
Status check_index_dtype(const char* routine, const TensorDesc& indices);

// The checks every gather routine (gather_forward, gather_elements_forward) makes before its own
// dims rules: x, indices and y valid, y of x's dtype, i32 / i64 indices, axis in [0, x's rank).
Status check_gather_descs(const char* routine, int axis, const TensorDesc& x_desc,
                          const TensorDesc& indices_desc, const TensorDesc& y_desc);

// ... and after them: x, indices and y non-null, y apart from both.
Status check_gather_buffers(const char* routine, const void* x, const void* indices,
                            const void* y);

// Which rank a routine's tensors may have.
enum class Ranks { ANY, SPATIAL };  // ANY: 1..8; SPATIAL: 3..5 (N, C, 1-3 spatial dims)

// The checks of a routine that maps x to y element by element: both descriptors valid, the same
// dims and dtype, non-null pointers, and in place only with one layout.
Status check_elementwise_io(const char* routine, Ranks ranks, const TensorDesc& x_desc,
                            const void* x, const TensorDesc& y_desc, const void* y);

// The checks of a routine whose y has other dims than x: both descriptors valid, the same rank
// and dtype, non-null pointers.
Status check_reshaping_io(const char* routine, Ranks ranks, const TensorDesc& x_desc,
                          const void* x, const TensorDesc& y_desc, const void* y);

// NOT_SUPPORTED for a CUDA handle whose routine has no CUDA implementation yet, or any CUDA handle
// in a build without CUDA. Names the routine.
Status cuda_not_available(const char* routine);

}  // namespace jet
