#include "util/parse.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace dkp::util {

std::optional<double> parse_double(std::string_view s) {
  if (s.empty()) return std::nullopt;
  const std::string tmp(s);  // strtod needs a terminated string
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(tmp.c_str(), &end);
  if (end != tmp.c_str() + tmp.size()) return std::nullopt;
  // ERANGE on underflow still gives the nearest (subnormal or zero) double; on overflow,
  // +-HUGE_VAL.
  if (errno == ERANGE && std::isinf(v)) return std::nullopt;
  return v;
}

std::optional<long long> parse_integer(std::string_view s) {
  if (s.empty()) return std::nullopt;
  const std::string tmp(s);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(tmp.c_str(), &end, 10);
  if (end != tmp.c_str() + tmp.size() || errno == ERANGE) return std::nullopt;
  return v;
}

std::optional<std::string> log_level_request(const std::vector<std::string>& args) {
  std::optional<std::string> level;
  constexpr std::string_view kOption = "--log-level";
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (a == "--") break;  // what follows is not an option
    if (a == "--quiet" || a == "-q") return std::string("warn");
    if (a == kOption && i + 1 < args.size()) {
      level = args[++i];
    } else if (a.substr(0, kOption.size() + 1) == "--log-level=") {
      level = std::string(a.substr(kOption.size() + 1));
    }
  }
  return level;
}

}  // namespace dkp::util
