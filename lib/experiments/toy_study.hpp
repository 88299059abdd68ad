// The compositional-uncertainty paper's 1-D toy (Ustyuzhaninov et al. 2020, section 5) under a
// protocol of one's own, as `dkp toy` runs it: L-layer DGPs (SE kernels, the last one periodic or
// SE) with the mean-field (dsvi), jointly Gaussian and inducing-locations posteriors, several
// trials each, on data of any size and noise; per trial the ELBO summed over the points and each
// layer's marginal variance at x = 0, and for trial 0 each layer's function sampled on a grid
// (the paper's Figure 5).
//
// The paper's Table 1 itself is the grid experiments/toy.yaml, whose cells run_cell trains like
// every other grid's. A study is what a run spec cannot say: another number of points or noise
// level, Figure 5's layer samples, and a schedule of the inducing-locations prior's jitter
// precision beta, which trains in stages (each stage its own model from the same initial
// parameters, trained on from the previous stage's checkpoint: parameters and Adam state, so a
// schedule equals one run whose beta changes at the given steps). A trial starts from the same
// streams as the grid's cell of that split, so with the grid's protocol both train identically
// (the smoke test checks it); only the final ELBO is estimated differently (here one estimate of
// elbo_samples samples; the grid: the mean of 10 estimates of 10).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <armadillo>

#include "data/toy.hpp"
#include "experiments/lr_schedule.hpp"

namespace dkp::experiments {

struct ToyStudyOptions {
  std::vector<std::string> posteriors = {"dsvi", "jointly-gaussian", "inducing-locations"};
  size_t trials = 10;       ///< trials per posterior (the paper: 10)
  size_t steps = 30000;     ///< Adam steps (the reference notebook: 3 x 10,000)
  double lr = 1e-3;         ///< constant learning rate
  size_t samples = 10;      ///< Monte Carlo samples per step (S)
  size_t inducing = 10;     ///< inducing points per layer (M)
  size_t depth = 2;         ///< layers
  size_t points = 50;       ///< data points (N)
  double noise_std = 0.01;  ///< the data's noise and the model's fixed likelihood noise
  bool last_periodic = true;
  /// The inducing-locations prior's beta from each step on ({step, beta}, first step 0, every
  /// change before `steps`); other posteriors ignore it.
  std::vector<LrPoint> beta_schedule = {{0, 1e8}};
  /// jointly-gaussian: the inducing outputs integrated out analytically (the paper's eqs.
  /// 15-17, as experiments/toy.yaml's cells) or sampled with every draw (the reference notebook).
  bool analytic = true;
  size_t elbo_samples = 1000;  ///< samples of the final ELBO estimate
  size_t var_samples = 10000;  ///< samples of each layer's function at x = 0
  size_t figure_samples = 25;  ///< samples per layer on the grid for trial 0 (0: no figure)
  uint64_t seed = 0;           ///< master seed: the data, then one stream per trial
  size_t threads = 1;          ///< threads sharing each step's samples
  size_t jobs = 1;             ///< trials trained at once (the same numbers for any)
  /// Directory for the staged trials' temporary checkpoints (removed when a trial ends).
  std::filesystem::path scratch = ".";
};

struct ToyTrial {
  std::string posterior;
  size_t trial = 0;
  double elbo = 0.0;             ///< total over the N points (the paper's Table 1), KL weight 1
  std::vector<double> var_at_0;  ///< Var[f_l(0)], l = 1..L
  double train_s = 0.0;          ///< training wall time, all stages
  double step_s = 0.0;           ///< seconds per step of the last stage
  /// Trial 0 only, with figure_samples > 0: each layer's function on ToyStudy::grid (grid points
  /// x samples), then the composition's predictive mean.
  std::vector<arma::mat> figure;
};

struct ToyStudy {
  data::ToyData data;
  arma::vec grid;                ///< Figure 5's inputs: 101 points evenly on [-1, 1]
  std::vector<ToyTrial> trials;  ///< posterior-major, trials in order
};

/// Runs the study. Throws ConfigError on an unknown posterior, a count below its minimum (points
/// and var_samples 2, the others 1; figure_samples may be 0), a non-positive lr or noise_std, or
/// a beta schedule that does not start at step 0 or changes at or after `steps`.
ToyStudy run_toy_study(const ToyStudyOptions& options);

}  // namespace dkp::experiments
