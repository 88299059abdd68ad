// The deep Wishart process's hidden layer (GW paper sec. 3, Alg. 1, appendices E-F; AGW paper
// sec. 5, Alg. 1; the model around it: models/dwp.hpp). Layer l of width nu with P inducing
// points, given the SE kernel blocks K = K_l(G_{l-1}) (K_ii with jitter, K_it, k_tt):
//   prior       G_ii^l ~ W(K_ii / nu, nu)                                  (GW paper eq. 15)
//   posterior   Psi_l = (1 - q_l) K_ii / nu + q_l exp(v_scale_l) V_l V_l^T (GW eq. 28, AGW eq. 15)
//               GW: F_i = chol(Psi) T;  A-GW: F_i = chol(Psi) A'_l T;  AB-GW: F_i = A T tril(B_l)
//   train/test  F_t = K_ti K_ii^{-1} F_i + sqrt((k_tt - k_ti K_ii^{-1} k_it) / nu) Xi (eqs. 40-44)
// with T the generalised Bartlett factor (alpha, beta, mu, sigma; distributions/bartlett.hpp).
//
// Parameters of layer l (unconstrained; bayesfunc@dwp WishartLayer inits, notes section 3):
//   layer{l}.logit_q 1x1 logit_q_init;  layer{l}.V P x P ~ N(0, 1);  layer{l}.log_v_scale -log P
//   layer{l}.log_alpha m x 1 log((nu - j) / 2);  layer{l}.log_beta m x 1 log(1/2)   (m = min(P,
//   nu)) layer{l}.mu P x m ~ N(0, mu_init_scale^2 / m) (stored / sqrt(m) with mu_raw)
//   layer{l}.log_sigma P x m log_sigma_init
//   A-GW, AB-GW: layer{l}.A_prime P x P = I / a_prime_scale;  AB-GW: layer{l}.B m x m = I
#pragma once

#include <armadillo>
#include <string>

#include "autodiff/params.hpp"
#include "distributions/gamma_op.hpp"
#include "random/stream.hpp"

namespace dkp::layers {

/// The approximate posterior family of a Wishart layer.
enum class WishartPosterior { Gw, Agw, Abgw };

/// "gw" (or empty), "agw", "abgw"; throws ConfigError naming the choices otherwise.
WishartPosterior parse_wishart_posterior(const std::string& name);
std::string to_string(WishartPosterior p);

/// A Wishart layer's options (the DWP's configuration extends them).
struct WishartOptions {
  WishartPosterior posterior = WishartPosterior::Gw;
  /// Q's Cholesky is of Psi + q_jitter max(Psi) I, max not differentiated (bayesfunc dwp.py).
  double q_jitter = 1e-8;
  double logit_q_init = -4.0;    ///< q = sigmoid(-4) = 0.018 (bayesfunc dwp.py)
  double log_sigma_init = -3.0;  ///< Bartlett off-diagonal std e^-3 (bayesfunc dwp.py)
  /// mu_ij ~ N(0, 1) * mu_init_scale / sqrt(m) (bayesfunc dwp.py uses 1: random, not 0).
  double mu_init_scale = 1.0;
  bool sticking_the_landing = true;  ///< GW paper appendix F
  /// A-GW / AB-GW: sticking the landing for A' and B as well (they enter log Q as constants;
  /// an unbiased estimator like the Bartlett parameters' STL). Off: the AGW paper says nothing.
  bool stl_mixing = false;
  /// A-GW / AB-GW: A'_l = a_prime_scale Phi_l with Phi_l the stored parameter (init I / scale),
  /// so Adam's steps on A' are a_prime_scale times the learning rate (1: A' itself).
  double a_prime_scale = 1.0;
  /// A-GW / AB-GW: A' held at I, a constant and no parameter (the A-GW is then the GW).
  bool freeze_a_prime = false;
  /// A-GW / AB-GW: A' = I + the strictly lower triangle of a_prime_scale Phi (det A' = 1; Phi's
  /// diagonal and upper triangle unused), instead of a_prime_scale Phi.
  bool a_prime_unit_lower = false;
  /// Bartlett means as bayesfunc's WishartLayer holds them: mu = mu_raw / sqrt(m) with mu_raw the
  /// stored parameter (its `mu_unscaled`, init N(0, mu_init_scale^2)), so Adam's steps on mu are
  /// the learning rate / sqrt(m). False: mu itself is the parameter (steps of the learning rate).
  bool mu_raw = false;
  /// How the Bartlett Gamma draws are made; Inversion makes a fixed seed a smooth function of the
  /// parameters (gradient tests), Rejection is fast (what torch does).
  distributions::GammaMethod gamma_method = distributions::GammaMethod::Rejection;
};

class WishartLayer {
 public:
  /// Layer `layer` (its parameters are layer{layer}.*) of width nu over P inducing points.
  WishartLayer(size_t layer, size_t inducing, size_t nu, const WishartOptions& options);

  /// Adds the layer's initial parameters (the table above); draws V, then mu, from `init`.
  void add_initial_parameters(autodiff::ParamMap& params, random::Stream& init) const;
  /// Sets the layer's posterior parameters to its prior: q = 0 (logit -1000), alpha, beta, mu,
  /// sigma the Wishart's Bartlett parameters, A' = I, B = I. Then Q(G_ii) = P(G_ii) (exactly when
  /// q_jitter = 0).
  void set_prior_posterior(autodiff::ParamMap& params) const;

  /// The sample-independent parts of Psi and of the mixing matrix, computed once per ELBO /
  /// prediction call (V V^T is a P^3 product).
  struct Shared {
    autodiff::Var kernel_weight;  ///< (1 - q) / nu, 1 x 1
    autodiff::Var v_term;         ///< q exp(v_scale) V V^T, P x P
    /// A-GW / AB-GW: A' and log|det A'| (1 x 1), shared by every sample's A = L_Q A'.
    autodiff::Var a_prime, logdet_a_prime;
    /// With stl_mixing: A'^{-1} (values), for log Q at constant A' (factor_at_fixed_mixing);
    /// only the ELBO evaluates log Q, so on() leaves it out.
    arma::mat a_prime_inv;
    /// The same values as constants on `tape`, without a_prime_inv (a prediction's sample tape).
    Shared on(autodiff::Tape& tape) const;
  };
  Shared share(const autodiff::VarMap& p) const;

  /// What the layer computes from its kernel blocks before any sampling.
  struct Prep {
    autodiff::Var Lk, Lp;  ///< chol K_ii, chol(K_ii / nu) (the prior's scale)
    autodiff::Var Lq;      ///< chol Psi, the posterior's scale
    /// With `conditional`: L_K^{-1} K_it (P x B) and sqrt(Sigma_tt.i) (B x 1), kept for every
    /// sample when the kernel blocks are (the first layer, whose inputs are the data).
    autodiff::Var Ak, sd;
    /// The same values as constants on `tape`.
    Prep on(autodiff::Tape& tape) const;
  };
  Prep prepare(const autodiff::Var& Kii, const autodiff::Var& Kit, const autodiff::Var& tt,
               const Shared& shared, bool conditional) const;

  /// One sample: the inducing features F_i (P x nu, zero-padded when nu > P), the train/test
  /// features F_t (B x nu) and, with `with_logpq`, log P(G_ii) - log Q(G_ii) at the sample (left
  /// empty otherwise; the draws are the same either way).
  struct Sample {
    autodiff::Var Fi, Ft, logpq;
  };
  Sample sample(const autodiff::VarMap& p, const Shared& shared, const Prep& prep,
                const autodiff::Var& Kit, const autodiff::Var& tt, random::Stream& rng,
                bool with_logpq) const;

  size_t bartlett_columns() const { return m_; }

 private:
  size_t l_, P_, nu_, m_;  // m = min(P, nu) Bartlett columns
  WishartOptions o_;
};

}  // namespace dkp::layers
