#include "linalg/symmetric.hpp"

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::linalg {

void symmetric_sum_inplace(arma::mat& S, double scale) {
  if (S.n_rows != S.n_cols) {
    throw Error(
        fmt::format("linalg::symmetric_sum: {}x{} matrix is not square", S.n_rows, S.n_cols));
  }
  for_each_strict_lower_tiled(S.n_rows, [&S, scale](arma::uword i, arma::uword j) {
    const double v = scale * (S.at(i, j) + S.at(j, i));
    S.at(i, j) = v;
    S.at(j, i) = v;
    return true;
  });
  for (arma::uword j = 0; j < S.n_rows; ++j) S.at(j, j) *= 2.0 * scale;
}

arma::mat symmetric_sum(const arma::mat& A, double scale) {
  arma::mat S = A;
  symmetric_sum_inplace(S, scale);
  return S;
}

}  // namespace dkp::linalg
