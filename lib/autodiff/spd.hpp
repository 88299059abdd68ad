// Symmetric positive definite matrices from unconstrained square matrices (practices.md,
// Practice 5; Stan's cov_matrix_constrain):
//   L = strict_lower(U) + diag(softplus(diag(U))),   A = L L^T + eps I.
// Every U gives an SPD A (eigenvalues >= eps), and every entry of U can be perturbed on its own,
// so finite-difference tests of ops with SPD inputs (Cholesky, SPD solves) perturb U, never a
// single entry of a symmetric matrix. The strict upper triangle of U is ignored (zero gradient).
#pragma once

#include "autodiff/tape.hpp"

namespace dkp::autodiff {

/// The lower factor L of the map above (plain values).
arma::mat spd_factor_from_unconstrained(const arma::mat& U);

/// A = L L^T + eps I from U (plain values).
arma::mat spd_from_unconstrained(const arma::mat& U, double eps = 1e-6);

/// U with spd_from_unconstrained(U, eps) == A (up to round-off), for SPD A with A - eps I SPD.
arma::mat unconstrained_from_spd(const arma::mat& A, double eps = 1e-6);

/// The map as one differentiable op. Adjoint: Lbar = (Abar + Abar^T) L;
/// Ubar = strict_lower(Lbar) + diag(diag(Lbar) % sigmoid(diag(U))).
Var spd_from_unconstrained(const Var& U, double eps = 1e-6);

}  // namespace dkp::autodiff
