// Result store (cell states, shards, adoption, snapshots) and the subprocess runner, driven by a
// fake `dkp` script so that no model is needed.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "experiments/grid.hpp"
#include "experiments/runner.hpp"
#include "experiments/store.hpp"
#include "experiments/store_index.hpp"
#include "test_support.hpp"
#include "tiny_grid.hpp"
#include "training/trace.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

using namespace dkp::experiments;
namespace fs = std::filesystem;

namespace {

std::string grid_text(const std::string& name, const std::string& datasets,
                      const std::string& splits) {
  return dkp::test::tiny_grid_text(name, datasets, splits);
}

// Writes a result.json with the cell's hash, as `dkp run` will.
void write_result(const RunSpec& c, const fs::path& root, double test_ll = -1.0) {
  dkp::util::write_file_atomic(c.run_dir(root) / "result.json",
                               "{\"config_hash\": \"" + c.hash() + "\", \"dataset\": \"" +
                                   c.dataset + "\", \"test_ll\": " + std::to_string(test_ll) +
                                   "}\n");
}

// A stand-in for dkp: succeeds for boston, fails like an unimplemented model for yacht, sleeps
// for concrete, and insists on OPENBLAS_NUM_THREADS=1.
fs::path fake_dkp(const fs::path& dir) {
  const fs::path p = dir / "fake-dkp.sh";
  dkp::util::write_file_atomic(p, R"(#!/bin/sh
out=""; ds=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift ;;
    --dataset) ds="$2"; shift ;;
    --spec) ds=$(printf '%s\n' "$2" | sed -n 's/^dataset=//p'); shift ;;
  esac
  shift
done
[ "$OPENBLAS_NUM_THREADS" = 1 ] || { echo "OPENBLAS_NUM_THREADS is '$OPENBLAS_NUM_THREADS'" >&2; exit 5; }
case "$ds" in
  yacht) echo "dkp run: 'run' is not implemented yet" >&2; exit 3 ;;
  concrete) exec sleep 30 ;;
esac
h=$(basename "$out")
printf '{"config_hash": "%s", "test_ll": -1.5}\n' "$h" > "$out/result.json.tmp"
mv "$out/result.json.tmp" "$out/result.json"
)");
  ::chmod(p.c_str(), 0755);
  return p;
}

size_t count_state(const Grid& g, const fs::path& root, CellState s) {
  size_t n = 0;
  for (const auto& c : g.cells) n += cell_status(c, root).state == s;
  return n;
}

}  // namespace

TEST_CASE("cell states come from the run directory") {
  const fs::path root = dkp::test::temp_dir("states");
  const Grid g = parse_grid(grid_text("s", "boston", "[0]"), "s.yaml");
  REQUIRE(g.cells.size() == 2);
  const RunSpec& c = g.cells[0];
  CHECK(cell_status(c, root).state == CellState::missing);
  dkp::util::write_file_atomic(c.run_dir(root) / "manifest.json",
                               "{\"config_hash\": \"" + c.hash() + "\"}");
  // Started and stopped: nobody holds its lock (store_state_test.cpp: held locks).
  CHECK(cell_status(c, root).state == CellState::interrupted);
  CHECK(cell_status(c, root).detail.empty());
  // Its progress from the training trace's last row; a malformed trace is damage, named.
  dkp::training::TraceRow r;
  r.step = 30;
  dkp::util::write_file_atomic(c.run_dir(root) / "trace.csv", dkp::training::trace_csv({r}));
  CHECK(cell_status(c, root).detail == fmt::format("step 30 of {} (trace.csv)", c.protocol.steps));
  dkp::util::write_file_atomic(c.run_dir(root) / "trace.csv", "nonsense\n");
  CHECK(cell_status(c, root).state == CellState::damaged);
  CHECK(cell_status(c, root).detail.find((c.run_dir(root) / "trace.csv").string() + ":1: header") !=
        std::string::npos);
  dkp::util::write_file_atomic(c.run_dir(root) / "trace.csv", dkp::training::trace_csv({r}));
  dkp::util::write_file_atomic(c.run_dir(root) / "error.json", "{\"reason\": \"exit code 3\"}");
  CHECK(cell_status(c, root).state == CellState::failed);
  CHECK(cell_status(c, root).detail == "exit code 3");
  // A result of another configuration is ignored.
  dkp::util::write_file_atomic(c.run_dir(root) / "result.json",
                               "{\"config_hash\": \"0000000000000000\"}");
  CHECK(cell_status(c, root).state == CellState::failed);
  write_result(c, root);
  CHECK(cell_status(c, root).state == CellState::done);
  CHECK(read_result_values(c.run_dir(root) / "result.json") ==
        std::map<std::string, double>{{"test_ll", -1.0}});
  CHECK(pending_cells(g, root).size() == 1);
}

TEST_CASE("shards i/n partition the pending cells exactly") {
  const fs::path root = dkp::test::temp_dir("shards");
  const Grid g = parse_grid(grid_text("p", "boston, yacht", "[0, 1, 2, 3, 4, 5, 6]"), "p.yaml");
  REQUIRE(g.cells.size() == 28);
  // Some cells are done already; they must not be planned.
  for (size_t i = 0; i < g.cells.size(); i += 3) write_result(g.cells[i], root);
  const auto pending = pending_cells(g, root);
  REQUIRE(pending.size() == 18);
  for (int n : {1, 2, 3, 5}) {
    std::multiset<std::string> all;
    size_t total = 0;
    for (int i = 0; i < n; ++i) {
      const auto s = shard(pending, i, n);
      total += s.size();
      for (size_t k = 0; k < s.size(); ++k) {
        all.insert(s[k].hash());
        // cell j goes to shard j mod n
        CHECK(s[k].hash() == pending[i + k * n].hash());
      }
    }
    CHECK(total == pending.size());
    std::set<std::string> uniq(all.begin(), all.end());
    CHECK(uniq.size() == pending.size());  // disjoint and complete
    for (const auto& c : pending) CHECK(uniq.count(c.hash()) == 1);
  }
  // The two halves of the acceptance test.
  const auto a = shard(pending, 0, 2), b = shard(pending, 1, 2);
  CHECK(a.size() == 9);
  CHECK(b.size() == 9);
  CHECK(parse_shard("0/2") == std::pair<int, int>{0, 2});
  CHECK(parse_shard("1/2") == std::pair<int, int>{1, 2});
  CHECK_THROWS_AS(parse_shard("2/2"), dkp::ConfigError);
  CHECK_THROWS_AS(parse_shard("1"), dkp::ConfigError);
  CHECK_THROWS_AS(parse_shard("-1/2"), dkp::ConfigError);
  CHECK_THROWS_AS(parse_shard("a/b"), dkp::ConfigError);
}

TEST_CASE("cells on optional data that is not installed are set apart, the rest kept in order") {
  const fs::path data = dkp::test::temp_dir("optional-data");
  const std::string text =
      "name: o\nfamily: generic\nprotocol:\n  steps: 10\n  lr_schedule: [[0, 0.01]]\n"
      "  kl_anneal: 0\n  train_samples: 1\n  test_samples: 2\n  inducing: 5\n  batch: 8\n"
      "  kernel: se\n  seed: 0\naxes:\n  datasets: [boston, rectangles, mnist]\n  splits: [0]\n"
      "  depths: [2]\n  models: [{model: sgp, inducing: [5, 6]}]\n";
  const Grid g = parse_grid(text, "o.yaml");
  REQUIRE(g.cells.size() == 6);
  std::vector<RunSpec> cells = g.cells;
  const std::vector<RunSpec> skipped = take_cells_without_data(cells, data);
  REQUIRE(skipped.size() == 2);
  for (const auto& c : skipped) CHECK(c.dataset == "rectangles");
  REQUIRE(cells.size() == 4);
  size_t k = 0;  // the kept cells in the grid's order
  for (const auto& c : g.cells) {
    if (c.dataset == "rectangles") continue;
    CHECK(cells[k++].hash() == c.hash());
  }
  // Required data is never skipped, present or not; installed optional data is run.
  fs::create_directories(data / "rectangles");
  cells = g.cells;
  CHECK(take_cells_without_data(cells, data).empty());
  CHECK(cells.size() == 6);
}

TEST_CASE("runner: runs pending cells, records failures, reuses results on rerun") {
  const fs::path root = dkp::test::temp_dir("runner") / "runs";
  const fs::path exe = fake_dkp(root.parent_path());
  const Grid g = parse_grid(grid_text("r", "boston, yacht", "[0, 1]"), "r.yaml");
  REQUIRE(g.cells.size() == 8);
  std::ostringstream log;
  RunnerOptions opt;
  opt.jobs = 2;
  opt.exe = exe.string();
  opt.log = &log;
  opt.poll_seconds = 0.01;
  const auto sum = run_cells(g.cells, root, opt);
  INFO(log.str());
  CHECK(sum.computed == 4);
  CHECK(sum.reused == 0);
  CHECK(sum.failed == 4);
  CHECK(!sum.ok());
  CHECK(sum.line() == "computed 4, reused 0, failed 4");
  CHECK(log.str().find("ETA") != std::string::npos);
  CHECK(count_state(g, root, CellState::done) == 4);
  CHECK(count_state(g, root, CellState::failed) == 4);
  for (const auto& c : g.cells) {
    if (c.dataset != "yacht") continue;
    const YAML::Node e = YAML::LoadFile((c.run_dir(root) / "error.json").string());
    CHECK(e["exit_code"].as<int>() == 3);
    CHECK(e["config_hash"].as<std::string>() == c.hash());
    CHECK(e["stderr_tail"].as<std::string>().find("not implemented") != std::string::npos);
    CHECK(e["reason"].as<std::string>().find("exit code 3") != std::string::npos);
    CHECK(e["command"].as<std::string>().find("--out") != std::string::npos);
  }
  // Rerun: done cells are reused, failed ones retried (and fail again).
  std::ostringstream log2;
  opt.log = &log2;
  const auto again = run_cells(g.cells, root, opt);
  CHECK(again.computed == 0);
  CHECK(again.reused == 4);
  CHECK(again.failed == 4);
  CHECK(again.line() == "computed 0, reused 4, failed 4");
}

TEST_CASE("runner: a result computed under another grid is reused where it is, not recomputed") {
  const fs::path root = dkp::test::temp_dir("adopt") / "runs";
  const Grid a = parse_grid(grid_text("first", "boston", "[0]"), "first.yaml");
  const Grid b = parse_grid(grid_text("second", "boston", "[0]"), "second.yaml");
  for (const auto& c : a.cells) write_result(c, root, -2.0);
  // Written by hand, not by dkp (no line in the first grid's index.tsv): a stray result, never
  // taken for a computed cell of the second grid.
  CHECK(cell_status(b.cells[0], root).state == CellState::missing);
  for (const auto& c : a.cells) {  // as dkp run leaves them: with a manifest, in the index
    dkp::util::write_file_atomic(c.run_dir(root) / "manifest.json",
                                 "{\"config_hash\": \"" + c.hash() + "\"}\n");
    REQUIRE(record_in_store_index(c.run_dir(root)));
  }
  RunnerOptions opt;
  opt.exe = "/nonexistent/dkp";  // never started
  std::ostringstream log;
  opt.log = &log;
  const auto sum = run_cells(b.cells, root, opt);
  CHECK(sum.reused == 2);
  CHECK(sum.computed == 0);
  CHECK(count_state(b, root, CellState::done) == 2);
  // Stored once: the second grid's cells point at the first grid's results.
  CHECK_FALSE(fs::exists(b.cells[0].run_dir(root)));
  const auto st = cell_status(b.cells[0], root);
  CHECK(st.result == a.cells[0].run_dir(root) / "result.json");
  CHECK(st.detail == "computed under grid first");
  // A result of the grid's own wins over another grid's.
  write_result(b.cells[0], root, -3.0);
  CHECK(cell_status(b.cells[0], root).result == b.cells[0].run_dir(root) / "result.json");
}

TEST_CASE("runner: a stop request terminates running cells without marking them failed") {
  const fs::path root = dkp::test::temp_dir("stop") / "runs";
  const fs::path exe = fake_dkp(root.parent_path());
  const Grid g = parse_grid(grid_text("z", "concrete", "[0, 1]"), "z.yaml");
  std::atomic<bool> stop{false};
  RunnerOptions opt;
  opt.jobs = 1;
  opt.exe = exe.string();
  opt.stop = &stop;
  opt.poll_seconds = 0.01;
  std::ostringstream log;
  opt.log = &log;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  const auto sum = run_cells(g.cells, root, opt);
  stopper.join();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
  CHECK(sum.interrupted == 1);
  CHECK(sum.not_started == 3);
  CHECK(sum.failed == 0);
  CHECK(count_state(g, root, CellState::failed) == 0);
}

TEST_CASE("grid snapshots let dkp tables find the expected cells later") {
  const fs::path root = dkp::test::temp_dir("snap") / "runs";
  const std::string text =
      grid_text("snap", "boston", "[0, 1]") + "profiles:\n  quick:\n    axes: {splits: [0]}\n";
  const Grid full = parse_grid(text, "experiments/snap.yaml");
  const Grid quick = parse_grid(text, "experiments/snap.yaml", "quick");
  write_grid_snapshot(full, text, root);
  write_grid_snapshot(quick, text, root);
  const auto grids = load_grid_snapshots(root);
  REQUIRE(grids.size() == 2);
  CHECK(grids[0].profile == "full");
  CHECK(grids[0].cells.size() == full.cells.size());
  CHECK(grids[1].profile == "quick");
  CHECK(grids[1].cells.size() == quick.cells.size());
  for (size_t i = 0; i < full.cells.size(); ++i) {
    CHECK(grids[0].cells[i].hash() == full.cells[i].hash());
  }
}
