// Triangular solves through BLAS-3 dtrsm (cblas), both sides, both triangles, transposed or not.
//
// Measured on this machine (OPENBLAS_NUM_THREADS=1, 100x100 lower factor, 100x1000 right-hand
// side): dtrsm 560 us, LAPACK dtrtrs 540 us (it calls dtrsm after a zero-diagonal check),
// arma::solve(trimatl(L), B) 860 us (it also estimates rcond with dtrcon, and may fall back to an
// approximate solve) or 610 us with solve_opts::fast; for a right-side solve dtrsm needs no
// transposed copies (660 us against 780 us for arma with two transposes). dtrsm it is, with our
// own O(n) singular-diagonal check.
#pragma once

#include <armadillo>

namespace dkp::linalg {

enum class Uplo { Lower, Upper };
enum class Side { Left, Right };

/// Solves op(T) X = B (Side::Left) or X op(T) = B (Side::Right) for X, overwriting B, where T is
/// triangular (only the `uplo` triangle is read) and op(T) = T^T when `trans`.
/// @throws dkp::Error on non-square T, mismatched sizes or a zero/non-finite diagonal entry
void tri_solve_inplace(const arma::mat& T, arma::mat& B, Uplo uplo, bool trans = false,
                       Side side = Side::Left);

/// As tri_solve_inplace, returning X.
arma::mat tri_solve(const arma::mat& T, arma::mat B, Uplo uplo, bool trans = false,
                    Side side = Side::Left);

/// C += alpha * tri(P Q^T) (P, Q n x k) or, when `trans`, C += alpha * tri(P^T Q) (P, Q k x n),
/// where tri keeps the `uplo` triangle (with the diagonal); C's other triangle is not touched.
/// Blocked dgemm calls on the triangle only: about half the flops of the full product (the
/// adjoint of a triangular factor needs only its triangle).
/// @throws dkp::Error on mismatched sizes
void add_tri_product(arma::mat& C, Uplo uplo, const arma::mat& P, const arma::mat& Q, bool trans,
                     double alpha);

/// L^{-1} B, or L^{-T} B when trans (L lower triangular).
inline arma::mat solve_lower(const arma::mat& L, arma::mat B, bool trans = false) {
  tri_solve_inplace(L, B, Uplo::Lower, trans, Side::Left);
  return B;
}

/// U^{-1} B, or U^{-T} B when trans (U upper triangular).
inline arma::mat solve_upper(const arma::mat& U, arma::mat B, bool trans = false) {
  tri_solve_inplace(U, B, Uplo::Upper, trans, Side::Left);
  return B;
}

}  // namespace dkp::linalg
