// `dkp grid merge` (lib/experiments/merge.hpp): finished cells copied whole, never over a finished
// cell; duplicates skipped, conflicts reported with the destination kept; unfinished, running and
// invalid cells left; unfinished destination cells replaced; no temporary directory left behind.
#include <doctest/doctest.h>

#include <thread>

#include <fmt/format.h>

#include "experiments/grid.hpp"
#include "experiments/merge.hpp"
#include "experiments/store.hpp"
#include "platform/dir_lock.hpp"
#include "test_support.hpp"
#include "tiny_grid.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

using namespace dkp::experiments;
namespace fs = std::filesystem;
using dkp::util::read_file;
using dkp::util::write_file_atomic;

namespace {

std::string merge_grid_text(const std::string& name) {
  return dkp::test::tiny_grid_text(name, "boston", "[0, 1, 2]", "2", "nngp");
}

Grid merge_grid(const std::string& name = "mg") {
  return parse_grid(merge_grid_text(name), name + ".yaml");
}

std::string escaped(const std::string& s) {
  std::string out;
  for (char ch : s) out += ch == '\n' ? std::string("\\n") : std::string(1, ch);
  return out;
}

void write_manifest(const RunSpec& c, const fs::path& root) {
  write_file_atomic(c.run_dir(root) / "manifest.json",
                    fmt::format("{{\"config_hash\": \"{}\", \"canonical_config\": \"{}\"}}\n",
                                c.hash(), escaped(c.canonical())));
}

// A finished cell as `dkp run` leaves it, with test_ll `ll` and training time `train_s`.
void finished_cell(const RunSpec& c, const fs::path& root, double ll, double train_s = 10.0) {
  const fs::path dir = c.run_dir(root);
  write_manifest(c, root);
  write_file_atomic(dir / "checkpoint.bin", "checkpoint of " + root.string());
  write_file_atomic(dir / "trace.csv", "step,elbo\n10,-1\n");
  write_file_atomic(dir / "stdout.log", "");
  write_file_atomic(dir / "result.json",
                    fmt::format("{{\"config_hash\": \"{}\", \"data_sha256\": \"abc\", "
                                "\"dataset\": \"boston\", \"test_ll\": {:.17g}, \"elbo\": -0.5, "
                                "\"train_s\": {}, \"step_s\": {}}}\n",
                                c.hash(), ll, train_s, train_s / 10.0));
}

// Directories or files whose names say they are temporary (merge's or an atomic write's).
size_t temporaries(const fs::path& root) {
  size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (name.find(".merge.") != std::string::npos || name.find(".tmp.") != std::string::npos) ++n;
  }
  return n;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("merge: finished cells are copied whole into an empty store, with the snapshots") {
  const fs::path a = dkp::test::temp_dir("merge-a"), dst = dkp::test::temp_dir("merge-dst");
  const Grid g = merge_grid();
  finished_cell(g.cells[0], a, -1.25);
  finished_cell(g.cells[1], a, -1.5);
  write_file_atomic(g.cells[1].run_dir(a) / "run.lock", "pid 1 on gone\n");  // nobody holds it
  write_file_atomic(g.cells[1].run_dir(a) / "error.json", "{}\n");           // an earlier failure
  write_grid_snapshot(g, merge_grid_text("mg"), a);
  // Cell 2 interrupted: a manifest and a checkpoint, no result.
  write_manifest(g.cells[2], a);
  write_file_atomic(g.cells[2].run_dir(a) / "checkpoint.bin", "half");

  const MergeReport r = merge_stores({a}, dst / "store");
  CHECK(r.copied == 2);
  CHECK(r.unfinished == 1);
  CHECK(r.snapshots == 1);
  CHECK(r.ok());
  CHECK(r.line() ==
        "copied 2, replaced 0, duplicates 0, conflicts 0, unfinished 1, running 0, invalid 0, "
        "snapshots 1");
  const fs::path store = dst / "store";
  CHECK(cell_status(g.cells[0], store).state == CellState::done);
  CHECK(cell_status(g.cells[1], store).state == CellState::done);
  CHECK(cell_status(g.cells[2], store).state == CellState::missing);
  for (const char* f : {"result.json", "manifest.json", "checkpoint.bin", "trace.csv"}) {
    CHECK(read_file(g.cells[0].run_dir(store) / f) == read_file(g.cells[0].run_dir(a) / f));
  }
  CHECK_FALSE(fs::exists(g.cells[1].run_dir(store) / "run.lock"));
  CHECK_FALSE(fs::exists(g.cells[1].run_dir(store) / "error.json"));
  CHECK(load_grid_snapshots(store).size() == 1);
  CHECK(temporaries(store) == 0);
  CHECK(finished_cell_problem(g.cells[0].run_dir(store)).empty());
  CHECK(r.empty_sources.empty());
  // The directory above a store holds no run directory of its own: said so.
  const MergeReport above = merge_stores({a.parent_path() / a.filename() / "mg"}, dst / "other");
  CHECK(above.empty_sources.size() == 1);
  CHECK(above.copied == 0);

  // Again: everything is a duplicate now, nothing written.
  const MergeReport again = merge_stores({a}, store);
  CHECK(again.copied == 0);
  CHECK(again.duplicates == 2);
  CHECK(again.snapshots == 0);
}

TEST_CASE("merge: duplicates, conflicts, and a finished cell never overwritten") {
  const fs::path a = dkp::test::temp_dir("merge-c-a"), b = dkp::test::temp_dir("merge-c-b"),
                 dst = dkp::test::temp_dir("merge-c-dst");
  const Grid g = merge_grid();
  finished_cell(g.cells[0], dst, -1.25, 10.0);
  finished_cell(g.cells[1], dst, -1.5);
  const std::string kept = read_file(g.cells[1].run_dir(dst) / "result.json");
  finished_cell(g.cells[0], a, -1.25, 99.0);  // same results, other timings: a duplicate
  finished_cell(g.cells[1], a, -1.5000001);   // other results: a conflict
  finished_cell(g.cells[2], a, -2.0);
  finished_cell(g.cells[2], b, -2.0, 55.0);  // the same cell in a second source: a duplicate

  const MergeReport r = merge_stores({a, b}, dst);
  CHECK(r.copied == 1);
  CHECK(r.duplicates == 2);
  CHECK(r.conflicts == 1);
  CHECK_FALSE(r.ok());
  REQUIRE(r.conflict_notes.size() == 1);
  CHECK(r.conflict_notes[0].hash == g.cells[1].hash());
  CHECK(r.conflict_notes[0].existing == g.cells[1].run_dir(dst));
  CHECK(contains(r.conflict_notes[0].detail, "test_ll: -1.5 vs -1.5000001"));
  CHECK_FALSE(contains(r.conflict_notes[0].detail, "train_s"));
  CHECK(read_file(g.cells[1].run_dir(dst) / "result.json") == kept);
  CHECK(contains(read_file(g.cells[0].run_dir(dst) / "result.json"), "\"train_s\": 10"));
  CHECK(contains(read_file(g.cells[2].run_dir(dst) / "checkpoint.bin"), a.string()));
  CHECK(temporaries(dst) == 0);
}

TEST_CASE("merge: the same configuration under another grid of the destination") {
  const fs::path a = dkp::test::temp_dir("merge-g-a"), dst = dkp::test::temp_dir("merge-g-dst");
  const Grid gw = merge_grid("gw"), agw = merge_grid("agw");
  REQUIRE(gw.cells[0].hash() == agw.cells[0].hash());
  finished_cell(agw.cells[0], dst, -1.0);
  finished_cell(gw.cells[0], a, -3.0);
  const MergeReport r = merge_stores({a}, dst);
  CHECK(r.conflicts == 1);
  CHECK(r.copied == 0);
  CHECK_FALSE(fs::exists(gw.cells[0].run_dir(dst)));
}

TEST_CASE("merge: an unfinished destination cell is replaced, a running one left") {
  const fs::path a = dkp::test::temp_dir("merge-r-a"), dst = dkp::test::temp_dir("merge-r-dst");
  const Grid g = merge_grid();
  finished_cell(g.cells[0], a, -1.0);
  finished_cell(g.cells[1], a, -1.1);
  // The destination's cell 0 failed after a checkpoint; its cell 1 is being run now.
  write_manifest(g.cells[0], dst);
  write_file_atomic(g.cells[0].run_dir(dst) / "checkpoint.bin", "old");
  write_file_atomic(g.cells[0].run_dir(dst) / "error.json", "{\"reason\": \"killed\"}\n");
  write_file_atomic(g.cells[0].run_dir(dst) / "result.json.tmp.1.0", "{\"conf");
  write_manifest(g.cells[1], dst);
  auto lock = dkp::platform::DirLock::try_acquire(g.cells[1].run_dir(dst));
  REQUIRE(lock.has_value());
  REQUIRE(cell_status(g.cells[0], dst).state == CellState::failed);

  const MergeReport r = merge_stores({a}, dst);
  CHECK(r.replaced == 1);
  CHECK(r.running == 1);
  REQUIRE(r.running_notes.size() == 1);
  CHECK(contains(r.running_notes[0].detail, "in the destination"));
  CHECK(cell_status(g.cells[0], dst).state == CellState::done);
  CHECK_FALSE(fs::exists(g.cells[0].run_dir(dst) / "error.json"));
  CHECK(contains(read_file(g.cells[0].run_dir(dst) / "checkpoint.bin"), a.string()));
  CHECK_FALSE(fs::exists(g.cells[1].run_dir(dst) / "result.json"));
  CHECK(temporaries(dst) == 0);
  lock.reset();
  // Once nobody runs it, the next merge copies it.
  const MergeReport r2 = merge_stores({a}, dst);
  CHECK(r2.replaced == 1);
  CHECK(cell_status(g.cells[1], dst).state == CellState::done);
}

TEST_CASE("merge: running and invalid source cells are not copied") {
  const fs::path a = dkp::test::temp_dir("merge-i-a"), dst = dkp::test::temp_dir("merge-i-dst");
  const Grid g = merge_grid();
  finished_cell(g.cells[0], a, -1.0);
  auto lock = dkp::platform::DirLock::try_acquire(g.cells[0].run_dir(a));
  REQUIRE(lock.has_value());
  // A result of another configuration in cell 1's directory; a manifest whose canonical form is
  // another cell's in cell 2's.
  finished_cell(g.cells[1], a, -1.0);
  write_file_atomic(g.cells[1].run_dir(a) / "result.json",
                    "{\"config_hash\": \"" + g.cells[2].hash() + "\", \"test_ll\": 1}\n");
  finished_cell(g.cells[2], a, -1.0);
  write_file_atomic(g.cells[2].run_dir(a) / "manifest.json",
                    fmt::format("{{\"config_hash\": \"{}\", \"canonical_config\": \"{}\"}}\n",
                                g.cells[2].hash(), escaped(g.cells[1].canonical())));
  const MergeReport r = merge_stores({a}, dst);
  CHECK(r.running == 1);
  CHECK(r.invalid == 2);
  CHECK(r.copied == 0);
  CHECK_FALSE(r.ok());
  REQUIRE(r.invalid_notes.size() == 2);
  CHECK(contains(r.invalid_notes[0].detail, "is not the run directory's"));
  CHECK(contains(r.invalid_notes[1].detail, "canonical_config hashes to"));
  CHECK_FALSE(fs::exists(dst / "mg"));
}

TEST_CASE("merge: a dry run decides and writes nothing") {
  const fs::path a = dkp::test::temp_dir("merge-d-a"), dst = dkp::test::temp_dir("merge-d-dst");
  const Grid g = merge_grid();
  finished_cell(g.cells[0], a, -1.0);
  finished_cell(g.cells[1], a, -1.0);
  write_manifest(g.cells[1], dst);  // unfinished there: would be replaced
  write_grid_snapshot(g, merge_grid_text("mg"), a);
  MergeOptions opt;
  opt.dry_run = true;
  const MergeReport r = merge_stores({a}, dst / "new", opt);
  CHECK(r.copied == 2);
  CHECK(r.snapshots == 1);
  CHECK_FALSE(fs::exists(dst / "new"));
  const MergeReport r2 = merge_stores({a}, dst, opt);
  CHECK(r2.copied == 1);
  CHECK(r2.replaced == 1);
  CHECK(r2.copied_cells.size() == 2);
  CHECK_FALSE(fs::exists(g.cells[0].run_dir(dst)));
  CHECK_FALSE(fs::exists(g.cells[1].run_dir(dst) / "result.json"));
}

TEST_CASE("merge: bad stores are errors naming them") {
  const fs::path a = dkp::test::temp_dir("merge-e-a");
  auto message = [](const std::vector<fs::path>& src, const fs::path& dst) {
    try {
      merge_stores(src, dst);
    } catch (const dkp::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message({a / "missing"}, a / "dst") ==
        fmt::format("source store {} is not a directory", (a / "missing").string()));
  CHECK(message({a}, a) == fmt::format("source store {} is the destination", a.string()));
  write_file_atomic(a / "file", "x");
  CHECK(contains(message({a}, a / "file"), "is not a directory"));
}

TEST_CASE("merge: two merges of one source into one store at once leave one copy of each cell") {
  const fs::path a = dkp::test::temp_dir("merge-t-a"), dst = dkp::test::temp_dir("merge-t-dst");
  const Grid g = merge_grid();
  for (size_t i = 0; i < g.cells.size(); ++i) finished_cell(g.cells[i], a, -1.0 - double(i));
  MergeReport r1, r2;
  std::thread t1([&] { r1 = merge_stores({a}, dst); });
  std::thread t2([&] { r2 = merge_stores({a}, dst); });
  t1.join();
  t2.join();
  CHECK(r1.copied + r1.replaced + r2.copied + r2.replaced >= g.cells.size());
  CHECK(r1.conflicts + r2.conflicts == 0);
  CHECK(r1.ok());
  CHECK(r2.ok());
  for (const auto& c : g.cells) {
    CHECK(cell_status(c, dst).state == CellState::done);
    CHECK(finished_cell_problem(c.run_dir(dst)).empty());
  }
  CHECK(temporaries(dst) == 0);
}

TEST_CASE("merge: result differences ignore timings and name the values") {
  const fs::path a = dkp::test::temp_dir("merge-diff");
  write_file_atomic(a / "x.json",
                    "{\"config_hash\": \"h\", \"test_ll\": 1.5, \"elbo\": 2, \"train_s\": 1, "
                    "\"predict_s\": 3, \"data_sha256\": \"d1\"}\n");
  write_file_atomic(a / "y.json",
                    "{\"config_hash\": \"h\", \"test_ll\": 1.5, \"elbo\": 2, \"train_s\": 9}\n");
  CHECK(result_differences(a / "x.json", a / "x.json").empty());
  const auto d = result_differences(a / "x.json", a / "y.json");
  REQUIRE(d.size() == 1);
  CHECK(d[0] == "data_sha256: d1 vs ");
  write_file_atomic(a / "z.json",
                    "{\"config_hash\": \"h\", \"test_ll\": 1.25, \"elbo\": 3, \"rmse\": 1, "
                    "\"a\": 1, \"data_sha256\": \"d1\"}\n");
  const auto d2 = result_differences(a / "x.json", a / "z.json", 2);
  REQUIRE(d2.size() == 3);
  CHECK(d2[0] == "a: (absent) vs 1");
  CHECK(d2[1] == "elbo: 2 vs 3");
  CHECK(d2[2] == "and 2 more");
}
