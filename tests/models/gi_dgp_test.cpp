// Global-inducing DGP: gradient check of the ELBO estimate w.r.t. every parameter at a fixed noise
// draw, the layer's KL identity, and prediction shapes.
#include <doctest/doctest.h>

#include <cmath>

#include "autodiff/gradcheck.hpp"
#include "autodiff/ops.hpp"
#include "layers/gigp.hpp"
#include "models/gi_dgp.hpp"
#include "test_support.hpp"

namespace ad = dkp::autodiff;
using dkp::models::GiDgp;
using dkp::models::GiDgpConfig;

namespace {

struct Tiny {
  arma::mat X;
  arma::vec y;
};

Tiny tiny_data(size_t n, size_t d, uint64_t seed) {
  dkp::random::Stream s(seed);
  Tiny t;
  t.X = dkp::random::normal_matrix(s, n, d);
  t.y = arma::sin(t.X.col(0)) + 0.1 * dkp::random::normal_matrix(s, n, 1);
  return t;
}

}  // namespace

TEST_CASE("global-inducing DGP ELBO gradients match finite differences for every parameter") {
  for (size_t depth : {1, 2, 3}) {
    CAPTURE(depth);
    const Tiny data = tiny_data(7, 2, dkp::test::seed() + depth);
    GiDgpConfig cfg;
    cfg.depth = depth;
    cfg.inducing = 4;
    cfg.log_prec_init = 0.0;  // a posterior that differs from the prior
    dkp::random::Stream init(dkp::test::seed());
    const GiDgp model(cfg, data.X, data.y, init);
    // Perturb the initial values so that no parameter sits at a special point.
    std::vector<std::string> names;
    std::vector<arma::mat> values;
    dkp::random::Stream jiggle(dkp::test::seed() + 99);
    for (const auto& [name, v] : model.initial_parameters()) {
      names.push_back(name);
      values.push_back(v + 0.1 * dkp::random::normal_matrix(jiggle, v.n_rows, v.n_cols));
    }
    auto f = [&](ad::Tape&, const std::vector<ad::Var>& vars) {
      dkp::models::VarMap p;
      for (size_t i = 0; i < names.size(); ++i) p.emplace(names[i], vars[i]);
      dkp::random::Stream noise(12345);  // fixed noise draw
      return model.elbo(p, data.X, data.y, 20.0, 2, 0.7, noise).elbo;
    };
    ad::Tolerances tol;
    tol.rel = 1e-5;
    const auto r = ad::check_gradient(f, values, tol);
    INFO(r.detail);
    CHECK(r.ok);
  }
}

TEST_CASE("GIGP layer: log p(u) - log q(u) equals the direct Gaussian densities") {
  const size_t P = 5, W = 3, B = 4;
  dkp::random::Stream s(dkp::test::seed());
  const arma::mat Z = dkp::random::normal_matrix(s, P + B, 2);
  arma::mat K(P + B, P + B);
  for (size_t i = 0; i < P + B; ++i)
    for (size_t j = 0; j < P + B; ++j)
      K(i, j) = std::exp(-0.5 * arma::accu(arma::square(Z.row(i) - Z.row(j))));
  K.diag() += 1e-6;
  ad::Tape tape;
  dkp::layers::KernelBlocks kb{tape.constant(K.submat(0, 0, P - 1, P - 1)),
                               tape.constant(K.submat(0, P, P - 1, P + B - 1)),
                               tape.constant(arma::ones(B, 1))};
  const arma::mat v = dkp::random::normal_matrix(s, P, W);
  const arma::mat Lloc = arma::eye(P, P) + 0.3 * dkp::random::normal_matrix(s, P, P);
  dkp::layers::GigpParams gp{tape.constant(v), tape.constant(Lloc), tape.constant(0.4)};
  dkp::random::Stream noise(7);
  const auto out = dkp::layers::gigp_forward(kb, gp, noise);
  // Direct computation: q(u_w) = N(Σ Λ v_w, Σ), Σ = (K^-1 + Λ)^-1, Λ = L L^T.
  const arma::mat Kii = K.submat(0, 0, P - 1, P - 1);
  const arma::mat L = Lloc * std::exp(0.4) / arma::mean(Lloc.diag());
  const arma::mat Lam = L * L.t();
  const arma::mat Sigma = arma::inv_sympd(arma::inv_sympd(Kii) + Lam);
  auto logN = [](const arma::mat& x, const arma::mat& mean, const arma::mat& cov) {
    const arma::mat Lc = arma::chol(cov, "lower");
    double total = 0;
    for (arma::uword w = 0; w < x.n_cols; ++w) {
      const arma::vec z = arma::solve(arma::trimatl(Lc), x.col(w) - mean.col(w));
      total += -0.5 * arma::dot(z, z) - arma::accu(arma::log(Lc.diag())) -
               0.5 * double(x.n_rows) * std::log(2 * M_PI);
    }
    return total;
  };
  const arma::mat u = out.u.val();
  const double direct = logN(u, arma::zeros(P, W), Kii) - logN(u, Sigma * Lam * v, Sigma);
  CHECK(out.logpq.scalar() == doctest::Approx(direct).epsilon(1e-8));
  // Conditional moments of the train/test points.
  const arma::mat Kit = K.submat(0, P, P - 1, P + B - 1);
  const arma::mat mean = Kit.t() * arma::solve(Kii, u);
  const arma::vec var = 1.0 - arma::sum(Kit % arma::solve(Kii, Kit), 0).t();
  CHECK(arma::approx_equal(out.f_mean.val(), mean, "absdiff", 1e-8));
  CHECK(arma::approx_equal(out.f_var.val(), arma::mat(var), "absdiff", 1e-8));
}

TEST_CASE("GIGP samples of u follow q: Monte Carlo mean and covariance") {
  const size_t P = 3, W = 1;
  const arma::mat Kii = {{1.0, 0.5, 0.2}, {0.5, 1.0, 0.4}, {0.2, 0.4, 1.0}};
  const arma::mat v = arma::vec{0.5, -1.0, 2.0};
  const arma::mat Lloc = {{1.0, 0.0, 0.0}, {0.3, 1.2, 0.0}, {-0.2, 0.1, 0.8}};
  const double Ls = 0.2;
  const arma::mat L = Lloc * std::exp(Ls) / arma::mean(Lloc.diag());
  const arma::mat Sigma = arma::inv_sympd(arma::inv_sympd(Kii) + L * L.t());
  const arma::vec mu = Sigma * L * L.t() * v;
  const size_t n = 20000;
  arma::mat draws(P, n);
  dkp::random::Stream noise(dkp::test::seed() + 5);
  for (size_t i = 0; i < n; ++i) {
    ad::Tape tape;
    dkp::layers::KernelBlocks kb{tape.constant(Kii), tape.constant(arma::zeros(P, 1)),
                                 tape.constant(arma::ones(1, 1))};
    dkp::layers::GigpParams gp{tape.constant(v), tape.constant(Lloc), tape.constant(Ls)};
    draws.col(i) = dkp::layers::gigp_forward(kb, gp, noise).u.val().col(0);
  }
  (void)W;
  const arma::vec m = arma::mean(draws, 1);
  for (size_t j = 0; j < P; ++j) {
    const double se = std::sqrt(Sigma(j, j) / n);
    CHECK(std::abs(m[j] - mu[j]) < 4 * se);
  }
  const arma::mat C = arma::cov(draws.t());
  for (size_t j = 0; j < P; ++j) {
    // Standard error of a sample variance of a Gaussian: sigma^2 sqrt(2 / (n - 1)).
    CHECK(std::abs(C(j, j) - Sigma(j, j)) < 4 * Sigma(j, j) * std::sqrt(2.0 / (n - 1)));
  }
}

TEST_CASE("predictions have one column per sample, positive variances, and are seed-determined") {
  const Tiny data = tiny_data(30, 3, 1);
  GiDgpConfig cfg;
  cfg.depth = 3;
  cfg.inducing = 10;
  dkp::random::Stream init(3);
  const GiDgp model(cfg, data.X, data.y, init);
  dkp::random::Stream r1(4), r2(4);
  const auto p1 = model.predict(model.initial_parameters(), data.X.rows(0, 4), 6, r1);
  const auto p2 = model.predict(model.initial_parameters(), data.X.rows(0, 4), 6, r2);
  CHECK(p1.mean.n_rows == 5);
  CHECK(p1.mean.n_cols == 6);
  CHECK(p1.var.min() > 0.0);
  CHECK(arma::approx_equal(p1.mean, p2.mean, "absdiff", 0.0));
}
