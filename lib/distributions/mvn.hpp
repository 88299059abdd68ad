// Multivariate and matrix normal distributions with Cholesky-parameterised covariances
// (deliverable 1).
#pragma once

#include "autodiff/tape.hpp"
#include "random/stream.hpp"

namespace dkp::distributions {

using autodiff::Var;

/// sum_k log N(x_k; m_k, L L^T) over the n columns x_k of X (P x n), where L is the lower
/// Cholesky factor of the P x P covariance and M is P x n, or P x 1 (shared by all columns):
///   -n P log(2 pi)/2 - n sum_i log L_ii - ||L^{-1} (X - M)||_F^2 / 2.
Var mvn_log_prob(const Var& X, const Var& M, const Var& L);

/// X = M + L_row E L_col^T with E an n x p matrix of standard normals drawn from `s` in
/// column-major order: X ~ MN(M, U = L_row L_row^T, V = L_col L_col^T), i.e.
/// vec(X) ~ N(vec(M), V kron U). L_row is n x n lower, L_col p x p lower.
Var matrix_normal_sample(const Var& M, const Var& L_row, const Var& L_col, random::Stream& s);

/// X = M + L_row E: the matrix normal with identity column covariance (columns independent
/// N(m_k, L_row L_row^T)). This is the DWP conditional F_t | F_i (GW paper eq. 40).
Var matrix_normal_sample(const Var& M, const Var& L_row, random::Stream& s);

/// X = M + diag(sd) E: rows independent with standard deviations sd (n x 1), columns independent;
/// the per-point DWP / GP conditional (one train/test point at a time, GW paper sec. 3.4).
Var rowwise_normal_sample(const Var& M, const Var& sd, random::Stream& s);

}  // namespace dkp::distributions
