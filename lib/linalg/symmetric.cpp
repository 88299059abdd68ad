#include "linalg/symmetric.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::linalg {

void symmetric_sum_inplace(arma::mat& S, double scale) {
  if (S.n_rows != S.n_cols) {
    throw Error(
        fmt::format("linalg::symmetric_sum: {}x{} matrix is not square", S.n_rows, S.n_cols));
  }
  const arma::uword n = S.n_rows;
  constexpr arma::uword bs = 16;
  for (arma::uword jb = 0; jb < n; jb += bs) {
    const arma::uword je = std::min(jb + bs, n);
    for (arma::uword ib = jb; ib < n; ib += bs) {
      const arma::uword ie = std::min(ib + bs, n);
      for (arma::uword j = jb; j < je; ++j) {
        for (arma::uword i = std::max(ib, j + 1); i < ie; ++i) {
          const double v = scale * (S.at(i, j) + S.at(j, i));
          S.at(i, j) = v;
          S.at(j, i) = v;
        }
      }
    }
  }
  for (arma::uword j = 0; j < n; ++j) S.at(j, j) *= 2.0 * scale;
}

arma::mat symmetric_sum(const arma::mat& A, double scale) {
  arma::mat S = A;
  symmetric_sum_inplace(S, scale);
  return S;
}

}  // namespace dkp::linalg
