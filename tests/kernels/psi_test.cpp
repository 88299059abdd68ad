#include <doctest/doctest.h>

#include <cmath>

#include "ad_test_support.hpp"
#include "autodiff/gradcheck.hpp"
#include "autodiff/ops.hpp"
#include "kernels/psi.hpp"
#include "kernels/se.hpp"
#include "util/error.hpp"

namespace ad = dkp::autodiff;
using ad::Tape;
using ad::Var;
using dkp::test::contract;
using dkp::test::gauss_expect;
using dkp::test::randm;

namespace {

struct PsiInputs {
  arma::mat mu, v, Z, a, h;
};

PsiInputs inputs(arma::uword B, arma::uword M, arma::uword D) {
  return {randm(B, D, -1.5, 1.5), randm(B, D, 0.05, 0.8), randm(M, D, -1.5, 1.5),
          randm(1, D, 0.4, 2.0), arma::mat(1, 1, arma::fill::value(1.3))};
}

}  // namespace

TEST_CASE("psi1 and psi2 equal one-dimensional quadratures of the kernel's expectations") {
  // Both factorise over the input dimensions: Psi1 = h prod_q E_q[exp(-(x - z_q)^2 / (2 a_q))],
  // Psi2_ij = h^2 prod_q E_q[exp(-((x - z_iq)^2 + (x - z_jq)^2) / (2 a_q))].
  const PsiInputs p = inputs(3, 4, 2);
  Tape tape;
  const Var P1 = dkp::kernels::psi1(tape.constant(p.mu), tape.constant(p.v), tape.constant(p.Z),
                                    tape.constant(p.a), tape.constant(p.h));
  const arma::mat G = randm(4, 4);
  const Var e2 =
      dkp::kernels::psi2_contract(tape.constant(p.mu), tape.constant(p.v), tape.constant(p.Z),
                                  tape.constant(p.a), tape.constant(p.h), tape.constant(G));
  const double h = p.h(0, 0);
  for (arma::uword n = 0; n < 3; ++n) {
    double e = 0.0;
    for (arma::uword i = 0; i < 4; ++i) {
      double psi1 = h;
      for (arma::uword q = 0; q < 2; ++q) {
        psi1 *= gauss_expect(p.mu(n, q), p.v(n, q), [&](double x) {
          return std::exp(-0.5 * (x - p.Z(i, q)) * (x - p.Z(i, q)) / p.a(0, q));
        });
      }
      CHECK(P1.val()(n, i) == doctest::Approx(psi1).epsilon(1e-10));
      for (arma::uword j = 0; j < 4; ++j) {
        double psi2 = h * h;
        for (arma::uword q = 0; q < 2; ++q) {
          psi2 *= gauss_expect(p.mu(n, q), p.v(n, q), [&](double x) {
            const double di = x - p.Z(i, q), dj = x - p.Z(j, q);
            return std::exp(-0.5 * (di * di + dj * dj) / p.a(0, q));
          });
        }
        e += G(i, j) * psi2;
      }
    }
    CHECK(e2.val()[n] == doctest::Approx(e).epsilon(1e-10));
  }
}

TEST_CASE("psi statistics at zero input variance are the kernel and its outer products") {
  const PsiInputs p = inputs(5, 4, 3);
  const arma::mat v0(5, 3, arma::fill::zeros), G = randm(4, 4);
  Tape tape;
  const Var K =
      dkp::kernels::se_ard(tape.constant(p.mu), tape.constant(p.Z),
                           tape.constant(0.5 * arma::log(p.a)), tape.constant(std::log(p.h(0, 0))));
  const Var P1 = dkp::kernels::psi1(tape.constant(p.mu), tape.constant(v0), tape.constant(p.Z),
                                    tape.constant(p.a), tape.constant(p.h));
  CHECK(arma::approx_equal(P1.val(), K.val(), "reldiff", 1e-13));
  const Var e2 =
      dkp::kernels::psi2_contract(tape.constant(p.mu), tape.constant(v0), tape.constant(p.Z),
                                  tape.constant(p.a), tape.constant(p.h), tape.constant(G));
  const arma::vec expected = arma::sum((K.val() * G) % K.val(), 1);
  CHECK(arma::approx_equal(arma::vec(e2.val()), expected, "reldiff", 1e-12));
}

TEST_CASE("psi1 gradients w.r.t. the input means and variances, Z, a and h") {
  const PsiInputs p = inputs(4, 3, 2);
  auto f = [](Tape&, const std::vector<Var>& x) {
    return contract(dkp::kernels::psi1(x[0], x[1], x[2], x[3], x[4]));
  };
  const auto r = ad::check_gradient(f, {p.mu, p.v, p.Z, p.a, p.h});
  INFO(r.detail);
  CHECK(r.ok);
}

TEST_CASE("psi2_contract gradients w.r.t. the input means and variances, Z, a, h and G") {
  const PsiInputs p = inputs(3, 4, 2);
  const arma::mat G = randm(4, 4);
  auto f = [](Tape&, const std::vector<Var>& x) {
    return contract(dkp::kernels::psi2_contract(x[0], x[1], x[2], x[3], x[4], x[5]));
  };
  const auto r = ad::check_gradient(f, {p.mu, p.v, p.Z, p.a, p.h, G});
  INFO(r.detail);
  CHECK(r.ok);
}

TEST_CASE("psi statistics refuse bad shapes and parameters") {
  const PsiInputs p = inputs(3, 4, 2);
  Tape t;
  auto c = [&t](const arma::mat& m) { return t.constant(m); };
  CHECK_THROWS_AS(dkp::kernels::psi1(c(p.mu), c(p.v.cols(0, 0)), c(p.Z), c(p.a), c(p.h)),
                  dkp::Error);
  CHECK_THROWS_AS(dkp::kernels::psi1(c(p.mu), c(p.v), c(p.Z), c(-p.a), c(p.h)), dkp::Error);
  CHECK_THROWS_AS(dkp::kernels::psi1(c(p.mu), c(-p.v), c(p.Z), c(p.a), c(p.h)), dkp::Error);
  CHECK_THROWS_AS(dkp::kernels::psi1(c(p.mu), c(p.v), c(p.Z), c(p.a), c(-p.h)), dkp::Error);
  CHECK_THROWS_AS(
      dkp::kernels::psi2_contract(c(p.mu), c(p.v), c(p.Z), c(p.a), c(p.h), c(arma::eye(3, 3))),
      dkp::Error);
}
