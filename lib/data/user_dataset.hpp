// User datasets: a CSV file of one's own data, declared in a small YAML file
// <data root>/datasets/<name>.yaml (docs/cli.md, "Your own data"):
//
//   file: friedman.csv          # relative to the YAML file's folder (or absolute)
//   task: regression            # regression | classification
//   target: y                   # the target column (regression) or the label column
//   features: [x1, x2, x3]      # optional: default every other column
//   splits: {kind: random, count: 5, test_fraction: 0.1, seed: 0}
//   # or {kind: kfold, count: 5, seed: 0}, or the Gal & Ghahramani layout's index files:
//   # {kind: index, count: 20, train: "index_train_{k}.txt", test: "index_test_{k}.txt"}
//
// The CSV has a header row of column names; fields are separated by commas or, when the header has
// none, by whitespace. Feature and regression target values must be finite numbers; class labels
// may be any text and are mapped to 0..C-1 in sorted order (numerically when all are numbers).
// Every error names the file, the line and the column, before any training.
#pragma once

#include <armadillo>
#include <filesystem>
#include <string>
#include <vector>

#include "data/standardise.hpp"
#include "data/uci.hpp"

namespace dkp::data {

/// How a user dataset is split into train and test sets.
struct SplitRule {
  std::string kind = "random";  ///< random | kfold | index
  int count = 5;                ///< number of splits
  double test_fraction = 0.1;   ///< random: the test share of the rows
  unsigned long long seed = 0;  ///< random, kfold: the permutation's seed
  std::string train_pattern;    ///< index: file names with {k} for the split
  std::string test_pattern;
  /// One line, e.g. "random:5:0.1:0", "kfold:5:0", "index:20:index_train_{k}.txt:..."
  std::string canonical() const;
};

/// A parsed declaration.
struct UserDatasetSpec {
  std::string name;
  std::filesystem::path declaration;  ///< the YAML file
  std::filesystem::path csv;          ///< resolved
  std::string task = "regression";
  std::string target;
  std::vector<std::string> features;  ///< empty: every column but the target
  SplitRule splits;
};

/// A loaded user dataset: the selected columns of every row.
struct UserDataset {
  UserDatasetSpec spec;
  std::vector<std::string> feature_names;
  arma::mat X;                      ///< rows x features
  arma::vec y;                      ///< regression: the target; classification: the class index
  std::vector<std::string> labels;  ///< classification: label text of class 0..C-1
  std::string csv_sha256;
  /// The rows of split k (0 <= k < count): random and kfold from the rule's seed, index from the
  /// files. DataError naming the file for a bad index file, ConfigError for k out of range.
  SplitIndices split(int k) const;
};

/// Reads and checks a declaration (keys, values, that the CSV exists); errors name file:line.
UserDatasetSpec read_user_dataset_spec(const std::filesystem::path& yaml_file);
/// Reads the CSV and checks it (columns present, values numeric and finite, at least two rows per
/// split side, at least two classes); errors name the CSV's file, line and column.
UserDataset load_user_dataset(const UserDatasetSpec& spec);
/// The dataset's fingerprint: SHA-256 over the CSV's bytes, the task, the columns and the split
/// rule (and index files), the first 16 hex characters; it joins the configuration hash.
std::string user_dataset_fingerprint(const UserDatasetSpec& spec);
/// SHA-256 of a run's data (the manifest's data_sha256): the fingerprint's full digest and split k.
std::string user_split_sha256(const UserDatasetSpec& spec, int k);
/// Split k, standardised with the training rows' statistics or as `scaling` says
/// (classification: inputs only, the class indices unchanged).
RegressionSplit user_split(const UserDataset& ds, int k, Scaling scaling = Scaling::train);

/// Writes the example user datasets into `dest`/datasets/ (dkp data example): friedman (Friedman's
/// regression function #1 of five uniform inputs plus unit Gaussian noise, 400 rows, 5 random
/// splits) and rings (three noisy concentric rings in 2-D, 300 rows, labels inner/middle/outer,
/// 5-fold), each a CSV and its declaration, generated from fixed seeds. Returns their names.
std::vector<std::string> write_example_datasets(const std::filesystem::path& dest);

}  // namespace dkp::data
