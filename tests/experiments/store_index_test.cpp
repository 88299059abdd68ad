// The store index (experiments/store_index.hpp): a cell recorded as dkp wrote it, a one-digit edit
// caught, malformed indexes and non-store directories.
#include <doctest/doctest.h>

#include <fstream>

#include "experiments/store_index.hpp"
#include "test_support.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace fs = std::filesystem;
namespace ex = dkp::experiments;

namespace {
fs::path make_cell(const fs::path& root, const std::string& hash, const std::string& value) {
  const fs::path dir = root / "g" / "yacht" / "split3" / hash;
  fs::create_directories(dir);
  dkp::util::write_file_atomic(dir / "result.json",
                               "{\"config_hash\": \"" + hash + "\", \"test_ll\": " + value + "}");
  dkp::util::write_file_atomic(dir / "manifest.json", "{\"config_hash\": \"" + hash + "\"}");
  return dir;
}
}  // namespace

TEST_CASE("store index: a recorded cell matches until one digit is edited") {
  const fs::path root = dkp::test::temp_dir("store-index");
  const fs::path a = make_cell(root, "0123456789abcdef", "-0.512");
  const fs::path b = make_cell(root, "fedcba9876543210", "1.25");
  CHECK(ex::index_place(a) ==
        std::pair<fs::path, std::string>{root / "g", "yacht/split3/0123456789abcdef"});
  CHECK(ex::read_store_index(root / "g").empty());
  CHECK(ex::index_mismatch(a, ex::read_store_index(root / "g")).empty());  // unindexed
  CHECK(ex::record_in_store_index(a));
  CHECK(ex::record_in_store_index(b));
  auto index = ex::read_store_index(root / "g");
  CHECK(index.size() == 2);
  CHECK(ex::index_mismatch(a, index).empty());
  CHECK(ex::index_mismatch(b, index).empty());
  // One digit.
  dkp::util::write_file_atomic(a / "result.json",
                               "{\"config_hash\": \"0123456789abcdef\", \"test_ll\": -0.513}");
  const std::string why = ex::index_mismatch(a, index);
  CHECK(why.find("result.json was modified after dkp wrote it") != std::string::npos);
  CHECK(ex::index_mismatch(b, index).empty());
  // A symbolic link in place of the file.
  fs::remove(b / "manifest.json");
  fs::create_symlink(a / "manifest.json", b / "manifest.json");
  CHECK(ex::index_mismatch(b, index).find("symbolic link") != std::string::npos);
  // Rerecording (dkp run --force wrote it anew) accepts the new bytes.
  CHECK(ex::record_in_store_index(a));
  CHECK(ex::index_mismatch(a, ex::read_store_index(root / "g")).empty());
  // A directory that is not a store's cell is not indexed.
  CHECK(!ex::record_in_store_index(root / "elsewhere"));
  CHECK(ex::index_place(root / "g" / "yacht" / "split3" / "nothex").second.empty());
  // A malformed index names its file and line.
  std::ofstream(root / "g" / "index.tsv", std::ios::app) << "yacht/split3/xyz\tabc\n";
  CHECK_THROWS_WITH_AS(ex::read_store_index(root / "g"), doctest::Contains("index.tsv:3:"),
                       dkp::DataError);
}
