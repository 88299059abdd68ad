// Statistical tests of the Gamma sampler. They use fixed seeds (not dkp::test::seed()), so they are
// deterministic; the thresholds (4 standard errors, KS at the 0.1% level) would make a correct
// sampler fail only rarely with other seeds.
#include <doctest/doctest.h>

#include <algorithm>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "random/stream.hpp"
#include "util/error.hpp"

using dkp::random::Stream;

namespace {

// Kolmogorov-Smirnov statistic sqrt(n) * D of the sample against the Gamma(shape, rate) CDF.
double ks_statistic(std::vector<double> xs, double shape, double rate) {
  std::sort(xs.begin(), xs.end());
  const double n = static_cast<double>(xs.size());
  double d = 0.0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double f = boost::math::gamma_p(shape, rate * xs[i]);
    d = std::max({d, (i + 1) / n - f, f - i / n});
  }
  return std::sqrt(n) * d;
}

}  // namespace

TEST_CASE("Gamma(shape, rate) samples have mean shape/rate and variance shape/rate^2") {
  struct Case {
    double shape, rate;
  };
  const Case cases[] = {{0.01, 1.0}, {0.1, 1.0},   {0.1, 3.0},     {1.0, 0.5},
                        {7.5, 2.0},  {0.999, 1.0}, {1000.0, 10.0}, {1e5, 1.0}};
  uint64_t seed = 1000;
  for (const auto& c : cases) {
    CAPTURE(c.shape);
    CAPTURE(c.rate);
    Stream s(seed++);
    const int n = 200000;
    double sum = 0.0, sum2 = 0.0;
    std::vector<double> xs(n);
    for (int i = 0; i < n; ++i) xs[i] = dkp::random::gamma(s, c.shape, c.rate);
    for (double x : xs) sum += x;
    const double mean = sum / n;
    for (double x : xs) sum2 += (x - mean) * (x - mean);
    const double var = sum2 / (n - 1);

    const double mu = c.shape / c.rate, sigma2 = c.shape / (c.rate * c.rate);
    // Standard errors: of the mean sqrt(sigma2 / n); of the sample variance
    // sqrt((mu4 - sigma^4) / n) with mu4 = sigma^4 (3 + 6 / shape) for the Gamma.
    const double se_mean = std::sqrt(sigma2 / n);
    const double se_var = sigma2 * std::sqrt((2.0 + 6.0 / c.shape) / n);
    CHECK(std::fabs(mean - mu) < 4.0 * se_mean);
    CHECK(std::fabs(var - sigma2) < 4.0 * se_var);
    CHECK(*std::min_element(xs.begin(), xs.end()) > 0.0);
  }
}

TEST_CASE("Gamma samples pass a Kolmogorov-Smirnov test against Boost's Gamma CDF") {
  // 1.95 is the 0.999 quantile of the Kolmogorov distribution (asymptotic sqrt(n) D).
  const double shapes[] = {0.01, 0.05, 0.1, 0.5, 0.999, 1.0, 1.5, 7.5, 30.0, 1000.0, 1e5};
  uint64_t seed = 2000;
  for (double shape : shapes) {
    CAPTURE(shape);
    for (double rate : {1.0, 0.25}) {
      CAPTURE(rate);
      Stream s(seed++);
      std::vector<double> xs(20000);
      for (double& x : xs) x = dkp::random::gamma(s, shape, rate);
      CHECK(ks_statistic(xs, shape, rate) < 1.95);
    }
  }
}

TEST_CASE("the KS test detects a wrong sampler (the test can fail)") {
  Stream s(3000);
  std::vector<double> xs(20000);
  // Gamma(1.05) samples tested against Gamma(1): a 5% error in the shape is detected.
  for (double& x : xs) x = dkp::random::standard_gamma(s, 1.05);
  CHECK(ks_statistic(xs, 1.0, 1.0) > 1.95);
  // Omitting the U^(1/shape) boost for shape < 1 (i.e. using Gamma(shape + 1)) is detected.
  for (double& x : xs) x = dkp::random::standard_gamma(s, 1.3);
  CHECK(ks_statistic(xs, 0.3, 1.0) > 1.95);
}

TEST_CASE("standard_gamma_log agrees with standard_gamma and does not underflow") {
  for (double shape : {0.01, 0.3, 1.0, 4.0, 1e4}) {
    CAPTURE(shape);
    Stream a(77), b(77);
    for (int i = 0; i < 2000; ++i) {
      const double x = dkp::random::standard_gamma(a, shape);
      const double lx = dkp::random::standard_gamma_log(b, shape);
      REQUIRE(std::isfinite(lx));
      const double log_min = std::log(std::numeric_limits<double>::min());  // about -708.4
      if (lx > log_min + 1.0) {
        REQUIRE(std::fabs(std::log(x) - lx) <= 1e-12 * std::max(1.0, std::fabs(lx)));
      } else if (lx < log_min) {
        REQUIRE(x == std::numeric_limits<double>::min());  // the documented clamp
      }
    }
  }
  // Shape 0.01: log samples follow the Gamma law even where exp() underflows; the CDF of log x is
  // P(a, e^l), and P(a, x) ~ x^a / Gamma(a + 1) for tiny x, computed in log space here.
  Stream s(4000);
  std::vector<double> ls(20000);
  for (double& l : ls) l = dkp::random::standard_gamma_log(s, 0.01);
  std::sort(ls.begin(), ls.end());
  const double n = static_cast<double>(ls.size());
  double d = 0.0;
  for (size_t i = 0; i < ls.size(); ++i) {
    const double f = ls[i] > -700.0 ? boost::math::gamma_p(0.01, std::exp(ls[i]))
                                    : std::exp(0.01 * ls[i] - std::lgamma(1.01));
    d = std::max({d, (i + 1) / n - f, f - i / n});
  }
  CHECK(std::sqrt(n) * d < 1.95);
}

TEST_CASE("Gamma sampler argument checks") {
  Stream s(1);
  CHECK_THROWS_AS(dkp::random::standard_gamma(s, 0.0), dkp::Error);
  CHECK_THROWS_AS(dkp::random::standard_gamma(s, -1.0), dkp::Error);
  CHECK_THROWS_AS(dkp::random::standard_gamma(s, std::nan("")), dkp::Error);
  CHECK_THROWS_AS(dkp::random::gamma(s, 1.0, 0.0), dkp::Error);
  CHECK_THROWS_AS(dkp::random::gamma_matrix(s, arma::mat(2, 2, arma::fill::ones),
                                            arma::mat(2, 3, arma::fill::ones)),
                  dkp::Error);
  const arma::mat shape = {{0.5, 2.0}, {10.0, 100.0}};
  const arma::mat rate = {{1.0, 2.0}, {3.0, 4.0}};
  Stream a(5), b(5);
  const arma::mat g = dkp::random::gamma_matrix(a, shape, rate);
  // Column-major order of draws.
  CHECK(g(0, 0) == dkp::random::gamma(b, 0.5, 1.0));
  CHECK(g(1, 0) == dkp::random::gamma(b, 10.0, 3.0));
  CHECK(g(0, 1) == dkp::random::gamma(b, 2.0, 2.0));
  CHECK(g(1, 1) == dkp::random::gamma(b, 100.0, 4.0));
}
