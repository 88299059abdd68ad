#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "autodiff/gradcheck.hpp"
#include "autodiff/ops.hpp"
#include "eval/metrics.hpp"
#include "likelihoods/robustmax.hpp"
#include "model_test_support.hpp"
#include "models/aep_dgp.hpp"
#include "models/dsvi_dgp.hpp"
#include "models/factory.hpp"
#include "models/sgp.hpp"
#include "random/stream.hpp"
#include "util/error.hpp"

namespace ad = dkp::autodiff;
namespace m = dkp::models;
using ad::Tape;
using ad::Var;
using dkp::test::Tiny;
using dkp::test::tiny_data;

namespace {

m::AepConfig tiny_config(size_t depth) {
  m::AepConfig c;
  c.depth = depth;
  c.num_inducing = 4;
  return c;
}

arma::mat se(const arma::mat& X, const arma::mat& Z, const arma::rowvec& ell, double h) {
  arma::mat K(X.n_rows, Z.n_rows);
  for (arma::uword i = 0; i < X.n_rows; ++i)
    for (arma::uword j = 0; j < Z.n_rows; ++j)
      K(i, j) = h * std::exp(-0.5 * arma::accu(arma::square((X.row(i) - Z.row(j)) / ell)));
  return K;
}

// A GP's parameters in plain form, from a ParamMap.
struct PlainGp {
  arma::mat Z, L;
  arma::rowvec ell;
  double h;
  arma::vec t;
};

PlainGp plain_gp(const m::ParamMap& p, size_t l, size_t d) {
  auto key = [&](const char* w) { return fmt::format("layer{}.gp{}.{}", l, d, w); };
  return {p.at(key("Z")), arma::trimatl(p.at(key("site_L"))),
          arma::exp(arma::rowvec(p.at(key("log_ell")))), std::exp(p.at(key("log_var"))(0, 0)),
          arma::vec(p.at(key("site_t")))};
}

// phi_c with every term (the 2 pi ones included), from explicit inverses.
double phi_dense(const arma::mat& Kinv, const arma::mat& L, const arma::vec& t, double c) {
  const arma::mat Sigma = arma::inv_sympd(arma::symmatu(Kinv + c * L * L.t()));
  const arma::vec th = c * t;
  const double M = double(t.n_elem);
  return 0.5 * arma::as_scalar(th.t() * Sigma * th) + 0.5 * arma::log_det_sympd(Sigma) +
         0.5 * M * std::log(2.0 * M_PI);
}

std::map<std::string, arma::mat> jiggled_params(const m::Model& model, uint64_t seed) {
  std::vector<std::string> names;
  std::vector<arma::mat> values;
  dkp::test::jiggled(model.initial_parameters(), seed, names, values);
  m::ParamMap p;
  for (size_t i = 0; i < names.size(); ++i) p[names[i]] = values[i];
  return p;
}

}  // namespace

TEST_CASE("AEP DGP: the energy of a one-layer model equals its dense definition") {
  // F = log prod_n Z_n + phi_cav N - phi_post (N - 1) - phi_prior, with Z_n = N(y_n; m_n, v_n +
  // s2), (m_n, v_n) the FITC cavity moments k^T K^-1 m_cav and h - k^T K^-1 k + k^T K^-1 S_cav
  // K^-1 k (Bui et al. 2016 eq. 6, alpha = 1), computed here with explicit inverses.
  const Tiny data = tiny_data(12, 3, 5);
  dkp::random::Stream init(3);
  const m::AepDgp model(tiny_config(1), data.X, init);
  const m::ParamMap p = jiggled_params(model, 9);
  const double N = 20.0, beta = (N - 1.0) / N;
  const PlainGp g = plain_gp(p, 0, 0);
  const arma::uword M = g.Z.n_rows;
  const arma::mat K = se(g.Z, g.Z, g.ell, g.h) + 1e-6 * arma::eye(M, M);
  const arma::mat Kinv = arma::inv_sympd(K);
  const double energy = -0.5 * arma::log_det_sympd(K) - 0.5 * double(M) * std::log(2.0 * M_PI) -
                        (N - 1.0) * phi_dense(Kinv, g.L, g.t, 1.0) +
                        N * phi_dense(Kinv, g.L, g.t, beta);
  const arma::mat Scav = arma::inv_sympd(arma::symmatu(Kinv + beta * g.L * g.L.t()));
  const arma::vec mcav = Scav * (beta * g.t);
  const arma::mat Kx = se(data.X, g.Z, g.ell, g.h);
  const double s2 = std::exp(p.at("likelihood.log_variance")(0, 0));
  double logz = 0.0;
  for (arma::uword n = 0; n < data.X.n_rows; ++n) {
    const arma::rowvec k = Kx.row(n);
    const double mn = arma::as_scalar(k * Kinv * mcav);
    const double vn = g.h - arma::as_scalar(k * Kinv * k.t()) +
                      arma::as_scalar(k * Kinv * Scav * Kinv * k.t()) + s2;
    logz += -0.5 * std::log(2.0 * M_PI * vn) - 0.5 * std::pow(data.y[n] - mn, 2) / vn;
  }
  const double expected = logz / double(data.X.n_rows) + energy / N;
  Tape tape;
  dkp::random::Stream rng(1);
  const m::ElboEstimate e = model.elbo(m::to_vars(tape, p, false), data.X, data.y, N, 1, 1.0, rng);
  CHECK(e.elbo.scalar() == doctest::Approx(expected).epsilon(1e-9));
  CHECK(e.expected_loglik == doctest::Approx(logz / double(data.X.n_rows)).epsilon(1e-10));
}

TEST_CASE("AEP DGP: sites at zero (q = p) give a zero energy term and the prior's moments") {
  const Tiny data = tiny_data(10, 2, 6);
  dkp::random::Stream init(4);
  const m::AepDgp model(tiny_config(2), data.X, init);
  m::ParamMap p = model.initial_parameters();
  for (auto& [name, v] : p) {
    if (name.find("site_") != std::string::npos) v.zeros();
  }
  Tape tape;
  dkp::random::Stream rng(1);
  const m::ElboEstimate e =
      model.elbo(m::to_vars(tape, p, false), data.X, data.y, 30.0, 1, 1.0, rng);
  CHECK(std::abs(e.kl) < 1e-12);
  // Layer 1 with q = p: mean x^T W, variance h (the prior's), whatever the input.
  Tape t2;
  const m::VarMap vars = m::to_vars(t2, p, false);
  const auto g = m::aep_detail::gp_state(vars, 0, 0, 1e-6, 1.0, 0.0, nullptr);
  const auto [mean, var] = m::aep_detail::gp_moments(g, t2.constant(data.X), Var(), arma::vec());
  CHECK(arma::abs(mean.val()).max() < 1e-12);
  CHECK(arma::approx_equal(var.val(), arma::mat(10, 1, arma::fill::value(g.h.scalar())), "absdiff",
                           1e-10));
}

TEST_CASE("AEP DGP: moment matching through a GP with a linear mean agrees with Monte Carlo") {
  // Input x ~ N(mu, diag(v)); the GP's output given x has mean x^T w + k(x, Z) a and variance
  // h + k(x, Z) G k(Z, x). Its total mean and variance by Monte Carlo (400000 draws), within 4
  // standard errors, against gp_moments (report eqs. 3.19-3.23).
  const Tiny data = tiny_data(10, 2, 7);
  dkp::random::Stream init(5);
  const m::AepDgp model(tiny_config(3), data.X, init);
  const m::ParamMap p = jiggled_params(model, 11);
  Tape tape;
  const m::VarMap vars = m::to_vars(tape, p, false);
  const auto g = m::aep_detail::gp_state(vars, 1, 0, 1e-6, 0.95, 0.0, nullptr);
  const arma::mat mu = {{0.3, -0.5}}, v = {{0.4, 0.2}};
  const arma::vec w = {0.8, -0.6};
  const auto [mm, vv] = m::aep_detail::gp_moments(g, tape.constant(mu), tape.constant(v), w);
  const arma::mat Z = g.Z.val(), G = g.G.val();
  const arma::vec a = g.a.val();
  const arma::rowvec ell = arma::sqrt(arma::rowvec(g.a_sq.val()));
  const double h = g.h.scalar();
  dkp::random::Stream rs(17);
  const arma::uword n = 400000;
  arma::vec cm(n), cv(n);
  for (arma::uword i = 0; i < n; ++i) {
    arma::rowvec x = mu + arma::sqrt(v) % arma::rowvec(dkp::random::normal_matrix(rs, 1, 2));
    const arma::rowvec k = se(x, Z, ell, h);
    cm[i] = arma::as_scalar(x * w) + arma::as_scalar(k * a);
    cv[i] = h + arma::as_scalar(k * G * k.t());
  }
  const double mean = arma::mean(cm);
  const arma::vec tot = cv + arma::square(cm - mean);  // E[var | x] + Var[mean | x]
  const double var = arma::mean(tot);
  const double se_mean = arma::stddev(cm) / std::sqrt(double(n));
  const double se_var = arma::stddev(tot) / std::sqrt(double(n));
  CAPTURE(mean);
  CAPTURE(var);
  CHECK(std::abs(mm.val()[0] - mean) < 4.0 * se_mean);
  CHECK(std::abs(vv.val()[0] - var) < 4.0 * se_var + 1e-12);
}

TEST_CASE("AEP DGP: gradients of the energy w.r.t. every parameter (depths 1-3)") {
  const Tiny data = tiny_data(12, 3, 8);
  for (size_t depth : {1, 2, 3}) {
    CAPTURE(depth);
    dkp::random::Stream init(6);
    const m::AepDgp model(tiny_config(depth), data.X, init);
    dkp::test::expect_elbo_gradient(model, data, 21);
  }
}

TEST_CASE("AEP DGP: mean_function zero reaches the model through the factory") {
  const Tiny data = tiny_data(12, 3, 9);
  // Depth 3: inner layers 3 -> 2 -> 2, so the linear mean maps differ from zero.
  auto build = [&](const std::string& mean) {
    m::ModelSpec spec;
    spec.model = "dgp";
    spec.inference = "aep";
    spec.depth = 3;
    spec.inducing = 5;
    if (!mean.empty()) spec.options.set("mean_function", mean);
    dkp::random::Stream init(7);
    return m::make_model(spec, data.X, data.y, init);
  };
  const auto linear = build(""), zero = build("zero"), linear_set = build("linear");
  CHECK(linear->describe().find("linear mean functions") != std::string::npos);
  CHECK(zero->describe().find("zero mean functions") != std::string::npos);
  CHECK(linear_set->describe() == linear->describe());
  // The same initial parameters, another predictive mean (the mean maps are not parameters).
  CHECK(zero->initial_parameters().size() == linear->initial_parameters().size());
  dkp::random::Stream r1(2), r2(2);
  const auto pl = linear->predict(linear->initial_parameters(), data.X, 1, r1);
  const auto pz = zero->predict(zero->initial_parameters(), data.X, 1, r2);
  CHECK(arma::abs(pl.mean - pz.mean).max() > 1e-3);
}

TEST_CASE("AEP DGP: predictions, description and refusals") {
  const Tiny data = tiny_data(12, 3, 9);
  dkp::random::Stream init(7);
  const m::AepDgp model(tiny_config(2), data.X, init);
  const auto p = dkp::test::check_predictions(model, data.X, m::HiddenKind::None, 0, 0);
  // A deterministic predictive: every sample column is the same Gaussian.
  CHECK(arma::approx_equal(p.mean.col(0), p.mean.col(5), "absdiff", 0.0));
  CHECK(model.describe().find("AEP DGP: depth 2, widths 3-2-1") != std::string::npos);
  CHECK(model.initial_parameters().count("layer0.gp1.site_L") == 1);
  CHECK(model.initial_parameters().count("layer1.gp0.Z") == 1);
  m::AepConfig bad = tiny_config(2);
  bad.num_inducing = 0;
  dkp::random::Stream s(1);
  CHECK_THROWS_AS(m::AepDgp(bad, data.X, s), dkp::ConfigError);
  bad = tiny_config(0);
  CHECK_THROWS_AS(m::AepDgp(bad, data.X, s), dkp::ConfigError);
  Tape tape;
  dkp::random::Stream rng(1);
  CHECK_THROWS_AS(model.elbo(m::to_vars(tape, model.initial_parameters(), false), data.X,
                             data.y.head(5), 20.0, 1, 1.0, rng),
                  dkp::Error);
}

namespace {

// An AEP DGP classifying C classes on `data`: `width` output GPs, the likelihood's words in its
// description, every parameter's gradient, and a predictive `p` of `kind` with `width` columns
// per sample at 5 points (3 samples). Returns the model.
std::unique_ptr<m::AepDgp> check_aep_classifier(const Tiny& data, size_t C, arma::uword width,
                                                const std::string& words,
                                                dkp::likelihoods::ClassLikelihood kind,
                                                uint64_t seed, m::Predictive& p) {
  m::AepConfig c = tiny_config(2);
  c.num_classes = C;
  dkp::random::Stream init(seed);
  auto owned = std::make_unique<m::AepDgp>(c, data.X, init);
  const m::AepDgp& model = *owned;
  CHECK(model.widths().back() == width);
  CHECK(model.initial_parameters().count("likelihood.log_variance") == 0);
  CHECK(model.describe().find(words) != std::string::npos);
  dkp::test::expect_elbo_gradient(model, data, int(seed) + 15);
  dkp::random::Stream r(2);
  p = model.predict(model.initial_parameters(), data.X.rows(0, 4), 3, r);
  CHECK(p.classes == C);
  CHECK(p.class_likelihood == kind);
  CHECK(p.mean.n_cols == 3 * width);
  CHECK(p.var.min() > 0.0);
  return owned;
}

}  // namespace

TEST_CASE("AEP DGP classification: robust-max energy gradients, predictive classes") {
  // Three classes from the signs of two features.
  Tiny data = tiny_data(12, 3, 10);
  for (arma::uword n = 0; n < data.y.n_elem; ++n) {
    data.y[n] = double(int(data.X(n, 0) > 0.0) + int(data.X(n, 1) > 0.0));
  }
  m::Predictive p;
  const auto model = check_aep_classifier(data, 3, 3, "robust-max likelihood over 3 classes",
                                          dkp::likelihoods::ClassLikelihood::RobustMax, 8, p);
  // Labels outside 0..2 are refused, and so is a single class.
  Tape tape;
  dkp::random::Stream r(2);
  data.y[0] = 3.0;
  CHECK_THROWS_AS(model->elbo(m::to_vars(tape, model->initial_parameters(), false), data.X, data.y,
                              20.0, 1, 1.0, r),
                  dkp::Error);
  m::AepConfig c = tiny_config(2);
  c.num_classes = 1;
  dkp::random::Stream init(8);
  CHECK_THROWS_AS(m::AepDgp(c, data.X, init), dkp::ConfigError);
}

TEST_CASE("AEP DGP binary classification: probit energy gradients, one latent per sample") {
  Tiny data = tiny_data(12, 3, 11);
  for (arma::uword n = 0; n < data.y.n_elem; ++n) data.y[n] = double(data.X(n, 0) > 0.0);
  m::Predictive p;
  const auto model = check_aep_classifier(data, 2, 1, "Bernoulli-probit likelihood",
                                          dkp::likelihoods::ClassLikelihood::Probit, 9, p);
  // The energy's data term is the exact log predictive of the moment-matched Gaussian: that of
  // the cavity ((N - 1) / N of the sites), the full posterior's as N grows.
  Tape tape;
  dkp::random::Stream r(3);
  const m::VarMap vars = m::to_vars(tape, model->initial_parameters(), false);
  const double ell =
      model->elbo(vars, data.X.rows(0, 4), data.y.head(5), 1e9, 1, 1.0, r).expected_loglik;
  const auto metrics = dkp::eval::classification_metrics(
      p.mean, p.var, 2, dkp::likelihoods::class_labels(data.y.head(5), 2), 1, p.class_likelihood);
  CHECK(ell == doctest::Approx(metrics.test_ll).epsilon(1e-7));
  data.y[0] = 2.0;
  CHECK_THROWS_AS(model->elbo(vars, data.X, data.y, 20.0, 1, 1.0, r), dkp::Error);
}

TEST_CASE("deterministic ELBOs: the AEP DGP's and the SGP's do not depend on the draws") {
  const Tiny data = tiny_data(12, 3, 11);
  dkp::random::Stream init(9);
  const m::AepDgp aep(tiny_config(2), data.X, init);
  m::SgpConfig sc;
  sc.num_inducing = 4;
  const m::SgpModel sgp(sc, data.X, init);
  m::DsviConfig dc;
  dc.num_inducing = 4;
  const m::DsviDgp dsvi(dc, data.X, init);
  for (const m::Model* model :
       {static_cast<const m::Model*>(&aep), static_cast<const m::Model*>(&sgp)}) {
    CHECK(model->deterministic_elbo());
    Tape t1, t2;
    dkp::random::Stream r1(1), r2(2);
    const double e1 = model
                          ->elbo(m::to_vars(t1, model->initial_parameters(), false), data.X, data.y,
                                 20.0, 1, 1.0, r1)
                          .elbo.scalar();
    const double e2 = model
                          ->elbo(m::to_vars(t2, model->initial_parameters(), false), data.X, data.y,
                                 20.0, 3, 1.0, r2)
                          .elbo.scalar();
    CHECK(e1 == e2);
  }
  CHECK(!dsvi.deterministic_elbo());
}
