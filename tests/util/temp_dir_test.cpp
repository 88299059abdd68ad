#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "test_support.hpp"

namespace fs = std::filesystem;

TEST_CASE("the tests' temporary directories are fresh, per process, and removed by the test main") {
  const fs::path a = dkp::test::temp_dir("tmpdir-a");
  const fs::path b = dkp::test::temp_dir("tmpdir-b");
  CHECK(a.filename().string() == "dkp-test-" + std::to_string(::getpid()) + "-tmpdir-a");
  CHECK(fs::is_directory(a));
  CHECK(fs::is_empty(a));
  std::ofstream(a / "f.txt") << "x";
  fs::create_directories(b / "sub");
  std::ofstream(b / "sub" / "g.txt") << "y";
  // Asking again for a name empties its directory.
  CHECK(fs::is_empty(dkp::test::temp_dir("tmpdir-a")));
  std::ofstream(a / "f.txt") << "x";
  // What the test main does at exit: every directory made so far goes, contents included.
  // (Directories of earlier test cases go too; each test asks for its own.)
  CHECK(dkp::test::remove_temp_dirs() >= 2);
  CHECK_FALSE(fs::exists(a));
  CHECK_FALSE(fs::exists(b));
  CHECK(dkp::test::remove_temp_dirs() == 0);
}
