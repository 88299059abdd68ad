#include <doctest/doctest.h>

#include <cmath>

#include "ad_test_support.hpp"
#include "autodiff/gradcheck.hpp"
#include "autodiff/ops.hpp"
#include "kernels/se.hpp"
#include "util/error.hpp"

namespace ad = dkp::autodiff;
using ad::Tape;
using ad::Var;

namespace {

Var contract(const Var& y, unsigned seed) {
  arma::arma_rng::set_seed(seed);
  arma::mat w = arma::randn(y.n_rows(), y.n_cols());
  return ad::sum(ad::mul(y, y.tape().constant(w)));
}

}  // namespace

TEST_CASE("se_ard equals the closed form") {
  const arma::mat X = arma::randn(4, 3), Z = arma::randn(5, 3);
  const arma::rowvec ell = {0.5, 1.3, 2.0};
  const double h = 1.7;
  Tape tape;
  Var K = dkp::kernels::se_ard(tape.constant(X), tape.constant(Z), tape.constant(arma::log(ell)),
                               tape.constant(std::log(h)));
  for (arma::uword i = 0; i < 4; ++i) {
    for (arma::uword j = 0; j < 5; ++j) {
      const double d2 = arma::accu(arma::square((X.row(i) - Z.row(j)) / ell));
      CHECK(K.val()(i, j) == doctest::Approx(h * std::exp(-0.5 * d2)).epsilon(1e-13));
    }
  }
  Var Ks = dkp::kernels::se_ard_sym(tape.constant(X), tape.constant(arma::log(ell)),
                                    tape.constant(std::log(h)));
  Var Kc = dkp::kernels::se_ard(tape.constant(X), tape.constant(X), tape.constant(arma::log(ell)),
                                tape.constant(std::log(h)));
  CHECK(arma::approx_equal(Ks.val(), Kc.val(), "absdiff", 1e-13));
  CHECK_THROWS_AS(dkp::kernels::se_unit(tape.constant(X), tape.constant(arma::randn(2, 2))),
                  dkp::Error);
}

TEST_CASE(
    "se kernel gradients w.r.t. inputs, inducing inputs, ARD and isotropic lengthscales, "
    "variance") {
  const arma::mat X = arma::randn(5, 3), Z = arma::randn(4, 3);
  const arma::mat log_ell = arma::rowvec{-0.3, 0.2, 0.5};
  const arma::mat log_var(1, 1, arma::fill::value(0.3)), log_iso(1, 1, arma::fill::value(0.1));
  auto f = [](Tape&, const std::vector<Var>& v) {
    return contract(dkp::kernels::se_ard(v[0], v[1], v[2], v[3]), 7);
  };
  auto r = ad::check_gradient(f, {X, Z, log_ell, log_var});
  INFO(r.detail);
  CHECK(r.ok);
  auto fs = [](Tape&, const std::vector<Var>& v) {
    return contract(dkp::kernels::se_ard_sym(v[0], v[1], v[2]), 8);
  };
  r = ad::check_gradient(fs, {X, log_ell, log_var});
  INFO(r.detail);
  CHECK(r.ok);
  r = ad::check_gradient(fs, {X, log_iso, log_var});
  INFO(r.detail);
  CHECK(r.ok);
}

TEST_CASE("se_scaled: h exp(...) in one op, its value and its gradients w.r.t. h and both inputs") {
  const arma::mat X = arma::randn(5, 3), Z = arma::randn(4, 3);
  const arma::mat h(1, 1, arma::fill::value(1.7));
  Tape tape;
  const Var Ks = dkp::kernels::se_scaled(tape.constant(h), tape.constant(X), tape.constant(Z));
  const Var Kc =
      ad::mul(tape.constant(h), dkp::kernels::se_unit(tape.constant(X), tape.constant(Z)));
  CHECK(arma::approx_equal(Ks.val(), Kc.val(), "absdiff", 1e-14));
  auto f = [](Tape&, const std::vector<Var>& v) {
    return contract(dkp::kernels::se_scaled(v[0], v[1], v[2]), 9);
  };
  const auto r = ad::check_gradient(f, {h, X, Z});
  INFO(r.detail);
  CHECK(r.ok);
  CHECK_THROWS_AS(
      dkp::kernels::se_scaled(tape.constant(arma::ones(2, 1)), tape.constant(X), tape.constant(Z)),
      dkp::Error);
}

TEST_CASE("se_scaled over several panels of columns equals the composed ops, value and gradients") {
  // 300 x 600: three panels of columns (218 + 218 + 164, 64 Ki doubles each) of the fused value
  // and adjoint passes.
  const arma::uword n = 300, m = 600, w = 3;
  arma::arma_rng::set_seed(11);
  const arma::mat X = arma::randn(n, w), Z = arma::randn(m, w);
  const arma::mat h(1, 1, arma::fill::value(1.3));
  auto fused = [](Tape&, const std::vector<Var>& v) {
    return contract(dkp::kernels::se_scaled(v[0], v[1], v[2]), 12);
  };
  auto composed = [n, m, w](Tape& tape, const std::vector<Var>& v) {
    const Var ones_w = tape.constant(arma::ones(w, 1));
    const Var nx = ad::matmul(ad::square(v[1]), ones_w);  // n x 1
    const Var nz = ad::matmul(ad::square(v[2]), ones_w);  // m x 1
    const Var D = ad::matmul(nx, tape.constant(arma::ones(1, m))) +
                  ad::matmul(tape.constant(arma::ones(n, 1)), nz, false, true) -
                  ad::scale(ad::matmul(v[1], v[2], false, true), 2.0);
    return contract(ad::mul(v[0], ad::exp(ad::scale(D, -0.5))), 12);
  };
  const std::vector<arma::mat> in{h, X, Z};
  const auto gf = dkp::test::expect_fused_matches(fused, composed, in, 1e-12, 1e-10);
  // Only one input with a gradient: the other's adjoint is skipped, this one's unchanged.
  Tape tape;
  const Var Xv = tape.variable(X);
  tape.backward(contract(dkp::kernels::se_scaled(tape.constant(h), Xv, tape.constant(Z)), 12));
  CHECK(arma::approx_equal(Xv.grad(), gf[1], "absdiff", 1e-12 * (1.0 + arma::abs(gf[1]).max())));
}

TEST_CASE("se_scaled_sym: h (se_unit_sym + jitter I) in one op, value and gradients") {
  const arma::mat X = arma::randn(6, 3);
  const arma::mat h(1, 1, arma::fill::value(1.7));
  const double jitter = 0.05;
  auto fused = [jitter](Tape&, const std::vector<Var>& v) {
    return contract(dkp::kernels::se_scaled_sym(v[0], v[1], jitter), 13);
  };
  auto composed = [jitter](Tape& tape, const std::vector<Var>& v) {
    const Var K = dkp::kernels::se_unit_sym(v[1]) + tape.constant(jitter * arma::eye(6, 6));
    return contract(ad::mul(v[0], K), 13);
  };
  const std::vector<arma::mat> in{h, X};
  dkp::test::expect_fused_matches(fused, composed, in, 1e-14, 1e-12);
  const auto r = ad::check_gradient(fused, in);
  INFO(r.detail);
  CHECK(r.ok);
  Tape tape;
  const Var K = dkp::kernels::se_scaled_sym(tape.constant(h), tape.constant(X), jitter);
  CHECK(K.val().is_symmetric());
  CHECK(arma::approx_equal(arma::vec(K.val().diag()), arma::vec(6, arma::fill::value(1.7 * 1.05)),
                           "absdiff", 1e-15));
  CHECK_THROWS_AS(
      dkp::kernels::se_scaled_sym(tape.constant(arma::ones(2, 1)), tape.constant(X), 0.0),
      dkp::Error);
  CHECK_THROWS_AS(dkp::kernels::se_scaled_sym(tape.constant(0.0), tape.constant(X), 0.0),
                  dkp::Error);
}
