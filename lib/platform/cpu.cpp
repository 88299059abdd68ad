#include "platform/cpu.hpp"

#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/parse.hpp"

namespace dkp::platform {

namespace {

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

// The whole of `s` as a non-negative int (util::parse_integer), or -1.
int parse_count(std::string_view s) {
  const std::optional<long long> v = util::parse_integer(s);
  return v && *v >= 0 && *v <= std::numeric_limits<int>::max() ? int(*v) : -1;
}

// Whether the space-separated flag list holds `flag` as a whole word.
bool has_flag(std::string_view flags, std::string_view flag) {
  size_t pos = 0;
  while (pos < flags.size()) {
    const size_t end = std::min(flags.find(' ', pos), flags.size());
    if (flags.substr(pos, end - pos) == flag) return true;
    pos = end + 1;
  }
  return false;
}

}  // namespace

CpuInfo parse_cpuinfo(std::string_view text) {
  CpuInfo cpu;
  bool first_flags = true;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = trim(line.substr(0, colon));
    const std::string_view value = trim(line.substr(colon + 1));
    if (key == "processor") {
      ++cpu.logical;
    } else if (key == "model name" && cpu.model_name.empty()) {
      cpu.model_name = std::string(value);
    } else if (key == "cpu family" && cpu.family < 0) {
      cpu.family = parse_count(value);
    } else if (key == "model" && cpu.model < 0) {
      cpu.model = parse_count(value);
    } else if (key == "flags" && first_flags) {
      first_flags = false;
      for (const auto& [flag, name] : {std::pair{"avx512f", "AVX-512"}, std::pair{"avx2", "AVX2"},
                                       std::pair{"avx", "AVX"}, std::pair{"sse2", "SSE2"}}) {
        if (has_flag(value, flag)) {
          cpu.vector_isa = name;
          break;
        }
      }
    }
  }
  return cpu;
}

CpuInfo cpu_info() {
  std::ifstream in("/proc/cpuinfo");
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return parse_cpuinfo(text.str());
}

std::string describe(const CpuInfo& cpu) {
  std::vector<std::string> parts;
  std::string name = cpu.model_name;
  if (cpu.family >= 0 && cpu.model >= 0) {
    const std::string fm = fmt::format("family {}, model {}", cpu.family, cpu.model);
    name = name.empty() ? fm : fmt::format("{} ({})", name, fm);
  }
  if (!name.empty()) parts.push_back(name);
  if (cpu.logical > 0)
    parts.push_back(fmt::format("{} logical CPU{}", cpu.logical, cpu.logical == 1 ? "" : "s"));
  if (!cpu.vector_isa.empty()) parts.push_back(cpu.vector_isa);
  return parts.empty() ? "unknown" : fmt::format("{}", fmt::join(parts, ", "));
}

std::string cpu_description() {
  return describe(cpu_info());
}

}  // namespace dkp::platform
