// dkp toy: Figure 5 of the compositional-uncertainty paper (Ustyuzhaninov et al. 2020, section
// 5) and variations of its protocol outside the grid (experiments::run_toy_study): two-layer DGPs
// (SE then periodic kernel) on the 1-D toy data, with the mean-field (DSVI), jointly Gaussian and
// inducing-locations posteriors, several trials each; ELBO and the marginal variances of the two
// layers' functions at x = 0, beside the paper's Table 1. The paper's Table 1 itself is the grid
// experiments/toy.yaml (the toy is a dataset of `dkp run` and the store).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli.hpp"
#include "experiments/lr_schedule.hpp"
#include "experiments/toy_study.hpp"
#include "models/cdgp.hpp"
#include "models/options.hpp"
#include "report/reference.hpp"
#include "report/svg.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace dkp::cli {

namespace fs = std::filesystem;

namespace {

std::string metric_name(size_t i) {
  return i == 0 ? "elbo_total" : fmt::format("var_f{}_at_0", i);
}

}  // namespace

int cmd_toy(const std::vector<std::string>& args) {
  po::options_description desc = common_options();
  // clang-format off
  desc.add_options()
    ("posterior", po::value<std::vector<std::string>>()->multitoken()
       ->default_value({"dsvi", "jointly-gaussian", "inducing-locations"},
                       "dsvi jointly-gaussian inducing-locations"),
     "approximate posteriors: dsvi (mean field), jointly-gaussian, inducing-locations")
    ("trials", po::value<long>()->default_value(10), "trials per posterior (the paper: 10)")
    ("steps", po::value<long>()->default_value(30000),
     "Adam steps (reference notebook: 3 x 10000 at a constant rate)")
    ("lr", po::value<double>()->default_value(1e-3), "Adam learning rate (constant)")
    ("beta-schedule", po::value<std::string>()->default_value("0:1e8"),
     "inducing-locations: the prior jitter's precision beta from each step on, STEP:BETA,... "
     "(the reference notebook feeds 1e8 throughout; e.g. 0:1e2,10000:1e5,20000:1e8 starts with "
     "more jitter)")
    ("marginalise", po::value<std::string>()->default_value("analytic"),
     "jointly-gaussian: the inducing outputs integrated out analytically (the paper's eqs. "
     "15-17, as the grid's cells) | sample (drawn with every sample, the reference notebook's)")
    ("samples", po::value<long>()->default_value(10), "Monte Carlo samples per step (S = 10)")
    ("inducing", po::value<long>()->default_value(10), "inducing points per layer (M = 10)")
    ("depth", po::value<long>()->default_value(2), "layers (the paper: 2)")
    ("points", po::value<long>()->default_value(50), "toy data points (N = 50)")
    ("noise-std", po::value<double>()->default_value(0.01),
     "noise of the data and the model's fixed likelihood noise")
    ("last-kernel", po::value<std::string>()->default_value("periodic"), "periodic | se")
    ("elbo-samples", po::value<long>()->default_value(1000),
     "samples of the final ELBO estimate")
    ("var-samples", po::value<long>()->default_value(10000),
     "samples of each layer's function at x = 0 for Var[f_l(0)]")
    ("figure-samples", po::value<long>()->default_value(25),
     "samples per layer on a grid for Figure 5 (trial 0; 0: none)")
    ("seed", po::value<uint64_t>()->default_value(0), "master seed (data, then one stream per trial)")
    ("threads", po::value<int>()->default_value(1), "threads sharing each step's samples")
    ("jobs,j", po::value<int>()->default_value(1), "trials trained at once (the same numbers for any)")
    ("reference", po::value<std::string>()->default_value(
       "results/reference/dgp-compositional-uncertainty.csv"), "the paper's values (CSV)")
    ("out", po::value<std::string>(),
     "output directory (required): compositional-table1.csv and .tex (the table), "
     "compositional-trials.csv "
     "(every trial), compositional-figure5.csv and .svg (layer samples on a grid)");
  // clang-format on
  po::positional_options_description pos;
  po::variables_map vm;
  if (!parse_or_help(args, desc, pos, vm, "dkp toy [--posterior P ...] [--trials T] [options]"))
    return kExitOk;
  const auto posteriors = vm["posterior"].as<std::vector<std::string>>();
  for (const auto& p : posteriors) {
    if (!models::is_cdgp_posterior(p)) {
      throw UsageError(
          fmt::format("--posterior '{}': dsvi, jointly-gaussian or inducing-locations", p));
    }
  }
  const long trials = vm["trials"].as<long>(), steps = vm["steps"].as<long>();
  const long S = vm["samples"].as<long>(), M = vm["inducing"].as<long>();
  const long depth = vm["depth"].as<long>(), N = vm["points"].as<long>();
  const long elbo_samples = vm["elbo-samples"].as<long>();
  const long var_samples = vm["var-samples"].as<long>();
  const long fig_samples = vm["figure-samples"].as<long>();
  const double lr = vm["lr"].as<double>(), noise_std = vm["noise-std"].as<double>();
  const int threads = vm["threads"].as<int>(), jobs = vm["jobs"].as<int>();
  const std::string last_kernel = vm["last-kernel"].as<std::string>();
  std::vector<experiments::LrPoint> beta_schedule;
  try {
    beta_schedule = experiments::parse_lr_schedule(vm["beta-schedule"].as<std::string>());
  } catch (const ConfigError& e) {
    throw UsageError(fmt::format("--beta-schedule: {}", e.what()));
  }
  if (beta_schedule.back().step >= steps)
    throw UsageError(fmt::format("--beta-schedule: a change at step {}, not before --steps {}",
                                 beta_schedule.back().step, steps));
  if (trials < 1 || steps < 1 || S < 1 || M < 1 || depth < 1 || N < 2 || elbo_samples < 1 ||
      var_samples < 2 || fig_samples < 0 || threads < 1 || jobs < 1) {
    throw UsageError(
        "--trials, --steps, --samples, --inducing, --depth, --elbo-samples, --threads and --jobs "
        "must be at least 1, --points and --var-samples at least 2, --figure-samples at least 0");
  }
  if (!(lr > 0.0) || !(noise_std > 0.0)) throw UsageError("--lr and --noise-std must be positive");
  // The model option's own choices and message (models/options.cpp), as a usage error.
  std::string marginalise;
  try {
    marginalise = models::canonical_value(models::option_decl(models::opt::kMarginalise),
                                          vm["marginalise"].as<std::string>(), "--marginalise");
  } catch (const ConfigError& e) {
    throw UsageError(e.what());
  }
  if (last_kernel != "periodic" && last_kernel != "se")
    throw UsageError(fmt::format("--last-kernel '{}': periodic or se", last_kernel));
  std::vector<report::RefRow> refs;
  const fs::path ref_path = vm["reference"].as<std::string>();
  if (fs::exists(ref_path))
    refs = report::load_reference_csv(ref_path);
  else
    spdlog::warn("no reference values at {}: the table shows ours only", ref_path.string());
  if (!vm.count("out")) {
    throw UsageError(
        "--out DIR is required (the paper's Table 1 is the grid experiments/toy.yaml, written to "
        "results/tables by `dkp tables`)");
  }
  const fs::path out = vm["out"].as<std::string>();
  fs::create_directories(out);

  experiments::ToyStudyOptions so;
  so.posteriors = posteriors;
  so.trials = size_t(trials);
  so.steps = size_t(steps);
  so.lr = lr;
  so.samples = size_t(S);
  so.inducing = size_t(M);
  so.depth = size_t(depth);
  so.points = size_t(N);
  so.noise_std = noise_std;
  so.last_periodic = last_kernel == "periodic";
  so.beta_schedule = beta_schedule;
  so.analytic = marginalise == "analytic";
  so.elbo_samples = size_t(elbo_samples);
  so.var_samples = size_t(var_samples);
  so.figure_samples = size_t(fig_samples);
  so.seed = vm["seed"].as<uint64_t>();
  so.threads = size_t(threads);
  so.jobs = size_t(jobs);
  so.scratch = out;
  const experiments::ToyStudy study = experiments::run_toy_study(so);
  const auto& results = study.trials;
  const auto& data = study.data;
  const arma::vec& grid = study.grid;

  // Figure 5: its samples as CSV, and drawn (a row per posterior: f_1, ..., f_L, composition).
  std::string figure = "posterior,layer,sample,x,f\n";
  std::vector<report::PlotPanel> panels;
  for (const auto& trial : results) {
    const std::string& posterior = trial.posterior;
    for (size_t l = 0; l < trial.figure.size(); ++l) {
      const arma::mat& F = trial.figure[l];
      const bool comp = l + 1 == trial.figure.size();
      const std::string layer = comp ? "composition" : std::to_string(l + 1);
      report::PlotPanel panel;
      panel.title = comp ? posterior + ": f(x)" : fmt::format("{}: f{}(x)", posterior, l + 1);
      panel.x = grid;
      for (arma::uword s = 0; s < F.n_cols; ++s) {
        panel.curves.push_back(F.col(s));
        for (arma::uword i = 0; i < F.n_rows; ++i)
          figure +=
              fmt::format("{},{},{},{:.17g},{:.17g}\n", posterior, layer, s, grid[i], F(i, s));
      }
      if (comp) {
        panel.px = data.X.col(0);
        panel.py = data.y;
      }
      panels.push_back(std::move(panel));
    }
  }

  // Per trial, then the table: mean +- sd over the trials, as the paper prints it.
  std::string trials_csv = "posterior,trial,elbo";
  for (long l = 1; l <= depth; ++l) trials_csv += fmt::format(",var_f{}_at_0", l);
  trials_csv += ",train_s\n";
  for (const auto& r : results) {
    trials_csv += fmt::format("{},{},{:.17g}", r.posterior, r.trial, r.elbo);
    for (double v : r.var_at_0) trials_csv += fmt::format(",{:.17g}", v);
    trials_csv += fmt::format(",{:.3f}\n", r.train_s);
  }
  std::string table_csv = "posterior,metric,ours_mean,ours_sd,n_trials,paper_mean,paper_sd\n";
  std::string tex =
      "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
      "\\begin{table}\n\\centering\n\\begin{tabular}{l" +
      std::string(size_t(depth) + 1, 'c') + "}\n\\toprule\n & ELBO";
  for (long l = 1; l <= depth; ++l) tex += fmt::format(" & $\\mathrm{{Var}}[f_{}(0)]$", l);
  tex += " \\\\\n\\midrule\n";
  std::cout << fmt::format("{:<20} {:<14} {:>24} {:>24}\n", "posterior", "metric",
                           "ours (mean +- sd)", "paper (mean +- sd)");
  for (const auto& posterior : posteriors) {
    tex += posterior;
    for (size_t i = 0; i <= size_t(depth); ++i) {
      std::vector<double> v;
      for (const auto& r : results)
        if (r.posterior == posterior) v.push_back(i == 0 ? r.elbo : r.var_at_0[i - 1]);
      const arma::vec values(v);
      const double m = arma::mean(values), sd = arma::stddev(values);  // sd with n - 1
      const std::string metric = metric_name(i);
      const report::RefRow* ref = nullptr;
      for (const auto& row : refs)
        if (row.posterior == posterior && row.metric == metric && row.depth == depth &&
            row.model == "dgp")
          ref = &row;
      const bool sci = i > 0;
      auto fmt_num = [sci](double x) {
        return sci ? fmt::format("{:.2e}", x) : fmt::format("{:.2f}", x);
      };
      const std::string ours = fmt_num(m) + " +- " + fmt_num(sd);
      const std::string paper =
          ref ? ref->mean_text + (ref->error ? " +- " + ref->error_text : "") : "";
      std::cout << fmt::format("{:<20} {:<14} {:>24} {:>24}\n", posterior, metric, ours, paper);
      table_csv +=
          fmt::format("{},{},{:.17g},{:.17g},{},{},{}\n", posterior, metric, m, sd, v.size(),
                      ref ? ref->mean_text : "", ref && ref->error ? ref->error_text : "");
      tex += fmt::format(" & ${} \\pm {}$", fmt_num(m), fmt_num(sd));
      if (ref) tex += fmt::format(" ({})", ref->mean_text);
    }
    tex += " \\\\\n";
  }
  tex += fmt::format(
      "\\bottomrule\n\\end{{tabular}}\n\\caption{{Compositional-uncertainty paper, Table 1: "
      "mean $\\pm$ sd over {} trials (the paper's mean in brackets); {} points, {} layers, {} "
      "inducing points, {} steps at lr {}, S = {}.}}\n\\end{{table}}\n\\end{{document}}\n",
      trials, N, depth, M, steps, lr, S);
  util::write_file_atomic(out / "compositional-trials.csv", trials_csv);
  util::write_file_atomic(out / "compositional-table1.csv", table_csv);
  util::write_file_atomic(out / "compositional-table1.tex", tex);
  if (fig_samples > 0) {
    util::write_file_atomic(out / "compositional-figure5.csv", figure);
    util::write_file_atomic(out / "compositional-figure5.svg",
                            report::svg_panels(panels, size_t(depth) + 1));
  }
  spdlog::info("wrote {}", (out / "compositional-table1.csv").string());
  return kExitOk;
}

}  // namespace dkp::cli
