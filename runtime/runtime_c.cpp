// The C API (jet/runtime_c.h) over the C++ runtime. Every entry point catches everything, so no
// exception crosses into C; failures set the thread's last-error message.
#include "jet/runtime_c.h"

#include <exception>
#include <memory>
#include <new>
#include <string>

#include "jet/runtime.h"

struct jet_engine {
  std::shared_ptr<jet::Engine> engine;
};

struct jet_context {
  std::shared_ptr<jet::Engine> engine;  // keeps the engine alive as long as the context
  std::unique_ptr<jet::ExecutionContext> context;
};

// The C enums mirror the C++ ones value for value (the casts below rely on it).
static_assert(JET_SUCCESS == static_cast<int>(jet::StatusCode::SUCCESS), "status values");
static_assert(JET_NOT_INITIALIZED == static_cast<int>(jet::StatusCode::NOT_INITIALIZED), "status values");
static_assert(JET_ALLOC_FAILED == static_cast<int>(jet::StatusCode::ALLOC_FAILED), "status values");
static_assert(JET_BAD_PARAM == static_cast<int>(jet::StatusCode::BAD_PARAM), "status values");
static_assert(JET_INVALID_VALUE == static_cast<int>(jet::StatusCode::INVALID_VALUE), "status values");
static_assert(JET_ARCH_MISMATCH == static_cast<int>(jet::StatusCode::ARCH_MISMATCH), "status values");
static_assert(JET_EXECUTION_FAILED == static_cast<int>(jet::StatusCode::EXECUTION_FAILED), "status values");
static_assert(JET_INTERNAL_ERROR == static_cast<int>(jet::StatusCode::INTERNAL_ERROR), "status values");
static_assert(JET_NOT_SUPPORTED == static_cast<int>(jet::StatusCode::NOT_SUPPORTED), "status values");
static_assert(JET_DTYPE_F32 == static_cast<int>(jet::DType::F32), "dtype values");
static_assert(JET_DTYPE_F16 == static_cast<int>(jet::DType::F16), "dtype values");
static_assert(JET_DTYPE_I32 == static_cast<int>(jet::DType::I32), "dtype values");
static_assert(JET_DTYPE_I64 == static_cast<int>(jet::DType::I64), "dtype values");
static_assert(JET_DTYPE_BOOL == static_cast<int>(jet::DType::BOOL), "dtype values");
static_assert(JET_BACKEND_CPU == static_cast<int>(jet::Backend::CPU), "backend values");
static_assert(JET_BACKEND_CUDA == static_cast<int>(jet::Backend::CUDA), "backend values");

namespace {

thread_local std::string g_last_error;

jet_status_t to_c(jet::StatusCode code) { return static_cast<jet_status_t>(static_cast<int>(code)); }

jet_status_t fail(jet_status_t code, const std::string& message) {
  try {
    g_last_error = message;
  } catch (...) {
    // Out of memory for the message itself: keep the old message rather than throw.
  }
  return code;
}

jet_status_t report(const jet::Status& st) {
  if (st.ok()) return JET_SUCCESS;
  return fail(to_c(st.code()), st.message());
}

// What an exception escaping the C++ side becomes.
jet_status_t from_exception(const char* function) {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return fail(JET_ALLOC_FAILED, std::string(function) + ": out of host memory");
  } catch (const std::exception& e) {
    return fail(JET_INTERNAL_ERROR, std::string(function) + ": unexpected exception: " + e.what());
  } catch (...) {
    return fail(JET_INTERNAL_ERROR, std::string(function) + ": unexpected exception");
  }
}

bool valid_tensor(const jet_engine_t* engine, int tensor) {
  return engine != nullptr && engine->engine && tensor >= 0 && tensor < engine->engine->num_tensors();
}

jet::LoadOptions load_options(jet_backend_t backend, int device) {
  jet::LoadOptions opt;
  opt.backend = backend == JET_BACKEND_CPU ? jet::Backend::CPU : jet::Backend::CUDA;
  opt.device = device;
  return opt;
}

jet_status_t check_backend(const char* function, jet_backend_t backend) {
  if (backend != JET_BACKEND_CPU && backend != JET_BACKEND_CUDA) {
    return fail(JET_BAD_PARAM, std::string(function) + ": backend " + std::to_string(static_cast<int>(backend)) +
                                   " is neither JET_BACKEND_CPU nor JET_BACKEND_CUDA");
  }
  return JET_SUCCESS;
}

}  // namespace

extern "C" {

const char* jet_last_error(void) { return g_last_error.c_str(); }

const char* jet_status_name(jet_status_t status) {
  if (static_cast<int>(status) < 0 || static_cast<int>(status) > static_cast<int>(JET_NOT_SUPPORTED)) {
    return "UNKNOWN_STATUS";
  }
  return jet::status_code_name(static_cast<jet::StatusCode>(static_cast<int>(status)));
}

jet_status_t jet_engine_load_file(const char* path, jet_backend_t backend, int device, jet_engine_t** out) {
  try {
    if (out == nullptr) return fail(JET_BAD_PARAM, "jet_engine_load_file: out is NULL");
    *out = nullptr;
    if (path == nullptr) return fail(JET_BAD_PARAM, "jet_engine_load_file: path is NULL");
    const jet_status_t bad = check_backend("jet_engine_load_file", backend);
    if (bad != JET_SUCCESS) return bad;
    std::unique_ptr<jet_engine_t> handle(new jet_engine_t);
    const jet::Status st = jet::Engine::load(std::string(path), load_options(backend, device), &handle->engine);
    if (!st.ok()) {
      // The runtime's messages name the path for bad files; make sure every failure does.
      const std::string p(path);
      return fail(to_c(st.code()), st.message().find(p) == std::string::npos ? p + ": " + st.message() : st.message());
    }
    *out = handle.release();
    return JET_SUCCESS;
  } catch (...) {
    return from_exception("jet_engine_load_file");
  }
}

jet_status_t jet_engine_load_memory(const void* data, size_t size, jet_backend_t backend, int device,
                                    jet_engine_t** out) {
  try {
    if (out == nullptr) return fail(JET_BAD_PARAM, "jet_engine_load_memory: out is NULL");
    *out = nullptr;
    if (data == nullptr) return fail(JET_BAD_PARAM, "jet_engine_load_memory: data is NULL");
    const jet_status_t bad = check_backend("jet_engine_load_memory", backend);
    if (bad != JET_SUCCESS) return bad;
    std::unique_ptr<jet_engine_t> handle(new jet_engine_t);
    const jet::Status st = jet::Engine::load(data, size, load_options(backend, device), &handle->engine);
    if (!st.ok()) return report(st);
    *out = handle.release();
    return JET_SUCCESS;
  } catch (...) {
    return from_exception("jet_engine_load_memory");
  }
}

void jet_engine_free(jet_engine_t* engine) { delete engine; }

int jet_engine_num_inputs(const jet_engine_t* engine) {
  return engine != nullptr && engine->engine ? engine->engine->num_inputs() : -1;
}

int jet_engine_num_outputs(const jet_engine_t* engine) {
  return engine != nullptr && engine->engine ? engine->engine->num_outputs() : -1;
}

int jet_engine_input(const jet_engine_t* engine, int i) {
  return engine != nullptr && engine->engine ? engine->engine->input(i) : -1;
}

int jet_engine_output(const jet_engine_t* engine, int i) {
  return engine != nullptr && engine->engine ? engine->engine->output(i) : -1;
}

int jet_engine_num_tensors(const jet_engine_t* engine) {
  return engine != nullptr && engine->engine ? engine->engine->num_tensors() : -1;
}

int jet_engine_find_tensor(const jet_engine_t* engine, const char* name) {
  if (engine == nullptr || !engine->engine || name == nullptr) return -1;
  try {
    return engine->engine->find_tensor(std::string(name));
  } catch (...) {
    from_exception("jet_engine_find_tensor");
    return -1;
  }
}

const char* jet_engine_tensor_name(const jet_engine_t* engine, int tensor) {
  return valid_tensor(engine, tensor) ? engine->engine->tensor(tensor).name.c_str() : nullptr;
}

jet_dtype_t jet_engine_tensor_dtype(const jet_engine_t* engine, int tensor) {
  if (!valid_tensor(engine, tensor)) return JET_DTYPE_INVALID;
  return static_cast<jet_dtype_t>(static_cast<int>(engine->engine->tensor(tensor).dtype));
}

int jet_engine_tensor_rank(const jet_engine_t* engine, int tensor) {
  return valid_tensor(engine, tensor) ? static_cast<int>(engine->engine->tensor(tensor).dims.size()) : -1;
}

const int64_t* jet_engine_tensor_dims(const jet_engine_t* engine, int tensor) {
  return valid_tensor(engine, tensor) ? engine->engine->tensor(tensor).dims.data() : nullptr;
}

size_t jet_engine_tensor_bytes(const jet_engine_t* engine, int tensor) {
  return valid_tensor(engine, tensor) ? engine->engine->tensor(tensor).bytes : 0;
}

size_t jet_engine_context_memory_size(const jet_engine_t* engine) {
  return engine != nullptr && engine->engine ? engine->engine->context_memory_size() : 0;
}

jet_status_t jet_context_create(const jet_engine_t* engine, jet_context_t** out) {
  try {
    if (out == nullptr) return fail(JET_BAD_PARAM, "jet_context_create: out is NULL");
    *out = nullptr;
    if (engine == nullptr || !engine->engine) return fail(JET_BAD_PARAM, "jet_context_create: engine is NULL");
    std::unique_ptr<jet_context_t> handle(new jet_context_t);
    handle->engine = engine->engine;
    const jet::Status st = engine->engine->create_context(&handle->context);
    if (!st.ok()) return report(st);
    *out = handle.release();
    return JET_SUCCESS;
  } catch (...) {
    return from_exception("jet_context_create");
  }
}

jet_status_t jet_context_create_in(const jet_engine_t* engine, void* memory, size_t bytes, jet_context_t** out) {
  try {
    if (out == nullptr) return fail(JET_BAD_PARAM, "jet_context_create_in: out is NULL");
    *out = nullptr;
    if (engine == nullptr || !engine->engine) return fail(JET_BAD_PARAM, "jet_context_create_in: engine is NULL");
    std::unique_ptr<jet_context_t> handle(new jet_context_t);
    handle->engine = engine->engine;
    const jet::Status st = engine->engine->create_context(memory, bytes, &handle->context);
    if (!st.ok()) return report(st);
    *out = handle.release();
    return JET_SUCCESS;
  } catch (...) {
    return from_exception("jet_context_create_in");
  }
}

void jet_context_free(jet_context_t* context) {
  // Destroy the context before the engine reference it may hold the last of.
  if (context == nullptr) return;
  context->context.reset();
  delete context;
}

void* jet_context_tensor_data(const jet_context_t* context, int tensor) {
  if (context == nullptr || !context->context) return nullptr;
  return context->context->tensor_data(tensor);
}

jet_status_t jet_context_bind(jet_context_t* context, int tensor, void* data) {
  try {
    if (context == nullptr || !context->context) return fail(JET_BAD_PARAM, "jet_context_bind: context is NULL");
    return report(context->context->bind_tensor(tensor, data));
  } catch (...) {
    return from_exception("jet_context_bind");
  }
}

jet_status_t jet_context_bind_typed(jet_context_t* context, int tensor, void* data, jet_dtype_t dtype) {
  try {
    if (context == nullptr || !context->context) return fail(JET_BAD_PARAM, "jet_context_bind_typed: context is NULL");
    return report(context->context->bind_tensor(tensor, data, static_cast<jet::DType>(static_cast<int>(dtype))));
  } catch (...) {
    return from_exception("jet_context_bind_typed");
  }
}

jet_status_t jet_context_copy_input(jet_context_t* context, int tensor, const void* host, size_t bytes,
                                    jet_dtype_t dtype, void* stream) {
  try {
    if (context == nullptr || !context->context) return fail(JET_BAD_PARAM, "jet_context_copy_input: context is NULL");
    return report(context->context->copy_input(tensor, host, bytes, static_cast<jet::DType>(static_cast<int>(dtype)),
                                               static_cast<cudaStream_t>(stream)));
  } catch (...) {
    return from_exception("jet_context_copy_input");
  }
}

jet_status_t jet_context_copy_output(const jet_context_t* context, int tensor, void* host, size_t bytes,
                                     jet_dtype_t dtype, void* stream) {
  try {
    if (context == nullptr || !context->context) return fail(JET_BAD_PARAM, "jet_context_copy_output: context is NULL");
    return report(context->context->copy_output(tensor, host, bytes, static_cast<jet::DType>(static_cast<int>(dtype)),
                                                static_cast<cudaStream_t>(stream)));
  } catch (...) {
    return from_exception("jet_context_copy_output");
  }
}

jet_status_t jet_context_run(jet_context_t* context, void* stream) {
  try {
    if (context == nullptr || !context->context) return fail(JET_BAD_PARAM, "jet_context_run: context is NULL");
    return report(context->context->run(static_cast<cudaStream_t>(stream)));
  } catch (...) {
    return from_exception("jet_context_run");
  }
}

jet_status_t jet_context_capture(jet_context_t* context, void* stream) {
  try {
    if (context == nullptr || !context->context) return fail(JET_BAD_PARAM, "jet_context_capture: context is NULL");
    return report(context->context->capture(static_cast<cudaStream_t>(stream)));
  } catch (...) {
    return from_exception("jet_context_capture");
  }
}

jet_status_t jet_context_set_profiling(jet_context_t* context, int on) {
  try {
    if (context == nullptr || !context->context) {
      return fail(JET_BAD_PARAM, "jet_context_set_profiling: context is NULL");
    }
    return report(context->context->set_profiling(on != 0));
  } catch (...) {
    return from_exception("jet_context_set_profiling");
  }
}

}  // extern "C"
