// Deep Gaussian process with global inducing points (Ober & Aitchison 2021), the "DGP" of the
// deep Wishart process papers: a feed-forward stack of GP layers with no skip connections and the
// same prior as the DWP of the same depth (GW paper section 4 and appendix F):
//   G_0 = X X^T / nu_0,  F_l | G_{l-1} ~ GP(0, K(G_{l-1})) with nu_l = width columns,
//   G_l = F_l F_l^T / nu_l,   y ~ N(F_L, sigma^2).
// Kernel: squared exponential on Gram distances, K_ij = h exp(-(G_ii + G_jj - 2 G_ij) / (2 l^2)),
// with ARD lengthscales in the first layer only. Inducing inputs X_i exist only at the input;
// each layer's inducing outputs U_l are sampled from q(U_l | U_{l-1}) (layers/gigp.hpp) and are
// the next layer's inducing inputs.
//
// depth = number of GP layers including the output layer (depth 2: one hidden layer).
#pragma once

#include "models/model.hpp"

namespace dkp::models {

struct GiDgpConfig {
  size_t depth = 2;
  size_t width = 0;       ///< hidden width nu; 0 means the number of input features
  size_t inducing = 100;  ///< P; capped at the number of training points
  double jitter = 1e-6;   ///< added to K_ii, relative to the kernel variance (bayesfunc: 1e-6)
  double log_prec_init = -4.0;  ///< initial log pseudo-precision (bayesfunc master default)
  double noise_var_init = 1.0;  ///< bayesfunc NormalLearnedScale: log sigma = 0
};

class GiDgp final : public Model {
 public:
  /// Initialises from the (standardised) training data: inducing inputs are a random subset of
  /// X_train, the output layer's pseudo-targets are the matching y values, hidden layers' pseudo-
  /// targets are N(0, 1), L_loc = I, lengthscales and variances 1.
  GiDgp(const GiDgpConfig& cfg, const arma::mat& X_train, const arma::vec& y_train,
        random::Stream& init);

  std::string describe() const override;
  const ParamMap& initial_parameters() const override { return init_; }
  ElboEstimate elbo(const VarMap& params, const arma::mat& X, const arma::vec& y, double n_train,
                    size_t samples, double kl_weight, random::Stream& rng) const override;
  Predictive predict(const ParamMap& params, const arma::mat& X, size_t samples,
                     random::Stream& rng) const override;

 private:
  struct SampleOut {
    autodiff::Var f_mean, f_var, logpq;  // output layer: B x 1, B x 1, 1 x 1
  };
  SampleOut forward(const VarMap& p, const autodiff::Var& X, random::Stream& rng) const;

  GiDgpConfig cfg_;
  size_t d0_ = 0, width_ = 0;
  ParamMap init_;
};

}  // namespace dkp::models
