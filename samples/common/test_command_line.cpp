// The samples' shared command line (samples/common/command_line.h) and model loading
// (model_io.h load_model): both spellings of an option, flags, --device, and each error.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "command_line.h"
#include "model_io.h"

namespace {

// Parses `args` (argv[0] first) with the options of a sample taking --top-k and the flag --json.
bool parse(std::vector<std::string> args, jet::samples::CommandLine* cl, std::string* error) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(&a[0]);
  argv.push_back(nullptr);
  return jet::samples::parse_command_line(static_cast<int>(args.size()), argv.data(), "usage\n", {"--top-k"},
                                          {"--json"}, cl, error);
}

}  // namespace

TEST_CASE("samples command line: --name value and --name=value alike, flags, positional arguments") {
  jet::samples::CommandLine cl;
  std::string error;
  REQUIRE(parse({"sample", "model.jet", "--top-k", "3", "a.png", "--json", "-x"}, &cl, &error));
  REQUIRE(cl.find("--top-k") != nullptr);
  CHECK(*cl.find("--top-k") == "3");
  REQUIRE(cl.find("--json") != nullptr);
  CHECK(cl.find("--json")->empty());
  CHECK(cl.positional == std::vector<std::string>{"model.jet", "a.png", "-x"});

  jet::samples::CommandLine eq;
  REQUIRE(parse({"sample", "--top-k=7", "--top-k=8=9", "--device=cpu"}, &eq, &error));
  CHECK(*eq.find("--top-k") == "8=9");  // the last value, split at the first '='
  CHECK(eq.backend == jet::Backend::CPU);
  CHECK(eq.find("--json") == nullptr);
  CHECK(eq.positional.empty());

  jet::samples::CommandLine device;
  REQUIRE(parse({"sample", "--device", "cuda"}, &device, &error));
  CHECK(device.backend == jet::Backend::CUDA);
  REQUIRE(parse({"sample", "--device", "cpu"}, &device, &error));
  CHECK(device.backend == jet::Backend::CPU);

  jet::samples::CommandLine fresh;
  CHECK(fresh.backend == (jet::built_with_cuda() ? jet::Backend::CUDA : jet::Backend::CPU));
}

TEST_CASE("samples command line: each error names the option") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"sample", "--top-k"}, "--top-k needs a value"},
      {{"sample", "--device", "gpu"}, "--device must be cpu or cuda, not 'gpu'"},
      {{"sample", "--device"}, "--device needs a value"},
      {{"sample", "--json=1"}, "--json takes no value"},
      {{"sample", "--frobnicate", "x"}, "unknown option --frobnicate"},
      {{"sample", "--frobnicate=x"}, "unknown option --frobnicate"},
  };
  for (const auto& c : cases) {
    jet::samples::CommandLine cl;
    std::string error;
    CHECK_FALSE(parse(c.first, &cl, &error));
    CHECK(error == c.second);
  }
}

TEST_CASE("samples command line: whole_number takes a whole number in range, else names the option") {
  jet::samples::CommandLine cl;
  std::string error;
  int n = -5;
  CHECK(cl.whole_number("--top-k", 1, 10, &n, &error));  // not given: n untouched
  CHECK(n == -5);
  const std::vector<std::pair<std::string, int>> good = {{"1", 1}, {"10", 10}, {"07", 7}};
  for (const auto& g : good) {
    cl.options["--top-k"] = g.first;
    CHECK(cl.whole_number("--top-k", 1, 10, &n, &error));
    CHECK(n == g.second);
  }
  for (const char* bad : {"0", "11", "", "3x", "1.5", "-1", "99999999999999999999"}) {
    cl.options["--top-k"] = bad;
    n = -5;
    CHECK_FALSE(cl.whole_number("--top-k", 1, 10, &n, &error));
    CHECK(error == "--top-k must be a whole number from 1 to 10, not '" + std::string(bad) + "'");
    CHECK(n == -5);
  }
}

TEST_CASE("samples load_model: a missing file, and CUDA in a build without it, are errors saying so") {
  std::shared_ptr<jet::Engine> engine;
  const jet::Status missing = jet::samples::load_model("no/such/model.jet", jet::Backend::CPU, &engine);
  CHECK_FALSE(missing.ok());
  CHECK(missing.message().find("try --device cpu") == std::string::npos);
  CHECK_FALSE(static_cast<bool>(engine));
  const jet::Status cuda = jet::samples::load_model("no/such/model.jet", jet::Backend::CUDA, &engine);
  CHECK_FALSE(cuda.ok());
  CHECK(cuda.message().find("--device cpu") != std::string::npos);
  if (!jet::built_with_cuda()) CHECK(cuda.code() == jet::StatusCode::NOT_SUPPORTED);
}
