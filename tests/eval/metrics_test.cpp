#include <doctest/doctest.h>

#include <cmath>

#include "eval/metrics.hpp"
#include "random/stream.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

TEST_CASE("test log-likelihood is the log-mean-exp mixture density in original units") {
  // Two points, two samples; hand-computed mixture densities.
  const arma::mat mean = {{0.0, 1.0}, {2.0, 2.0}};
  const arma::mat var = {{1.0, 4.0}, {0.5, 0.5}};
  const arma::vec y = {0.5, 1.0};
  const double y_std = 3.0;
  auto npdf = [](double x, double m, double v) {
    return std::exp(-0.5 * (x - m) * (x - m) / v) / std::sqrt(2 * M_PI * v);
  };
  const double ll0 = std::log(0.5 * (npdf(0.5, 0.0, 1.0) + npdf(0.5, 1.0, 4.0))) - std::log(3.0);
  const double ll1 = std::log(npdf(1.0, 2.0, 0.5)) - std::log(3.0);
  const auto m = dkp::eval::regression_metrics(mean, var, y, y_std);
  CHECK(m.point_ll[0] == doctest::Approx(ll0).epsilon(1e-12));
  CHECK(m.point_ll[1] == doctest::Approx(ll1).epsilon(1e-12));
  CHECK(m.test_ll == doctest::Approx(0.5 * (ll0 + ll1)).epsilon(1e-12));
  // RMSE of the sample-averaged mean, times y_std: errors 0.5-0.5=0 and 1-2=-1.
  CHECK(m.test_rmse == doctest::Approx(std::sqrt(0.5) * 3.0).epsilon(1e-12));
  // Mixture variance of point 0: mean(v + m^2) - mean(m)^2 = (1 + 0 + 4 + 1)/2 - 0.25.
  CHECK(m.pred_var[0] == doctest::Approx(2.75));
}

TEST_CASE("log-mean-exp is stable for very negative log densities") {
  const arma::mat a = {{-1000.0, -1000.0}, {-2000.0, -2000.0 + std::log(3.0)}};
  const arma::vec r = dkp::eval::log_mean_exp_rows(a);
  CHECK(r[0] == doctest::Approx(-1000.0));
  CHECK(r[1] == doctest::Approx(-2000.0 + std::log(2.0)));
}

TEST_CASE("bad predictions are rejected") {
  const arma::vec y = {0.0};
  CHECK_THROWS_AS(dkp::eval::regression_metrics(arma::zeros(1, 1), arma::zeros(1, 1), y, 1.0),
                  dkp::Error);
  CHECK_THROWS_AS(dkp::eval::regression_metrics(arma::mat(2, 1), arma::mat(2, 1), y, 1.0),
                  dkp::Error);
}

TEST_CASE("mixture moments without targets agree with the metrics' and with Monte Carlo") {
  const arma::mat mean = {{0.0, 1.0, -2.0}, {2.0, 2.0, 2.0}};
  const arma::mat var = {{1.0, 4.0, 0.25}, {0.5, 0.5, 0.5}};
  const auto mm = dkp::eval::mixture_moments(mean, var);
  const auto m = dkp::eval::regression_metrics(mean, var, arma::vec{0.0, 0.0}, 1.0);
  CHECK(arma::approx_equal(mm.mean, m.pred_mean, "absdiff", 0.0));
  CHECK(arma::approx_equal(mm.var, m.pred_var, "absdiff", 0.0));
  // Point 0: mean -1/3; second moment (1 + 0 + 4 + 1 + 0.25 + 4) / 3 = 10.25 / 3.
  CHECK(mm.mean[0] == doctest::Approx(-1.0 / 3.0).epsilon(1e-14));
  CHECK(mm.var[0] == doctest::Approx(10.25 / 3.0 - 1.0 / 9.0).epsilon(1e-14));
  CHECK(mm.var[1] == doctest::Approx(0.5).epsilon(1e-14));
  // Monte Carlo from the mixture (the test seed): sample moments within 5 standard errors.
  dkp::random::Stream rng = dkp::random::Stream(dkp::test::seed()).child("mixture-moments", 0);
  const arma::uword n = 300000;
  const arma::mat z = dkp::random::normal_matrix(rng, n, 1);
  arma::vec draws(n);
  for (arma::uword i = 0; i < n; ++i) {
    const arma::uword s = i % 3;  // equal weights
    draws[i] = mean(0, s) + std::sqrt(var(0, s)) * z(i, 0);
  }
  const double sd = std::sqrt(mm.var[0]);
  CHECK(std::abs(arma::mean(draws) - mm.mean[0]) < 5.0 * sd / std::sqrt(double(n)));
  // The sample variance's standard error is sqrt((mu4 - sigma^4) / n), mu4 the fourth central
  // moment (estimated from the draws).
  const arma::vec c = draws - arma::mean(draws);
  const double mu4 = arma::mean(arma::vec(arma::pow(c, 4)));
  CHECK(std::abs(arma::var(draws) - mm.var[0]) <
        5.0 * std::sqrt((mu4 - mm.var[0] * mm.var[0]) / double(n)));
  CHECK_THROWS_AS(dkp::eval::mixture_moments(arma::zeros(2, 2), arma::ones(2, 3)), dkp::Error);
  CHECK_THROWS_AS(dkp::eval::mixture_moments(arma::zeros(1, 1), arma::zeros(1, 1)), dkp::Error);
}
