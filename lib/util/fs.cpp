#include "util/fs.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::util {

namespace {
std::atomic<unsigned> tmp_counter{0};
}

void write_file_atomic(const std::filesystem::path& path, std::string_view content) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.has_parent_path()) {
    fs::create_directories(path.parent_path(), ec);
    if (ec) {
      throw Error(fmt::format("cannot create directory '{}': {}", path.parent_path().string(),
                              ec.message()));
    }
  }
  // Unique per process and call so that concurrent writers never share a temporary file.
  const fs::path tmp = path.string() + fmt::format(".tmp.{}.{}", ::getpid(), tmp_counter++);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    throw Error(fmt::format("cannot write '{}': {}", tmp.string(), std::strerror(errno)));
  }
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error(fmt::format("cannot write '{}': {}", tmp.string(), std::strerror(err)));
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw Error(fmt::format("cannot flush '{}': {}", tmp.string(), std::strerror(errno)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error(fmt::format("cannot rename '{}' to '{}': {}", tmp.string(), path.string(),
                            std::strerror(err)));
  }
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(fmt::format("cannot open '{}'", path.string()));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw DataError(fmt::format("error reading '{}'", path.string()));
  return ss.str();
}

}  // namespace dkp::util
