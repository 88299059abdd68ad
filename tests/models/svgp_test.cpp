// SVGP layer ops, the SGP model and k-means: gradient checks of every op and of the SGP ELBO
// w.r.t. every parameter (whitened and not), the optimal-q identity with M = N inducing points at
// the training inputs (bound = exact GP log marginal likelihood, predictions = exact GP
// predictions), and k-means initialisation.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <vector>

#include "autodiff/gradcheck.hpp"
#include "autodiff/ops.hpp"
#include "layers/svgp.hpp"
#include "models/kmeans.hpp"
#include "models/sgp.hpp"
#include "random/stream.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace ad = dkp::autodiff;
namespace layers = dkp::layers;
namespace models = dkp::models;
namespace rnd = dkp::random;
using ad::Tape;
using ad::Var;

namespace {

void expect_grad(const ad::ScalarFunction& f, const std::vector<arma::mat>& xs,
                 ad::Tolerances tol = {}) {
  const auto r = ad::check_gradient(f, xs, tol);
  INFO(r.detail);
  CHECK(r.ok);
}

// Weighted sum with fixed weights so that every output element matters differently.
Var contract(const Var& y, uint64_t salt) {
  rnd::Stream s(dkp::test::seed() + salt);
  return ad::sum(ad::mul(y, y.tape().constant(rnd::normal_matrix(s, y.n_rows(), y.n_cols()))));
}

// Random lower-triangular factors with positive diagonals, M x (M D).
arma::mat random_factors(rnd::Stream& s, arma::uword m, arma::uword D) {
  arma::mat F = 0.5 * rnd::normal_matrix(s, m, m * D);
  for (arma::uword d = 0; d < D; ++d) {
    F.cols(d * m, d * m + m - 1) = arma::trimatl(F.cols(d * m, d * m + m - 1));
    for (arma::uword i = 0; i < m; ++i) F(i, d * m + i) = 0.3 + std::abs(F(i, d * m + i));
  }
  return F;
}

// Gradient check of model.elbo w.r.t. every parameter at a fixed noise draw.
void check_elbo_gradient(const models::Model& model, const dkp::autodiff::ParamMap& params,
                         const arma::mat& X, const arma::vec& y, size_t samples,
                         ad::Tolerances tol = {}) {
  std::vector<std::string> names;
  std::vector<arma::mat> values;
  for (const auto& [name, value] : params) {
    names.push_back(name);
    values.push_back(value);
  }
  const ad::ScalarFunction f = [&](Tape&, const std::vector<Var>& v) {
    dkp::autodiff::VarMap vars;
    for (size_t i = 0; i < v.size(); ++i) vars.emplace(names[i], v[i]);
    rnd::Stream rng(4242);  // the same noise at every evaluation
    return model.elbo(vars, X, y, 50.0, samples, 0.7, rng).elbo;
  };
  for (size_t i = 0; i < names.size(); ++i) {
    const auto r = ad::check_gradient(f, values, tol, {i});
    INFO("parameter " << names[i] << ": " << r.detail);
    CHECK(r.ok);
  }
}

// Moves every parameter away from its initial value (generic gradients).
dkp::autodiff::ParamMap perturbed(dkp::autodiff::ParamMap p, uint64_t salt) {
  rnd::Stream s(dkp::test::seed() + salt);
  for (auto& [name, value] : p) value += 0.3 * rnd::normal_matrix(s, value.n_rows, value.n_cols);
  return p;
}

}  // namespace

// ---- ops ----------------------------------------------------------------------------------------

TEST_CASE("positive() is softplus + 1e-6 with its inverse and gradient") {
  const arma::mat u = {{-20.0, -1.0, 0.0, 3.0, 40.0}};
  Tape tape;
  const arma::mat c = layers::positive(tape.constant(u)).val();
  for (arma::uword i = 0; i < u.n_elem; ++i) {
    CHECK(c[i] == doctest::Approx(std::log1p(std::exp(u[i])) + 1e-6).epsilon(1e-14));
    CHECK(layers::positive_inverse(c[i]) == doctest::Approx(u[i]).epsilon(1e-9));
  }
  CHECK_THROWS_AS(layers::positive_inverse(1e-6), dkp::ConfigError);
  expect_grad([](Tape&, const std::vector<Var>& v) { return contract(layers::positive(v[0]), 1); },
              {arma::mat{{-2.0, 0.1, 1.5}}});
}

TEST_CASE("unpack_lower / pack_lower round trip and gradient, both diagonal transforms") {
  rnd::Stream s(dkp::test::seed());
  const arma::uword m = 4, D = 3;
  const arma::mat F = random_factors(s, m, D);
  for (auto t : {layers::DiagTransform::kSoftplus, layers::DiagTransform::kExp}) {
    const arma::mat P = layers::pack_lower(F, t);
    REQUIRE(P.n_rows == m * (m + 1) / 2);
    REQUIRE(P.n_cols == D);
    Tape tape;
    const arma::mat back = layers::unpack_lower(tape.constant(P), m, t).val();
    CHECK(arma::approx_equal(back, F, "absdiff", 1e-13));
    expect_grad(
        [m, t](Tape&, const std::vector<Var>& v) {
          return contract(layers::unpack_lower(v[0], m, t), 2);
        },
        {P});
  }
  CHECK_THROWS_AS(layers::pack_lower(-F, layers::DiagTransform::kExp), dkp::Error);
}

TEST_CASE("sum_log_diag_blocks value and gradient") {
  rnd::Stream s(dkp::test::seed() + 3);
  const arma::mat F = random_factors(s, 3, 2);
  Tape tape;
  double expect = 0.0;
  for (arma::uword d = 0; d < 2; ++d)
    for (arma::uword i = 0; i < 3; ++i) expect += std::log(F(i, d * 3 + i));
  CHECK(layers::sum_log_diag_blocks(tape.constant(F)).scalar() ==
        doctest::Approx(expect).epsilon(1e-14));
  expect_grad([](Tape&, const std::vector<Var>& v) { return layers::sum_log_diag_blocks(v[0]); },
              {F});
}

TEST_CASE("marginal_var_delta equals ||L_d^T Aq_n||^2 - ||A_n||^2, and its gradient") {
  rnd::Stream s(dkp::test::seed() + 4);
  const arma::uword m = 5, n = 6, D = 3;
  const arma::mat A = rnd::normal_matrix(s, m, n), Aq = rnd::normal_matrix(s, m, n);
  const arma::mat F = random_factors(s, m, D);
  Tape tape;
  const arma::mat out =
      layers::marginal_var_delta(tape.constant(A), tape.constant(Aq), tape.constant(F)).val();
  REQUIRE(out.n_rows == n);
  REQUIRE(out.n_cols == D);
  for (arma::uword d = 0; d < D; ++d) {
    const arma::mat Ld = arma::trimatl(F.cols(d * m, d * m + m - 1));
    for (arma::uword i = 0; i < n; ++i) {
      const double e =
          arma::accu(arma::square(Ld.t() * Aq.col(i))) - arma::accu(arma::square(A.col(i)));
      CHECK(out(i, d) == doctest::Approx(e).epsilon(1e-12));
    }
  }
  // Distinct A and Aq, and the whitened case A == Aq (one node used twice); products kept for the
  // backward pass or recomputed there.
  for (double keep : {layers::kMarginalVarKeepBytes, 0.0}) {
    CAPTURE(keep);
    expect_grad(
        [keep](Tape&, const std::vector<Var>& v) {
          return contract(layers::marginal_var_delta(v[0], v[1], v[2], keep), 5);
        },
        {A, Aq, F});
    expect_grad(
        [keep](Tape&, const std::vector<Var>& v) {
          return contract(layers::marginal_var_delta(v[0], v[0], v[1], keep), 6);
        },
        {A, F});
  }
  // Only some inputs need a gradient.
  expect_grad(
      [Aq](Tape& t, const std::vector<Var>& v) {
        return contract(layers::marginal_var_delta(v[0], t.constant(Aq), v[1]), 7);
      },
      {A, F});
  expect_grad(
      [A, F](Tape& t, const std::vector<Var>& v) {
        return contract(layers::marginal_var_delta(t.constant(A), v[0], t.constant(F)), 8);
      },
      {Aq});
}

TEST_CASE("gaussian_expected_loglik: closed form and gradient") {
  rnd::Stream s(dkp::test::seed() + 7);
  const arma::mat m = rnd::normal_matrix(s, 5, 1);
  const arma::mat v = arma::exp(rnd::normal_matrix(s, 5, 1));
  const arma::vec y = rnd::normal_matrix(s, 5, 1);
  const double s2 = 0.3;
  Tape tape;
  const double got =
      layers::gaussian_expected_loglik(tape.constant(m), tape.constant(v), y, tape.constant(s2))
          .scalar();
  double e = 0.0;
  for (int i = 0; i < 5; ++i)
    e += -0.5 * std::log(2 * M_PI * s2) - (std::pow(y[i] - m[i], 2) + v[i]) / (2 * s2);
  CHECK(got == doctest::Approx(e / 5).epsilon(1e-13));
  expect_grad(
      [y](Tape&, const std::vector<Var>& x) {
        return layers::gaussian_expected_loglik(x[0], x[1], y, x[2]);
      },
      {m, v, arma::mat(1, 1, arma::fill::value(s2))});
}

// ---- SGP model
// -----------------------------------------------------------------------------------

TEST_CASE("SGP ELBO gradient w.r.t. every parameter (whitened / not, ARD / not, both diagonals)") {
  rnd::Stream s(dkp::test::seed() + 11);
  const arma::mat X = rnd::normal_matrix(s, 7, 2);
  const arma::vec y = rnd::normal_matrix(s, 7, 1);
  const arma::mat Z = rnd::normal_matrix(s, 4, 2);
  struct Case {
    bool whiten, ard;
    layers::DiagTransform diag;
  };
  for (const Case c : {Case{true, true, layers::DiagTransform::kSoftplus},
                       Case{false, true, layers::DiagTransform::kSoftplus},
                       Case{true, false, layers::DiagTransform::kExp},
                       Case{false, false, layers::DiagTransform::kExp}}) {
    CAPTURE(c.whiten);
    CAPTURE(c.ard);
    models::SgpConfig cfg;
    cfg.whiten = c.whiten;
    cfg.ard = c.ard;
    cfg.q_diag = c.diag;
    const models::SgpModel model(cfg, Z);
    const auto& p0 = model.initial_parameters();
    CHECK(p0.size() == 6);
    CHECK(p0.at("layer0.kern.lengthscales").n_cols == (c.ard ? 2u : 1u));
    check_elbo_gradient(model, perturbed(p0, 12), X, y, 3);
  }
}

TEST_CASE("SGP initial parameters follow the documented defaults") {
  rnd::Stream init(dkp::test::seed() + 13);
  const arma::mat X = rnd::normal_matrix(init, 40, 3);
  models::SgpConfig cfg;
  cfg.num_inducing = 10;
  const models::SgpModel model(cfg, X, init);
  const auto& p = model.initial_parameters();
  Tape tape;
  auto constrained = [&](const char* n) { return layers::positive(tape.constant(p.at(n))).val(); };
  CHECK(arma::approx_equal(constrained("layer0.kern.lengthscales"), arma::ones(1, 3), "absdiff",
                           1e-12));
  CHECK(constrained("layer0.kern.variance")(0) == doctest::Approx(1.0));
  CHECK(constrained("likelihood.variance")(0) == doctest::Approx(0.05));
  CHECK(arma::accu(arma::abs(p.at("layer0.q_mu"))) == 0.0);
  const arma::mat L = layers::unpack_lower(tape.constant(p.at("layer0.q_sqrt")), 10,
                                           layers::DiagTransform::kSoftplus)
                          .val();
  CHECK(arma::approx_equal(L, arma::eye(10, 10), "absdiff", 1e-12));
  CHECK(p.at("layer0.Z").n_rows == 10);
  CHECK(model.describe().find("M=10") != std::string::npos);
}

namespace {

// Exact GP regression quantities for the SE kernel.
struct ExactGp {
  arma::mat K;  // K_ff
  double lml = 0.0;
  arma::vec mean, var;  // at test points, var includes the noise
};

ExactGp exact_gp(const arma::mat& X, const arma::vec& y, const arma::mat& Xt,
                 const arma::rowvec& ell, double kvar, double s2) {
  ExactGp g;
  g.K = layers::se_kernel(X, X, ell, kvar);
  arma::mat C = g.K + s2 * arma::eye(X.n_rows, X.n_rows);
  const arma::mat Lc = arma::chol(C, "lower");
  const arma::vec alpha = arma::solve(arma::trimatu(Lc.t()), arma::solve(arma::trimatl(Lc), y));
  g.lml = -0.5 * arma::dot(y, alpha) - arma::accu(arma::log(Lc.diag())) -
          0.5 * double(X.n_rows) * std::log(2 * M_PI);
  const arma::mat Ks = layers::se_kernel(Xt, X, ell, kvar);
  g.mean = Ks * alpha;
  const arma::mat V = arma::solve(arma::trimatl(Lc), Ks.t());
  g.var = kvar - arma::sum(arma::square(V), 0).t() + s2;
  return g;
}

}  // namespace

TEST_CASE("SGP with M = N inducing points at the inputs and the optimal q(u) is the exact GP") {
  // Titsias (2009): with Z = X, Q_ff = K_ff and the optimal q(u), the ELBO equals log p(y).
  rnd::Stream s(dkp::test::seed() + 21);
  const arma::uword N = 12;
  const arma::mat X = 2.0 * rnd::uniform_matrix(s, N, 2) - 1.0;
  const arma::vec y =
      arma::sin(3.0 * X.col(0)) + 0.5 * X.col(1) + 0.1 * arma::vec(rnd::normal_matrix(s, N, 1));
  const arma::mat Xt = 2.0 * rnd::uniform_matrix(s, 9, 2) - 1.0;
  const arma::rowvec ell = {0.6, 1.1};
  const double kvar = 1.3, s2 = 0.08;

  for (bool whiten : {true, false}) {
    CAPTURE(whiten);
    models::SgpConfig cfg;
    cfg.whiten = whiten;
    cfg.jitter = 0.0;  // Q_ff = K_ff exactly
    const models::SgpModel model(cfg, X);
    dkp::autodiff::ParamMap p = model.initial_parameters();
    p["layer0.kern.lengthscales"] = layers::positive_inverse(arma::mat(ell));
    p["layer0.kern.variance"] = arma::mat(1, 1, arma::fill::value(layers::positive_inverse(kvar)));
    p["likelihood.variance"] = arma::mat(1, 1, arma::fill::value(layers::positive_inverse(s2)));
    // Read back the constrained values the model will use (round-off of the transform).
    Tape t0;
    const arma::rowvec ell_c = layers::positive(t0.constant(p["layer0.kern.lengthscales"])).val();
    const double kvar_c = layers::positive(t0.constant(p["layer0.kern.variance"])).scalar();
    const double s2_c = layers::positive(t0.constant(p["likelihood.variance"])).scalar();
    const ExactGp g = exact_gp(X, y, Xt, ell_c, kvar_c, s2_c);

    // Optimal q(u) = N(m, S): Sigma = (K + K K / s2)^{-1}, m = K Sigma K y / s2, S = K Sigma K.
    const arma::mat& K = g.K;
    const arma::mat Sigma = arma::inv_sympd(arma::symmatu(K + K * K / s2_c));
    arma::vec m = K * Sigma * K * y / s2_c;
    arma::mat S = K * Sigma * K;
    if (whiten) {
      // v = L^{-1} u: m_v = L^{-1} m, S_v = L^{-1} S L^{-T} = L^T Sigma L.
      const arma::mat L = arma::chol(K, "lower");
      m = arma::solve(arma::trimatl(L), m);
      S = L.t() * Sigma * L;
    }
    S = 0.5 * (S + S.t());
    p["layer0.q_mu"] = m;
    p["layer0.q_sqrt"] = layers::pack_lower(arma::chol(S, "lower"), cfg.q_diag);

    Tape tape;
    const dkp::autodiff::VarMap vars = dkp::autodiff::to_vars(tape, p, false);
    rnd::Stream rng(1);
    const models::ElboEstimate e = model.elbo(vars, X, y, double(N), 1, 1.0, rng);
    const double gap = e.elbo.scalar() * double(N) - g.lml;
    CAPTURE(g.lml);
    CAPTURE(gap);
    CHECK(std::abs(gap) < 1e-6);
    CHECK(e.kl * double(N) > 0.0);

    const models::Predictive pred = model.predict(p, Xt, 3, rng);
    REQUIRE(pred.mean.n_rows == Xt.n_rows);
    REQUIRE(pred.mean.n_cols == 3);
    for (arma::uword j = 0; j < 3; ++j) {
      CHECK(arma::approx_equal(pred.mean.col(j), g.mean, "absdiff", 1e-8));
      CHECK(arma::approx_equal(pred.var.col(j), g.var, "absdiff", 1e-8));
    }
  }
}

TEST_CASE("SGP ELBO ignores the number of samples and is finite at initialisation") {
  rnd::Stream s(dkp::test::seed() + 31);
  const arma::mat X = rnd::normal_matrix(s, 30, 3);
  const arma::vec y = rnd::normal_matrix(s, 30, 1);
  models::SgpConfig cfg;
  cfg.num_inducing = 8;
  rnd::Stream init(5);
  const models::SgpModel model(cfg, X, init);
  Tape tape;
  const auto vars = dkp::autodiff::to_vars(tape, model.initial_parameters(), false);
  rnd::Stream r1(1), r2(2);
  const double e1 = model.elbo(vars, X, y, 30.0, 1, 1.0, r1).elbo.scalar();
  const double e2 = model.elbo(vars, X, y, 30.0, 10, 1.0, r2).elbo.scalar();
  CHECK(std::isfinite(e1));
  CHECK(e1 == e2);
}

// ---- k-means
// --------------------------------------------------------------------------------------

TEST_CASE("k-means picks distinct centres, is seeded, and handles k >= distinct rows") {
  rnd::Stream s(dkp::test::seed() + 41);
  // Three blobs, with every row duplicated (duplicates must not give duplicate centres).
  arma::mat X = rnd::normal_matrix(s, 60, 2) * 0.1;
  X.rows(0, 19).each_row() += arma::rowvec{3.0, 0.0};
  X.rows(20, 39).each_row() += arma::rowvec{-3.0, 0.0};
  X = arma::join_cols(X, X);
  rnd::Stream a(7), b(7), c(8);
  const auto ka = models::kmeans(X, 10, a), kb = models::kmeans(X, 10, b),
             kc = models::kmeans(X, 10, c);
  CHECK(ka.centres.n_rows == 10);
  CHECK(arma::approx_equal(ka.centres, kb.centres, "absdiff", 0.0));
  CHECK_FALSE(arma::approx_equal(ka.centres, kc.centres, "absdiff", 1e-12));
  CHECK(models::count_distinct_rows(ka.centres) == 10);
  for (arma::uword i = 0; i < 10; ++i)
    for (arma::uword j = 0; j < i; ++j)
      CHECK(arma::norm(ka.centres.row(i) - ka.centres.row(j)) > 1e-8);
  // Three clusters: every blob gets a centre near it.
  const auto k3 = models::kmeans(X, 3, a);
  for (double cx : {3.0, -3.0, 0.0}) {
    double best = 1e9;
    for (arma::uword i = 0; i < 3; ++i)
      best = std::min(best, arma::norm(k3.centres.row(i) - arma::rowvec{cx, 0.0}));
    CHECK(best < 0.2);
  }
  // Every row is at its nearest centre.
  for (arma::uword i = 0; i < X.n_rows; ++i) {
    const arma::rowvec d2 = arma::sum(arma::square(k3.centres.each_row() - X.row(i)), 1).t();
    CHECK(k3.assignment[i] == d2.index_min());
  }
  // k above the number of distinct rows: the distinct rows.
  CHECK(models::count_distinct_rows(X) == 60);
  const auto kall = models::kmeans(X, 100, a);
  CHECK(kall.centres.n_rows == 60);
  CHECK(models::count_distinct_rows(kall.centres) == 60);
  CHECK_THROWS_AS(models::kmeans(X, 0, a), dkp::Error);
  arma::mat bad = X;
  bad(3, 1) = arma::datum::nan;
  CHECK_THROWS_AS(models::kmeans(bad, 3, a), dkp::Error);
}

TEST_CASE("SGP with more inducing points than distinct inputs uses the inputs") {
  rnd::Stream s(dkp::test::seed() + 51);
  const arma::mat X = rnd::normal_matrix(s, 20, 2);
  models::SgpConfig cfg;
  cfg.num_inducing = 500;
  rnd::Stream init(3);
  const models::SgpModel model(cfg, X, init);
  CHECK(model.layer().num_inducing() == 20);
}
