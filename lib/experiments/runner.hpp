// Batch runner: runs the pending cells of a grid as subprocesses (`<exe> run ... --out DIR`),
// N at a time, one BLAS thread each (OPENBLAS_NUM_THREADS=1), with progress and ETA.
// A cell whose subprocess fails gets an error.json (exit code, signal, stderr tail, command) in
// its run directory and the grid goes on. Cells already done are reused, never rerun. Children
// run in their own process group and get SIGTERM if the runner dies (even by SIGKILL), so an
// interrupted grid leaves checkpoints to resume, not orphans racing the next `dkp grid run`.
// Cells another process is computing (their run directory's lock is held, or the child `dkp run`
// exits with kExitBusy) are skipped and counted as running elsewhere, so that two runners on one
// store split the cells. Damaged cells and stale ones (results from other data) are reported,
// never recomputed silently: `force` recomputes them (and every other cell).
#pragma once

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "experiments/grid.hpp"
#include "experiments/store.hpp"

namespace dkp::experiments {

/// The exit code of `dkp run` when another process holds its --out directory's lock (the CLI's
/// kExitBusy, EX_TEMPFAIL): the cell is running elsewhere, not failed.
inline constexpr int kRunExitBusy = 75;

struct RunnerOptions {
  int jobs = 1;
  std::string exe;                          ///< program run for each cell (normally /proc/self/exe)
  std::vector<std::string> extra_args;      ///< forwarded to every run, e.g. {"--data", ROOT}
  const std::atomic<bool>* stop = nullptr;  ///< when it becomes true: terminate children, return
  std::ostream* log = nullptr;              ///< progress lines (nullptr: std::cout)
  double poll_seconds = 0.05;
  /// Recompute every cell: its run directory is cleared first (clear_run_dir; a cell whose lock
  /// another process holds is left and counted as running elsewhere) and `--force` is passed on.
  bool force = false;
  StatusOptions status;  ///< how cell states are read (data fingerprints)
};

struct RunnerSummary {
  size_t computed = 0;           ///< cells that ended with a matching result.json
  size_t reused = 0;             ///< cells that were done before the runner started
  size_t failed = 0;             ///< cells that failed (error.json written)
  size_t interrupted = 0;        ///< cells terminated because of `stop` (no error.json)
  size_t not_started = 0;        ///< cells left in the queue because of `stop`
  size_t running_elsewhere = 0;  ///< cells another process was computing (lock held, exit 75)
  size_t damaged = 0;            ///< damaged cells, not run (see damaged_cells)
  size_t stale = 0;              ///< cells with results from other data, not run
  std::vector<std::string> failed_cells;
  std::vector<CellNote> elsewhere_cells, damaged_cells, stale_cells;
  bool ok() const {
    return failed == 0 && interrupted == 0 && not_started == 0 && damaged == 0 && stale == 0;
  }
  /// "computed X, reused Y, failed Z" (+ ", running elsewhere E", ", damaged D", ", stale S" when
  /// not 0; + ", interrupted W, not started V" when stopped).
  std::string line() const;
};

/// Runs `cells` (normally a whole grid) under `results_root`.
RunnerSummary run_cells(const std::vector<RunSpec>& cells,
                        const std::filesystem::path& results_root, const RunnerOptions& options);

/// Moves out of `cells` those whose dataset is optional and not installed under `data_root`
/// (data::optional_dataset_missing: Rectangle-Images without data-scripts/fetch_rectangles.sh)
/// and returns them, in their order; the rest keep theirs. `dkp grid run` skips them and says so
/// instead of failing them: a grid over data the shared set does not hold is not broken.
std::vector<RunSpec> take_cells_without_data(std::vector<RunSpec>& cells,
                                             const std::filesystem::path& data_root);

}  // namespace dkp::experiments
