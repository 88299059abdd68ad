// The model contract (DESIGN.md section 3): a model declares its parameters (unconstrained
// values, named), estimates the ELBO per training datapoint on a minibatch as an autodiff Var,
// and predicts with S Monte Carlo samples. Training (Adam, schedules, checkpoints) lives in
// lib/training and never looks inside a model.
#pragma once

#include <armadillo>
#include <map>
#include <string>

#include "autodiff/tape.hpp"
#include "random/stream.hpp"

namespace dkp::models {

/// Unconstrained parameter values by name (what the optimiser updates and checkpoints store).
using ParamMap = std::map<std::string, arma::mat>;
/// The same parameters as Vars on a tape.
using VarMap = std::map<std::string, autodiff::Var>;

/// Per-datapoint ELBO estimate: elbo = expected_loglik - kl_weight * kl.
struct ElboEstimate {
  autodiff::Var elbo;
  double expected_loglik = 0.0;  ///< mean over samples and batch points of E log p(y | f)
  double kl = 0.0;               ///< (log q - log p) averaged over samples, divided by N_train
};

/// Gaussian predictive per test point and sample: N x S means and variances (likelihood noise
/// included), in standardised units.
struct Predictive {
  arma::mat mean;
  arma::mat var;
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
  /// Predictions at X with `samples` posterior samples.
  virtual Predictive predict(const ParamMap& params, const arma::mat& X, size_t samples,
                             random::Stream& rng) const = 0;
};

/// Puts every parameter on `tape` as a variable (with gradient) or as a constant.
VarMap to_vars(autodiff::Tape& tape, const ParamMap& params, bool with_grad);

/// Looks a parameter up; throws dkp::Error naming it when absent.
const autodiff::Var& get(const VarMap& vars, const std::string& name);

}  // namespace dkp::models
