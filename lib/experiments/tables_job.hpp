// From a grid and a results root to the paper tables: gathers every expected cell's state and
// result values, aggregates them with lib/report and writes <out>/<table>.tex, .csv and .md.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "experiments/grid.hpp"
#include "report/reference.hpp"
#include "report/table.hpp"

namespace dkp::experiments {

/// One record per expected cell of the grid (state from its run directory, values from its
/// result.json when done).
std::vector<report::CellRecord> collect_records(const Grid& grid,
                                                const std::filesystem::path& results_root);

/// "20000 steps, lr 0:0.01,10000:0.001, KL annealing over 1000 steps, ..." (from the cells;
/// values that vary between cells are listed as ranges).
std::string protocol_summary(const Grid& grid);

/// The grid's family tables, aggregated. Tables of non-full profiles get the profile as a name
/// suffix ("agw-table3-quick") and its description in their notes.
std::vector<report::Table> grid_tables(const Grid& grid, const std::filesystem::path& results_root,
                                       const std::vector<report::RefRow>& refs);

/// Writes each table as <out_dir>/<name>.tex, <name>.csv and <name>.md (atomically); returns the
/// paths.
std::vector<std::filesystem::path> write_tables(const std::vector<report::Table>& tables,
                                                const std::filesystem::path& out_dir);

}  // namespace dkp::experiments
