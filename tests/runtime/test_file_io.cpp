// Files: jet::write_file_atomically, read_regular_file and same_file (jet/file_io.h) on regular
// files, symbolic links, FIFOs, device nodes, full disks and size limits; Engine::load on special
// files (no hang); and the model-replacement contract of docs/format.md: a model replaced by
// rename keeps a running engine alive, and with LoadOptions::copy_file so does an in-place
// overwrite or truncation.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "jet/file_io.h"
#include "model_util.h"

using namespace jet;
using namespace jet::test;

namespace {

bool contains(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

// A scratch directory, removed with everything in it.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/jet_file_io_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    REQUIRE(mkdtemp(buf.data()) != nullptr);
    path = buf.data();
  }
  ~ScratchDir() {
    const std::string cmd = "rm -rf '" + path + "'";
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "cannot remove %s\n", path.c_str());
  }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
  // The names in the directory (to see that no temporary file is left behind).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    const std::string cmd = "ls -A '" + path + "'";
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    char line[4096];
    while (std::fgets(line, sizeof line, p)) {
      std::string s(line);
      if (!s.empty() && s.back() == '\n') s.pop_back();
      out.push_back(s);
    }
    pclose(p);
    return out;
  }
};

std::string read_all(const std::string& path) {
  std::vector<uint8_t> bytes;
  const Status st = read_regular_file(path, size_t(1) << 30, "a test file", &bytes);
  INFO(st.to_string());
  REQUIRE(st.ok());
  return std::string(bytes.begin(), bytes.end());
}

Status write_text(const std::string& path, const std::string& text) {
  return write_file_atomically(path, text.data(), text.size());
}

mode_t mode_of(const std::string& path) {
  struct stat st;
  REQUIRE(lstat(path.c_str(), &st) == 0);
  return st.st_mode;
}

ir::Graph tiny(uint64_t seed) {
  ir::Graph g;
  REQUIRE_OK(tiny_cnn(tiny_cnn_options(seed), &g));
  return g;
}

}  // namespace

TEST_CASE("write_file_atomically: new files, replacement, permissions, no leftovers") {
  ScratchDir dir;
  REQUIRE_OK(write_text(dir / "a.txt", "first"));
  CHECK(read_all(dir / "a.txt") == "first");
  REQUIRE(chmod((dir / "a.txt").c_str(), 0640) == 0);
  REQUIRE_OK(write_text(dir / "a.txt", "second, longer"));
  CHECK(read_all(dir / "a.txt") == "second, longer");
  CHECK((mode_of(dir / "a.txt") & 07777) == 0640);  // the replaced file keeps its permissions
  REQUIRE_OK(write_text(dir / "empty", ""));
  CHECK(read_all(dir / "empty").empty());
  CHECK(dir.names() == std::vector<std::string>{"a.txt", "empty"});

  // A missing directory or a directory as the target: an error naming the path, nothing created.
  Status st = write_text(dir / "no/such/dir.txt", "x");
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(contains(st.message(), dir / "no/such/dir.txt"));
  CHECK(contains(st.message(), "No such file or directory"));
  REQUIRE(mkdir((dir / "sub").c_str(), 0755) == 0);
  st = write_text(dir / "sub", "x");
  CHECK(contains(st.message(), "is a directory"));
  CHECK(S_ISDIR(mode_of(dir / "sub")));
}

TEST_CASE("write_file_atomically follows symbolic links and never replaces them") {
  ScratchDir dir;
  REQUIRE_OK(write_text(dir / "target", "old"));
  REQUIRE(symlink("target", (dir / "link").c_str()) == 0);
  REQUIRE_OK(write_text(dir / "link", "new"));
  CHECK(S_ISLNK(mode_of(dir / "link")));
  CHECK(read_all(dir / "target") == "new");
  // A dangling link is written through, like a shell's '>': the target is created.
  REQUIRE(symlink("created", (dir / "dangling").c_str()) == 0);
  REQUIRE_OK(write_text(dir / "dangling", "made"));
  CHECK(S_ISLNK(mode_of(dir / "dangling")));
  CHECK(read_all(dir / "created") == "made");
  // A loop is an error, not a hang.
  REQUIRE(symlink("loop2", (dir / "loop1").c_str()) == 0);
  REQUIRE(symlink("loop1", (dir / "loop2").c_str()) == 0);
  const Status st = write_text(dir / "loop1", "x");
  CHECK(contains(st.message(), "symbolic links"));
}

TEST_CASE("write_file_atomically writes through character devices and FIFOs, never replaces them") {
  ScratchDir dir;
  // A FIFO with no reader: refused at once (no blocking), the FIFO stays.
  REQUIRE(mkfifo((dir / "fifo").c_str(), 0644) == 0);
  Status st = write_text(dir / "fifo", "x");
  CHECK(contains(st.message(), "FIFO with no reader"));
  CHECK(S_ISFIFO(mode_of(dir / "fifo")));
  // With a reader, the bytes go through the FIFO.
  const int reader = open((dir / "fifo").c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(reader >= 0);
  REQUIRE_OK(write_text(dir / "fifo", "through"));
  char buf[16] = {};
  CHECK(read(reader, buf, sizeof buf) == 7);
  CHECK(std::string(buf) == "through");
  close(reader);
  CHECK(S_ISFIFO(mode_of(dir / "fifo")));

  if (geteuid() != 0) {
    MESSAGE("not root: the device-node cases need mknod (CI runs them as root)");
    return;
  }
  // Scratch copies of /dev/null (1,3) and /dev/full (1,7): written through, still devices after.
  REQUIRE(mknod((dir / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
  REQUIRE(mknod((dir / "full").c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0);
  REQUIRE_OK(write_text(dir / "null", "discarded"));
  CHECK(S_ISCHR(mode_of(dir / "null")));
  st = write_text(dir / "full", "no room");
  CHECK(contains(st.message(), "No space left on device"));
  CHECK(S_ISCHR(mode_of(dir / "full")));
  // A block device (loop0's numbers) is refused, saying what it is, and stays.
  REQUIRE(mknod((dir / "block").c_str(), S_IFBLK | 0600, makedev(7, 0)) == 0);
  st = write_text(dir / "block", "x");
  CHECK(contains(st.message(), "is a block device"));
  CHECK(S_ISBLK(mode_of(dir / "block")));
}

TEST_CASE("write_file_atomically: a write that fails part-way keeps the previous file") {
  ScratchDir dir;
  const std::string good(1000, 'g');
  REQUIRE_OK(write_text(dir / "model.jet", good));
  // `ulimit -f`: in a child, so the limit does not stay with the test process.
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    struct rlimit lim = {4096, 4096};
    setrlimit(RLIMIT_FSIZE, &lim);
    const std::string big(100000, 'b');
    const Status st = write_text(dir / "model.jet", big);
    const bool right = !st.ok() && contains(st.message(), "File too large") &&
                       !contains(st.message(), ".tmp");  // the message names the target only
    _exit(right ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));  // not killed by SIGXFSZ
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(read_all(dir / "model.jet") == good);
  CHECK(dir.names() == std::vector<std::string>{"model.jet"});  // no temporary file left
}

TEST_CASE("read_regular_file refuses FIFOs and devices without blocking, and enforces its limit") {
  ScratchDir dir;
  REQUIRE(mkfifo((dir / "fifo").c_str(), 0644) == 0);
  std::vector<uint8_t> bytes;
  Status st = read_regular_file(dir / "fifo", 100, "a test file", &bytes);
  CHECK(contains(st.message(), "is a FIFO, not a regular file"));
  st = read_regular_file("/dev/zero", 100, "a test file", &bytes);
  CHECK(contains(st.message(), "is a character device"));
  REQUIRE_OK(write_text(dir / "big", std::string(101, 'x')));
  st = read_regular_file(dir / "big", 100, "a test file", &bytes);
  CHECK(contains(st.message(), "101 bytes, more than the 100 bytes allowed for a test file"));
  REQUIRE_OK(read_regular_file(dir / "big", 101, "a test file", &bytes));
  CHECK(bytes.size() == 101);
  st = read_regular_file(dir / "missing", 100, "a test file", &bytes);
  CHECK(contains(st.message(), "No such file or directory"));
}

TEST_CASE("same_file sees through links and tells different files apart") {
  ScratchDir dir;
  REQUIRE_OK(write_text(dir / "a", "1"));
  REQUIRE_OK(write_text(dir / "b", "1"));
  REQUIRE(symlink("a", (dir / "to_a").c_str()) == 0);
  CHECK(same_file(dir / "a", dir / "to_a"));
  CHECK(same_file(dir / "a", dir.path + "/./a"));
  CHECK_FALSE(same_file(dir / "a", dir / "b"));
  CHECK_FALSE(same_file(dir / "a", dir / "missing"));
}

TEST_CASE("Engine::load refuses a FIFO or a device at once instead of blocking") {
  ScratchDir dir;
  REQUIRE(mkfifo((dir / "model.jet").c_str(), 0644) == 0);
  for (bool copy : {false, true}) {
    LoadOptions opt = load_options(Handle::cpu());
    opt.copy_file = copy;
    std::shared_ptr<Engine> e;
    REQUIRE_FAILS_WITH(Engine::load(dir / "model.jet", opt, &e), "is a FIFO, not a regular file");
    REQUIRE_FAILS_WITH(Engine::load("/dev/zero", opt, &e), "is a character device");
  }
}

TEST_CASE("a model replaced under a running engine: by rename always, in place with copy_file") {
  ScratchDir dir;
  const std::string live = dir / "live.jet";
  const ir::Graph first = tiny(11), second = tiny(12);
  WriteOptions wo;
  wo.producer_version = "test";
  const Bytes second_bytes = model_bytes(second);
  for (bool copy : {false, true}) {
    CAPTURE(copy);
    REQUIRE_OK(write_model_file(first, wo, live));
    LoadOptions opt = load_options(Handle::cpu());  // CPU: the weights are read from the file's bytes
    opt.copy_file = copy;
    std::shared_ptr<Engine> engine;
    REQUIRE_OK(Engine::load(live, opt, &engine));
    std::unique_ptr<ExecutionContext> ctx;
    REQUIRE_OK(engine->create_context(&ctx));
    const TensorBytes in = random_inputs(*engine);
    const TensorBytes before = run_context(*engine, *ctx, in);

    // Deployed by rename (what every jet tool does): the engine keeps the old file's pages.
    REQUIRE_OK(write_model_file(second, wo, live));
    check_identical(run_context(*engine, *ctx, in), before, "after a rename-replace");

    if (copy) {
      // `cp new.jet live.jet`: truncate, then rewrite in place; and a truncation to nothing.
      // With copy_file the engine owns its bytes: same results, no SIGBUS.
      FILE* f = std::fopen(live.c_str(), "wb");
      REQUIRE(f != nullptr);
      REQUIRE(std::fwrite(second_bytes.data(), 1, second_bytes.size(), f) == second_bytes.size());
      std::fclose(f);
      check_identical(run_context(*engine, *ctx, in), before, "after an in-place rewrite");
      REQUIRE(truncate(live.c_str(), 0) == 0);
      check_identical(run_context(*engine, *ctx, in), before, "after truncation");
    }
  }
}

TEST_CASE("copy_file checks the checksum it computes while reading, on models of several MB") {
  // Over 8 MiB, read_file hashes on a second thread a piece behind its reads: the whole payload
  // must be covered (a flipped byte in the first piece, in the middle or in the payload's last
  // word is caught) and the footer left out (a good model loads, twice, with the same results).
  ScratchDir dir;
  ir::Graph g;
  int x = -1, y = -1;
  REQUIRE_OK(g.add_input("x", DType::F32, {1, 2048}, &x));
  ir::GemmAttrs a;
  a.trans_b = true;
  REQUIRE_OK(g.gemm("fc", x, random_constant(g, "w", {1203, 2048}, -1, 1), -1, a, &y));
  REQUIRE_OK(g.mark_output(y));
  const std::string path = dir / "big.jet";
  WriteOptions wo;
  wo.producer_version = "test";
  REQUIRE_OK(write_model_file(g, wo, path));
  const Bytes good = model_bytes(g);
  REQUIRE(good.size() > (size_t(8) << 20));
  LoadOptions opt = load_options(Handle::cpu());
  opt.copy_file = true;
  std::shared_ptr<Engine> e;
  REQUIRE_OK(Engine::load(path, opt, &e));
  // The handle first (before the CUDA module preload starts), then the read.
  REQUIRE(e->summary().load_phases.size() >= 2);
  CHECK(e->summary().load_phases[0].name == "backend handle");
  CHECK(e->summary().load_phases[1].name == "read file (copy, checksum alongside)");
  const TensorBytes in = random_inputs(*e);
  std::unique_ptr<ExecutionContext> ctx;
  REQUIRE_OK(e->create_context(&ctx));
  const TensorBytes want = run_context(*e, *ctx, in);
  const size_t payload = good.size() - 16;  // the footer: checksum + "JETSUM01"
  for (size_t at : {size_t(100), good.size() / 2, payload - 1, payload - 8}) {
    CAPTURE(at);
    Bytes bad = good;
    bad[at] ^= 0x10;
    REQUIRE_OK(write_file_atomically(path, bad.data(), bad.size()));
    REQUIRE_FAILS_WITH(Engine::load(path, opt, &e), "checksum mismatch");
  }
  REQUIRE_OK(write_file_atomically(path, good.data(), good.size()));
  REQUIRE_OK(Engine::load(path, opt, &e));
  REQUIRE_OK(e->create_context(&ctx));
  check_identical(run_context(*e, *ctx, in), want, "reloaded");
}
