// UCI regression datasets in the Gal & Ghahramani layout (DESIGN.md section 8):
//   <root>/uci/<folder>/data/{data.txt, index_features.txt, index_target.txt,
//                             index_train_K.txt, index_test_K.txt, n_splits.txt}
// Rows are the non-empty lines of data.txt; fields are separated by any run of spaces/tabs.
// Features and target always come from index_features.txt / index_target.txt.
#pragma once

#include <armadillo>
#include <filesystem>
#include <string>
#include <vector>

namespace dkp::data {

/// Canonical short name and upstream folder of one UCI dataset.
struct UciInfo {
  std::string name;    ///< short name used on the command line, e.g. "boston"
  std::string folder;  ///< folder under <root>/uci, e.g. "bostonHousing"
};

/// The nine datasets of the papers' UCI tables, in the papers' order.
const std::vector<UciInfo>& uci_catalogue();

/// Looks a dataset up by short name (or by its folder name); throws dkp::ConfigError listing the
/// known names when there is no such dataset.
const UciInfo& uci_info(const std::string& name);

/// Indices (0-based rows) of one train/test split.
struct SplitIndices {
  arma::uvec train;
  arma::uvec test;
};

/// A UCI dataset as stored: all rows, selected features and target, number of splits.
struct UciDataset {
  UciInfo info;
  std::filesystem::path dir;  ///< <root>/uci/<folder>/data
  arma::mat X;                ///< rows x features, original units
  arma::vec y;                ///< rows, original units
  size_t n_splits = 0;

  /// Reads and validates index_train_k.txt / index_test_k.txt (range, duplicates, overlap).
  SplitIndices split(size_t k) const;
};

/// Loads a dataset from the data root; throws dkp::DataError naming file and line on bad input.
UciDataset load_uci(const std::filesystem::path& root, const std::string& name);

/// Parses a whitespace-separated numeric table (blank lines skipped). Every row must have the
/// same number of fields and every value must be finite. Errors name file and line.
arma::mat read_table(const std::filesystem::path& path);

/// Reads a table of points (e.g. inputs to predict at): a CSV file (fields separated by commas,
/// whitespace around them ignored) or, when the file has no comma, a whitespace-separated table.
/// A first line whose first field is not a number holds column names and is skipped. Every row
/// must have the same number of fields, none empty, every value finite. Errors name file and line.
arma::mat read_points(const std::filesystem::path& path);

/// Reads one non-negative integer per non-blank line; errors name file and line.
std::vector<long long> read_index_file(const std::filesystem::path& path);

}  // namespace dkp::data
