#include <cmath>

#include <doctest/doctest.h>

#include "ad_test_support.hpp"
#include "autodiff/gradcheck.hpp"
#include "likelihoods/robustmax.hpp"
#include "random/stream.hpp"
#include "util/error.hpp"

namespace ad = dkp::autodiff;
namespace lk = dkp::likelihoods;

namespace {

double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / M_SQRT2);
}

}  // namespace

TEST_CASE("gauss_hermite: the 3-point rule in closed form and exactness to degree 2K - 1") {
  const lk::GaussHermite g3 = lk::gauss_hermite(3);
  REQUIRE(g3.x.n_elem == 3);
  CHECK(g3.x[0] == doctest::Approx(-std::sqrt(1.5)).epsilon(1e-12));
  CHECK(std::abs(g3.x[1]) < 1e-12);
  CHECK(g3.x[2] == doctest::Approx(std::sqrt(1.5)).epsilon(1e-12));
  CHECK(g3.w[1] == doctest::Approx(2.0 * std::sqrt(M_PI) / 3.0).epsilon(1e-12));
  CHECK(g3.w[0] == doctest::Approx(std::sqrt(M_PI) / 6.0).epsilon(1e-12));
  // integral e^{-x^2} x^{2j} dx = Gamma(j + 1/2); odd moments vanish.
  const size_t K = 20;
  const lk::GaussHermite g = lk::gauss_hermite(K);
  for (int d = 0; d < int(2 * K); ++d) {
    CAPTURE(d);
    const double q = arma::accu(g.w % arma::pow(g.x, double(d)));
    // Odd moments cancel between terms up to w |x|^d: compare on that scale.
    const double scale = arma::accu(g.w % arma::pow(arma::abs(g.x), double(d)));
    const double exact = d % 2 == 1 ? 0.0 : std::tgamma(0.5 * d + 0.5);
    CHECK(std::abs(q - exact) <= 1e-9 * scale);
  }
  CHECK_THROWS_AS(lk::gauss_hermite(0), dkp::ConfigError);
}

TEST_CASE("prob_largest: two classes in closed form, a Phi + b with GPflow's squeeze") {
  // P(f_0 > f_1) = Phi((m_0 - m_1) / sqrt(v_0 + v_1)); each factor is squeezed to a Phi + b, so
  // the quadrature gives a Phi(d) + b.
  const arma::mat m = {{0.3, -0.2}, {1.5, 2.0}, {-3.0, 1.0}};
  const arma::mat v = {{0.5, 1.2}, {0.05, 0.3}, {2.0, 0.7}};
  const arma::uvec y = {0, 1, 0};
  const arma::vec P = lk::prob_largest(m, v, y, lk::gauss_hermite(120));
  for (arma::uword n = 0; n < m.n_rows; ++n) {
    const arma::uword o = 1 - y[n];
    const double d = (m(n, y[n]) - m(n, o)) / std::sqrt(v(n, 0) + v(n, 1));
    CAPTURE(n);
    CHECK(P[n] == doctest::Approx((1.0 - 2e-4) * normal_cdf(d) + 1e-4).epsilon(1e-9));
  }
}

TEST_CASE("prob_largest: four classes against Monte Carlo (4 standard errors plus the squeeze)") {
  const arma::mat m = {{0.2, 0.5, -0.3, 0.1}, {2.0, 0.0, 0.5, 1.5}};
  const arma::mat v = {{1.0, 0.4, 2.0, 0.3}, {0.2, 1.5, 0.8, 0.5}};
  dkp::random::Stream rng(17);
  const arma::uword draws = 200000;
  for (arma::uword n = 0; n < m.n_rows; ++n) {
    const arma::mat eps = dkp::random::normal_matrix(rng, draws, 4);
    arma::uvec wins(4, arma::fill::zeros);
    for (arma::uword d = 0; d < draws; ++d) {
      arma::uword best = 0;
      double bv = -1e300;
      for (arma::uword c = 0; c < 4; ++c) {
        const double f = m(n, c) + std::sqrt(v(n, c)) * eps(d, c);
        if (f > bv) {
          bv = f;
          best = c;
        }
      }
      ++wins[best];
    }
    for (arma::uword c = 0; c < 4; ++c) {
      CAPTURE(n);
      CAPTURE(c);
      const arma::mat mr = m.row(n), vr = v.row(n);
      const double P = lk::prob_largest(mr, vr, arma::uvec{c}, lk::gauss_hermite(20))[0];
      const double p_mc = double(wins[c]) / double(draws);
      const double se = std::sqrt(p_mc * (1.0 - p_mc) / double(draws));
      // Squeezing each of the 3 factors moves the product by at most 3e-4 (|a x + b - x| <= 1e-4).
      CHECK(std::abs(P - p_mc) <= 4.0 * se + 3e-4);
    }
  }
}

TEST_CASE("robustmax_class_probs: rows are distributions, the largest mean wins") {
  const arma::mat m = {{0.2, 0.5, -0.3, 0.1, 0.0}, {3.0, 0.0, 0.5, 1.5, -1.0}};
  const arma::mat v = {{1.0, 0.4, 2.0, 0.3, 0.6}, {0.2, 1.5, 0.8, 0.5, 0.1}};
  lk::RobustMax rm;
  rm.classes = 5;
  const arma::mat p = lk::robustmax_class_probs(m, v, rm);
  for (arma::uword n = 0; n < 2; ++n) {
    CHECK(arma::accu(p.row(n)) == doctest::Approx(1.0).epsilon(2e-3));
    CHECK(p.row(n).min() >= rm.eps / 4.0);
  }
  CHECK(p.row(1).index_max() == 0);
  CHECK(p(1, 0) > 0.8);
}

namespace {

// A sum-over-points robust-max op (4 classes, eps 0.01, 12 points) at random means and variances:
// its value against `expected(m, v, y, rm)`, its gradients against finite differences, and the
// true class's mean raising it at every point (so the gradient is not trivially zero).
using ProbOp = ad::Var (*)(const ad::Var&, const ad::Var&, const arma::uvec&, const lk::RobustMax&);
template <class Expected>
void check_prob_op(ProbOp op, const arma::uvec& y, Expected expected) {
  lk::RobustMax rm;
  rm.classes = 4;
  rm.eps = 0.01;
  rm.gh_points = 12;
  const arma::mat m = dkp::test::randm(5, 4, -1.5, 1.5);
  const arma::mat v = dkp::test::randm(5, 4, 0.2, 2.0);
  const ad::ScalarFunction f = [&](ad::Tape&, const std::vector<ad::Var>& x) {
    return op(x[0], x[1], y, rm);
  };
  const auto val = ad::check_value(f, {m, v}, expected(m, v, rm));
  INFO(val.detail);
  CHECK(val.ok);
  ad::Tolerances tol;
  tol.rel = 1e-6;
  tol.abs = 1e-9;
  const auto g = ad::check_gradient(f, {m, v}, tol);
  INFO(g.detail);
  CHECK(g.ok);
  const auto grads = ad::gradients(f, {m, v});
  for (arma::uword n = 0; n < y.n_elem; ++n) CHECK(grads[0](n, y[n]) > 0.0);
}

}  // namespace

TEST_CASE("robustmax_ell_sum: value from prob_largest, gradients against finite differences") {
  const arma::uvec y = {2, 0, 3, 1, 1};
  check_prob_op(
      lk::robustmax_ell_sum, y,
      [&](const arma::mat& m, const arma::mat& v, const lk::RobustMax& rm) {
        const arma::vec P = lk::prob_largest(m, v, y, lk::gauss_hermite(rm.gh_points));
        return arma::accu(P * std::log(1.0 - rm.eps) + (1.0 - P) * std::log(rm.eps / 3.0));
      });
}

TEST_CASE(
    "robustmax_log_z_sum: log of the predictive probability, gradients against finite "
    "differences") {
  // The same numbers as the log of robustmax_class_probs at the labels.
  const arma::uvec y = {1, 3, 0, 2, 2};
  check_prob_op(lk::robustmax_log_z_sum, y,
                [&](const arma::mat& m, const arma::mat& v, const lk::RobustMax& rm) {
                  const arma::mat probs = lk::robustmax_class_probs(m, v, rm);
                  double e = 0.0;
                  for (arma::uword n = 0; n < y.n_elem; ++n) e += std::log(probs(n, y[n]));
                  return e;
                });
  ad::Tape t;
  CHECK_THROWS_AS(
      lk::robustmax_log_z_sum(t.constant(arma::mat(5, 4, arma::fill::zeros)),
                              t.constant(arma::mat(5, 4, arma::fill::ones)), y, lk::RobustMax{}),
      dkp::Error);
}

TEST_CASE("robust-max: bad labels, shapes and settings are errors") {
  CHECK(lk::class_labels(arma::vec{0, 3, 9}, 10)[2] == 9);
  CHECK_THROWS_AS(lk::class_labels(arma::vec{0, 1.5}, 10), dkp::Error);
  CHECK_THROWS_AS(lk::class_labels(arma::vec{-1}, 10), dkp::Error);
  CHECK_THROWS_AS(lk::class_labels(arma::vec{10}, 10), dkp::Error);
  lk::RobustMax rm;
  rm.classes = 3;
  const arma::mat m(2, 3, arma::fill::zeros);
  arma::mat v(2, 3, arma::fill::ones);
  CHECK_THROWS_AS(lk::robustmax_class_probs(m, arma::mat(2, 2, arma::fill::ones), rm), dkp::Error);
  v(1, 1) = 0.0;
  CHECK_THROWS_AS(lk::robustmax_class_probs(m, v, rm), dkp::Error);
  rm.eps = 1.0;
  CHECK_THROWS_AS(lk::validate(rm), dkp::ConfigError);
  rm.eps = 0.1;
  rm.classes = 1;
  CHECK_THROWS_AS(lk::validate(rm), dkp::ConfigError);
}
