// The papers' stated conclusions tested on our cells (results/reference/claims.yaml ->
// results/claims.md, written by `dkp tables --summary`). A claim names one generated table, its
// metric(s), the column the paper says is better and the column(s) it says are worse, and which
// rows it covers. For each row and (better, worse) pair, the per-split values of the two columns
// are paired by split and their differences, taken in the claimed direction, go through a paired
// t-test (a 95% two-sided Student-t interval for the mean difference). The row's verdict follows
// from where the interval lies; the claim's from its rows' (claim_verdict). An undecided row
// says how many splits would decide it at the observed mean and spread, and what the missing
// cells cost from the stored cells' own timings (cell_cost_s).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/table.hpp"

namespace dkp::report {

/// One claim of claims.yaml. Keys: id, paper, quote, section, table, metric (one or a list),
/// better, worse (a column label or a list), direction (higher | lower: must be the metric's,
/// higher_is_better), and optionally datasets, depths, kernels (the rows; absent: all of the
/// table's), note (how the quote is read, shown with the claim) and paper_metric (Claim).
struct Claim {
  std::string id, paper, quote, section, note;
  std::string table;
  std::vector<std::string> metrics;
  /// The table's metric whose paper values give the paper's effect, when the tested metric is
  /// one the paper does not print (TableSpec::ours_only; "" = the tested metric itself).
  std::string paper_metric;
  std::vector<std::string> better, worse;
  std::vector<std::string> datasets, kernels;
  std::vector<int> depths;
  bool higher = true;  ///< direction: the better column's values are larger
  std::string source;  ///< file:line of the claim
  /// file:line of each key's value, for messages.
  std::map<std::string, std::string> where;
};

/// Parses claims.yaml: a mapping with one key, `claims`, a list of claims. Throws ConfigError
/// naming `filename`:line and the key for invalid YAML, an unknown or missing key, an empty
/// value, a duplicate id, or a direction that is neither higher nor lower.
std::vector<Claim> parse_claims(const std::string& text, const std::string& filename);
/// Same from a file (which must exist).
std::vector<Claim> load_claims(const std::filesystem::path& file);

/// A paired t-test of differences d_1..d_n (n pairs): mean, sample standard deviation (n - 1) and,
/// for n >= 2, the 95% two-sided interval mean +- t_{n-1,0.975} sd / sqrt(n).
struct PairedTest {
  int n = 0;
  double mean = 0, sd = 0;
  std::optional<double> lo, hi;
};
PairedTest paired_t_test(const std::vector<double>& d);

/// The 0.975 quantile of Student's t with `df` degrees of freedom (Boost.Math).
double t_quantile_975(int df);

/// The smallest n >= 2 with t_{n-1,0.975} sd / sqrt(n) < |mean|: the number of pairs at which a
/// difference of this mean and spread would give an interval clear of 0. nullopt when mean is 0
/// (or the answer exceeds 10^9).
std::optional<long> pairs_to_decide(double mean, double sd);

enum class Verdict { supported, contradicted, undecided };
std::string verdict_name(Verdict v);

/// One comparison of a claim: one row of the table (metric, dataset, depth, kernel) and one
/// (better, worse) pair of its columns.
struct ClaimRow {
  std::string metric, dataset, kernel;
  int depth = 0;
  std::string better, worse;
  /// The paper's effect: the difference of its printed means, in the claimed direction.
  std::optional<double> paper_effect;
  /// Ours: the paired differences in the claimed direction (better - worse, or worse - better
  /// for a metric where lower is better).
  PairedTest test;
  int planned = 0;  ///< splits both columns plan in the grid (the paper's protocol's N)
  Verdict verdict = Verdict::undecided;
  /// Undecided with n >= 2: pairs_to_decide (nullopt: the mean is 0).
  std::optional<long> pairs_needed;
  /// The CPU hours of the cells still to compute for the splits considered: up to pairs_needed
  /// when that is within `planned`, else up to `planned`; the next split when n < 2. nullopt
  /// when nothing is to be added or a column has no timed cell to price it by.
  std::optional<double> cost_h;
  int more_splits = 0;  ///< the splits cost_h prices
};

/// A claim with its rows. Rows are the comparisons with at least one pair; `not_computed` names
/// the table rows with comparisons that have none, in table order ("boston, depth 3", or
/// "boston (DSVI-3 − SGP 100)" when only some of the row's have none), and n_not_computed counts
/// those comparisons.
struct ClaimResult {
  Claim claim;
  bool evaluated = false;  ///< false: its table is not among those of the call
  std::string table_title;
  int decimals = 2;
  bool scientific = false;
  std::vector<ClaimRow> rows;
  std::vector<std::string> not_computed;
  int n_not_computed = 0;
  Verdict verdict = Verdict::undecided;
  int supported = 0, contradicted = 0, undecided = 0;
};

/// The claim's verdict from its rows' (the rule results/claims.md states): contradicted when any
/// row is contradicted; else supported when more than half of the rows with at least two pairs
/// are supported; else undecided (also when no row has two pairs).
Verdict claim_verdict(const std::vector<ClaimRow>& rows);

/// Evaluates every claim on the tables of the papers' protocols (tables marked extra are not
/// used). Throws ConfigError naming the claim's file:line and key when its paper is not its
/// table's, or a metric, column, dataset, depth or kernel is not one of its table's.
std::vector<ClaimResult> evaluate_claims(const std::vector<Claim>& claims,
                                         const std::vector<Table>& tables);

struct ClaimCounts {
  int supported = 0, contradicted = 0, undecided = 0, not_evaluated = 0;
};
ClaimCounts count_claims(const std::vector<ClaimResult>& results);
/// "S supported, C contradicted, U undecided" (plus ", N not evaluated" when some are not).
std::string claim_counts_text(const ClaimCounts& c);

/// The page results/claims.md (GitHub-flavoured Markdown), deterministic: no date, no path.
/// `tables_link` is the tables' directory relative to the page ("tables/"), `summary_link` the
/// results page beside it ("README.md").
std::string claims_markdown(const std::vector<ClaimResult>& results,
                            const std::string& tables_link = "tables/",
                            const std::string& summary_link = "README.md");

}  // namespace dkp::report
