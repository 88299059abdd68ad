// dkp data list | verify | baseline
#include <algorithm>
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli.hpp"
#include "data/checksums.hpp"
#include "data/datasets.hpp"
#include "data/mnist.hpp"
#include "data/root.hpp"
#include "data/standardise.hpp"
#include "data/uci.hpp"
#include "data/user_dataset.hpp"
#include "eval/metrics.hpp"
#include "util/error.hpp"

namespace dkp::cli {

namespace {

int data_list(const std::filesystem::path& root) {
  std::cout << fmt::format("data root: {}\n", root.string());
  std::cout << fmt::format("{:<9} {:<28} {:>6} {:>8} {:>6} {:>12}\n", "dataset", "folder", "rows",
                           "features", "splits", "train/test");
  int missing = 0;
  for (const auto& info : data::uci_catalogue()) {
    try {
      const auto ds = data::load_uci(root, info.name);
      // Report the train/test sizes; when they differ across splits, show the range.
      size_t tr_min = SIZE_MAX, tr_max = 0, te_min = SIZE_MAX, te_max = 0;
      for (size_t k = 0; k < ds.n_splits; ++k) {
        const auto s = ds.split(k);
        tr_min = std::min<size_t>(tr_min, s.train.n_elem);
        tr_max = std::max<size_t>(tr_max, s.train.n_elem);
        te_min = std::min<size_t>(te_min, s.test.n_elem);
        te_max = std::max<size_t>(te_max, s.test.n_elem);
      }
      const std::string sizes = tr_min == tr_max && te_min == te_max
                                    ? fmt::format("{}/{}", tr_min, te_min)
                                    : fmt::format("{}-{}/{}-{}", tr_min, tr_max, te_min, te_max);
      std::cout << fmt::format("{:<9} {:<28} {:>6} {:>8} {:>6} {:>12}\n", info.name, info.folder,
                               ds.X.n_rows, ds.X.n_cols, ds.n_splits, sizes);
    } catch (const DataError& e) {
      ++missing;
      std::cout << fmt::format("{:<9} {:<28} unavailable: {}\n", info.name, info.folder, e.what());
    }
  }
  // The image sets, one train/test split each. Rectangle-Images and CIFAR-10 are not in the shared
  // data: each is listed when its folder exists (data-scripts/fetch_rectangles.sh,
  // fetch_cifar10.sh), never counted as missing.
  for (const char* name : {"mnist", "rectangles", "cifar10"}) {
    if (data::optional_dataset_missing(root, name)) {
      std::cout << fmt::format("{:<9} {:<28} {}\n", name, name, data::not_installed_note(name));
      continue;
    }
    try {
      const auto m = data::load_images(root, name);
      std::cout << fmt::format("{:<9} {:<28} {:>6} {:>8} {:>6} {:>12}\n", name, name,
                               m.train.X.n_rows + m.test.X.n_rows, m.train.X.n_cols, 1,
                               fmt::format("{}/{}", m.train.X.n_rows, m.test.X.n_rows));
    } catch (const DataError& e) {
      ++missing;
      std::cout << fmt::format("{:<9} {:<28} unavailable: {}\n", name, name, e.what());
    }
  }
  return missing == 0 ? kExitOk : kExitError;
}

int data_verify(const std::filesystem::path& root, const std::string& only) {
  // Optional data (CIFAR-10) whose folder is absent is not installed, not missing: its files are
  // left out and said so, unless --only asks for them; installed, every file of it is checked.
  std::vector<data::ChecksumEntry> entries;
  std::vector<std::string> not_installed;
  for (auto& e : data::parse_checksums(data::embedded_sha256sums())) {
    const std::string dataset = e.path.substr(0, e.path.find('/'));
    if (only.empty() && data::optional_dataset_missing(root, dataset)) {
      if (std::find(not_installed.begin(), not_installed.end(), dataset) == not_installed.end())
        not_installed.push_back(dataset);
      continue;
    }
    entries.push_back(std::move(e));
  }
  for (const auto& d : not_installed)
    std::cout << fmt::format("{:<9} {}\n", d, data::not_installed_note(d));
  const auto report = data::verify_checksums(root, entries, only);
  for (const auto& p : report.missing) std::cout << "MISSING   " << p << "\n";
  for (const auto& p : report.mismatched) std::cout << "MISMATCH  " << p << "\n";
  std::cout << fmt::format("{}: {} files OK, {} missing, {} mismatched\n", root.string(), report.ok,
                           report.missing.size(), report.mismatched.size());
  return report.passed() ? kExitOk : kExitError;
}

// The model that learned nothing: every test point predicted by N(training mean, training
// variance) of the target (in standardised units N(0, 1)), in the papers' conventions (test LL
// per point in original units, RMSE), mean and standard error over the splits. A model whose
// test LL sits at this value has not learned from the inputs.
int data_baseline(const std::filesystem::path& root, const std::string& only) {
  std::cout << fmt::format("{:<9} {:>6} {:>18} {:>18}\n", "dataset", "splits", "test_ll",
                           "test_rmse");
  bool any = false;
  for (const auto& info : data::uci_catalogue()) {
    if (!only.empty() && only != info.name) continue;
    any = true;
    const auto ds = data::load_uci(root, info.name);
    arma::vec ll(ds.n_splits), rmse(ds.n_splits);
    for (size_t k = 0; k < ds.n_splits; ++k) {
      const data::RegressionSplit split = data::make_regression_split(ds, k);
      const arma::uword n = split.y_test.n_elem;
      const eval::RegressionMetrics m =
          eval::regression_metrics(arma::zeros(n, 1), arma::ones(n, 1), split.y_test, split.y_std);
      ll[k] = m.test_ll;
      rmse[k] = m.test_rmse;
    }
    auto cell = [&](const arma::vec& v) {
      const double se = v.n_elem > 1 ? arma::stddev(v) / std::sqrt(double(v.n_elem)) : 0.0;
      return fmt::format("{:.3f} +- {:.3f}", arma::mean(v), se);
    };
    std::cout << fmt::format("{:<9} {:>6} {:>18} {:>18}\n", info.name, ds.n_splits, cell(ll),
                             cell(rmse));
  }
  if (!any) {
    throw ConfigError(fmt::format("--only '{}': no such UCI dataset (see dkp data list)", only));
  }
  return kExitOk;
}

// dkp data describe NAME: a dataset's row of the dataset table; for a user dataset also its
// columns, target or classes and splits, read from its files.
int data_describe(const std::filesystem::path& root, const std::string& name) {
  const data::DatasetInfo info = data::dataset_info(name, root);
  std::cout << fmt::format("{}: {}\n", info.name, info.summary);
  std::cout << fmt::format(
      "  task: {}; {} splits; split 0: {} training, {} test points; {} "
      "features\n",
      info.classes ? fmt::format("classification, {} classes", info.classes)
                   : std::string("regression"),
      info.splits, info.n_train, info.n_test, info.features);
  if (info.kind != data::DatasetKind::User) return kExitOk;
  const data::UserDatasetSpec spec = data::read_user_dataset_spec(info.declaration);
  const data::UserDataset ds = data::load_user_dataset(spec);
  std::cout << fmt::format("  declared in {}\n  file {} ({} rows), SHA-256 {}\n",
                           info.declaration.string(), spec.csv.string(), ds.X.n_rows,
                           ds.csv_sha256);
  std::string features;
  for (const auto& f : ds.feature_names) features += (features.empty() ? "" : ", ") + f;
  std::cout << "  features: " << features << "\n";
  if (ds.labels.empty()) {
    std::cout << fmt::format("  target {}: mean {:.6g}, sd {:.6g}, min {:.6g}, max {:.6g}\n",
                             spec.target, arma::mean(ds.y), arma::stddev(ds.y), ds.y.min(),
                             ds.y.max());
  } else {
    std::cout << fmt::format("  labels of {} (class: label, rows):", spec.target);
    for (size_t c = 0; c < ds.labels.size(); ++c) {
      std::cout << fmt::format(" {}: {} ({})", c, ds.labels[c], arma::accu(ds.y == double(c)));
    }
    std::cout << "\n";
  }
  std::cout << fmt::format("  splits {}, fingerprint {} (joins the configuration hash):\n",
                           spec.splits.canonical(), info.fingerprint);
  for (int k = 0; k < spec.splits.count; ++k) {
    const auto s = ds.split(k);
    std::cout << fmt::format("    split {}: {} train, {} test\n", k, s.train.n_elem, s.test.n_elem);
  }
  return kExitOk;
}

}  // namespace

int cmd_data(const std::vector<std::string>& args) {
  po::options_description desc = common_options();
  desc.add_options()(
      "only", po::value<std::string>()->default_value(""),
      "verify: only paths under this prefix (e.g. uci/yacht, mnist, cifar10); baseline: "
      "only this dataset (e.g. yacht)")("action", po::value<std::string>(),
                                        "list | verify | baseline | describe | example")(
      "name", po::value<std::string>(), "describe: the dataset")(
      "dest", po::value<std::string>(),
      "example: write the example datasets into DIR/datasets/ (friedman, rings)");
  po::positional_options_description pos;
  pos.add("action", 1);
  pos.add("name", 1);
  po::variables_map vm;
  if (!parse_or_help(args, desc, pos, vm,
                     "dkp data list|verify|baseline [--data DIR] [--only PREFIX|NAME]\n"
                     "       dkp data describe NAME [--data DIR]\n"
                     "       dkp data example --dest DIR"))
    return kExitOk;
  if (!vm.count("action")) {
    throw UsageError("missing action: list, verify, baseline, describe or example");
  }
  const auto action = vm["action"].as<std::string>();
  if (action != "list" && action != "verify" && action != "baseline" && action != "describe" &&
      action != "example") {
    throw UsageError(fmt::format(
        "unknown action '{}': expected list, verify, baseline, describe or example", action));
  }
  if (action != "describe" && vm.count("name")) {
    throw UsageError(fmt::format("unexpected argument '{}'", vm["name"].as<std::string>()));
  }
  if (action == "example") {
    if (!vm.count("dest")) throw UsageError("example needs --dest DIR");
    const std::filesystem::path dest = vm["dest"].as<std::string>();
    for (const auto& n : data::write_example_datasets(dest)) {
      std::cout << fmt::format("{}: {}\n", n, (dest / "datasets" / (n + ".yaml")).string());
    }
    return kExitOk;
  }
  const auto root = data::resolve_data_root(vm["data"].as<std::string>());
  if (action == "describe") {
    if (!vm.count("name")) throw UsageError("describe needs a dataset name");
    return data_describe(root, vm["name"].as<std::string>());
  }
  if (action == "list") return data_list(root);
  if (action == "baseline") return data_baseline(root, vm["only"].as<std::string>());
  return data_verify(root, vm["only"].as<std::string>());
}

}  // namespace dkp::cli
