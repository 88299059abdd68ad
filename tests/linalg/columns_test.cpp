// Column reductions (linalg/columns.hpp).
#include <doctest/doctest.h>

#include <armadillo>

#include "linalg/columns.hpp"

TEST_CASE("col_sumsq: each column's sum of squares, bit for bit the plain loop's") {
  arma::arma_rng::set_seed(9);
  for (arma::uword cols : {0u, 1u, 3u, 4u, 5u, 8u, 11u}) {
    CAPTURE(cols);
    const arma::mat A = arma::randn(37, cols);
    arma::vec got(cols, arma::fill::value(-1.0));
    dkp::linalg::col_sumsq(A.memptr(), A.n_rows, cols, got.memptr());
    for (arma::uword j = 0; j < cols; ++j) {
      double q = 0.0;
      for (arma::uword i = 0; i < A.n_rows; ++i) q += A(i, j) * A(i, j);
      CHECK(got[j] == q);
    }
  }
}
