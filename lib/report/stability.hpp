// How the verdicts of the papers' protocols hold up as splits come in: every entry with more
// splits done than a few (most rows started with splits 0-2) is judged again on those few alone
// (`dkp tables --splits`), and the two verdicts are compared. The results page lists the entries
// whose verdict changed, so that a reader can weigh the verdicts of rows that still have few.
#pragma once

#include <string>
#include <vector>

#include "report/table.hpp"

namespace dkp::report {

/// The few splits the results page judges entries again on: splits 0-2, the splits most rows
/// were first computed on.
constexpr int kFewSplits = 3;

/// One entry judged twice: with its first `few_splits` splits, and with all those done.
struct VerdictChange {
  Table table;  ///< the all-splits table's spec only (its name and formats), no rows
  Row row;      ///< the entry's row keys, no entries
  Entry few, all;
};

struct VerdictStability {
  int few_splits = 0;
  /// Entries of the papers' protocols (tables not marked extra) judged (agree yes or no) both
  /// ways, with more splits done than the few.
  int compared = 0;
  int agree_to_disagree = 0, disagree_to_agree = 0;
  std::vector<VerdictChange> changes;  ///< in table, row and column order
  /// The claim counts on the few splits ("S supported, C contradicted, U undecided"), when given.
  std::string claims_few;
};

/// Matches the entries of `all` (every split done) to those of `few` (the same grids read with
/// their first few_splits splits) by table name, row (metric, kernel, dataset, depth) and column,
/// and compares the verdicts of the entries with more splits done in `all` than in `few`.
/// Tables marked extra are left out, as in the scoreboard.
VerdictStability verdict_stability(const std::vector<Table>& few, const std::vector<Table>& all,
                                   int few_splits);

}  // namespace dkp::report
