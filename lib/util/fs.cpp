#include "util/fs.hpp"

#include <algorithm>

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

std::optional<long> temp_file_writer(const std::filesystem::path& file) {
  // "<name>.tmp.<pid>.<n>": the format write_file_atomic gives its temporary files.
  const std::string name = file.filename().string();
  const size_t last = name.rfind('.');
  if (last == std::string::npos || last == 0) return std::nullopt;
  const size_t mid = name.rfind('.', last - 1);
  if (mid == std::string::npos || mid < 4 || name.compare(mid - 4, 5, ".tmp.") != 0) {
    return std::nullopt;
  }
  const auto digits = [](const std::string& t) {
    return !t.empty() && t.size() <= 10 &&
           std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  const std::string pid = name.substr(mid + 1, last - mid - 1), n = name.substr(last + 1);
  if (!digits(pid) || !digits(n)) return std::nullopt;
  return std::stol(pid);
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
  // O_EXCL | O_NOFOLLOW: the temporary file is new, never a link planted at its name.
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_EXCL | O_NOFOLLOW, 0644);
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
