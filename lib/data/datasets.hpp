// The dataset table: every dataset dkp runs on, the papers' and the user's own, with what the rest
// of dkp needs to know of it (kind, task, classes, splits, shapes for the estimate, folder, help).
// The papers' datasets are rows of builtin_datasets(); a user dataset is a small YAML file in
// <data root>/datasets/<name>.yaml (data/user_dataset.hpp) and becomes a row when looked up.
// Everything that lists, checks, loads or estimates a dataset reads it here.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace dkp::data {

enum class DatasetKind {
  Uci,     ///< Gal & Ghahramani layout under <root>/uci/<folder>/data (data/uci.hpp)
  Images,  ///< a fixed train/test split of images (data/mnist.hpp)
  Toy,     ///< the compositional paper's 1-D toy (data/toy.hpp), generated
  User,    ///< a CSV declared in <root>/datasets/<name>.yaml (data/user_dataset.hpp)
};

/// One dataset.
struct DatasetInfo {
  std::string name;  ///< the --dataset name
  DatasetKind kind = DatasetKind::Uci;
  std::string folder;   ///< Uci: folder under <root>/uci; Images: under <root>
  size_t classes = 0;   ///< 0: regression; C >= 2: classification over C classes
  int splits = 1;       ///< train/test splits (the toy: trials)
  size_t n_train = 0;   ///< training points of a split (the estimate's shapes)
  size_t n_test = 0;    ///< test points of a split
  size_t features = 0;  ///< input features
  std::string summary;  ///< one line for the help text
  /// User: the declaration's path and its fingerprint (the SHA-256 of the CSV's bytes, the
  /// columns, task and split rule), which joins the configuration hash (experiments/run_spec.hpp).
  std::filesystem::path declaration;
  std::string fingerprint;
};

/// The papers' datasets, in the order of the help text: the nine UCI sets, the image sets, the toy.
const std::vector<DatasetInfo>& builtin_datasets();

/// The built-in dataset `name` (or a UCI set's folder name), else the user dataset declared in
/// `root`/datasets/<name>.yaml, else nullptr. A declaration that exists but is bad is a
/// DataError naming its file and line.
std::optional<DatasetInfo> find_dataset(const std::string& name, const std::filesystem::path& root);
/// The same with the data root of $DKP_DATA and its fallbacks (data/root.hpp), where a grid or a
/// run spec checks a name; user datasets are found only when such a root exists.
std::optional<DatasetInfo> find_dataset(const std::string& name);
/// find_dataset or ConfigError listing the known names (and where user datasets are looked for).
DatasetInfo dataset_info(const std::string& name);
DatasetInfo dataset_info(const std::string& name, const std::filesystem::path& root);

/// The help text of --dataset: every built-in dataset and how to declare one's own.
std::string datasets_help();

}  // namespace dkp::data
