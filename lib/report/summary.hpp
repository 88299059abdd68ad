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

#include "report/claims.hpp"
#include "report/provenance.hpp"
#include "report/stability.hpp"
#include "report/table.hpp"

namespace dkp::report {

/// Why an entry disagrees with the paper. One row of the explanations CSV:
///   table,metric,dataset,depth,kernel,column,sign,min_abs,max_abs,note,link
/// Every field is explicit: no field is empty, and none means "any". The key fields name what
/// the row explains, each a value or a '|'-separated list: `table` the tables' full names
/// ("agw-table3", "gw-table1|gw-table2"), `metric` the row's metric or the column's reference
/// metric (elbo_diff), `dataset`, `depth` (positive integers, or "-" for entries without a
/// depth), `kernel` ("-" for a table without kernel rows), `column` the column labels
/// ("DWP A-GW"). The row covers every combination of its lists. `sign` is the direction of the
/// difference it explains, compared_difference(): "below" (ours - paper < 0) or "above" (> 0);
/// `min_abs`, `max_abs` the range of |ours - paper| it covers. `link` is a relative Markdown link
/// target (disagreements.md#yacht-elbo).
struct Explanation {
  enum class Sign { below, above };
  std::vector<std::string> tables, metrics, datasets;
  std::vector<int> depths;           ///< empty: "-", entries without a depth
  std::vector<std::string> kernels;  ///< empty: "-", rows without a kernel
  std::vector<std::string> columns;
  Sign sign = Sign::below;
  double min_abs = 0, max_abs = 0;
  std::string note, link;
  std::string source;  ///< file:line, for messages

  /// The row names the entry: its table, metric, dataset, depth, kernel and column are listed.
  bool names(const Table& t, const Row& r, const Entry& e) const;
  /// The row names the entry and covers its difference (compared_difference): the sign, and
  /// min_abs <= |difference| <= max_abs.
  bool matches(const Table& t, const Row& r, const Entry& e) const;
};

/// The difference an entry's verdict judged, ours - paper: compared_ours - compared_paper (for
/// the paired rule, the differences to the row's best method), else mean - the paper's mean;
/// nullopt without both values.
std::optional<double> compared_difference(const Entry& e);

/// Parses the explanations CSV (RFC 4180 quoting; blank lines and lines starting with '#' are
/// skipped). The header must name exactly the eleven columns (in any order). Throws DataError
/// naming `filename`:line and the field for a bad header, a row whose field count differs from
/// the header's, an empty field or list item, "-" outside depth and kernel, a depth that is not
/// a positive integer, a sign other than below / above, a range that is not 0 <= min_abs <=
/// max_abs, or a link with spaces or parentheses.
std::vector<Explanation> parse_explanations(const std::string& text, const std::string& filename);
/// Same from a file; an absent file gives no explanations.
std::vector<Explanation> load_explanations(const std::filesystem::path& file);
/// The first explanation matching the entry (Explanation::matches), or nullptr.
const Explanation* find_explanation(const std::vector<Explanation>& explanations, const Table& t,
                                    const Row& r, const Entry& e);

/// Gives each disagreement of the papers' protocols (tables not marked extra) its explanation
/// (find_explanation): sets the entries' explanation fields, and explanation_near (the rows that
/// name the entry but not its sign or size) where none matches; marks those tables
/// explanations_attached. Tables marked extra are left without (their disagreements measure
/// another protocol). Calling it again replaces what an earlier call set.
void attach_explanations(std::vector<Table>& tables, const std::vector<Explanation>& explanations);

/// The explanations that are the first match of no disagreement of the papers' protocols (tables
/// not marked extra): rows left over from entries that agree now, whose sign or size no longer
/// fits, or written ahead of splits still to come. In file order.
std::vector<const Explanation*> unused_explanations(const std::vector<Table>& tables,
                                                    const std::vector<Explanation>& explanations);

/// Entry counts: planned (status other than absent), computed (with a mean, complete or not),
/// complete (status ok), agree / disagree (agree yes / no), unexplained (disagree, with the
/// paper's value, and no explanation attached: every one while none are), not comparable
/// (computed, agree n/a).
struct CellCounts {
  int planned = 0, computed = 0, complete = 0, agree = 0, disagree = 0, unexplained = 0,
      not_comparable = 0;
  CellCounts& operator+=(const CellCounts& o);
};
CellCounts count_cells(const Table& t);
CellCounts count_cells(const std::vector<Table>& tables);

/// "N of M planned cells computed; A agree with the paper, D disagree (U unexplained), X not
/// comparable", over the tables of the papers' protocols (those marked Table::extra are not
/// counted). U counts the disagreements without an attached explanation (attach_explanations).
std::string scoreboard_line(const std::vector<Table>& tables);

/// Where the page's links point, relative to the page: the tables' Markdown files
/// (<tables><name>.md) and the figures (<figures><stem>.svg). Empty, or ending in '/'.
struct SummaryLinks {
  std::string tables = "tables/";
  std::string figures = "figures/";
  std::string claims = "claims.md";  ///< the claims page (claims_markdown)
};

/// The page (GitHub-flavoured Markdown), deterministic: no date, no machine path. Scoreboard,
/// disagreements and figures count the papers' protocols only; tables marked Table::extra are
/// listed in a section of their own. With `claims` (evaluate_claims), the overall line ends with
/// the claim counts ("The papers' claims: S supported, C contradicted, U undecided.") and a
/// section lists each claim's verdict, linking to the claims page. The explanations are attached
/// to a copy of the tables (attach_explanations): each disagreement shows its explanation or
/// "Unexplained.". With `provenance` (the committed store's counts,
/// experiments::count_store_provenance), a line under the overall scoreboard says how many cells
/// ran from a modified work tree and how many of those were verified at a clean commit. With
/// `stability` (verdict_stability), a section lists the entries whose verdict more splits changed.
std::string summary_markdown(const std::vector<Table>& tables,
                             const std::vector<Explanation>& explanations,
                             const SummaryLinks& links = {},
                             const std::vector<ClaimResult>* claims = nullptr,
                             const ProvenanceCounts* provenance = nullptr,
                             const VerdictStability* stability = nullptr);

/// The page's figures, file stem (the paper key) -> SVG text: one per paper that has entries with
/// both our mean and the paper's value, one panel per metric (ours against the paper's, error
/// bars of one standard error each, y = x, one marker per table column, hollow where not every
/// split is done, disagreements ringed). Tables marked Table::extra are left out.
std::map<std::string, std::string> summary_figures(const std::vector<Table>& tables);

}  // namespace dkp::report
