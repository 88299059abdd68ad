// The result store: one directory per cell (DESIGN.md section 6),
//   <results>/<grid>/<dataset>/split<k>/<hash>/{manifest.json, checkpoint.bin, result.json,
//                                              trace.csv, error.json, stdout.log, stderr.log,
//                                              run.lock, verified.json}
// and the state of a cell derived from what is there: its files, whether a process holds its
// lock (platform::DirLock, taken by `dkp run`) and, when asked, whether its data fingerprint is the
// data's now. Nothing here knows about models. (verified.json, the record of `dkp grid verify
// --record`, is experiments/provenance.hpp's: no state depends on it.)
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/grid.hpp"

namespace dkp::experiments {

enum class CellState {
  done,         ///< result.json with the cell's config_hash (from the data now present, when known)
  running,      ///< a process holds the run directory's lock (run.lock) now
  interrupted,  ///< a checkpoint or manifest but no result, and no process holds the lock
  missing,      ///< nothing yet
  failed,       ///< error.json and no result
  damaged,      ///< result.json, manifest.json or trace.csv is malformed (detail: path, error)
  stale,        ///< a result or checkpoint made from other data files than those now present
};
inline constexpr size_t kCellStates = 7;

/// "done", "running", "interrupted", "missing", "failed", "damaged", "stale".
const char* to_string(CellState s);

struct CellStatus {
  CellState state = CellState::missing;
  std::string detail;            ///< failure message, holder of the lock, damaged file, ...
  std::filesystem::path result;  ///< done (and stale): the result.json that holds the cell
};

/// A cell and a note on it (why it was not run, what is damaged, ...).
struct CellNote {
  std::string hash;
  std::string label;
  std::string detail;
};

/// The fingerprint of the data now present for a dataset's split: the SHA-256 `dkp run` records
/// as data_sha256. nullopt when it cannot be computed (dataset not installed, unreadable data).
using DataFingerprintFn =
    std::function<std::optional<std::string>(const std::string& dataset, int split)>;

/// Fingerprints cached per (dataset, split), for one command: each is computed once.
class DataFingerprints {
 public:
  explicit DataFingerprints(DataFingerprintFn fn) : fn_(std::move(fn)) {}
  std::optional<std::string> get(const std::string& dataset, int split);

 private:
  DataFingerprintFn fn_;
  std::map<std::pair<std::string, int>, std::optional<std::string>> cache_;
};

/// How cell_status looks at a run directory.
struct StatusOptions {
  /// When set, a result (or checkpoint) whose recorded data_sha256 (result.json's, else
  /// manifest.json's) differs from the data now present is stale, not done (not interrupted).
  DataFingerprints* data = nullptr;
};

/// State of one cell from the files in its run directory. The configuration hash does not depend
/// on the grid, so a cell is also done when another grid of the same results root holds a result
/// with its hash (e.g. the GW paper's cells are a subset of the A-GW paper's): `result` then
/// points there and `detail` names that grid. Nothing is copied: each result is stored once.
///
/// In order: a result.json with the cell's hash is done (or stale); a run directory whose lock is
/// held is running (detail: the holder); a malformed result.json (not JSON, not an object, no
/// config_hash, a config_hash or data_sha256 that is not a string), manifest.json or trace.csv is
/// damaged (detail: "<path>: <error>", "<path>:<line>:<column>: not valid JSON: <error>" for a
/// parse error; the trace and manifest of a done cell are not read, except the manifest for its
/// data fingerprint); then failed (error.json), interrupted (manifest or checkpoint), missing. A
/// result.json of another configuration is ignored (noted in the detail).
CellStatus cell_status(const RunSpec& spec, const std::filesystem::path& results_root,
                       const StatusOptions& options = {});

/// The "config_hash" of a run directory's result.json (or manifest.json); nullopt when the file is
/// missing or unreadable, empty when it has no such key.
std::optional<std::string> result_hash(const std::filesystem::path& result_json);

/// Numeric values of a result.json (every top-level key whose value is a number; null and
/// non-numeric values are skipped). Throws DataError naming the file when it is not a JSON
/// object ("<file>:<line>:<column>: not valid JSON: ..." for a parse error).
std::map<std::string, double> read_result_values(const std::filesystem::path& result_json);

/// What a finished run took on one core, in seconds, from its result.json values: step_s x steps
/// plus predict_s. (train_s covers only the last stretch of a run resumed from a checkpoint, while
/// step_s is that stretch's time per step.) train_s + predict_s when step_s or steps is missing;
/// a missing time counts 0.
double run_seconds(const std::map<std::string, double>& values);

/// The run directories of a results root, <root>/<grid>/<dataset>/split<k>/<hash>, in path order
/// (names starting with '.', such as a merge's temporary directories, are not cells).
std::vector<std::filesystem::path> store_run_dirs(const std::filesystem::path& results_root);

/// What is wrong with `run_dir` as the finished cell `hash` ("" when nothing): both result.json
/// and manifest.json carry the hash, and the manifest's canonical_config hashes to it. The
/// one-argument form takes the hash from the directory's name.
std::string finished_cell_problem(const std::filesystem::path& run_dir, const std::string& hash);
std::string finished_cell_problem(const std::filesystem::path& run_dir);

/// A finished cell read back: its spec (the manifest's canonical config; grid from the path) and
/// the numbers of its result.json.
struct FinishedCell {
  std::filesystem::path dir;
  RunSpec spec;
  std::map<std::string, double> values;
};
/// nullopt when finished_cell_problem(run_dir) is not empty.
std::optional<FinishedCell> read_finished_cell(const std::filesystem::path& run_dir);

/// The cells a plain `dkp grid run` would start (running, interrupted, missing and failed ones; not
/// done, damaged or stale ones, which need --force), in grid order.
std::vector<RunSpec> pending_cells(const Grid& grid, const std::filesystem::path& results_root,
                                   const StatusOptions& options = {});

/// Removes what a run left in its directory (result.json, checkpoint.bin, trace.csv,
/// manifest.json, error.json, the logs, verified.json and temporary files; not run.lock) so that
/// it is computed afresh, while holding the directory's lock. Throws dkp::Error naming the holder
/// when another process holds it. Returns how many files were removed.
size_t clear_run_dir(const std::filesystem::path& run_dir);

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
