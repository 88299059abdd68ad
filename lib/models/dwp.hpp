// Deep Wishart process (Aitchison et al. 2021) with the generalised singular Wishart (GW)
// approximate posterior of Ober & Aitchison (2021, "GW paper", sec. 3, Alg. 1, appendices E-F) and
// the A-GW / AB-GW posteriors of Ober, Anson, Milsom & Aitchison (2023, "AGW paper", sec. 5,
// Alg. 1).
//
// Prior (GW paper eq. 15; the same prior as the global-inducing DGP of the same depth and widths,
// models/gi_dgp.hpp):
//   G_0 = X X^T / nu_0,   G_l | G_{l-1} ~ W(K_l(G_{l-1}) / nu_l, nu_l)  (l = 1..depth-1),
//   f | G_{depth-1} ~ GP(0, K_depth(G_{depth-1})),   y ~ N(f, sigma^2).
// K_l is the squared exponential on Gram distances, h exp(-(G_ii + G_jj - 2 G_ij) / (2 l^2)), with
// ARD lengthscales on the inputs in layer 1 only (GW paper appendix F).
//
// Inference over the inducing block only (Alg. 1 of both papers). Per hidden layer l, with
// S = K_l(G_{l-1})_ii / nu_l (kernel jitter included) and
//   Psi_l = (1 - q_l) S + q_l exp(v_scale_l) V_l V_l^T          (GW paper eq. 28, AGW eq. 15),
// the inducing Gram matrix G_ii^l = F_i F_i^T is drawn from
//   GW:    F_i = L T,          L = chol(Psi_l)                   (GW paper eq. 27)
//   A-GW:  F_i = A T,          A = chol(Psi_l) A'_l              (AGW paper eqs. 16, 17a)
//   AB-GW: F_i = A T tril(B_l)                                   (AGW paper eq. 17b)
// with T the generalised Bartlett factor (alpha, beta, mu, sigma; distributions/bartlett.hpp), and
// the ELBO gets log W(G_ii; S, nu) - log Q(G_ii) at the sample (singular when nu < P). The
// sticking-the-landing estimator (GW paper appendix F) is used for (alpha, beta, mu, sigma): they
// enter log Q as constants, so their gradient flows only through the sample path. Optionally
// (stl_mixing) A' and B too: log Q at constant A', B with T recovered from the sampled G.
// Train/test points (GW paper eqs. 40-44): F_i is zero-padded to nu columns when nu > P, and
//   F_t = K_ti K_ii^{-1} F_i + sqrt((k_tt - k_ti K_ii^{-1} k_it) / nu) Xi,   Xi ~ N(0, 1) B x nu,
// independently per point; G = F F^T over [inducing; train/test], so the next layer's kernel is
// the SE kernel of the features F with unscaled lengthscale (G_l = F F^T, no 1/nu).
// The output layer is the global-inducing GP layer (layers/gigp.hpp) on K_depth(G_{depth-1}).
//
// depth = number of layers including the output GP layer (depth 1: a single GIGP layer on the
// inputs, i.e. the same model as GiDgp of depth 1).
#pragma once

#include <string>
#include <vector>

#include "layers/wishart.hpp"
#include "models/model.hpp"
#include "models/registry.hpp"

namespace dkp::models {

/// The DWP's configuration: the hidden Wishart layers' options (layers/wishart.hpp) and the rest.
struct DwpConfig : layers::WishartOptions {
  size_t depth = 2;
  size_t width = 0;       ///< nu of every hidden layer; 0 means the number of input features
  size_t inducing = 100;  ///< P; capped at the number of training points
  double jitter = 1e-6;   ///< added to K_ii, relative to the kernel variance (as GiDgp; bayesfunc)
  double log_prec_init = -4.0;  ///< output GIGP layer, as GiDgp (bayesfunc master)
  double noise_var_init = 1.0;  ///< bayesfunc NormalLearnedScale: log sigma = 0
  /// A-GW / AB-GW: A' (and B) held at I for this many training steps (held_parameters), so that
  /// the run is the GW until then; 0: learned from the first step.
  size_t gw_until = 0;
};

class Dwp final : public Model {
 public:
  /// Initialises from the (standardised) training data. Inducing inputs: a random subset of
  /// X_train; output layer as GiDgp (pseudo-targets = the matching y, L_loc = I); hidden layers as
  /// bayesfunc's WishartLayer (notes section 3): logit q = -4, V ~ N(0, 1) P x P, log v_scale =
  /// -log P, alpha_j = (nu - j)/2 and beta_j = 1/2 (the prior's), mu ~ N(0, 1/m), sigma = e^-3;
  /// A' = I and B = I (our choice: the A-GW / AB-GW start as the GW; the AGW paper gives no
  /// inits). Kernel lengthscales and variances 1.
  Dwp(const DwpConfig& cfg, const arma::mat& X_train, const arma::vec& y_train,
      random::Stream& init);

  std::string describe() const override;
  const ParamMap& initial_parameters() const override { return init_; }
  ElboEstimate elbo(const VarMap& params, const arma::mat& X, const arma::vec& y, double n_train,
                    size_t samples, double kl_weight, random::Stream& rng) const override;
  Predictive predict(const ParamMap& params, const arma::mat& X, size_t samples,
                     random::Stream& rng, bool keep_hidden = false) const override;
  /// A-GW / AB-GW with gw_until > 0: every layer's A' (and B), until step gw_until.
  std::vector<std::pair<std::string, size_t>> held_parameters() const override;

  /// `params` with every hidden layer's posterior set to its prior: q = 0 (logit -1000), alpha,
  /// beta, mu, sigma the Wishart's Bartlett parameters, A' = I, B = I. Then Q(G_ii^l | G_ii^{l-1})
  /// = P(G_ii^l | G_ii^{l-1}) (exactly when q_jitter = 0).
  ParamMap with_prior_posterior(const ParamMap& params) const;

  /// One forward sample, for tests and diagnostics.
  struct Trace {
    std::vector<arma::mat> features;  ///< per hidden layer: [F_i; F_t], (P + B) x nu, G = F F^T
    std::vector<double> layer_logpq;  ///< per hidden layer: log P(G_ii) - log Q(G_ii) (not
                                      ///< filled without with_logpq)
    double output_logpq = 0.0;        ///< the GIGP layer's log p(u) - log q(u)
    arma::vec f_mean, f_var;          ///< the output layer's latent mean and variance, B x 1
  };
  Trace trace(const ParamMap& params, const arma::mat& X, random::Stream& rng) const;

  size_t width() const { return width_; }
  size_t inducing() const { return cfg_.inducing; }

 private:
  struct SampleOut {
    autodiff::Var f_mean, f_var, logpq;  // output layer: B x 1, B x 1, 1 x 1
  };
  /// Every hidden layer's sample-independent parts (WishartLayer::share), computed once per
  /// ELBO / prediction call.
  using Shared = std::vector<layers::WishartLayer::Shared>;
  Shared prepare(const VarMap& p) const;
  /// What layer l computes from its inputs (F_i, F_t) before any sampling: the kernel blocks and,
  /// for a hidden layer, the prior and posterior scales and the conditional's regression. Layer 1's
  /// inputs are the data, so its part is the same for every sample: elbo and predict compute it
  /// once per call (about 40% of a depth-2 step, 20% at depth 5).
  struct LayerPrep {
    autodiff::Var h, Kii, Kit;           ///< SE kernel: variance (1 x 1), P x P, P x B
    autodiff::Var tt;                    ///< the SE kernel's diagonal at the B points, h (B x 1)
    layers::WishartLayer::Prep wishart;  ///< hidden layers: the Wishart layer's part
  };
  LayerPrep prepare_layer(const VarMap& p, const Shared& shared, size_t l, const autodiff::Var& Fi,
                          const autodiff::Var& Ft) const;
  /// One sample through every layer, layer 1's part given (prepare_layer(p, shared, 1, ...)).
  /// Without `with_logpq` (prediction) the hidden layers' log P - log Q is not evaluated and
  /// SampleOut::logpq is left empty; the draws, and so the outputs, are the same.
  SampleOut forward(const VarMap& p, const Shared& shared, const LayerPrep& first,
                    const autodiff::Var& X, random::Stream& rng, Trace* trace,
                    bool with_logpq = true) const;

  DwpConfig cfg_;
  size_t d0_ = 0, width_ = 0;
  std::vector<layers::WishartLayer> hidden_;  ///< layers 1 .. depth - 1
  ParamMap init_;
};

/// The registry's dwp entries, one per posterior: gw (the default), agw, abgw
/// (models/registry.hpp).
std::vector<RegistryEntry> dwp_entries();

}  // namespace dkp::models
