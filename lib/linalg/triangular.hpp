// Triangular solves, both sides, both triangles, transposed or not.
//
// The solve is a recursive blocked one: halve the triangle, solve one half, update the other
// half's right-hand side with one dgemm, and solve blocks of at most 16-32 rows by multiplying with
// their explicit inverse (dtrtri + dtrmm). OpenBLAS 0.3.21's dtrsm runs at about 12 GFlop/s on the
// models' shapes (100 x 100 factor) against about 50 for its dgemm, so this is 2.5-3x faster:
// 136 us against 379 us for 455 right-hand sides, 9 against 14 us for 13 (measured on the 2-core
// development machine, one thread). Earlier measurements against other routes, 100 x 1000 right-
// hand side: dtrsm 560 us, LAPACK dtrtrs 540 us, arma::solve(trimatl(L), B) 860 us (it also
// estimates rcond) or 610 us with solve_opts::fast. Our own O(n) singular-diagonal check comes
// first. Accuracy: on the models' ill-conditioned factors (chol of an SE kernel + 1e-6 I on 100
// points in 1-d, cond(K) about 1e7) the largest error is about 5e-11 against 1e-12 for dtrsm
// (entries of order 1; leaves solved by dtrsm instead would keep 1e-12 at 2x the time). Both are
// below the factor's own forward error, cond(K) eps ~ 1e-9.
#pragma once

#include <armadillo>
#include <functional>
#include <memory>
#include <utility>

namespace dkp::linalg {

enum class Uplo { Lower, Upper };
enum class Side { Left, Right };

/// The explicit inverses of T's diagonal blocks that the blocked solve ends in, computed once
/// for several solves with the same triangle and as many right-hand sides, on either side and
/// with op(T) = T or T^T alike (a forward solve and its adjoint). Opaque; made by tri_leaves.
/// Every solve below takes them as an optional last argument: leaves made for another size or
/// triangle are not used, and the result is the same to the last bit either way.
struct TriLeaves;

/// T's leaf inverses (only the `uplo` triangle is read) for solves with m right-hand sides, or
/// null when such a solve does not use them (fewer than 8 right-hand sides). T must be square
/// with a nonzero diagonal (the solves check that on every call).
std::shared_ptr<const TriLeaves> tri_leaves(const arma::mat& T, Uplo uplo, arma::uword m);

/// Solves op(T) X = B (Side::Left) or X op(T) = B (Side::Right) for X, overwriting B, where T is
/// triangular (only the `uplo` triangle is read) and op(T) = T^T when `trans`.
/// @throws dkp::Error on non-square T, mismatched sizes or a zero/non-finite diagonal entry
void tri_solve_inplace(const arma::mat& T, arma::mat& B, Uplo uplo, bool trans = false,
                       Side side = Side::Left, const TriLeaves* leaves = nullptr);

/// As tri_solve_inplace, returning X; B is copied into X one panel of right-hand sides at a time,
/// just before the panel is solved (one pass over memory fewer than copying B first).
arma::mat tri_solve(const arma::mat& T, const arma::mat& B, Uplo uplo, bool trans = false,
                    Side side = Side::Left, const TriLeaves* leaves = nullptr);

/// As tri_solve_inplace on B's own memory (no copy), returning X.
arma::mat tri_solve(const arma::mat& T, arma::mat&& B, Uplo uplo, bool trans = false,
                    Side side = Side::Left);

/// fill / done of tri_solve_panels: (first column c0, width w, the panel's n x w memory).
using PanelFn = std::function<void(arma::uword c0, arma::uword w, double* panel)>;

/// op(T) X = B (left side) in panels of right-hand-side columns, fused with the caller's work on
/// each panel while it is in cache: fill(c0, w, panel) writes columns c0 .. c0 + w - 1 of B into
/// X's panel (n x w, contiguous in X), the panel is solved in place, then done(c0, w, panel) sees
/// the solved columns. X must be n x m (n = T's size); its contents on entry are not read. The
/// panels are in increasing order of c0 and cover all m columns (one panel when m < 8).
/// `leaves`: tri_leaves of this T, uplo and m, or null.
void tri_solve_panels(const arma::mat& T, arma::mat& X, Uplo uplo, bool trans, const PanelFn& fill,
                      const PanelFn& done, const TriLeaves* leaves = nullptr);

/// C += alpha * tri(P Q^T) (P, Q n x k) or, when `trans`, C += alpha * tri(P^T Q) (P, Q k x n),
/// where tri keeps the `uplo` triangle (with the diagonal); C's other triangle is not touched.
/// Blocked dgemm calls on the triangle only: about half the flops of the full product (the
/// adjoint of a triangular factor needs only its triangle). Chunks of the product with a zero
/// factor are skipped (a triangular Q: about half the flops again). With
/// `diagonal_blocks_only`, only the triangles of the 32 x 32 diagonal blocks are added (the same
/// dgemm calls as without it, so C's diagonal is the same to the last bit) and the rest of C is
/// not touched: for an adjoint whose diagonal alone is used (autodiff::Node::adj_diag_only).
/// @throws dkp::Error on mismatched sizes
void add_tri_product(arma::mat& C, Uplo uplo, const arma::mat& P, const arma::mat& Q, bool trans,
                     double alpha, bool diagonal_blocks_only = false);

/// T^{-1} for a triangular T (only the `uplo` triangle is read) by LAPACK's dtrtri: n^3 / 3
/// flops, a third of solving against a dense identity. The other triangle of the result is zero.
/// @throws dkp::Error on non-square T or a singular triangle (dtrtri's info > 0)
arma::mat tri_inverse(const arma::mat& T, Uplo uplo);

/// A^T B for lower-triangular n x n A and B (only their lower triangles are read; the product is
/// dense): blocked dtrmm and dgemm calls that skip both factors' zero triangles, about 2 n^3 / 3
/// flops against 2 n^3 for a dense product (the DIWP's T^T L^{-1} in its input layer's log prior).
/// @throws dkp::Error on mismatched sizes
arma::mat lower_t_times_lower(const arma::mat& A, const arma::mat& B);

/// The lower triangle (with the diagonal) of S B^T for a dense n x n S and a lower-triangular B
/// (only its lower triangle is read); the strict upper triangle of the result is zero. Blocked
/// dgemm calls on the nonzero part only: about n^3 / 3 flops against 2 n^3 for the full product
/// (the adjoint of a Cholesky factor through its inverse, autodiff::sq_norm_tri_t_inv).
/// @throws dkp::Error on mismatched sizes
arma::mat tril_times_lower_t(const arma::mat& S, const arma::mat& B);

/// L^{-1} B, or L^{-T} B when trans (L lower triangular).
inline arma::mat solve_lower(const arma::mat& L, const arma::mat& B, bool trans = false) {
  return tri_solve(L, B, Uplo::Lower, trans, Side::Left);
}
inline arma::mat solve_lower(const arma::mat& L, arma::mat&& B, bool trans = false) {
  return tri_solve(L, std::move(B), Uplo::Lower, trans, Side::Left);
}

/// U^{-1} B, or U^{-T} B when trans (U upper triangular).
inline arma::mat solve_upper(const arma::mat& U, const arma::mat& B, bool trans = false) {
  return tri_solve(U, B, Uplo::Upper, trans, Side::Left);
}
inline arma::mat solve_upper(const arma::mat& U, arma::mat&& B, bool trans = false) {
  return tri_solve(U, std::move(B), Uplo::Upper, trans, Side::Left);
}

}  // namespace dkp::linalg
