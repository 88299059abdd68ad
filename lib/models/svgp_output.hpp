// The output likelihood the SVGP models (SGP, DSVI DGP) share: Gaussian with the learned noise
// parameter "likelihood.variance" (classes = 0), Bernoulli-probit with one output GP (classes = 2,
// the DSVI report's binary task; likelihoods/probit.hpp with its defaults: GPflow's jitter 1e-3,
// 20 Gauss-Hermite points), or robust-max over `classes` output GPs (classes > 2;
// likelihoods/robustmax.hpp with its defaults: eps 1e-3, 20 Gauss-Hermite points). The
// classifiers have no noise parameter.
#pragma once

#include <string>

#include "models/model.hpp"
#include "models/registry.hpp"

namespace dkp::models {

class SvgpOutput {
 public:
  explicit SvgpOutput(size_t classes) : classes_(classes) {}

  size_t classes() const { return classes_; }
  /// The classification likelihood (meaningful when classes() > 0): probit for 2 classes.
  likelihoods::ClassLikelihood kind() const {
    return classes_ == 2 ? likelihoods::ClassLikelihood::Probit
                         : likelihoods::ClassLikelihood::RobustMax;
  }
  /// Output GPs: 1 for regression and the probit, C for the robust-max.
  arma::uword width() const {
    return classes_ > 0 ? arma::uword(likelihoods::latent_columns(classes_, kind())) : 1;
  }
  /// Adds "likelihood.variance" (at `noise_variance`) for regression; nothing for classification.
  void add_parameters(ParamMap& params, double noise_variance) const;
  /// "Gaussian likelihood", "Bernoulli-probit likelihood" or "robust-max likelihood over C
  /// classes" (for describe()).
  std::string words() const;
  /// Mean over the rows n of E log p(y_n | f_n) for f_n ~ N(mean_n, diag(var_n)) (N x width()
  /// each); y holds targets, or class indices 0 .. C - 1 (checked).
  autodiff::Var expected_loglik(const VarMap& params, const autodiff::Var& mean,
                                const autodiff::Var& var, const arma::vec& y) const;
  /// What prediction adds to the latent variance: the learned noise variance, 0 when classifying.
  double predictive_noise(const VarMap& vars) const;

 private:
  size_t classes_;
};

/// A registry entry of a model with this output (sgp, dgp dsvi, dgp aep): the SE kernel,
/// regression, and classification with the robust-max likelihood (probit for two classes).
RegistryEntry svgp_output_entry(std::string posterior, std::string summary);

/// --init-lengthscale and --init-variance (options init_lengthscale, init_variance): the SE
/// kernels' initial values when set (positive), else `lengthscale` and `variance` stay.
void set_initial_kernel(const ModelSpec& spec, double& lengthscale, double& variance);

}  // namespace dkp::models
