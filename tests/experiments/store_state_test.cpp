// The store's cell states beyond done/missing/failed (lib/experiments/store.hpp): a cell whose
// run directory's lock is held is running, one nobody holds is interrupted; malformed files are
// damaged (named with their path and error), results of other data stale; and the runner on top:
// cells running elsewhere are skipped (two runners on one store split the cells), damaged and
// stale ones reported, --force clears and recomputes. `dkp` is faked by shell scripts.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "experiments/grid.hpp"
#include "experiments/runner.hpp"
#include "experiments/store.hpp"
#include "experiments/store_index.hpp"
#include "experiments/tables_job.hpp"
#include "platform/dir_lock.hpp"
#include "test_support.hpp"
#include "tiny_grid.hpp"
#include "training/trace.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

using namespace dkp::experiments;
namespace fs = std::filesystem;
using dkp::util::write_file_atomic;

namespace {

std::string grid_text(const std::string& name, const std::string& splits) {
  return dkp::test::tiny_grid_text(name, "boston", splits);
}

void write_result(const RunSpec& c, const fs::path& root, const std::string& more = "") {
  write_file_atomic(c.run_dir(root) / "result.json",
                    "{\"config_hash\": \"" + c.hash() + "\", \"test_ll\": -1.0" + more + "}\n");
}

void write_manifest(const RunSpec& c, const fs::path& root, const std::string& more = "") {
  write_file_atomic(c.run_dir(root) / "manifest.json",
                    "{\"config_hash\": \"" + c.hash() + "\"" + more + "}\n");
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

fs::path script(const fs::path& dir, const std::string& name, const std::string& text) {
  const fs::path p = dir / name;
  write_file_atomic(p, text);
  ::chmod(p.c_str(), 0755);
  return p;
}

// The part of a fake dkp that reads its arguments.
const char* const kArgs = R"(#!/bin/sh
out=""; force=0
for a in "$@"; do case "$a" in --force) force=1 ;; esac; done
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift ;;
  esac
  shift
done
h=$(basename "$out")
)";

const char* const kWriteResult = R"(
printf '{"config_hash": "%s", "test_ll": -1.5}\n' "$h" > "$out/result.json.tmp"
mv "$out/result.json.tmp" "$out/result.json"
)";

// A fake dkp that behaves as `dkp run` with its lock: it holds <out>/run.lock (flock from
// util-linux) for the whole run and exits 75 when another process holds it; a done cell is
// skipped (logged to skipped.log); a computed one is logged to computed.log.
fs::path locking_dkp(const fs::path& dir) {
  return script(dir, "locking-dkp.sh", std::string(kArgs) + "log=" + dir.string() + R"(
exec 9>>"$out/run.lock"
if ! flock -n 9; then
  echo "$out is being run by another process (run.lock); not starting a second run" >&2
  exit 75
fi
if grep -q "\"config_hash\": \"$h\"" "$out/result.json" 2>/dev/null; then
  echo "$h" >>"$log/skipped.log"
  exit 0
fi
echo "$h" >>"$log/computed.log"
sleep 0.3
)" + kWriteResult);
}

std::vector<std::string> lines_of(const fs::path& file) {
  std::vector<std::string> out;
  if (!fs::exists(file)) return out;
  std::istringstream in(dkp::util::read_file(file));
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) out.push_back(l);
  }
  return out;
}

RunnerOptions options(const fs::path& exe, std::ostream& log) {
  RunnerOptions opt;
  opt.exe = exe.string();
  opt.log = &log;
  opt.poll_seconds = 0.01;
  return opt;
}

}  // namespace

TEST_CASE("a cell whose run directory's lock is held is running, else interrupted") {
  const fs::path root = dkp::test::temp_dir("lock-states");
  const Grid g = parse_grid(grid_text("l", "[0]"), "l.yaml");
  const RunSpec& c = g.cells[0];
  const fs::path dir = c.run_dir(root);
  write_manifest(c, root);
  CHECK(std::string(to_string(CellState::interrupted)) == "interrupted");
  CHECK(cell_status(c, root).state == CellState::interrupted);
  {
    auto lock = dkp::platform::DirLock::try_acquire(dir);
    REQUIRE(lock);
    const CellStatus st = cell_status(c, root);
    CHECK(st.state == CellState::running);
    CHECK(contains(st.detail, fmt::format("being run by pid {} on ", ::getpid())));
    // While it runs, files being rewritten are not damage.
    write_file_atomic(dir / "result.json", "{\"config_hash\": \"ab");
    CHECK(cell_status(c, root).state == CellState::running);
  }
  // The holder is gone (the lock file stays): damaged, no longer running.
  CHECK(fs::exists(dir / "run.lock"));
  CHECK(cell_status(c, root).state == CellState::damaged);
  fs::remove(dir / "result.json");
  CHECK(cell_status(c, root).state == CellState::interrupted);
  // A lock alone (a run that has just started) is running too.
  const RunSpec& d = g.cells[1];
  auto lock = dkp::platform::DirLock::try_acquire(d.run_dir(root));
  REQUIRE(lock);
  CHECK(cell_status(d, root).state == CellState::running);
  lock->release();
  CHECK(cell_status(d, root).state == CellState::missing);
}

TEST_CASE("malformed result.json, manifest.json and trace.csv are damaged, named with the error") {
  const fs::path root = dkp::test::temp_dir("damage");
  const Grid g = parse_grid(grid_text("d", "[0]"), "d.yaml");
  const RunSpec& c = g.cells[0];
  const fs::path dir = c.run_dir(root);
  const std::string result = (dir / "result.json").string();
  CHECK(std::string(to_string(CellState::damaged)) == "damaged");
  // A truncated result.json: not a running cell, and the message names the file.
  write_result(c, root);
  const std::string whole = dkp::util::read_file(dir / "result.json");
  const std::string cut = whole.substr(0, whole.size() - 8);
  write_file_atomic(dir / "result.json", cut);
  write_manifest(c, root);
  CellStatus st = cell_status(c, root);
  CHECK(st.state == CellState::damaged);
  // <file>:<line>:<column> of where the parser stopped: just past the end.
  CHECK(st.detail == fmt::format("{}:1:{}: not valid JSON: syntax error while parsing object "
                                 "separator - unexpected end of input; expected ':'",
                                 result, cut.size() + 1));
  CHECK_FALSE(contains(st.detail, "yaml-cpp"));
  // A pretty-printed one cut after its third line: line 4, column 1.
  write_file_atomic(dir / "result.json",
                    "{\n  \"config_hash\": \"" + c.hash() + "\",\n  \"test_ll\": -1.5,\n");
  CHECK(contains(cell_status(c, root).detail, result + ":4:1: not valid JSON: "));
  // Values of the wrong type: a config_hash or data_sha256 that is not a string.
  write_file_atomic(dir / "result.json", "{\"config_hash\": 12, \"test_ll\": -1}\n");
  st = cell_status(c, root);
  CHECK(st.state == CellState::damaged);
  CHECK(st.detail == result + ": config_hash is a number, not a string");
  write_result(c, root, ", \"data_sha256\": [1]");
  CHECK(cell_status(c, root).detail == result + ": data_sha256 is an array, not a string");
  // Not an object, no config_hash, empty.
  write_file_atomic(dir / "result.json", "[1, 2]\n");
  CHECK(cell_status(c, root).detail == result + ": not a JSON object");
  write_file_atomic(dir / "result.json", "{\"test_ll\": -1}\n");
  CHECK(cell_status(c, root).detail == result + ": no config_hash");
  write_file_atomic(dir / "result.json", "");
  CHECK(cell_status(c, root).state == CellState::damaged);
  // Damage wins over an error.json (the failure may be its consequence) and over a result of the
  // same configuration under another grid.
  write_file_atomic(dir / "error.json", "{\"reason\": \"exit code 1\"}");
  const Grid other = parse_grid(grid_text("other", "[0]"), "other.yaml");
  write_result(other.cells[0], root);  // as dkp run leaves it: a manifest, in the index
  write_manifest(other.cells[0], root);
  REQUIRE(dkp::experiments::record_in_store_index(other.cells[0].run_dir(root)));
  CHECK(cell_status(c, root).state == CellState::damaged);
  fs::remove(dir / "result.json");
  CHECK(cell_status(c, root).state == CellState::done);  // the other grid's result
  fs::remove_all(root / "other");
  CHECK(cell_status(c, root).state == CellState::failed);
  fs::remove(dir / "error.json");
  // A malformed manifest.json.
  write_file_atomic(dir / "manifest.json", "{\"config_hash\": \"");
  st = cell_status(c, root);
  CHECK(st.state == CellState::damaged);
  CHECK(contains(st.detail, (dir / "manifest.json").string() + ":1:18: not valid JSON: "));
  write_file_atomic(dir / "manifest.json", "{\"cpu\": \"x\"}");
  CHECK(cell_status(c, root).detail == (dir / "manifest.json").string() + ": no config_hash");
  write_file_atomic(dir / "manifest.json", "{\"config_hash\": true}");
  CHECK(cell_status(c, root).detail ==
        (dir / "manifest.json").string() + ": config_hash is a boolean, not a string");
  write_manifest(c, root);
  CHECK(cell_status(c, root).state == CellState::interrupted);
  // A malformed trace.csv.
  write_file_atomic(dir / "trace.csv", std::string(dkp::training::kTraceHeader) + "\n5,1,2\n");
  st = cell_status(c, root);
  CHECK(st.state == CellState::damaged);
  CHECK(contains(st.detail, (dir / "trace.csv").string() + ":2"));
  // A result of another configuration stays what it was: ignored, noted.
  fs::remove(dir / "trace.csv");
  write_file_atomic(dir / "result.json", "{\"config_hash\": \"0123456789abcdef\"}");
  st = cell_status(c, root);
  CHECK(st.state == CellState::interrupted);
  CHECK(contains(st.detail, "another configuration (config_hash 0123456789abcdef) ignored"));
  // Damaged cells are not pending: a plain run would not clear them.
  write_file_atomic(dir / "result.json", "{");
  CHECK(pending_cells(g, root).size() == 1);
}

TEST_CASE("a result or checkpoint made from other data than the data now present is stale") {
  const fs::path root = dkp::test::temp_dir("stale");
  const Grid g = parse_grid(grid_text("f", "[0, 1]"), "f.yaml");
  REQUIRE(g.cells.size() == 4);
  std::map<std::pair<std::string, int>, int> calls;
  DataFingerprints fp([&](const std::string& ds, int split) -> std::optional<std::string> {
    ++calls[{ds, split}];
    if (split == 1) return std::nullopt;  // unknown: not checked
    return std::string("aaaa");
  });
  StatusOptions opt;
  opt.data = &fp;
  CHECK(std::string(to_string(CellState::stale)) == "stale");
  const RunSpec& c = g.cells[0];  // split 0
  // result.json's data_sha256.
  write_result(c, root, ", \"data_sha256\": \"bbbb\"");
  CellStatus st = cell_status(c, root, opt);
  CHECK(st.state == CellState::stale);
  CHECK(contains(st.detail,
                 "result made from other data: data_sha256 bbbb, the data of boston "
                 "split 0 now aaaa"));
  CHECK(cell_status(c, root).state == CellState::done);  // without fingerprints: not checked
  write_result(c, root, ", \"data_sha256\": \"aaaa\"");
  CHECK(cell_status(c, root, opt).state == CellState::done);
  // Else the manifest's.
  write_result(c, root);
  write_manifest(c, root, ", \"data_sha256\": \"cccc\"");
  st = cell_status(c, root, opt);
  CHECK(st.state == CellState::stale);
  CHECK(contains(st.detail, "data_sha256 cccc"));
  CHECK(contains(st.detail, (c.run_dir(root) / "manifest.json").string()));
  // A checkpoint of other data.
  fs::remove(c.run_dir(root) / "result.json");
  st = cell_status(c, root, opt);
  CHECK(st.state == CellState::stale);
  CHECK(contains(st.detail, "checkpoint made from other data"));
  // Unknown fingerprints are not checked.
  const RunSpec& s1 = g.cells[2];
  REQUIRE(s1.split == 1);
  write_result(s1, root, ", \"data_sha256\": \"bbbb\"");
  CHECK(cell_status(s1, root, opt).state == CellState::done);
  // Each (dataset, split) fingerprint is computed once.
  CHECK(calls.size() == 2);
  for (const auto& [k, n] : calls) CHECK(n == 1);
  // Stale cells are left out of the tables, noted, and shown as stale.
  StoreCheck check;
  const auto records = collect_records(g, root, opt, &check);
  CHECK(records[0].state == "stale");
  CHECK(records[2].state == "done");
  CHECK(check.present == 2);
  REQUIRE(check.stale.size() == 1);
  CHECK(check.stale[0].hash == c.hash());
  CHECK(check.damaged.empty());
}

TEST_CASE(
    "result.json numbers: not a finite number in its range, or a predicting run's test LL gone") {
  const fs::path root = dkp::test::temp_dir("schema");
  const Grid g = parse_grid(grid_text("s", "[0]"), "s.yaml");
  const RunSpec& c = g.cells[0];
  const fs::path file = c.run_dir(root) / "result.json";
  const std::string result = file.string();
  write_manifest(c, root);
  auto with = [&](const std::string& members) {
    write_file_atomic(file,
                      "{\"config_hash\": \"" + c.hash() + "\", \"n_test\": 51" + members + "}\n");
    return cell_status(c, root);
  };
  CHECK(with(", \"test_ll\": -1.5, \"test_acc\": 0.5").state == CellState::done);
  CellStatus st = with(", \"test_ll\": \"abc\"");
  CHECK(st.state == CellState::damaged);
  CHECK(st.detail == result + ": key 'test_ll': not a number (\"abc\")");
  CHECK(with(", \"test_ll\": null").detail == result + ": key 'test_ll': not a number (null)");
  CHECK(
      contains(with(", \"test_ll\": 1e308").detail, result + ": key 'test_ll': 1e+308 is outside"));
  CHECK(contains(with(", \"test_ll\": -1, \"test_acc\": 1.5").detail,
                 "key 'test_acc': 1.5 is outside"));
  CHECK(contains(with(", \"test_ll\": -1, \"train_s\": -3").detail, "key 'train_s'"));
  st = with("");
  CHECK(st.state == CellState::damaged);
  CHECK(st.detail == result + ": key 'test_ll': missing (the run predicted: n_test >= 1)");
  // A result of dkp run (it names its model) has every metric of its task; one deleted is damage.
  const std::string full =
      ", \"model\": \"sgp\", \"elbo\": 1, \"n_train\": 9, \"train_s\": 2, "
      "\"test_ll\": -1";
  CHECK(with(full + ", \"test_rmse\": 0.5").state == CellState::done);
  CHECK(with(full + ", \"test_acc\": 0.5").state == CellState::done);
  CHECK(with(full).detail ==
        result +
            ": key 'test_rmse': missing, and no test_acc either (the run predicted: n_test "
            ">= 1)");
  for (const char* key : {"elbo", "n_train", "train_s"}) {
    std::string cut = full + ", \"test_rmse\": 0.5";
    const std::string member = std::string(", \"") + key + "\": ";
    const size_t at = cut.find(member);
    REQUIRE(at != std::string::npos);
    cut.erase(at, cut.find_first_of(",", at + member.size()) - at);
    INFO(cut);
    CHECK(with(cut).detail ==
          result + ": key '" + key + "': missing (every result of dkp run has it)");
  }
  // The tables get the same damage, not a split silently left out of a mean.
  with(", \"test_ll\": \"abc\"");
  CHECK_THROWS_AS(read_result_values(file), dkp::DataError);
  StoreCheck check;
  const auto records = collect_records(g, root, {}, &check);
  REQUIRE(check.damaged.size() == 1);
  CHECK(contains(check.damaged[0].detail, "key 'test_ll'"));
  CHECK(records[0].state == "damaged");
}

TEST_CASE("tables: damaged cells are noted, interrupted ones shown as running") {
  const fs::path root = dkp::test::temp_dir("tables-check");
  const Grid g = parse_grid(grid_text("t", "[0, 1]"), "t.yaml");
  StoreCheck none;
  collect_records(g, root, {}, &none);
  CHECK(none.present == 0);
  write_file_atomic(g.cells[0].run_dir(root) / "result.json", "{\"config_hash\": \"");
  write_manifest(g.cells[1], root);
  write_result(g.cells[2], root);
  StoreCheck check;
  const auto records = collect_records(g, root, {}, &check);
  CHECK(check.present == 3);
  REQUIRE(check.damaged.size() == 1);
  CHECK(contains(check.damaged[0].detail,
                 (g.cells[0].run_dir(root) / "result.json").string() + ":1:18: not valid JSON: "));
  CHECK(records[0].state == "damaged");
  CHECK(records[1].state == "running");
  CHECK(records[2].state == "done");
  CHECK(records[3].state == "missing");
}

TEST_CASE("find_cell: a hash or a unique prefix of at least 4 characters") {
  const Grid g = parse_grid(grid_text("h", "[0, 1, 2, 3]"), "h.yaml");
  const RunSpec& c = g.cells[5];
  CHECK(find_cell(g, c.hash()).hash() == c.hash());
  CHECK(find_cell(g, c.hash().substr(0, 6)).hash() == c.hash());
  CHECK_THROWS_WITH_AS(find_cell(g, "abc"), doctest::Contains("at least 4"), dkp::ConfigError);
  CHECK_THROWS_WITH_AS(find_cell(g, "gggg"), doctest::Contains("no cell of grid h"),
                       dkp::ConfigError);
}

TEST_CASE("clear_run_dir removes a run's files, keeps its lock, never while another holds it") {
  const fs::path root = dkp::test::temp_dir("clear");
  const Grid g = parse_grid(grid_text("c", "[0]"), "c.yaml");
  const RunSpec& c = g.cells[0];
  const fs::path dir = c.run_dir(root);
  CHECK(clear_run_dir(dir) == 0);  // nothing there
  write_result(c, root);
  write_manifest(c, root);
  for (const char* f : {"checkpoint.bin", "trace.csv", "error.json", "stdout.log", "stderr.log",
                        "result.json.tmp.12.0", "notes.txt"}) {
    write_file_atomic(dir / f, "x");
  }
  {
    auto lock = dkp::platform::DirLock::try_acquire(dir);
    REQUIRE(lock);
    CHECK_THROWS_WITH_AS(clear_run_dir(dir), doctest::Contains("is being run by pid"), dkp::Error);
    CHECK(fs::exists(dir / "result.json"));
  }
  CHECK(clear_run_dir(dir) == 8);
  std::set<std::string> left;
  for (const auto& e : fs::directory_iterator(dir)) left.insert(e.path().filename().string());
  CHECK(left == std::set<std::string>{"notes.txt", "run.lock"});
  CHECK(cell_status(c, root).state == CellState::missing);
}

TEST_CASE("runner: cells running elsewhere are skipped, not failed; damaged and stale reported") {
  const fs::path tmp = dkp::test::temp_dir("runner-states");
  const fs::path root = tmp / "runs";
  // Exits 75 for split 1 (another process took its lock first), computes the rest.
  const fs::path exe = script(tmp, "dkp.sh", std::string(kArgs) + R"(
case "$out" in
  */split1/*) echo "$out is being run by pid 1 on elsewhere since now (run.lock); not starting a second run" >&2; exit 75 ;;
esac
)" + kWriteResult);
  const Grid g = parse_grid(grid_text("e", "[0, 1, 2, 3]"), "e.yaml");
  REQUIRE(g.cells.size() == 8);
  // Split 0: one cell held by a process now, one damaged. Split 2: one stale.
  const RunSpec& held = g.cells[0];
  const RunSpec& damaged = g.cells[1];
  const RunSpec& stale = g.cells[4];
  REQUIRE((held.split == 0 && damaged.split == 0 && stale.split == 2));
  auto lock = dkp::platform::DirLock::try_acquire(held.run_dir(root));
  REQUIRE(lock);
  write_file_atomic(damaged.run_dir(root) / "result.json", "{\"config_hash\": \"12");
  write_result(stale, root, ", \"data_sha256\": \"old\"");
  DataFingerprints fp([](const std::string&, int) { return std::optional<std::string>("new"); });
  std::ostringstream log;
  RunnerOptions opt = options(exe, log);
  opt.jobs = 2;
  opt.status.data = &fp;
  const RunnerSummary sum = run_cells(g.cells, root, opt);
  INFO(log.str());
  CHECK(sum.computed == 3);  // splits 2 (one of two) and 3
  CHECK(sum.failed == 0);
  CHECK(sum.running_elsewhere == 3);  // the held cell and the two of split 1
  CHECK(sum.damaged == 1);
  CHECK(sum.stale == 1);
  CHECK_FALSE(sum.ok());
  CHECK(sum.line() == "computed 3, reused 0, failed 0, running elsewhere 3, damaged 1, stale 1");
  REQUIRE(sum.damaged_cells.size() == 1);
  CHECK(sum.damaged_cells[0].hash == damaged.hash());
  CHECK(contains(sum.damaged_cells[0].detail,
                 (damaged.run_dir(root) / "result.json").string() + ":1:20: not valid JSON: "));
  REQUIRE(sum.stale_cells.size() == 1);
  CHECK(contains(sum.stale_cells[0].detail, "data_sha256 old"));
  // Nothing was written for cells running elsewhere; the damaged file is left as it was.
  for (const auto& c : g.cells) {
    if (c.split == 1) CHECK_FALSE(fs::exists(c.run_dir(root) / "error.json"));
  }
  CHECK_FALSE(fs::exists(held.run_dir(root) / "stdout.log"));
  CHECK(dkp::util::read_file(damaged.run_dir(root) / "result.json") == "{\"config_hash\": \"12");
  CHECK(contains(log.str(), "BUSY"));
  CHECK(contains(log.str(), "running elsewhere: " + held.label()));
}

TEST_CASE("runner --force: every cell cleared and recomputed with --force, held ones left alone") {
  const fs::path tmp = dkp::test::temp_dir("runner-force");
  const fs::path root = tmp / "runs";
  // Records whether it got --force; fails without it when a result is there.
  const fs::path exe = script(tmp, "dkp.sh", std::string(kArgs) + R"(
[ "$force" = 1 ] || { echo "no --force" >&2; exit 9; }
[ -e "$out/result.json" ] && { echo "not cleared" >&2; exit 8; }
)" + kWriteResult);
  const Grid g = parse_grid(grid_text("x", "[0, 1]"), "x.yaml");
  REQUIRE(g.cells.size() == 4);
  write_result(g.cells[0], root);                                            // done
  write_file_atomic(g.cells[1].run_dir(root) / "result.json", "{nonsense");  // damaged
  write_manifest(g.cells[2], root);                                          // interrupted
  write_file_atomic(g.cells[2].run_dir(root) / "checkpoint.bin", "x");
  write_result(g.cells[3], root);  // done, but held by a process now
  auto lock = dkp::platform::DirLock::try_acquire(g.cells[3].run_dir(root));
  REQUIRE(lock);
  std::ostringstream log;
  RunnerOptions opt = options(exe, log);
  opt.force = true;
  const RunnerSummary sum = run_cells(g.cells, root, opt);
  INFO(log.str());
  CHECK(sum.computed == 3);
  CHECK(sum.reused == 0);
  CHECK(sum.failed == 0);
  CHECK(sum.running_elsewhere == 1);
  CHECK(contains(log.str(), "running elsewhere, not recomputed: " + g.cells[3].label()));
  for (int i = 0; i < 3; ++i) {
    CHECK(cell_status(g.cells[i], root).state == CellState::done);
    CHECK_FALSE(fs::exists(g.cells[i].run_dir(root) / "checkpoint.bin"));
    CHECK(contains(dkp::util::read_file(g.cells[i].run_dir(root) / "result.json"), "-1.5"));
  }
  CHECK(contains(dkp::util::read_file(g.cells[3].run_dir(root) / "result.json"), "-1.0"));
}

TEST_CASE("two runners on one store split the cells: each is computed exactly once") {
  if (std::system("flock --version >/dev/null 2>&1") != 0) {
    MESSAGE("flock (util-linux) not found: skipped");
    return;
  }
  const fs::path tmp = dkp::test::temp_dir("two-runners");
  const fs::path root = tmp / "runs";
  const fs::path exe = locking_dkp(tmp);
  const Grid g = parse_grid(grid_text("two", "[0, 1, 2, 3, 4]"), "two.yaml");
  REQUIRE(g.cells.size() == 10);
  std::ostringstream log_a, log_b;
  RunnerOptions a = options(exe, log_a), b = options(exe, log_b);
  a.jobs = b.jobs = 2;
  RunnerSummary sum_a, sum_b;
  std::thread ta([&] { sum_a = run_cells(g.cells, root, a); });
  std::thread tb([&] { sum_b = run_cells(g.cells, root, b); });
  ta.join();
  tb.join();
  INFO(log_a.str());
  INFO(log_b.str());
  const auto computed = lines_of(tmp / "computed.log");
  const auto skipped = lines_of(tmp / "skipped.log");  // a cell finished between check and start
  std::map<std::string, int> times;
  for (const auto& h : computed) ++times[h];
  CHECK(computed.size() == g.cells.size());
  for (const auto& c : g.cells) {
    CHECK(times[c.hash()] == 1);
    CHECK(cell_status(c, root).state == CellState::done);
    CHECK_FALSE(fs::exists(c.run_dir(root) / "error.json"));
  }
  CHECK(sum_a.failed + sum_b.failed == 0);
  CHECK(sum_a.ok());
  CHECK(sum_b.ok());
  // Both worked, and together they computed each cell once (a runner whose `dkp run` found the
  // cell done meanwhile counts it as computed: skipped.log).
  CHECK(sum_a.computed > 0);
  CHECK(sum_b.computed > 0);
  CHECK(sum_a.computed + sum_b.computed == g.cells.size() + skipped.size());
  CHECK(sum_a.computed + sum_a.reused + sum_a.running_elsewhere == g.cells.size());
  CHECK(sum_b.computed + sum_b.reused + sum_b.running_elsewhere == g.cells.size());
}

TEST_CASE("tables: a done cell's record has its trace's level over the last tenth") {
  const fs::path root = dkp::test::temp_dir("tables-trace");
  std::string text = grid_text("tr", "[0]");
  text.replace(text.find("steps: 10\n"), 10, "steps: 2000\n");
  const Grid g = parse_grid(text, "tr.yaml");
  const RunSpec& c = g.cells[0];
  write_manifest(c, root);
  write_result(c, root);
  // A row every 10 of the 2000 steps; the last tenth's 20 rows are 10 batches of 2 with the batch
  // means 1, 2, ..., 10 (so the mean 5.5 and the se sqrt(82.5 / 9 / 10)); earlier rows -50.
  const long steps = c.protocol.steps;
  REQUIRE(steps % 200 == 0);
  std::string trace = "step,elbo,expected_loglik,kl,kl_weight,lr\n";
  for (long s = steps / 200; s <= steps; s += steps / 200) {
    const bool tail = s > steps - steps / 10;
    const long k = tail ? (s - (steps - steps / 10)) / (steps / 200) - 1 : 0;  // 0..19
    trace += fmt::format("{},{},0,0,1,0.01\n", s, tail ? double(k / 2 + 1) : -50.0);
  }
  write_file_atomic(c.run_dir(root) / "trace.csv", trace);
  const auto records = collect_records(g, root, {});
  REQUIRE(records[0].state == "done");
  CHECK(records[0].values.at("elbo_tail") == doctest::Approx(5.5));
  CHECK(records[0].values.at("elbo_tail_se") == doctest::Approx(std::sqrt(82.5 / 9.0 / 10.0)));
  // Without a trace, no such value (and nothing else changes).
  fs::remove(c.run_dir(root) / "trace.csv");
  CHECK_FALSE(collect_records(g, root, {})[0].values.count("elbo_tail"));
}
