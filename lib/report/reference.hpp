// The papers' printed table values (results/reference/*.csv), one row per printed cell:
//   paper,table,dataset,depth,model,posterior,metric,mean,error,error_kind[,kernel,n_splits,bold,note]
// error_kind: se (one standard error over splits), sd (standard deviation over splits),
// 2se_paired (two standard errors of the paired difference to the row's best method; the best
// has no error), unspecified, none.
// The public reference code's own values, where we have run it (results/reference/code/*.csv,
// the same columns plus `splits`, the splits it was measured on, e.g. "0" or "0;1"), are loaded
// beside the papers' with origin "code": a table shows them as a second reference per cell.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace dkp::report {

struct RefRow {
  std::string paper, table, dataset;
  int depth = 0;  ///< 0 when blank
  std::string model, posterior, metric;
  double mean = 0;
  std::optional<double> error;
  std::string mean_text, error_text;  ///< as printed (trailing zeros kept)
  std::string error_kind;
  std::string kernel;
  int n_splits = 0;  ///< 0 when unknown
  bool bold = false;
  std::string note;
  std::string source;  ///< file:line, for messages
  /// "paper" (its printed table) or "code" (the public reference code, run by us).
  std::string origin = "paper";
  /// The splits a value was measured on (column `splits`); empty: the paper's, i.e. all.
  std::vector<int> splits;

  /// The paper's standard error of the mean implied by (error, error_kind): se -> error,
  /// sd -> error / sqrt(n) (n = n_splits, else `n_fallback`), unspecified -> error; 0 for
  /// 2se_paired (an error of the paired difference to the row's best method says nothing of the
  /// mean's own: RefRow::spread_sd and the "paired" rule of judge_table use it) and none.
  double standard_error(int n_fallback) const;
  /// The standard deviation of the printed mean's rounding: u / sqrt(12) for the place value u
  /// of its last printed digit ("-0.01": 0.01; "4.23e-5": 1e-7); 0 without a printed mean.
  double rounding_sd() const;
  /// The same for the printed error ("0.00": 0.01 / sqrt(12)); 0 without a printed error.
  double error_rounding_sd() const;
  /// The paper's split-to-split standard deviation of the printed quantity, from (error,
  /// error_kind, n_splits), the printed error widened by its own rounding (sqrt(error^2 +
  /// error_rounding_sd^2): "± 0.00" is below 0.005, not zero): sd -> that; se -> that times
  /// sqrt(n_splits); 2se_paired -> half that times sqrt(n_splits), the spread of the paired
  /// difference to the row's best method. nullopt when it cannot be told (unspecified or no
  /// error, fewer than two splits known).
  std::optional<double> spread_sd() const;
};

/// Parses one CSV (RFC 4180 quoting); the header names the columns, the first ten are required.
/// Throws DataError naming file:line on malformed rows.
std::vector<RefRow> load_reference_csv(const std::filesystem::path& file);

/// All *.csv files of a directory, sorted by name, then those of its `code` subdirectory (origin
/// "code"); an absent directory gives no rows.
std::vector<RefRow> load_reference_dir(const std::filesystem::path& dir);

/// Splits one CSV record (no embedded newlines) into fields.
std::vector<std::string> split_csv_line(const std::string& line);

/// Quotes a CSV field when needed.
std::string csv_field(const std::string& s);

}  // namespace dkp::report
