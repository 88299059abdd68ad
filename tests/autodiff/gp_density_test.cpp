// Composite test (issue 3 acceptance): the log density of y ~ N(0, K(theta) + s I) with an ARD
// squared-exponential kernel built from elementary ops,
//   K_ij = h exp(-1/2 sum_d (x_id - x_jd)^2 / l_d^2),   h = exp(log_h),  l = exp(log_l),
//   log p(y) = -1/2 y^T C^{-1} y - 1/2 log det C - n/2 log(2 pi),   C = K + s I,
// differentiated w.r.t. log_l (1 x d), log_h, s and the inputs X, against finite differences at
// 1e-6 relative; the value against a plain Armadillo computation.
#include <doctest/doctest.h>

#include <cmath>

#include "autodiff/gradcheck.hpp"
#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"
#include "autodiff/ops_shape.hpp"
#include "test_support.hpp"

namespace ad = dkp::autodiff;
using ad::Tape;
using ad::Var;

namespace {

// Squared distances ||x_i/l - x_j/l||^2 = r_i + r_j - 2 <x_i/l, x_j/l>, built from ops.
Var se_ard_kernel(const Var& X, const Var& log_l, const Var& log_h) {
  const Var Xs = ad::div_each_row(X, ad::exp(log_l));
  const Var r = ad::row_sums(ad::square(Xs));
  const Var D = ad::add_each_col(
      ad::add_each_row(ad::scale(ad::matmul(Xs, Xs, false, true), -2.0), ad::transpose(r)), r);
  return ad::mul(ad::exp(log_h), ad::exp(ad::scale(D, -0.5)));
}

// Inputs: X (n x d), log_l (1 x d), log_h (1 x 1), s (1 x 1), y (n x 1).
Var gp_log_density(Tape& tape, const std::vector<Var>& v) {
  const Var& X = v[0];
  const Var& y = v[4];
  const arma::uword n = X.n_rows();
  const Var C =
      ad::add(se_ard_kernel(X, v[1], v[2]), ad::mul(v[3], tape.constant(arma::eye(n, n))));
  const Var L = ad::cholesky(C, "gp density C");
  const Var a = ad::solve_lower(L, y);
  return ad::scale(ad::sum(ad::square(a)), -0.5) - ad::scale(ad::logdet_chol(L), 0.5) -
         0.5 * double(n) * std::log(2.0 * M_PI);
}

// The same density through the fused SPD ops.
Var gp_log_density_spd(Tape& tape, const std::vector<Var>& v) {
  const Var& X = v[0];
  const Var& y = v[4];
  const arma::uword n = X.n_rows();
  const Var C =
      ad::add(se_ard_kernel(X, v[1], v[2]), ad::mul(v[3], tape.constant(arma::eye(n, n))));
  const Var q = ad::sum(ad::mul(y, ad::spd_solve(C, y, "gp density C")));
  return ad::scale(q, -0.5) - ad::scale(ad::logdet_spd(C, "gp density C"), 0.5) -
         0.5 * double(n) * std::log(2.0 * M_PI);
}

double plain_log_density(const arma::mat& X, const arma::rowvec& l, double h, double s,
                         const arma::vec& y) {
  const arma::uword n = X.n_rows;
  arma::mat C(n, n);
  for (arma::uword i = 0; i < n; ++i)
    for (arma::uword j = 0; j < n; ++j)
      C(i, j) = h * std::exp(-0.5 * arma::accu(arma::square((X.row(i) - X.row(j)) / l)));
  C.diag() += s;
  double ld = 0.0, sign = 0.0;
  arma::log_det(ld, sign, C);
  return -0.5 * arma::dot(y, arma::solve(C, y)) - 0.5 * ld - 0.5 * double(n) * std::log(2 * M_PI);
}

}  // namespace

TEST_CASE("GP log density with an ARD SE kernel: value and gradients w.r.t. all hyperparameters") {
  const arma::uword n = 15, d = 3;
  const arma::mat X = arma::randn(n, d);
  const arma::mat log_l = {{std::log(0.8), std::log(1.5), std::log(3.0)}};
  const arma::mat log_h(1, 1, arma::fill::value(std::log(1.3)));
  const arma::mat s(1, 1, arma::fill::value(0.1));
  const arma::vec y = arma::sin(2.0 * X.col(0)) + 0.3 * X.col(1) + 0.1 * arma::randn(n);
  const std::vector<arma::mat> inputs{X, log_l, log_h, s, y};

  const double expected = plain_log_density(X, arma::exp(log_l), 1.3, 0.1, y);
  for (const auto& f :
       {ad::ScalarFunction(gp_log_density), ad::ScalarFunction(gp_log_density_spd)}) {
    const auto v = ad::check_value(f, inputs, expected, {.value = 1e-10});
    INFO(v.detail);
    CHECK(v.ok);
    // Hyperparameters and s (the acceptance criterion), then the inputs X and targets y.
    const auto g = ad::check_gradient(f, inputs, {.rel = 1e-6}, {1, 2, 3});
    INFO(g.detail);
    CHECK(g.ok);
    const auto gx = ad::check_gradient(f, inputs, {.rel = 1e-6}, {0, 4});
    INFO(gx.detail);
    CHECK(gx.ok);
  }
  // Both paths give the same reverse-mode gradients.
  const auto g1 = ad::gradients(gp_log_density, inputs);
  const auto g2 = ad::gradients(gp_log_density_spd, inputs);
  for (size_t k = 0; k < g1.size(); ++k) {
    CAPTURE(k);
    CHECK(arma::approx_equal(g1[k], g2[k], "reldiff", 1e-9));
  }
}
