#include "data/datasets.hpp"

#include <map>
#include <mutex>
#include <tuple>

#include <fmt/format.h>

#include "data/root.hpp"
#include "data/toy.hpp"
#include "data/user_dataset.hpp"
#include "util/error.hpp"

namespace dkp::data {

namespace fs = std::filesystem;

namespace {

// One row of the table.
DatasetInfo row(const char* name, DatasetKind kind, const char* folder, size_t classes, int splits,
                size_t n_train, size_t n_test, size_t features, std::string summary) {
  DatasetInfo d;
  d.name = name;
  d.kind = kind;
  d.folder = folder;
  d.classes = classes;
  d.splits = splits;
  d.n_train = n_train;
  d.n_test = n_test;
  d.features = features;
  d.summary = std::move(summary);
  return d;
}

DatasetInfo uci(const char* name, const char* folder, int splits, size_t n_train, size_t n_test,
                size_t features) {
  return row(
      name, DatasetKind::Uci, folder, 0, splits, n_train, n_test, features,
      fmt::format("UCI regression, {} features, {} splits (Gal & Ghahramani)", features, splits));
}

DatasetInfo images(const char* name, size_t classes, size_t n_train, size_t n_test, size_t features,
                   const char* summary) {
  return row(name, DatasetKind::Images, name, classes, 1, n_train, n_test, features, summary);
}

// User datasets already read, by declaration path, with the files' times and sizes: a
// declaration or CSV that changes is read again.
using Stamp = std::tuple<fs::file_time_type, uintmax_t, fs::file_time_type, uintmax_t>;

DatasetInfo user_info(const fs::path& yaml) {
  // Read again only when the declaration or its CSV changed (times and sizes).
  struct Entry {
    Stamp stamp;
    fs::path csv;
    DatasetInfo info;
  };
  static std::mutex mutex;
  static std::map<std::string, Entry> cache;
  const auto stamp_of = [](const fs::path& y, const fs::path& csv) {
    return Stamp{fs::last_write_time(y), fs::file_size(y), fs::last_write_time(csv),
                 fs::file_size(csv)};
  };
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = cache.find(yaml.string());
    std::error_code ec;
    if (it != cache.end() && fs::exists(it->second.csv, ec) &&
        it->second.stamp == stamp_of(yaml, it->second.csv)) {
      return it->second.info;
    }
  }
  const UserDatasetSpec spec = read_user_dataset_spec(yaml);
  const Stamp stamp = stamp_of(yaml, spec.csv);
  const UserDataset ds = load_user_dataset(spec);
  DatasetInfo d;
  d.name = spec.name;
  d.kind = DatasetKind::User;
  d.classes = ds.labels.size();
  d.splits = spec.splits.count;
  const SplitIndices s0 = ds.split(0);
  d.n_train = s0.train.n_elem;
  d.n_test = s0.test.n_elem;
  d.features = ds.X.n_cols;
  d.declaration = yaml;
  d.fingerprint = user_dataset_fingerprint(spec);
  d.summary = fmt::format("your {}: {} ({} rows, {} features{}), {} splits ({})", spec.task,
                          spec.csv.filename().string(), ds.X.n_rows, ds.X.n_cols,
                          d.classes ? fmt::format(", {} classes", d.classes) : std::string(),
                          d.splits, spec.splits.canonical());
  std::lock_guard<std::mutex> lock(mutex);
  cache[yaml.string()] = {stamp, spec.csv, d};
  return d;
}

// The built-in dataset of a name (or a UCI set's folder name).
const DatasetInfo* find_builtin(const std::string& name) {
  for (const auto& d : builtin_datasets()) {
    if (d.name == name || (d.kind == DatasetKind::Uci && d.folder == name)) return &d;
  }
  return nullptr;
}

ConfigError unknown_dataset(const std::string& name, const std::string& declared_in) {
  std::string known;
  for (const auto& d : builtin_datasets()) {
    if (!known.empty()) known += ", ";
    known += d.name;
  }
  return ConfigError(fmt::format(
      "unknown dataset '{}' (known: {}; or your own, declared in {}: docs/cli.md, \"Your own "
      "data\")",
      name, known, declared_in));
}

}  // namespace

const std::vector<DatasetInfo>& builtin_datasets() {
  // UCI shapes: the Gal & Ghahramani splits (90% training); data-scripts/README.md lists the sets.
  static const std::vector<DatasetInfo> table = [] {
    std::vector<DatasetInfo> t = {
        uci("boston", "bostonHousing", 20, 455, 51, 13),
        uci("concrete", "concrete", 20, 927, 103, 8),
        uci("energy", "energy", 20, 691, 77, 8),
        uci("kin8nm", "kin8nm", 20, 7373, 819, 8),
        uci("naval", "naval-propulsion-plant", 20, 10741, 1193, 16),
        uci("power", "power-plant", 20, 8611, 957, 4),
        uci("protein", "protein-tertiary-structure", 5, 41157, 4573, 9),
        uci("wine", "wine-quality-red", 20, 1439, 160, 11),
        uci("yacht", "yacht", 20, 277, 31, 6),
        images("mnist", 10, 60000, 10000, 784, "MNIST digits, 10 classes, one train/test split"),
        images("rectangles", 2, 12000, 50000, 784,
               "Rectangle-Images, 2 classes (optional: data-scripts/fetch_rectangles.sh)"),
        images("cifar10", 10, 50000, 10000, 3072,
               "CIFAR-10, 10 classes (optional: data-scripts/fetch_cifar10.sh)"),
    };
    t.push_back(row(kToyDataset, DatasetKind::Toy, "", 0, kToyTrials, kToyPoints, kToyTestPoints, 1,
                    "the compositional paper's 1-D toy (for --model cdgp); its splits are trials"));
    return t;
  }();
  return table;
}

std::optional<DatasetInfo> find_dataset(const std::string& name, const fs::path& root) {
  if (const DatasetInfo* d = find_builtin(name)) return *d;
  if (name.empty() || name.find('/') != std::string::npos || name[0] == '.') return std::nullopt;
  const fs::path yaml = root / "datasets" / (name + ".yaml");
  if (!fs::is_regular_file(yaml)) return std::nullopt;
  return user_info(yaml);
}

std::optional<DatasetInfo> find_dataset(const std::string& name) {
  if (const DatasetInfo* d = find_builtin(name)) return *d;
  fs::path root;
  try {
    root = resolve_data_root("");
  } catch (const DataError&) {
    return std::nullopt;  // no data root: no user datasets
  }
  return find_dataset(name, root);
}

DatasetInfo dataset_info(const std::string& name) {
  if (auto d = find_dataset(name)) return *d;
  throw unknown_dataset(name, "<data root>/datasets/" + name + ".yaml");
}

DatasetInfo dataset_info(const std::string& name, const fs::path& root) {
  if (auto d = find_dataset(name, root)) return *d;
  throw unknown_dataset(name, (root / "datasets" / (name + ".yaml")).string());
}

std::string datasets_help() {
  std::string out = "Datasets (--dataset):\n";
  for (const auto& d : builtin_datasets()) out += fmt::format("  {:<11} {}\n", d.name, d.summary);
  out +=
      "  NAME        your own CSV, declared in <data root>/datasets/NAME.yaml (docs/cli.md, "
      "\"Your own data\"; `dkp data describe NAME`)\n";
  return out;
}

}  // namespace dkp::data
