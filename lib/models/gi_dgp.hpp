// Deep Gaussian process with global inducing points (Ober & Aitchison 2021), the "DGP" of the
// deep Wishart process papers: a feed-forward stack of GP layers with no skip connections and the
// same prior as the DWP of the same depth (GW paper section 4 and appendix F):
//   G_0 = X X^T / nu_0,  F_l | G_{l-1} ~ GP(0, K(G_{l-1})) with nu_l = width columns,
//   G_l = F_l F_l^T / nu_l,   y ~ N(F_L, sigma^2).
// Kernel: squared exponential on Gram distances, K_ij = h exp(-(G_ii + G_jj - 2 G_ij) / (2 l^2)),
// with ARD lengthscales in the first layer only (every layer with hidden_ard). Inducing inputs X_i
// exist only at the input; each layer's inducing outputs U_l are sampled from q(U_l | U_{l-1})
// (layers/gigp.hpp) and are the next layer's inducing inputs.
//
// depth = number of GP layers including the output layer (depth 2: one hidden layer).
#pragma once

#include <vector>

#include "models/model.hpp"
#include "models/registry.hpp"

namespace dkp::models {

struct GiDgpConfig {
  size_t depth = 2;
  size_t width = 0;       ///< hidden width nu; 0 means the number of input features
  size_t inducing = 100;  ///< P; capped at the number of training points
  double jitter = 1e-6;   ///< added to K_ii, relative to the kernel variance (bayesfunc: 1e-6)
  double log_prec_init = -4.0;  ///< initial log pseudo-precision (bayesfunc master default)
  double noise_var_init = 1.0;  ///< bayesfunc NormalLearnedScale: log sigma = 0
  /// ARD lengthscales in every layer, not only the first (changes the prior: the DWP papers'
  /// DGP has one lengthscale per hidden layer).
  bool hidden_ard = false;
  /// A pseudo-likelihood precision per output column of each layer (layers::
  /// gigp_forward_per_output) instead of one shared by the columns (bayesfunc's GIGP). Changes
  /// only the approximate posterior. A layer's L_loc is then P x (P W), column c's factor in
  /// columns c P .. c P + P - 1, and its L_scale 1 x W.
  bool per_output_precision = false;
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
                     random::Stream& rng, bool keep_hidden = false) const override;

 private:
  /// Output-layer moments of S samples and their summed log p - log q.
  struct ForwardOut {
    std::vector<autodiff::Var> f_mean, f_var;  // per sample: B x 1, B x 1
    autodiff::Var logpq;                       // 1 x 1, summed over the samples
  };
  /// S samples of the whole stack. The random numbers are drawn up front, sample by sample and
  /// layer by layer (eps1, eps2, then the layer outputs' noise), as a sample-by-sample pass
  /// would; the first layer, whose kernel blocks are the same for every sample, is computed once
  /// with the samples' noise stacked as columns.
  ForwardOut forward(const VarMap& p, const arma::mat& X, size_t S, random::Stream& rng) const;

  /// Noise of one layer and one sample.
  struct LayerNoise {
    arma::mat eps1, eps2, out;  // P x W, P x W, B x W (out empty in the output layer)
  };
  std::vector<std::vector<LayerNoise>> draw_noise(size_t S, arma::uword P, arma::uword B,
                                                  random::Stream& rng) const;
  size_t layer_width(size_t l) const { return l == cfg_.depth ? 1 : width_; }
  /// Every layer's output columns but the last layer's single one have their own precision.
  bool per_output(size_t l) const { return cfg_.per_output_precision && layer_width(l) > 1; }

  GiDgpConfig cfg_;
  size_t d0_ = 0, width_ = 0;
  ParamMap init_;
};

/// The registry's dgp global-inducing entry (models/registry.hpp): GiDgp with the SE kernel, the
/// Gram DGP (models/gram_dgp.hpp) with the ReLU kernel.
std::vector<RegistryEntry> gi_dgp_entries();

}  // namespace dkp::models
