/* The jetinfer runtime's C API: a thin layer over jet::Engine and jet::ExecutionContext
 * (jet/runtime.h), usable from C99 and from any language with a C FFI.
 *
 *   jet_engine_t* engine = NULL;
 *   if (jet_engine_load_file("model.jet", JET_BACKEND_CUDA, 0, &engine) != JET_SUCCESS) {
 *     fprintf(stderr, "%s\n", jet_last_error());
 *   }
 *   jet_context_t* ctx = NULL;
 *   jet_context_create(engine, &ctx);
 *   int input = jet_engine_input(engine, 0);
 *   jet_context_copy_input(ctx, input, image, jet_engine_tensor_bytes(engine, input), JET_DTYPE_F32, stream);
 *   jet_context_run(ctx, stream);
 *   ...
 *   jet_context_free(ctx);
 *   jet_engine_free(engine);
 *
 * Errors: functions that can fail return a jet_status_t; on failure jet_last_error() returns a
 * message naming the problem (per thread; calls that succeed leave it unchanged). No function
 * throws or aborts; a NULL handle is JET_BAD_PARAM (or -1 / 0 / NULL from the query functions).
 * Lifetimes: a context keeps its engine alive, so the engine may be freed before its contexts.
 * Strings and dims returned by the engine queries stay valid until the engine is freed (and
 * its last context).
 * Threads: an engine may be shared by any number of threads; a context is used by one thread
 * (or stream) at a time. */
#ifndef JET_RUNTIME_C_H
#define JET_RUNTIME_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Values mirror jet::StatusCode. */
typedef enum jet_status {
  JET_SUCCESS = 0,
  JET_NOT_INITIALIZED = 1,
  JET_ALLOC_FAILED = 2,
  JET_BAD_PARAM = 3,
  JET_INVALID_VALUE = 4,
  JET_ARCH_MISMATCH = 5,
  JET_EXECUTION_FAILED = 6,
  JET_INTERNAL_ERROR = 7,
  JET_NOT_SUPPORTED = 8,
  /* Not a status: makes every int value a valid jet_status_t in C++ (the library range-checks
     what callers pass instead of relying on undefined behaviour). */
  JET_STATUS_MAX_ENUM = 0x7fffffff
} jet_status_t;

/* Values mirror jet::Backend. */
typedef enum jet_backend {
  JET_BACKEND_CPU = 0,
  JET_BACKEND_CUDA = 1,
  JET_BACKEND_MAX_ENUM = 0x7fffffff /* not a backend: see JET_STATUS_MAX_ENUM */
} jet_backend_t;

/* Values mirror jet::DType; JET_DTYPE_INVALID answers a bad tensor index. */
typedef enum jet_dtype {
  JET_DTYPE_INVALID = -1,
  JET_DTYPE_F32 = 0,
  JET_DTYPE_F16 = 1,
  JET_DTYPE_I32 = 3,
  JET_DTYPE_I64 = 4,
  JET_DTYPE_BOOL = 5, /* one byte per element, 0 or 1 */
  JET_DTYPE_MAX_ENUM = 0x7fffffff /* not a dtype: see JET_STATUS_MAX_ENUM */
} jet_dtype_t;

typedef struct jet_engine jet_engine_t;
typedef struct jet_context jet_context_t;

/* The message of the last failed call on this thread ("" when none failed). */
const char* jet_last_error(void);
/* "SUCCESS", "BAD_PARAM", ... */
const char* jet_status_name(jet_status_t status);

/* Loads and verifies a .jet model (checksum included). device: the CUDA device ordinal. */
jet_status_t jet_engine_load_file(const char* path, jet_backend_t backend, int device, jet_engine_t** out);
/* The same from memory; the bytes are copied, so data may be freed afterwards. */
jet_status_t jet_engine_load_memory(const void* data, size_t size, jet_backend_t backend, int device,
                                    jet_engine_t** out);
/* NULL is allowed. */
void jet_engine_free(jet_engine_t* engine);

/* Graph inputs and outputs in binding order; the values are tensor indices (-1 out of range). */
int jet_engine_num_inputs(const jet_engine_t* engine);
int jet_engine_num_outputs(const jet_engine_t* engine);
int jet_engine_input(const jet_engine_t* engine, int i);
int jet_engine_output(const jet_engine_t* engine, int i);
int jet_engine_num_tensors(const jet_engine_t* engine);
/* -1 when absent. */
int jet_engine_find_tensor(const jet_engine_t* engine, const char* name);

/* Tensor queries: NULL / JET_DTYPE_INVALID / -1 / 0 for a bad index. */
const char* jet_engine_tensor_name(const jet_engine_t* engine, int tensor);
jet_dtype_t jet_engine_tensor_dtype(const jet_engine_t* engine, int tensor);
int jet_engine_tensor_rank(const jet_engine_t* engine, int tensor);
/* rank entries, logical order (N, C, spatial...). */
const int64_t* jet_engine_tensor_dims(const jet_engine_t* engine, int tensor);
/* The bytes the tensor's elements span in its layout (what to copy in or out). */
size_t jet_engine_tensor_bytes(const jet_engine_t* engine, int tensor);

/* Bytes jet_context_create_in needs (arena + workspace). */
size_t jet_engine_context_memory_size(const jet_engine_t* engine);

/* A context owning its memory (one allocation). */
jet_status_t jet_context_create(const jet_engine_t* engine, jet_context_t** out);
/* A context in caller memory of at least jet_engine_context_memory_size() bytes, 256-byte aligned
 * (device memory on CUDA). */
jet_status_t jet_context_create_in(const jet_engine_t* engine, void* memory, size_t bytes, jet_context_t** out);
/* NULL is allowed. */
void jet_context_free(jet_context_t* context);

/* Where tensor `tensor` lives for the next run (device memory on CUDA); NULL for constants and
 * bad indices. */
void* jet_context_tensor_data(const jet_context_t* context, int tensor);
/* Zero-copy binding of a graph input or output to `data` (256-byte aligned; NULL restores the
 * arena region). */
jet_status_t jet_context_bind(jet_context_t* context, int tensor, void* data);
/* Typed forms (prefer them: the untyped ones cannot check). jet_context_bind_typed binds like
 * jet_context_bind after checking that `dtype`, what `data` holds, is the tensor's dtype.
 * jet_context_copy_input / jet_context_copy_output copy between host memory and a graph input /
 * output; `bytes` must be jet_engine_tensor_bytes() and `dtype` the tensor's dtype. A mismatch is
 * JET_BAD_PARAM naming both (float32 data given to a float16 input would otherwise be read as
 * garbage). CUDA: cudaMemcpyAsync on `stream` (synchronize before reading copied-out memory). */
jet_status_t jet_context_bind_typed(jet_context_t* context, int tensor, void* data, jet_dtype_t dtype);
jet_status_t jet_context_copy_input(jet_context_t* context, int tensor, const void* host, size_t bytes,
                                    jet_dtype_t dtype, void* stream);
jet_status_t jet_context_copy_output(const jet_context_t* context, int tensor, void* host, size_t bytes,
                                     jet_dtype_t dtype, void* stream);
/* Runs the forward pass on `stream` (a cudaStream_t; NULL = default stream; ignored on CPU).
 * Asynchronous on CUDA. The memory plan may reuse an input's arena region once the input has been
 * read, so write the inputs before every run (bound inputs are not overwritten). */
jet_status_t jet_context_run(jet_context_t* context, void* stream);
/* CUDA: capture the pass into a CUDA graph on `stream`; later runs replay it. CPU: NOT_SUPPORTED. */
jet_status_t jet_context_capture(jet_context_t* context, void* stream);
/* Per-layer timing on (non-zero) or off. */
jet_status_t jet_context_set_profiling(jet_context_t* context, int on);

#ifdef __cplusplus
}
#endif

#endif /* JET_RUNTIME_C_H */
