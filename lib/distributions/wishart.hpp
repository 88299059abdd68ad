// The Wishart distribution W(Sigma, nu) over P x P PSD matrices (deliverable 2): Bartlett
// sampler and log density, full rank (nu > P - 1) and singular (integer nu < P; Srivastava 2003,
// GW paper appendix D eq. 115).
//
// Densities of singular matrices are with respect to Lebesgue measure on the entries G_ij with
// j < min(i + 1, nu) (the first nu columns of the lower triangle), as in Srivastava (2003) and GW
// paper appendix B.1; the GW, A-GW and AB-GW densities use the same measure, so log-density ratios
// between them (ELBO terms, importance weights) are meaningful.
#pragma once

#include "autodiff/tape.hpp"
#include "distributions/bartlett.hpp"
#include "random/stream.hpp"

namespace dkp::distributions {

/// A sampled PSD matrix G = F F^T with the factor and the Bartlett draws it came from.
struct PsdSample {
  Var G;  ///< P x P
  /// The factor with G = F F^T: L T (P x m) for W and GW; A T B for A-GW / AB-GW; L T^{-T} (P x P)
  /// for the inverse Wishart. For W/GW/A-GW/AB-GW this is the F_i of the DWP conditional (GW paper
  /// eq. 43; zero-pad to nu columns when nu > P, eq. 44).
  Var F;
  BartlettFactor bartlett;  ///< T (P x m) and c = diag(T)^2
};

/// log Gamma_p(a) = p (p - 1)/4 log(pi) + sum_{i<p} lgamma(a - i/2) (plain value).
double log_mvgamma(arma::uword p, double a);

/// G ~ W(L L^T, nu) by the (singular) Bartlett decomposition: c_j ~ Gamma((nu - j)/2, 1/2),
/// T_ij ~ N(0, 1), F = L T, G = F F^T. L is a lower Cholesky factor (P x P, positive diagonal).
/// Gradients flow to L only (nu is a fixed number here; inverse_wishart_sample takes nu as a Var).
PsdSample wishart_sample(const Var& L, double nu, random::Stream& s,
                         GammaMethod method = GammaMethod::Rejection);

/// log W(G; Sigma = L L^T, nu), with m = bartlett_columns(P, nu):
///   (nu - P - 1)/2 log|G_{:m,:m}| - nu/2 log|Sigma| - tr(Sigma^{-1} G)/2 - nu P/2 log 2
///   - log Gamma_m(nu/2) + nu (m - P)/2 log(pi).
/// For m = P this is the usual density; for m = nu < P it is Srivastava's (2003, eq. 3.2) singular
/// Wishart density (GW paper eq. 115 for Sigma = I). G must be symmetric; G_{:m,:m} is factorised
/// with the checked Cholesky (no jitter), tr(Sigma^{-1} G) via two triangular solves.
Var wishart_log_prob(const Var& G, const Var& L, double nu);

/// The same density given a factor F (P x m) with G = F F^T (for example PsdSample::F of a GW /
/// A-GW sample): log|G_{:m,:m}| = 2 log|det F_{:m,:}| (LU) and tr(Sigma^{-1} G) = ||L^{-1} F||_F^2,
/// which avoids factorising G (better conditioned; no jitter).
Var wishart_log_prob_factor(const Var& F, const Var& L, double nu);

}  // namespace dkp::distributions
