// FileBytes: mmap of a model file, or an aligned copy of one in memory.
#include "file_bytes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "format.h"
#include "jet/file_io.h"

namespace jet {
namespace rt {

FileBytes::FileBytes(FileBytes&& o) noexcept { *this = std::move(o); }

FileBytes& FileBytes::operator=(FileBytes&& o) noexcept {
  if (this != &o) {
    release();
    data_ = o.data_;
    size_ = o.size_;
    mapped_ = o.mapped_;
    o.data_ = nullptr;
    o.size_ = 0;
    o.mapped_ = false;
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

Status FileBytes::read_file(const std::string& path, FileBytes* out) {
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
  size_t got = 0;
  int e = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, static_cast<uint8_t*>(p) + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) e = errno;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (got != size) {
    std::free(p);
    return Status(StatusCode::BAD_PARAM, "cannot read '" + path + "': " +
                                             (e != 0 ? std::string(std::strerror(e))
                                                                   : "it changed size while being read"));
  }
  out->release();
  out->data_ = static_cast<const uint8_t*>(p);
  out->size_ = size;
  out->mapped_ = false;
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
