#include <cmath>

#include <doctest/doctest.h>

#include "ad_test_support.hpp"
#include "autodiff/gradcheck.hpp"
#include "likelihoods/softmax.hpp"
#include "util/error.hpp"

namespace ad = dkp::autodiff;
namespace lk = dkp::likelihoods;

TEST_CASE("softmax_rows: distributions, invariant to a shift, stable for large logits") {
  const arma::mat F = {{1.0, 2.0, 3.0}, {1000.0, 1001.0, 999.0}, {-5.0, 0.0, 5.0}};
  const arma::mat P = lk::softmax_rows(F);
  CHECK(P.is_finite());
  CHECK(arma::approx_equal(arma::sum(P, 1), arma::ones(3), "absdiff", 1e-15));
  const double e1 = std::exp(1.0), e2 = std::exp(2.0), e3 = std::exp(3.0);
  CHECK(P(0, 2) == doctest::Approx(e3 / (e1 + e2 + e3)).epsilon(1e-14));
  // Row 1 is row 0 shifted by 998 with its columns permuted.
  CHECK(P(1, 1) == doctest::Approx(P(0, 2)).epsilon(1e-12));
  CHECK(P(1, 2) == doctest::Approx(P(0, 0)).epsilon(1e-12));
}

TEST_CASE("log_softmax_pick_sum: value in closed form and gradients against finite differences") {
  const arma::mat F = dkp::test::randm(6, 4, -3.0, 3.0);
  const arma::uvec y = {0, 3, 1, 1, 2, 3};
  double expected = 0.0;
  for (arma::uword n = 0; n < F.n_rows; ++n) {
    expected += F(n, y[n]) - std::log(arma::accu(arma::exp(F.row(n))));
  }
  const ad::ScalarFunction f = [&](ad::Tape&, const std::vector<ad::Var>& x) {
    return lk::log_softmax_pick_sum(x[0], y);
  };
  const auto v = ad::check_value(f, {F}, expected);
  INFO(v.detail);
  CHECK(v.ok);
  const auto g = ad::check_gradient(f, {F});
  INFO(g.detail);
  CHECK(g.ok);
  // Each row's gradient sums to zero (a shift of a row's logits changes nothing).
  const arma::mat grad = ad::gradients(f, {F})[0];
  CHECK(arma::abs(arma::sum(grad, 1)).max() < 1e-14);
  CHECK_THROWS_AS(lk::log_softmax_pick_sum(ad::Tape().constant(F), arma::uvec{0, 1}), dkp::Error);
  ad::Tape t;
  CHECK_THROWS_AS(lk::log_softmax_pick_sum(t.constant(F), arma::uvec{0, 1, 2, 3, 4, 0}),
                  dkp::Error);
}
