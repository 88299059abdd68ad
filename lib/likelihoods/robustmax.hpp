// Multi-class classification with the robust-max likelihood (Hernández-Lobato et al. 2011; the
// DSVI reproduction report, eq. 3.13; GPflow's RobustMax): with C latent functions f_c,
//   p(y | f) = 1 - eps                if y = argmax_c f_c,
//              eps / (C - 1)          otherwise.
// For independent Gaussian marginals f_c ~ N(m_c, v_c) the probability that class y is the
// largest is one-dimensional (report eq. 3.15, with sqrt(v_c) where the report prints v_c):
//   P_y = integral N(x; m_y, v_y) prod_{c != y} Phi((x - m_c) / sqrt(v_c)) dx
//       ~ (1 / sqrt(pi)) sum_k w_k prod_{c != y} Phi((m_y + sqrt(2 v_y) x_k - m_c) / sqrt(v_c)),
// with K-point Gauss-Hermite nodes x_k and weights w_k. As GPflow, each Phi is squeezed into
// [1e-4, 1 - 1e-4] (Phi (1 - 2e-4) + 1e-4) so no factor is ever 0. Then
//   E_q log p(y | f) = P_y log(1 - eps) + (1 - P_y) log(eps / (C - 1))   (exact in P_y),
//   p(y | q) = P_y (1 - eps) + (1 - P_y) eps / (C - 1).
// Labels are class indices 0 .. C - 1.
#pragma once

#include <armadillo>

#include "autodiff/tape.hpp"
#include "likelihoods/quadrature.hpp"

namespace dkp::likelihoods {

struct RobustMax {
  size_t classes = 10;
  double eps = 1e-3;      ///< GPflow's default
  size_t gh_points = 20;  ///< the report's K = 20
};

/// Checks eps in (0, 1), at least 2 classes and at least 1 quadrature point; throws ConfigError.
void validate(const RobustMax& rm);

/// Class labels as indices: every y_n an integer in [0, classes); throws Error naming the first
/// bad one.
arma::uvec class_labels(const arma::vec& y, size_t classes);

/// P(argmax_c f_nc = y_n) per point, for N x C means m and variances v (v > 0).
arma::vec prob_largest(const arma::mat& m, const arma::mat& v, const arma::uvec& y,
                       const GaussHermite& gh);

/// Sum over the points of E_q log p(y_n | f_n), an autodiff op in m and v (N x C each).
autodiff::Var robustmax_ell_sum(const autodiff::Var& m, const autodiff::Var& v, const arma::uvec& y,
                                const RobustMax& rm);

/// Sum over the points of log E_q p(y_n | f_n) = log((1 - eps) P_n + eps / (C - 1) (1 - P_n)),
/// P_n = P(argmax = y_n): the tilted normaliser of the approximate-EP DGP (DSVI report eq.
/// 3.14-3.15), an autodiff op in m and v (N x C each).
autodiff::Var robustmax_log_z_sum(const autodiff::Var& m, const autodiff::Var& v,
                                  const arma::uvec& y, const RobustMax& rm);

/// p(y = c | q) for every point and class (N x C, rows sum to 1 up to the quadrature error).
arma::mat robustmax_class_probs(const arma::mat& m, const arma::mat& v, const RobustMax& rm);

}  // namespace dkp::likelihoods
