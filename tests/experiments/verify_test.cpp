// dkp grid verify (lib/experiments/verify.hpp): the seeded choice of cells, the comparison of two
// results' values with and without a tolerance, the verdict lines, and reruns by a fake `dkp`
// that must leave the store untouched.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "experiments/grid.hpp"
#include "experiments/store.hpp"
#include "experiments/store_index.hpp"
#include "experiments/verify.hpp"
#include "test_support.hpp"
#include "tiny_grid.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

using namespace dkp::experiments;
namespace fs = std::filesystem;

namespace {

std::string grid_text(const std::string& name, const std::string& datasets,
                      const std::string& splits) {
  return dkp::test::tiny_grid_text(name, datasets, splits);
}

const char* const kManifest =
    "{\"config_hash\": \"%s\", \"cpu\": \"Fake CPU, AVX2\", \"blas_core\": \"Haswell\", "
    "\"git_sha\": \"0123abcd\"}\n";

// A stored result (and manifest) as `dkp run` writes them; the fake dkp below computes test_ll
// -1.5 and elbo -1.25 for every boston cell.
void write_stored(const RunSpec& c, const fs::path& root, double test_ll = -1.5) {
  const fs::path dir = c.run_dir(root);
  std::string manifest = kManifest;
  manifest.replace(manifest.find("%s"), 2, c.hash());
  dkp::util::write_file_atomic(dir / "manifest.json", manifest);
  dkp::util::write_file_atomic(
      dir / "result.json",
      fmt::format("{{\"config_hash\": \"{}\", \"dataset\": \"{}\", \"steps\": 10, \"elbo\": "
                  "-1.25, \"test_ll\": {:.17g}, \"train_s\": 99.5, \"predict_s\": 0.25, "
                  "\"resumed_from_step\": 0, \"git_sha\": \"0123abcd\"}}\n",
                  c.hash(), c.dataset, test_ll));
  dkp::experiments::record_in_store_index(dir);  // as dkp run: in its grid's index
}

// A stand-in for dkp run: boston cells get the stored numbers (other timings), yacht cells fail.
fs::path fake_dkp(const fs::path& dir) {
  const fs::path p = dir / "fake-dkp.sh";
  dkp::util::write_file_atomic(p, std::string(R"(#!/bin/sh
out=""; ds=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift ;;
    --dataset) ds="$2"; shift ;;
    --spec) ds=$(printf '%s\n' "$2" | sed -n 's/^dataset=//p'); shift ;;
  esac
  shift
done
case "$ds" in
  yacht) echo "dkp run: the data are broken" >&2; exit 1 ;;
esac
h=$(basename "$out")
printf ')") + kManifest + R"(' "$h" > "$out/manifest.json"
printf '{"config_hash": "%s", "dataset": "boston", "steps": 10, "elbo": -1.25, "test_ll": -1.5, "train_s": %s.5, "predict_s": 0.125, "resumed_from_step": 0, "git_sha": "0123abcd"}\n' "$h" "$$" > "$out/result.json"
)");
  ::chmod(p.c_str(), 0755);
  return p;
}

// Every file under `root` with its contents and modification time, and every directory.
std::map<std::string, std::string> tree(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string rel = fs::relative(e.path(), root).string();
    if (e.is_directory()) {
      out[rel + "/"] = "";
    } else {
      out[rel] = dkp::util::read_file(e.path()) +
                 fmt::format("@{}", e.last_write_time().time_since_epoch().count());
    }
  }
  return out;
}

std::vector<std::string> hashes(const std::vector<RunSpec>& cells) {
  std::vector<std::string> out;
  for (const auto& c : cells) out.push_back(c.hash());
  return out;
}

}  // namespace

TEST_CASE("verify: the choice of cells is deterministic for a seed and differs between seeds") {
  const Grid g = parse_grid(grid_text("v", "boston, yacht", "[0, 1, 2, 3, 4, 5, 6]"), "v.yaml");
  REQUIRE(g.cells.size() == 28);
  const auto& cells = g.cells;
  for (size_t k : {1, 3, 10}) {
    const auto a = choose_cells(cells, k, 0), b = choose_cells(cells, k, 0);
    REQUIRE(a.size() == k);
    CHECK(hashes(a) == hashes(b));
    CHECK(hashes(choose_cells(cells, k, 1)) != hashes(a));
    // Distinct cells, in grid order.
    std::vector<size_t> pos;
    for (const auto& c : a) {
      for (size_t i = 0; i < cells.size(); ++i)
        if (cells[i].hash() == c.hash()) pos.push_back(i);
    }
    REQUIRE(pos.size() == k);
    CHECK(std::is_sorted(pos.begin(), pos.end()));
    CHECK(std::set<size_t>(pos.begin(), pos.end()).size() == k);
  }
  // Seeds spread the choice over the grid.
  std::set<std::string> seen;
  for (uint64_t s = 0; s < 40; ++s) seen.insert(choose_cells(cells, 1, s).front().hash());
  CHECK(seen.size() >= 10);
  // The generator and the draws are our own (std::mt19937_64 is fully specified; no
  // std::uniform_int_distribution), so the choice is pinned on every platform.
  CHECK(choose_cells(cells, 1, 0).front().hash() == cells[10].hash());
  CHECK(hashes(choose_cells(cells, 3, 42)) ==
        std::vector<std::string>{cells[0].hash(), cells[6].hash(), cells[14].hash()});
  // k >= the number of cells: all of them; k = 0: none.
  CHECK(hashes(choose_cells(cells, 28, 5)) == hashes(cells));
  CHECK(hashes(choose_cells(cells, 100, 5)) == hashes(cells));
  CHECK(choose_cells(cells, 0, 5).empty());
}

TEST_CASE("verify: which keys are compared, and how") {
  CHECK(key_kind("train_s") == KeyKind::ignored);
  CHECK(key_kind("step_s") == KeyKind::ignored);
  CHECK(key_kind("epoch_s") == KeyKind::ignored);
  CHECK(key_kind("predict_s") == KeyKind::ignored);
  CHECK(key_kind("load_s") == KeyKind::ignored);  // anything ending in _s
  CHECK(key_kind("resumed_from_step") == KeyKind::ignored);
  CHECK(key_kind("finished") == KeyKind::ignored);
  CHECK(key_kind("git_sha") == KeyKind::ignored);
  CHECK(key_kind("elbo_se") == KeyKind::metric);  // not a time
  CHECK(key_kind("elbo") == KeyKind::metric);
  CHECK(key_kind("test_ll") == KeyKind::metric);
  CHECK(key_kind("test_rmse") == KeyKind::metric);
  CHECK(key_kind("test_acc") == KeyKind::fraction);
  CHECK(key_kind("test_coverage_95") == KeyKind::fraction);
  CHECK(key_kind("test_calibration_error") == KeyKind::fraction);
  CHECK(key_kind("steps") == KeyKind::exact);
  CHECK(key_kind("n_train") == KeyKind::exact);
  const Tolerance tol;
  CHECK(tol.allowed("test_ll", -2.0) == doctest::Approx(0.15));
  CHECK(tol.allowed("test_rmse", 4.0) == doctest::Approx(0.25));
  CHECK(tol.allowed("test_acc", 0.97) == doctest::Approx(0.05));
  CHECK(tol.allowed("steps", 20000) == 0.0);
  CHECK(tol.describe().find("0.05 + 5% of |stored|") != std::string::npos);

  Provenance a{"AMD EPYC, AVX2", "Zen", "abc", ""}, b = a;
  CHECK(compare_mode(a, b) == CompareMode::bit_identical);
  b.blas_core = "Haswell";
  CHECK(compare_mode(a, b) == CompareMode::tolerance);
  b = a;
  b.cpu = "Intel Xeon, AVX-512";
  CHECK(compare_mode(a, b) == CompareMode::tolerance);
  b = a;
  b.git_sha = "def";  // other code on the same machine: still bit-identical expected
  CHECK(compare_mode(a, b) == CompareMode::bit_identical);
  b = a;
  b.blas_threads = 2;  // OpenBLAS may split a call otherwise: round-off
  CHECK(compare_mode(a, b) == CompareMode::tolerance);
  CHECK(compare_mode(Provenance{}, Provenance{}) == CompareMode::tolerance);  // unknown machine
}

TEST_CASE("verify: read_provenance takes the BLAS threads from a manifest, one when absent") {
  const fs::path dir = dkp::test::temp_dir("verify-provenance");
  dkp::util::write_file_atomic(dir / "new.json",
                               R"({"cpu": "c", "blas_core": "Zen", "blas_threads": 2})");
  dkp::util::write_file_atomic(dir / "old.json", R"({"cpu": "c", "blas_core": "Zen"})");
  const Provenance n = read_provenance(dir / "new.json"), o = read_provenance(dir / "old.json");
  CHECK(n.blas_core == "Zen");
  CHECK(n.blas_threads == 2);
  CHECK(o.blas_threads == 1);
  CHECK(compare_mode(o, n) == CompareMode::tolerance);
  CHECK(compare_mode(o, read_provenance(dir / "old.json")) == CompareMode::bit_identical);
}

TEST_CASE("verify: comparing a stored result's values with a rerun's") {
  using M = std::map<std::string, double>;
  const M stored = {{"elbo", -1.2586458964895573},
                    {"elbo_se", 0.0},
                    {"test_ll", -0.79064561967031544},
                    {"test_rmse", 0.51291988915025621},
                    {"test_coverage_95", 0.98701298701298701},
                    {"steps", 4000},
                    {"train_s", 25.79},
                    {"step_s", 0.0064},
                    {"resumed_from_step", 0}};
  const auto bit = CompareMode::bit_identical, tol = CompareMode::tolerance;

  SUBCASE("identical values match in both modes, timings aside") {
    M rerun = stored;
    rerun["train_s"] = 31.2;
    rerun["step_s"] = 0.0078;
    rerun["epoch_s"] = 0.1;  // only in the rerun, but a time
    rerun["resumed_from_step"] = 3000;
    for (const auto mode : {bit, tol}) {
      const Comparison c = compare_values(stored, rerun, mode);
      CHECK(c.ok());
      CHECK(c.identical);
      CHECK(c.compared == 6);
    }
  }
  SUBCASE("one ulp: a mismatch when bit-identity is expected, within the tolerance otherwise") {
    M rerun = stored;
    rerun["test_ll"] = std::nextafter(stored.at("test_ll"), 0.0);
    const Comparison b = compare_values(stored, rerun, bit);
    CHECK(!b.ok());
    REQUIRE(b.diffs.size() == 1);
    CHECK(b.diffs[0].key == "test_ll");
    CHECK(*b.diffs[0].stored == stored.at("test_ll"));
    CHECK(*b.diffs[0].rerun == rerun.at("test_ll"));
    const Comparison t = compare_values(stored, rerun, tol);
    CHECK(t.ok());
    CHECK(!t.identical);
    CHECK(t.largest_key == "test_ll");
    // Negative zero is another double.
    M z = stored;
    z["elbo_se"] = -0.0;
    CHECK(!compare_values(stored, z, bit).ok());
    CHECK(compare_values(stored, z, tol).ok());
  }
  SUBCASE("a large difference fails in both modes") {
    M rerun = stored;
    rerun["test_ll"] = -1.1;  // 0.31 nats: more than 0.05 + 5% of 0.79
    for (const auto mode : {bit, tol}) {
      const Comparison c = compare_values(stored, rerun, mode);
      CHECK(!c.ok());
      REQUIRE(c.diffs.size() == 1);
      CHECK(c.diffs[0].key == "test_ll");
    }
    CHECK(compare_values(stored, rerun, tol).diffs[0].allowed ==
          doctest::Approx(0.05 + 0.05 * 0.79064561967031544));
    // Just inside and just outside the tolerance of a metric, a fraction and a count.
    M r = stored;
    r["test_rmse"] = 0.51291988915025621 + 0.07;  // allowed 0.05 + 0.0256
    CHECK(compare_values(stored, r, tol).ok());
    r["test_rmse"] = 0.51291988915025621 + 0.08;
    CHECK(!compare_values(stored, r, tol).ok());
    r = stored;
    r["test_coverage_95"] = 0.94;
    CHECK(compare_values(stored, r, tol).ok());
    r["test_coverage_95"] = 0.92;
    CHECK(!compare_values(stored, r, tol).ok());
    r = stored;
    r["steps"] = 4001;  // configuration values are never approximately equal
    CHECK(!compare_values(stored, r, tol).ok());
  }
  SUBCASE(
      "a stored key the rerun lacks is a mismatch, a key only the rerun records is not; "
      "NaN matches NaN") {
    M rerun = stored;
    rerun["inducing_effective"] = 100;  // a newer binary records more
    CHECK(compare_values(stored, rerun, bit).ok());
    rerun.erase("test_rmse");
    const Comparison c = compare_values(stored, rerun, tol);
    REQUIRE(c.diffs.size() == 1);
    CHECK(c.diffs[0].key == "test_rmse");
    CHECK(!c.diffs[0].rerun);
    M n = stored;
    n["elbo"] = std::numeric_limits<double>::quiet_NaN();
    CHECK(compare_values(n, n, bit).ok());
    CHECK(!compare_values(stored, n, tol).ok());
  }
}

TEST_CASE("verify: verdict lines and the summary") {
  const Grid g = parse_grid(grid_text("lines", "boston", "[0]"), "lines.yaml");
  CellVerdict v;
  v.cell = g.cells[0];
  const std::string id = v.cell.hash() + " " + v.cell.label();
  v.stored = v.rerun = Provenance{"Fake CPU", "Haswell", "abc", "d1"};
  const std::map<std::string, double> stored = {{"test_ll", -0.5}, {"elbo", 1.0}};
  std::map<std::string, double> rerun = stored;

  v.comparison = compare_values(stored, rerun, CompareMode::bit_identical);
  v.state = CellVerdict::State::ok;
  CHECK(verdict_line(v) == "OK  bit-identical  " + id + "  (2 values)");

  rerun["test_ll"] = -0.5000001;
  v.comparison = compare_values(stored, rerun, CompareMode::bit_identical);
  v.state = CellVerdict::State::mismatch;
  const std::string m = verdict_line(v);
  CHECK(m.rfind("MISMATCH " + id + ": test_ll -0.5000001 (stored -0.5) [bit-identical expected",
                0) == 0);
  v.rerun.git_sha = "def";
  CHECK(verdict_line(v).find("(stored by dkp abc, rerun by def)") != std::string::npos);

  v.rerun.cpu = "Other CPU";
  v.comparison = compare_values(stored, rerun, CompareMode::tolerance);
  v.state = CellVerdict::State::ok;
  const std::string t = verdict_line(v);
  CHECK(t.rfind("OK  within tolerance  " + id, 0) == 0);
  CHECK(t.find("[tolerance: |rerun - stored| <= 0.05 + 5% of |stored|") != std::string::npos);
  CHECK(t.find("stored on Fake CPU, Haswell kernels, rerun on Other CPU, Haswell kernels") !=
        std::string::npos);
  CHECK(t.find("OPENBLAS_CORETYPE") == std::string::npos);  // the same kernels: nothing to set
  v.rerun.blas_core = "Prescott";
  CHECK(verdict_line(v).find("rerun on Other CPU, Prescott kernels; OPENBLAS_CORETYPE=Haswell "
                             "reruns with the stored run's kernels]") != std::string::npos);
  v.rerun.blas_core = "Haswell";

  rerun["test_ll"] = -0.9;
  v.comparison = compare_values(stored, rerun, CompareMode::tolerance);
  v.state = CellVerdict::State::mismatch;
  CHECK(verdict_line(v).rfind("MISMATCH " + id + ": test_ll -0.9 (stored -0.5, |difference| ", 0) ==
        0);

  v.state = CellVerdict::State::failed;
  v.failure = "exit code 1: no data";
  CHECK(verdict_line(v) == "FAILED " + id + ": rerun failed: exit code 1: no data");

  VerifyReport r;
  r.verdicts.push_back(v);
  v.state = CellVerdict::State::ok;
  v.comparison = compare_values(stored, stored, CompareMode::bit_identical);
  r.verdicts.push_back(v);
  CHECK(!r.ok());
  CHECK(r.summary_line(g) ==
        "verified 2 cells of grid lines (profile full): 1 OK (1 bit-identical, 0 within "
        "tolerance), 0 mismatched, 1 failed");
  r.verdicts.erase(r.verdicts.begin());
  CHECK(r.ok());
}

TEST_CASE("verify: selecting the cells, and the errors") {
  const fs::path root = dkp::test::temp_dir("verify-select") / "runs";
  const Grid g = parse_grid(grid_text("sel", "boston", "[0, 1, 2]"), "sel.yaml");
  REQUIRE(g.cells.size() == 6);
  VerifySelection sel;
  try {
    select_cells_to_verify(g, root, sel);
    FAIL("no error without done cells");
  } catch (const dkp::ConfigError&) {
    FAIL("a ConfigError (usage) for a store without results");
  } catch (const dkp::Error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("no done cell") != std::string::npos);
    CHECK(msg.find("grid sel") != std::string::npos);
    CHECK(msg.find("profile full") != std::string::npos);
    CHECK(msg.find(root.string()) != std::string::npos);
  }
  write_stored(g.cells[1], root);
  write_stored(g.cells[4], root);
  write_stored(g.cells[5], root);
  dkp::util::write_file_atomic(g.cells[2].run_dir(root) / "error.json", "{\"reason\": \"boom\"}");

  sel.cells = 2;
  auto chosen = select_cells_to_verify(g, root, sel);
  CHECK(chosen.done == 3);
  CHECK(chosen.cells.size() == 2);
  // What each stored run took: train_s + predict_s, as these results have no step_s.
  CHECK(chosen.stored_s == std::vector<double>{99.75, 99.75});
  CHECK(chosen.note.empty());
  for (const auto& c : chosen.cells) CHECK(cell_status(c, root).state == CellState::done);
  // More cells than are done: all of them, and a note that says so.
  sel.cells = 5;
  chosen = select_cells_to_verify(g, root, sel);
  CHECK(hashes(chosen.cells) ==
        std::vector<std::string>{g.cells[1].hash(), g.cells[4].hash(), g.cells[5].hash()});
  CHECK(chosen.note.find("only 3 of the 6 cells") != std::string::npos);
  CHECK(chosen.note.find("verifying all 3") != std::string::npos);
  // One cell by its hash (or a unique prefix).
  sel.cell = g.cells[4].hash();
  CHECK(hashes(select_cells_to_verify(g, root, sel).cells) ==
        std::vector<std::string>{g.cells[4].hash()});
  sel.cell = g.cells[4].hash().substr(0, 10);
  CHECK(hashes(select_cells_to_verify(g, root, sel).cells) ==
        std::vector<std::string>{g.cells[4].hash()});
  sel.cell = "ffffffffffffffff";
  CHECK_THROWS_AS(select_cells_to_verify(g, root, sel), dkp::ConfigError);
  sel.cell = "ff";
  CHECK_THROWS_AS(select_cells_to_verify(g, root, sel), dkp::ConfigError);
  sel.cell = g.cells[2].hash();  // failed, not done
  try {
    select_cells_to_verify(g, root, sel);
    FAIL("no error for a cell that is not done");
  } catch (const dkp::ConfigError&) {
    FAIL("a ConfigError (usage) for a cell that is not done");
  } catch (const dkp::Error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("not done (failed: boom)") != std::string::npos);
    CHECK(msg.find(g.cells[2].hash()) != std::string::npos);
  }
}

TEST_CASE("run_seconds: a whole run's time, also for a run resumed from a checkpoint") {
  // Resumed at step 800 of 1000: train_s covers the last 200 steps, at step_s each.
  CHECK(run_seconds({{"steps", 1000},
                     {"step_s", 0.5},
                     {"train_s", 100},
                     {"predict_s", 2},
                     {"resumed_from_step", 800}}) == 502.0);
  CHECK(run_seconds({{"steps", 1000}, {"step_s", 0.5}, {"train_s", 500}}) == 500.0);
  // Without step_s (or steps): train_s + predict_s; a missing or non-finite time counts 0.
  CHECK(run_seconds({{"steps", 1000}, {"train_s", 100}, {"predict_s", 2}}) == 102.0);
  CHECK(run_seconds({{"step_s", 0.5}, {"train_s", 100}}) == 100.0);
  CHECK(run_seconds({{"predict_s", std::nan("")}, {"train_s", 7}}) == 7.0);
  CHECK(run_seconds({}) == 0.0);
}

TEST_CASE("verify: reruns into a scratch directory, compares, and leaves the store untouched") {
  const fs::path base = dkp::test::temp_dir("verify-run");
  const fs::path root = base / "runs", scratch = base / "scratch";
  fs::create_directories(scratch);
  const fs::path exe = fake_dkp(base);
  const Grid g = parse_grid(grid_text("vr", "boston, yacht", "[0]"), "vr.yaml");
  REQUIRE(g.cells.size() == 4);
  // boston nngp: as the fake computes it; boston diwp: another test_ll; yacht nngp: the rerun
  // fails; yacht diwp: not done.
  const RunSpec &same = g.cells[0], &other = g.cells[1], &broken = g.cells[2];
  REQUIRE(same.dataset == "boston");
  REQUIRE(other.dataset == "boston");
  REQUIRE(broken.dataset == "yacht");
  write_stored(same, root);
  write_stored(other, root, -1.4);
  write_stored(broken, root);
  dkp::util::write_file_atomic(g.cells[3].run_dir(root) / "checkpoint.bin", "step 3\n");
  const auto before = tree(root);

  std::ostringstream log;
  VerifyOptions opt;
  opt.exe = exe.string();
  opt.log = &log;
  opt.poll_seconds = 0.01;
  opt.scratch_parent = scratch;
  std::vector<std::string> streamed;
  opt.on_verdict = [&](const CellVerdict& v) { streamed.push_back(verdict_line(v)); };

  SUBCASE("a matching cell") {
    const auto r = verify_cells({same}, root, opt);
    INFO(log.str());
    REQUIRE(r.verdicts.size() == 1);
    CHECK(r.verdicts[0].state == CellVerdict::State::ok);
    CHECK(r.verdicts[0].comparison.mode == CompareMode::bit_identical);
    CHECK(r.verdicts[0].comparison.identical);
    CHECK(r.verdicts[0].comparison.compared == 3);  // steps, elbo, test_ll (not the timings)
    CHECK(r.ok());
    REQUIRE(streamed.size() == 1);
    CHECK(streamed[0] == "OK  bit-identical  " + same.hash() + " " + same.label() + "  (3 values)");
  }
  SUBCASE("a mismatch, a failed rerun, two at a time") {
    opt.jobs = 2;
    const auto r = verify_cells({same, other, broken}, root, opt);
    INFO(log.str());
    REQUIRE(r.verdicts.size() == 3);
    CHECK(r.verdicts[0].state == CellVerdict::State::ok);
    CHECK(r.verdicts[1].state == CellVerdict::State::mismatch);
    CHECK(r.verdicts[2].state == CellVerdict::State::failed);
    CHECK(r.verdicts[2].failure.find("exit code 1: dkp run: the data are broken") !=
          std::string::npos);
    CHECK(!r.ok());
    CHECK(r.count(CellVerdict::State::mismatch) == 1);
    REQUIRE(streamed.size() == 3);
    CHECK(streamed[1].rfind("MISMATCH " + other.hash() + " " + other.label() +
                                ": test_ll -1.5 (stored -1.4) [bit-identical expected",
                            0) == 0);
  }
  SUBCASE("a result stored under another grid of the results root is the one compared with") {
    const Grid g2 = parse_grid(grid_text("vr2", "boston, yacht", "[0]"), "vr2.yaml");
    REQUIRE(g2.cells[1].hash() == other.hash());
    REQUIRE(cell_status(g2.cells[1], root).state == CellState::done);
    const auto r = verify_cells({g2.cells[0], g2.cells[1]}, root, opt);
    INFO(log.str());
    REQUIRE(r.verdicts.size() == 2);
    CHECK(r.verdicts[0].state == CellVerdict::State::ok);
    CHECK(r.verdicts[1].state == CellVerdict::State::mismatch);
    REQUIRE(streamed.size() == 2);
    CHECK(streamed[1].find("test_ll -1.5 (stored -1.4)") != std::string::npos);
  }
  // The store is exactly as it was (no file written, touched or removed, no error.json, no
  // snapshot), and the scratch directory is gone.
  CHECK(tree(root) == before);
  CHECK(fs::is_empty(scratch));
}
