// write_file_atomically, read_regular_file, same_file (jet/file_io.h).
#include "jet/file_io.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <new>
#include <utility>

namespace jet {

namespace {

Status io_error(const std::string& what, const std::string& path, int err) {
  return Status(StatusCode::BAD_PARAM, what + " '" + path + "': " + std::strerror(err));
}

std::string dir_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Follows symbolic links (up to 40, like the kernel) to the path they finally name, which may
// not exist yet (a dangling link is written through, as a shell's '>' does).
Status resolve_links(const std::string& path, std::string* out) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) {
      *out = p;
      return Status();
    }
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(p.c_str(), buf, sizeof buf - 1);
    if (n < 0) return io_error("cannot read the symbolic link", path, errno);
    const std::string target(buf, static_cast<size_t>(n));
    p = !target.empty() && target[0] == '/' ? target : dir_of(p) + "/" + target;
  }
  return io_error("cannot write", path, ELOOP);
}

bool write_all(int fd, const void* data, size_t size, int* err) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    const size_t chunk = size < (size_t(1) << 30) ? size : (size_t(1) << 30);
    const ssize_t n = ::write(fd, p, chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      *err = errno;
      return false;
    }
    if (n == 0) {
      *err = ENOSPC;
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// SIGXFSZ would kill the process when a write passes `ulimit -f`; ignored for the duration of a
// write, the write fails with EFBIG instead and the caller reports it.
class IgnoreFileSizeSignal {
 public:
  IgnoreFileSizeSignal() {
    struct sigaction ignore;
    std::memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    saved_ = ::sigaction(SIGXFSZ, &ignore, &old_) == 0;
  }
  ~IgnoreFileSizeSignal() {
    if (saved_) ::sigaction(SIGXFSZ, &old_, nullptr);
  }

 private:
  struct sigaction old_;
  bool saved_ = false;
};

// A character device or FIFO: written through, never replaced.
Status write_through(const std::string& path, const std::string& target, const struct stat& st,
                     const void* data, size_t size) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENXIO && S_ISFIFO(st.st_mode)) {
      return Status(StatusCode::BAD_PARAM, "cannot write '" + path +
                                               "': it is a FIFO with no reader (nothing was written)");
    }
    return io_error("cannot open", path, errno);
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  int err = 0;
  const bool ok = write_all(fd, data, size, &err);
  if (::close(fd) != 0 && ok) return io_error("cannot write", path, errno);
  if (!ok) return io_error("cannot write", path, err);
  return Status();
}

// Links the O_TMPFILE file `fd` in as `target`: directly when the target does not exist, else
// under a fresh temporary name that is then renamed over the target.
bool link_tmpfile(int fd, const std::string& target, bool target_exists, int* err) {
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  if (!target_exists) {
    if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, target.c_str(), AT_SYMLINK_FOLLOW) == 0) return true;
    if (errno != EEXIST) {
      *err = errno;
      return false;
    }
  }
  const std::string stem = dir_of(target) + "/." + base_of(target) + ".tmp-" + std::to_string(::getpid()) + "-";
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string name = stem + std::to_string(attempt);
    if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) != 0) {
      if (errno == EEXIST) continue;
      *err = errno;
      return false;
    }
    if (::rename(name.c_str(), target.c_str()) != 0) {
      *err = errno;
      ::unlink(name.c_str());
      return false;
    }
    return true;
  }
  *err = EEXIST;
  return false;
}

void sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);  // best effort: the rename is already visible
    ::close(fd);
  }
}

mode_t new_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

// Root replacing another user's file gives the new file the old one's owner. Best effort: glibc
// marks fchown warn_unused_result, and a failure only leaves root as the owner.
void keep_owner(int fd, const struct stat& st) {
  if (::fchown(fd, st.st_uid, st.st_gid) != 0) errno = 0;
}

}  // namespace

const char* file_type_name(unsigned mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "a special file";
}

Status write_file_atomically(const std::string& path, const void* data, size_t size) {
  if (path.empty()) return Status(StatusCode::BAD_PARAM, "cannot write a file with an empty name");
  if (size > 0 && !data) return Status(StatusCode::BAD_PARAM, "cannot write '" + path + "': no data");
  IgnoreFileSizeSignal ignore_sigxfsz;
  std::string target;
  const Status resolved = resolve_links(path, &target);
  if (!resolved.ok()) return resolved;
  struct stat st;
  bool exists = true;
  if (::stat(target.c_str(), &st) != 0) {
    if (errno != ENOENT) return io_error("cannot write", path, errno);
    exists = false;
  }
  if (exists && !S_ISREG(st.st_mode)) {
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return write_through(path, target, st, data, size);
    return Status(StatusCode::BAD_PARAM, "cannot write '" + path + "': it is " + file_type_name(st.st_mode) +
                                             ", not a regular file");
  }
  const std::string dir = dir_of(target);
  const mode_t mode = exists ? (st.st_mode & 07777) : new_file_mode();

  // Preferred: an unnamed file that vanishes by itself if we are killed before it is linked in.
  int err = 0;
  int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (fd >= 0) {
    bool ok = ::fchmod(fd, mode) == 0 || (err = errno, false);
    if (ok && exists && ::geteuid() == 0) keep_owner(fd, st);
    ok = ok && write_all(fd, data, size, &err);
    ok = ok && (::fsync(fd) == 0 || (err = errno, false));
    ok = ok && link_tmpfile(fd, target, exists, &err);
    const bool linked = ok;
    if (::close(fd) != 0 && ok) {
      ok = false;
      err = errno;
    }
    if (ok) {
      sync_directory(dir);
      return Status();
    }
    // linkat through /proc needs /proc: without it, fall through to a named temporary file.
    if (linked || (err != ENOENT && err != EPERM && err != EACCES && err != EXDEV)) {
      return io_error("cannot write", path, err);
    }
  } else if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
    return io_error("cannot write", path, errno);
  }

  std::string tmp = dir + "/." + base_of(target) + ".tmp-XXXXXX";
  std::vector<char> name(tmp.begin(), tmp.end());
  name.push_back('\0');
  fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) return io_error("cannot write", path, errno);
  tmp = name.data();
  bool ok = ::fchmod(fd, mode) == 0 || (err = errno, false);
  if (ok && exists && ::geteuid() == 0) keep_owner(fd, st);
  ok = ok && write_all(fd, data, size, &err);
  ok = ok && (::fsync(fd) == 0 || (err = errno, false));
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  ok = ok && (::rename(tmp.c_str(), target.c_str()) == 0 || (err = errno, false));
  if (!ok) {
    ::unlink(tmp.c_str());  // ours: mkostemp created it
    return io_error("cannot write", path, err);
  }
  sync_directory(dir);
  return Status();
}

Status read_regular_file(const std::string& path, size_t max_bytes, const std::string& what,
                         std::vector<uint8_t>* bytes) {
  bytes->clear();
  // O_NONBLOCK: opening a FIFO with no writer would otherwise block forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return io_error("cannot open", path, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return io_error("cannot stat", path, e);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status(StatusCode::BAD_PARAM, "cannot read '" + path + "': it is " + file_type_name(st.st_mode) +
                                             ", not a regular file");
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) {
    ::close(fd);
    return Status(StatusCode::BAD_PARAM, "cannot read '" + path + "': it has " + std::to_string(size) +
                                             " bytes, more than the " + std::to_string(max_bytes) +
                                             " bytes allowed for " + what);
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::vector<uint8_t> data;
  try {
    data.resize(static_cast<size_t>(size));
  } catch (const std::bad_alloc&) {
    ::close(fd);
    return Status(StatusCode::ALLOC_FAILED, "cannot read '" + path + "': no memory for its " +
                                                std::to_string(size) + " bytes");
  }
  size_t got = 0;
  while (got < data.size()) {
    const ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      return io_error("cannot read", path, e);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (got != data.size()) {
    return Status(StatusCode::BAD_PARAM, "cannot read '" + path + "': it shrank from " + std::to_string(size) +
                                             " to " + std::to_string(got) + " bytes while being read");
  }
  *bytes = std::move(data);
  return Status();
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace jet
