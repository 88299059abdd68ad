#include <doctest/doctest.h>

#include <cmath>

#include "eval/metrics.hpp"
#include "likelihoods/softmax.hpp"
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

TEST_CASE("the PIT is the mixture's CDF at the target") {
  // Point 0: components centred at y (Phi = 1/2) and 1.96 sd below it (Phi(1.96) = 0.975).
  // Point 1: one component, y one sd above (Phi(1) = 0.841344746068543).
  const double z975 = 1.959963984540054, sd2 = 1.5;
  const arma::mat mean = {{0.3, 0.3 - z975 * sd2}, {-1.0, -1.0}};
  const arma::mat var = {{0.7, sd2 * sd2}, {4.0, 4.0}};
  const arma::vec y = {0.3, 1.0};
  const arma::vec u = dkp::eval::mixture_cdf(mean, var, y);
  CHECK(u[0] == doctest::Approx(0.5 * (0.5 + 0.975)).epsilon(1e-12));
  CHECK(u[1] == doctest::Approx(0.841344746068543).epsilon(1e-12));
  // Far in the lower tail the CDF keeps its relative accuracy: Phi(-30) = 4.906713927148187e-198.
  const arma::vec tail = dkp::eval::mixture_cdf(arma::mat(1, 1, arma::fill::value(30.0)),
                                                arma::mat(1, 1, arma::fill::ones), arma::vec{0.0});
  CHECK(tail[0] == doctest::Approx(4.906713927148187e-198).epsilon(1e-10));
  // Invariant to the units: the same affine map of y, the means and the sds.
  const arma::vec u2 = dkp::eval::mixture_cdf(3.0 * mean + 2.0, 9.0 * var, 3.0 * y + 2.0);
  CHECK(arma::approx_equal(u, u2, "absdiff", 1e-14));
  const auto m = dkp::eval::regression_metrics(mean, var, y, 2.0);
  CHECK(arma::approx_equal(m.point_pit, u, "absdiff", 0.0));
  CHECK_THROWS_AS(dkp::eval::mixture_cdf(mean, var, arma::vec{0.0}), dkp::Error);
  CHECK_THROWS_AS(dkp::eval::mixture_cdf(mean, arma::zeros(2, 2), y), dkp::Error);
  CHECK_THROWS_AS(dkp::eval::mixture_cdf(mean, var, arma::vec{0.3, arma::datum::nan}), dkp::Error);
}

TEST_CASE("coverage and calibration error of given PIT values") {
  // PIT values 0.005, 0.015, ..., 0.995 (100 points, uniform, none on a boundary): the central
  // 50% interval [0.25, 0.75] holds 50 of them, and each p = 0.05 k has exactly 100 p at or below.
  const arma::vec even = arma::regspace(0.005, 0.01, 0.995);
  REQUIRE(even.n_elem == 100);
  CHECK(dkp::eval::central_coverage(even, 0.5) == doctest::Approx(0.5));
  CHECK(dkp::eval::central_coverage(even, 0.9) == doctest::Approx(0.9));
  CHECK(dkp::eval::calibration_error(even) == doctest::Approx(0.0).epsilon(1e-12));
  // All PIT values 1/2 (every interval covers them, yet the predictive is far too wide):
  // |F(p) - p| is p below 1/2 and 1 - p from 1/2, summing to 0.05 (45 + 55) = 5 over 19 levels.
  const arma::vec half(10, arma::fill::value(0.5));
  CHECK(dkp::eval::central_coverage(half, 0.5) == 1.0);
  CHECK(dkp::eval::calibration_error(half) == doctest::Approx(5.0 / 19.0).epsilon(1e-12));
  // All at 0.99: outside every central interval up to 98%.
  const arma::vec high(4, arma::fill::value(0.99));
  CHECK(dkp::eval::central_coverage(high, 0.95) == 0.0);
  CHECK_THROWS_AS(dkp::eval::central_coverage(even, 1.0), dkp::Error);
  CHECK_THROWS_AS(dkp::eval::central_coverage(even, 0.0), dkp::Error);
  CHECK_THROWS_AS(dkp::eval::calibration_error(arma::vec()), dkp::Error);
}

TEST_CASE("coverage by Monte Carlo: targets drawn from the predictive, and from a wider one") {
  // n points, each with its own 3-component mixture; y_n drawn from it (calibrated) and from the
  // components widened 2x in sd (the predictive too narrow).
  dkp::random::Stream rng = dkp::random::Stream(dkp::test::seed()).child("coverage", 0);
  const arma::uword n = 20000, S = 3;
  const arma::mat mean = 2.0 * dkp::random::normal_matrix(rng, n, S);
  const arma::mat var = arma::exp(dkp::random::normal_matrix(rng, n, S));
  const arma::mat z = dkp::random::normal_matrix(rng, n, 1);
  arma::vec y(n), y_wide(n);
  for (arma::uword i = 0; i < n; ++i) {
    const arma::uword s = i % S;  // the component drawn: independent of the mixture's values
    y[i] = mean(i, s) + std::sqrt(var(i, s)) * z(i, 0);
    y_wide[i] = mean(i, s) + 2.0 * std::sqrt(var(i, s)) * z(i, 0);
  }
  const auto m = dkp::eval::regression_metrics(mean, var, y, 1.0);
  for (size_t k = 0; k < dkp::eval::kCoverageLevels.size(); ++k) {
    const double c = dkp::eval::kCoverageLevels[k];
    CHECK(std::abs(m.coverage[k] - c) < 4.0 * std::sqrt(c * (1.0 - c) / double(n)));
  }
  // Each |F(p) - p| has standard error at most 1/(2 sqrt n); their mean is below 4 of those.
  CHECK(m.calibration_error < 4.0 * 0.5 / std::sqrt(double(n)));
  // Too narrow: for a single Gaussian the central c-interval m +- z_c sd covers y ~ N(m, 4 sd^2)
  // with probability 2 Phi(z_c / 2) - 1; checked with S = 1 (the first component).
  const arma::mat m1 = mean.col(0), v1 = var.col(0);
  arma::vec y1(n);
  for (arma::uword i = 0; i < n; ++i) y1[i] = m1(i, 0) + 2.0 * std::sqrt(v1(i, 0)) * z(i, 0);
  const auto narrow = dkp::eval::regression_metrics(m1, v1, y1, 1.0);
  const double z95 = 1.959963984540054;
  const double want = std::erf(z95 / 2.0 / std::sqrt(2.0));  // 2 Phi(z/2) - 1
  CHECK(std::abs(narrow.coverage[2] - want) < 4.0 * std::sqrt(want * (1.0 - want) / double(n)));
  CHECK(narrow.calibration_error > 0.05);
  // The mixture too narrow as well: coverage well below nominal.
  const auto wide = dkp::eval::regression_metrics(mean, var, y_wide, 1.0);
  CHECK(wide.coverage[2] < 0.9);
}

TEST_CASE("classification_metrics: two classes in closed form, mixed over samples") {
  // For two classes P(f_0 > f_1) = Phi((m_0 - m_1) / sqrt(v_0 + v_1)), squeezed to a Phi + b
  // (likelihoods/robustmax.hpp); p(y = 0) = P (1 - eps) + (1 - P) eps with eps = 1e-3.
  const arma::mat mean = {{1.0, 0.0, 0.5, 0.2}, {-0.5, 0.5, 0.0, 2.0}, {0.3, 0.1, 0.1, 0.4}};
  const arma::mat var = {{0.5, 1.0, 0.4, 0.4}, {0.2, 0.3, 1.0, 2.0}, {1.0, 1.0, 0.5, 0.5}};
  const arma::uvec labels = {0, 1, 0};
  const auto m = dkp::eval::classification_metrics(mean, var, 2, labels);
  const double eps = 1e-3;
  double ll = 0.0;
  arma::uword correct = 0;
  for (arma::uword n = 0; n < 3; ++n) {
    double p0 = 0.0;
    for (arma::uword s = 0; s < 2; ++s) {
      const double d =
          (mean(n, 2 * s) - mean(n, 2 * s + 1)) / std::sqrt(var(n, 2 * s) + var(n, 2 * s + 1));
      const double P = (1.0 - 2e-4) * 0.5 * std::erfc(-d / std::sqrt(2.0)) + 1e-4;
      p0 += 0.5 * (P * (1.0 - eps) + (1.0 - P) * eps);
    }
    CAPTURE(n);
    CHECK(m.class_prob(n, 0) == doctest::Approx(p0).epsilon(1e-7));
    CHECK(m.class_prob(n, 1) == doctest::Approx(1.0 - p0).epsilon(1e-7));
    const double py = labels[n] == 0 ? p0 : 1.0 - p0;
    CHECK(m.point_ll[n] == doctest::Approx(std::log(py)).epsilon(1e-7));
    ll += std::log(py) / 3.0;
    correct += (p0 > 0.5 ? 0u : 1u) == labels[n] ? 1 : 0;
  }
  CHECK(m.test_ll == doctest::Approx(ll).epsilon(1e-7));
  CHECK(m.test_acc == doctest::Approx(double(correct) / 3.0));
  // Point 2 (label 0): sample 0 leans to class 0 (Phi(0.14)), sample 1 further to class 1
  // (Phi(-0.3)), so the mixture predicts class 1: two of three right.
  CHECK(correct == 2);
}

TEST_CASE("classification_metrics: shapes and labels are checked") {
  const arma::mat mean(4, 6, arma::fill::zeros), var(4, 6, arma::fill::ones);
  CHECK_THROWS_AS(dkp::eval::classification_metrics(mean, var, 4, arma::uvec{0, 1, 2, 3}),
                  dkp::Error);  // 6 columns are not whole samples of 4 classes
  CHECK_THROWS_AS(dkp::eval::classification_metrics(mean, var, 3, arma::uvec{0, 1, 3, 0}),
                  dkp::Error);  // label 3 of 3 classes
  CHECK_THROWS_AS(dkp::eval::classification_metrics(mean, var, 3, arma::uvec{0, 1}), dkp::Error);
  CHECK(dkp::eval::classification_metrics(mean, var, 3, arma::uvec{0, 1, 2, 0}).test_acc >= 0.0);
}

TEST_CASE("class_probabilities: the same numbers for any thread count") {
  dkp::random::Stream s(dkp::test::seed() + 5);
  const arma::mat mean = dkp::random::normal_matrix(s, 7, 12);  // 3 samples of 4 classes
  const arma::mat var = arma::exp(dkp::random::normal_matrix(s, 7, 12));
  const arma::mat one = dkp::eval::class_probabilities(mean, var, 4, 1);
  for (size_t t : {2, 3, 7, 20}) {
    CAPTURE(t);
    CHECK(arma::approx_equal(dkp::eval::class_probabilities(mean, var, 4, t), one, "absdiff", 0.0));
  }
  // Repeated samples (an SGP's) reuse the previous sample's probabilities: the same numbers.
  const arma::mat m3 = arma::repmat(mean.cols(0, 3), 1, 3), v3 = arma::repmat(var.cols(0, 3), 1, 3);
  CHECK(arma::approx_equal(dkp::eval::class_probabilities(m3, v3, 4, 2),
                           dkp::eval::class_probabilities(mean.cols(0, 3), var.cols(0, 3), 4, 1),
                           "absdiff", 1e-15));
  // Rows sum to 1 up to the squeeze (each of the C P_c moves by at most (C - 1) 1e-4) and the
  // quadrature error, small for variances within a factor 4 of each other.
  const arma::mat even = 0.5 + 1.5 * arma::mat(arma::randu(7, 12));
  const arma::mat p = dkp::eval::class_probabilities(mean, even, 4, 2);
  CHECK(arma::approx_equal(arma::sum(p, 1), arma::ones(7), "absdiff", 4 * 3 * 1e-4 + 1e-4));
}

TEST_CASE("reliability: bins, per-bin confidence and accuracy, and the ECE by hand") {
  // Confidences 0.95, 0.9 (bin 9), 0.65, 0.62 (bin 6), 0.55 (bin 5) and a tie at 0.5 (bin 5,
  // class 0 by index_max); right: 0.95, 0.65, 0.55.
  const arma::mat p = {{0.05, 0.95}, {0.9, 0.1},   {0.65, 0.35},
                       {0.38, 0.62}, {0.55, 0.45}, {0.5, 0.5}};
  const arma::uvec y = {1, 1, 0, 0, 0, 1};
  const dkp::eval::Reliability r = dkp::eval::reliability(p, y);
  REQUIRE(r.count.n_elem == 10);
  CHECK(r.count[9] == 2);
  CHECK(r.count[6] == 2);
  CHECK(r.count[5] == 2);
  CHECK(arma::accu(r.count) == 6);
  CHECK(r.confidence[9] == doctest::Approx(0.925));
  CHECK(r.accuracy[9] == doctest::Approx(0.5));
  CHECK(r.confidence[6] == doctest::Approx(0.635));
  CHECK(r.accuracy[6] == doctest::Approx(0.5));
  CHECK(r.confidence[5] == doctest::Approx(0.525));
  CHECK(r.accuracy[5] == doctest::Approx(0.5));
  CHECK(r.count[0] == 0);
  CHECK(r.accuracy[0] == 0.0);
  const double ece = (2.0 * 0.425 + 2.0 * 0.135 + 2.0 * 0.025) / 6.0;
  CHECK(r.ece == doctest::Approx(ece).epsilon(1e-14));
  // A confidence of 1 falls in the last bin; perfectly calibrated bins give ECE 0.
  const arma::mat q = {{1.0, 0.0}, {0.0, 1.0}};
  const auto rq = dkp::eval::reliability(q, arma::uvec{0, 1}, 4);
  CHECK(rq.count[3] == 2);
  CHECK(rq.ece == 0.0);
  // classification_metrics carries it.
  const arma::mat mean = arma::mat(arma::vec{3.0, -3.0}), var(2, 1, arma::fill::value(0.1));
  const auto m = dkp::eval::classification_metrics(mean, var, 2, arma::uvec{1, 0}, 1,
                                                   dkp::likelihoods::ClassLikelihood::Probit);
  CHECK(arma::accu(m.reliability.count) == 2);
  CHECK(m.reliability.ece > 0.0);  // confidence just below 1 - 1e-3, accuracy 1
  CHECK(m.reliability.ece < 0.01);
  CHECK_THROWS_AS(dkp::eval::reliability(p, arma::uvec{1, 1}), dkp::Error);
  CHECK_THROWS_AS(dkp::eval::reliability(p, arma::uvec{1, 1, 0, 0, 0, 2}), dkp::Error);
  CHECK_THROWS_AS(dkp::eval::reliability(p, y, 0), dkp::Error);
}
