// Differentiable linear algebra: Cholesky, triangular solves, log-determinants, SPD inverse and
// solve. Values come from linalg/ (checked Cholesky with jitter, blocked triangular solves); every
// adjoint is O(n^3) with BLAS-3 calls only.
//
// Symmetric inputs. cholesky, spd_inverse, spd_solve and logdet_spd read a symmetric matrix A
// (only its lower triangle reaches LAPACK) and return the *symmetric* gradient, i.e. the one
// whose inner product with any symmetric perturbation dA is the directional derivative. Build
// A symmetric (e.g. K = k(X, X), L L^T + eps I) so that this is the gradient you want.
//
// Jitter. When linalg::chol needed jitter, the factor is that of A + c I with
// c = r tr(A) / n (r from the JitterPolicy schedule). The adjoints are exact for that map:
// Abar = Cbar + (r / n) tr(Cbar) I, where Cbar is the adjoint w.r.t. A + c I. Jitter events are
// counted in the CholStats the caller passes, or else in the tape's (Tape::chol_stats).
#pragma once

#include "autodiff/tape.hpp"
#include "linalg/chol.hpp"
#include "linalg/triangular.hpp"

namespace dkp::autodiff {

/// Lower Cholesky factor L of symmetric A (A + jitter I = L L^T), via linalg::chol.
/// Adjoint (Giles 2008; Murray 2016, "Differentiation of the Cholesky decomposition", eq. 10):
///   Abar = sym(L^{-T} Phi(L^T Lbar) L^{-1}),
/// Phi = lower triangle with the diagonal halved, sym(S) = (S + S^T) / 2; Lbar is the lower
/// triangle of the output adjoint (L's upper triangle is identically zero).
/// @throws dkp::Error naming `where` for a non-square or asymmetric A; linalg::NotPsdError
Var cholesky(const Var& A, const char* where, const linalg::JitterPolicy& policy = {},
             linalg::CholStats* stats = nullptr);

/// Triangular solve: X = op(T)^{-1} B (Side::Left) or X = B op(T)^{-1} (Side::Right), op(T) = T
/// or T^T. Only the `uplo` triangle of T is read, and T's gradient is confined to it.
/// Adjoints (left): Bbar = op(T)^{-T} Xbar, op(T)bar = -Bbar X^T;
///          (right): Bbar = Xbar op(T)^{-T}, op(T)bar = -X^T Bbar.
Var tri_solve(const Var& T, const Var& B, linalg::Uplo uplo, bool trans = false,
              linalg::Side side = linalg::Side::Left);

/// L^{-1} B, or L^{-T} B when trans (L lower triangular).
Var solve_lower(const Var& L, const Var& B, bool trans = false);
/// U^{-1} B, or U^{-T} B when trans (U upper triangular).
Var solve_upper(const Var& U, const Var& B, bool trans = false);
/// A^{-1} B = L^{-T} L^{-1} B from the lower factor L of A (two solve_lower nodes).
Var chol_solve(const Var& L, const Var& B);

/// log det(A) = 2 sum_i log L_ii from the lower Cholesky factor L of A (1x1).
Var logdet_chol(const Var& L);

/// A^{-1} of a symmetric positive definite A via its Cholesky factor (one node).
/// Adjoint: Abar = -A^{-1} sym(Gbar) A^{-1}.
Var spd_inverse(const Var& A, const char* where, const linalg::JitterPolicy& policy = {},
                linalg::CholStats* stats = nullptr);

/// A^{-1} B for symmetric positive definite A via its Cholesky factor (one node).
/// Adjoint: Bbar = A^{-1} Xbar, Abar = -sym(Bbar X^T).
Var spd_solve(const Var& A, const Var& B, const char* where,
              const linalg::JitterPolicy& policy = {}, linalg::CholStats* stats = nullptr);

/// log det(A) of a symmetric positive definite A via its Cholesky factor (1x1, one node).
/// Adjoint: Abar = g A^{-1}.
Var logdet_spd(const Var& A, const char* where, const linalg::JitterPolicy& policy = {},
               linalg::CholStats* stats = nullptr);

}  // namespace dkp::autodiff
