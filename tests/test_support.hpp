// Shared helpers for the doctest suites.
#pragma once

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

/// Silences the expected warnings (jitter retries, ...) of one test: errors only while it lives.
struct QuietLog {
  spdlog::level::level_enum old = spdlog::get_level();
  QuietLog() { spdlog::set_level(spdlog::level::err); }
  ~QuietLog() { spdlog::set_level(old); }
};

}  // namespace dkp::test
