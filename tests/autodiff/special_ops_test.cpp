// Gradient and value tests of the elementwise special functions and log-sum-exp
// (ops_special.hpp). Each test fails if the op's adjoint is perturbed.
#include <doctest/doctest.h>

#include <cmath>

#include "ad_test_support.hpp"
#include "autodiff/gradcheck.hpp"
#include "autodiff/ops.hpp"
#include "autodiff/ops_shape.hpp"
#include "autodiff/ops_special.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace ad = dkp::autodiff;
using ad::Tape;
using ad::Var;
using Inputs = std::vector<Var>;

using dkp::test::contract;
using dkp::test::randm;

namespace {

template <class F>
arma::mat map(arma::mat x, F f) {
  x.transform(f);
  return x;
}

void expect_op(const ad::ScalarFunction& f, const std::vector<arma::mat>& xs,
               const arma::mat& expected, ad::Tolerances tol = {}) {
  const auto g = ad::check_gradient(f, xs, tol);
  INFO(g.detail);
  CHECK(g.ok);
  const auto v = ad::check_value(f, xs, contract(expected), tol);
  INFO(v.detail);
  CHECK(v.ok);
}

}  // namespace

TEST_CASE("log1p, pow, acos, sin") {
  const arma::mat X = randm(3, 4, -0.5, 2.0), P = randm(3, 4, 0.3, 3.0), C = randm(3, 4, -0.9, 0.9);
  expect_op([](Tape&, const Inputs& v) { return contract(ad::log1p(v[0])); }, {X}, arma::log1p(X));
  for (double p : {2.5, -1.5, 0.5, 1.0}) {
    CAPTURE(p);
    expect_op([p](Tape&, const Inputs& v) { return contract(ad::pow(v[0], p)); }, {P},
              arma::pow(P, p));
  }
  const arma::mat Xs = randm(3, 4, -2.0, 2.0);  // integer powers of any sign
  expect_op([](Tape&, const Inputs& v) { return contract(ad::pow(v[0], 3.0)); }, {Xs},
            arma::pow(Xs, 3.0));
  expect_op([](Tape&, const Inputs& v) { return contract(ad::pow(v[0], 0.0)); }, {Xs},
            arma::ones(3, 4));
  expect_op([](Tape&, const Inputs& v) { return contract(ad::acos(v[0])); }, {C}, arma::acos(C));
  const arma::mat A = randm(3, 4, -7.0, 7.0);  // more than a period
  expect_op([](Tape&, const Inputs& v) { return contract(ad::sin(v[0])); }, {A}, arma::sin(A));
}

TEST_CASE("softplus and sigmoid: gradients and stability at large |x|") {
  const arma::mat X = randm(4, 5, -8.0, 8.0);
  expect_op([](Tape&, const Inputs& v) { return contract(ad::softplus(v[0])); }, {X},
            map(X, [](double x) { return std::log1p(std::exp(x)); }));
  expect_op([](Tape&, const Inputs& v) { return contract(ad::sigmoid(v[0])); }, {X},
            map(X, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }));
  CHECK(ad::softplus(1000.0) == 1000.0);
  CHECK(ad::softplus(-1000.0) == 0.0);
  CHECK(ad::softplus(-40.0) == doctest::Approx(std::exp(-40.0)).epsilon(1e-12));
  CHECK(ad::sigmoid(-1000.0) == 0.0);
  CHECK(ad::sigmoid(1000.0) == 1.0);
  CHECK(ad::sigmoid(-40.0) == doctest::Approx(std::exp(-40.0)).epsilon(1e-12));
  Tape tape;
  Var x = tape.variable(arma::mat{{-800.0, 800.0}});
  tape.backward(ad::sum(ad::softplus(x)) + ad::sum(ad::sigmoid(x)));
  CHECK(x.grad().is_finite());
  CHECK(x.grad()(0, 1) == 1.0);
}

TEST_CASE("lgamma and digamma, including negative non-integers") {
  arma::mat X = randm(3, 4, 0.05, 12.0);
  X(0, 0) = -2.5;
  X(1, 0) = -0.3;
  X(2, 0) = 150.0;
  expect_op([](Tape&, const Inputs& v) { return contract(ad::lgamma(v[0])); }, {X},
            map(X, [](double x) { return std::lgamma(x); }), {.value = 1e-13});
  // digamma: check the gradient (trigamma) and a few known values.
  expect_op([](Tape&, const Inputs& v) { return contract(ad::digamma(v[0])); }, {X},
            map(X, [](double x) { return ad::digamma(x); }));
  CHECK(ad::digamma(1.0) == doctest::Approx(-0.57721566490153286).epsilon(1e-14));
  CHECK(ad::digamma(0.5) == doctest::Approx(-1.9635100260214235).epsilon(1e-14));
  CHECK(ad::trigamma(1.0) == doctest::Approx(M_PI * M_PI / 6.0).epsilon(1e-14));
  // Poles give non-finite values, not exceptions.
  CHECK_FALSE(std::isfinite(ad::lgamma(0.0)));
  CHECK_FALSE(std::isfinite(ad::digamma(-2.0)));
}

TEST_CASE("multivariate lgamma") {
  const arma::mat X = randm(2, 3, 1.6, 9.0);
  for (int p : {1, 2, 4}) {
    CAPTURE(p);
    const arma::mat expected = map(X, [p](double x) {
      double s = 0.25 * p * (p - 1) * std::log(M_PI);
      for (int i = 0; i < p; ++i) s += std::lgamma(x - 0.5 * i);
      return s;
    });
    expect_op([p](Tape&, const Inputs& v) { return contract(ad::mvlgamma(v[0], p)); }, {X},
              expected, {.value = 1e-13});
  }
  // Gamma_2(a) = sqrt(pi) Gamma(a) Gamma(a - 1/2).
  Tape tape;
  const double a = 3.7;
  CHECK(ad::mvlgamma(tape.constant(a), 2).scalar() ==
        doctest::Approx(0.5 * std::log(M_PI) + std::lgamma(a) + std::lgamma(a - 0.5)));
  CHECK_THROWS_AS(ad::mvlgamma(tape.constant(a), 0), dkp::Error);
}

TEST_CASE("logsumexp over all elements, columns and rows; stable for large values") {
  const arma::mat X = randm(4, 3, -3.0, 3.0);
  auto lse_cols = [](const arma::mat& x) {  // reference, dim 0
    arma::mat r(1, x.n_cols);
    for (arma::uword j = 0; j < x.n_cols; ++j) r[j] = std::log(arma::accu(arma::exp(x.col(j))));
    return r;
  };
  expect_op([](Tape&, const Inputs& v) { return contract(ad::logsumexp(v[0])); }, {X},
            arma::mat(1, 1, arma::fill::value(std::log(arma::accu(arma::exp(X))))));
  expect_op([](Tape&, const Inputs& v) { return contract(ad::logsumexp(v[0], 0)); }, {X},
            lse_cols(X));
  expect_op([](Tape&, const Inputs& v) { return contract(ad::logsumexp(v[0], 1)); }, {X},
            lse_cols(X.t()).t());

  // Shifted by 1000: exp would overflow without the max trick.
  Tape tape;
  Var big = tape.variable(X + 1000.0);
  Var r = ad::logsumexp(big, 1);
  CHECK(arma::approx_equal(r.val(), lse_cols(X.t()).t() + 1000.0, "reldiff", 1e-14));
  tape.backward(ad::sum(r));
  CHECK(arma::approx_equal(arma::sum(big.grad(), 1), arma::ones(4, 1), "absdiff", 1e-12));

  // -inf entries get zero weight; an all -inf column gives -inf and zero gradient.
  arma::mat Y = X;
  Y(0, 0) = -arma::datum::inf;
  Y.col(2).fill(-arma::datum::inf);
  Tape t2;
  Var y = t2.variable(Y);
  Var c = ad::logsumexp(y, 0);
  CHECK(c.val()(0, 2) == -arma::datum::inf);
  CHECK(c.val()(0, 0) == doctest::Approx(std::log(arma::accu(arma::exp(X.col(0).tail(3))))));
  t2.backward(ad::sum(ad::cols(c, 0, 1)));
  CHECK(y.grad().is_finite());
  CHECK(y.grad()(0, 0) == 0.0);
  CHECK(arma::accu(arma::abs(y.grad().col(2))) == 0.0);

  CHECK_THROWS_AS(ad::logsumexp(tape.constant(X), 2), dkp::Error);
}
