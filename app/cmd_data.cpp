// dkp data list | verify
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli.hpp"
#include "data/checksums.hpp"
#include "data/mnist.hpp"
#include "data/root.hpp"
#include "data/uci.hpp"
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
  try {
    const auto m = data::load_mnist(root);
    std::cout << fmt::format("{:<9} {:<28} {:>6} {:>8} {:>6} {:>12}\n", "mnist", "mnist",
                             m.train.X.n_rows + m.test.X.n_rows, m.train.X.n_cols, 1,
                             fmt::format("{}/{}", m.train.X.n_rows, m.test.X.n_rows));
  } catch (const DataError& e) {
    ++missing;
    std::cout << fmt::format("{:<9} {:<28} unavailable: {}\n", "mnist", "mnist", e.what());
  }
  return missing == 0 ? kExitOk : kExitError;
}

int data_verify(const std::filesystem::path& root, const std::string& only) {
  const auto entries = data::parse_checksums(data::embedded_sha256sums());
  const auto report = data::verify_checksums(root, entries, only);
  for (const auto& p : report.missing) std::cout << "MISSING   " << p << "\n";
  for (const auto& p : report.mismatched) std::cout << "MISMATCH  " << p << "\n";
  std::cout << fmt::format("{}: {} files OK, {} missing, {} mismatched\n", root.string(), report.ok,
                           report.missing.size(), report.mismatched.size());
  return report.passed() ? kExitOk : kExitError;
}

}  // namespace

int cmd_data(const std::vector<std::string>& args) {
  po::options_description desc = common_options();
  desc.add_options()("only", po::value<std::string>()->default_value(""),
                     "verify: only paths under this prefix (e.g. uci/yacht, mnist)")(
      "action", po::value<std::string>(), "list | verify");
  po::positional_options_description pos;
  pos.add("action", 1);
  po::variables_map vm;
  if (!parse_or_help(args, desc, pos, vm, "dkp data list|verify [--data DIR] [--only PREFIX]"))
    return kExitOk;
  if (!vm.count("action")) throw UsageError("missing action: list or verify");
  const auto action = vm["action"].as<std::string>();
  if (action != "list" && action != "verify")
    throw UsageError(fmt::format("unknown action '{}': expected list or verify", action));
  const auto root = data::resolve_data_root(vm["data"].as<std::string>());
  if (action == "list") return data_list(root);
  return data_verify(root, vm["only"].as<std::string>());
}

}  // namespace dkp::cli
