// The result store: one directory per cell (DESIGN.md section 6),
//   <results>/<grid>/<dataset>/split<k>/<hash>/{manifest.json, checkpoint.bin, result.json,
//                                              error.json, stdout.log, stderr.log}
// and the state of a cell derived from what is there. Nothing here knows about models.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "experiments/grid.hpp"

namespace dkp::experiments {

enum class CellState {
  done,     ///< result.json with the cell's config_hash
  running,  ///< a checkpoint or manifest but no result (running elsewhere, or interrupted)
  missing,  ///< nothing yet
  failed,   ///< error.json and no result
};

const char* to_string(CellState s);

struct CellStatus {
  CellState state = CellState::missing;
  std::string detail;            ///< failure message, stale-result note, ...
  std::filesystem::path result;  ///< done: the result.json that holds the cell
};

/// State of one cell from the files in its run directory. The configuration hash does not depend
/// on the grid, so a cell is also done when another grid of the same results root holds a result
/// with its hash (e.g. the GW paper's cells are a subset of the A-GW paper's): `result` then
/// points there and `detail` names that grid. Nothing is copied: each result is stored once.
CellStatus cell_status(const RunSpec& spec, const std::filesystem::path& results_root);

/// The "config_hash" of a run directory's result.json (or manifest.json); nullopt when the file is
/// missing or unreadable, empty when it has no such key.
std::optional<std::string> result_hash(const std::filesystem::path& result_json);

/// Numeric values of a result.json (every top-level key whose value is a number; null and
/// non-numeric values are skipped). Throws DataError naming the file when it is not a JSON/YAML
/// object.
std::map<std::string, double> read_result_values(const std::filesystem::path& result_json);

/// Cells without a result whose hash matches (failed, running and missing cells), in grid order.
std::vector<RunSpec> pending_cells(const Grid& grid, const std::filesystem::path& results_root);

/// Cell j of `cells` goes to shard j mod n; returns shard i (0 <= i < n).
std::vector<RunSpec> shard(const std::vector<RunSpec>& cells, int i, int n);

/// Parses "i/n" (0 <= i < n); throws ConfigError otherwise.
std::pair<int, int> parse_shard(const std::string& text);

/// What a failed cell left behind.
struct Failure {
  int exit_code = -1;  ///< -1 when killed by a signal
  int signal = 0;
  std::string stderr_tail;
  std::string command;
  double seconds = 0;
  std::string reason;  ///< one-line summary
};

/// Writes <run_dir>/error.json atomically.
void write_error_json(const RunSpec& spec, const std::filesystem::path& results_root,
                      const Failure& f);

/// Reads the one-line reason of an error.json ("" when absent).
std::string read_error_reason(const std::filesystem::path& error_json);

/// Records the grid text and profile under <results>/<grid>/snapshot-<profile>.yaml so that
/// `dkp tables <results>` can find the expected cells without the original file.
void write_grid_snapshot(const Grid& grid, const std::string& grid_text,
                         const std::filesystem::path& results_root);

/// Grids recorded under a results root (one per snapshot file), re-expanded.
std::vector<Grid> load_grid_snapshots(const std::filesystem::path& results_root);

}  // namespace dkp::experiments
