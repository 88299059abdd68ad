// Gradients: every log density w.r.t. every parameter through the gradient-check harness
// (positive parameters log-parameterised, Cholesky factors from unconstrained matrices, PSD
// arguments as F F^T of a free factor), and pathwise checks of every reparameterised sampler:
//  * Inversion draws (GammaMethod::Inversion) make the common-random-numbers Monte Carlo estimate
//    a smooth function of the parameters, so the harness differentiates it directly;
//  * the production draws (Marsaglia-Tsang) give the same d E[f(G)] / d theta within Monte Carlo
//    error (4 SE).
// Last, the Bartlett module's fused helper ops one by one (their own values and gradients).
#include <doctest/doctest.h>

#include <cmath>
#include <utility>

#include "autodiff/ops_linalg.hpp"
#include "autodiff/ops_shape.hpp"
#include "dist_test_support.hpp"
#include "distributions/bartlett.hpp"
#include "distributions/gamma_op.hpp"
#include "distributions/gw.hpp"
#include "distributions/inverse_wishart.hpp"
#include "distributions/mvn.hpp"
#include "distributions/wishart.hpp"

namespace dd = dkp::distributions;
using namespace dkp::test::dist;
using dd::GammaMethod;

namespace {

void expect_grad(const ad::ScalarFunction& f, const std::vector<arma::mat>& xs,
                 const std::string& what, ad::Tolerances tol = {}) {
  const auto r = ad::check_gradient(f, xs, tol);
  INFO(what << ": " << r.detail << " (worst ratio " << r.worst_ratio << ")");
  CHECK(r.ok);
}

// Bartlett parameters from unconstrained inputs: alpha = exp(a), beta = exp(b), mu, sigma = exp(s).
dd::BartlettParams params_from(const std::vector<Var>& v, size_t k) {
  return {ad::exp(v[k]), ad::exp(v[k + 1]), v[k + 2], ad::exp(v[k + 3])};
}

// Unconstrained Bartlett parameter values for P rows and m columns.
std::vector<arma::mat> random_bartlett_inputs(dkp::random::Stream& s, arma::uword P, int nu) {
  const arma::uword m = std::min<arma::uword>(P, static_cast<arma::uword>(nu));
  arma::mat a(m, 1), b(m, 1);
  for (arma::uword j = 0; j < m; ++j) {
    a[j] = std::log(0.5 * (nu - static_cast<double>(j)) * dkp::random::uniform(s, 0.8, 1.5));
    b[j] = std::log(dkp::random::uniform(s, 0.4, 1.2));
  }
  return {a, b, 0.8 * dkp::random::normal_matrix(s, P, m),
          dkp::random::uniform_matrix(s, P, m) - 1.0};
}

std::vector<arma::mat> concat(std::vector<arma::mat> a, const std::vector<arma::mat>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

arma::mat lower_b(dkp::random::Stream& s, arma::uword m) {
  arma::mat B = arma::trimatl(0.4 * dkp::random::normal_matrix(s, m, m));
  B.diag() = dkp::random::uniform_matrix(s, m, 1) + 0.6;
  return B;
}

// A P x m factor whose leading m x m block is well conditioned.
arma::mat random_factor_matrix(dkp::random::Stream& s, arma::uword P, arma::uword m) {
  arma::mat F = 0.5 * dkp::random::normal_matrix(s, P, m);
  F.diag() += 1.5;
  return F;
}

arma::mat random_a(dkp::random::Stream& s, arma::uword P) {
  arma::mat A;
  do {
    A = arma::eye(P, P) + 0.6 * dkp::random::normal_matrix(s, P, P);
  } while (arma::cond(A) > 15.0);
  return A;
}

}  // namespace

TEST_CASE(
    "gradients: Wishart log density w.r.t. Sigma (unconstrained) and G (full rank, singular)") {
  auto s = stream("grad-wishart");
  for (const auto& [P, nu] :
       std::vector<std::pair<arma::uword, double>>{{3, 4.5}, {4, 4.0}, {4, 2.0}, {5, 1.0}}) {
    const arma::uword m = dd::bartlett_columns(P, nu);
    const arma::mat U = random_unconstrained(s, P);
    const arma::mat F = random_factor_matrix(s, P, m);
    // G = F F^T with a free factor F (P x m): every entry of F can move on its own and G keeps
    // its rank.
    expect_grad(
        [nu](Tape&, const std::vector<Var>& v) {
          Var G = ad::matmul(v[1], v[1], false, true);
          return dd::wishart_log_prob(G, chol_from_unconstrained(v[0]), nu);
        },
        {U, F}, "wishart_log_prob P=" + std::to_string(P) + " nu=" + std::to_string(nu));
    expect_grad(
        [nu](Tape&, const std::vector<Var>& v) {
          return dd::wishart_log_prob_factor(v[1], chol_from_unconstrained(v[0]), nu);
        },
        {U, F}, "wishart_log_prob_factor");
  }
}

TEST_CASE("gradients: inverse Wishart log densities w.r.t. Psi, nu and G; the conditional") {
  auto s = stream("grad-iw");
  for (arma::uword P : {2u, 4u}) {
    const arma::mat U = random_unconstrained(s, P), V = random_unconstrained(s, P);
    const arma::mat lognu = sc(std::log(1.7));  // nu = P - 1 + exp(lognu)
    const double off = static_cast<double>(P) - 1.0;
    expect_grad(
        [off](Tape&, const std::vector<Var>& v) {
          Var LG = chol_from_unconstrained(v[2]);
          Var G = ad::matmul(LG, LG, false, true);
          return dd::inverse_wishart_log_prob(G, chol_from_unconstrained(v[0]),
                                              ad::exp(v[1]) + off);
        },
        {U, lognu, V}, "inverse_wishart_log_prob");
    // at its own sample: the total derivative (sample path + explicit), with Inversion draws
    expect_grad(
        [off](Tape&, const std::vector<Var>& v) {
          auto st = stream("grad-iw-sample");
          Var L = chol_from_unconstrained(v[0]);
          Var nu = ad::exp(v[1]) + off;
          const auto smp = dd::inverse_wishart_sample(L, nu, st, GammaMethod::Inversion);
          return ad::add(dd::inverse_wishart_log_prob_at_sample(smp, L, nu),
                         test_functional(smp.G));
        },
        {U, sc(std::log(4.0))}, "inverse_wishart_log_prob_at_sample + f(G)");
  }
  // the train/test conditional, through all of its inputs
  const arma::uword Pi = 3, n = 2;
  const arma::mat Uj = random_unconstrained(s, Pi + n);
  expect_grad(
      [Pi, n](Tape& tape, const std::vector<Var>& v) {
        auto st = stream("grad-iw-conditional");
        Var Lj = chol_from_unconstrained(v[0]);
        Var Psi = ad::matmul(Lj, Lj, false, true);
        // blocks through constant selector matrices
        const arma::mat I = arma::eye(Pi + n, Pi + n);
        Var Ei = tape.constant(I.cols(0, Pi - 1)), Et = tape.constant(I.cols(Pi, Pi + n - 1));
        Var Psi_ii = ad::matmul(ad::matmul(Ei, Psi, true), Ei);
        Var Psi_it = ad::matmul(ad::matmul(Ei, Psi, true), Et);
        Var Psi_tt = ad::matmul(ad::matmul(Et, Psi, true), Et);
        Var psi_tt = ad::matmul(ad::mul(Psi_tt, tape.constant(arma::eye(n, n))),
                                tape.constant(arma::ones(n, 1)));
        Var L_ii = ad::cholesky(Psi_ii, "test Psi_ii");
        Var nu = ad::exp(v[1]) + static_cast<double>(Pi + n);
        const auto gi = dd::inverse_wishart_sample(
            L_ii, ad::add_scalar(nu, -static_cast<double>(n)), st, GammaMethod::Inversion);
        const auto c = dd::inverse_wishart_conditional_sample(gi.G, L_ii, Psi_it, psi_tt, nu, st,
                                                              GammaMethod::Inversion);
        return ad::add(ad::random_contraction(c.g_it, 21), ad::random_contraction(c.g_tt, 22));
      },
      {Uj, sc(std::log(3.0))}, "inverse_wishart_conditional_sample");
}

TEST_CASE("the IW conditional (fused second half, scale apart) equals the composed ops") {
  // n = 600 points: three panels of the fused solve (256 + 256 + 88), forward and backward. The
  // composed form is the conditional written for Psi = c K with L_psi = sqrt(c) L, every P x n
  // block scaled; it draws the same numbers from the same stream in the same order.
  const arma::uword Pi = 12, n = 600;
  auto s = stream("iw-conditional-fused");
  const arma::mat Z = dkp::random::normal_matrix(s, Pi + n, 2);
  arma::mat K = arma::exp(-0.5 * (arma::repmat(arma::sum(arma::square(Z), 1), 1, Pi + n) +
                                  arma::repmat(arma::sum(arma::square(Z), 1).t(), Pi + n, 1) -
                                  2.0 * Z * Z.t()));
  K.diag() += 1e-2;
  const arma::mat L = arma::chol(K.submat(0, 0, Pi - 1, Pi - 1), "lower");
  const arma::mat K_it = K.submat(0, Pi, Pi - 1, Pi + n - 1);
  const arma::mat k_tt = K.diag().eval().rows(Pi, Pi + n - 1);
  const arma::mat F = dkp::random::normal_matrix(s, Pi, Pi);
  const arma::mat G = F * F.t() / double(Pi) + arma::eye(Pi, Pi);
  const arma::mat nu = sc(double(Pi) + 4.0), c = sc(1.7);
  auto contract = [](const Var& g_it, const Var& g_tt, const Var& g_c) {
    return ad::random_contraction(g_it, 31) + ad::random_contraction(g_tt, 32) +
           ad::random_contraction(g_c, 33);
  };
  // x = {G, L, K_it, k_tt, nu[, c]}
  auto fused = [&](Tape&, const std::vector<Var>& x) {
    auto st = stream("iw-conditional-fused-draws");
    const auto r = dd::inverse_wishart_conditional_sample(
        x[0], x[1], x[2], x[3], x[4], st, GammaMethod::Inversion, x.size() > 5 ? x[5] : Var());
    return contract(r.g_it, r.g_tt, r.g_tt_given_i);
  };
  auto composed = [&](Tape& tape, const std::vector<Var>& x) {
    auto st = stream("iw-conditional-fused-draws");
    const bool scaled = x.size() > 5;
    const Var L_psi = scaled ? ad::mul(ad::sqrt(x[5]), x[1]) : x[1];
    const Var Psi_it = scaled ? ad::mul(x[5], x[2]) : x[2];
    const Var psi_tt = scaled ? ad::mul(x[5], x[3]) : x[3];
    const Var A = ad::solve_lower(L_psi, Psi_it);
    const Var psi_c = ad::sub(psi_tt, ad::col_sumsq(A));
    const Var shape = ad::repmat(ad::scale(x[4], 0.5), n, 1);
    const Var g_c =
        dd::inverse_gamma_sample(shape, ad::scale(psi_c, 0.5), st, GammaMethod::Inversion);
    const Var E = tape.constant(dkp::random::normal_matrix(st, Pi, n));
    const Var Y =
        ad::solve_lower(L_psi, ad::add(A, ad::mul_each_row(E, ad::transpose(ad::sqrt(g_c)))), true);
    const Var g_it = ad::matmul(x[0], Y);
    const Var g_tt = ad::add(g_c, ad::transpose(ad::col_sums(ad::mul(g_it, Y))));
    return contract(g_it, g_tt, g_c);
  };
  for (const bool scaled : {false, true}) {
    CAPTURE(scaled);
    std::vector<arma::mat> in{G, L, K_it, k_tt, nu};
    if (scaled) in.push_back(c);
    const double vf = ad::evaluate(fused, in), vc = ad::evaluate(composed, in);
    CHECK(vf == doctest::Approx(vc).epsilon(1e-12));
    const auto gf = ad::gradients(fused, in), gc = ad::gradients(composed, in);
    for (size_t i = 0; i < in.size(); ++i) {
      CAPTURE(i);
      // The triangular factor's adjoint: its lower triangle (the only one the solves read).
      const arma::mat a = i == 1 ? arma::mat(arma::trimatl(gf[i])) : gf[i];
      const arma::mat b = i == 1 ? arma::mat(arma::trimatl(gc[i])) : gc[i];
      CHECK(arma::norm(b, "inf") > 0.0);
      CHECK(arma::approx_equal(a, b, "absdiff", 1e-9 * (1.0 + arma::abs(b).max())));
    }
  }
}

TEST_CASE("gradients: GW log density w.r.t. L, alpha, beta, mu, sigma (fixed T, and total)") {
  auto s = stream("grad-gw");
  for (const auto& [P, nu] :
       std::vector<std::pair<arma::uword, int>>{{3, 5}, {4, 4}, {4, 2}, {5, 1}}) {
    const arma::mat U = random_unconstrained(s, P);
    const auto bp = random_bartlett_inputs(s, P, nu);
    const std::string tag = "P=" + std::to_string(P) + " nu=" + std::to_string(nu);
    // a fixed T: the density as a function of its parameters
    Tape t0;
    auto st0 = stream("grad-gw-fixed", P * 10 + nu);
    const auto fixed = dd::bartlett_sample(
        P,
        params_from(
            {t0.constant(bp[0]), t0.constant(bp[1]), t0.constant(bp[2]), t0.constant(bp[3])}, 0),
        st0);
    const arma::mat c0 = fixed.c.val(), T0 = fixed.T.val();
    expect_grad(
        [nu, c0, T0](Tape& tape, const std::vector<Var>& v) {
          Var L = chol_from_unconstrained(v[0]);
          dd::PsdSample smp{
              Var(), ad::matmul(L, tape.constant(T0)), {tape.constant(c0), tape.constant(T0)}};
          return dd::gw_log_prob(smp, L, nu, params_from(v, 1));
        },
        concat({U}, bp), "gw_log_prob fixed T " + tag);
    // total derivative of log Q(G(theta); theta) + f(G(theta)) with Inversion draws
    expect_grad(
        [nu](Tape&, const std::vector<Var>& v) {
          auto st = stream("grad-gw-total");
          Var L = chol_from_unconstrained(v[0]);
          const auto p = params_from(v, 1);
          const auto smp = dd::gw_sample(L, nu, p, st, GammaMethod::Inversion);
          return ad::add(dd::gw_log_prob(smp, L, nu, p), test_functional(smp.G));
        },
        concat({U}, bp), "gw_log_prob total " + tag);
    // Sticking the landing: with the parameters detached inside the density, the gradient is
    // the total one minus the explicit (score) part, i.e. the gradient at fixed T.
    {
      Tape tape;
      std::vector<Var> v;
      for (const auto& x : concat({U}, bp)) v.push_back(tape.variable(x));
      auto st = stream("grad-gw-stl");
      Var L = chol_from_unconstrained(v[0]);
      const auto p = params_from(v, 1);
      const auto smp = dd::gw_sample(L, nu, p, st, GammaMethod::Inversion);
      // total, STL and explicit-only (sample held constant) on one tape
      Var total = dd::gw_log_prob(smp, L, nu, p);
      Var stl = dd::gw_log_prob(smp, L, nu, dd::detached(p));
      dd::PsdSample fixed_smp{
          smp.G,
          tape.constant(smp.F.val()),
          {tape.constant(smp.bartlett.c.val()), tape.constant(smp.bartlett.T.val())}};
      Var expl = dd::gw_log_prob(fixed_smp, tape.constant(L.val()), nu, p);
      auto grads = [&](const Var& y) {
        tape.backward(y);  // resets every adjoint first
        std::vector<arma::mat> g;
        for (const auto& x : v) g.push_back(x.grad());
        return g;
      };
      const auto gt = grads(total), gs = grads(stl), ge = grads(expl);
      CHECK(stl.scalar() == doctest::Approx(total.scalar()).epsilon(1e-14));
      for (size_t k = 1; k < v.size(); ++k) {  // alpha, beta, mu, sigma
        INFO("STL " << tag << " input " << k);
        CHECK(arma::approx_equal(gs[k], gt[k] - ge[k], "absdiff",
                                 1e-9 * (1 + arma::abs(gt[k]).max())));
      }
    }
  }
}

TEST_CASE("gradients: A-GW and AB-GW log densities w.r.t. A, B, alpha, beta, mu, sigma") {
  auto s = stream("grad-agw");
  for (const auto& [P, nu] :
       std::vector<std::pair<arma::uword, int>>{{3, 5}, {3, 3}, {4, 2}, {5, 1}}) {
    const arma::uword m = std::min<arma::uword>(P, static_cast<arma::uword>(nu));
    const arma::mat A = random_a(s, P), B = lower_b(s, m);
    const auto bp = random_bartlett_inputs(s, P, nu);
    const std::string tag = "P=" + std::to_string(P) + " nu=" + std::to_string(nu);
    Tape t0;
    auto st0 = stream("grad-agw-fixed", P * 10 + nu);
    const auto fixed = dd::bartlett_sample(
        P,
        params_from(
            {t0.constant(bp[0]), t0.constant(bp[1]), t0.constant(bp[2]), t0.constant(bp[3])}, 0),
        st0);
    const arma::mat c0 = fixed.c.val(), T0 = fixed.T.val();
    expect_grad(
        [nu, c0, T0](Tape& tape, const std::vector<Var>& v) {
          dd::PsdSample smp{Var(),
                            ad::matmul(ad::matmul(v[0], tape.constant(T0)), v[1]),
                            {tape.constant(c0), tape.constant(T0)}};
          dd::PsdSample smp_a{
              Var(), ad::matmul(v[0], tape.constant(T0)), {tape.constant(c0), tape.constant(T0)}};
          const auto p = params_from(v, 2);
          return ad::add(dd::abgw_log_prob(smp, v[0], v[1], nu, p),
                         dd::agw_log_prob(smp_a, v[0], nu, p));
        },
        concat({A, B}, bp), "A-GW + AB-GW log prob fixed T " + tag);
    expect_grad(
        [nu](Tape&, const std::vector<Var>& v) {
          auto st = stream("grad-abgw-total");
          const auto p = params_from(v, 2);
          auto st2 = st;
          const auto smp = dd::abgw_sample(v[0], v[1], nu, p, st, GammaMethod::Inversion);
          const auto sa = dd::agw_sample(v[0], nu, p, st2, GammaMethod::Inversion);
          return ad::add(ad::add(dd::abgw_log_prob(smp, v[0], v[1], nu, p), test_functional(smp.G)),
                         ad::add(dd::agw_log_prob(sa, v[0], nu, p), test_functional(sa.G, 8)));
        },
        concat({A, B}, bp), "A-GW + AB-GW total " + tag);
    // The factored forms A = L A' (what the DWP uses), w.r.t. L, A', B and the Bartlett
    // parameters, log|det A'| recorded by factor_a on the same tape.
    const arma::mat U = random_unconstrained(s, P);
    expect_grad(
        [nu](Tape&, const std::vector<Var>& v) {
          auto st = stream("grad-abgw-factored");
          auto st2 = st;
          const dd::FactoredA fa = dd::factor_a(chol_from_unconstrained(v[0]), v[1]);
          const auto p = params_from(v, 3);
          const auto smp = dd::abgw_sample(fa, v[2], nu, p, st, GammaMethod::Inversion);
          const auto sa = dd::agw_sample(fa, nu, p, st2, GammaMethod::Inversion);
          return ad::add(ad::add(dd::abgw_log_prob(smp, fa, v[2], nu, p), test_functional(smp.G)),
                         ad::add(dd::agw_log_prob(sa, fa, nu, p), test_functional(sa.G, 8)));
        },
        concat({U, A, B}, bp), "factored A-GW + AB-GW total " + tag);
  }
}

TEST_CASE("gradients: multivariate normal log density and matrix normal samples") {
  auto s = stream("grad-mvn");
  const arma::uword P = 4, n = 3;
  const arma::mat X = dkp::random::normal_matrix(s, P, n), M = dkp::random::normal_matrix(s, P, n);
  const arma::mat m1 = dkp::random::normal_matrix(s, P, 1), U = random_unconstrained(s, P);
  expect_grad(
      [](Tape&, const std::vector<Var>& v) {
        return dd::mvn_log_prob(v[0], v[1], chol_from_unconstrained(v[2]));
      },
      {X, M, U}, "mvn_log_prob");
  expect_grad(
      [](Tape&, const std::vector<Var>& v) {
        return dd::mvn_log_prob(v[0], v[1], chol_from_unconstrained(v[2]));
      },
      {X, m1, U}, "mvn_log_prob shared mean");
  const arma::mat Uc = random_unconstrained(s, n), sd = dkp::random::uniform_matrix(s, P, 1) + 0.5;
  expect_grad(
      [](Tape&, const std::vector<Var>& v) {
        auto st = stream("grad-mn-sample");
        Var a = dd::matrix_normal_sample(v[0], chol_from_unconstrained(v[1]),
                                         chol_from_unconstrained(v[2]), st);
        Var b = dd::matrix_normal_sample(v[0], chol_from_unconstrained(v[1]), st);
        Var c = dd::rowwise_normal_sample(v[0], v[3], st);
        return ad::add(ad::add(ad::random_contraction(a, 31), ad::random_contraction(b, 32)),
                       ad::random_contraction(c, 33));
      },
      {M, U, Uc, sd}, "matrix normal samples");
}

TEST_CASE(
    "pathwise: d E[f(G)] / d theta from Marsaglia-Tsang draws matches finite differences of "
    "the common-random-numbers estimate within 4 SE, for every sampler") {
  // f(G) = sum(W % G) + sum(log(1 + G % G)). For each sampler, a random direction v in parameter
  // space: the reparameterised estimator (Rejection draws, production path) and the finite
  // difference of the CRN estimate (Inversion draws, independent seeds) estimate the same
  // directional derivative.
  auto s = stream("pathwise");
  struct Case {
    std::string name;
    PathFn f;
    std::vector<arma::mat> theta;
  };
  std::vector<Case> cases;
  {
    const arma::uword P = 3;
    cases.push_back({"Wishart nu=4",
                     [](Tape&, const std::vector<Var>& v, dkp::random::Stream& st, GammaMethod m) {
                       return test_functional(
                           dd::wishart_sample(chol_from_unconstrained(v[0]), 4.0, st, m).G);
                     },
                     {random_unconstrained(s, P)}});
    cases.push_back({"Wishart nu=2 (singular)",
                     [](Tape&, const std::vector<Var>& v, dkp::random::Stream& st, GammaMethod m) {
                       return test_functional(
                           dd::wishart_sample(chol_from_unconstrained(v[0]), 2.0, st, m).G);
                     },
                     {random_unconstrained(s, P)}});
    cases.push_back(
        {"inverse Wishart (Psi, nu)",
         [](Tape&, const std::vector<Var>& v, dkp::random::Stream& st, GammaMethod m) {
           return test_functional(
               dd::inverse_wishart_sample(chol_from_unconstrained(v[0]), ad::exp(v[1]) + 5.0, st, m)
                   .G);
         },
         {random_unconstrained(s, P), sc(std::log(2.5))}});
    for (int nu : {2, 4}) {
      cases.push_back(
          {"GW nu=" + std::to_string(nu),
           [nu](Tape&, const std::vector<Var>& v, dkp::random::Stream& st, GammaMethod m) {
             return test_functional(
                 dd::gw_sample(chol_from_unconstrained(v[0]), nu, params_from(v, 1), st, m).G);
           },
           concat({random_unconstrained(s, P)}, random_bartlett_inputs(s, P, nu))});
      const arma::uword mm = std::min<arma::uword>(P, static_cast<arma::uword>(nu));
      cases.push_back(
          {"AB-GW nu=" + std::to_string(nu),
           [nu](Tape&, const std::vector<Var>& v, dkp::random::Stream& st, GammaMethod m) {
             return test_functional(dd::abgw_sample(v[0], v[1], nu, params_from(v, 2), st, m).G);
           },
           concat({random_a(s, P), lower_b(s, mm)}, random_bartlett_inputs(s, P, nu))});
      cases.push_back(
          {"A-GW nu=" + std::to_string(nu),
           [nu](Tape&, const std::vector<Var>& v, dkp::random::Stream& st, GammaMethod m) {
             return test_functional(dd::agw_sample(v[0], nu, params_from(v, 1), st, m).G);
           },
           concat({random_a(s, P)}, random_bartlett_inputs(s, P, nu))});
    }
  }
  for (const auto& c : cases) {
    std::vector<arma::mat> dir;
    for (const auto& x : c.theta) dir.push_back(dkp::random::normal_matrix(s, x.n_rows, x.n_cols));
    // Inversion draws: the CRN estimate is smooth; its finite difference equals the mean of the
    // reparameterised gradients (to finite-difference accuracy), draw by draw.
    const int NP = std::getenv("NP") ? std::atoi(std::getenv("NP")) : 3000;
    const auto inv = pathwise(c.f, c.theta, dir, NP, "pathwise-inv-" + c.name,
                              GammaMethod::Inversion, 1e-4, true);
    const auto rej =
        pathwise(c.f, c.theta, dir, NP, "pathwise-rej-" + c.name, GammaMethod::Rejection, 0, false);
    const double se = std::sqrt(rej.ad.se * rej.ad.se + inv.fd.se * inv.fd.se);
    MESSAGE(c.name << ": reparameterised (Marsaglia-Tsang) " << rej.ad.mean << " +- " << rej.ad.se
                   << "; FD of CRN estimate (inversion) " << inv.fd.mean << " +- " << inv.fd.se
                   << "; difference " << (rej.ad.mean - inv.fd.mean) / se
                   << " SE; inversion AD - FD " << inv.ad.mean - inv.fd.mean);
    CHECK(std::abs(rej.ad.mean - inv.fd.mean) <= 4 * se);
    CHECK(std::abs(inv.ad.mean - inv.fd.mean) <= 1e-6 * (1.0 + std::abs(inv.fd.mean)));
  }
}

// The gradient w.r.t. c of f(c, lower, a) with `lower` a constant (T's adjoint read on its
// diagonal only, Node::adj_diag_only) and a variable (the full adjoint), in that order.
template <class F>
std::pair<arma::mat, arma::mat> c_grad_both_ways(const F& f, const arma::mat& c0,
                                                 const arma::mat& lower, const arma::mat& a0) {
  std::pair<arma::mat, arma::mat> out;
  for (bool constant_lower : {true, false}) {
    Tape tape;
    const Var c = tape.variable(c0), a = tape.constant(a0);
    const Var low = constant_lower ? tape.constant(lower) : tape.variable(lower);
    tape.backward(f(c, low, a));
    (constant_lower ? out.first : out.second) = c.grad();
  }
  return out;
}

TEST_CASE("a Bartlett factor with a constant lower triangle: diagonal-only adjoints, exact") {
  // bartlett_assemble with a constant `lower` marks T's adjoint as read on the diagonal only
  // (Node::adj_diag_only), and tri_solve's and matmul's adjoints of T then compute only its
  // diagonal blocks (matmul from P = 512 on). The gradient w.r.t. c must be the one with the full
  // adjoints (a variable `lower`) to the last bit, and match finite differences. As the
  // inverse Wishart sampler and the DIWP's log prior use T: F = L T^{-T} and T^T L^{-1} L_p.
  dkp::random::Stream s = stream("bartlett-diag-only");
  const arma::uword P = 520;
  const arma::mat lower = dkp::random::normal_matrix(s, P, P);
  const arma::mat c0 = dkp::random::uniform_matrix(s, P, 1) + 0.5 * double(P);
  const arma::mat G = dkp::random::normal_matrix(s, P, P);
  const arma::mat L = arma::chol(G * G.t() / double(P) + arma::eye(P, P), "lower");
  const arma::mat Wt = dkp::random::normal_matrix(s, P, P);
  const auto f = [&](const Var& c, const Var& low, const Var& a) {
    const Var T = dd::bartlett_assemble(ad::mul(ad::exp(a), c), low);
    const Var Lv = c.tape().constant(L);
    const Var F = ad::tri_solve(T, Lv, dkp::linalg::Uplo::Lower, true, dkp::linalg::Side::Right);
    const Var W = ad::matmul(T, ad::solve_lower(Lv, Lv), true, false);
    return ad::sum(ad::mul(F, c.tape().constant(Wt))) + ad::sum(ad::square(W));
  };
  const arma::mat a0(1, 1, arma::fill::value(0.1));
  const auto [grad_const, grad_var] = c_grad_both_ways(f, c0, lower, a0);
  CHECK(arma::approx_equal(grad_const, grad_var, "absdiff", 0.0));
  // Finite differences through one scale parameter of c (each evaluation is O(P^3)).
  expect_grad(
      [&](Tape& tape, const std::vector<Var>& v) {
        return f(tape.constant(c0), tape.constant(lower), v[0]);
      },
      {a0}, "bartlett_assemble diagonal-only adjoints");
}

TEST_CASE("the DIWP input layer's fused ops with a diagonal-only Bartlett adjoint") {
  // sq_norm_tri_t_inv and times_iw_factor read only the diagonal of T's adjoint when T comes from
  // bartlett_assemble with a constant lower triangle (Node::adj_diag_only, an O(n^2) path): the
  // gradient w.r.t. c must match the full adjoints' (a variable `lower`) and finite differences.
  dkp::random::Stream s = stream("iw-fused-diag-only");
  const arma::uword P = 40, m = 9;
  const arma::mat lower = dkp::random::normal_matrix(s, P, P);
  const arma::mat c0 = dkp::random::uniform_matrix(s, P, 1) + 0.5 * double(P);
  const arma::mat G = dkp::random::normal_matrix(s, P, P);
  const arma::mat L = arma::chol(G * G.t() / double(P) + arma::eye(P, P), "lower");
  const arma::mat Xi = dkp::random::normal_matrix(s, 3, P),
                  Xt = dkp::random::normal_matrix(s, m, P);
  const arma::mat Wt = dkp::random::normal_matrix(s, 3 + m, P);
  const auto f = [&](const Var& c, const Var& low, const Var& a) {
    const Var T = dd::bartlett_assemble(ad::mul(ad::exp(a), c), low);
    ad::Tape& tape = c.tape();
    const Var Lv = tape.constant(L);
    const Var Y = ad::times_iw_factor(tape.constant(Xi), tape.constant(Xt), Lv, T);
    return ad::sum(ad::mul(Y, tape.constant(Wt))) + ad::sq_norm_tri_t_inv(T, Lv);
  };
  const arma::mat a0(1, 1, arma::fill::value(0.1));
  const auto [grad_const, grad_var] = c_grad_both_ways(f, c0, lower, a0);
  CHECK(arma::approx_equal(grad_const, grad_var, "reldiff", 1e-12));
  expect_grad(
      [&](Tape& tape, const std::vector<Var>& v) {
        return f(tape.constant(c0), tape.constant(lower), v[0]);
      },
      {a0}, "fused IW ops, diagonal-only adjoints");
}

TEST_CASE(
    "the Bartlett module's fused ops: values against closed forms, finite-difference gradients") {
  dkp::random::Stream s = stream("fused-ops");
  // bartlett_assemble: T_jj = sqrt(c_j), the strict lower triangle of `lower`, zeros above.
  const arma::uword P = 5, m = 3;
  const arma::mat c = dkp::random::uniform_matrix(s, m, 1) + 0.5;
  const arma::mat lower = dkp::random::normal_matrix(s, P, m);
  {
    ad::Tape tape;
    const arma::mat T = dd::bartlett_assemble(tape.constant(c), tape.constant(lower)).val();
    for (arma::uword j = 0; j < m; ++j) {
      for (arma::uword i = 0; i < P; ++i) {
        const double want = i > j ? lower(i, j) : (i == j ? std::sqrt(c[j]) : 0.0);
        CHECK(T(i, j) == want);
      }
    }
  }
  expect_grad(
      [](ad::Tape&, const std::vector<Var>& v) {
        const Var T = dd::bartlett_assemble(ad::exp(v[0]), v[1]);
        return ad::sum(ad::square(ad::mul(T, T)));  // every entry weighs differently
      },
      {arma::log(c), lower}, "bartlett_assemble");
  // weighted_log_abs_diag: sum_j w_j log |X_jj| (negative diagonal entries too), rectangular X.
  arma::mat X = dkp::random::normal_matrix(s, 4, 6);
  X.diag() += arma::vec{1.5, -2.0, 1.2, -0.9};
  const arma::vec w = {0.5, 2.0, -1.0};
  {
    ad::Tape tape;
    const double want = 0.5 * std::log(std::abs(X(0, 0))) + 2.0 * std::log(std::abs(X(1, 1))) -
                        std::log(std::abs(X(2, 2)));
    CHECK(dd::weighted_log_abs_diag(tape.constant(X), w).scalar() ==
          doctest::Approx(want).epsilon(1e-14));
    CHECK_THROWS_AS(dd::weighted_log_abs_diag(tape.constant(X), arma::ones(5)), dkp::Error);
  }
  expect_grad(
      [&](ad::Tape&, const std::vector<Var>& v) { return dd::weighted_log_abs_diag(v[0], w); }, {X},
      "weighted_log_abs_diag");
  // log_abs_det: log |det X| for a matrix of negative determinant; X^{-T} as the gradient.
  arma::mat Y = random_a(s, 4);
  Y.row(0) *= -1.0;
  if (arma::det(Y) > 0.0) Y.row(1) *= -1.0;
  REQUIRE(arma::det(Y) < 0.0);
  {
    ad::Tape tape;
    CHECK(dd::log_abs_det(tape.constant(Y)).scalar() ==
          doctest::Approx(std::log(std::abs(arma::det(Y)))).epsilon(1e-13));
    CHECK_THROWS_AS(dd::log_abs_det(tape.constant(arma::mat(3, 4, arma::fill::ones))), dkp::Error);
    CHECK_THROWS_AS(dd::log_abs_det(tape.constant(arma::mat(3, 3, arma::fill::ones))), dkp::Error);
  }
  expect_grad([](ad::Tape&, const std::vector<Var>& v) { return dd::log_abs_det(v[0]); }, {Y},
              "log_abs_det");
}
