#include "experiments/toy_study.hpp"

#include <atomic>
#include <cmath>
#include <optional>

#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "models/cdgp.hpp"
#include "platform/parallel.hpp"
#include "random/stream.hpp"
#include "training/trainer.hpp"
#include "util/error.hpp"

namespace dkp::experiments {

namespace fs = std::filesystem;

namespace {

void check_options(const ToyStudyOptions& o) {
  for (const auto& p : o.posteriors) {
    if (!models::is_cdgp_posterior(p)) {
      throw ConfigError(fmt::format(
          "toy study: posterior '{}': dsvi, jointly-gaussian or inducing-locations", p));
    }
  }
  if (o.posteriors.empty()) throw ConfigError("toy study: no posterior");
  if (o.trials < 1 || o.steps < 1 || o.samples < 1 || o.inducing < 1 || o.depth < 1 ||
      o.elbo_samples < 1 || o.threads < 1 || o.jobs < 1 || o.points < 2 || o.var_samples < 2) {
    throw ConfigError(
        "toy study: trials, steps, samples, inducing, depth, elbo_samples, threads and jobs must "
        "be at least 1, points and var_samples at least 2");
  }
  if (!(o.lr > 0.0) || !(o.noise_std > 0.0)) {
    throw ConfigError("toy study: the learning rate and the noise must be positive");
  }
  if (o.beta_schedule.empty() || o.beta_schedule.front().step != 0) {
    throw ConfigError("toy study: the beta schedule must start at step 0");
  }
  for (size_t k = 0; k < o.beta_schedule.size(); ++k) {
    const LrPoint& b = o.beta_schedule[k];
    if (!(b.lr > 0.0) || !std::isfinite(b.lr)) {
      throw ConfigError(
          fmt::format("toy study: beta {} at step {} must be positive", b.lr, b.step));
    }
    if (k > 0 && b.step <= o.beta_schedule[k - 1].step) {
      throw ConfigError("toy study: the beta schedule's steps must increase");
    }
  }
  if (o.beta_schedule.back().step < 0 || size_t(o.beta_schedule.back().step) >= o.steps) {
    throw ConfigError(
        fmt::format("toy study: a beta change at step {}, not before the last step {}",
                    o.beta_schedule.back().step, o.steps));
  }
}

// One trial: trained (in stages when the posterior's beta changes), then its ELBO, its layers'
// variances at 0 and, for trial 0, Figure 5's samples.
ToyTrial run_trial(const ToyStudyOptions& o, const std::string& posterior, size_t t,
                   const random::Stream& master, const data::ToyData& data, const arma::vec& grid) {
  models::CdgpConfig cfg;
  cfg.posterior = posterior;
  cfg.depth = o.depth;
  cfg.inducing = o.inducing;
  cfg.noise_std = o.noise_std;
  cfg.last_periodic = o.last_periodic;
  cfg.analytic = o.analytic;
  const random::Stream run = master.child(posterior, uint64_t(t));
  training::TrainOptions opt;
  opt.lr = training::LrSchedule::steps(o.lr, {});
  opt.kl = training::KlAnnealing(0);
  opt.samples = o.samples;
  opt.threads = o.threads;
  opt.log_every = 0;
  opt.checkpoint_every = 0;
  const bool staged = posterior == "inducing-locations" && o.beta_schedule.size() > 1;
  const fs::path stage_ck = o.scratch / fmt::format(".toy-{}-{}-{}.ckpt", posterior, t, ::getpid());
  std::optional<models::CompositionalDgp> model;
  training::TrainReport tr;
  double seconds = 0.0;
  const size_t stages = staged ? o.beta_schedule.size() : 1;
  for (size_t k = 0; k < stages; ++k) {
    if (posterior == "inducing-locations") cfg.beta = o.beta_schedule[k].lr;
    random::Stream init = run.child("init", 0);
    model.emplace(cfg, init);
    opt.steps = k + 1 < stages ? size_t(o.beta_schedule[k + 1].step) : o.steps;
    if (staged) opt.checkpoint_path = stage_ck;
    tr = training::train(*model, data.X, data.y, opt, run);
    seconds += tr.train_seconds;
  }
  if (staged) fs::remove(stage_ck);

  ToyTrial r;
  r.posterior = posterior;
  r.trial = t;
  r.train_s = seconds;
  r.step_s = tr.seconds_per_step;
  random::Stream elbo_rng = run.child("final-elbo", 0);
  r.elbo = double(data.y.n_elem) * training::estimate_elbo(*model, tr.params, data.X, data.y,
                                                           o.elbo_samples, elbo_rng, o.threads);
  random::Stream var_rng = run.child("var-at-0", 0);
  const arma::mat x0(1, 1, arma::fill::zeros);
  for (const arma::mat& f : model->layer_functions(tr.params, x0, o.var_samples, var_rng))
    r.var_at_0.push_back(arma::var(arma::vectorise(f)));
  if (t == 0 && o.figure_samples > 0) {
    random::Stream fig_rng = run.child("figure", 0);
    r.figure = model->layer_functions(tr.params, grid, o.figure_samples, fig_rng);
    random::Stream comp_rng = run.child("figure-composition", 0);
    r.figure.push_back(model->predict(tr.params, grid, o.figure_samples, comp_rng).mean);
  }
  return r;
}

}  // namespace

ToyStudy run_toy_study(const ToyStudyOptions& o) {
  check_options(o);
  const random::Stream master(o.seed);
  ToyStudy study;
  random::Stream data_rng = master.child("toy-data", 0);
  study.data = data::compositional_toy(o.points, o.noise_std, data_rng);
  study.grid = arma::linspace(-1.0, 1.0, 101);

  // One task per (posterior, trial), `jobs` at a time; each has its own streams, so the results
  // do not depend on the order or the number of jobs.
  const size_t n_tasks = o.posteriors.size() * o.trials;
  study.trials.resize(n_tasks);
  std::atomic<size_t> next{0};
  platform::parallel_for(std::min(o.jobs, n_tasks), [&](size_t) {
    for (size_t task = next++; task < n_tasks; task = next++) {
      const std::string& posterior = o.posteriors[task / o.trials];
      const size_t t = task % o.trials;
      ToyTrial& r = study.trials[task];
      r = run_trial(o, posterior, t, master, study.data, study.grid);
      std::string vars;
      for (size_t l = 0; l < r.var_at_0.size(); ++l)
        vars += fmt::format("  Var[f{}(0)] {:.3e}", l + 1, r.var_at_0[l]);
      spdlog::info("{} trial {}/{}: ELBO {:.2f}{}  ({:.1f} s, {:.2f} ms/step)", posterior, t + 1,
                   o.trials, r.elbo, vars, r.train_s, 1e3 * r.step_s);
    }
  });
  return study;
}

}  // namespace dkp::experiments
