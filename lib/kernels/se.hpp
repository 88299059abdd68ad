// Squared-exponential kernels on features (DESIGN.md section 2), as fused autodiff ops:
//   k(x, z) = h exp(-1/2 sum_d (x_d - z_d)^2 / l_d^2).
// The fused ops compute the unit-variance kernel of already-scaled inputs and its adjoints in
// closed form with two BLAS-3 products, instead of the 6-8 elementwise nodes a composition would
// record. With G = adjoint % K:
//   dL/dX = G Z - rowsum(G) % X,      dL/dZ = G^T X - colsum(G)^T % Z.
#pragma once

#include "autodiff/tape.hpp"

namespace dkp::kernels {

using autodiff::Var;

/// X / exp(log_ell) column-wise: X is n x d, log_ell is 1 x d (ARD) or 1 x 1 (isotropic).
Var scale_columns(const Var& X, const Var& log_ell);

/// exp(-1/2 ||x_i - z_j||^2) for rows of Xs (n x d) and Zs (m x d): an n x m matrix.
Var se_unit(const Var& Xs, const Var& Zs);

/// h exp(-1/2 ||x_i - z_j||^2) with h a 1 x 1 variance, in one op (the same as
/// mul(h, se_unit(Xs, Zs)) without the extra n x m pass forward and backward).
Var se_scaled(const Var& h, const Var& Xs, const Var& Zs);

/// exp(-1/2 ||x_i - z_j||^2) with both arguments the same matrix (n x n, symmetric; exact ones on
/// the diagonal).
Var se_unit_sym(const Var& Xs);

/// h (exp(-1/2 ||x_i - x_j||^2) + jitter [i == j]) for the rows of Xs (n x n, symmetric), in one
/// op: the same as mul(h, se_unit_sym(Xs) + jitter I) without that composition's two extra n x n
/// nodes forward and backward.
Var se_scaled_sym(const Var& h, const Var& Xs, double jitter);
/// Plain (no tape) values of se_unit and se_unit_sym, for prediction paths.
arma::mat se_unit_value(const arma::mat& Xs, const arma::mat& Zs);
arma::mat se_unit_sym_value(const arma::mat& Xs);

/// Squared-exponential kernel matrix h * exp(-1/2 ||(x - z)/l||^2), h = exp(log_var).
Var se_ard(const Var& X, const Var& Z, const Var& log_ell, const Var& log_var);
Var se_ard_sym(const Var& X, const Var& log_ell, const Var& log_var);

}  // namespace dkp::kernels
