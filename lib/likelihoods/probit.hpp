// Binary classification with the Bernoulli-probit likelihood (the DSVI reproduction report,
// section 3.1.1 and its Rectangle-Images experiment; GPflow's Bernoulli with its inv_probit, which
// the report's code uses): for a label y in {0, 1} and s = 2y - 1,
//   p(y | f) = a Phi(s f) + j,   a = 1 - 2j,
// with GPflow's jitter j = 1e-3 keeping every probability in [j, 1 - j] (so p(0 | f) + p(1 | f)
// = 1 and no log is ever of 0). For f ~ N(m, v):
//   E_q log p(y | f) ~ (1 / sqrt(pi)) sum_k w_k log(a Phi(s (m + sqrt(2 v) x_k)) + j)
// with K-point Gauss-Hermite nodes x_k and weights w_k (the report's K = 20), and exactly
//   p(y | q) = E_q p(y | f) = a Phi(s m / sqrt(1 + v)) + j.
// Labels are 0 and 1 (likelihoods::class_labels with 2 classes).
#pragma once

#include <armadillo>

#include "autodiff/tape.hpp"

namespace dkp::likelihoods {

struct Probit {
  double jitter = 1e-3;   ///< GPflow's inv_probit jitter
  size_t gh_points = 20;  ///< the report's K = 20
};

/// Checks the jitter in [0, 0.5) and at least 1 quadrature point; throws ConfigError.
void validate(const Probit& pr);

/// Sum over the points of E_q log p(y_n | f_n), f_n ~ N(m_n, v_n): an autodiff op in m and v
/// (N x 1 each, v > 0); y holds labels 0 / 1. Throws Error on shapes, labels or variances.
autodiff::Var probit_ell_sum(const autodiff::Var& m, const autodiff::Var& v, const arma::uvec& y,
                             const Probit& pr);

/// Sum over the points of log p(y_n | q_n) = log(a Phi(s_n m_n / sqrt(1 + v_n)) + j): the
/// approximate-EP DGP's tilted normaliser (DSVI report eq. 3.14 with the probit), an autodiff op
/// in m and v (N x 1 each, v >= 0).
autodiff::Var probit_log_z_sum(const autodiff::Var& m, const autodiff::Var& v, const arma::uvec& y,
                               const Probit& pr);

/// p(y = 1 | q_n) = a Phi(m_n / sqrt(1 + v_n)) + j for every element of m and v (same shapes).
arma::mat probit_prob_one(const arma::mat& m, const arma::mat& v, const Probit& pr);

}  // namespace dkp::likelihoods
