#include <doctest/doctest.h>

#include <cmath>

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
