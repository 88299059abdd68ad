// The (generalised, singular) Bartlett factor shared by the Wishart, GW, A-GW and AB-GW
// distributions, and the small fused ops their densities are built from.
//
// Notation (0-based j; m = min(P, nu)): T is P x m lower trapezoidal with
//     T_jj^2 = c_j ~ Gamma(alpha_j, beta_j)          (shape alpha_j, rate beta_j), j < m,
//     T_ij   ~ N(mu_ij, sigma_ij^2)                   for i > j,
//     T_ij   = 0                                      for i < j.
// The Wishart W(I, nu) is alpha_j = (nu - j) / 2, beta_j = 1/2, mu = 0, sigma = 1 (Bartlett 1933;
// GW paper eqs. 19-21, which are 1-based: alpha_j = (nu - j + 1) / 2).
#pragma once

#include <armadillo>

#include "autodiff/tape.hpp"
#include "distributions/gamma_op.hpp"
#include "random/stream.hpp"

namespace dkp::distributions {

/// The number of Bartlett columns m = min(P, nu) of a (generalised) Wishart with nu degrees of
/// freedom: P when nu > P - 1 (full rank; real nu allowed), else nu, which must be an integer.
/// @throws dkp::Error for nu <= 0, non-finite nu, or a non-integer nu <= P - 1
arma::uword bartlett_columns(arma::uword P, double nu);

/// A Bartlett factor and the Gamma draws it was built from.
struct BartlettFactor {
  Var c;  ///< m x 1, c_j = T_jj^2
  Var T;  ///< P x m, lower trapezoidal
};

/// Parameters of the generalised Bartlett distribution (GW paper eq. 25). Shapes: alpha m x 1;
/// beta m x 1 or 1x1; mu and sigma P x m or 1x1 (only their strictly lower triangles are read).
/// All are on the constrained scale (alpha, beta, sigma > 0); the caller owns the transform.
struct BartlettParams {
  Var alpha, beta, mu, sigma;
};

/// The same parameters as tape constants (no gradient): pass these to a log density for the
/// "sticking the landing" estimator (GW paper appendix F; notes section 3), which keeps only the
/// gradient through the sample path.
BartlettParams detached(const BartlettParams& p);

/// The Wishart's own Bartlett parameters for W(I, nu) with P rows, as constants
/// (alpha_j = (nu - j)/2, beta = 1/2, mu = 0, sigma = 1).
BartlettParams wishart_bartlett_params(Tape& tape, arma::uword P, double nu);

/// T from c (m x 1, positive) and `lower` (P x m; its strictly lower triangle is copied, the rest
/// ignored): T_jj = sqrt(c_j). Fused op. Adjoints: cbar_j = Tbar_jj / (2 T_jj),
/// lowerbar = strictly lower part of Tbar.
Var bartlett_assemble(const Var& c, const Var& lower);

/// Draws a Bartlett factor with P rows: first the m Gamma draws c (in order j = 0..m-1), then a
/// P x m matrix of standard normals eps (column-major; entries on and above the diagonal are
/// drawn and discarded, so the stream use does not depend on the parameters' values), and
/// T_ij = mu_ij + sigma_ij eps_ij below the diagonal.
BartlettFactor bartlett_sample(arma::uword P, const BartlettParams& p, random::Stream& s,
                               GammaMethod method = GammaMethod::Rejection);

/// log Q(c, T_{i>j}) = sum_j log Gamma(c_j; alpha_j, beta_j) + sum_{i>j} log N(T_ij; mu_ij,
/// sigma_ij^2): the density of the squared diagonal and of the strictly lower elements (no
/// Jacobian for c -> T_jj; callers add the Jacobians they need).
Var bartlett_log_prob(const BartlettFactor& f, const BartlettParams& p);

// ---- fused helpers used by the densities -------------------------------------------------------

/// sum_j w_j log |X_jj| over j < w.n_elem (X square or rectangular with at least w.n_elem rows
/// and columns). Adjoint: Xbar_jj = g w_j / X_jj.
Var weighted_log_abs_diag(const Var& X, const arma::vec& w);

/// log |det X| of a square matrix via LU (LAPACK dgetrf through Armadillo).
/// Adjoint: Xbar = g X^{-T}.
/// @throws dkp::Error for a non-square or numerically singular X
Var log_abs_det(const Var& X);

/// The lower-trapezoidal factor Lambda (P x m, positive diagonal) with Lambda Lambda^T = G for a
/// PSD G of rank m (plain values): Lambda_{:m} = chol(G_{:m,:m}), the rows below from
/// G_{m:, :m} Lambda_{:m}^{-T}. For m = P it is the Cholesky factor.
/// @throws linalg::NotPsdError when G_{:m,:m} is not positive definite
arma::mat trapezoidal_factor(const arma::mat& G, arma::uword m);

}  // namespace dkp::distributions
