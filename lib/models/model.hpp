// The model contract (DESIGN.md section 3): a model declares its parameters (unconstrained
// values, named), estimates the ELBO per training datapoint on a minibatch as an autodiff Var,
// and predicts with S Monte Carlo samples. Training (Adam, schedules, checkpoints) lives in
// lib/training and never looks inside a model.
#pragma once

#include <armadillo>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "autodiff/params.hpp"
#include "autodiff/tape.hpp"
#include "likelihoods/softmax.hpp"
#include "linalg/chol.hpp"
#include "random/stream.hpp"

namespace dkp::models {

// The named parameter sets (autodiff/params.hpp), used unqualified throughout the models.
using autodiff::get;
using autodiff::layer_key;
using autodiff::ParamMap;
using autodiff::to_vars;
using autodiff::VarMap;

/// The start the inducing-point models' constructors share: checks that X and y hold the same
/// number (at least 2) of training points with at least one feature, picks min(inducing, N) of
/// the training inputs at random (one permutation drawn from `init`; a warning when inducing > N)
/// and stores them as
/// params["inducing_inputs"]. Returns the picked rows (the models start their output layer's v
/// at y[pick]). Throws ConfigError naming `model`.
arma::uvec init_inducing_inputs(const char* model, const arma::mat& X, const arma::vec& y,
                                size_t inducing, random::Stream& init, ParamMap& params);

/// Per-datapoint ELBO estimate: elbo = expected_loglik - kl_weight * kl.
struct ElboEstimate {
  autodiff::Var elbo;
  double expected_loglik = 0.0;  ///< mean over samples and batch points of E log p(y | f)
  double kl = 0.0;               ///< (log q - log p) averaged over samples, divided by N_train
};

/// What a model's hidden layers carry from layer to layer (Predictive::hidden).
enum class HiddenKind {
  None,      ///< no hidden layers (the SGP)
  Features,  ///< B x W features F_l (DGPs: G_l = F_l F_l^T / W; the DWP: G_l = F_l F_l^T)
  Gram,      ///< B x (1 + P): [g_tt, g_it^T], the Gram matrix's diagonal at the points and its
             ///< inner products with the P inducing points (NNGP, DIWP, Gram DGP)
};

/// Gaussian predictive per test point and sample: N x S means and variances (likelihood noise
/// included), in standardised units. A classification model (classes = C > 0) gives instead
/// N x (S C) matrices, sample s in columns s C .. s C + C - 1: with the robust-max likelihood the
/// Gaussian marginals of its C latent functions (no noise), with the softmax likelihood one draw
/// of the C logits in `mean` and zeros in `var`; with the probit (C = 2) N x S matrices, the
/// Gaussian marginal of its one latent function (likelihoods::latent_columns;
/// eval::classification_metrics turns any of them into class probabilities).
struct Predictive {
  arma::mat mean;
  arma::mat var;
  size_t classes = 0;  ///< 0: regression
  likelihoods::ClassLikelihood class_likelihood = likelihoods::ClassLikelihood::RobustMax;
  linalg::CholStats chol;  ///< the prediction's Cholesky factorisations (jitter events)
  /// Only when predict() is asked (keep_hidden): hidden[s][l - 1] is hidden layer l's sampled
  /// output at the N points in sample s (the values that feed layer l + 1), l = 1 .. depth - 1.
  std::vector<std::vector<arma::mat>> hidden;
  HiddenKind hidden_kind = HiddenKind::None;
};

class Model {
 public:
  virtual ~Model() = default;
  /// One-line description (model, depth, widths, inducing points).
  virtual std::string describe() const = 0;
  /// Initial unconstrained parameter values.
  virtual const ParamMap& initial_parameters() const = 0;
  /// ELBO estimate per training datapoint on the minibatch (X, y) with `samples` Monte Carlo
  /// samples; `n_train` scales the KL term; `kl_weight` anneals it.
  virtual ElboEstimate elbo(const VarMap& params, const arma::mat& X, const arma::vec& y,
                            double n_train, size_t samples, double kl_weight,
                            random::Stream& rng) const = 0;
  /// Predictions at X with `samples` posterior samples; with keep_hidden, also every hidden
  /// layer's output per sample (Predictive::hidden), from the same draws (mean and var are the
  /// same either way).
  virtual Predictive predict(const ParamMap& params, const arma::mat& X, size_t samples,
                             random::Stream& rng, bool keep_hidden = false) const = 0;
  /// Whether elbo() draws nothing (the same value for any rng and sample count), so that repeated
  /// estimates of it are copies of one (the SGP, the AEP DGP).
  virtual bool deterministic_elbo() const { return false; }
  /// Parameters the trainer holds at their initial values for a run's first steps, with the step
  /// from which each is learned (name, step): e.g. the A-GW's A', held at I so that the run is the
  /// GW until then. Adam creates their moments when it first moves them. Default: none.
  virtual std::vector<std::pair<std::string, size_t>> held_parameters() const { return {}; }
  /// Model-specific summaries of the trained posterior that a run records in result.json beside
  /// its metrics (name, value), drawn from `rng`: e.g. the compositional DGP's variance of each
  /// layer's function at 0 (its paper's Table 1). Default: none.
  virtual std::vector<std::pair<std::string, double>> posterior_summaries(
      const ParamMap& /*params*/, random::Stream& /*rng*/) const {
    return {};
  }
};

/// The number of inducing points `model` was built with: the rows of its "inducing_inputs"
/// (init_inducing_inputs: the global-inducing DGP, the DWP, the NNGP and DIWP) or of its first
/// parameter named "Z" or "*.Z" (the SVGP layers of the SGP and DSVI DGP, the AEP DGP's GPs);
/// 0 when it has neither. Below the requested number when the training inputs have fewer (distinct)
/// rows: init_inducing_inputs and kmeans_inducing then use them all, with a warning.
size_t inducing_points(const Model& model);

/// Predictive::hidden as CSV, one row per sample, hidden layer and point:
/// `sample,layer,index,` then f1..fW (HiddenKind::Features) or g_tt,g_1..g_P (HiddenKind::Gram);
/// sample and index from 0, layer from 1, values to 17 significant digits. Layers narrower than
/// the widest leave their last fields empty. Throws dkp::Error when `pred` holds no hidden
/// samples, and when the shapes disagree with the N points of pred.mean.
std::string hidden_csv(const Predictive& pred);

/// Sum over the batch of E_{f ~ N(m, v)} log N(y; f, s2) (analytic), with m = f_mean and v = f_var
/// (B x 1 each), y (B x 1) and inv_s2 = 1 / s2 = exp(-log_s2) (1 x 1 each).
autodiff::Var gaussian_ell_sum(const autodiff::Var& y, const autodiff::Var& f_mean,
                               const autodiff::Var& f_var, const autodiff::Var& log_s2,
                               const autodiff::Var& inv_s2);

/// The per-datapoint ELBO ell - kl_weight * kl from the expected log-likelihood per datapoint and
/// the KL per training point, with both recorded as numbers.
ElboEstimate elbo_estimate(const autodiff::Var& ell, const autodiff::Var& kl, double kl_weight);

/// The per-datapoint ELBO from S samples on a batch of B points: ell_total summed over samples
/// and points, logpq_total = sum over samples of log p - log q; KL = -logpq_total / (S n_train).
ElboEstimate assemble_elbo(const autodiff::Var& ell_total, const autodiff::Var& logpq_total,
                           double samples, double batch, double n_train, double kl_weight);

}  // namespace dkp::models
