#include "linalg/triangular.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::linalg {

void tri_solve_inplace(const arma::mat& T, arma::mat& B, Uplo uplo, bool trans, Side side) {
  if (T.n_rows != T.n_cols) {
    throw Error(fmt::format("linalg::tri_solve: triangular factor is {}x{}, not square", T.n_rows,
                            T.n_cols));
  }
  const arma::uword n = T.n_rows;
  const bool left = side == Side::Left;
  if ((left ? B.n_rows : B.n_cols) != n) {
    throw Error(fmt::format("linalg::tri_solve: {} side: {}x{} factor and {}x{} right-hand side",
                            left ? "left" : "right", n, n, B.n_rows, B.n_cols));
  }
  for (arma::uword i = 0; i < n; ++i) {
    const double d = T.at(i, i);
    if (d == 0.0 || !std::isfinite(d)) {
      throw Error(
          fmt::format("linalg::tri_solve: singular triangular factor ({}x{}, diagonal "
                      "entry {} is {})",
                      n, n, i, d));
    }
  }
  if (B.n_elem == 0) return;
  constexpr auto kMax = arma::uword(std::numeric_limits<int>::max());
  if (B.n_rows > kMax || B.n_cols > kMax) {
    throw Error("linalg::tri_solve: matrix too large for 32-bit BLAS");
  }
  cblas_dtrsm(CblasColMajor, left ? CblasLeft : CblasRight,
              uplo == Uplo::Lower ? CblasLower : CblasUpper, trans ? CblasTrans : CblasNoTrans,
              CblasNonUnit, int(B.n_rows), int(B.n_cols), 1.0, T.memptr(), int(n), B.memptr(),
              int(B.n_rows));
}

void add_tri_product(arma::mat& C, Uplo uplo, const arma::mat& P, const arma::mat& Q, bool trans,
                     double alpha) {
  const arma::uword n = trans ? P.n_cols : P.n_rows, k = trans ? P.n_rows : P.n_cols;
  if (Q.n_rows != P.n_rows || Q.n_cols != P.n_cols || C.n_rows != n || C.n_cols != n) {
    throw Error(fmt::format("linalg::add_tri_product: C {}x{}, P {}x{}, Q {}x{}", C.n_rows,
                            C.n_cols, P.n_rows, P.n_cols, Q.n_rows, Q.n_cols));
  }
  if (n == 0) return;
  if (k == 0) return;
  const int ni = int(n), ki = int(k), ld = trans ? ki : ni;
  // Element (i, l) of op(P) where op(P) = P (n x k) or P^T: the start of row block i0 is
  // P + i0 (no trans, leading dimension n) or P + i0 * k (trans, leading dimension k).
  auto at = [&](const arma::mat& M, arma::uword i0) { return M.memptr() + (trans ? i0 * k : i0); };
  const CBLAS_TRANSPOSE ta = trans ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = trans ? CblasNoTrans : CblasTrans;
  constexpr arma::uword kBlock = 32;
  arma::mat D(kBlock, kBlock);
  for (arma::uword j0 = 0; j0 < n; j0 += kBlock) {
    const arma::uword w = std::min(kBlock, n - j0), j1 = j0 + w;
    // Off-diagonal part of block column j0..j1: rows j1..n (lower) or 0..j0 (upper).
    const arma::uword r0 = uplo == Uplo::Lower ? j1 : 0, r1 = uplo == Uplo::Lower ? n : j0;
    if (r1 > r0) {
      cblas_dgemm(CblasColMajor, ta, tb, int(r1 - r0), int(w), ki, alpha, at(P, r0), ld, at(Q, j0),
                  ld, 1.0, C.colptr(j0) + r0, ni);
    }
    // Diagonal block, then its triangle.
    cblas_dgemm(CblasColMajor, ta, tb, int(w), int(w), ki, alpha, at(P, j0), ld, at(Q, j0), ld, 0.0,
                D.memptr(), int(kBlock));
    for (arma::uword j = 0; j < w; ++j) {
      const arma::uword i_begin = uplo == Uplo::Lower ? j : 0;
      const arma::uword i_end = uplo == Uplo::Lower ? w : j + 1;
      for (arma::uword i = i_begin; i < i_end; ++i) C(j0 + i, j0 + j) += D(i, j);
    }
  }
}

arma::mat tri_solve(const arma::mat& T, arma::mat B, Uplo uplo, bool trans, Side side) {
  tri_solve_inplace(T, B, uplo, trans, side);
  return B;
}

}  // namespace dkp::linalg
