// The reparameterised Gamma op (lib/distributions/gamma_op.hpp) and the univariate densities.
#include <doctest/doctest.h>

#include <boost/math/special_functions/gamma.hpp>
#include <boost/math/special_functions/trigamma.hpp>
#include <cmath>

#include "dist_test_support.hpp"
#include "distributions/gamma_op.hpp"
#include "distributions/univariate.hpp"
#include "util/error.hpp"

namespace dd = dkp::distributions;
using namespace dkp::test::dist;
using dd::GammaMethod;

TEST_CASE("gamma op: inversion-mode samples are smooth in (shape, rate); the harness checks them") {
  // With the stream fixed, Inversion draws x = P^{-1}(a, u) / b: finite differences of the
  // sample itself must equal the implicit-reparameterisation adjoint.
  const arma::mat shape = {{0.3, 1.0}, {2.5, 40.0}};
  const arma::mat rate = {{0.5, 2.0}, {1.0, 0.7}};
  const auto f = [](Tape&, const std::vector<Var>& v) {
    auto s = stream("gamma-inversion");
    return ad::random_contraction(dd::gamma_sample(v[0], v[1], s, GammaMethod::Inversion), 3);
  };
  const auto r = ad::check_gradient(f, {shape, rate});
  INFO(r.detail);
  CHECK(r.ok);
  // 1x1 rate broadcast, and the inverse Gamma.
  const auto f2 = [](Tape&, const std::vector<Var>& v) {
    auto s = stream("gamma-inversion", 1);
    Var x = dd::gamma_sample(v[0], v[1], s, GammaMethod::Inversion);
    Var y = dd::inverse_gamma_sample(v[0], v[1], s, GammaMethod::Inversion);
    return ad::add(ad::random_contraction(x, 4), ad::random_contraction(y, 5));
  };
  const auto r2 = ad::check_gradient(f2, {shape, sc(1.3)});
  INFO(r2.detail);
  CHECK(r2.ok);
}

TEST_CASE("gamma op: rejection-mode adjoint equals the quantile derivative at the drawn value") {
  auto s = stream("gamma-rejection-adjoint");
  for (double a : {0.2, 0.9, 1.0, 3.7, 25.0}) {
    for (int rep = 0; rep < 5; ++rep) {
      Tape tape;
      Var av = tape.variable(sc(a));
      Var bv = tape.variable(sc(1.7));
      Var x = dd::gamma_sample(av, bv, s);
      tape.backward(x);
      const double xhat = x.scalar() * 1.7;
      const double u = boost::math::gamma_p(a, xhat);
      const double h = 1e-5 * a;
      const double dq =
          (boost::math::gamma_p_inv(a + h, u) - boost::math::gamma_p_inv(a - h, u)) / (2 * h) / 1.7;
      CHECK(av.grad()[0] == doctest::Approx(dq).epsilon(1e-6));
      CHECK(bv.grad()[0] == doctest::Approx(-x.scalar() / 1.7).epsilon(1e-12));
    }
  }
}

TEST_CASE(
    "gamma op: pathwise gradient of E[log x] matches trigamma within 4 SE; FD of CRN agrees") {
  // E[log x] = digamma(a) - log b for x ~ Gamma(a, b): d/da = trigamma(a), d/db = -1/b.
  const PathFn f = [](Tape&, const std::vector<Var>& v, dkp::random::Stream& s, GammaMethod m) {
    return ad::sum(ad::log(dd::gamma_sample(v[0], v[1], s, m)));
  };
  for (double a : {0.6, 2.0, 9.0}) {
    const double b = 1.5;
    const std::vector<arma::mat> theta = {sc(a), sc(b)};
    // d/da, reparameterised estimator on Marsaglia-Tsang draws
    const auto da = pathwise(f, theta, {sc(1.0), sc(0.0)}, 4000, "gamma-pathwise-a",
                             GammaMethod::Rejection, 0, false);
    INFO("a = " << a << ": AD " << da.ad.mean << " +- " << da.ad.se << ", trigamma "
                << boost::math::trigamma(a));
    CHECK(std::abs(da.ad.mean - boost::math::trigamma(a)) <= 4 * da.ad.se);
    const auto db = pathwise(f, theta, {sc(0.0), sc(1.0)}, 500, "gamma-pathwise-b",
                             GammaMethod::Rejection, 0, false);
    CHECK(db.ad.mean == doctest::Approx(-1.0 / b).epsilon(1e-12));  // exact: d log(x/b)/db
    // finite differences of the common-random-numbers estimate (inversion draws) agree with the
    // reparameterised gradients draw by draw, and hence in the mean.
    const auto fd = pathwise(f, theta, {sc(1.0), sc(0.0)}, 300, "gamma-pathwise-crn",
                             GammaMethod::Inversion, 1e-4 * a, true);
    CHECK(fd.fd.mean == doctest::Approx(fd.ad.mean).epsilon(1e-6));
    CHECK(std::abs(fd.fd.mean - boost::math::trigamma(a)) <= 4 * fd.fd.se);
  }
}

TEST_CASE("gamma op: argument checks") {
  Tape tape;
  auto s = stream("gamma-errors");
  CHECK_THROWS_AS(dd::gamma_sample(tape.variable(sc(-1.0)), tape.constant(1.0), s), dkp::Error);
  CHECK_THROWS_AS(dd::gamma_sample(tape.variable(sc(1.0)), tape.constant(0.0), s), dkp::Error);
  CHECK_THROWS_AS(
      dd::gamma_sample(tape.variable(arma::ones(2, 1)), tape.constant(arma::ones(3, 1)), s),
      dkp::Error);
  CHECK_THROWS_AS(
      dd::gamma_sample(tape.variable(sc(0.0)), tape.constant(1.0), s, GammaMethod::Inversion),
      dkp::Error);
}

TEST_CASE("univariate log densities: values against Boost, gradients through the harness") {
  const arma::mat x = {{0.3, 1.7, 4.0}}, mu = {{-0.5, 0.2, 3.0}}, sd = {{0.4, 1.1, 2.0}};
  const arma::mat a = {{0.7, 2.0, 11.0}}, b = {{0.5, 1.3, 3.0}};
  Tape tape;
  const arma::mat ln =
      dd::normal_log_prob(tape.constant(x), tape.constant(mu), tape.constant(sd)).val();
  const arma::mat lg =
      dd::gamma_log_prob(tape.constant(x), tape.constant(a), tape.constant(b)).val();
  const arma::mat li =
      dd::inverse_gamma_log_prob(tape.constant(x), tape.constant(a), tape.constant(b)).val();
  for (arma::uword i = 0; i < 3; ++i) {
    const double z = (x[i] - mu[i]) / sd[i];
    CHECK(
        ln[i] ==
        doctest::Approx(-0.5 * z * z - std::log(sd[i]) - 0.5 * std::log(2 * M_PI)).epsilon(1e-13));
    // Boost's gamma_p_derivative(a, y) is the Gamma(a, 1) density at y.
    CHECK(lg[i] ==
          doctest::Approx(std::log(boost::math::gamma_p_derivative(a[i], b[i] * x[i]) * b[i]))
              .epsilon(1e-12));
    CHECK(li[i] == doctest::Approx(std::log(boost::math::gamma_p_derivative(a[i], b[i] / x[i]) *
                                            b[i] / (x[i] * x[i])))
                       .epsilon(1e-12));
  }
  // gradients w.r.t. x and every parameter, through log-parameterised positive arguments
  const auto fn = [](Tape&, const std::vector<Var>& v) {
    return ad::random_contraction(dd::normal_log_prob(v[0], v[1], ad::exp(v[2])), 11);
  };
  const auto fg = [](Tape&, const std::vector<Var>& v) {
    return ad::random_contraction(dd::gamma_log_prob(ad::exp(v[0]), ad::exp(v[1]), ad::exp(v[2])),
                                  12);
  };
  const auto fi = [](Tape&, const std::vector<Var>& v) {
    return ad::random_contraction(
        dd::inverse_gamma_log_prob(ad::exp(v[0]), ad::exp(v[1]), ad::exp(v[2])), 13);
  };
  for (const auto& [f, in] : std::vector<std::pair<ad::ScalarFunction, std::vector<arma::mat>>>{
           {fn, {x, mu, arma::log(sd)}},
           {fg, {arma::log(x), arma::log(a), arma::log(b)}},
           {fi, {arma::log(x), arma::log(a), arma::log(b)}}}) {
    const auto r = ad::check_gradient(f, in);
    INFO(r.detail);
    CHECK(r.ok);
  }
}

TEST_CASE("masked_normal_log_prob_sum equals the masked sum of normal_log_prob; gradients") {
  auto s = stream("masked-normal");
  const arma::mat x = dkp::random::normal_matrix(s, 4, 3), mu = dkp::random::normal_matrix(s, 4, 3);
  const arma::mat ls = dkp::random::uniform_matrix(s, 4, 3) - 0.5;
  const arma::mat mask = arma::conv_to<arma::mat>::from(dkp::random::uniform_matrix(s, 4, 3) > 0.4);
  Tape tape;
  const double fused = dd::masked_normal_log_prob_sum(tape.constant(x), tape.constant(mu),
                                                      tape.constant(arma::exp(ls)), mask)
                           .scalar();
  const double plain = arma::accu(
      mask %
      dd::normal_log_prob(tape.constant(x), tape.constant(mu), tape.constant(arma::exp(ls))).val());
  CHECK(fused == doctest::Approx(plain).epsilon(1e-14));
  const auto r = ad::check_gradient(
      [mask](Tape&, const std::vector<Var>& v) {
        return dd::masked_normal_log_prob_sum(v[0], v[1], ad::exp(v[2]), mask);
      },
      {x, mu, ls});
  INFO(r.detail);
  CHECK(r.ok);
  // 1x1 mu and sigma broadcast
  const auto r1 = ad::check_gradient(
      [mask](Tape&, const std::vector<Var>& v) {
        return dd::masked_normal_log_prob_sum(v[0], v[1], ad::exp(v[2]), mask);
      },
      {x, sc(0.3), sc(-0.2)});
  INFO(r1.detail);
  CHECK(r1.ok);
}
