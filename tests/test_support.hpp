// Shared helpers for the doctest suites.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include <spdlog/spdlog.h>

namespace dkp::test {

/// Master seed of this test process (from $DKP_TEST_SEED, printed at start-up).
/// Tests derive their own engines from it so that a failure can be replayed.
uint64_t seed();

/// Root of the shared data mirror used by loader tests ($DKP_DATA or ../shared/data beside the
/// source tree). Empty path when it does not exist.
std::filesystem::path shared_data_root();

/// A fresh, empty temporary directory for one test, <tmp>/dkp-test-<pid>-<name>. The test main
/// removes every such directory when the tests have run (remove_temp_dirs), unless
/// DKP_TEST_KEEP_DIRS is set (not 0).
std::filesystem::path temp_dir(const std::string& name);

/// Removes the directories temp_dir has made so far; returns how many existed.
size_t remove_temp_dirs();

/// E f(x) for x ~ N(m, s2) by the trapezoid rule on m +- 12 sd with `nodes` intervals: an
/// independent reference for quadratures and closed forms (for smooth integrands the error is
/// far below 1e-10 with 20000).
template <class F>
double gauss_expect(double m, double s2, F f, int nodes = 20000) {
  const double sd = std::sqrt(s2), lo = m - 12.0 * sd, hi = m + 12.0 * sd;
  const double dx = (hi - lo) / nodes;
  double acc = 0.0;
  for (int k = 0; k <= nodes; ++k) {
    const double x = lo + k * dx, w = (k == 0 || k == nodes) ? 0.5 : 1.0;
    acc += w * f(x) * std::exp(-0.5 * (x - m) * (x - m) / s2);
  }
  return acc * dx / std::sqrt(2.0 * M_PI * s2);
}

/// Silences the expected warnings (jitter retries, ...) of one test: errors only while it lives.
struct QuietLog {
  spdlog::level::level_enum old = spdlog::get_level();
  QuietLog() { spdlog::set_level(spdlog::level::err); }
  ~QuietLog() { spdlog::set_level(old); }
};

}  // namespace dkp::test
