#include "training/schedules.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::training {

namespace {
void check_rate(double lr, const char* what) {
  if (!(lr > 0.0) || !std::isfinite(lr)) {
    throw ConfigError(
        fmt::format("learning-rate schedule: {} must be positive and finite, got {}", what, lr));
  }
}
}  // namespace

LrSchedule::LrSchedule(double initial, std::vector<std::pair<uint64_t, double>> drops)
    : initial_(initial), drops_(std::move(drops)) {
  check_rate(initial_, "the initial rate");
  uint64_t prev = 0;
  for (const auto& [step, lr] : drops_) {
    if (step <= prev) {
      throw ConfigError(fmt::format(
          "learning-rate schedule: drop steps must be positive and strictly increasing, got {} "
          "after {}",
          step, prev));
    }
    check_rate(lr, "every rate");
    prev = step;
  }
}

LrSchedule LrSchedule::constant(double lr) {
  return LrSchedule(lr, {});
}

LrSchedule LrSchedule::steps(double initial, std::vector<std::pair<uint64_t, double>> drops) {
  return LrSchedule(initial, std::move(drops));
}

double LrSchedule::at(uint64_t step) const {
  double lr = initial_;
  for (const auto& [from, value] : drops_) {
    if (step < from) break;
    lr = value;
  }
  return lr;
}

std::string LrSchedule::describe() const {
  std::string out = fmt::format("{}", initial_);
  for (const auto& [from, value] : drops_) out += fmt::format(", {} from step {}", value, from);
  return out;
}

double KlAnnealing::weight(uint64_t step) const {
  if (steps_ == 0 || step >= steps_) return 1.0;
  return static_cast<double>(step) / static_cast<double>(steps_);
}

}  // namespace dkp::training
