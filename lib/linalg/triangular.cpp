#include "linalg/triangular.hpp"

#include <cblas.h>

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

arma::mat tri_solve(const arma::mat& T, arma::mat B, Uplo uplo, bool trans, Side side) {
  tri_solve_inplace(T, B, uplo, trans, side);
  return B;
}

}  // namespace dkp::linalg
