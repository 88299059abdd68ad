// Triangular solves (linalg/triangular.hpp) in all side/triangle/transpose combinations.
#include <doctest/doctest.h>

#include <cmath>

#include "linalg/triangular.hpp"
#include "util/error.hpp"

namespace la = dkp::linalg;

TEST_CASE("tri_solve: left and right, lower and upper, transposed or not") {
  const arma::uword n = 9, m = 4;
  arma::mat T = arma::randn(n, n);
  T.diag() = 2.0 + arma::randu(n);
  // Garbage in the unused triangle must be ignored.
  for (la::Uplo uplo : {la::Uplo::Lower, la::Uplo::Upper}) {
    const arma::mat Tt =
        uplo == la::Uplo::Lower ? arma::mat(arma::trimatl(T)) : arma::mat(arma::trimatu(T));
    for (bool trans : {false, true}) {
      const arma::mat op = trans ? arma::mat(Tt.t()) : Tt;
      const arma::mat Bl = arma::randn(n, m), Br = arma::randn(m, n);
      const arma::mat Xl = la::tri_solve(T, Bl, uplo, trans, la::Side::Left);
      CHECK(arma::approx_equal(op * Xl, Bl, "absdiff", 1e-10));
      const arma::mat Xr = la::tri_solve(T, Br, uplo, trans, la::Side::Right);
      CHECK(arma::approx_equal(Xr * op, Br, "absdiff", 1e-10));
    }
  }
  const arma::mat L = arma::trimatl(T), B = arma::randn(n, m);
  CHECK(arma::approx_equal(la::solve_lower(L, B), arma::solve(arma::trimatl(L), B), "absdiff",
                           1e-10));
  CHECK(arma::approx_equal(la::solve_lower(L, B, true), arma::solve(arma::trimatu(L.t()), B),
                           "absdiff", 1e-10));
  const arma::mat U = arma::trimatu(T);
  CHECK(arma::approx_equal(la::solve_upper(U, B), arma::solve(arma::trimatu(U), B), "absdiff",
                           1e-10));
}

TEST_CASE("tri_solve: recursive blocks at the models' sizes agree with a plain substitution") {
  // Sizes that exercise the recursion (n > 32, odd halves) and both leaf sizes (m < 64, m >= 64).
  for (arma::uword n : {1u, 17u, 33u, 100u, 131u}) {
    // Off-diagonal entries of order 1 / sqrt(n) keep op(T) well conditioned at every n.
    arma::mat T = arma::randn(n, n) / std::sqrt(double(n));
    T.diag() = 1.0 + arma::randu(n);
    for (arma::uword m : {1u, 13u, 70u}) {
      for (la::Uplo uplo : {la::Uplo::Lower, la::Uplo::Upper}) {
        const arma::mat Tt =
            uplo == la::Uplo::Lower ? arma::mat(arma::trimatl(T)) : arma::mat(arma::trimatu(T));
        for (bool trans : {false, true}) {
          const arma::mat op = trans ? arma::mat(Tt.t()) : Tt;
          const arma::mat Bl = arma::randn(n, m);
          // Reference: column-by-column substitution on the triangular op(T).
          const arma::mat ref = arma::solve(op, Bl, arma::solve_opts::no_approx);
          const arma::mat Xl = la::tri_solve(T, Bl, uplo, trans, la::Side::Left);
          const double tol = 1e-10 * (1.0 + arma::abs(ref).max());
          CHECK(arma::approx_equal(Xl, ref, "absdiff", tol));
          const arma::mat Br = Bl.t();
          const arma::mat Xr = la::tri_solve(T, Br, uplo, trans, la::Side::Right);
          CHECK(arma::approx_equal(Xr * op, Br, "absdiff", 1e-9 * (1.0 + arma::abs(Br).max())));
          CHECK(arma::approx_equal(Xr, arma::mat(la::tri_solve(T, Bl, uplo, !trans).t()), "absdiff",
                                   tol));
        }
      }
    }
  }
}

TEST_CASE("tri_solve: shape errors, singular factors and empty right-hand sides") {
  arma::mat L = arma::trimatl(arma::randn(4, 4));
  L.diag().fill(1.0);
  CHECK_THROWS_AS(la::solve_lower(arma::ones(3, 4), arma::ones(3, 1)), dkp::Error);
  CHECK_THROWS_AS(la::solve_lower(L, arma::ones(3, 1)), dkp::Error);
  CHECK_THROWS_AS(la::tri_solve(L, arma::ones(4, 3), la::Uplo::Lower, false, la::Side::Right),
                  dkp::Error);
  L(2, 2) = 0.0;
  CHECK_THROWS_WITH_AS(la::solve_lower(L, arma::ones(4, 1)), doctest::Contains("singular"),
                       dkp::Error);
  L(2, 2) = 1.0;
  CHECK(la::solve_lower(L, arma::mat(4, 0)).n_cols == 0);
}

TEST_CASE("add_tri_product: one triangle of P Q^T or P^T Q, other triangle untouched") {
  for (arma::uword n : {1u, 5u, 31u, 32u, 33u, 70u}) {
    for (arma::uword k : {1u, 7u, 40u}) {
      CAPTURE(n);
      CAPTURE(k);
      const arma::mat C0 = arma::randn(n, n);
      for (bool trans : {false, true}) {
        const arma::mat P = trans ? arma::randn(k, n) : arma::randn(n, k);
        const arma::mat Q = trans ? arma::randn(k, n) : arma::randn(n, k);
        const arma::mat full = trans ? arma::mat(P.t() * Q) : arma::mat(P * Q.t());
        for (la::Uplo uplo : {la::Uplo::Lower, la::Uplo::Upper}) {
          arma::mat C = C0, expected = C0;
          for (arma::uword j = 0; j < n; ++j)
            for (arma::uword i = 0; i < n; ++i)
              if (uplo == la::Uplo::Lower ? i >= j : i <= j) expected(i, j) -= 0.5 * full(i, j);
          la::add_tri_product(C, uplo, P, Q, trans, -0.5);
          CHECK(arma::approx_equal(C, expected, "absdiff", 1e-12));
        }
      }
    }
  }
  arma::mat C(3, 3);
  CHECK_THROWS_AS(
      la::add_tri_product(C, la::Uplo::Lower, arma::ones(3, 2), arma::ones(2, 3), false, 1.0),
      dkp::Error);
}
