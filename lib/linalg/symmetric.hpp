// In-place symmetrisation of square matrices, used by the adjoints of ops whose input is
// symmetric (a Cholesky factorisation, a Gram matrix C^T C, a kernel matrix k(X, X)).
#pragma once

#include <algorithm>

#include <armadillo>

namespace dkp::linalg {

/// Calls f(i, j) for every entry (i, j), i > j, of the strict lower triangle of an n x n matrix,
/// in 16 x 16 tiles so that the mirror entries (j, i), read with stride, stay in cache (a plain
/// column loop misses on every one). Stops, returning false, as soon as f returns false.
template <class F>
bool for_each_strict_lower_tiled(arma::uword n, F&& f) {
  constexpr arma::uword bs = 16;
  for (arma::uword jb = 0; jb < n; jb += bs) {
    const arma::uword je = std::min(jb + bs, n);
    for (arma::uword ib = jb; ib < n; ib += bs) {
      const arma::uword ie = std::min(ib + bs, n);
      for (arma::uword j = jb; j < je; ++j) {
        for (arma::uword i = std::max(ib, j + 1); i < ie; ++i) {
          if (!f(i, j)) return false;
        }
      }
    }
  }
  return true;
}

/// S <- scale (S + S^T), in place and without a transposed temporary (for_each_strict_lower_tiled).
/// The diagonal becomes 2 scale S_ii.
/// @throws dkp::Error if S is not square
void symmetric_sum_inplace(arma::mat& S, double scale = 1.0);

/// scale (A + A^T) as a new matrix.
arma::mat symmetric_sum(const arma::mat& A, double scale = 1.0);

}  // namespace dkp::linalg
