// Verification of stored results (`dkp grid verify`): some done cells of a grid, chosen at random
// with a seeded generator (or one cell by its configuration hash), are run again exactly as the
// batch runner runs them (run_cells, the same `dkp run ...` command line) into a fresh scratch
// results root, and the rerun's result.json is compared with the stored one. The store is only
// read, never written here (`dkp grid verify --record` then writes each verdict into its cell's
// directory as verified.json: experiments/provenance.hpp).
//
// Comparison: every numeric top-level key of result.json except timing and provenance (train_s,
// step_s, epoch_s, predict_s, any other *_s, finished, git_sha, resumed_from_step). When the
// stored run and the rerun ran on the same CPU with the same OpenBLAS kernels (manifest.json's
// "cpu" and "blas_core"), the values must be bit-identical: a run is deterministic for its seed
// and thread count. Otherwise round-off differs from the first BLAS call on and thousands of Adam
// steps amplify it, so a stated tolerance applies (Tolerance below).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "experiments/grid.hpp"

namespace dkp::experiments {

/// The cells of `grid` that are done under `results_root` (cell_status: also those whose result
/// is stored under another grid of the root), in grid order. Only reads the store.
std::vector<RunSpec> done_cells(const Grid& grid, const std::filesystem::path& results_root);

/// `k` of `cells` chosen at random by a std::mt19937_64 seeded with `seed` (a partial
/// Fisher-Yates shuffle with unbiased bounded draws of our own, so the choice is the same with
/// every standard library), returned in their order in `cells`. All of them when k >= size.
std::vector<RunSpec> choose_cells(const std::vector<RunSpec>& cells, size_t k, uint64_t seed);

/// What to verify: `cell` (a configuration hash, or a prefix of at least 4 characters that names
/// one cell) or else `cells` cells chosen with `seed`.
struct VerifySelection {
  size_t cells = 1;
  std::string cell;
  uint64_t seed = 0;
};

struct ChosenCells {
  std::vector<RunSpec> cells;
  /// Per cell of `cells`: the seconds its stored run took (run_seconds of its result.json), what
  /// a rerun on a like machine costs.
  std::vector<double> stored_s;
  size_t done = 0;   ///< done cells in the grid
  std::string note;  ///< e.g. "only 3 cells ... are done: verifying all 3" ("" when none)
};

/// Chooses the cells to verify. Throws dkp::Error when the grid has no done cell or the cell asked
/// for is not done (naming the grid, profile and results root), ConfigError when no cell of the
/// grid has the hash asked for (or a prefix is ambiguous or shorter than 4 characters).
ChosenCells select_cells_to_verify(const Grid& grid, const std::filesystem::path& results_root,
                                   const VerifySelection& selection);

/// How a key of result.json is compared.
enum class KeyKind {
  ignored,   ///< timing and provenance: never compared
  exact,     ///< configuration and sizes (split, depth, steps, n_train, ...): always exact
  fraction,  ///< fractions in [0, 1] (test_acc, test_error, test_coverage_*,
             ///< test_calibration_error): an absolute tolerance only
  metric,    ///< everything else (elbo, elbo_mean, elbo_se, test_ll, test_rmse, ...)
};
KeyKind key_kind(const std::string& key);

/// The tolerance across machines (see verify.cpp for the reasoning): a metric may differ by
/// abs + rel * |stored|, a fraction by fraction_abs, configuration values not at all.
struct Tolerance {
  double abs = 0.05;
  double rel = 0.05;
  double fraction_abs = 0.05;
  /// "abs 0.05 + 5% of |stored|; fractions ... abs 0.05; configuration values exact"
  std::string describe() const;
  /// How far a value of `key` stored as `stored` may move (0 for exact keys).
  double allowed(const std::string& key, double stored) const;
};

enum class CompareMode {
  bit_identical,  ///< same CPU and BLAS kernels: every value must be the same double
  tolerance,      ///< another machine (or unknown): Tolerance applies
};

/// One value that did not match; a side without the key is nullopt.
struct ValueDiff {
  std::string key;
  std::optional<double> stored;
  std::optional<double> rerun;
  double allowed = 0;  ///< the tolerance that was exceeded (0 in bit-identical mode)
};

struct Comparison {
  CompareMode mode = CompareMode::bit_identical;
  size_t compared = 0;            ///< keys compared (present on both sides, not ignored)
  bool identical = true;          ///< every compared value bit for bit the same
  std::vector<ValueDiff> diffs;   ///< mismatches, by key
  std::string largest_key;        ///< tolerance mode: the key with the largest |difference|
  double largest_difference = 0;  ///<   relative to its tolerance ... and that difference
  bool ok() const { return diffs.empty(); }
};

/// Compares the numeric values of a stored result.json with a rerun's (read_result_values).
/// Keys on one side only are mismatches; NaNs match NaNs.
Comparison compare_values(const std::map<std::string, double>& stored,
                          const std::map<std::string, double>& rerun, CompareMode mode,
                          const Tolerance& tolerance = {});

/// Where a run ran, from its manifest.json (fields "" when absent or unreadable).
struct Provenance {
  std::string cpu;
  std::string blas_core;
  std::string git_sha;
  std::string data_sha256;
  int blas_threads = 1;  ///< "blas_threads" (--blas-threads); runs that predate it had one
};
Provenance read_provenance(const std::filesystem::path& manifest_json);

/// bit_identical when both CPUs and both BLAS kernel sets are known and the same, and so are the
/// BLAS thread counts.
CompareMode compare_mode(const Provenance& stored, const Provenance& rerun);

/// The outcome for one cell.
struct CellVerdict {
  enum class State { ok, mismatch, failed };
  RunSpec cell;
  State state = State::failed;
  Comparison comparison;
  Provenance stored, rerun;
  std::string failure;  ///< why the rerun failed (state failed)
  /// The stored cell's run directory (under another grid when cell_status found it there); empty
  /// when the stored result is gone.
  std::filesystem::path stored_dir;
};

/// One line: "OK  bit-identical  <hash> <label>  (N values)",
/// "OK  within tolerance  <hash> <label>  (...) [tolerance: ...]",
/// "MISMATCH <hash> <label>: test_ll 0.1234 (stored 0.124), ... [...]" or
/// "FAILED <hash> <label>: rerun failed: <reason>".
std::string verdict_line(const CellVerdict& verdict, const Tolerance& tolerance = {});

struct VerifyReport {
  std::vector<CellVerdict> verdicts;
  size_t not_run = 0;  ///< cells left because of a stop request
  size_t count(CellVerdict::State s) const;
  bool ok() const;
  /// "verified N cells of grid G (profile P): K OK (B bit-identical, T within tolerance), M
  /// mismatched, F failed" (+ ", W not run (interrupted)").
  std::string summary_line(const Grid& grid) const;
};

struct VerifyOptions {
  int jobs = 1;
  std::string exe;                      ///< the dkp binary the reruns use
  std::vector<std::string> extra_args;  ///< forwarded to every run, as for `dkp grid run`
  const std::atomic<bool>* stop = nullptr;
  std::ostream* log = nullptr;  ///< the runner's progress lines (nullptr: discarded)
  double poll_seconds = 0.05;
  Tolerance tolerance;
  /// Where the scratch results root (a fresh dkp-verify-XXXXXX directory, removed at the end) is
  /// made; empty: std::filesystem::temp_directory_path().
  std::filesystem::path scratch_parent;
  /// Called with each verdict as soon as it is known (cells run `jobs` at a time).
  std::function<void(const CellVerdict&)> on_verdict;
};

/// Reruns `cells` (done cells under `results_root`) into a scratch results root with run_cells
/// and compares each with its stored result. Nothing under `results_root` is written.
VerifyReport verify_cells(const std::vector<RunSpec>& cells,
                          const std::filesystem::path& results_root, const VerifyOptions& options);

}  // namespace dkp::experiments
