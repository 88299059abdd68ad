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

#include "distributions/gamma_op.hpp"
#include "models/model.hpp"

namespace dkp::models {

enum class DwpPosterior { Gw, Agw, Abgw };

/// "gw" (or empty), "agw", "abgw". @throws ConfigError otherwise
DwpPosterior parse_dwp_posterior(const std::string& name);
std::string to_string(DwpPosterior p);

struct DwpConfig {
  size_t depth = 2;
  size_t width = 0;       ///< nu of every hidden layer; 0 means the number of input features
  size_t inducing = 100;  ///< P; capped at the number of training points
  DwpPosterior posterior = DwpPosterior::Gw;
  double jitter = 1e-6;  ///< added to K_ii, relative to the kernel variance (as GiDgp; bayesfunc)
  /// Q's Cholesky is of Psi + q_jitter max(Psi) I, max not differentiated (bayesfunc dwp.py).
  double q_jitter = 1e-8;
  double logit_q_init = -4.0;    ///< q = sigmoid(-4) = 0.018 (bayesfunc dwp.py)
  double log_sigma_init = -3.0;  ///< Bartlett off-diagonal std e^-3 (bayesfunc dwp.py)
  /// mu_ij ~ N(0, 1) * mu_init_scale / sqrt(m) (bayesfunc dwp.py uses 1: random, not 0).
  double mu_init_scale = 1.0;
  double log_prec_init = -4.0;       ///< output GIGP layer, as GiDgp (bayesfunc master)
  double noise_var_init = 1.0;       ///< bayesfunc NormalLearnedScale: log sigma = 0
  bool sticking_the_landing = true;  ///< GW paper appendix F
  /// A-GW / AB-GW: sticking the landing for A' and B as well (they enter log Q as constants;
  /// an unbiased estimator like the Bartlett parameters' STL). Off: the AGW paper says nothing.
  bool stl_mixing = false;
  /// A-GW / AB-GW: A'_l = a_prime_scale Phi_l with Phi_l the stored parameter (init I / scale),
  /// so Adam's steps on A' are a_prime_scale times the learning rate (1: A' itself).
  double a_prime_scale = 1.0;
  /// Bartlett means as bayesfunc's WishartLayer holds them: mu = mu_raw / sqrt(m) with mu_raw the
  /// stored parameter (its `mu_unscaled`, init N(0, mu_init_scale^2)), so Adam's steps on mu are
  /// the learning rate / sqrt(m). False: mu itself is the parameter (steps of the learning rate).
  bool mu_raw = false;
  /// How the Bartlett Gamma draws are made; Inversion makes a fixed seed a smooth function of the
  /// parameters (gradient tests), Rejection is fast (what torch does).
  distributions::GammaMethod gamma_method = distributions::GammaMethod::Rejection;
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
  /// The sample-independent parts of Psi_l = w_l K_ii + V_term_l per hidden layer, computed once
  /// per ELBO / prediction call (V V^T is a P^3 product).
  struct Shared {
    std::vector<autodiff::Var> kernel_weight;  ///< (1 - q_l) / nu, 1 x 1
    std::vector<autodiff::Var> v_term;         ///< q_l exp(v_scale_l) V_l V_l^T, P x P
    /// A-GW / AB-GW: A'_l and log|det A'_l| (1 x 1), shared by every sample's A_l = L_Q A'_l.
    std::vector<autodiff::Var> a_prime, logdet_a_prime;
    /// With stl_mixing: A'_l^{-1} (values), for log Q at constant A' (factor_at_fixed_mixing);
    /// only the ELBO evaluates log Q, so predict leaves it out of its per-sample copies.
    std::vector<arma::mat> a_prime_inv;
  };
  Shared prepare(const VarMap& p) const;
  /// What layer l computes from its inputs (F_i, F_t) before any sampling: the kernel blocks and,
  /// for a hidden layer, the prior and posterior scales and the conditional's regression. Layer 1's
  /// inputs are the data, so its part is the same for every sample: elbo and predict compute it
  /// once per call (about 40% of a depth-2 step, 20% at depth 5).
  struct LayerPrep {
    autodiff::Var h, Kii, Kit;  ///< SE kernel: variance (1 x 1), P x P, P x B
    autodiff::Var tt;           ///< the SE kernel's diagonal at the B points, h (B x 1)
    autodiff::Var Lk, Lp;       ///< hidden layers: chol K_ii, chol(K_ii / nu) (the prior's scale)
    autodiff::Var Lq;           ///< chol Psi, the posterior's scale
    autodiff::Var Ak, sd;       ///< layer 1 only: L_K^{-1} K_it (P x B), sqrt(Sigma_tt.i) (B x 1)
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
  size_t d0_ = 0, width_ = 0, m_ = 0;  // m = min(P, nu) Bartlett columns
  ParamMap init_;
};

}  // namespace dkp::models
