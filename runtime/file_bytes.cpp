// FileBytes: mmap of a model file, or an aligned copy of one in memory.
#include "file_bytes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

#include "checksum.h"
#include "format.h"
#include "jet/file_io.h"
#include "jet/runtime.h"

namespace jet {
namespace rt {

FileBytes::FileBytes(FileBytes&& o) noexcept { *this = std::move(o); }

FileBytes& FileBytes::operator=(FileBytes&& o) noexcept {
  if (this != &o) {
    release();
    data_ = o.data_;
    size_ = o.size_;
    mapped_ = o.mapped_;
    has_checksum_ = o.has_checksum_;
    checksum_ = o.checksum_;
    o.data_ = nullptr;
    o.size_ = 0;
    o.mapped_ = false;
    o.has_checksum_ = false;
  }
  return *this;
}

void FileBytes::release() {
  if (data_) {
    if (mapped_) {
      munmap(const_cast<uint8_t*>(data_), size_);
    } else {
      std::free(const_cast<uint8_t*>(data_));
    }
  }
  data_ = nullptr;
  size_ = 0;
  mapped_ = false;
  has_checksum_ = false;
}

namespace {

// Opens `path` for reading and checks that it is a regular file big enough for a model. The
// open is O_NONBLOCK: a FIFO with no writer would otherwise block it forever; the type check
// comes before any read or mapping.
Status open_model_file(const std::string& path, int* fd_out, size_t* size_out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    return Status(StatusCode::BAD_PARAM, "cannot open '" + path + "': " + std::strerror(errno));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return Status(StatusCode::BAD_PARAM, "cannot stat '" + path + "': " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status(StatusCode::BAD_PARAM, "'" + path + "' is " + file_type_name(st.st_mode) +
                                             ", not a regular file");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size < format::kMinFileBytes) {
    ::close(fd);
    return Status(StatusCode::BAD_PARAM, "'" + path + "' has " + std::to_string(size) +
                                             " bytes, too small for a .jet model (at least " +
                                             std::to_string(format::kMinFileBytes) + ")");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  *fd_out = fd;
  *size_out = size;
  return Status();
}

// Memory for a copy of a model: aligned to kBufferAlignment, and for a few MB or more to 2 MiB
// with transparent huge pages asked for, so filling it takes a fault per 2 MiB instead of one
// per 4 KiB page (a 51 MB copy into fresh 4 KiB pages measured 170 ms on a VM, 12 ms with huge
// pages). nullptr when it cannot be had; std::free releases it either way.
void* alloc_copy_memory(size_t size) {
  constexpr size_t kHuge = size_t(2) << 20;
  void* p = nullptr;
  const size_t align = size >= 2 * kHuge ? kHuge : format::kBufferAlignment;
  if (posix_memalign(&p, align, size > 0 ? size : 1) != 0) return nullptr;
#if defined(MADV_HUGEPAGE)
  if (align == kHuge) ::madvise(p, size / kHuge * kHuge, MADV_HUGEPAGE);  // advice: failure is harmless
#endif
  return p;
}

}  // namespace

Status FileBytes::map_file(const std::string& path, FileBytes* out) {
  int fd = -1;
  size_t size = 0;
  Status st = open_model_file(path, &fd, &size);
  if (!st.ok()) return st;
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int e = errno;
  ::close(fd);  // the mapping keeps the file referenced
  if (p == MAP_FAILED) {
    return Status(StatusCode::ALLOC_FAILED, "cannot map '" + path + "': " + std::strerror(e));
  }
  out->release();
  out->data_ = static_cast<const uint8_t*>(p);
  out->size_ = size;
  out->mapped_ = true;
  return Status();
}

namespace {

// Hashes the payload (every byte before the footer) of a buffer that another thread fills from
// the front: the reader publishes how many bytes have landed (published()), the hasher folds in
// the whole words behind that mark and waits for more. The checksum's multiply chain (~13 ms for
// ResNet-50's 51 MB on the H100 host) then runs while the file is read (~17 ms) instead of after.
class BackgroundHash {
 public:
  BackgroundHash(const uint8_t* buf, size_t payload) : buf_(buf), payload_(payload) {}
  ~BackgroundHash() { stop(); }
  // False when no thread could be had: the caller hashes after the read.
  bool start() {
    try {
      thread_ = std::thread([this] { run(); });
    } catch (const std::system_error&) {
      return false;
    }
    return true;
  }
  void published(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ready_ = bytes;
    }
    cv_.notify_one();
  }
  // Joins the thread; the checksum when the whole payload was published.
  bool stop(uint64_t* sum = nullptr) {
    if (thread_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        stopping_ = true;
      }
      cv_.notify_one();
      thread_.join();
    }
    if (sum && complete_) *sum = sum_;
    return complete_;
  }

 private:
  void run() {
    ChecksumStream hash;
    size_t done = 0, ready = 0;
    for (;;) {
      bool stopping = false;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || words_in(ready_) > done; });
        ready = ready_;
        stopping = stopping_;
      }
      const size_t end = words_in(ready);
      if (end > done) hash.add_words(buf_ + done, end - done);
      done = std::max(done, end);
      if (stopping) break;
    }
    if (ready >= payload_) {
      sum_ = hash.finish(buf_ + done, payload_ - done, payload_);
      complete_ = true;
    }
  }
  size_t words_in(size_t ready) const { return std::min(ready, payload_) / 8 * 8; }

  const uint8_t* buf_;
  const size_t payload_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t ready_ = 0;       // guarded by mu_
  bool stopping_ = false;  // guarded by mu_
  uint64_t sum_ = 0;
  bool complete_ = false;
};

}  // namespace

Status FileBytes::read_file(const std::string& path, FileBytes* out, bool checksum_payload) {
  int fd = -1;
  size_t size = 0;
  Status st = open_model_file(path, &fd, &size);
  if (!st.ok()) return st;
  void* p = alloc_copy_memory(size);
  if (!p) {
    ::close(fd);
    return Status(StatusCode::ALLOC_FAILED, "cannot allocate " + std::to_string(size) +
                                                " bytes to hold a copy of '" + path + "' (LoadOptions::copy_file)");
  }
  uint8_t* const buf = static_cast<uint8_t*>(p);
  const size_t payload = size - format::kFooterBytes;  // open_model_file: size >= kMinFileBytes
  // Reads of 4 MiB: the hasher follows a piece behind. Below 8 MiB a thread is not worth it.
  constexpr size_t kPiece = size_t(4) << 20;
  BackgroundHash hasher(buf, payload);
  const bool threaded = checksum_payload && size >= 2 * kPiece && hasher.start();
  size_t got = 0;
  int e = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, buf + got, std::min(size - got, kPiece));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) e = errno;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
    if (threaded) hasher.published(got);
  }
  ::close(fd);
  uint64_t sum = 0;
  const bool hashed = threaded && hasher.stop(&sum);
  if (got != size) {
    std::free(p);
    return Status(StatusCode::BAD_PARAM, "cannot read '" + path + "': " +
                                             (e != 0 ? std::string(std::strerror(e))
                                                                   : "it changed size while being read"));
  }
  out->release();
  out->data_ = buf;
  out->size_ = size;
  out->mapped_ = false;
  if (checksum_payload) {
    out->checksum_ = hashed ? sum : model_checksum(buf, payload);
    out->has_checksum_ = true;
  }
  return Status();
}

Status FileBytes::copy_of(const void* data, size_t size, FileBytes* out) {
  if (!data && size > 0) return Status(StatusCode::BAD_PARAM, "model data is a null pointer");
  // posix_memalign, not aligned operator new: it reports failure instead of throwing.
  void* p = alloc_copy_memory(size);
  if (!p) {
    return Status(StatusCode::ALLOC_FAILED,
                  "cannot allocate " + std::to_string(size) + " bytes for the model copy");
  }
  if (size > 0) std::memcpy(p, data, size);
  out->release();
  out->data_ = static_cast<const uint8_t*>(p);
  out->size_ = size;
  out->mapped_ = false;
  return Status();
}

}  // namespace rt
}  // namespace jet
