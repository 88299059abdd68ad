// dkp toy: Figure 5 of the compositional-uncertainty paper (Ustyuzhaninov et al. 2020, section
// 5) and variations of its protocol outside the grid: two-layer DGPs (SE then periodic kernel) on
// the 1-D toy data, with the mean-field (DSVI), jointly Gaussian and inducing-locations
// posteriors, several trials each; ELBO and the marginal variances of the two layers' functions
// at x = 0, beside the paper's Table 1. The paper's Table 1 itself is the grid
// experiments/toy.yaml (the toy is a dataset of `dkp run` and the store); this command keeps its
// own loop for what a run spec does not hold: the layer samples of Figure 5, and a prior-jitter
// schedule (--beta-schedule), which trains in stages from checkpoints.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>

#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli.hpp"
#include "data/toy.hpp"
#include "experiments/lr_schedule.hpp"
#include "models/cdgp.hpp"
#include "report/reference.hpp"
#include "report/svg.hpp"
#include "training/mc.hpp"
#include "training/trainer.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace dkp::cli {

namespace fs = std::filesystem;

namespace {

struct TrialResult {
  std::string posterior;
  size_t trial = 0;
  double elbo = 0.0;             ///< total over the N points (the paper's Table 1), KL weight 1
  std::vector<double> var_at_0;  ///< Var[f_l(0)], l = 1..L
  double train_s = 0.0;
};

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

  const random::Stream master(vm["seed"].as<uint64_t>());
  random::Stream data_rng = master.child("toy-data", 0);
  const data::ToyData data = data::compositional_toy(size_t(N), noise_std, data_rng);
  const arma::mat x0(1, 1, arma::fill::zeros);

  // One task per (posterior, trial), `--jobs` at a time; each has its own streams, so the
  // results do not depend on the order or the number of jobs.
  const size_t n_tasks = posteriors.size() * size_t(trials);
  std::vector<TrialResult> results(n_tasks);
  // Trial 0 of each posterior: each layer's function, then the composition, on the grid.
  std::vector<std::vector<arma::mat>> figures(n_tasks);
  const arma::vec grid = arma::linspace(-1.0, 1.0, 101);
  std::atomic<size_t> next{0};
  auto run_task = [&](size_t task) {
    const std::string& posterior = posteriors[task / size_t(trials)];
    const size_t t = task % size_t(trials);
    models::CdgpConfig cfg;
    cfg.posterior = posterior;
    cfg.depth = size_t(depth);
    cfg.inducing = size_t(M);
    cfg.noise_std = noise_std;
    cfg.last_periodic = last_kernel == "periodic";
    const random::Stream run = master.child(posterior, uint64_t(t));
    training::TrainOptions opt;
    opt.lr = training::LrSchedule::steps(lr, {});
    opt.kl = training::KlAnnealing(0);
    opt.samples = size_t(S);
    opt.threads = size_t(threads);
    opt.log_every = 0;
    opt.checkpoint_every = 0;
    // The inducing-locations prior's beta changes between stages: each stage is its own model
    // (the same initial parameters), trained on from the previous stage's checkpoint (parameters
    // and Adam state), so a schedule equals one run whose beta changes at the given steps.
    const bool staged = posterior == "inducing-locations" && beta_schedule.size() > 1;
    const fs::path stage_ck = out / fmt::format(".toy-{}-{}-{}.ckpt", posterior, t, ::getpid());
    std::optional<models::CompositionalDgp> model;
    training::TrainReport tr;
    double stage_seconds = 0.0;
    for (size_t k = 0; k < (staged ? beta_schedule.size() : 1); ++k) {
      cfg.beta = posterior == "inducing-locations" ? beta_schedule[k].lr : cfg.beta;
      random::Stream init = run.child("init", 0);
      model.emplace(cfg, init);
      opt.steps = staged && k + 1 < beta_schedule.size() ? size_t(beta_schedule[k + 1].step)
                                                         : size_t(steps);
      if (staged) opt.checkpoint_path = stage_ck;
      tr = training::train(*model, data.X, data.y, opt, run);
      stage_seconds += tr.train_seconds;
    }
    if (staged) fs::remove(stage_ck);
    tr.train_seconds = stage_seconds;
    TrialResult& r = results[task];
    r.posterior = posterior;
    r.trial = t;
    r.train_s = tr.train_seconds;
    random::Stream elbo_rng = run.child("final-elbo", 0);
    r.elbo = double(N) * training::estimate_elbo(*model, tr.params, data.X, data.y,
                                                 size_t(elbo_samples), elbo_rng, size_t(threads));
    random::Stream var_rng = run.child("var-at-0", 0);
    for (const arma::mat& f : model->layer_functions(tr.params, x0, size_t(var_samples), var_rng))
      r.var_at_0.push_back(arma::var(arma::vectorise(f)));
    if (t == 0 && fig_samples > 0) {
      random::Stream fig_rng = run.child("figure", 0);
      figures[task] = model->layer_functions(tr.params, grid, size_t(fig_samples), fig_rng);
      random::Stream comp_rng = run.child("figure-composition", 0);
      figures[task].push_back(model->predict(tr.params, grid, size_t(fig_samples), comp_rng).mean);
    }
    std::string vars;
    for (size_t l = 0; l < r.var_at_0.size(); ++l)
      vars += fmt::format("  Var[f{}(0)] {:.3e}", l + 1, r.var_at_0[l]);
    spdlog::info("{} trial {}/{}: ELBO {:.2f}{}  ({:.1f} s, {:.2f} ms/step)", posterior, t + 1,
                 trials, r.elbo, vars, tr.train_seconds, 1e3 * tr.seconds_per_step);
  };
  training::parallel_for(std::min(size_t(jobs), n_tasks), [&](size_t) {
    for (size_t task = next++; task < n_tasks; task = next++) run_task(task);
  });
  // Figure 5: its samples as CSV, and drawn (a row per posterior: f_1, ..., f_L, composition).
  std::string figure = "posterior,layer,sample,x,f\n";
  std::vector<report::PlotPanel> panels;
  for (size_t task = 0; task < n_tasks; ++task) {
    const std::string& posterior = posteriors[task / size_t(trials)];
    for (size_t l = 0; l < figures[task].size(); ++l) {
      const arma::mat& F = figures[task][l];
      const bool comp = l + 1 == figures[task].size();
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
