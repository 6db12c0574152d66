// Uses jet::runtime from the installed package: loads the model file given (argv[1]) on the CPU,
// feeds every input through the typed copy API, runs twice, checks the outputs are finite, not
// all zero, and the same both times; checks that a wrong dtype is refused.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include <jet/runtime.h>

namespace {

float value_at(const jet::TensorInfo& t, const std::vector<unsigned char>& bytes, size_t i) {
  if (t.dtype == jet::DType::F16) {
    uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    return jet::half::half_bits_to_float(h);
  }
  float f;
  std::memcpy(&f, bytes.data() + 4 * i, 4);
  return f;
}

int run_once(const jet::Engine& engine, jet::ExecutionContext& ctx, std::vector<std::vector<unsigned char>>* outputs) {
  for (int i = 0; i < engine.num_inputs(); ++i) {
    const jet::TensorInfo& t = engine.tensor(engine.input(i));
    std::vector<unsigned char> bytes(t.bytes);
    const size_t n = t.bytes / jet::dtype_size(t.dtype);
    for (size_t k = 0; k < n; ++k) {
      const float v = static_cast<float>(std::sin(0.37 * static_cast<double>(k) + i));
      if (t.dtype == jet::DType::F16) {
        const uint16_t h = jet::half::float_to_half_bits(v);
        std::memcpy(bytes.data() + 2 * k, &h, 2);
      } else {
        std::memcpy(bytes.data() + 4 * k, &v, 4);
      }
    }
    const jet::DType wrong = t.dtype == jet::DType::F32 ? jet::DType::F16 : jet::DType::F32;
    if (ctx.copy_input(engine.input(i), bytes.data(), bytes.size(), wrong).ok()) {
      std::printf("copy_input accepted the wrong dtype\n");
      return 1;
    }
    const jet::Status st = ctx.copy_input(engine.input(i), bytes.data(), bytes.size(), t.dtype);
    if (!st.ok()) {
      std::printf("copy_input: %s\n", st.to_string().c_str());
      return 1;
    }
  }
  jet::Status st = ctx.run();
  if (!st.ok()) {
    std::printf("run: %s\n", st.to_string().c_str());
    return 1;
  }
  outputs->clear();
  for (int i = 0; i < engine.num_outputs(); ++i) {
    const jet::TensorInfo& t = engine.tensor(engine.output(i));
    outputs->emplace_back(t.bytes);
    st = ctx.copy_output(engine.output(i), outputs->back().data(), t.bytes, t.dtype);
    if (!st.ok()) {
      std::printf("copy_output: %s\n", st.to_string().c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::printf("usage: consumer_runtime model.jet\n");
    return 2;
  }
  std::shared_ptr<jet::Engine> engine;
  jet::LoadOptions options;
  options.backend = jet::Backend::CPU;
  jet::Status st = jet::Engine::load(argv[1], options, &engine);
  std::unique_ptr<jet::ExecutionContext> ctx;
  if (st.ok()) st = engine->create_context(&ctx);
  if (!st.ok()) {
    std::printf("%s\n", st.to_string().c_str());
    return 1;
  }
  std::vector<std::vector<unsigned char>> first, second;
  if (run_once(*engine, *ctx, &first) != 0 || run_once(*engine, *ctx, &second) != 0) return 1;
  size_t nonzero = 0;
  for (int i = 0; i < engine->num_outputs(); ++i) {
    const jet::TensorInfo& t = engine->tensor(engine->output(i));
    for (size_t k = 0; k < t.bytes / jet::dtype_size(t.dtype); ++k) {
      const float v = value_at(t, first[static_cast<size_t>(i)], k);
      if (!std::isfinite(v)) {
        std::printf("output '%s' element %zu is not finite\n", t.name.c_str(), k);
        return 1;
      }
      nonzero += v != 0.0f;
    }
  }
  if (nonzero == 0 || first != second) {
    std::printf("outputs all zero or different between runs\n");
    return 1;
  }
  std::printf("jetinfer runtime consumer: %s ran, %d outputs, schema %u.%u\n", argv[1], engine->num_outputs(),
              engine->summary().schema_major, engine->summary().schema_minor);
  return 0;
}
