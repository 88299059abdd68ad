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
/// "elbo_total" is n_train times elbo_mean (or elbo), "elbo_tail_total" n_train times elbo_tail
/// (the trace's mean over the last tenth of training, experiments::add_trace_values).
std::optional<double> metric_value(const CellRecord& c, const std::string& metric);

/// What a done cell cost to compute, in seconds of its one thread (dkp grid run runs every cell on
/// one thread): result.json's train_s, scaled by steps / (steps - resumed_from_step) when the run
/// resumed from a checkpoint (its train_s then times only the steps after the resume), plus
/// predict_s. nullopt without train_s.
std::optional<double> cell_cost_s(const CellRecord& c);

/// Mean, sample sd (n - 1) and standard error of values; sd and se 0 below two values.
struct SampleStats {
  size_t n = 0;
  double mean = 0, sd = 0, se = 0;
};
SampleStats stats_of(const std::vector<double>& x);

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
  /// Metrics the paper does not print, shown for our own analysis (and the claims) beside those
  /// it does: their entries are not cells of the paper's table and are left out of the
  /// scoreboard's counts (report::count_cells).
  std::vector<std::string> ours_only;
  /// The paper's values are shown beside ours but not judged: every entry is not comparable (the
  /// A-GW paper's Table 2, times of other machines).
  bool no_verdict = false;
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
  /// Splits with a result left out: damaged (malformed, or modified since dkp wrote it) or stale
  /// (made from other data than the data now present).
  int n_damaged = 0, n_stale = 0;
  std::optional<double> mean, sd, se;
  std::optional<double> shown_error;  ///< the error printed for ours, in the table's convention
  std::string shown_error_kind;       ///< se | sd | 2se_paired | "" (best of a paired row)
  bool best = false, bold = false;
  std::optional<RefRow> ref;
  double ref_se = 0;
  std::string agree;  ///< yes | no | n/a
  std::string rule;   ///< the rule that decided `agree` (judge_table), "" when none applied
  /// What the rule compared: |compared_ours - compared_paper| <= tolerance agrees. Means, or for
  /// the paired rule the differences to the paper's best method of the row (`compared_to`).
  std::optional<double> tolerance, compared_ours, compared_paper;
  std::string compared_to;
  bool sign_flip = false;  ///< difference rule: ours of the opposite sign to the paper's
  /// Spread check: (our split sd / the paper's)^2 and its one-sided 99% F point.
  std::optional<double> spread_ratio, spread_limit;
  bool wider_spread = false;  ///< spread_ratio > spread_limit: ours scatters more than the paper's
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
  /// A disagreement's explanation (attach_explanations, from results/explanations.csv): the
  /// row's note, link and place (file:line); empty when no row covers the entry. Rows that name
  /// the entry but whose sign or size range leaves its difference out: `explanation_near`
  /// (their file:line, "; " between them).
  std::string explanation, explanation_link, explanation_source, explanation_near;
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
  /// Our run-to-run sd per metric, for the single-run rule (apply_replicates), and which cells it
  /// comes from.
  std::map<std::string, double> run_sd;
  std::string run_sd_note;
  /// A table of seed replicates of another (a grid profile marked `replicates: true`): that
  /// table's name.
  std::string replicate_of;
  /// Its disagreements were given the explanations (attach_explanations): one without an
  /// explanation is marked unexplained in the LaTeX, CSV and Markdown.
  bool explanations_attached = false;
  /// Entries of the grid that have no complete result (status other than ok and absent).
  int incomplete() const;
};

/// A disagreement with the paper (agree "no", both values known) for which attach_explanations
/// found no explanation; false in a table without explanations attached.
inline bool is_unexplained(const Table& t, const Entry& e) {
  return t.explanations_attached && e.agree == "no" && e.mean && e.ref && e.explanation.empty();
}

/// Aggregates `cells` into `spec`'s layout and attaches the reference values.
Table build_table(const TableSpec& spec, const std::vector<CellRecord>& cells,
                  const std::vector<RefRow>& refs);

/// A standalone LaTeX document holding the table.
std::string to_latex(const Table& t);
/// One line per entry, with ours, the paper's value, the agreement flag and, once explanations
/// are attached, whether a disagreement is explained (column `explained`: yes | no).
std::string to_csv(const Table& t);
/// A GitHub-flavoured Markdown page: the title as a bold line, a table with one row per table row
/// and two cells per column (ours, with "(k/n)" when only k of n splits are done and a verdict
/// mark, ✓ agreement, ✗ disagreement, "✗ unexplained" for a disagreement without explanation
/// once explanations are attached; then the paper's printed value), then a legend and the
/// notes. Deterministic: no date, no path.
std::string to_markdown(const Table& t);
/// The metric's name as the Markdown page and the figures print it ("test log-likelihood").
std::string metric_title(const std::string& metric);

/// The rules of agreement with the paper, one per kind of comparison, in the order `judge_table`
/// tries them; `agreement_rules` says each in words (the tables' legends and the results page
/// print them from there). With n our splits done, m our mean, s our split sd, P the paper's
/// printed mean, n_p its splits, sigma_p its split-to-split sd (RefRow::spread_sd: from the
/// printed error and its kind, widened by the error's rounding), r the sd of the rounding of P
/// to its printed digits (RefRow::rounding_sd):
/// - "mean": a mean over splits against the paper's, when sigma_p is known: agree when
///   |m - P| <= 2 sqrt(sigma_p^2 (1/n + 1/n_p) + r^2), two means of n and n_p splits of the
///   paper's spread. Our own scatter does not enter: three splits can neither widen the
///   tolerance by scattering nor narrow it by lying close (the spread check tests our scatter).
///   One split is enough.
/// - "difference": a column of paired differences A - B (A-GW Table 4): the mean rule on our
///   per-split differences, and also a disagreement when the paper's difference is larger than
///   two of its standard errors and ours has the opposite sign (`sign_flip`).
/// - "paired": DKP Table 1's errors are two standard errors of the paired difference to the
///   row's best method (the one printed bare): each other method's per-split difference to that
///   method, ours, against the paper's difference of printed means, by the mean rule (sigma_p of
///   the difference from half the printed error; r of the two rounded means).
/// - "paired-best": that best method's own mean, of which the paper prints no error: agree
///   when |m - P| <= 2 sqrt(se^2 + r^2), se = s / sqrt(n), n >= 2.
/// - "single": a grid of one split (MNIST, CIFAR-10): our one run against the paper's value,
///   agree when |m - P| <= 2 sqrt(sd_run^2 + e_p^2 + r^2), sd_run our run-to-run sd from the
///   grid's seed replicates (Table::run_sd; without replicates no verdict), e_p the paper's
///   printed error (as a standard error, widened by its rounding; 0 when none is printed).
/// - "fallback": sigma_p unknown (the paper prints no error, or no split count): agree when
///   |m - P| <= 2 sqrt(se^2 + se_p^2 + r^2), n >= 2.
/// Beside the verdict, a spread check where sigma_p and s are both known (n >= 2, rules mean,
/// difference and paired): `wider_spread` when s^2 / sigma_p^2 exceeds the one-sided 99% point
/// of the F distribution with (n - 1, n_p - 1) degrees of freedom.
/// Sets every entry's agree, rule, tolerance, compared_*, sign_flip and spread fields.
void judge_table(Table& t);

/// The rules in words, (name, text) in the order above.
const std::vector<std::pair<std::string, std::string>>& agreement_rules();

/// Seed replicates: each table whose `replicate_of` names another table of `tables` is paired
/// with it entry by entry, split by split (same row, column and split, single-split grids only);
/// the run-to-run sd per metric, sqrt(mean (a - b)^2 / 2) over the pairs, becomes both tables'
/// run_sd (with run_sd_note naming the cells), and both are judged again.
void apply_replicates(std::vector<Table>& tables);

/// Formats x with `decimals` places ("-0.38"); "" for nullopt.
std::string format_fixed(std::optional<double> x, int decimals);
/// Formats a value of `metric` as `spec` prints it: scientific with spec.decimals + extra places
/// when the metric is one of spec.scientific ("2.22e-03"), else format_fixed; "" for nullopt.
std::string format_value(std::optional<double> x, const TableSpec& spec, const std::string& metric,
                         int extra = 0);

}  // namespace dkp::report
