// From a grid and a results root to the paper tables: gathers every expected cell's state and
// result values, aggregates them with lib/report and writes <out>/<table>.tex, .csv and .md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "experiments/grid.hpp"
#include "experiments/store.hpp"
#include "report/reference.hpp"
#include "report/table.hpp"

namespace dkp::experiments {

/// What the store holds of a grid besides the values: how many of its cells have anything in it,
/// and the cells that cannot be tabulated because they are damaged or stale.
struct StoreCheck {
  size_t present = 0;  ///< cells whose state is not missing
  std::vector<CellNote> damaged;
  std::vector<CellNote> stale;
};

/// Adds to `values` what the cell's training trace says beyond result.json: elbo_tail and
/// elbo_tail_se, the mean of the trace's ELBO over the last tenth of the `steps` and its standard
/// error (training::elbo_tail_mean), when trace_csv exists and has them. Throws dkp::DataError on a
/// malformed trace.
void add_trace_values(std::map<std::string, double>& values, const std::filesystem::path& trace_csv,
                      uint64_t steps);

/// One record per expected cell of the grid (state from its run directory, values from its
/// result.json, and add_trace_values, when done). The records' states are the tables' vocabulary:
/// done, running (also interrupted: started, not finished), failed (also damaged), missing (also
/// stale: a result of other data is not used). `check`, when given, receives what else was found.
std::vector<report::CellRecord> collect_records(const Grid& grid,
                                                const std::filesystem::path& results_root,
                                                const StatusOptions& options = {},
                                                StoreCheck* check = nullptr);

/// "20000 steps, lr 0:0.01,10000:0.001, KL annealing over 1000 steps, ..." (from the cells;
/// values that vary between cells are listed as ranges).
std::string protocol_summary(const Grid& grid);

/// The grid's family tables, aggregated. Tables of non-full profiles get the profile as a name
/// suffix ("agw-table3-quick") and its description in their notes.
std::vector<report::Table> grid_tables(const Grid& grid, const std::filesystem::path& results_root,
                                       const std::vector<report::RefRow>& refs,
                                       const StatusOptions& options = {},
                                       StoreCheck* check = nullptr);

/// Writes each table as <out_dir>/<name>.tex, <name>.csv and <name>.md (atomically); returns the
/// paths.
std::vector<std::filesystem::path> write_tables(const std::vector<report::Table>& tables,
                                                const std::filesystem::path& out_dir);

}  // namespace dkp::experiments
