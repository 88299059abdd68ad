// The results page over a set of tables (results/README.md, written by `dkp tables --summary`):
// the overall scoreboard, one scoreboard row per table, the disagreements with the paper (each
// with its explanation from results/explanations.csv) and, per paper, a figure of ours against
// the paper's printed values. A "cell" here is one table entry (one method's value for one row of
// a table, aggregated over splits).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/provenance.hpp"
#include "report/table.hpp"

namespace dkp::report {

/// Why an entry disagrees with the paper. One row of the explanations CSV:
///   table,metric,dataset,depth,column,note,link
/// An empty key field matches anything; `table` matches the table's name, or its name without
/// the profile suffix; `metric` the row's metric or the column's reference metric (elbo_diff);
/// `column` the column label ("DWP A-GW"). `link` is a relative Markdown link target
/// (disagreements.md#yacht-elbo) or empty.
struct Explanation {
  std::string table, metric, dataset;
  std::optional<int> depth;
  std::string column, note, link;
  std::string source;  ///< file:line, for messages

  bool matches(const Table& t, const Row& r, const Entry& e) const;
};

/// Parses the explanations CSV (RFC 4180 quoting; blank lines and lines starting with '#' are
/// skipped). The header must name exactly the seven columns (in any order). Throws DataError
/// naming `filename`:line for a bad header, a row whose field count differs from the header's,
/// an empty note, a depth that is not a positive integer, or a link with spaces or parentheses.
std::vector<Explanation> parse_explanations(const std::string& text, const std::string& filename);
/// Same from a file; an absent file gives no explanations.
std::vector<Explanation> load_explanations(const std::filesystem::path& file);
/// The first explanation matching the entry, or nullptr.
const Explanation* find_explanation(const std::vector<Explanation>& explanations, const Table& t,
                                    const Row& r, const Entry& e);

/// The explanations that are the first match of no disagreement of the papers' protocols (tables
/// not marked extra): rows left over from entries that agree now, or written ahead of splits still
/// to come. In file order.
std::vector<const Explanation*> unused_explanations(const std::vector<Table>& tables,
                                                    const std::vector<Explanation>& explanations);

/// Entry counts: planned (status other than absent), computed (with a mean, complete or not),
/// complete (status ok), agree / disagree (agree yes / no), not comparable (computed, agree n/a).
struct CellCounts {
  int planned = 0, computed = 0, complete = 0, agree = 0, disagree = 0, not_comparable = 0;
  CellCounts& operator+=(const CellCounts& o);
};
CellCounts count_cells(const Table& t);
CellCounts count_cells(const std::vector<Table>& tables);

/// "N of M planned cells computed; A agree with the paper, D disagree, X not comparable", over the
/// tables of the papers' protocols (those marked Table::extra are not counted).
std::string scoreboard_line(const std::vector<Table>& tables);

/// Where the page's links point, relative to the page: the tables' Markdown files
/// (<tables><name>.md) and the figures (<figures><stem>.svg). Empty, or ending in '/'.
struct SummaryLinks {
  std::string tables = "tables/";
  std::string figures = "figures/";
};

/// The page (GitHub-flavoured Markdown), deterministic: no date, no machine path. Scoreboard,
/// disagreements and figures count the papers' protocols only; tables marked Table::extra are
/// listed in a section of their own. With `provenance` (the committed store's counts,
/// experiments::count_store_provenance), a line under the overall scoreboard says how many cells
/// ran from a modified work tree and how many of those were verified at a clean commit.
std::string summary_markdown(const std::vector<Table>& tables,
                             const std::vector<Explanation>& explanations,
                             const SummaryLinks& links = {},
                             const ProvenanceCounts* provenance = nullptr);

/// The page's figures, file stem (the paper key) -> SVG text: one per paper that has entries with
/// both our mean and the paper's value, one panel per metric (ours against the paper's, error
/// bars of one standard error each, y = x, one marker per table column, hollow where not every
/// split is done, disagreements ringed). Tables marked Table::extra are left out.
std::map<std::string, std::string> summary_figures(const std::vector<Table>& tables);

}  // namespace dkp::report
