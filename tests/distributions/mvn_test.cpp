// Multivariate normal log density against a direct evaluation; matrix normal sample moments.
#include <doctest/doctest.h>

#include <cmath>

#include "dist_test_support.hpp"
#include "distributions/mvn.hpp"

namespace dd = dkp::distributions;
using namespace dkp::test::dist;

TEST_CASE(
    "mvn_log_prob equals the textbook density, column by column (shared or per-column mean)") {
  auto s = stream("mvn-value");
  const arma::uword P = 4, n = 3;
  const arma::mat L = chol_from_unconstrained(random_unconstrained(s, P)), S = L * L.t();
  const arma::mat X = dkp::random::normal_matrix(s, P, n), M = dkp::random::normal_matrix(s, P, n);
  const arma::vec m1 = dkp::random::normal_matrix(s, P, 1);
  auto ref = [&](const arma::mat& Mm) {
    double v = 0;
    for (arma::uword k = 0; k < n; ++k) {
      const arma::vec d = X.col(k) - Mm.col(Mm.n_cols == 1 ? 0 : k);
      v += -0.5 * P * std::log(2 * M_PI) - 0.5 * arma::log_det_sympd(S) -
           0.5 * arma::as_scalar(d.t() * arma::solve(S, d));
    }
    return v;
  };
  Tape tape;
  CHECK(dd::mvn_log_prob(tape.constant(X), tape.constant(M), tape.constant(L)).scalar() ==
        doctest::Approx(ref(M)).epsilon(1e-12));
  CHECK(
      dd::mvn_log_prob(tape.constant(X), tape.constant(arma::mat(m1)), tape.constant(L)).scalar() ==
      doctest::Approx(ref(m1)).epsilon(1e-12));
}

TEST_CASE("matrix normal samples: mean M and Cov(X_ij, X_kl) = U_ik V_jl within 4 SE") {
  auto s = stream("matrix-normal");
  const arma::uword n = 3, p = 2;
  const arma::mat Lu = chol_from_unconstrained(random_unconstrained(s, n));
  const arma::mat Lv = chol_from_unconstrained(random_unconstrained(s, p));
  const arma::mat U = Lu * Lu.t(), V = Lv * Lv.t(), M = dkp::random::normal_matrix(s, n, p);
  const int N = 20000;
  std::vector<arma::mat> xs;
  Tape tape;
  for (int i = 0; i < N; ++i) {
    tape.clear();
    xs.push_back(
        dd::matrix_normal_sample(tape.constant(M), tape.constant(Lu), tape.constant(Lv), s).val());
  }
  double worst = 0;
  for (arma::uword a = 0; a < n * p; ++a) {
    std::vector<double> xa;
    for (const auto& x : xs) xa.push_back(x[a]);
    const auto m = mean_se(xa);
    worst = std::max(worst, std::abs(m.mean - M[a]) / m.se);
    for (arma::uword b = a; b < n * p; ++b) {
      std::vector<double> prod;
      for (const auto& x : xs) prod.push_back((x[a] - M[a]) * (x[b] - M[b]));
      const auto c = mean_se(prod);
      const double expected = U(a % n, b % n) * V(a / n, b / n);
      worst = std::max(worst, std::abs(c.mean - expected) / c.se);
    }
  }
  MESSAGE("matrix normal 3x2, N = " << N << ": worst moment deviation " << worst << " SE");
  CHECK(worst <= 4.0);
  // the identity-column-covariance and row-scale variants
  tape.clear();
  auto s1 = stream("matrix-normal-variants"), s2 = s1, s3 = s1, s4 = s1;
  const arma::mat a = dd::matrix_normal_sample(tape.constant(M), tape.constant(Lu), s1).val();
  const arma::mat b = dd::matrix_normal_sample(tape.constant(M), tape.constant(Lu),
                                               tape.constant(arma::eye(p, p)), s2)
                          .val();
  CHECK(arma::approx_equal(a, b, "absdiff", 1e-14));
  const arma::vec sd = {0.5, 1.0, 2.0};
  const arma::mat c = dd::rowwise_normal_sample(tape.constant(M), tape.constant(sd), s3).val();
  const arma::mat d =
      dd::matrix_normal_sample(tape.constant(M), tape.constant(arma::diagmat(sd)), s4).val();
  CHECK(arma::approx_equal(c, d, "absdiff", 1e-14));
}
