#include <cmath>

#include <doctest/doctest.h>

#include "ad_test_support.hpp"
#include "autodiff/gradcheck.hpp"
#include "likelihoods/probit.hpp"
#include "util/error.hpp"

namespace ad = dkp::autodiff;
namespace lk = dkp::likelihoods;

namespace {

double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / M_SQRT2);
}

// The trapezoid reference with 200000 intervals (accurate to about 1e-10 here).
template <class G>
double expect_normal(double m, double v, G g) {
  return dkp::test::gauss_expect(m, v, g, 200000);
}

const arma::mat kM = arma::mat(arma::vec{0.3, -1.2, 2.5, -0.4, 0.0, -4.0});
const arma::mat kV = arma::mat(arma::vec{0.5, 1.5, 0.2, 3.0, 0.8, 0.1});
const arma::uvec kY = {1, 0, 1, 1, 0, 1};

}  // namespace

TEST_CASE("probit_ell_sum: the expected log-likelihood against a trapezoid rule") {
  // Without the jitter log Phi is smooth and 60 Gauss-Hermite nodes match the reference (accurate
  // to about 1e-10) to 1e-8. GPflow's jitter puts a bend in log(a Phi + j) where a Phi meets j
  // (z near -3), which the rule resolves slowly: the measured errors on these six points are
  // 9.2e-4 (the report's 20 nodes) and 1.8e-5 (60), so the checks there are 2e-3 and 4e-5.
  for (const double jitter : {0.0, 1e-3}) {
    const double a = 1.0 - 2.0 * jitter;
    double expected = 0.0;
    for (arma::uword n = 0; n < kY.n_elem; ++n) {
      const double s = kY[n] == 1 ? 1.0 : -1.0;
      expected += expect_normal(kM[n], kV[n],
                                [&](double f) { return std::log(a * normal_cdf(s * f) + jitter); });
    }
    for (const size_t K : {size_t(20), size_t(60)}) {
      lk::Probit pr;
      pr.jitter = jitter;
      pr.gh_points = K;
      ad::Tape t;
      const double got = lk::probit_ell_sum(t.constant(kM), t.constant(kV), kY, pr).scalar();
      CAPTURE(jitter);
      CAPTURE(K);
      CAPTURE(got - expected);
      const double tol =
          jitter == 0.0 ? (K == 60 ? 1e-8 * std::abs(expected) : 1e-4) : (K == 60 ? 4e-5 : 2e-3);
      CHECK(std::abs(got - expected) <= tol);
    }
  }
}

TEST_CASE("probit_ell_sum: a vanishing variance gives log p(y | m)") {
  lk::Probit pr;
  ad::Tape t;
  const arma::mat v(kM.n_rows, 1, arma::fill::value(1e-14));
  double expected = 0.0;
  for (arma::uword n = 0; n < kY.n_elem; ++n) {
    const double s = kY[n] == 1 ? 1.0 : -1.0;
    expected += std::log((1.0 - 2e-3) * normal_cdf(s * kM[n]) + 1e-3);
  }
  CHECK(lk::probit_ell_sum(t.constant(kM), t.constant(v), kY, pr).scalar() ==
        doctest::Approx(expected).epsilon(1e-9));
}

TEST_CASE("probit_log_z_sum and probit_prob_one: the closed form against a trapezoid rule") {
  lk::Probit pr;
  const double a = 1.0 - 2.0 * pr.jitter;
  ad::Tape t;
  const double got = lk::probit_log_z_sum(t.constant(kM), t.constant(kV), kY, pr).scalar();
  double expected = 0.0;
  for (arma::uword n = 0; n < kY.n_elem; ++n) {
    const double s = kY[n] == 1 ? 1.0 : -1.0;
    expected += std::log(
        expect_normal(kM[n], kV[n], [&](double f) { return a * normal_cdf(s * f) + pr.jitter; }));
  }
  CHECK(got == doctest::Approx(expected).epsilon(1e-9));
  // p(1 | q) is exp(log Z) at y = 1, and p(0 | q) = 1 - p(1 | q).
  const arma::mat p1 = lk::probit_prob_one(kM, kV, pr);
  for (arma::uword n = 0; n < kY.n_elem; ++n) {
    ad::Tape tn;
    const arma::uvec one = {1}, zero = {0};
    const arma::mat mn(1, 1, arma::fill::value(kM[n])), vn(1, 1, arma::fill::value(kV[n]));
    const double lz1 = lk::probit_log_z_sum(tn.constant(mn), tn.constant(vn), one, pr).scalar();
    const double lz0 = lk::probit_log_z_sum(tn.constant(mn), tn.constant(vn), zero, pr).scalar();
    CAPTURE(n);
    CHECK(std::exp(lz1) == doctest::Approx(p1[n]).epsilon(1e-12));
    CHECK(std::exp(lz0) + std::exp(lz1) == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(p1[n] >= pr.jitter);
    CHECK(p1[n] <= 1.0 - pr.jitter);
  }
  // The label's side wins: a large positive mean makes y = 1 likely.
  CHECK(p1[2] > 0.95);
  CHECK(p1[5] < 0.01);
}

TEST_CASE("probit ops: gradients against finite differences") {
  lk::Probit pr;
  pr.gh_points = 12;
  const arma::mat m = dkp::test::randm(7, 1, -2.0, 2.0);
  const arma::mat v = dkp::test::randm(7, 1, 0.1, 2.5);
  const arma::uvec y = {1, 0, 0, 1, 1, 0, 1};
  ad::Tolerances tol;
  tol.rel = 1e-6;
  tol.abs = 1e-9;
  for (int which = 0; which < 2; ++which) {
    const ad::ScalarFunction f = [&](ad::Tape&, const std::vector<ad::Var>& x) {
      return which == 0 ? lk::probit_ell_sum(x[0], x[1], y, pr)
                        : lk::probit_log_z_sum(x[0], x[1], y, pr);
    };
    const auto g = ad::check_gradient(f, {m, v}, tol);
    CAPTURE(which);
    INFO(g.detail);
    CHECK(g.ok);
    // Raising the mean raises the likelihood of y = 1 and lowers that of y = 0; more variance
    // lowers it for a point on the right side of 0.
    const auto grads = ad::gradients(f, {m, v});
    for (arma::uword n = 0; n < y.n_elem; ++n) {
      CAPTURE(n);
      CHECK((y[n] == 1 ? grads[0][n] > 0.0 : grads[0][n] < 0.0));
      if ((y[n] == 1) == (m[n] > 0.0)) CHECK(grads[1][n] < 0.0);
    }
  }
}

TEST_CASE("probit: bad labels, shapes, variances and settings are errors") {
  ad::Tape t;
  const lk::Probit pr;
  const ad::Var m = t.constant(kM), v = t.constant(kV);
  CHECK_THROWS_AS(lk::probit_ell_sum(m, v, arma::uvec{1, 0, 2, 1, 0, 1}, pr), dkp::Error);
  CHECK_THROWS_AS(lk::probit_ell_sum(m, v, arma::uvec{1, 0}, pr), dkp::Error);
  CHECK_THROWS_AS(lk::probit_ell_sum(t.constant(arma::mat(6, 2, arma::fill::zeros)),
                                     t.constant(arma::mat(6, 2, arma::fill::ones)), kY, pr),
                  dkp::Error);
  arma::mat v0 = kV;
  v0[3] = 0.0;
  CHECK_THROWS_AS(lk::probit_ell_sum(m, t.constant(v0), kY, pr), dkp::Error);
  CHECK_NOTHROW(lk::probit_log_z_sum(m, t.constant(v0), kY, pr));  // v = 0 is a point mass
  v0[3] = -0.1;
  CHECK_THROWS_AS(lk::probit_log_z_sum(m, t.constant(v0), kY, pr), dkp::Error);
  CHECK_THROWS_AS(lk::probit_prob_one(kM, v0, pr), dkp::Error);
  lk::Probit bad;
  bad.jitter = 0.5;
  CHECK_THROWS_AS(lk::validate(bad), dkp::ConfigError);
  bad.jitter = 1e-3;
  bad.gh_points = 0;
  CHECK_THROWS_AS(lk::validate(bad), dkp::ConfigError);
}
