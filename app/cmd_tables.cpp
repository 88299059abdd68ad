// dkp tables FILE|DIR: aggregate result.json files into the papers' tables (LaTeX and CSV),
// each cell beside the paper's printed value.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli.hpp"
#include "experiments/grid.hpp"
#include "experiments/store.hpp"
#include "experiments/tables_job.hpp"
#include "report/reference.hpp"
#include "util/error.hpp"

namespace dkp::cli {

int cmd_tables(const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  namespace ex = dkp::experiments;
  po::options_description desc = common_options();
  desc.add_options()("input", po::value<std::string>(),
                     "a grid file, a directory of grid files, or a results root holding grid "
                     "snapshots (written by dkp grid plan/run)")(
      "out", po::value<std::string>()->default_value("results/tables"), "output directory")(
      "profile", po::value<std::string>()->default_value("full"),
      "profile of grid files (snapshots carry their own)")(
      "results", po::value<std::string>()->default_value("results/runs"),
      "results root for grid files")("reference",
                                     po::value<std::string>()->default_value("results/reference"),
                                     "directory of the papers' reference CSVs");
  po::positional_options_description pos;
  pos.add("input", 1);
  po::variables_map vm;
  if (!parse_or_help(args, desc, pos, vm,
                     "dkp tables FILE|DIR [--out DIR] [--profile P] [--results DIR] "
                     "[--reference DIR]")) {
    return kExitOk;
  }
  if (!vm.count("input")) throw UsageError("missing grid file or directory");
  const fs::path input = vm["input"].as<std::string>();
  const fs::path results = vm["results"].as<std::string>();
  const fs::path ref_dir = vm["reference"].as<std::string>();

  std::vector<std::pair<ex::Grid, fs::path>> grids;  // grid, results root
  std::error_code ec;
  if (fs::is_directory(input, ec)) {
    for (auto& g : ex::load_grid_snapshots(input)) grids.emplace_back(std::move(g), input);
    if (grids.empty()) {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(input, ec)) {
        if (e.path().extension() == ".yaml" || e.path().extension() == ".yml") {
          files.push_back(e.path());
        }
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) {
        grids.emplace_back(ex::load_grid(f, vm["profile"].as<std::string>()), results);
      }
    }
    if (grids.empty()) {
      throw ConfigError(
          fmt::format("{}: no grid snapshots (<grid>/snapshot-<profile>.yaml, "
                      "written by dkp grid plan/run) and no grid files",
                      input.string()));
    }
  } else if (fs::exists(input, ec)) {
    grids.emplace_back(ex::load_grid(input, vm["profile"].as<std::string>()), results);
  } else {
    throw ConfigError(fmt::format("{}: no such file or directory", input.string()));
  }

  const auto refs = report::load_reference_dir(ref_dir);
  if (refs.empty()) {
    spdlog::warn("no reference values in '{}': the paper columns stay empty (see --reference)",
                 ref_dir.string());
  }
  const fs::path out = vm["out"].as<std::string>();
  for (const auto& [grid, root] : grids) {
    const auto tables = ex::grid_tables(grid, root, refs);
    ex::write_tables(tables, out);
    for (const auto& t : tables) {
      int entries = 0, agree = 0, disagree = 0;
      for (const auto& r : t.rows) {
        for (const auto& e : r.entries) {
          ++entries;
          agree += e.agree == "yes";
          disagree += e.agree == "no";
        }
      }
      std::cout << fmt::format("{}: {} rows, {} cells ({} incomplete; agree {}, disagree {})\n",
                               (out / (t.spec.name + ".tex")).string(), t.rows.size(), entries,
                               t.incomplete(), agree, disagree);
    }
  }
  return kExitOk;
}

}  // namespace dkp::cli
