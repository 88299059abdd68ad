// Batch runner: runs the pending cells of a grid as subprocesses (`<exe> run ... --out DIR`),
// N at a time, one BLAS thread each (OPENBLAS_NUM_THREADS=1), with progress and ETA.
// A cell whose subprocess fails gets an error.json (exit code, signal, stderr tail, command) in
// its run directory and the grid goes on. Cells already done are reused, never rerun. Children
// run in their own process group and get SIGTERM if the runner dies (even by SIGKILL), so an
// interrupted grid leaves checkpoints to resume, not orphans racing the next `dkp grid run`.
#pragma once

#include <atomic>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "experiments/grid.hpp"

namespace dkp::experiments {

struct RunnerOptions {
  int jobs = 1;
  std::string exe;                          ///< program run for each cell (normally /proc/self/exe)
  std::vector<std::string> extra_args;      ///< forwarded to every run, e.g. {"--data", ROOT}
  const std::atomic<bool>* stop = nullptr;  ///< when it becomes true: terminate children, return
  std::ostream* log = nullptr;              ///< progress lines (nullptr: std::cout)
  double poll_seconds = 0.05;
};

struct RunnerSummary {
  size_t computed = 0;     ///< cells that ended with a matching result.json
  size_t reused = 0;       ///< cells that were done before the runner started
  size_t failed = 0;       ///< cells that failed (error.json written)
  size_t interrupted = 0;  ///< cells terminated because of `stop` (no error.json)
  size_t not_started = 0;  ///< cells left in the queue because of `stop`
  std::vector<std::string> failed_cells;
  bool ok() const { return failed == 0 && interrupted == 0 && not_started == 0; }
  /// "computed X, reused Y, failed Z" (+ ", interrupted W, not started V" when stopped).
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

/// "1h 02m", "3m 20s", "12s".
std::string format_duration(double seconds);

}  // namespace dkp::experiments
