#include "experiments/lr_schedule.hpp"

#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "experiments/names.hpp"
#include "util/error.hpp"
#include "util/parse.hpp"

namespace dkp::experiments {

std::string format_lr_schedule(const std::vector<LrPoint>& schedule) {
  std::string out;
  for (const auto& p : schedule) {
    out += fmt::format("{}{}:{}", out.empty() ? "" : ",", p.step, format_double(p.lr));
  }
  return out;
}

void check_lr_schedule(const std::vector<LrPoint>& s, const std::string& where) {
  if (s.empty()) throw ConfigError(where + "the learning-rate schedule is empty");
  if (s.front().step != 0) {
    throw ConfigError(fmt::format("{}the learning-rate schedule must start at step 0, not {}",
                                  where, s.front().step));
  }
  for (size_t i = 0; i < s.size(); ++i) {
    if (!(std::isfinite(s[i].lr) && s[i].lr > 0)) {
      throw ConfigError(fmt::format("{}learning rate {} at step {} must be finite and positive",
                                    where, format_double(s[i].lr), s[i].step));
    }
    if (i > 0 && s[i].step <= s[i - 1].step) {
      throw ConfigError(fmt::format("{}schedule steps must increase strictly ({} after {})", where,
                                    s[i].step, s[i - 1].step));
    }
  }
}

std::vector<LrPoint> parse_lr_schedule(const std::string& text) {
  std::vector<LrPoint> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto colon = item.find(':');
    if (colon == std::string::npos) {
      throw ConfigError(
          fmt::format("invalid learning-rate schedule '{}': expected STEP:LR[,STEP:LR...], e.g. "
                      "0:0.01,10000:0.001",
                      text));
    }
    const std::string s = item.substr(0, colon), l = item.substr(colon + 1);
    const auto step = util::parse_integer(s);
    if (!step || *step < 0) {
      throw ConfigError(
          fmt::format("invalid learning-rate schedule '{}': step '{}' is not a "
                      "non-negative integer",
                      text, s));
    }
    const auto lr = util::parse_double(l);
    if (!lr) {
      throw ConfigError(
          fmt::format("invalid learning-rate schedule '{}': '{}' is not a number", text, l));
    }
    out.push_back({long(*step), *lr});
  }
  check_lr_schedule(out, fmt::format("invalid learning-rate schedule '{}': ", text));
  return out;
}

}  // namespace dkp::experiments
