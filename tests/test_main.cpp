// Custom doctest main: prints the seed and library versions, seeds Armadillo's generator.
// Replay a run with DKP_TEST_SEED=<seed>.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <armadillo>
#include <cstdlib>
#include <iostream>
#include <system_error>
#include <vector>

#include <spdlog/spdlog.h>

#include "test_support.hpp"
#include "util/version.hpp"

namespace dkp::test {

namespace {
uint64_t g_seed = 20261122;
// The directories temp_dir made; removed when the process ends (remove_temp_dirs).
std::vector<std::filesystem::path> g_temp_dirs;
}  // namespace

uint64_t seed() {
  return g_seed;
}

std::filesystem::path shared_data_root() {
  if (const char* env = std::getenv("DKP_DATA"); env && *env) return env;
  std::filesystem::path p = std::filesystem::path(DKP_SOURCE_DIR) / ".." / "shared" / "data";
  if (std::filesystem::exists(p)) return std::filesystem::canonical(p);
  return {};
}

std::filesystem::path temp_dir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() /
           ("dkp-test-" + std::to_string(::getpid()) + "-" + name);
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  if (std::find(g_temp_dirs.begin(), g_temp_dirs.end(), p) == g_temp_dirs.end()) {
    g_temp_dirs.push_back(p);
  }
  return p;
}

size_t remove_temp_dirs() {
  size_t removed = 0;
  for (const auto& p : g_temp_dirs) {
    std::error_code ec;
    removed += std::filesystem::remove_all(p, ec) > 0 ? 1 : 0;
    if (ec) std::cerr << "[dkp tests] could not remove " << p << ": " << ec.message() << "\n";
  }
  g_temp_dirs.clear();
  return removed;
}

}  // namespace dkp::test

int main(int argc, char** argv) {
  if (const char* env = std::getenv("DKP_TEST_SEED"); env && *env) {
    dkp::test::g_seed = std::strtoull(env, nullptr, 10);
  }
  arma::arma_rng::set_seed(dkp::test::g_seed);
  spdlog::set_level(spdlog::level::warn);
  std::cout << "[dkp tests] seed " << dkp::test::g_seed << " (set DKP_TEST_SEED to replay), dkp "
            << dkp::version_string() << " (" << dkp::git_sha() << "), Armadillo "
            << arma::arma_version::as_string() << "\n";
  doctest::Context ctx;
  ctx.applyCommandLine(argc, argv);
  const int rc = ctx.run();
  // The tests' temporary directories go with the process, passed or failed; set
  // DKP_TEST_KEEP_DIRS=1 to keep them for a look after a failure.
  if (const char* keep = std::getenv("DKP_TEST_KEEP_DIRS"); keep && *keep && *keep != '0') {
    std::cout << "[dkp tests] DKP_TEST_KEEP_DIRS: temporary directories kept under "
              << std::filesystem::temp_directory_path().string() << "/dkp-test-" << ::getpid()
              << "-*\n";
  } else {
    dkp::test::remove_temp_dirs();
  }
  return rc;
}
