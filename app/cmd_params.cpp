// dkp params: what a trained run learned. One row per parameter (shape, values on the scale the
// model uses them, so that a variance is shown positive whatever its stored form, and how far
// training moved it from its initial value), or one parameter's values as CSV, or all rows as
// JSON.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli.hpp"
#include "experiments/run_setup.hpp"
#include "training/param_summary.hpp"
#include "util/error.hpp"

namespace dkp::cli {

namespace {

po::options_description params_options() {
  po::options_description d("Params options");
  // clang-format off
  d.add_options()
    ("run", po::value<std::string>(), "run directory of `dkp run` (manifest.json, checkpoint.bin)")
    ("name", po::value<std::string>(),
     "only the parameters whose names start with this prefix (e.g. layer2. or likelihood)")
    ("csv", po::value<std::string>(),
     "print this parameter's values as CSV (one line per row, on the scale shown in the table: "
     "exp of log_* and L_scale, logistic of logit_*, softplus(u) + 1e-6 of the SGP's and DSVI DGP's "
     "kern.variance, kern.lengthscales, kern.white and likelihood.variance)")
    ("json", po::bool_switch(), "print the table as JSON");
  // clang-format on
  return d;
}

}  // namespace

int cmd_params(const std::vector<std::string>& args) {
  po::options_description desc = common_options();
  desc.add(params_options());
  po::positional_options_description pos;
  pos.add("run", 1);
  po::variables_map vm;
  const std::string usage = "dkp params --run DIR [--name PREFIX | --csv NAME | --json]";
  if (!parse_or_help(args, desc, pos, vm, usage)) return kExitOk;
  if (!vm.count("run")) throw UsageError("--run is required");
  if (vm.count("csv") && (vm.count("name") || vm["json"].as<bool>())) {
    throw UsageError("--csv prints one parameter: it does not go with --name or --json");
  }
  const experiments::TrainedRun tr =
      experiments::load_trained_run(vm["run"].as<std::string>(), vm["data"].as<std::string>());
  const training::ParameterSet& trained = tr.checkpoint.params;
  if (vm.count("csv")) {
    const std::string name = vm["csv"].as<std::string>();
    const auto it = trained.find(name);
    if (it == trained.end()) {
      std::string known;
      for (const auto& [n, v] : trained) known += (known.empty() ? "" : ", ") + n;
      throw UsageError(fmt::format("--csv: no parameter '{}' (the run's: {})", name, known));
    }
    std::cout << training::parameter_csv(name, it->second);
    return kExitOk;
  }
  std::vector<training::ParamSummary> rows =
      training::summarise_parameters(trained, tr.model->initial_parameters());
  if (vm.count("name")) {
    const std::string prefix = vm["name"].as<std::string>();
    std::erase_if(rows, [&](const auto& r) { return r.name.rfind(prefix, 0) != 0; });
    if (rows.empty()) {
      throw UsageError(fmt::format("--name: no parameter name starts with '{}'", prefix));
    }
  }
  if (vm["json"].as<bool>()) {
    std::cout << training::parameters_json(rows).dump() << "\n";
    return kExitOk;
  }
  const auto& s = tr.spec;
  std::cout << fmt::format("{}: {} split {}; {}; trained parameters at step {} of {}\n",
                           vm["run"].as<std::string>(), s.dataset, s.split, tr.model->describe(),
                           tr.checkpoint.step, s.protocol.steps);
  std::cout << training::parameters_table(rows);
  std::cout << "(min / mean / max of the values as the model uses them; ||theta|| and moved "
               "(||theta - theta_0||, theta_0 the initial value) on the stored values)\n";
  return kExitOk;
}

}  // namespace dkp::cli
