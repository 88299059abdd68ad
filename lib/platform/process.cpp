#include "platform/process.hpp"

#include <malloc.h>
#include <unistd.h>

#include <cmath>
#include <ctime>

#include <fmt/format.h>

namespace dkp::platform {

std::filesystem::path self_executable() {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path("/proc/self/exe") : p;
}

void tune_allocator() {
  mallopt(M_MMAP_THRESHOLD, 512 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
  mallopt(M_ARENA_MAX, 2);
}

std::string now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string hostname() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string format_duration(double seconds, std::string_view separator) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = std::lround(seconds);
  if (s >= 3600) return fmt::format("{}h{}{:02}m", s / 3600, separator, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{}{:02}s", s / 60, separator, s % 60);
  return fmt::format("{}s", s);
}

}  // namespace dkp::platform
