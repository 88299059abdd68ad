// Deep GP trained with approximate expectation propagation, "AEP" (Bui et al. 2016, "Deep Gaussian
// processes for regression using approximate expectation propagation"; the DSVI reproduction
// report's AEP-2 baseline, sections 3.1-3.2 and 4, which extends it with linear mean functions).
// Regression, and multi-class classification with the robust-max likelihood (report section
// 3.1.1): C output GPs, log Z_n = log((1 - eps) P_n + eps / (C - 1) (1 - P_n)) with P_n the
// probability that output y_n is the largest under the moment-matched Gaussians (eq. 3.14-3.15,
// by Gauss-Hermite quadrature), no noise parameter; the predictive holds the C Gaussians.
//
// Model (report section 4: "2 dimensions for all inner layers and 100 pseudo-points"; "Bui et al.
// use independent pseudo-points and kernels across dimensions"): L layers of widths
// D_0 (inputs), D_1 = ... = D_{L-1} = hidden width (2), D_L = 1. Output d of layer l is a GP with
// its own ARD SE kernel (lengthscales l_q, variance h), M pseudo-inputs Z and FITC conditionals,
// plus a fixed linear mean x^T W_d on the inner layers (report eq. 3.18; W as the DSVI DGP's,
// report eq. 3.12: identity, the first D_l right-singular vectors of the uncentred running
// inputs, or zero padding; the output layer has a zero mean; option mean_function zero: none, as
// geepee). There is no noise between layers
// (geepee's SDGPR); the likelihood is Gaussian with learned variance s2.
//
// Approximation: q(u) ∝ p(u) g(u)^N with one tied Gaussian site per GP, stored as its total
// natural parameters (N times one site's), as geepee's SGP_Layer: precision L L^T (L lower
// triangular, "site_L") and precision-mean t ("site_t"); u are the GP's values at Z less its
// mean function, so p(u) = N(0, K) with K = k(Z, Z) + jitter I. With c = 1 (the posterior) or
// c = beta = (N - 1) / N (the cavity), K = L_K L_K^T, C = L_K^T L and M_c = I + c C^T C:
//   Sigma_c = (K^-1 + c L L^T)^-1,  m_c = Sigma_c c t,
//   phi_c   = 1/2 c^2 t^T Sigma_c t + 1/2 log|Sigma_c|
//           = 1/2 c^2 (|s|^2 - c |L_mc^-1 C^T s|^2) + 1/2 log|K| - 1/2 log|M_c|,  s = L_K^T t,
//   a_c     = K^-1 m_c = c (t - c L M_c^-1 C^T s),
//   G_c     = K^-1 Sigma_c K^-1 - K^-1 = -c L M_c^-1 L^T.
// Energy (Bui et al. 2016 eq. 6 with alpha = 1, the AEP approximation of log p(y); geepee's
// compute_phi with the opposite sign), per training datapoint:
//   F / N = mean_{n in batch} log Z_n + sum_GPs [N phi_beta - (N - 1) phi_1 - phi_prior] / N,
// where the log|K| terms cancel and Z_n = N(y_n; m_n, v_n + s2) with (m_n, v_n) the moments of
// the last layer's output under the cavity, propagated by moment matching (probabilistic
// backpropagation): layer 1's input is the data, so
//   m = x^T W + k_xZ a,   v = h + k_xZ G k_Zx;
// a later layer's input is N(mu, diag(v_in)) and (report eqs. 3.19-3.23, kernels/psi.hpp)
//   m = mu^T W + Psi1 a,
//   v = h + tr((G + a a^T) Psi2) + W^T (diag(v_in) + mu mu^T) W + 2 Psi4 a - m^2,
//   Psi4_m = Psi1_m sum_q W_q (z_mq v_q + mu_q l_q^2) / (v_q + l_q^2).
// (The report's eq. 3.20 prints "psi_4 a" without the 2 of the cross term E[2 (x^T W)(k a)];
// this uses the 2.) ElboEstimate::elbo is this energy: expected_loglik = mean log Z_n and
// kl = -sum_GPs [...] / N; kl_weight scales the latter. It is an approximation of log p(y), not a
// lower bound; it is deterministic (`samples` is ignored).
//
// Prediction (geepee SDGPR.predict_y): the same propagation through the posterior (c = 1); the
// predictive is the Gaussian N(m, v + s2), returned as S identical columns.
//
// Initial values (geepee SGP_Layer.init_hypers and Gauss_Layer.init_hypers):
//   layer 1: Z = k-means of the inputs, every lengthscale = (median pairwise distance of up to
//            1000 training inputs, the zero self-distances included, as geepee) / 2, h = 0.25;
//   later layers: lengthscales 1 + 0.1 U(0, 1), h = 1, Z = linspace(-1, 1, M) in every column;
//   every GP's site: L = diag(1 / sqrt(alpha)), t = linspace(-1, 1, M) / alpha with
//            alpha_m = 0.5 U(0, 1) (geepee: q's "Su = diag(alpha)", mean linspace(-1, 1));
//   s2 = 1e-4 (geepee: sn = log 0.01, a standard deviation).
// Parameters (all unconstrained): layer{l}.gp{d}.{Z, log_ell (1 x D_l), log_var, site_L,
// site_t} and likelihood.log_variance.
#pragma once

#include <armadillo>
#include <string>
#include <utility>
#include <vector>

#include "models/model.hpp"
#include "models/registry.hpp"

namespace dkp::models {

struct AepConfig {
  size_t depth = 2;              ///< GP layers including the output layer (AEP-2)
  size_t num_inducing = 100;     ///< M per GP (report section 4)
  size_t hidden_width = 2;       ///< report section 4: "2 dimensions for all inner layers"
  bool linear_mean = true;       ///< report section 3.2 (geepee itself has zero mean functions)
  double jitter = 1e-6;          ///< on K_uu (geepee config.JITTER)
  double noise_variance = 1e-4;  ///< geepee Gauss_Layer: sn = log(0.01)
  double first_variance = 0.25;  ///< layer 1's h (geepee: sf = log 0.5 when given inputs)
  double hidden_variance = 1.0;  ///< later layers' h (geepee: sf = log 1)
  size_t kmeans_iterations = 10;
  size_t median_rows = 1000;    ///< geepee: the median distance of at most 1000 random rows
  size_t predict_chunk = 1000;  ///< test rows per block in predict()
  /// 0: regression; 2: binary classification with one output GP and the probit likelihood
  /// (likelihoods/probit.hpp, exact log Z); C > 2: C output GPs and the robust-max likelihood
  /// (report section 3.1.1: eps 1e-3 and 20 Gauss-Hermite points, likelihoods/robustmax.hpp).
  size_t num_classes = 0;
};

class AepDgp : public Model {
 public:
  /// @throws dkp::ConfigError for depth 0, M = 0, a zero hidden width or fewer than 2 points
  AepDgp(const AepConfig& config, const arma::mat& X_train, random::Stream& init);

  std::string describe() const override;
  const ParamMap& initial_parameters() const override { return initial_; }
  ElboEstimate elbo(const VarMap& params, const arma::mat& X, const arma::vec& y, double n_train,
                    size_t samples, double kl_weight, random::Stream& rng) const override;
  Predictive predict(const ParamMap& params, const arma::mat& X, size_t samples,
                     random::Stream& rng, bool keep_hidden = false) const override;
  bool deterministic_elbo() const override { return true; }

  const std::vector<arma::uword>& widths() const { return widths_; }
  const AepConfig& config() const { return cfg_; }

  /// The moments (B x D_L means and variances, likelihood noise not included) of the last
  /// layer's output at X under the cavity (c = (N - 1) / N) or the posterior (n_train = 0: c = 1),
  /// and, through `energy_terms`, sum over GPs of N phi_beta - (N - 1) phi_1 (needs n_train > 0).
  struct Moments {
    autodiff::Var mean, var;
  };
  Moments propagate(const VarMap& params, const arma::mat& X, double n_train,
                    autodiff::Var* energy_terms) const;

 private:
  AepConfig cfg_;
  std::vector<arma::uword> widths_;
  std::vector<arma::mat> W_;  ///< W_[l]: D_l x D_{l+1} linear mean (empty: zero mean)
  ParamMap initial_;
};

/// One GP of the AEP DGP, exposed for the tests.
namespace aep_detail {

/// A GP's cavity (c = beta) or posterior (c = 1) quantities.
struct GpState {
  autodiff::Var Z, log_ell, log_var, a_sq, h;
  autodiff::Var a;  ///< K^-1 m_c (M x 1)
  autodiff::Var G;  ///< K^-1 Sigma_c K^-1 - K^-1 (M x M)
};

/// GP d of layer l from `p` for count c; with `energy`, also N phi_beta - (N - 1) phi_1 (the
/// log|K| terms dropped: they cancel against phi_prior).
GpState gp_state(const VarMap& p, size_t l, size_t d, double jitter, double c, double n_train,
                 autodiff::Var* energy);

/// Moments of the GP's output (B x 1 each) for deterministic inputs mu (v_in invalid) or inputs
/// N(mu, diag(v_in)); w (D_in x 1) is the mean function's column (empty: zero mean). Variances
/// below 0 (round-off) are clamped to 0.
std::pair<autodiff::Var, autodiff::Var> gp_moments(const GpState& g, const autodiff::Var& mu,
                                                   const autodiff::Var& v_in, const arma::vec& w);

}  // namespace aep_detail

/// The registry's dgp aep entry (models/registry.hpp).
std::vector<RegistryEntry> aep_dgp_entries();

}  // namespace dkp::models
