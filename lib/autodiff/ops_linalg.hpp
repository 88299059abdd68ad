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
/// triangle of the output adjoint (L's upper triangle is identically zero). `how`: the adjoint's
/// algorithm (linalg::chol_adjoint; Congruence for large factors, see linalg::CholAdjoint).
/// @throws dkp::Error naming `where` for a non-square or asymmetric A; linalg::NotPsdError
Var cholesky(const Var& A, const char* where, const linalg::JitterPolicy& policy = {},
             linalg::CholStats* stats = nullptr,
             linalg::CholAdjoint how = linalg::CholAdjoint::Solves);

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

/// alpha V V^T (n x n, exactly symmetric) for an n x k V, by dsyrk on one triangle (n^2 k flops,
/// half a dense product's) and a copy to the other. Adjoint: Vbar = alpha (G + G^T) V, one dgemm
/// (2 n^2 k flops) instead of matmul's two (the DIWP's V V^T / N0: 58 -> 29 GFlop forward,
/// 116 -> 58 backward for N0 = 3072).
Var gram_scaled(const Var& V, double alpha);

/// ||T^T L^{-1}||_F^2 = tr(L^{-T} T T^T L^{-1}) (1x1) for lower-triangular n x n T and L (only
/// their lower triangles are read): with L_p = sqrt(delta) I, the DIWP input layer's
/// tr(Psi_p G^{-1}) = delta ||T^T L_q^{-1}||_F^2. Forward: L^{-1} by dtrtri (n^3 / 3) and
/// M = T^T L^{-1} as a triangle-times-triangle product (2 n^3 / 3), instead of a solve against a
/// dense sqrt(delta) I and a dense product. With g the output's adjoint:
///   Tbar = 2 g tril(L^{-1} M^T)   (only its diagonal, O(n^2), when T's adjoint is read there only:
///                                  Node::adj_diag_only),
///   Lbar = -2 g tril(M^T M L^{-T})   (M^T M by dsyrk, n^3; the triangle by tril_times_lower_t,
///                                    n^3 / 3).
Var sq_norm_tri_t_inv(const Var& T, const Var& L);

/// [Xi; Xt] L T^{-T} ((mi + mt) x n) for lower-triangular n x n L and T (only their lower
/// triangles are read): the features X F of an inverse Wishart sample's factor F = L T^{-T}
/// (distributions::inverse_wishart_sample) without forming F. Forward: X L by dtrmm and the
/// right solve on the thin (mi + mt) x n product, 2 (mi + mt) n^2 flops, against n^3 for F and
/// 2 (mi + mt) n^2 for X F. Backward: with R = Ybar T^{-1} (a thin solve: F's adjoint
/// X^T Ybar has rank <= mi + mt, so its solve is done on Ybar),
///   Xbar = R L^T (dtrmm, for the parts that need it),  Lbar = tril(X^T R),
///   Tbar = -tril(R^T Y)   (only its diagonal, O((mi + mt) n), under Node::adj_diag_only).
Var times_iw_factor(const Var& Xi, const Var& Xt, const Var& L, const Var& T);

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
