// Wishart and inverse Wishart: Bartlett Monte Carlo moments, log densities against closed forms
// computed independently here, and the DIWP train/test conditional.
#include <doctest/doctest.h>

#include <cmath>
#include <iostream>

#include "dist_test_support.hpp"
#include "distributions/inverse_wishart.hpp"
#include "distributions/wishart.hpp"
#include "util/error.hpp"

namespace dd = dkp::distributions;
using namespace dkp::test::dist;
using dd::GammaMethod;

namespace {

double log_mvgamma_ref(int p, double a) {
  double v = 0.25 * p * (p - 1) * std::log(M_PI);
  for (int i = 0; i < p; ++i) v += std::lgamma(a - 0.5 * i);
  return v;
}

// Full-rank Wishart log density, textbook form.
double wishart_full_ref(const arma::mat& G, const arma::mat& S, double nu) {
  const double P = static_cast<double>(G.n_rows);
  return 0.5 * (nu - P - 1) * arma::log_det_sympd(G) - 0.5 * arma::trace(arma::solve(S, G)) -
         0.5 * nu * P * std::log(2.0) - 0.5 * nu * arma::log_det_sympd(S) -
         log_mvgamma_ref(static_cast<int>(P), 0.5 * nu);
}

// Matrix normal log density MN(X; M, U, V), X n x p.
double matrix_normal_ref(const arma::mat& X, const arma::mat& M, const arma::mat& U,
                         const arma::mat& V) {
  const double n = static_cast<double>(X.n_rows), p = static_cast<double>(X.n_cols);
  const arma::mat D = X - M;
  return -0.5 * n * p * std::log(2 * M_PI) - 0.5 * p * arma::log_det_sympd(U) -
         0.5 * n * arma::log_det_sympd(V) -
         0.5 * arma::trace(arma::solve(V, D.t()) * arma::solve(U, D));
}

// Singular Wishart log density (integer nu < P) from first principles, independently of the
// Srivastava formula: with G = Y Y^T, Y = [Y1; Y2] (Y1 nu x nu), the coordinates are
// (G11, G21): G11 = Y1 Y1^T ~ W_nu(S11, nu) (full rank) and, given Y1,
// G21 = Y2 Y1^T ~ MN(S21 S11^{-1} G11, S22.1, G11) (it depends on Y1 only through G11).
double wishart_singular_ref(const arma::mat& G, const arma::mat& S, int nu) {
  const arma::uword P = G.n_rows, k = static_cast<arma::uword>(nu);
  const arma::mat G11 = G.submat(0, 0, k - 1, k - 1), G21 = G.submat(k, 0, P - 1, k - 1);
  const arma::mat S11 = S.submat(0, 0, k - 1, k - 1), S21 = S.submat(k, 0, P - 1, k - 1);
  const arma::mat S22 = S.submat(k, k, P - 1, P - 1);
  const arma::mat S22_1 = S22 - S21 * arma::solve(S11, S21.t());
  return wishart_full_ref(G11, S11, nu) +
         matrix_normal_ref(G21, S21 * arma::solve(S11, G11), S22_1, G11);
}

arma::mat random_spd_factor(dkp::random::Stream& s, arma::uword P) {
  return chol_from_unconstrained(random_unconstrained(s, P));
}

}  // namespace

TEST_CASE(
    "Wishart Bartlett sampler: MC mean nu Sigma and variance nu (S_ij^2 + S_ii S_jj) (4 SE)") {
  auto s = stream("wishart-moments");
  for (double nu : {2.0, 5.0, 3.5}) {  // singular (P = 3), integer and real full rank
    const arma::uword P = 3;
    const arma::mat L = random_spd_factor(s, P), S = L * L.t();
    const int N = 20000;
    std::vector<std::vector<double>> g(P * P);
    Tape tape;
    for (int n = 0; n < N; ++n) {
      tape.clear();
      const arma::mat G = dd::wishart_sample(tape.constant(L), nu, s).G.val();
      for (arma::uword i = 0; i < P * P; ++i) g[i].push_back(G[i]);
    }
    double worst_mean = 0, worst_var = 0;
    for (arma::uword j = 0; j < P; ++j) {
      for (arma::uword i = j; i < P; ++i) {
        const auto m = mean_se(g[i + j * P]);
        const auto v = variance_se(g[i + j * P]);
        const double vexp = nu * (S(i, j) * S(i, j) + S(i, i) * S(j, j));
        worst_mean = std::max(worst_mean, std::abs(m.mean - nu * S(i, j)) / m.se);
        worst_var = std::max(worst_var, std::abs(v.mean - vexp) / v.se);
      }
    }
    MESSAGE("W(Sigma, " << nu << "), P = 3, N = " << N << ": worst |mean - nu S| = " << worst_mean
                        << " SE, worst |var - expected| = " << worst_var << " SE");
    CHECK(worst_mean <= 4.0);
    CHECK(worst_var <= 4.0);
  }
}

TEST_CASE("inverse Wishart Bartlett sampler: MC mean Psi/(nu-P-1) and variance (4 SE), real nu") {
  auto s = stream("iw-moments");
  const arma::uword P = 3;
  const double nu = 15.5;
  const arma::mat L = random_spd_factor(s, P), Psi = L * L.t();
  const int N = 20000;
  std::vector<std::vector<double>> g(P * P);
  Tape tape;
  for (int n = 0; n < N; ++n) {
    tape.clear();
    const arma::mat G = dd::inverse_wishart_sample(tape.constant(L), tape.constant(nu), s).G.val();
    for (arma::uword i = 0; i < P * P; ++i) g[i].push_back(G[i]);
  }
  const double p = static_cast<double>(P);
  double worst_mean = 0, worst_var = 0;
  for (arma::uword j = 0; j < P; ++j) {
    for (arma::uword i = j; i < P; ++i) {
      const auto m = mean_se(g[i + j * P]);
      const auto v = variance_se(g[i + j * P]);
      // Var(G_ij) = ((nu-p+1) Psi_ij^2 + (nu-p-1) Psi_ii Psi_jj) / ((nu-p)(nu-p-1)^2 (nu-p-3))
      const double vexp =
          ((nu - p + 1) * Psi(i, j) * Psi(i, j) + (nu - p - 1) * Psi(i, i) * Psi(j, j)) /
          ((nu - p) * (nu - p - 1) * (nu - p - 1) * (nu - p - 3));
      worst_mean = std::max(worst_mean, std::abs(m.mean - Psi(i, j) / (nu - p - 1)) / m.se);
      worst_var = std::max(worst_var, std::abs(v.mean - vexp) / v.se);
    }
  }
  MESSAGE("IW(Psi, " << nu << "), P = 3, N = " << N << ": worst |mean - Psi/(nu-P-1)| = "
                     << worst_mean << " SE, worst |var - expected| = " << worst_var << " SE");
  CHECK(worst_mean <= 4.0);
  CHECK(worst_var <= 4.0);
}

TEST_CASE(
    "Wishart log density: full rank equals the textbook form, singular the first-principles "
    "(G11, G21) form") {
  auto s = stream("wishart-density");
  for (const auto& [P, nu] : std::vector<std::pair<arma::uword, double>>{
           {3, 3.0}, {4, 6.5}, {5, 9.0}, {4, 1.0}, {4, 2.0}, {5, 3.0}, {6, 4.0}}) {
    const arma::mat L = random_spd_factor(s, P), S = L * L.t();
    Tape tape;
    const auto smp = dd::wishart_sample(tape.constant(L), nu, s);
    const arma::mat G = arma::symmatl(smp.G.val());
    const double lp = dd::wishart_log_prob(tape.constant(G), tape.constant(L), nu).scalar();
    const double lpf = dd::wishart_log_prob_factor(smp.F, tape.constant(L), nu).scalar();
    const double ref = (nu > static_cast<double>(P) - 1)
                           ? wishart_full_ref(G, S, nu)
                           : wishart_singular_ref(G, S, static_cast<int>(nu));
    INFO("P = " << P << ", nu = " << nu << ": log W = " << lp << ", reference " << ref);
    CHECK(lp == doctest::Approx(ref).epsilon(1e-9));
    CHECK(lpf == doctest::Approx(ref).epsilon(1e-9));
  }
}

TEST_CASE("Wishart argument checks") {
  Tape tape;
  auto s = stream("wishart-errors");
  Var L = tape.constant(arma::eye(4, 4));
  CHECK_THROWS_AS(dd::wishart_sample(L, 2.5, s), dkp::Error);  // non-integer singular
  CHECK_THROWS_AS(dd::wishart_sample(L, 0.0, s), dkp::Error);
  CHECK_THROWS_AS(dd::wishart_log_prob(tape.constant(arma::eye(3, 3)), L, 5.0), dkp::Error);
  CHECK_THROWS_AS(dd::inverse_wishart_sample(L, tape.constant(2.9), s), dkp::Error);  // nu <= P-1
}

TEST_CASE("inverse Wishart log density: general form, own-sample form and W(G^-1) identity agree") {
  // log IW(G; Psi, nu) = log W(G^{-1}; Psi^{-1}, nu) - (P + 1) log|G| (Jacobian of G -> G^{-1}).
  auto s = stream("iw-density");
  for (const auto& [P, nu] :
       std::vector<std::pair<arma::uword, double>>{{2, 1.7}, {3, 4.2}, {5, 11.0}}) {
    const arma::mat L = random_spd_factor(s, P), Psi = L * L.t();
    Tape tape;
    Var nuv = tape.constant(nu);
    const auto smp = dd::inverse_wishart_sample(tape.constant(L), nuv, s);
    const arma::mat G = arma::symmatl(smp.G.val());
    const double lp =
        dd::inverse_wishart_log_prob(tape.constant(G), tape.constant(L), nuv).scalar();
    const double lps = dd::inverse_wishart_log_prob_at_sample(smp, tape.constant(L), nuv).scalar();
    const double ref = wishart_full_ref(arma::inv_sympd(G), arma::inv_sympd(Psi), nu) -
                       (static_cast<double>(P) + 1) * arma::log_det_sympd(G);
    INFO("P = " << P << ", nu = " << nu);
    CHECK(lp == doctest::Approx(ref).epsilon(1e-9));
    CHECK(lps == doctest::Approx(ref).epsilon(1e-9));
  }
}

TEST_CASE(
    "IW train/test conditional: G_ii ~ IW(Psi_ii, nu - 1) then the conditional gives the "
    "joint IW(Psi, nu) moments (4 SE)") {
  auto s = stream("iw-conditional");
  const arma::uword Pi = 3, P = Pi + 1;
  const double nu = 14.3;  // joint dof (delta + P_i + P_t + 1 with P_t = 1)
  const arma::mat Lj = random_spd_factor(s, P), Psi = Lj * Lj.t();
  const arma::mat Psi_ii = Psi.submat(0, 0, Pi - 1, Pi - 1);
  const arma::mat L_ii = arma::chol(Psi_ii, "lower");
  const int N = 20000;
  std::vector<std::vector<double>> g(P * P);
  Tape tape;
  for (int n = 0; n < N; ++n) {
    tape.clear();
    Var Lv = tape.constant(L_ii);
    const auto ii = dd::inverse_wishart_sample(Lv, tape.constant(nu - 1.0), s);
    const auto c = dd::inverse_wishart_conditional_sample(
        ii.G, Lv, tape.constant(Psi.submat(0, Pi, Pi - 1, Pi)), tape.constant(sc(Psi(Pi, Pi))),
        tape.constant(nu), s);
    arma::mat G(P, P);
    G.submat(0, 0, Pi - 1, Pi - 1) = ii.G.val();
    G.submat(0, Pi, Pi - 1, Pi) = c.g_it.val();
    G.submat(Pi, 0, Pi, Pi - 1) = c.g_it.val().t();
    G(Pi, Pi) = c.g_tt.val()[0];
    for (arma::uword i = 0; i < P * P; ++i) g[i].push_back(G[i]);
  }
  double worst = 0;
  for (arma::uword j = 0; j < P; ++j) {
    for (arma::uword i = j; i < P; ++i) {
      const auto m = mean_se(g[i + j * P]);
      worst = std::max(worst, std::abs(m.mean - Psi(i, j) / (nu - P - 1.0)) / m.se);
      const auto v = variance_se(g[i + j * P]);
      const double p = static_cast<double>(P);
      const double vexp =
          ((nu - p + 1) * Psi(i, j) * Psi(i, j) + (nu - p - 1) * Psi(i, i) * Psi(j, j)) /
          ((nu - p) * (nu - p - 1) * (nu - p - 1) * (nu - p - 3));
      worst = std::max(worst, std::abs(v.mean - vexp) / v.se);
    }
  }
  MESSAGE("IW conditional, joint P = 4, nu = " << nu << ", N = " << N << ": worst moment deviation "
                                               << worst << " SE");
  CHECK(worst <= 4.0);
}
