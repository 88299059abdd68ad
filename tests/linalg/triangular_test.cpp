// Triangular solves (linalg/triangular.hpp) in all side/triangle/transpose combinations.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

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
  // Sizes that exercise the recursion (n > 32, odd halves), both leaf sizes (m < 64, m >= 64)
  // and several panels of right-hand sides (m > 256, the last one partial).
  for (arma::uword n : {1u, 17u, 33u, 100u, 131u}) {
    // Off-diagonal entries of order 1 / sqrt(n) keep op(T) well conditioned at every n.
    arma::mat T = arma::randn(n, n) / std::sqrt(double(n));
    T.diag() = 1.0 + arma::randu(n);
    for (arma::uword m : {1u, 13u, 70u, 600u}) {
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
          // The copying form (panel by panel) and the in-place forms give the same numbers.
          arma::mat Bi = Bl;
          la::tri_solve_inplace(T, Bi, uplo, trans, la::Side::Left);
          CHECK(arma::approx_equal(Xl, Bi, "absdiff", 0.0));
          CHECK(
              arma::approx_equal(Xl, la::tri_solve(T, arma::mat(Bl), uplo, trans), "absdiff", 0.0));
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

TEST_CASE(
    "tri_solve: an ill-conditioned jittered SE Cholesky factor, against long double substitution") {
  // The models' case: L = chol(K + 1e-6 I) for an SE kernel on 100 points in one dimension
  // (condition number of K about 1e7), 455 right-hand sides K(Z, X). The blocked solve inverts
  // diagonal blocks explicitly: measured on five such problems, its largest error is 5.6e-11
  // against 1.0e-12 for OpenBLAS's dtrsm (entries of order 1), both below the forward error of
  // the factor itself (cond(K) eps, about 1e-9). The bound leaves a factor of 20.
  const arma::uword P = 100, B = 455;
  const arma::vec z = arma::randn(P), x = arma::randn(B);
  arma::mat K(P, P), Kit(P, B);
  for (arma::uword j = 0; j < P; ++j)
    for (arma::uword i = 0; i < P; ++i) K(i, j) = std::exp(-0.5 * std::pow(z[i] - z[j], 2));
  for (arma::uword j = 0; j < B; ++j)
    for (arma::uword i = 0; i < P; ++i) Kit(i, j) = std::exp(-0.5 * std::pow(z[i] - x[j], 2));
  K.diag() += 1e-6;
  const arma::mat L = arma::chol(K, "lower");
  for (bool trans : {false, true}) {
    const arma::mat X = la::tri_solve(L, Kit, la::Uplo::Lower, trans);
    double max_err = 0.0, max_ref = 0.0;
    for (arma::uword c = 0; c < B; ++c) {
      std::vector<long double> r(P);
      if (!trans) {
        for (arma::uword i = 0; i < P; ++i) {
          long double s = Kit(i, c);
          for (arma::uword k = 0; k < i; ++k) s -= (long double)L(i, k) * r[k];
          r[i] = s / L(i, i);
        }
      } else {
        for (arma::uword i = P; i-- > 0;) {
          long double s = Kit(i, c);
          for (arma::uword k = i + 1; k < P; ++k) s -= (long double)L(k, i) * r[k];
          r[i] = s / L(i, i);
        }
      }
      for (arma::uword i = 0; i < P; ++i) {
        max_err = std::max(max_err, double(std::abs((long double)X(i, c) - r[i])));
        max_ref = std::max(max_ref, double(std::abs(r[i])));
      }
    }
    CAPTURE(trans);
    CAPTURE(max_err);
    CAPTURE(max_ref);
    CHECK(max_err <= 1e-9 * max_ref);
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
    for (arma::uword k : {1u, 7u, 40u, 1100u}) {  // 1100: chunks of the inner dimension
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
          CHECK(arma::approx_equal(C, expected, "absdiff", 1e-13 * double(10 + k)));
        }
      }
    }
  }
  arma::mat C(3, 3);
  CHECK_THROWS_AS(
      la::add_tri_product(C, la::Uplo::Lower, arma::ones(3, 2), arma::ones(2, 3), false, 1.0),
      dkp::Error);
}

TEST_CASE("add_tri_product: a triangular factor's zero chunks; diagonal blocks only") {
  // Q lower triangular with k = n = 1100: the chunks past each block's diagonal are zero and
  // skipped; the triangle is still the product's. With diagonal_blocks_only, the diagonal is the
  // same to the last bit (the same dgemm calls) and nothing outside the 32 x 32 diagonal blocks
  // is touched.
  arma::arma_rng::set_seed(11);
  const arma::uword n = 1100;
  const arma::mat C0 = arma::randn(n, n);
  const arma::mat P = arma::randn(n, n);
  const arma::mat Q = arma::trimatl(arma::randn(n, n));
  for (bool trans : {false, true}) {
    CAPTURE(trans);
    const arma::mat Qop = trans ? arma::mat(Q.t()) : Q;  // P^T Q^T^T: the same triangular Q^T
    const arma::mat full = trans ? arma::mat(P.t() * Qop) : arma::mat(P * Qop.t());
    arma::mat C = C0, D = C0;
    la::add_tri_product(C, la::Uplo::Lower, P, Qop, trans, -1.0);
    la::add_tri_product(D, la::Uplo::Lower, P, Qop, trans, -1.0, /*diagonal_blocks_only=*/true);
    const arma::mat expected = arma::trimatl(C0 - full) + arma::trimatu(C0, 1);
    CHECK(arma::approx_equal(C, expected, "absdiff", 1e-9));
    CHECK(arma::approx_equal(arma::vec(D.diag()), arma::vec(C.diag()), "absdiff", 0.0));
    bool outside_untouched = true;
    for (arma::uword j = 0; j < n; ++j)
      for (arma::uword i = 0; i < n; ++i)
        if (i / 32 != j / 32 && D(i, j) != C0(i, j)) outside_untouched = false;
    CHECK(outside_untouched);
  }
}

TEST_CASE("tri_solve: zero blocks of a triangular right-hand side") {
  // L^{-1} B with B lower triangular (the DIWP's L^{-1} sqrt(delta) I): the solve skips the zero
  // blocks; the solution is still lower triangular with exact zeros above the diagonal, and
  // solves the system, on both sides and for op(L) = L and L^T.
  arma::arma_rng::set_seed(12);
  const arma::uword n = 600;
  const arma::mat G = arma::randn(n, n);
  const arma::mat L = arma::chol(G * G.t() / double(n) + arma::eye(n, n), "lower");
  const arma::mat B = arma::trimatl(arma::randn(n, n));
  for (bool trans : {false, true}) {
    CAPTURE(trans);
    const arma::mat op = trans ? arma::mat(L.t()) : L;
    const arma::mat X = la::tri_solve(L, B, la::Uplo::Lower, trans, la::Side::Left);
    CHECK(arma::approx_equal(op * X, B, "absdiff", 1e-9));
    if (!trans) CHECK(arma::approx_equal(arma::trimatu(X, 1), arma::zeros(n, n), "absdiff", 0.0));
    // X op(L) = B^T (upper triangular): its zero blocks are the right side's.
    const arma::mat Y = la::tri_solve(L, arma::mat(B.t()), la::Uplo::Lower, trans, la::Side::Right);
    CHECK(arma::approx_equal(Y * op, arma::mat(B.t()), "absdiff", 1e-9));
  }
}

TEST_CASE("tri_inverse, lower_t_times_lower, tril_times_lower_t against dense products") {
  // n = 600: several 256-wide column blocks and a narrower last one; garbage in the unread upper
  // triangles.
  arma::arma_rng::set_seed(13);
  const arma::uword n = 600;
  const arma::mat G = arma::randn(n, n);
  const arma::mat L = arma::chol(G * G.t() / double(n) + arma::eye(n, n), "lower") +
                      arma::trimatu(arma::randn(n, n), 1);
  const arma::mat T = arma::trimatl(arma::randn(n, n)) + 20.0 * arma::eye(n, n) +
                      arma::trimatu(arma::randn(n, n), 1);
  const arma::mat Ll = arma::trimatl(L), Tl = arma::trimatl(T);
  for (la::Uplo uplo : {la::Uplo::Lower, la::Uplo::Upper}) {
    CAPTURE(int(uplo));
    const arma::mat A = uplo == la::Uplo::Lower ? Ll : arma::mat(Ll.t());
    const arma::mat Ai = la::tri_inverse(uplo == la::Uplo::Lower ? L : arma::mat(L.t()), uplo);
    CHECK(arma::approx_equal(A * Ai, arma::eye(n, n), "absdiff", 1e-10));
    const arma::mat other = uplo == la::Uplo::Lower ? arma::mat(arma::trimatu(Ai, 1))
                                                    : arma::mat(arma::trimatl(Ai, -1));
    CHECK(arma::accu(arma::abs(other)) == 0.0);
  }
  const arma::mat M = la::lower_t_times_lower(T, L);
  const arma::mat Md = Tl.t() * Ll;
  CAPTURE(arma::abs(M - Md).max());
  CHECK(arma::approx_equal(M, Md, "absdiff", 1e-11 * arma::abs(Md).max()));
  const arma::mat S = arma::randn(n, n);
  const arma::mat C = la::tril_times_lower_t(S, L);
  CHECK(arma::approx_equal(C, arma::mat(arma::trimatl(S * Ll.t())), "absdiff", 1e-10));
  CHECK_THROWS_AS(la::tri_inverse(arma::zeros(2, 2), la::Uplo::Lower), dkp::Error);
  CHECK_THROWS_AS(la::lower_t_times_lower(T, arma::zeros(2, 2)), dkp::Error);
}

TEST_CASE("tri_solve_panels: precomputed leaf inverses give the same solution, transposed too") {
  // The adjoint of a solve reuses the forward solve's leaf inverses (layers/gigp.cpp): the same
  // numbers to the last bit as computing them again, for op(T) = T and T^T and across panels.
  arma::arma_rng::set_seed(5);
  const arma::uword n = 100, m = 455;
  const arma::mat G = arma::randn(n, n);
  const arma::mat L = arma::chol(G * G.t() + double(n) * arma::eye(n, n), "lower");
  const arma::mat B = arma::randn(n, m);
  const auto copy_in = [&B](arma::uword c0, arma::uword w, double* panel) {
    std::copy(B.colptr(c0), B.colptr(c0) + B.n_rows * w, panel);
  };
  const auto nothing = [](arma::uword, arma::uword, double*) {};
  const auto leaves = la::tri_leaves(L, la::Uplo::Lower, m);
  const auto other = la::tri_leaves(L, la::Uplo::Lower, 12);  // another leaf size: not used
  for (bool trans : {false, true}) {
    CAPTURE(trans);
    arma::mat X0(n, m), X1(n, m), X2(n, m);
    la::tri_solve_panels(L, X0, la::Uplo::Lower, trans, copy_in, nothing);
    la::tri_solve_panels(L, X1, la::Uplo::Lower, trans, copy_in, nothing, leaves.get());
    la::tri_solve_panels(L, X2, la::Uplo::Lower, trans, copy_in, nothing, other.get());
    CHECK(arma::approx_equal(X1, X0, "absdiff", 0.0));
    CHECK(arma::approx_equal(X2, X0, "absdiff", 0.0));
    const arma::mat op = trans ? arma::mat(L.t()) : L;
    CHECK(arma::approx_equal(op * X0, B, "absdiff", 1e-10));
  }
}

TEST_CASE("tri_solve, tri_solve_inplace: one set of leaf inverses for both sides, same numbers") {
  // The Cholesky adjoint solves L^T on the left and L on the right with one set of leaves.
  arma::arma_rng::set_seed(6);
  const arma::uword n = 60;
  const arma::mat G = arma::randn(n, n);
  const arma::mat U = arma::chol(G * G.t() + double(n) * arma::eye(n, n));  // upper
  const arma::mat B = arma::randn(n, n);
  const auto leaves = la::tri_leaves(U, la::Uplo::Upper, n);
  REQUIRE(leaves != nullptr);
  for (la::Side side : {la::Side::Left, la::Side::Right}) {
    for (bool trans : {false, true}) {
      CAPTURE(trans);
      const arma::mat X0 = la::tri_solve(U, B, la::Uplo::Upper, trans, side);
      const arma::mat X1 = la::tri_solve(U, B, la::Uplo::Upper, trans, side, leaves.get());
      arma::mat X2 = B;
      la::tri_solve_inplace(U, X2, la::Uplo::Upper, trans, side, leaves.get());
      CHECK(arma::approx_equal(X1, X0, "absdiff", 0.0));
      CHECK(arma::approx_equal(X2, X0, "absdiff", 0.0));
    }
  }
  // A handful of right-hand sides goes to dtrsm: no leaves to make.
  CHECK(la::tri_leaves(U, la::Uplo::Upper, 7) == nullptr);
  CHECK(la::tri_leaves(U, la::Uplo::Upper, 8) != nullptr);
}
