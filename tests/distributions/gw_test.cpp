// GW, A-GW and AB-GW: reductions (GW -> Wishart, A-GW -> GW, AB-GW -> A-GW), density at an
// arbitrary G equal to the density from the sample's parts, normalisation by importance sampling,
// and the AGW paper's figure 1 (top-left element not Gamma distributed).
#include <doctest/doctest.h>

#include <boost/math/distributions/gamma.hpp>
#include <boost/math/distributions/non_central_chi_squared.hpp>
#include <boost/math/distributions/skew_normal.hpp>
#include <cmath>

#include "dist_test_support.hpp"
#include "distributions/gw.hpp"
#include "distributions/wishart.hpp"
#include "util/error.hpp"

namespace dd = dkp::distributions;
using namespace dkp::test::dist;
using dd::GammaMethod;

namespace {

// Random GW parameters with m = min(P, nu) columns. mu_scale = 0 gives mu = 0.
dd::BartlettParamValues random_params(dkp::random::Stream& s, arma::uword P, int nu,
                                      double mu_scale, double shape_boost = 0.0) {
  const arma::uword m = std::min<arma::uword>(P, static_cast<arma::uword>(nu));
  dd::BartlettParamValues p;
  p.alpha.set_size(m, 1);
  p.beta.set_size(m, 1);
  for (arma::uword j = 0; j < m; ++j) {
    p.alpha[j] =
        0.5 * (nu - static_cast<double>(j)) * dkp::random::uniform(s, 0.8, 1.6) + shape_boost;
    p.beta[j] = dkp::random::uniform(s, 0.4, 1.2);
  }
  p.mu = mu_scale * dkp::random::normal_matrix(s, P, m);
  p.sigma = arma::exp(dkp::random::uniform_matrix(s, P, m) - 0.8);
  return p;
}

dd::BartlettParamValues prior_params(arma::uword P, int nu) {
  const arma::uword m = std::min<arma::uword>(P, static_cast<arma::uword>(nu));
  dd::BartlettParamValues p;
  p.alpha.set_size(m, 1);
  for (arma::uword j = 0; j < m; ++j) p.alpha[j] = 0.5 * (nu - static_cast<double>(j));
  p.beta = sc(0.5);
  p.mu = sc(0.0);
  p.sigma = sc(1.0);
  return p;
}

arma::mat random_factor(dkp::random::Stream& s, arma::uword P) {
  return chol_from_unconstrained(random_unconstrained(s, P));
}

}  // namespace

TEST_CASE(
    "bartlett_log_prob: Gamma densities of c and normal densities of T's lower part, vs Boost") {
  auto s = stream("bartlett-log-prob-closed-form");
  for (const auto& [P, nu] : std::vector<std::pair<arma::uword, int>>{{3, 5}, {4, 4}, {5, 2}}) {
    const dd::BartlettParamValues pv = random_params(s, P, nu, 0.7);
    Tape tape;
    const dd::BartlettParams p = pv.on(tape);
    const dd::BartlettFactor f = dd::bartlett_sample(P, p, s);
    const arma::mat c = f.c.val(), T = f.T.val();
    const arma::uword m = c.n_elem;
    double want = 0.0;
    for (arma::uword j = 0; j < m; ++j) {
      // T_jj = sqrt(c_j); the density is c's, with no Jacobian for c -> T_jj.
      CHECK(T(j, j) == doctest::Approx(std::sqrt(c[j])).epsilon(1e-14));
      const boost::math::gamma_distribution<double> g(pv.alpha[j], 1.0 / pv.beta[j]);
      want += std::log(boost::math::pdf(g, c[j]));
      for (arma::uword i = j + 1; i < P; ++i) {
        const double z = (T(i, j) - pv.mu(i, j)) / pv.sigma(i, j);
        want += -0.5 * z * z - std::log(pv.sigma(i, j)) - 0.5 * std::log(2.0 * M_PI);
      }
    }
    const double got = dd::bartlett_log_prob(f, p).scalar();
    INFO("P = " << P << ", nu = " << nu << ": got " << got << ", want " << want);
    CHECK(got == doctest::Approx(want).epsilon(1e-12));
    // 1x1 beta, mu and sigma broadcast: the same as the full matrices filled with those values.
    dd::BartlettParamValues one = pv;
    one.beta = sc(0.8);
    one.mu = sc(-0.3);
    one.sigma = sc(1.7);
    dd::BartlettParamValues full = one;
    full.beta = arma::mat(m, 1, arma::fill::value(0.8));
    full.mu = arma::mat(P, m, arma::fill::value(-0.3));
    full.sigma = arma::mat(P, m, arma::fill::value(1.7));
    CHECK(dd::bartlett_log_prob(f, one.on(tape)).scalar() ==
          doctest::Approx(dd::bartlett_log_prob(f, full.on(tape)).scalar()).epsilon(1e-13));
  }
}

TEST_CASE("standard_gamma_sample is gamma_sample at rate 1, draw for draw, both methods") {
  for (const GammaMethod method : {GammaMethod::Rejection, GammaMethod::Inversion}) {
    Tape tape;
    const Var shape = tape.constant(arma::mat{{0.3, 1.0, 2.5}, {7.0, 0.9, 40.0}});
    auto s1 = stream("standard-gamma", static_cast<uint64_t>(method));
    auto s2 = s1;
    const arma::mat a = dd::standard_gamma_sample(shape, s1, method).val();
    const arma::mat b = dd::gamma_sample(shape, tape.constant(sc(1.0)), s2, method).val();
    CHECK(arma::all(arma::vectorise(a) > 0.0));
    CHECK(arma::approx_equal(a, b, "absdiff", 0.0));
  }
}

TEST_CASE("GW at the prior parameters equals the Wishart density (1e-8), nu > P, = P and < P") {
  auto s = stream("gw-reduces-to-wishart");
  for (const auto& [P, nu] : std::vector<std::pair<arma::uword, int>>{
           {3, 5}, {4, 4}, {6, 9}, {4, 1}, {5, 2}, {6, 3}, {10, 4}}) {
    const arma::mat L = random_factor(s, P);
    Tape tape;
    Var Lv = tape.constant(L);
    const auto p = prior_params(P, nu).on(tape);
    const auto smp = dd::gw_sample(Lv, nu, p, s);
    const double lq = dd::gw_log_prob(smp, Lv, nu, p).scalar();
    const double lw = dd::wishart_log_prob_factor(smp.F, Lv, nu).scalar();
    const double lwg =
        dd::wishart_log_prob(tape.constant(arma::symmatl(smp.G.val())), Lv, nu).scalar();
    INFO("P = " << P << ", nu = " << nu << ": log Q = " << lq << ", log W = " << lw);
    CHECK(std::abs(lq - lw) <= 1e-8 * std::max(1.0, std::abs(lw)));
    CHECK(std::abs(lq - lwg) <= 1e-8 * std::max(1.0, std::abs(lw)));
    // ... and the wishart_sample draws the same G from the same stream state
    auto s1 = stream("gw-vs-wishart-stream", P * 100 + nu);
    auto s2 = s1;
    const arma::mat Gw = dd::wishart_sample(Lv, nu, s1).G.val();
    const arma::mat Gq = dd::gw_sample(Lv, nu, p, s2).G.val();
    CHECK(arma::approx_equal(Gw, Gq, "absdiff", 1e-14));
  }
}

TEST_CASE("A-GW at the Bartlett prior parameters equals W(A A^T, nu) for any invertible A") {
  // A T T^T A^T with T T^T ~ W(I, nu) is W(A A^T, nu): checks the A-GW Jacobian of eq. 44
  // (including its singular case) against the Wishart density, for non-triangular A.
  auto s = stream("agw-prior-is-wishart");
  for (const auto& [P, nu] :
       std::vector<std::pair<arma::uword, int>>{{2, 3}, {3, 3}, {4, 2}, {5, 1}, {6, 4}}) {
    arma::mat A;
    do {
      A = dkp::random::normal_matrix(s, P, P) + arma::eye(P, P);
    } while (arma::cond(A) > 30.0);
    const arma::mat LS = arma::chol(A * A.t(), "lower");
    Tape tape;
    const auto p = prior_params(P, nu).on(tape);
    const auto smp = dd::agw_sample(tape.constant(A), nu, p, s);
    const double lq = dd::agw_log_prob(smp, tape.constant(A), nu, p).scalar();
    const double lw =
        dd::wishart_log_prob(tape.constant(arma::symmatl(smp.G.val())), tape.constant(LS), nu)
            .scalar();
    INFO("P = " << P << ", nu = " << nu << ", det A = " << arma::det(A));
    CHECK(std::abs(lq - lw) <= 1e-8 * std::max(1.0, std::abs(lw)));
  }
}

TEST_CASE("A-GW with lower-triangular A equals GW with Sigma = A A^T; AB-GW at B = I equals A-GW") {
  auto s = stream("agw-reduces");
  for (const auto& [P, nu] :
       std::vector<std::pair<arma::uword, int>>{{3, 5}, {4, 4}, {4, 2}, {6, 3}, {5, 1}}) {
    const arma::uword m = std::min<arma::uword>(P, static_cast<arma::uword>(nu));
    const arma::mat L = random_factor(s, P);
    const auto pv = random_params(s, P, nu, 1.0);
    Tape tape;
    Var Lv = tape.constant(L);
    const auto p = pv.on(tape);
    auto s1 = stream("agw-reduces-draw", P * 100 + nu);
    auto s2 = s1, s3 = s1;
    const auto gw = dd::gw_sample(Lv, nu, p, s1);
    const auto agw = dd::agw_sample(Lv, nu, p, s2);
    const auto abgw = dd::abgw_sample(Lv, tape.constant(arma::eye(m, m)), nu, p, s3);
    CHECK(arma::approx_equal(gw.G.val(), agw.G.val(), "absdiff", 1e-14));
    CHECK(arma::approx_equal(gw.G.val(), abgw.G.val(), "absdiff", 1e-14));
    const double lgw = dd::gw_log_prob(gw, Lv, nu, p).scalar();
    const double lagw = dd::agw_log_prob(agw, Lv, nu, p).scalar();
    const double labgw =
        dd::abgw_log_prob(abgw, Lv, tape.constant(arma::eye(m, m)), nu, p).scalar();
    INFO("P = " << P << ", nu = " << nu << ": GW " << lgw << ", A-GW " << lagw << ", AB-GW "
                << labgw);
    CHECK(std::abs(lagw - lgw) <= 1e-9 * std::max(1.0, std::abs(lgw)));
    CHECK(std::abs(labgw - lagw) <= 1e-9 * std::max(1.0, std::abs(lgw)));
  }
}

TEST_CASE("factored A = L A': the same samples and densities as A-GW / AB-GW with A formed") {
  auto s = stream("agw-factored");
  for (const auto& [P, nu] :
       std::vector<std::pair<arma::uword, int>>{{3, 5}, {4, 4}, {6, 3}, {5, 1}}) {
    const arma::uword m = std::min<arma::uword>(P, static_cast<arma::uword>(nu));
    const arma::mat L = random_factor(s, P);
    const arma::mat Ap = arma::eye(P, P) + 0.5 * dkp::random::normal_matrix(s, P, P);
    const arma::mat B = arma::trimatl(arma::eye(m, m) + 0.3 * dkp::random::normal_matrix(s, m, m));
    const auto pv = random_params(s, P, nu, 1.0);
    Tape tape;
    const auto p = pv.on(tape);
    const Var Bv = tape.constant(B);
    const Var A = tape.constant(L * Ap);
    const dd::FactoredA fa = dd::factor_a(tape.constant(L), tape.constant(Ap));
    CHECK(fa.log_abs_det_A_prime.scalar() == doctest::Approx(std::log(std::abs(arma::det(Ap)))));
    auto s1 = stream("agw-factored-draw", P * 100 + nu);
    auto s2 = s1, s3 = s1, s4 = s1;
    const auto agw = dd::agw_sample(A, nu, p, s1);
    const auto agw_f = dd::agw_sample(fa, nu, p, s2);
    const auto abgw = dd::abgw_sample(A, Bv, nu, p, s3);
    const auto abgw_f = dd::abgw_sample(fa, Bv, nu, p, s4);
    INFO("P = " << P << ", nu = " << nu);
    CHECK(arma::approx_equal(agw.G.val(), agw_f.G.val(), "reldiff", 1e-12));
    CHECK(arma::approx_equal(abgw.G.val(), abgw_f.G.val(), "reldiff", 1e-12));
    CHECK(arma::approx_equal(abgw.F.val(), abgw_f.F.val(), "reldiff", 1e-12));
    const double la = dd::agw_log_prob(agw, A, nu, p).scalar();
    const double lb = dd::abgw_log_prob(abgw, A, Bv, nu, p).scalar();
    CHECK(dd::agw_log_prob(agw_f, fa, nu, p).scalar() ==
          doctest::Approx(la).epsilon(1e-10).scale(1.0));
    CHECK(dd::abgw_log_prob(abgw_f, fa, Bv, nu, p).scalar() ==
          doctest::Approx(lb).epsilon(1e-10).scale(1.0));
    // Not the trivial case: A' is far from the identity, so A-GW differs from the GW with L.
    CHECK(std::abs(la - dd::gw_log_prob(agw, tape.constant(L), nu, p).scalar()) > 1e-3);
  }
}

TEST_CASE(
    "factor_at_fixed_mixing: log Q at constant A'_0 and B is the density of G = L A' T B, in value "
    "and gradient w.r.t. A'") {
  // What sticking the landing on A' and B needs: A' |-> log Q(G(A'); L A'_0, B) with the draw T
  // fixed. Its value must be abgw_log_prob_at (T recovered from G alone) at A' away from A'_0,
  // and its gradient must match finite differences.
  auto s = stream("agw-fixed-mixing");
  for (const auto& [P, nu] :
       std::vector<std::pair<arma::uword, int>>{{4, 2}, {6, 3}, {4, 4}, {3, 5}}) {
    const arma::uword m = std::min<arma::uword>(P, static_cast<arma::uword>(nu));
    const arma::mat L = random_factor(s, P);
    const arma::mat A0 = arma::eye(P, P) + 0.4 * dkp::random::normal_matrix(s, P, P);
    arma::mat B = arma::trimatl(arma::eye(m, m) + 0.3 * dkp::random::normal_matrix(s, m, m));
    if (m > 1) B(1, 1) = -std::abs(B(1, 1));  // a negative diagonal entry is allowed
    const auto pv = random_params(s, P, nu, 1.0);
    arma::mat T;
    {
      Tape tape;
      T = dd::agw_sample(tape.constant(A0), nu, pv.on(tape), s).bartlett.T.val();
    }
    const arma::mat A0_inv = arma::inv(A0);
    for (bool with_b : {false, true}) {
      // log Q(G(A'); A'_0, B) on the tape, G(A') = L A' T B.
      const auto f = [&](Tape& tape, const std::vector<Var>& in) {
        const Var& Ap = in[0];
        const Var Tv = tape.constant(T);
        const Var Bv = tape.constant(B);
        const dd::BartlettFactor bf{tape.constant(arma::square(arma::vec(T.diag()))), Tv};
        const Var F =
            ad::matmul(tape.constant(L), ad::matmul(Ap, with_b ? ad::matmul(Tv, Bv) : Tv));
        const dd::PsdSample smp{ad::matmul(F, F, false, true), F,
                                dd::factor_at_fixed_mixing(bf, Ap, A0_inv, with_b ? &Bv : nullptr)};
        const dd::FactoredA fa0 = dd::factor_a(tape.constant(L), tape.constant(A0));
        const auto p = pv.on(tape);
        return with_b ? dd::abgw_log_prob(smp, fa0, Bv, nu, p) : dd::agw_log_prob(smp, fa0, nu, p);
      };
      const arma::mat Bq = with_b ? B : arma::eye(m, m);
      for (double step : {0.0, 0.2}) {
        const arma::mat A1 = A0 + step * dkp::random::normal_matrix(s, P, P);
        const arma::mat F1 = L * A1 * T * Bq;
        const double expected = dd::abgw_log_prob_at(F1 * F1.t(), L * A0, Bq, nu, pv);
        INFO("P = " << P << ", nu = " << nu << ", B " << with_b << ", |A' - A'_0| " << step);
        Tape tape;
        CHECK(f(tape, {tape.constant(A1)}).scalar() == doctest::Approx(expected).epsilon(1e-8));
        ad::Tolerances tol;
        tol.rel = 1e-4;  // entries reach 1e3 where G_11 is nearly singular
        const auto r = ad::check_gradient(f, {A1}, tol);
        INFO(r.detail);
        CHECK(r.ok);
      }
    }
  }
}

TEST_CASE("densities at an arbitrary G (T recovered from G) equal the densities from the parts") {
  auto s = stream("gw-density-at-G");
  for (const auto& [P, nu] :
       std::vector<std::pair<arma::uword, int>>{{3, 5}, {4, 4}, {4, 2}, {6, 3}, {5, 1}}) {
    const arma::uword m = std::min<arma::uword>(P, static_cast<arma::uword>(nu));
    const arma::mat L = random_factor(s, P);
    const arma::mat A = arma::eye(P, P) + 0.6 * dkp::random::normal_matrix(s, P, P);
    arma::mat B = arma::trimatl(0.5 * dkp::random::normal_matrix(s, m, m));
    B.diag() = dkp::random::uniform_matrix(s, m, 1) + 0.5;
    if (m > 1) B(1, 1) = -B(1, 1);  // a negative diagonal entry is allowed
    const auto pv = random_params(s, P, nu, 1.0);
    Tape tape;
    const auto p = pv.on(tape);
    const auto gw = dd::gw_sample(tape.constant(L), nu, p, s);
    const auto ab = dd::abgw_sample(tape.constant(A), tape.constant(B), nu, p, s);
    const auto a = dd::agw_sample(tape.constant(A), nu, p, s);
    const double l_gw = dd::gw_log_prob(gw, tape.constant(L), nu, p).scalar();
    const double l_ab = dd::abgw_log_prob(ab, tape.constant(A), tape.constant(B), nu, p).scalar();
    const double l_a = dd::agw_log_prob(a, tape.constant(A), nu, p).scalar();
    const arma::mat I = arma::eye(m, m);
    INFO("P = " << P << ", nu = " << nu);
    CHECK(dd::gw_log_prob_at(arma::symmatl(gw.G.val()), L, nu, pv) ==
          doctest::Approx(l_gw).epsilon(1e-8));
    CHECK(dd::abgw_log_prob_at(arma::symmatl(ab.G.val()), A, B, nu, pv) ==
          doctest::Approx(l_ab).epsilon(1e-8));
    CHECK(dd::abgw_log_prob_at(arma::symmatl(a.G.val()), A, I, nu, pv) ==
          doctest::Approx(l_a).epsilon(1e-8));
  }
}

TEST_CASE("normalisation: E_{G ~ W}[Q(G) / W(G)] = 1 within 4 SE for GW, A-GW, AB-GW, P = 2, 3") {
  // Importance sampling with a Wishart proposal W(S, nu_p). Q and the proposal are densities
  // w.r.t. the same measure (for nu < P: the singular measure on G_{i, j < min(i+1, nu)}, so the
  // proposal must have the same nu). The proposal scale S is set from the mean of Q (estimated
  // from Q samples) and inflated for spread.
  struct Case {
    std::string kind;
    arma::uword P;
    int nu;
    double mu_scale;
    double nu_p;  // proposal dof (must equal nu when nu < P)
  };
  const std::vector<Case> cases = {{"GW", 2, 2, 0.7, 2.0},    {"GW", 3, 2, 0.7, 2.0},
                                   {"A-GW", 2, 3, 0.7, 3.0},  {"A-GW", 3, 1, 0.7, 1.0},
                                   {"AB-GW", 3, 4, 0.7, 4.0}, {"AB-GW", 3, 2, 0.7, 2.0},
                                   {"AB-GW", 2, 1, 0.7, 1.0}, {"A-GW", 3, 3, 0.7, 3.0}};
  auto s = stream("normalisation");
  int idx = 0;
  for (const auto& c : cases) {
    const arma::uword P = c.P, m = std::min<arma::uword>(P, static_cast<arma::uword>(c.nu));
    // Parameters perturbed away from the Wishart's (alpha_j = (nu - j)/2, beta = 1/2, mu = 0,
    // sigma = 1) in the directions that keep the weights' variance finite: larger shapes (lighter
    // near the boundary), larger rates and smaller sigma (lighter tails), mu != 0.
    dd::BartlettParamValues pv;
    pv.alpha.set_size(m, 1);
    pv.beta.set_size(m, 1);
    for (arma::uword j = 0; j < m; ++j) {
      pv.alpha[j] = 0.5 * (c.nu - static_cast<double>(j)) * dkp::random::uniform(s, 1.0, 1.4);
      pv.beta[j] = dkp::random::uniform(s, 0.5, 1.0);
    }
    pv.mu = c.mu_scale * dkp::random::normal_matrix(s, P, m);
    pv.sigma = dkp::random::uniform_matrix(s, P, m) * 0.4 + 0.6;
    arma::mat A = random_factor(s, P), B = arma::eye(m, m);
    if (c.kind != "GW") {
      do {
        A = random_factor(s, P) + 0.7 * dkp::random::normal_matrix(s, P, P);
      } while (arma::cond(A) > 20.0);
    }
    if (c.kind == "AB-GW") {
      B = arma::trimatl(0.4 * dkp::random::normal_matrix(s, m, m));
      B.diag() = dkp::random::uniform_matrix(s, m, 1) + 0.6;
    }
    auto logq = [&](const arma::mat& G) {
      return c.kind == "GW" ? dd::gw_log_prob_at(G, A, c.nu, pv)
                            : dd::abgw_log_prob_at(G, A, B, c.nu, pv);
    };
    // proposal scale from Q's mean E[G] = A E[C] A^T, C = (T B)(T B)^T estimated from Q's draws
    // (estimating E[G] directly would amplify its Monte Carlo error by A^{-1} in A's weak
    // directions)
    arma::mat meanCfull(P, P, arma::fill::zeros);
    {
      Tape tape;
      for (int n = 0; n < 400; ++n) {
        tape.clear();
        const auto p2 = pv.on(tape);
        const auto smp = dd::abgw_sample(tape.constant(A), tape.constant(B), c.nu, p2, s);
        const arma::mat TB = smp.bartlett.T.val() * B;
        meanCfull += TB * TB.t() / 400.0;
      }
    }
    const arma::mat meanG = A * meanCfull * A.t();
    const double inflate = 1.5;
    const arma::mat S = inflate * meanG / c.nu_p;
    const arma::mat LS = arma::chol(arma::symmatl(S), "lower");
    const int N = 20000;
    std::vector<double> w;
    w.reserve(N);
    Tape tape;
    Var LSv = tape.constant(LS);
    for (int n = 0; n < N; ++n) {
      tape.clear();
      LSv = tape.constant(LS);
      const auto smp = dd::wishart_sample(LSv, c.nu_p, s);
      const arma::mat G = arma::symmatl(smp.G.val());
      const double lw = dd::wishart_log_prob_factor(smp.F, LSv, c.nu_p).scalar();
      w.push_back(std::exp(logq(G) - lw));
    }
    const auto r = mean_se(w);
    MESSAGE(c.kind << " P = " << P << ", nu = " << c.nu << " (proposal nu " << c.nu_p
                   << "), N = " << N << ": E[Q/W] = " << r.mean << " +- " << r.se);
    CHECK(std::abs(r.mean - 1.0) <= 4 * r.se);
    CHECK(r.se < 0.05);  // the check has power
    ++idx;
  }
}

TEST_CASE("AGW paper figure 1: the top-left element of P = 2, nu = 1 A-GW is not Gamma") {
  // A = [[1, 1], [0, 1]], T = (t, n)^T with t^2 ~ Gamma(1/2, rate 1/2) (chi^2_1) and
  // n ~ N(mu = 3, sigma^2 = 1): W_11 = (t + n)^2.
  const double mu = 3.0;
  // The paper used 10000 draws; the A-GW sampler's law is closer to a Gamma, so it gets 40000.
  const int N = 10000, N_agw = 40000;
  auto s = stream("agw-figure-1");
  Tape tape;
  std::vector<double> w11, w11_signed;
  for (int i = 0; i < N_agw; ++i) {
    tape.clear();
    dd::BartlettParams p{tape.constant(sc(0.5)), tape.constant(0.5), tape.constant(mu),
                         tape.constant(1.0)};
    const auto smp = dd::agw_sample(tape.constant(arma::mat{{1.0, 1.0}, {0.0, 1.0}}), 1, p, s);
    w11.push_back(smp.G.val()(0, 0));
    if (i >= N) continue;
    // The paper's eq. 18 literally: g ~ N(0, 1) with its sign, so g + n ~ N(mu, 2).
    const double g = dkp::random::normal(s), n = mu + dkp::random::normal(s);
    w11_signed.push_back((g + n) * (g + n));
  }
  // (g + n)^2 / 2 is noncentral chi^2 with 1 dof and noncentrality mu^2 / 2.
  const boost::math::non_central_chi_squared ncx2(1.0, mu * mu / 2.0);
  const auto ncx2_cdf = [&](double x) { return boost::math::cdf(ncx2, x / 2.0); };
  // The A-GW's T_11 = sqrt(chi^2_1) is |g| >= 0 (a Bartlett diagonal), so t + n = |g| + n is
  // skew normal (location mu, scale sqrt(1 + sigma^2), shape 1/sigma) and W_11 its square.
  const boost::math::skew_normal sn(mu, std::sqrt(2.0), 1.0);
  const auto sn2_cdf = [&](double x) {
    const double r = std::sqrt(x);
    return boost::math::cdf(sn, r) - boost::math::cdf(sn, -r);
  };
  const auto gamma_cdf = [](const GammaFit& f) {
    return [f](double x) {
      return boost::math::cdf(boost::math::gamma_distribution<>(f.shape, 1.0 / f.rate), x);
    };
  };
  const GammaFit fit_signed = fit_gamma(w11_signed), fit = fit_gamma(w11);
  const auto ks_paper = ks_test(w11_signed, ncx2_cdf);
  const auto ks_paper_gamma = ks_test(w11_signed, gamma_cdf(fit_signed));
  const auto ks_agw = ks_test(w11, sn2_cdf);
  const auto ks_agw_gamma = ks_test(w11, gamma_cdf(fit));
  const auto ks_agw_ncx2 = ks_test(w11, ncx2_cdf);
  MESSAGE("figure 1, N = " << N << ". Paper's eq. 18 (signed g): KS vs 2 ncx2(1, 4.5) D = "
                           << ks_paper.d << " p = " << ks_paper.p << "; vs fitted Gamma("
                           << fit_signed.shape << ", " << fit_signed.rate
                           << ") D = " << ks_paper_gamma.d << " p = " << ks_paper_gamma.p);
  MESSAGE("A-GW sampler (T_11 >= 0), N = "
          << N_agw << ": KS vs squared skew normal D = " << ks_agw.d << " p = " << ks_agw.p
          << "; vs fitted Gamma(" << fit.shape << ", " << fit.rate << ") D = " << ks_agw_gamma.d
          << " p = " << ks_agw_gamma.p << "; vs 2 ncx2(1, 4.5) D = " << ks_agw_ncx2.d
          << " p = " << ks_agw_ncx2.p);
  CHECK(ks_paper.p > 0.01);
  CHECK(ks_paper_gamma.p < 1e-4);
  CHECK(ks_agw.p > 0.01);
  CHECK(ks_agw_gamma.p < 1e-4);
  CHECK(ks_agw_ncx2.p < 1e-4);  // the paper's noncentral chi-square needs a signed T_11
}
