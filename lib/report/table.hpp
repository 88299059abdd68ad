// Aggregation of per-split results into the papers' table layouts, in each paper's error
// convention, beside the paper's printed values; LaTeX (standalone document) and CSV writers.
// This layer reads plain records: it knows nothing of grids, runs or models.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/reference.hpp"

namespace dkp::report {

/// One expected cell (dataset, split, configuration) and what came of it.
struct CellRecord {
  std::string dataset;
  int split = 0;
  std::string model, inference, posterior;
  int depth = 1;
  std::string kernel;
  long inducing = 0;
  long steps = 0;
  long batch = 0;
  std::string state;                     ///< done | running | missing | failed
  std::map<std::string, double> values;  ///< numeric keys of result.json (when done)
};

/// The value of `metric` for a done cell. Besides direct keys, "epoch_time_s" falls back to
/// epoch_s, then step_time_s | step_s (or train_time_s | train_s over steps) times
/// ceil(n_train / batch) when result.json has n_train; "test_acc_pct" is 100 test_acc;
/// "elbo_total" is n_train times elbo_mean (or elbo).
std::optional<double> metric_value(const CellRecord& c, const std::string& metric);

/// What a done cell cost to compute, in seconds of its one thread (dkp grid run runs every cell on
/// one thread): result.json's train_s, scaled by steps / (steps - resumed_from_step) when the run
/// resumed from a checkpoint (its train_s then times only the steps after the resume), plus
/// predict_s. nullopt without train_s.
std::optional<double> cell_cost_s(const CellRecord& c);

/// True for metrics where larger is better (elbo, test_ll, test_acc*, *_diff).
bool higher_is_better(const std::string& metric);

/// Which cells a table column takes: exact model/inference/posterior; inducing/depth 0 = any.
struct Selector {
  std::string model, inference, posterior;
  long inducing = 0;
  int depth = 0;
  bool matches(const CellRecord& c) const;
};

struct ColumnSpec {
  std::string label;
  Selector sel;
  std::optional<Selector> minus;  ///< difference column: sel - minus, paired by split
  std::string ref_model, ref_posterior;
  std::string ref_metric;  ///< metric name in the reference CSV when it differs (e.g. elbo_diff)
};

enum class Convention {
  se,         ///< mean +- one standard error over splits
  sd,         ///< mean +- standard deviation over splits
  paired2se,  ///< best mean bare; others +- two standard errors of the paired difference to it
};

enum class BoldRule {
  none,
  best,         ///< best mean of the row and ties at the printed precision, unless all print equal
  significant,  ///< best mean, when better than every other by > 2 se of the paired difference
};

struct TableSpec {
  std::string name;         ///< file stem, e.g. "gw-table2"
  std::string paper;        ///< reference key: dkp, gw, agw, dsvi, compositional
  std::string paper_table;  ///< table number in the paper ("" = any table of that paper)
  std::string title;
  std::vector<std::string> metrics;
  std::vector<std::string> row_keys;  ///< subset of kernel, dataset, depth (metric is implied)
  std::vector<ColumnSpec> columns;
  Convention convention = Convention::se;
  BoldRule bold = BoldRule::best;
  int decimals = 2;
  /// Metrics printed in scientific notation with `decimals` places ("2.22e-03"): values that
  /// span orders of magnitude, such as the compositional paper's layer variances.
  std::vector<std::string> scientific;
  std::vector<int> depths;  ///< only these depths (empty: all)
};

/// The tables of a family (dkp-uci, gw-uci, agw-uci, agw-runtime, dsvi-uci, generic). The generic
/// family makes one table per metric over whatever configurations `cells` contain, with
/// reference values from `reference_paper` (when given). Throws ConfigError for an unknown family.
std::vector<TableSpec> family_tables(const std::string& family,
                                     const std::vector<CellRecord>& cells,
                                     const std::string& reference_paper);

/// One (row, column) entry.
struct Entry {
  std::string column;
  size_t col = 0;  ///< index into TableSpec::columns
  int depth = 0;   ///< the depth of the cells (row or column depth)
  int n_expected = 0, n_done = 0, n_failed = 0, n_running = 0;
  std::optional<double> mean, sd, se;
  std::optional<double> shown_error;  ///< the error printed for ours, in the table's convention
  std::string shown_error_kind;       ///< se | sd | 2se_paired | "" (best of a paired row)
  bool best = false, bold = false;
  std::optional<RefRow> ref;
  double ref_se = 0;
  std::string agree;  ///< yes | no | n/a
  /// The public reference code's value for this cell, where measured (RefRow origin "code"), ours
  /// over the same splits (when all of them are done) and the agreement of the two, by the same
  /// rule as with the paper.
  std::optional<RefRow> code_ref;
  std::optional<double> code_ours, code_ours_se;
  double code_ref_se = 0;
  std::string code_agree;  ///< yes | no | n/a ("" without code_ref)
  std::string status;      ///< ok | partial | missing | failed | running | absent (not in the grid)
  std::map<int, double> by_split;
  /// The splits the grid plans for this entry (for a difference column, those both of its
  /// selectors plan), ascending.
  std::vector<int> planned_splits;
  /// cell_cost_s of the done cells by split (for a difference column, the sum of its two cells').
  std::map<int, double> cost_by_split;
};

struct Row {
  std::string metric, kernel, dataset;
  int depth = 0;
  std::vector<Entry> entries;
};

struct Table {
  TableSpec spec;
  std::vector<Row> rows;
  std::string profile = "full";
  std::string profile_description;  ///< the grid profile's description (empty for full)
  std::string notes;                ///< protocol / profile text for the caption
  /// A table of another protocol than the page's (a grid profile marked `tables: true`): the
  /// results page lists it apart and leaves it out of the scoreboard, disagreements and figures.
  bool extra = false;
  /// Entries of the grid that have no complete result (status other than ok and absent).
  int incomplete() const;
};

/// Aggregates `cells` into `spec`'s layout and attaches the reference values.
Table build_table(const TableSpec& spec, const std::vector<CellRecord>& cells,
                  const std::vector<RefRow>& refs);

/// A standalone LaTeX document holding the table.
std::string to_latex(const Table& t);
/// One line per entry, with ours, the paper's value and the agreement flag.
std::string to_csv(const Table& t);
/// A GitHub-flavoured Markdown page: the title as a bold line, a table with one row per table row
/// and two cells per column (ours, with "(k/n)" when only k of n splits are done and a verdict
/// mark, ✓ agreement, ✗ disagreement; then the paper's printed value), then a legend and the
/// notes. Deterministic: no date, no path.
std::string to_markdown(const Table& t);
/// The metric's name as the Markdown page and the figures print it ("test log-likelihood").
std::string metric_title(const std::string& metric);

/// The tolerance of the agreement with the paper: ours agrees when |ours - paper| <= it, with
/// tolerance 2 sqrt(se_ours^2 + se_paper^2 + r^2), r the standard deviation of the paper's
/// rounding to its printed digits (RefRow::rounding_sd: a value printed as "-0.01 ± 0.00" is
/// known to 0.01 / sqrt(12), not better). When fewer splits are done than the paper averaged
/// over, se_ours is at least the paper's split-to-split standard deviation over sqrt(n_done)
/// (RefRow::split_sd): the sample standard error of a few splits has few degrees of freedom, and
/// two or three splits that happen to lie close would otherwise claim a precision that the
/// splits' spread does not support. A grid of a single split (MNIST's one train/test split)
/// compares its one run within two of the paper's standard errors, when the paper prints one.
/// nullopt when there is no verdict: no value of ours or of the paper's, or fewer than two
/// splits otherwise.
std::optional<double> agreement_tolerance(const Entry& e);

/// Formats x with `decimals` places ("-0.38"); "" for nullopt.
std::string format_fixed(std::optional<double> x, int decimals);
/// Formats a value of `metric` as `spec` prints it: scientific with spec.decimals + extra places
/// when the metric is one of spec.scientific ("2.22e-03"), else format_fixed; "" for nullopt.
std::string format_value(std::optional<double> x, const TableSpec& spec, const std::string& metric,
                         int extra = 0);

}  // namespace dkp::report
