/* The C API (jet/runtime_c.h) from C: loads a model jet-make-model wrote at test time (argv[1]),
 * runs it on the CPU backend, checks the outputs are finite and identical across runs and
 * contexts (one owning its memory, one in caller memory, one with a bound output), and checks the
 * error paths. Built as C99, so the header must be plain C. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jet/runtime_c.h"

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

#define REQUIRE_OK(call)                                                                       \
  do {                                                                                         \
    jet_status_t st_ = (call);                                                                 \
    if (st_ != JET_SUCCESS) {                                                                  \
      fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #call,                 \
              jet_status_name(st_), jet_last_error());                                         \
      return 1;                                                                                \
    }                                                                                          \
  } while (0)

static float half_to_float(uint16_t h) {
  const int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0) {
    v = ldexpf((float)mant, -24);
  } else if (exp == 31) {
    v = mant ? NAN : INFINITY;
  } else {
    v = ldexpf((float)(mant | 0x400), exp - 25);
  }
  return sign ? -v : v;
}

/* 256-byte aligned memory carved out of a malloc block. */
typedef struct {
  void* block;
  void* aligned;
} aligned_buffer;

static aligned_buffer aligned_alloc256(size_t bytes) {
  aligned_buffer b;
  b.block = malloc(bytes + 256);
  b.aligned = b.block ? (void*)(((uintptr_t)b.block + 255u) & ~(uintptr_t)255u) : NULL;
  return b;
}

/* Deterministic input values in [-1, 1]. */
static void fill_inputs(const jet_engine_t* engine, jet_context_t* ctx) {
  int i;
  for (i = 0; i < jet_engine_num_inputs(engine); ++i) {
    const int t = jet_engine_input(engine, i);
    const size_t bytes = jet_engine_tensor_bytes(engine, t);
    unsigned char* data = (unsigned char*)jet_context_tensor_data(ctx, t);
    size_t k;
    if (jet_engine_tensor_dtype(engine, t) == JET_DTYPE_F32) {
      for (k = 0; k + 4 <= bytes; k += 4) {
        const float v = (float)sin((double)(k / 4) * 0.37 + i);
        memcpy(data + k, &v, 4);
      }
    } else {
      for (k = 0; k + 2 <= bytes; k += 2) {
        const uint16_t v = (uint16_t)(0x3000 + (k / 2) % 0x800); /* small positive halves */
        memcpy(data + k, &v, 2);
      }
    }
  }
}

/* Copies every output (in binding order, back to back) into out, which holds total_bytes. */
static void collect_outputs(const jet_engine_t* engine, const jet_context_t* ctx, unsigned char* out) {
  int i;
  size_t offset = 0;
  for (i = 0; i < jet_engine_num_outputs(engine); ++i) {
    const int t = jet_engine_output(engine, i);
    const size_t bytes = jet_engine_tensor_bytes(engine, t);
    memcpy(out + offset, jet_context_tensor_data(ctx, t), bytes);
    offset += bytes;
  }
}

int main(int argc, char** argv) {
  const char* model;
  const char* bad_path = "/nonexistent-dir/jet_c_api_missing.jet";
  jet_engine_t* engine = NULL;
  jet_engine_t* bad = NULL;
  jet_context_t* ctx = NULL;
  jet_context_t* ctx2 = NULL;
  jet_context_t* ctx3 = NULL;
  jet_status_t st;
  size_t total = 0, offset, out0_bytes;
  unsigned char *first, *second, *third;
  aligned_buffer memory, out_buffer;
  int i, constant = -1, out0;

  if (argc != 2) {
    fprintf(stderr, "usage: %s model.jet\n", argv[0]);
    return 2;
  }
  model = argv[1];

  /* Error paths: a bad path is an error naming the path, and no engine. */
  CHECK(strcmp(jet_last_error(), "") == 0);
  bad = (jet_engine_t*)&total; /* must be reset to NULL on failure */
  st = jet_engine_load_file(bad_path, JET_BACKEND_CPU, 0, &bad);
  CHECK(st != JET_SUCCESS);
  CHECK(bad == NULL);
  CHECK(strstr(jet_last_error(), bad_path) != NULL);
  st = jet_engine_load_file(NULL, JET_BACKEND_CPU, 0, &bad);
  CHECK(st == JET_BAD_PARAM);
  CHECK(strstr(jet_last_error(), "path is NULL") != NULL);
  st = jet_engine_load_file(model, JET_BACKEND_CPU, 0, NULL);
  CHECK(st == JET_BAD_PARAM);
  st = jet_engine_load_file(model, (jet_backend_t)7, 0, &bad);
  CHECK(st == JET_BAD_PARAM);
  CHECK(strstr(jet_last_error(), "backend 7") != NULL);
  st = jet_engine_load_memory("not a model", 11, JET_BACKEND_CPU, 0, &bad);
  CHECK(st != JET_SUCCESS);
  CHECK(bad == NULL);
  CHECK(strlen(jet_last_error()) > 0);
  CHECK(jet_context_run(NULL, NULL) == JET_BAD_PARAM);
  CHECK(jet_context_create(NULL, &ctx) == JET_BAD_PARAM);
  CHECK(jet_engine_num_inputs(NULL) == -1);
  CHECK(jet_engine_tensor_name(NULL, 0) == NULL);
  CHECK(strcmp(jet_status_name(JET_BAD_PARAM), "BAD_PARAM") == 0);
  CHECK(strcmp(jet_status_name(JET_SUCCESS), "SUCCESS") == 0);
  jet_engine_free(NULL);
  jet_context_free(NULL);

  REQUIRE_OK(jet_engine_load_file(model, JET_BACKEND_CPU, 0, &engine));

  /* Queries. */
  CHECK(jet_engine_num_inputs(engine) >= 1);
  CHECK(jet_engine_num_outputs(engine) >= 1);
  CHECK(jet_engine_input(engine, jet_engine_num_inputs(engine)) == -1);
  CHECK(jet_engine_output(engine, -1) == -1);
  for (i = 0; i < jet_engine_num_inputs(engine) + jet_engine_num_outputs(engine); ++i) {
    const int t = i < jet_engine_num_inputs(engine) ? jet_engine_input(engine, i)
                                                    : jet_engine_output(engine, i - jet_engine_num_inputs(engine));
    const char* name = jet_engine_tensor_name(engine, t);
    const int64_t* dims = jet_engine_tensor_dims(engine, t);
    const int rank = jet_engine_tensor_rank(engine, t);
    const jet_dtype_t dtype = jet_engine_tensor_dtype(engine, t);
    int64_t count = 1;
    int d;
    CHECK(t >= 0 && t < jet_engine_num_tensors(engine));
    CHECK(name != NULL && jet_engine_find_tensor(engine, name) == t);
    CHECK(rank >= 1 && dims != NULL);
    for (d = 0; d < rank; ++d) count *= dims[d];
    CHECK(dtype == JET_DTYPE_F32 || dtype == JET_DTYPE_F16);
    CHECK(jet_engine_tensor_bytes(engine, t) >= (size_t)count * (dtype == JET_DTYPE_F32 ? 4u : 2u));
  }
  CHECK(jet_engine_find_tensor(engine, "no such tensor") == -1);
  CHECK(jet_engine_find_tensor(engine, NULL) == -1);
  CHECK(jet_engine_tensor_name(engine, -1) == NULL);
  CHECK(jet_engine_tensor_name(engine, jet_engine_num_tensors(engine)) == NULL);
  CHECK(jet_engine_tensor_dtype(engine, -1) == JET_DTYPE_INVALID);
  CHECK(jet_engine_tensor_rank(engine, -1) == -1);
  CHECK(jet_engine_tensor_dims(engine, -1) == NULL);
  CHECK(jet_engine_tensor_bytes(engine, -1) == 0);
  CHECK(jet_engine_context_memory_size(engine) > 0);

  for (i = 0; i < jet_engine_num_outputs(engine); ++i) total += jet_engine_tensor_bytes(engine, jet_engine_output(engine, i));
  first = (unsigned char*)malloc(total);
  second = (unsigned char*)malloc(total);
  third = (unsigned char*)malloc(total);
  if (!first || !second || !third) return 1;

  /* Run 1: a context owning its memory. */
  REQUIRE_OK(jet_context_create(engine, &ctx));
  fill_inputs(engine, ctx);
  REQUIRE_OK(jet_context_run(ctx, NULL));
  collect_outputs(engine, ctx, first);
  offset = 0;
  for (i = 0; i < jet_engine_num_outputs(engine); ++i) {
    const int t = jet_engine_output(engine, i);
    const size_t bytes = jet_engine_tensor_bytes(engine, t);
    const int f16 = jet_engine_tensor_dtype(engine, t) == JET_DTYPE_F16;
    size_t k, nonzero = 0, nonfinite = 0;
    for (k = 0; k < bytes; k += f16 ? 2 : 4) {
      float v;
      if (f16) {
        uint16_t h;
        memcpy(&h, first + offset + k, 2);
        v = half_to_float(h);
      } else {
        memcpy(&v, first + offset + k, 4);
      }
      if (!isfinite(v)) ++nonfinite;
      if (v != 0.0f) ++nonzero;
    }
    CHECK(nonfinite == 0);
    CHECK(nonzero > 0);
    offset += bytes;
  }

  /* Run 2: the same context again, inputs rewritten. */
  fill_inputs(engine, ctx);
  REQUIRE_OK(jet_context_run(ctx, NULL));
  collect_outputs(engine, ctx, second);
  CHECK(memcmp(first, second, total) == 0);

  /* Run 3: a context in caller memory. */
  memory = aligned_alloc256(jet_engine_context_memory_size(engine));
  if (!memory.block) return 1;
  CHECK(jet_context_create_in(engine, memory.aligned, 16, &ctx2) != JET_SUCCESS); /* too small */
  CHECK(ctx2 == NULL);
  CHECK(strlen(jet_last_error()) > 0);
  REQUIRE_OK(jet_context_create_in(engine, memory.aligned, jet_engine_context_memory_size(engine), &ctx2));
  fill_inputs(engine, ctx2);
  REQUIRE_OK(jet_context_run(ctx2, NULL));
  collect_outputs(engine, ctx2, third);
  CHECK(memcmp(first, third, total) == 0);

  /* Typed copies: the inputs copied in with their dtype give the same outputs; the wrong dtype
   * is refused, naming both. */
  for (i = 0; i < jet_engine_num_inputs(engine); ++i) {
    const int t = jet_engine_input(engine, i);
    const size_t bytes = jet_engine_tensor_bytes(engine, t);
    const jet_dtype_t dtype = jet_engine_tensor_dtype(engine, t);
    const jet_dtype_t other = dtype == JET_DTYPE_F32 ? JET_DTYPE_F16 : JET_DTYPE_F32;
    unsigned char* host = (unsigned char*)malloc(bytes);
    if (!host) return 1;
    fill_inputs(engine, ctx2);
    memcpy(host, jet_context_tensor_data(ctx2, t), bytes);
    memset(jet_context_tensor_data(ctx2, t), 0, bytes);
    CHECK(jet_context_copy_input(ctx2, t, host, bytes, other, NULL) == JET_BAD_PARAM);
    CHECK(strstr(jet_last_error(), "but the data is") != NULL);
    CHECK(jet_context_bind_typed(ctx2, t, NULL, other) == JET_BAD_PARAM);
    CHECK(jet_context_copy_input(ctx2, t, host, bytes + 1, dtype, NULL) == JET_BAD_PARAM);
    REQUIRE_OK(jet_context_copy_input(ctx2, t, host, bytes, dtype, NULL));
    free(host);
  }
  REQUIRE_OK(jet_context_run(ctx2, NULL));
  offset = 0;
  for (i = 0; i < jet_engine_num_outputs(engine); ++i) {
    const int t = jet_engine_output(engine, i);
    const size_t bytes = jet_engine_tensor_bytes(engine, t);
    REQUIRE_OK(jet_context_copy_output(ctx2, t, third + offset, bytes, jet_engine_tensor_dtype(engine, t), NULL));
    offset += bytes;
  }
  CHECK(memcmp(first, third, total) == 0);

  /* Zero-copy: output 0 bound to a caller buffer receives the same values. */
  out0 = jet_engine_output(engine, 0);
  out_buffer = aligned_alloc256(jet_engine_tensor_bytes(engine, out0));
  if (!out_buffer.block) return 1;
  memset(out_buffer.aligned, 0, jet_engine_tensor_bytes(engine, out0));
  REQUIRE_OK(jet_context_bind(ctx2, out0, out_buffer.aligned));
  CHECK(jet_context_tensor_data(ctx2, out0) == out_buffer.aligned);
  fill_inputs(engine, ctx2); /* the plan may reuse an input's region once it is read: refill */
  REQUIRE_OK(jet_context_run(ctx2, NULL));
  CHECK(memcmp(out_buffer.aligned, first, jet_engine_tensor_bytes(engine, out0)) == 0);
  REQUIRE_OK(jet_context_bind(ctx2, out0, NULL));
  CHECK(jet_context_tensor_data(ctx2, out0) != out_buffer.aligned);
  /* Only inputs and outputs can be bound: not a constant. */
  for (i = 0; i < jet_engine_num_tensors(engine) && constant < 0; ++i) {
    if (jet_context_tensor_data(ctx2, i) == NULL) constant = i;
  }
  CHECK(constant >= 0);
  CHECK(jet_context_bind(ctx2, constant, out_buffer.aligned) != JET_SUCCESS);
  CHECK(jet_context_bind(ctx2, -5, out_buffer.aligned) != JET_SUCCESS);
  CHECK(jet_context_tensor_data(ctx2, -5) == NULL);

  /* CPU: no CUDA graphs; profiling works. */
  CHECK(jet_context_capture(ctx, NULL) == JET_NOT_SUPPORTED);
  CHECK(strlen(jet_last_error()) > 0);
  REQUIRE_OK(jet_context_set_profiling(ctx, 1));
  fill_inputs(engine, ctx);
  REQUIRE_OK(jet_context_run(ctx, NULL));
  collect_outputs(engine, ctx, second);
  CHECK(memcmp(first, second, total) == 0);
  REQUIRE_OK(jet_context_set_profiling(ctx, 0));

  /* A context keeps its engine alive: free the engine first, then run. */
  REQUIRE_OK(jet_context_create(engine, &ctx3));
  fill_inputs(engine, ctx3);
  out0_bytes = jet_engine_tensor_bytes(engine, out0);
  jet_engine_free(engine);
  engine = NULL;
  REQUIRE_OK(jet_context_run(ctx3, NULL));
  CHECK(memcmp(jet_context_tensor_data(ctx3, out0), first, out0_bytes) == 0);

  jet_context_free(ctx3);
  jet_context_free(ctx2);
  jet_context_free(ctx);
  free(memory.block);
  free(out_buffer.block);
  free(first);
  free(second);
  free(third);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("C API: all checks passed\n");
  return 0;
}
