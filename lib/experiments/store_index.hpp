// The store index: <results root>/<grid>/index.tsv, one line per finished cell that dkp wrote,
//   <dataset>/split<k>/<hash> TAB <SHA-256 of result.json> TAB <SHA-256 of manifest.json>
// sorted by cell. `dkp run` records a cell when it writes its result into a store-shaped run
// directory (run_cell); `dkp grid index` records the cells that are not yet in it. A cell whose
// files no longer match its line was modified after dkp wrote it: grid status and the tables
// count it as damaged, and the committed-results test fails (a hand edit is caught before it
// reaches a table). The index is committed with the cells (scripts/store-add.sh).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>

namespace dkp::experiments {

struct IndexEntry {
  std::string result_sha256;
  std::string manifest_sha256;
};

/// <grid dir>/index.tsv
std::filesystem::path index_file(const std::filesystem::path& grid_dir);

/// The index of a grid directory, by cell path ("<dataset>/split<k>/<hash>"); empty when there
/// is none. DataError naming file and line when it is malformed.
std::map<std::string, IndexEntry> read_store_index(const std::filesystem::path& grid_dir);

/// read_store_index, read again only when index.tsv changed (time and size): for the readers of
/// many cells of one grid (grid status, tables), which would otherwise read it once per cell.
std::shared_ptr<const std::map<std::string, IndexEntry>> cached_store_index(
    const std::filesystem::path& grid_dir);

/// The grid directory and cell key of a run directory shaped as the store's
/// (<grid dir>/<dataset>/split<k>/<hash>), or {"", ""}.
std::pair<std::filesystem::path, std::string> index_place(const std::filesystem::path& run_dir);

/// Records the run directory's result.json and manifest.json in its grid's index (under an
/// exclusive lock of the grid directory, so concurrent runs of one grid keep every line); nothing
/// when the directory is not shaped as a store's. Returns whether it recorded.
bool record_in_store_index(const std::filesystem::path& run_dir);

/// "" when the run directory's files match its index line or it has none; otherwise why not
/// ("result.json was modified after dkp wrote it: ..."). `index` is its grid's, read once.
std::string index_mismatch(const std::filesystem::path& run_dir,
                           const std::map<std::string, IndexEntry>& index);

}  // namespace dkp::experiments
