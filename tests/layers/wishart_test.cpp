// The Wishart layer's train/test path (layers/wishart.hpp): whatever the posterior of the inducing
// block (GW, A-GW, AB-GW), the train/test features come from the prior's conditional given it
// (GW paper eqs. 40-44), so that over Monte Carlo draws
//   E[G_ti - K_ti K_ii^{-1} G_ii] = 0  and  E[g_tt - k_ti K_ii^{-1} G_ii K_ii^{-1} k_it] =
//   Sigma_tt,
// Sigma_tt = k_tt - k_ti K_ii^{-1} k_it, at every inducing sample. Checked by brute force on a tiny
// problem (3 inducing points, 2 test points) with a perturbed A' and B, within 5 standard errors.
#include <doctest/doctest.h>

#include <cmath>

#include <fmt/format.h>

#include "autodiff/params.hpp"
#include "autodiff/tape.hpp"
#include "layers/wishart.hpp"
#include "random/stream.hpp"
#include "test_support.hpp"

namespace {

using dkp::layers::WishartLayer;
using dkp::layers::WishartPosterior;

// A squared-exponential kernel on 1-d points x: (P + B) x (P + B), inducing rows first, with the
// layer's jitter on the inducing block.
arma::mat se_kernel(const arma::vec& x) {
  arma::mat K(x.n_elem, x.n_elem);
  for (arma::uword a = 0; a < x.n_elem; ++a)
    for (arma::uword b = 0; b < x.n_elem; ++b)
      K(a, b) = 1.3 * std::exp(-0.5 * (x(a) - x(b)) * (x(a) - x(b)) / 0.8);
  return K;
}

struct Moments {
  arma::vec mean, mean_se;    // B: E's entries' mean per point
  arma::vec sq, sq_se;        // B: E's entries' second moment per point
  arma::vec cross, cross_se;  // B: mean of E_tj (K_ti K_ii^{-1} F_i)_tj
};

// Monte Carlo moments of the layer's train/test Gram blocks around their conditional means.
Moments conditional_moments(WishartPosterior posterior, size_t nu, double sd_factor, size_t draws) {
  const size_t P = 3, B = 2;
  const arma::vec x = {-1.0, 0.2, 1.1, -0.4, 0.7};  // inducing, then test points
  arma::mat K = se_kernel(x);
  K.submat(0, 0, P - 1, P - 1).diag() += 1e-6 * 1.3;
  const arma::mat Kii = K.submat(0, 0, P - 1, P - 1), Kti = K.submat(P, 0, P + B - 1, P - 1);
  const arma::vec ktt = K.submat(P, P, P + B - 1, P + B - 1).diag();
  const arma::mat W = Kti * arma::inv_sympd(Kii);  // K_ti K_ii^{-1}

  dkp::layers::WishartOptions o;
  o.posterior = posterior;
  const WishartLayer layer(1, P, nu, o);
  dkp::autodiff::ParamMap params;
  dkp::random::Stream init(dkp::test::seed() + 11);
  layer.add_initial_parameters(params, init);
  params["layer1.logit_q"](0, 0) = 0.5;  // a posterior far from the prior
  if (posterior != WishartPosterior::Gw) {
    params["layer1.A_prime"] += 0.3 * dkp::random::normal_matrix(init, P, P);
  }
  if (posterior == WishartPosterior::Abgw) {
    const size_t m = layer.bartlett_columns();
    params["layer1.B"] += 0.2 * arma::trimatl(dkp::random::normal_matrix(init, m, m));
  }

  dkp::random::Stream rng(dkp::test::seed() + 12);
  arma::mat sum(B, 3, arma::fill::zeros), sumsq(B, 3, arma::fill::zeros);  // mean, sq, cross
  for (size_t s = 0; s < draws; ++s) {
    dkp::autodiff::Tape tape;
    const auto p = dkp::autodiff::to_vars(tape, params, false);
    const auto shared = layer.share(p);
    const auto Kii_v = tape.constant(Kii), Kit_v = tape.constant(Kti.t()),
               tt_v = tape.constant(arma::mat(ktt));
    WishartLayer::Prep prep = layer.prepare(Kii_v, Kit_v, tt_v, shared, true);
    // A deliberately perturbed conditional (the test's own check that it can fail).
    if (sd_factor != 1.0) prep.sd = tape.constant(prep.sd.val() * sd_factor);
    const auto out = layer.sample(p, shared, prep, Kit_v, tt_v, rng, false);
    const arma::mat mean = W * out.Fi.val();  // B x nu
    const arma::mat E = out.Ft.val() - mean;
    arma::mat stats(B, 3);
    stats.col(0) = arma::mean(E, 1);
    stats.col(1) = arma::mean(arma::square(E), 1);
    stats.col(2) = arma::mean(E % mean, 1);
    sum += stats;
    sumsq += arma::square(stats);
  }
  const double n = double(draws);
  const arma::mat mu = sum / n, se = arma::sqrt((sumsq / n - arma::square(mu)) / n);
  return {mu.col(0), se.col(0), mu.col(1), se.col(1), mu.col(2), se.col(2)};
}

// Sigma_tt of the tiny problem.
arma::vec schur_diag() {
  const size_t P = 3, B = 2;
  const arma::vec x = {-1.0, 0.2, 1.1, -0.4, 0.7};
  arma::mat K = se_kernel(x);
  K.submat(0, 0, P - 1, P - 1).diag() += 1e-6 * 1.3;
  const arma::mat Kii = K.submat(0, 0, P - 1, P - 1), Kti = K.submat(P, 0, P + B - 1, P - 1);
  return K.submat(P, P, P + B - 1, P + B - 1).diag() -
         arma::diagvec(Kti * arma::inv_sympd(Kii) * Kti.t());
}

// Every entry within 5 standard errors of its expectation.
bool within(const arma::mat& mean, const arma::mat& se, const arma::mat& expected) {
  return arma::all(arma::vectorise(arma::abs(mean - expected) <= 5.0 * se + 1e-12));
}

}  // namespace

TEST_CASE(
    "wishart layer: train/test features follow the prior's conditional given the inducing "
    "block, under the GW, A-GW and AB-GW posteriors (Monte Carlo)") {
  const arma::vec sigma = schur_diag();
  for (WishartPosterior post :
       {WishartPosterior::Gw, WishartPosterior::Agw, WishartPosterior::Abgw}) {
    for (size_t nu : {2, 5}) {  // nu < P (singular Wishart) and nu > P (zero-padded F_i)
      CAPTURE(dkp::layers::to_string(post));
      CAPTURE(nu);
      const Moments m = conditional_moments(post, nu, 1.0, 20000);
      CHECK(within(m.mean, m.mean_se, arma::zeros(2)));
      CHECK(within(m.sq, m.sq_se, sigma / double(nu)));
      CHECK(within(m.cross, m.cross_se, arma::zeros(2)));
      CHECK(arma::all(m.sq_se < 0.02 * sigma / double(nu)));  // the check has power
    }
  }
}

TEST_CASE("wishart layer conditional check fails on a perturbed conditional (sd x 1.1)") {
  const arma::vec sigma = schur_diag();
  const Moments m = conditional_moments(WishartPosterior::Agw, 5, 1.1, 20000);
  CHECK_FALSE(within(m.sq, m.sq_se, sigma / 5.0));
}
