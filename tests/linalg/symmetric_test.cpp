// linalg/symmetric.hpp: in-place and copying scale (A + A^T).
#include <doctest/doctest.h>

#include "linalg/symmetric.hpp"
#include "util/error.hpp"

TEST_CASE("symmetric_sum: scale (A + A^T) at sizes around the 16 x 16 tiles, in place and not") {
  arma::arma_rng::set_seed(5);
  for (const arma::uword n : {0u, 1u, 15u, 16u, 17u, 33u, 100u}) {
    CAPTURE(n);
    const arma::mat A = arma::randn(n, n);
    for (const double scale : {1.0, -0.5}) {
      CAPTURE(scale);
      const arma::mat want = scale * (A + A.t());
      CHECK(arma::approx_equal(dkp::linalg::symmetric_sum(A, scale), want, "absdiff", 0.0));
      arma::mat S = A;
      dkp::linalg::symmetric_sum_inplace(S, scale);
      CHECK(arma::approx_equal(S, want, "absdiff", 0.0));
    }
  }
  arma::mat R(3, 4, arma::fill::zeros);
  CHECK_THROWS_AS(dkp::linalg::symmetric_sum_inplace(R), dkp::Error);
}
