// Bringing results from several stores together (`dkp grid merge SRC... --into DST`): machines
// that computed cells into stores of their own (local disks, no shared filesystem) copy their
// finished cells into one store, which then regenerates the tables.
//
// Rules:
//   - Only finished cells are copied: a run directory <grid>/<dataset>/split<k>/<hash>/ whose
//     result.json and manifest.json name the directory's hash (and whose canonical_config gives it
//     back) and whose lock nobody holds. Interrupted, failed and running cells stay where they are.
//   - A finished cell is never overwritten. When the destination already holds the hash (under
//     any grid: a configuration is stored once, store.hpp cell_status), the two results are
//     compared: the same numbers (timings aside) is a duplicate, skipped; other numbers is a
//     conflict, reported, and the destination's result kept.
//   - Each cell appears whole: it is copied into a temporary directory beside its place in the
//     destination (same filesystem), checked, and renamed into place. An unfinished run directory
//     already there (a checkpoint, an error.json) is replaced while holding its lock, file by file
//     with result.json renamed in last, so no reader ever sees a partial finished cell.
//   - The grid snapshots (<grid>/snapshot-<profile>.yaml, for `dkp tables <store>`) missing from
//     the destination are copied; a different one already there is kept and noted.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace dkp::experiments {

struct MergeOptions {
  bool dry_run = false;  ///< decide and report, write nothing
};

/// A cell (or snapshot) the merge did not copy, and why.
struct MergeNote {
  std::string hash;                ///< the cell's configuration hash ("" for a snapshot)
  std::filesystem::path source;    ///< the source's run directory (or snapshot)
  std::filesystem::path existing;  ///< the destination's copy, when there is one
  std::string detail;
};

struct MergeReport {
  size_t copied = 0;      ///< cells copied into a new run directory
  size_t replaced = 0;    ///< cells copied over an unfinished run directory of the destination
  size_t duplicates = 0;  ///< already in the destination with the same results
  size_t conflicts = 0;   ///< in the destination with other results: kept, not copied
  size_t unfinished = 0;  ///< source run directories without a finished result: not copied
  size_t running = 0;     ///< cells whose lock a process holds (source or destination): not copied
  size_t invalid = 0;     ///< source run directories whose files disagree: not copied
  size_t snapshots = 0;   ///< grid snapshots copied
  std::vector<MergeNote> conflict_notes, invalid_notes, running_notes, snapshot_notes;
  std::vector<std::string> copied_cells;  ///< "<grid>/<dataset>/split<k>/<hash>" of each copy
  /// Sources holding no run directory at all (not a results root?).
  std::vector<std::filesystem::path> empty_sources;
  /// No conflicts and no invalid cells.
  bool ok() const { return conflicts == 0 && invalid == 0; }
  /// "copied 12, replaced 1, duplicates 3, conflicts 1, unfinished 2, running 0, invalid 0,
  /// snapshots 2"
  std::string line() const;
};

/// Merges the finished cells of every store in `sources` (results roots, in order) into `dest`
/// (created when missing) as described above. Throws dkp::Error when a source is not a
/// directory, or is `dest` itself, and when a copy fails (what was copied before stays, whole).
MergeReport merge_stores(const std::vector<std::filesystem::path>& sources,
                         const std::filesystem::path& dest, const MergeOptions& options = {});

/// The differences between two result.json files of one configuration: every numeric top-level
/// value but the timings (train_s, step_s, epoch_s, predict_s, resumed_from_step, threads) and
/// data_sha256, as "key: A vs B" (at most `max` of them); empty when they agree exactly.
std::vector<std::string> result_differences(const std::filesystem::path& a,
                                            const std::filesystem::path& b, size_t max = 3);

}  // namespace dkp::experiments
