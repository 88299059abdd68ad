// Gradient tests of the linear-algebra ops (ops_linalg.hpp) and the SPD parameterisation
// (spd.hpp). SPD inputs are always built from an unconstrained matrix U, so the finite
// differences perturb entries of U and the matrix stays symmetric.
#include <doctest/doctest.h>

#include <spdlog/spdlog.h>

#include "ad_test_support.hpp"
#include "autodiff/gradcheck.hpp"
#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"
#include "autodiff/spd.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace ad = dkp::autodiff;
namespace la = dkp::linalg;
using ad::Tape;
using ad::Var;

using dkp::test::contract;
using dkp::test::randm;

using dkp::test::QuietLog;

namespace {

void expect_grad(const ad::ScalarFunction& f, const std::vector<arma::mat>& xs,
                 ad::Tolerances tol = {}) {
  const auto r = ad::check_gradient(f, xs, tol);
  INFO(r.detail);
  CHECK(r.ok);
}

void expect_value(const ad::ScalarFunction& f, const std::vector<arma::mat>& xs, double expected,
                  ad::Tolerances tol = {}) {
  const auto r = ad::check_value(f, xs, expected, tol);
  INFO(r.detail);
  CHECK(r.ok);
}

void expect_throws(const ad::ScalarFunction& f, const std::vector<arma::mat>& xs) {
  const auto r = ad::check_throws(f, xs);
  INFO(r.message);
  CHECK(r.value_threw);
  CHECK(r.gradient_threw);
}

// A plain-value twin of contract() for value checks.

// An unconstrained U with a moderately conditioned SPD image.
arma::mat random_unconstrained(arma::uword n) {
  arma::mat U = randm(n, n, -0.5, 0.5);
  U.diag() = randm(n, 1, 0.5, 1.5);
  return U;
}

// A triangular-ish test factor: well-conditioned diagonal, garbage in the other triangle (which
// the solves must ignore).
arma::mat random_factor(arma::uword n) {
  arma::mat T = randm(n, n, -0.5, 0.5);
  T.diag() = randm(n, 1, 1.5, 2.5);
  return T;
}

}  // namespace

TEST_CASE("spd_from_unconstrained: value, round trip and gradient") {
  const arma::mat U = random_unconstrained(5);
  const arma::mat A = ad::spd_from_unconstrained(U, 1e-3);
  CHECK(A.is_symmetric());
  CHECK(arma::eig_sym(A).min() >= 1e-3 * (1 - 1e-9));
  CHECK(arma::approx_equal(ad::unconstrained_from_spd(A, 1e-3), arma::mat(arma::trimatl(U)),
                           "absdiff", 1e-9));
  expect_grad(
      [](Tape&, const std::vector<Var>& v) {
        return contract(ad::spd_from_unconstrained(v[0], 1e-3));
      },
      {U});
  CHECK_THROWS_AS(ad::spd_from_unconstrained(arma::ones(2, 3)), dkp::Error);
}

TEST_CASE("cholesky: value and gradient through the SPD parameterisation") {
  for (const auto how : {la::CholAdjoint::Solves, la::CholAdjoint::Congruence})
    for (arma::uword n : {1u, 2u, 5u, 12u}) {
      CAPTURE(int(how));
      CAPTURE(n);
      const arma::mat U = random_unconstrained(n);
      const auto f = [how](Tape&, const std::vector<Var>& v) {
        return contract(ad::cholesky(ad::spd_from_unconstrained(v[0]), "test", {}, nullptr, how));
      };
      expect_value(f, {U}, contract(arma::mat(arma::chol(ad::spd_from_unconstrained(U), "lower"))));
      expect_grad(f, {U});
      // The factor's log-determinant path as well.
      expect_grad(
          [how](Tape&, const std::vector<Var>& v) {
            return ad::logdet_chol(
                ad::cholesky(ad::spd_from_unconstrained(v[0]), "test", {}, nullptr, how));
          },
          {U});
    }
}

TEST_CASE("cholesky of a 1x1 matrix: L = sqrt(a), dL/da = 1 / (2 sqrt(a))") {
  Tape tape;
  Var a = tape.variable(arma::mat(1, 1, arma::fill::value(4.0)));
  Var L = ad::cholesky(a, "1x1");
  CHECK(L.scalar() == 2.0);
  tape.backward(L);
  CHECK(a.grad()(0, 0) == doctest::Approx(0.25).epsilon(1e-15));
}

TEST_CASE("cholesky: jittered factor, with the jitter's dependence on A in the gradient") {
  QuietLog quiet;
  // A = B B^T - 1e-9 I with B 6x3 has three eigenvalues -1e-9 for every B: the factorisation
  // always fails first and succeeds with jitter c = r tr(A) / n (a rank-deficient B B^T alone is
  // not enough: dpotrf may pass it with round-off pivots). log det(A + c I) depends on B through
  // c too, and that term is O(1) here. r = 1e-2 keeps A + c I well enough conditioned for
  // finite differences.
  const arma::mat B = randm(6, 3);
  la::JitterPolicy policy;
  policy.initial = 1e-2;
  la::CholStats stats;
  for (const auto how : {la::CholAdjoint::Solves, la::CholAdjoint::Congruence}) {
    CAPTURE(int(how));
    const auto f = [&](Tape& t, const std::vector<Var>& v) {
      const Var A = ad::matmul(v[0], v[0], false, true) - t.constant(1e-9 * arma::eye(6, 6));
      return ad::logdet_chol(ad::cholesky(A, "singular", policy, &stats, how));
    };
    expect_grad(f, {B});
  }
  CHECK(stats.jittered > 0);
  CHECK(stats.jittered == stats.factorisations);
  CHECK(stats.retries == stats.factorisations);
  CHECK(stats.max_jitter_rel == 1e-2);
}

TEST_CASE("cholesky: errors") {
  QuietLog quiet;
  expect_throws(
      [](Tape&, const std::vector<Var>& v) { return ad::sum(ad::cholesky(v[0], "rect")); },
      {arma::ones(3, 4)});
  arma::mat indefinite = arma::eye(3, 3);
  indefinite(1, 1) = -1.0;
  expect_throws(
      [](Tape&, const std::vector<Var>& v) { return ad::sum(ad::cholesky(v[0], "indef")); },
      {indefinite});
  Tape tape;
  CHECK_THROWS_AS(ad::cholesky(tape.variable(indefinite), "indef"), la::NotPsdError);
  CHECK_THROWS_WITH_AS(ad::cholesky(tape.variable(arma::ones(2, 3)), "rect"),
                       doctest::Contains("autodiff::cholesky ('rect')"), dkp::Error);
}

TEST_CASE("tri_solve: gradients in all side/triangle/transpose combinations") {
  const arma::uword n = 6, m = 4;
  const arma::mat T = random_factor(n), Bl = randm(n, m), Br = randm(m, n);
  for (la::Uplo uplo : {la::Uplo::Lower, la::Uplo::Upper}) {
    for (bool trans : {false, true}) {
      for (la::Side side : {la::Side::Left, la::Side::Right}) {
        CAPTURE(int(uplo));
        CAPTURE(trans);
        CAPTURE(int(side));
        const arma::mat& B = side == la::Side::Left ? Bl : Br;
        const auto f = [=](Tape&, const std::vector<Var>& v) {
          return contract(ad::tri_solve(v[0], v[1], uplo, trans, side));
        };
        expect_value(f, {T, B}, contract(la::tri_solve(T, B, uplo, trans, side)));
        expect_grad(f, {T, B});
        // The unread triangle gets exactly zero gradient.
        const auto g = ad::gradients(f, {T, B});
        const arma::mat unread = uplo == la::Uplo::Lower ? arma::mat(arma::trimatu(g[0], 1))
                                                         : arma::mat(arma::trimatl(g[0], -1));
        CHECK(arma::accu(arma::abs(unread)) == 0.0);
      }
    }
  }
}

TEST_CASE("gram_scaled: alpha V V^T, exactly symmetric, with finite-difference gradients") {
  for (arma::uword n : {1u, 4u, 7u}) {
    CAPTURE(n);
    const arma::mat V = randm(n, n + 2);
    const auto f = [](Tape&, const std::vector<Var>& v) {
      return contract(ad::gram_scaled(v[0], 0.3));
    };
    expect_value(f, {V}, contract(arma::mat(0.3 * V * V.t())));
    expect_grad(f, {V});
    Tape tape;
    const arma::mat C = ad::gram_scaled(tape.constant(V), 0.3).val();
    CHECK(C.is_symmetric(0.0));
    CHECK(arma::approx_equal(C, arma::mat(0.3 * V * V.t()), "reldiff", 1e-13));
  }
}

TEST_CASE("sq_norm_tri_t_inv: ||T^T L^{-1}||_F^2 with finite-difference gradients") {
  // Garbage in the unread (upper) triangles of both factors; their gradients are exactly zero.
  for (arma::uword n : {1u, 3u, 8u}) {
    CAPTURE(n);
    const arma::mat T = random_factor(n), L = random_factor(n);
    const auto f = [](Tape&, const std::vector<Var>& v) {
      return ad::sq_norm_tri_t_inv(v[0], v[1]);
    };
    const arma::mat W = arma::trimatl(T).t() * arma::inv(arma::trimatl(L));
    expect_value(f, {T, L}, arma::accu(arma::square(W)));
    expect_grad(f, {T, L});
    const auto g = ad::gradients(f, {T, L});
    if (n > 1) {
      CHECK(arma::accu(arma::abs(arma::trimatu(g[0], 1))) == 0.0);
      CHECK(arma::accu(arma::abs(arma::trimatu(g[1], 1))) == 0.0);
    }
  }
}

TEST_CASE("times_iw_factor: [Xi; Xt] L T^{-T} with finite-difference gradients") {
  const arma::uword n = 7;
  const arma::mat T = random_factor(n), L = random_factor(n);
  const arma::mat Xi = randm(3, n), Xt = randm(5, n);
  const arma::mat F = arma::trimatl(L) * arma::inv(arma::trimatl(T).t());
  const auto f = [](Tape&, const std::vector<Var>& v) {
    return contract(ad::times_iw_factor(v[0], v[1], v[2], v[3]));
  };
  expect_value(f, {Xi, Xt, L, T}, contract(arma::mat(arma::join_vert(Xi, Xt) * F)));
  expect_grad(f, {Xi, Xt, L, T});
  const auto g = ad::gradients(f, {Xi, Xt, L, T});
  CHECK(arma::accu(arma::abs(arma::trimatu(g[2], 1))) == 0.0);
  CHECK(arma::accu(arma::abs(arma::trimatu(g[3], 1))) == 0.0);
  // Constant features (the data's Ft): the other gradients are unchanged.
  expect_grad(
      [&](Tape& tape, const std::vector<Var>& v) {
        return contract(ad::times_iw_factor(v[0], tape.constant(Xt), v[1], v[2]));
      },
      {Xi, L, T});
}

TEST_CASE("solve_lower, solve_upper, chol_solve and logdet_chol") {
  const arma::mat T = random_factor(5), B = randm(5, 3);
  expect_grad(
      [](Tape&, const std::vector<Var>& v) { return contract(ad::solve_lower(v[0], v[1])); },
      {T, B});
  expect_grad(
      [](Tape&, const std::vector<Var>& v) { return contract(ad::solve_lower(v[0], v[1], true)); },
      {T, B});
  expect_grad(
      [](Tape&, const std::vector<Var>& v) { return contract(ad::solve_upper(v[0], v[1])); },
      {T, B});
  expect_grad(
      [](Tape&, const std::vector<Var>& v) { return contract(ad::solve_upper(v[0], v[1], true)); },
      {T, B});
  expect_grad([](Tape&, const std::vector<Var>& v) { return contract(ad::chol_solve(v[0], v[1])); },
              {T, B});
  const arma::mat L = arma::trimatl(T);
  expect_value([](Tape&, const std::vector<Var>& v) { return ad::logdet_chol(v[0]); }, {T},
               2.0 * arma::accu(arma::log(L.diag())));
  expect_grad([](Tape&, const std::vector<Var>& v) { return ad::logdet_chol(v[0]); }, {T});
  expect_throws(
      [](Tape&, const std::vector<Var>& v) { return ad::sum(ad::solve_lower(v[0], v[1])); },
      {T, randm(4, 2)});
  expect_throws(
      [](Tape&, const std::vector<Var>& v) {
        return ad::sum(ad::tri_solve(v[0], v[1], la::Uplo::Lower, false, la::Side::Right));
      },
      {T, randm(5, 2)});
  expect_throws([](Tape&, const std::vector<Var>& v) { return ad::logdet_chol(v[0]); },
                {randm(3, 2)});
}

TEST_CASE("spd_inverse, spd_solve and logdet_spd through the SPD parameterisation") {
  const arma::mat U = random_unconstrained(6), B = randm(6, 3);
  const arma::mat A = ad::spd_from_unconstrained(U);
  const auto inv = [](Tape&, const std::vector<Var>& v) {
    return contract(ad::spd_inverse(ad::spd_from_unconstrained(v[0]), "inv"));
  };
  expect_value(inv, {U}, contract(arma::mat(arma::inv_sympd(A))), {.value = 1e-8});
  expect_grad(inv, {U});
  const auto solve = [](Tape&, const std::vector<Var>& v) {
    return contract(ad::spd_solve(ad::spd_from_unconstrained(v[0]), v[1], "solve"));
  };
  expect_value(solve, {U, B}, contract(arma::mat(arma::solve(A, B))), {.value = 1e-8});
  expect_grad(solve, {U, B});
  const auto logdet = [](Tape&, const std::vector<Var>& v) {
    return ad::logdet_spd(ad::spd_from_unconstrained(v[0]), "logdet");
  };
  expect_value(logdet, {U}, arma::log_det_sympd(A));
  expect_grad(logdet, {U});
  expect_throws(
      [](Tape&, const std::vector<Var>& v) { return ad::sum(ad::spd_solve(v[0], v[1], "s")); },
      {A, randm(5, 2)});
  expect_throws([](Tape&, const std::vector<Var>& v) { return ad::logdet_spd(v[0], "rect"); },
                {randm(3, 2)});
  expect_throws(
      [](Tape&, const std::vector<Var>& v) { return ad::sum(ad::spd_inverse(v[0], "rect")); },
      {randm(3, 2)});
}

TEST_CASE("SPD ops with jitter: the gradient includes the jitter's dependence on A") {
  QuietLog quiet;
  // As above.
  const arma::mat B = randm(5, 2), R = randm(5, 3);
  la::JitterPolicy policy;
  policy.initial = 1e-2;
  la::CholStats stats;
  const auto singular = [](const Var& b) {
    return ad::matmul(b, b, false, true) - b.tape().constant(1e-9 * arma::eye(5, 5));
  };
  expect_grad(
      [&](Tape&, const std::vector<Var>& v) {
        return ad::logdet_spd(singular(v[0]), "ld", policy, &stats);
      },
      {B});
  expect_grad(
      [&](Tape&, const std::vector<Var>& v) {
        return contract(ad::spd_solve(singular(v[0]), v[1], "solve", policy, &stats));
      },
      {B, R});
  expect_grad(
      [&](Tape&, const std::vector<Var>& v) {
        return contract(ad::spd_inverse(singular(v[0]), "inv", policy, &stats));
      },
      {B});
  CHECK(stats.jittered == stats.factorisations);
  CHECK(stats.jittered > 0);
}

TEST_CASE("cholesky counts factorisations in the caller's stats") {
  Tape tape;
  la::CholStats stats;
  Var A = tape.variable(ad::spd_from_unconstrained(random_unconstrained(4)));
  ad::cholesky(A, "a", {}, &stats);
  ad::spd_inverse(A, "b", {}, &stats);
  ad::logdet_spd(A, "c", {}, &stats);
  CHECK(stats.factorisations == 3);
  CHECK(stats.jittered == 0);
}

TEST_CASE("a tape counts its ops' factorisations and jitter events unless given a CholStats") {
  QuietLog quiet;
  Tape tape;
  const arma::mat B = randm(5, 2);
  const Var good = tape.constant(B * B.t() + arma::eye(5, 5));
  const Var singular = tape.constant(B * B.t() - 1e-9 * arma::eye(5, 5));
  const Var R = tape.constant(randm(5, 3));
  ad::cholesky(good, "good");
  CHECK(tape.chol_stats().factorisations == 1);
  CHECK(tape.chol_stats().jittered == 0);
  ad::cholesky(singular, "singular");
  ad::logdet_spd(singular, "ld");
  ad::spd_solve(singular, R, "solve");
  ad::spd_inverse(singular, "inv");
  const la::CholStats& t = tape.chol_stats();
  CHECK(t.factorisations == 5);
  CHECK(t.jittered == 4);
  CHECK(t.retries >= 4);
  CHECK(t.max_jitter_rel > 0.0);
  // An op given its own counters leaves the tape's alone.
  la::CholStats own;
  ad::cholesky(singular, "own", {}, &own);
  ad::spd_solve(good, R, "own solve", {}, &own);
  CHECK(own.factorisations == 2);
  CHECK(own.jittered == 1);
  CHECK(tape.chol_stats().factorisations == 5);
  // clear() drops the nodes, not the counts.
  tape.clear();
  CHECK(tape.chol_stats().factorisations == 5);
}
