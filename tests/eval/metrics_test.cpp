#include <doctest/doctest.h>

#include <cmath>

#include "eval/metrics.hpp"
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
