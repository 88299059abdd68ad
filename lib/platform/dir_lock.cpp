#include "platform/dir_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "platform/process.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace dkp::platform {

namespace fs = std::filesystem;

namespace {

std::string holder_text() {
  return fmt::format("pid {} on {} since {}\n", ::getpid(), hostname(), now_iso8601());
}

}  // namespace

fs::path lock_file(const fs::path& dir) {
  return dir / "run.lock";
}

DirLock::DirLock(DirLock&& other) noexcept : fd_(other.fd_) {
  other.fd_ = -1;
}

DirLock& DirLock::operator=(DirLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

DirLock::~DirLock() {
  release();
}

void DirLock::release() {
  if (fd_ >= 0) {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
    fd_ = -1;
  }
}

std::optional<DirLock> DirLock::try_acquire(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path file = lock_file(dir);
  // O_NOFOLLOW: a run.lock that is a symbolic link is refused, never followed (its text is
  // rewritten below, which would overwrite the link's target).
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP) {
      throw Error(
          fmt::format("the lock file '{}' is a symbolic link: refused (remove it)", file.string()));
    }
    throw Error(
        fmt::format("cannot open the lock file '{}': {}", file.string(), std::strerror(err)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) return std::nullopt;
    throw Error(fmt::format("cannot lock '{}': {}", file.string(), std::strerror(err)));
  }
  // Ours: say who holds it (readers take the text as a hint, the flock is the truth).
  const std::string text = holder_text();
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) < 0) {
    // The lock holds without the text.
  }
  DirLock lock;
  lock.fd_ = fd;
  return lock;
}

LockProbe probe_lock(const fs::path& dir) {
  LockProbe p;
  const fs::path file = lock_file(dir);
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return p;  // no lock file: nobody holds it
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
    ::flock(fd, LOCK_UN);
  } else if (errno == EWOULDBLOCK) {
    p.held = true;
    char buf[256] = {0};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    p.holder = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("another process");
    while (!p.holder.empty() && (p.holder.back() == '\n' || p.holder.back() == ' ')) {
      p.holder.pop_back();
    }
  }
  ::close(fd);
  return p;
}

size_t remove_dead_writers_temp_files(const std::filesystem::path& dir) {
  size_t removed = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::optional<long> pid = util::temp_file_writer(e.path());
    if (!pid) continue;
    // Gone: no such process (a writer of another host's pid namespace could be mistaken for a
    // living one here, which only keeps its file).
    if (*pid > 0 && ::kill(pid_t(*pid), 0) != 0 && errno == ESRCH) {
      std::error_code rm;
      if (std::filesystem::remove(e.path(), rm)) ++removed;
    }
  }
  return removed;
}

}  // namespace dkp::platform
