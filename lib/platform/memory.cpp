#include "platform/memory.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "util/parse.hpp"

namespace dkp::platform {

namespace {

std::optional<std::string> slurp(const char* path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<uint64_t> first_number(const std::string& text) {
  std::istringstream in(text);
  uint64_t v = 0;
  if (in >> v) return v;
  return std::nullopt;  // "max" (no limit) or malformed
}

}  // namespace

std::optional<uint64_t> parse_mem_available(std::string_view meminfo) {
  static constexpr std::string_view key = "MemAvailable:";
  size_t pos = 0;
  while (pos < meminfo.size()) {
    size_t nl = meminfo.find('\n', pos);
    if (nl == std::string_view::npos) nl = meminfo.size();
    const std::string_view line = meminfo.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.substr(0, key.size()) != key) continue;
    std::istringstream in{std::string(line.substr(key.size()))};
    uint64_t kib = 0;
    std::string unit;
    if (!(in >> kib >> unit) || unit != "kB") return std::nullopt;
    return kib * 1024;
  }
  return std::nullopt;
}

std::optional<uint64_t> available_memory_bytes() {
  std::optional<uint64_t> best;
  auto take = [&](std::optional<uint64_t> v) {
    if (v) best = best ? std::min(*best, *v) : *v;
  };
  if (const auto m = slurp("/proc/meminfo")) take(parse_mem_available(*m));
  const auto max = slurp("/sys/fs/cgroup/memory.max");
  const auto cur = slurp("/sys/fs/cgroup/memory.current");
  if (max && cur) {
    const auto mx = first_number(*max), cu = first_number(*cur);
    if (mx && cu) take(*mx > *cu ? *mx - *cu : 0);
  }
  rlimit r{};
  if (getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY) take(uint64_t(r.rlim_cur));
  return best;
}

std::optional<uint64_t> parse_byte_size(std::string_view text) {
  size_t end = 0;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) {
    ++end;
  }
  const auto number = util::parse_double(text.substr(0, end));
  if (!number || !(*number > 0) || !std::isfinite(*number)) return std::nullopt;
  std::string unit(text.substr(end));
  for (auto& c : unit) c = char(std::toupper(static_cast<unsigned char>(c)));
  double scale = 1;
  static const std::pair<const char*, double> units[] = {{"", 1},
                                                         {"B", 1},
                                                         {"K", 1024.0},
                                                         {"KB", 1024.0},
                                                         {"KIB", 1024.0},
                                                         {"M", 1048576.0},
                                                         {"MB", 1048576.0},
                                                         {"MIB", 1048576.0},
                                                         {"G", 1073741824.0},
                                                         {"GB", 1073741824.0},
                                                         {"GIB", 1073741824.0},
                                                         {"T", 1099511627776.0},
                                                         {"TB", 1099511627776.0},
                                                         {"TIB", 1099511627776.0}};
  bool known = false;
  for (const auto& [u, s] : units) {
    if (unit == u) {
      scale = s;
      known = true;
    }
  }
  if (!known) return std::nullopt;
  const double bytes = *number * scale;
  if (bytes < 1 || bytes > 1.8e19) return std::nullopt;
  return static_cast<uint64_t>(std::llround(bytes));
}

std::string format_bytes(double bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 5) {
    bytes /= 1024.0;
    ++u;
  }
  if (u == 0) return fmt::format("{:.0f} B", bytes);
  return bytes < 10 ? fmt::format("{:.1f} {}", bytes, units[u])
                    : fmt::format("{:.0f} {}", bytes, units[u]);
}

}  // namespace dkp::platform
