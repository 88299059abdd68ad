#include "experiments/verify.hpp"

#include <stdlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ostream>
#include <random>

#include <fmt/format.h>

#include "experiments/runner.hpp"
#include "experiments/store.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace dkp::experiments {

namespace fs = std::filesystem;

std::vector<RunSpec> done_cells(const Grid& grid, const fs::path& results_root) {
  std::vector<RunSpec> out;
  for (const auto& c : grid.cells) {
    if (cell_status(c, results_root).state == CellState::done) out.push_back(c);
  }
  return out;
}

namespace {

// A uniform draw from {0, ..., n - 1} (n > 0) by rejection: no modulo bias, and unlike
// std::uniform_int_distribution the same numbers with every standard library.
uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  const uint64_t threshold = (0 - n) % n;  // 2^64 mod n: the draws below it are rejected
  for (;;) {
    const uint64_t x = rng();
    if (x >= threshold) return x % n;
  }
}

}  // namespace

std::vector<RunSpec> choose_cells(const std::vector<RunSpec>& cells, size_t k, uint64_t seed) {
  if (k >= cells.size()) return cells;
  std::vector<size_t> idx(cells.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < k; ++i) {
    const size_t j = i + static_cast<size_t>(uniform_below(rng, idx.size() - i));
    std::swap(idx[i], idx[j]);
  }
  idx.resize(k);
  std::sort(idx.begin(), idx.end());
  std::vector<RunSpec> out;
  for (const size_t i : idx) out.push_back(cells[i]);
  return out;
}

namespace {

// What a stored run took (0 for a cell whose result.json lacks the times).
double stored_seconds(const fs::path& result_json) {
  return run_seconds(read_result_values(result_json));
}

}  // namespace

ChosenCells select_cells_to_verify(const Grid& grid, const fs::path& results_root,
                                   const VerifySelection& sel) {
  const std::string where = fmt::format("grid {} (profile {}, results root {})", grid.name,
                                        grid.profile, results_root.string());
  ChosenCells out;
  const auto done = done_cells(grid, results_root);
  out.done = done.size();
  if (!sel.cell.empty()) {
    const RunSpec& c = find_cell(grid, sel.cell);
    const CellStatus st = cell_status(c, results_root);
    if (st.state != CellState::done) {
      throw Error(fmt::format("cell {} ({}) of {} is not done ({}{}): nothing to verify", c.hash(),
                              c.label(), where, to_string(st.state),
                              st.detail.empty() ? "" : ": " + st.detail));
    }
    out.cells = {c};
    out.stored_s = {stored_seconds(st.result)};
    return out;
  }
  if (done.empty()) {
    throw Error(fmt::format("no done cell in {}: nothing to verify ({} cells, none with a result)",
                            where, grid.cells.size()));
  }
  if (sel.cells == 0) throw ConfigError("--cells must be at least 1");
  if (sel.cells > done.size()) {
    out.note = fmt::format("--cells {}: only {} of the {} cells of {} are done: verifying all {}",
                           sel.cells, done.size(), grid.cells.size(), where, done.size());
  }
  out.cells = choose_cells(done, sel.cells, sel.seed);
  for (const RunSpec& c : out.cells) {
    out.stored_s.push_back(stored_seconds(cell_status(c, results_root).result));
  }
  return out;
}

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool same_bits(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b) ||
         (std::isnan(a) && std::isnan(b));
}

std::string num(double v) {
  return fmt::format("{}", v);  // the shortest text that reads back as the same double
}

}  // namespace

KeyKind key_kind(const std::string& key) {
  // Timing and provenance: differ from run to run by design (the BLAS threads count in the
  // comparison's mode instead: compare_mode).
  static const char* const ignored[] = {"train_s",           "step_s",      "epoch_s",
                                        "predict_s",         "finished",    "git_sha",
                                        "resumed_from_step", "config_hash", "blas_threads"};
  for (const char* k : ignored)
    if (key == k) return KeyKind::ignored;
  if (ends_with(key, "_s")) return KeyKind::ignored;
  // The configuration and the data's size: the same cell has the same ones on every machine.
  static const char* const exact[] = {"split", "depth",        "width",   "inducing",
                                      "steps", "seed",         "n_train", "n_test",
                                      "batch", "elbo_repeats", "classes"};
  for (const char* k : exact)
    if (key == k) return KeyKind::exact;
  if (key == "test_acc" || key == "test_error" || key == "test_calibration_error" ||
      key.rfind("test_coverage_", 0) == 0) {
    return KeyKind::fraction;
  }
  return KeyKind::metric;
}

// The tolerance across machines. On another CPU, or with other OpenBLAS kernels (Haswell,
// SkylakeX, Cooperlake, ...), dgemm and the factorisations block and sum in another order: the
// values differ at round-off (1e-16) from the first training step on, and 4,000-20,000 Adam steps
// on noisy minibatch ELBOs amplify that (the optimisation is chaotic), so the rerun ends at a
// different point of the optimiser's end-point distribution, not at the stored point plus 1e-16.
// A tolerance like 1e-6 * max(1, |a|) would flag every such cell. Such end points differ in a
// metric by about its spread under a change of the optimiser's seed: a few hundredths of a nat
// in the per-point ELBO and test log-likelihood on the UCI sets (the papers' standard errors over
// 20 splits are 0.01-0.1). Hence abs 0.05; the 5% relative term covers the metrics whose scale is
// not 1 (test_rmse in original units: protein about 4, year about 9; elbo_se; large |elbo|).
// What it still catches: another dataset, split or normalisation, another model, seed or
// protocol, a truncated training, results from other code -- each moves test_ll by tenths of a
// nat or more. Fractions (accuracy, coverages, calibration error) get abs 0.05 alone: 2.5 test
// points of boston's 51, 1.5 of yacht's 31, 5 points of accuracy. On yacht that is tighter than
// a rerun on other kernels moves a coverage (3 of 31 points seen: headline cell 50648f14, which
// the stored run's kernels, OPENBLAS_CORETYPE, rerun bit for bit). Configuration values (steps,
// depth, n_train, ...) must be equal.
std::string Tolerance::describe() const {
  return fmt::format(
      "|rerun - stored| <= {} + {}% of |stored| (fractions: <= {}; configuration values: exact)",
      abs, rel * 100.0, fraction_abs);
}

double Tolerance::allowed(const std::string& key, double stored) const {
  switch (key_kind(key)) {
    case KeyKind::exact:
    case KeyKind::ignored:
      return 0.0;
    case KeyKind::fraction:
      return fraction_abs;
    case KeyKind::metric:
      break;
  }
  return abs + rel * std::fabs(stored);
}

Comparison compare_values(const std::map<std::string, double>& stored,
                          const std::map<std::string, double>& rerun, CompareMode mode,
                          const Tolerance& tol) {
  Comparison c;
  c.mode = mode;
  double worst = -1;
  // The stored result's keys: a newer binary may record more (e.g. inducing_effective, which the
  // store's older cells lack); those are not the stored result's claims, so not compared. A key
  // the stored result has and the rerun lacks is a mismatch.
  std::vector<std::string> keys;
  for (const auto& [k, v] : stored) keys.push_back(k);
  for (const auto& key : keys) {
    if (key_kind(key) == KeyKind::ignored) continue;
    const auto s = stored.find(key), r = rerun.find(key);
    if (s == stored.end() || r == rerun.end()) {
      ValueDiff d;
      d.key = key;
      if (s != stored.end()) d.stored = s->second;
      if (r != rerun.end()) d.rerun = r->second;
      c.diffs.push_back(d);
      c.identical = false;
      continue;
    }
    ++c.compared;
    const double a = s->second, b = r->second;
    if (same_bits(a, b)) continue;
    c.identical = false;
    double allowed = 0.0;
    bool match = false;
    if (mode == CompareMode::tolerance) {
      allowed = tol.allowed(key, a);
      const double diff = std::fabs(a - b);
      match = std::isfinite(diff) ? diff <= allowed : a == b;
      if (match && allowed > 0 && diff / allowed > worst) {
        worst = diff / allowed;
        c.largest_key = key;
        c.largest_difference = diff;
      }
    }
    if (!match) c.diffs.push_back({key, a, b, allowed});
  }
  return c;
}

Provenance read_provenance(const fs::path& manifest_json) {
  Provenance p;
  util::JsonValue n;
  try {
    n = util::read_json_object(manifest_json);
  } catch (const Error&) {
    return p;
  }
  auto get = [&](const char* key) {
    const auto it = n.find(key);
    return it != n.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  p.cpu = get("cpu");
  p.blas_core = get("blas_core");
  p.git_sha = get("git_sha");
  p.data_sha256 = get("data_sha256");
  if (const auto it = n.find("blas_threads"); it != n.end() && it->is_number()) {
    p.blas_threads = it->get<int>();
  }
  return p;
}

CompareMode compare_mode(const Provenance& stored, const Provenance& rerun) {
  const bool known = !stored.cpu.empty() && !stored.blas_core.empty();
  return known && stored.cpu == rerun.cpu && stored.blas_core == rerun.blas_core &&
                 stored.blas_threads == rerun.blas_threads
             ? CompareMode::bit_identical
             : CompareMode::tolerance;
}

namespace {

std::string machine(const Provenance& p) {
  return fmt::format("{}, {} kernels{}", p.cpu.empty() ? "unknown CPU" : p.cpu,
                     p.blas_core.empty() ? "unknown BLAS" : p.blas_core,
                     p.blas_threads == 1 ? "" : fmt::format(", {} BLAS threads", p.blas_threads));
}

// The bracketed policy of a line: why bit-identity is expected, or the tolerance and the machines.
std::string policy(const CellVerdict& v, const Tolerance& tol) {
  if (v.comparison.mode == CompareMode::bit_identical) {
    return fmt::format(
        "[bit-identical expected: same CPU, BLAS kernels and BLAS threads as the stored run: {}]",
        machine(v.rerun));
  }
  // Kernels weigh more than the CPU (docs/performance.md): name the setting that reruns with the
  // stored run's kernels, which on another CPU gave a bit-identical rerun.
  const bool other_kernels = !v.stored.blas_core.empty() && !v.rerun.blas_core.empty() &&
                             v.stored.blas_core != v.rerun.blas_core;
  return fmt::format("[tolerance: {}; stored on {}, rerun on {}{}]", tol.describe(),
                     machine(v.stored), machine(v.rerun),
                     other_kernels ? fmt::format("; OPENBLAS_CORETYPE={} reruns with the stored "
                                                 "run's kernels",
                                                 v.stored.blas_core)
                                   : "");
}

// Hints for a mismatch: other code, other data.
std::string hints(const CellVerdict& v) {
  std::string s;
  if (!v.stored.git_sha.empty() && !v.rerun.git_sha.empty() &&
      v.stored.git_sha != v.rerun.git_sha) {
    s += fmt::format(" (stored by dkp {}, rerun by {})", v.stored.git_sha, v.rerun.git_sha);
  }
  if (!v.stored.data_sha256.empty() && !v.rerun.data_sha256.empty() &&
      v.stored.data_sha256 != v.rerun.data_sha256) {
    s += " (the data differ: manifest.json data_sha256)";
  }
  return s;
}

}  // namespace

std::string verdict_line(const CellVerdict& v, const Tolerance& tol) {
  const std::string id = fmt::format("{} {}", v.cell.hash(), v.cell.label());
  const Comparison& c = v.comparison;
  switch (v.state) {
    case CellVerdict::State::failed:
      return fmt::format("FAILED {}: rerun failed: {}", id, v.failure);
    case CellVerdict::State::ok:
      if (c.identical) {
        return fmt::format("OK  bit-identical  {}  ({} values{})", id, c.compared,
                           c.mode == CompareMode::tolerance ? "; stored on " + machine(v.stored) +
                                                                  ", rerun on " + machine(v.rerun)
                                                            : "");
      }
      return fmt::format("OK  within tolerance  {}  ({} values; largest difference {} {:.3g}) {}",
                         id, c.compared, c.largest_key, c.largest_difference, policy(v, tol));
    case CellVerdict::State::mismatch:
      break;
  }
  std::string diffs;
  for (const auto& d : c.diffs) {
    if (!diffs.empty()) diffs += ", ";
    if (!d.rerun) {
      diffs += fmt::format("{} missing in the rerun (stored {})", d.key, num(*d.stored));
    } else if (!d.stored) {
      diffs += fmt::format("{} {} (not in the stored result)", d.key, num(*d.rerun));
    } else if (c.mode == CompareMode::tolerance) {
      diffs += fmt::format("{} {} (stored {}, |difference| {:.3g} > {:.3g})", d.key, num(*d.rerun),
                           num(*d.stored), std::fabs(*d.rerun - *d.stored), d.allowed);
    } else {
      diffs += fmt::format("{} {} (stored {})", d.key, num(*d.rerun), num(*d.stored));
    }
  }
  return fmt::format("MISMATCH {}: {} {}{}", id, diffs, policy(v, tol), hints(v));
}

size_t VerifyReport::count(CellVerdict::State s) const {
  return static_cast<size_t>(std::count_if(verdicts.begin(), verdicts.end(),
                                           [&](const CellVerdict& v) { return v.state == s; }));
}

bool VerifyReport::ok() const {
  return not_run == 0 && count(CellVerdict::State::ok) == verdicts.size();
}

std::string VerifyReport::summary_line(const Grid& grid) const {
  size_t identical = 0;
  for (const auto& v : verdicts) {
    identical += v.state == CellVerdict::State::ok && v.comparison.identical;
  }
  const size_t ok = count(CellVerdict::State::ok);
  std::string s = fmt::format(
      "verified {} cell{} of grid {} (profile {}): {} OK ({} bit-identical, {} within tolerance), "
      "{} mismatched, {} failed",
      verdicts.size(), verdicts.size() == 1 ? "" : "s", grid.name, grid.profile, ok, identical,
      ok - identical, count(CellVerdict::State::mismatch), count(CellVerdict::State::failed));
  if (not_run) s += fmt::format(", {} not run (interrupted)", not_run);
  return s;
}

namespace {

// A fresh directory, removed with everything in it when this goes out of scope.
class ScratchDir {
 public:
  explicit ScratchDir(const fs::path& parent) {
    const fs::path base = parent.empty() ? fs::temp_directory_path() : parent;
    std::string tmpl = (base / "dkp-verify-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) {
      throw Error(fmt::format("cannot create a scratch directory under '{}': {}", base.string(),
                              std::strerror(errno)));
    }
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

CellVerdict judge(const RunSpec& cell, const fs::path& results_root, const fs::path& scratch,
                  const Tolerance& tol) {
  CellVerdict v;
  v.cell = cell;
  // The stored result may be under another grid of the results root (cell_status finds it).
  const CellStatus st = cell_status(cell, results_root);
  const fs::path stored = st.result.empty() ? cell.run_dir(results_root) : st.result.parent_path();
  const fs::path rerun = cell.run_dir(scratch);
  if (st.state != CellState::done) {
    v.failure = fmt::format("the stored result is gone ({})", to_string(st.state));
    return v;
  }
  v.stored_dir = stored;
  if (cell_status(cell, scratch).state != CellState::done) {
    const std::string reason = read_error_reason(rerun / "error.json");
    v.failure = reason.empty() ? "no result.json" : reason;
    return v;
  }
  try {
    v.stored = read_provenance(stored / "manifest.json");
    v.rerun = read_provenance(rerun / "manifest.json");
    v.comparison = compare_values(read_result_values(stored / "result.json"),
                                  read_result_values(rerun / "result.json"),
                                  compare_mode(v.stored, v.rerun), tol);
  } catch (const Error& e) {
    v.failure = e.what();
    return v;
  }
  v.state = v.comparison.ok() ? CellVerdict::State::ok : CellVerdict::State::mismatch;
  return v;
}

}  // namespace

VerifyReport verify_cells(const std::vector<RunSpec>& cells, const fs::path& results_root,
                          const VerifyOptions& opt) {
  if (opt.jobs < 1) throw ConfigError(fmt::format("-j must be at least 1, not {}", opt.jobs));
  VerifyReport report;
  const ScratchDir scratch(opt.scratch_parent);
  std::ostream discard(nullptr);
  RunnerOptions ro;
  ro.jobs = opt.jobs;
  ro.exe = opt.exe;
  ro.extra_args = opt.extra_args;
  ro.stop = opt.stop;
  ro.log = opt.log ? opt.log : &discard;
  ro.poll_seconds = opt.poll_seconds;
  auto stopping = [&]() { return opt.stop && opt.stop->load(); };
  // `jobs` cells at a time, so that each verdict comes as soon as its group has run. The scratch
  // root is empty, so run_cells reuses nothing: every cell is computed afresh.
  const size_t group = static_cast<size_t>(opt.jobs);
  for (size_t i = 0; i < cells.size(); i += group) {
    if (stopping()) {
      report.not_run += cells.size() - i;
      break;
    }
    const std::vector<RunSpec> chunk(
        cells.begin() + static_cast<long>(i),
        cells.begin() + static_cast<long>(std::min(i + group, cells.size())));
    const RunnerSummary sum = run_cells(chunk, scratch.path(), ro);
    for (const auto& c : chunk) {
      // A cell stopped by a stop request has neither a result nor an error.json: not run.
      const auto st = cell_status(c, scratch.path()).state;
      if (stopping() && st != CellState::done && st != CellState::failed) {
        ++report.not_run;
        continue;
      }
      report.verdicts.push_back(judge(c, results_root, scratch.path(), opt.tolerance));
      if (opt.on_verdict) opt.on_verdict(report.verdicts.back());
    }
    if (sum.interrupted || sum.not_started) {
      report.not_run += cells.size() - std::min(i + group, cells.size());
      break;
    }
  }
  return report;
}

}  // namespace dkp::experiments
