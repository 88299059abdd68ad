// Compositional-uncertainty DGPs (models/cdgp.hpp): ELBO gradients for every posterior, the KL
// terms against closed forms, the layers' conditionals against the GP posterior in closed form
// (Monte Carlo), prediction shapes, and bad configurations.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "autodiff/gradcheck.hpp"
#include "autodiff/tape.hpp"
#include "model_test_support.hpp"
#include "models/cdgp.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

using dkp::autodiff::ParamMap;
using dkp::models::CdgpConfig;
using dkp::models::CompositionalDgp;
using dkp::test::Tiny;
using dkp::test::tiny_data;

namespace {

CdgpConfig small(const std::string& posterior, size_t depth = 2, bool periodic = true) {
  CdgpConfig c;
  c.posterior = posterior;
  c.depth = depth;
  c.inducing = 4;
  c.noise_std = 0.3;
  c.last_periodic = periodic;
  return c;
}

arma::mat kernel_plain(const arma::vec& a, const arma::vec& b, double alpha, double gamma,
                       double omega, bool periodic) {
  arma::mat K(a.n_elem, b.n_elem);
  for (arma::uword i = 0; i < a.n_elem; ++i)
    for (arma::uword j = 0; j < b.n_elem; ++j) {
      const double d = a[i] - b[j], s = std::sin(omega * d);
      K(i, j) = periodic ? alpha * std::exp(-2.0 * gamma * s * s)
                         : alpha * std::exp(-0.5 * gamma * d * d);
    }
  return K;
}

arma::mat layer_kernel(const ParamMap& p, size_t l, size_t L, bool periodic, const arma::vec& a,
                       const arma::vec& b) {
  const std::string k = "layer" + std::to_string(l) + ".";
  const bool per = periodic && l == L;
  return kernel_plain(a, b, std::exp(p.at(k + "log_alpha")(0, 0)),
                      std::exp(p.at(k + "log_gamma")(0, 0)),
                      per ? std::exp(p.at(k + "log_omega")(0, 0)) : 0.0, per);
}

// KL(N(m, S S^T) || N(mu, K)) with dense linear algebra.
double kl_plain(const arma::vec& m, const arma::mat& S, const arma::vec& mu, const arma::mat& K) {
  const arma::mat Ki = arma::inv_sympd(K), Sig = S * S.t();
  double ld_k = 0.0, ld_s = 0.0, sign = 0.0;
  arma::log_det(ld_k, sign, K);
  arma::log_det(ld_s, sign, Sig);
  const arma::vec d = mu - m;
  return 0.5 *
         (arma::trace(Ki * Sig) + arma::as_scalar(d.t() * Ki * d) - double(m.n_elem) + ld_k - ld_s);
}

// The KL term of the ELBO estimate (total over the data set, KL weight 1, one sample).
double model_kl(const CompositionalDgp& model, const ParamMap& p, const Tiny& d) {
  dkp::autodiff::Tape tape;
  const auto v = dkp::autodiff::to_vars(tape, p, false);
  dkp::random::Stream r(1);
  const double n = double(d.X.n_rows);
  return model.elbo(v, d.X, d.y, n, 1, 1.0, r).kl * n;
}

// `init` with the values of the parameters it shares with `from`.
ParamMap with_shared(ParamMap init, const ParamMap& from) {
  for (auto& [name, v] : init)
    if (from.count(name)) v = from.at(name);
  return init;
}

ParamMap jiggle(const ParamMap& init, uint64_t seed, double scale) {
  dkp::random::Stream s(seed);
  ParamMap p = init;
  for (auto& [name, v] : p) v += scale * dkp::random::normal_matrix(s, v.n_rows, v.n_cols);
  return p;
}

// Mean and variance of the samples in each row of F against the closed form, within 4 standard
// errors (of a mean: sd / sqrt(n); of a variance: var sqrt(2 / (n - 1))).
void expect_moments(const arma::mat& F, const arma::vec& mean, const arma::vec& var) {
  const double n = double(F.n_cols);
  for (arma::uword i = 0; i < F.n_rows; ++i) {
    CAPTURE(i);
    const double m = arma::mean(F.row(i)), v = arma::var(F.row(i));
    CHECK(std::abs(m - mean[i]) < 4.0 * std::sqrt(var[i] / n));
    CHECK(std::abs(v - var[i]) < 4.0 * var[i] * std::sqrt(2.0 / (n - 1.0)));
  }
}

}  // namespace

TEST_CASE("compositional DGP: ELBO gradients w.r.t. every parameter, every posterior") {
  const Tiny d = tiny_data(20, 1, 3);
  // Every posterior, and the jointly Gaussian one also with u integrated out analytically.
  std::vector<std::pair<std::string, bool>> posteriors;
  for (const auto& post : dkp::models::cdgp_posteriors()) posteriors.emplace_back(post, false);
  posteriors.emplace_back("jointly-gaussian", true);
  for (const auto& [post, analytic] : posteriors) {
    for (const bool periodic : {true, false}) {
      for (const size_t depth : {size_t(1), size_t(2), size_t(3)}) {
        CAPTURE(post);
        CAPTURE(analytic);
        CAPTURE(periodic);
        CAPTURE(depth);
        dkp::random::Stream init(5);
        // A larger jitter than the model's 1e-6 keeps the 20 points' conditional covariances
        // (some points lie close together) well conditioned for the finite differences.
        CdgpConfig c = small(post, depth, periodic);
        c.jitter = 1e-3;
        c.analytic = analytic;
        const CompositionalDgp model(c, init);
        // Jiggled values (as every model's check), the S factors' diagonals moved away from 0,
        // where log|S_ii| bends too sharply for finite differences.
        std::vector<std::string> names;
        std::vector<arma::mat> values;
        dkp::test::jiggled(model.initial_parameters(), 7, names, values);
        for (size_t i = 0; i < names.size(); ++i)
          if (names[i].size() > 2 && names[i].compare(names[i].size() - 2, 2, ".S") == 0)
            values[i].diag() += 0.3;
        const auto f = dkp::test::elbo_function(model, d, names, 12345);
        dkp::autodiff::Tolerances tol;
        tol.rel = 1e-5;
        const auto g = dkp::autodiff::check_gradient(f, values, tol);
        INFO(g.detail);
        CHECK(g.ok);
        CHECK(std::isfinite(dkp::autodiff::evaluate(f, values)));
      }
    }
  }
}

TEST_CASE("compositional DGP: the KL terms equal the closed-form Gaussian KLs") {
  const Tiny d = tiny_data(10, 1, 4);
  const size_t L = 2, M = 4;
  const double jit = 1e-6;
  dkp::random::Stream init(1);
  const CompositionalDgp mf(small("dsvi"), init);
  const ParamMap p = jiggle(mf.initial_parameters(), 11, 0.3);
  double expected = 0.0;
  arma::vec m_all(L * M);
  arma::mat S_all(L * M, L * M, arma::fill::zeros);
  for (size_t l = 1; l <= L; ++l) {
    const std::string k = "layer" + std::to_string(l) + ".";
    const arma::vec Z = p.at(k + "Z"), m = p.at(k + "m");
    const arma::mat S = arma::trimatl(p.at(k + "S"));
    const arma::mat K = layer_kernel(p, l, L, true, Z, Z) + jit * arma::eye(M, M);
    expected += kl_plain(m, S, l < L ? Z : arma::vec(M, arma::fill::zeros), K);
    m_all.subvec((l - 1) * M, l * M - 1) = m;
    S_all.submat((l - 1) * M, (l - 1) * M, l * M - 1, l * M - 1) = S;
  }
  const double got = model_kl(mf, p, d);
  CHECK(got == doctest::Approx(expected).epsilon(1e-8));

  SUBCASE("jointly Gaussian with a block-diagonal S is the mean-field KL") {
    const CompositionalDgp joint(small("jointly-gaussian"), init);
    ParamMap q = with_shared(joint.initial_parameters(), p);
    q["q.m"] = m_all;
    q["q.S"] = S_all + arma::trimatu(arma::ones(L * M, L * M), 1);  // upper part is ignored
    CHECK(model_kl(joint, q, d) == doctest::Approx(expected).epsilon(1e-9));
    // Correlations across layers change it.
    q["q.S"](M + 1, 0) = 0.05;
    CHECK(std::abs(model_kl(joint, q, d) - expected) > 1e-6);
  }

  SUBCASE("the prior as the posterior gives KL 0") {
    ParamMap q = p;
    for (size_t l = 1; l <= L; ++l) {
      const std::string k = "layer" + std::to_string(l) + ".";
      const arma::vec Z = q.at(k + "Z");
      q[k + "m"] = l < L ? Z : arma::vec(M, arma::fill::zeros);
      q[k + "S"] = arma::chol(layer_kernel(q, l, L, true, Z, Z) + jit * arma::eye(M, M), "lower");
    }
    CHECK(std::abs(model_kl(mf, q, d)) < 1e-8);
  }

  SUBCASE("inducing locations, one layer: the prior sits on Z0 with 1 / beta + jitter") {
    const CompositionalDgp loc(small("inducing-locations", 1), init);
    const ParamMap q = jiggle(loc.initial_parameters(), 12, 0.3);
    const arma::vec Z0 = q.at("Z0");
    const arma::mat K = layer_kernel(q, 1, 1, true, Z0, Z0) + (1e-8 + jit) * arma::eye(M, M);
    CHECK(model_kl(loc, q, d) ==
          doctest::Approx(kl_plain(q.at("layer1.m"), arma::trimatl(q.at("layer1.S")),
                                   arma::vec(M, arma::fill::zeros), K))
              .epsilon(1e-8));
  }
}

TEST_CASE("compositional DGP: one layer's draws follow the GP posterior in closed form") {
  // q(u) = N(m, S S^T): f(X) ~ N(K_xz K^-1 m, K_xx - K_xz K^-1 K_zx + K_xz K^-1 S S^T K^-1 K_zx),
  // whether u is integrated out (dsvi) or sampled first (jointly-gaussian; inducing-locations,
  // whose one layer sits on Z0).
  const size_t M = 4;
  const double jit = 1e-6;
  const arma::mat X = arma::vec{-0.7, 0.1, 0.55};
  dkp::random::Stream init(2);
  const CompositionalDgp mf(small("dsvi", 1), init);
  ParamMap p = jiggle(mf.initial_parameters(), 21, 0.2);
  p["layer1.S"] = 0.4 * arma::trimatl(p.at("layer1.S") + arma::eye(M, M));
  const arma::vec Z = p.at("layer1.Z"), m = p.at("layer1.m");
  const arma::mat S = arma::trimatl(p.at("layer1.S"));
  const arma::mat K = layer_kernel(p, 1, 1, true, Z, Z) + jit * arma::eye(M, M);
  const arma::mat Kxz = layer_kernel(p, 1, 1, true, X.col(0), Z);
  const arma::mat W = Kxz * arma::inv_sympd(K);
  const arma::vec mean = W * m;
  const arma::mat cov = layer_kernel(p, 1, 1, true, X.col(0), X.col(0)) - W * Kxz.t() +
                        W * S * S.t() * W.t() + jit * arma::eye(3, 3);
  const size_t n = 20000;
  {
    dkp::random::Stream r(8);
    expect_moments(mf.predict(p, X, n, r).mean, mean, cov.diag());
  }
  // The other posteriors with the same q: their parameters shared with p, then `set`.
  auto draws = [&](const char* posterior, const ParamMap& set, uint64_t seed) {
    const CompositionalDgp model(small(posterior, 1), init);
    ParamMap q = with_shared(model.initial_parameters(), p);
    for (const auto& [name, v] : set) q[name] = v;
    dkp::random::Stream r(seed);
    return model.predict(q, X, n, r).mean;
  };
  expect_moments(draws("jointly-gaussian", {{"q.m", m}, {"q.S", S}}, 9), mean, cov.diag());
  expect_moments(draws("inducing-locations", {{"Z0", Z}, {"layer1.m", m}, {"layer1.S", S}}, 10),
                 mean, cov.diag());
  // layer_functions of a one-layer model is the same GP at X.
  {
    dkp::random::Stream r(11);
    const auto f = mf.layer_functions(p, X, n, r);
    REQUIRE(f.size() == 1);
    expect_moments(f[0], mean, cov.diag());
  }
}

TEST_CASE("compositional DGP: predictions, hidden layers and layer functions") {
  const Tiny d = tiny_data(8, 1, 5);
  for (const auto& post : dkp::models::cdgp_posteriors()) {
    CAPTURE(post);
    dkp::random::Stream init(3);
    const CompositionalDgp model(small(post, 3), init);
    const auto pred =
        dkp::test::check_predictions(model, d.X, dkp::models::HiddenKind::Features, 2, 1);
    CHECK(arma::approx_equal(pred.var, arma::mat(5, 6, arma::fill::value(0.09)), "absdiff", 1e-15));
    dkp::random::Stream r(4);
    const auto f = model.layer_functions(model.initial_parameters(), d.X, 7, r);
    REQUIRE(f.size() == 3);
    for (const auto& F : f) {
      CHECK(F.n_rows == 8);
      CHECK(F.n_cols == 7);
      CHECK(F.is_finite());
    }
  }
}

TEST_CASE("compositional DGP: posterior summaries are each layer's variance at 0") {
  for (const auto& post : dkp::models::cdgp_posteriors()) {
    CAPTURE(post);
    dkp::random::Stream init(3);
    const CompositionalDgp model(small(post, 2), init);
    dkp::random::Stream r1(5), r2(5);
    const auto s = model.posterior_summaries(model.initial_parameters(), r1);
    REQUIRE(s.size() == 2);
    CHECK(s[0].first == "var_f1_at_0");
    CHECK(s[1].first == "var_f2_at_0");
    const arma::mat x0(1, 1, arma::fill::zeros);
    const auto f = model.layer_functions(model.initial_parameters(), x0,
                                         CompositionalDgp::kSummarySamples, r2);
    for (size_t l = 0; l < 2; ++l) {
      CHECK(s[l].second > 0.0);
      CHECK(s[l].second == arma::var(arma::vectorise(f[l])));
    }
  }
}

TEST_CASE("compositional DGP: bad configurations and inputs") {
  dkp::random::Stream init(1);
  CHECK_THROWS_AS(CompositionalDgp(small("mean-field"), init), dkp::ConfigError);
  CHECK_THROWS_AS(CompositionalDgp(small("dsvi", 0), init), dkp::ConfigError);
  CdgpConfig c = small("dsvi");
  c.noise_std = 0.0;
  CHECK_THROWS_AS(CompositionalDgp(c, init), dkp::ConfigError);
  c = small("dsvi");
  c.inducing = 0;
  CHECK_THROWS_AS(CompositionalDgp(c, init), dkp::ConfigError);
  const CompositionalDgp model(small("dsvi"), init);
  const Tiny d = tiny_data(6, 2, 1);  // two features: the model takes one
  dkp::autodiff::Tape tape;
  const auto v = dkp::autodiff::to_vars(tape, model.initial_parameters(), false);
  dkp::random::Stream r(1);
  CHECK_THROWS_AS(model.elbo(v, d.X, d.y, 6.0, 1, 1.0, r), dkp::Error);
  CHECK_THROWS_AS(model.predict(model.initial_parameters(), d.X, 2, r), dkp::Error);
}

TEST_CASE("compositional DGP --mf-until: the cross-layer blocks as their own parameter") {
  // With mf_until the factor is q.S's diagonal blocks plus q.S_cross's other blocks: the estimate
  // is the plain jointly Gaussian model's at that combined factor (same noise), the gradient
  // checks, and training holds the cross blocks at 0 for mf_until steps, then moves them.
  const Tiny d = tiny_data(20, 1, 3);
  const size_t L = 2, M = 4;
  CdgpConfig c = small("jointly-gaussian", L, true);
  c.jitter = 1e-3;
  CdgpConfig cm = c;
  cm.mf_until = 3;
  dkp::random::Stream i1(5), i2(5);
  const CompositionalDgp plain(c, i1), split(cm, i2);
  REQUIRE(split.initial_parameters().count("q.S_cross") == 1);
  CHECK(plain.initial_parameters().count("q.S_cross") == 0);
  std::vector<std::string> names;
  std::vector<arma::mat> values;
  dkp::test::jiggled(split.initial_parameters(), 9, names, values);
  arma::mat own(L * M, L * M, arma::fill::zeros);
  own.submat(0, 0, M - 1, M - 1).ones();
  own.submat(M, M, 2 * M - 1, 2 * M - 1).ones();
  std::vector<std::string> pnames;
  std::vector<arma::mat> pvalues;
  arma::mat S, cross;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "q.S") values[i].diag() += 0.3;
    if (names[i] == "q.S") S = values[i];
    if (names[i] == "q.S_cross") cross = values[i];
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "q.S_cross") continue;
    pnames.push_back(names[i]);
    pvalues.push_back(names[i] == "q.S" ? arma::mat(S % own + cross % (1.0 - own)) : values[i]);
  }
  const double e_split =
      dkp::autodiff::evaluate(dkp::test::elbo_function(split, d, names, 77), values);
  CHECK(e_split == doctest::Approx(dkp::autodiff::evaluate(
                                       dkp::test::elbo_function(plain, d, pnames, 77), pvalues))
                       .epsilon(1e-12));
  dkp::autodiff::Tolerances tol;
  tol.rel = 1e-5;
  const auto g =
      dkp::autodiff::check_gradient(dkp::test::elbo_function(split, d, names, 77), values, tol);
  INFO(g.detail);
  CHECK(g.ok);

  auto train = [&](size_t steps) {
    dkp::random::Stream init(5);
    const CompositionalDgp model(cm, init);
    return dkp::test::short_train(model, d.X, d.y, steps, 4);
  };
  const ParamMap at3 = train(3), at5 = train(5);
  CHECK(arma::abs(at3.at("q.S_cross")).max() == 0.0);
  CHECK(arma::abs(at3.at("q.S") - split.initial_parameters().at("q.S")).max() > 1e-4);
  CHECK(arma::abs(arma::trimatl(at5.at("q.S_cross") % (1.0 - own))).max() > 1e-4);
}

TEST_CASE("compositional DGP --marginalise analytic: the same q(f) as sampling u") {
  // Integrating the inducing outputs out (eqs. 15-17, each layer's q(u_l) conditioned on the
  // layers drawn before it) must leave the distribution of every layer's outputs as sampling u
  // does, for a q with strong cross-layer correlation: each layer's mean and variance at every
  // point, the expected log-likelihood, and Cov(f_1, f_L) at each point, within 4 standard errors
  // of 40,000 draws each. At 2 and 3 layers (the conditioning of u runs once and twice).
  const arma::mat X = arma::vec{-1.1, -0.4, 0.05, 0.6, 1.3};
  const Tiny d = tiny_data(5, 1, 3);
  const size_t M = 4, n = 40000;
  for (const size_t L : {size_t(2), size_t(3)}) {
    CAPTURE(L);
    CdgpConfig c = small("jointly-gaussian", L, true);
    dkp::random::Stream i1(5), i2(5);
    CdgpConfig ca = c;
    ca.analytic = true;
    const CompositionalDgp sampled(c, i1), analytic(ca, i2);
    ParamMap p = jiggle(sampled.initial_parameters(), 31, 0.3);
    // A factor with cross-layer blocks as large as the diagonal ones.
    dkp::random::Stream fs(32);
    p["q.S"] = arma::trimatl(0.5 * dkp::random::normal_matrix(fs, L * M, L * M)) +
               0.3 * arma::eye(L * M, L * M);
    for (size_t l = 1; l <= L; ++l) p["layer" + std::to_string(l) + ".log_alpha"].fill(0.3);
    auto draws = [&](const CompositionalDgp& model, uint64_t seed) {
      dkp::random::Stream r(seed);
      return model.predict(p, X, n, r, true);
    };
    const auto ps = draws(sampled, 41), pa = draws(analytic, 42);
    // Layer l's draws (n columns), l = 1 .. L.
    auto layer = [&](const dkp::models::Predictive& pr, size_t l) {
      arma::mat F(X.n_rows, n);
      for (size_t s = 0; s < n; ++s) {
        if (l == L)
          F.col(s) = pr.mean.col(s);
        else
          F.col(s) = pr.hidden[s][l - 1];
      }
      return F;
    };
    for (size_t l = 1; l <= L; ++l) {
      CAPTURE(l);
      const arma::mat Fs = layer(ps, l), Fa = layer(pa, l);
      for (arma::uword i = 0; i < X.n_rows; ++i) {
        CAPTURE(i);
        const double vs = arma::var(Fs.row(i)), va = arma::var(Fa.row(i));
        const double ms = arma::mean(Fs.row(i)), ma = arma::mean(Fa.row(i));
        CHECK(std::abs(ms - ma) < 4.0 * std::sqrt((vs + va) / double(n)));
        // The variances' standard errors from the squared deviations (the outputs of a
        // composition are not normal, so not var sqrt(2 / (n - 1))).
        const double ss = arma::var(arma::square(Fs.row(i) - ms)),
                     sa = arma::var(arma::square(Fa.row(i) - ma));
        CHECK(std::abs(vs - va) < 4.0 * std::sqrt((ss + sa) / double(n)));
      }
    }
    // Cov(f_1(x_i), f_L(x_i)): the cross-layer dependence the conditioning of u carries.
    const arma::mat F1s = layer(ps, 1), FLs = layer(ps, L), F1a = layer(pa, 1), FLa = layer(pa, L);
    for (arma::uword i = 0; i < X.n_rows; ++i) {
      CAPTURE(i);
      const arma::rowvec as =
          (F1s.row(i) - arma::mean(F1s.row(i))) % (FLs.row(i) - arma::mean(FLs.row(i)));
      const arma::rowvec aa =
          (F1a.row(i) - arma::mean(F1a.row(i))) % (FLa.row(i) - arma::mean(FLa.row(i)));
      const double se = std::sqrt((arma::var(as) + arma::var(aa)) / double(n));
      CHECK(std::abs(arma::mean(as) - arma::mean(aa)) < 4.0 * se);
    }
    // The expected log-likelihood of the ELBO: 100 estimates of 200 samples each.
    auto ell = [&](const CompositionalDgp& model, uint64_t seed) {
      dkp::random::Stream r(seed);
      arma::vec e(100);
      for (arma::uword k = 0; k < e.n_elem; ++k) {
        dkp::autodiff::Tape tape;
        const auto v = dkp::autodiff::to_vars(tape, p, false);
        e[k] = model.elbo(v, d.X, d.y, double(d.X.n_rows), 200, 1.0, r).expected_loglik;
      }
      return e;
    };
    const arma::vec es = ell(sampled, 51), ea = ell(analytic, 52);
    CHECK(std::abs(arma::mean(es) - arma::mean(ea)) <
          4.0 * std::sqrt((arma::var(es) + arma::var(ea)) / double(es.n_elem)));
  }
}

TEST_CASE("compositional DGP --marginalise analytic: zero cross-layer blocks are mean field") {
  // With q's cross-layer blocks at 0 the analytic jointly Gaussian posterior is the mean-field
  // model: the same draws (the same noise, drawn in the same order) and the same KL, so the same
  // ELBO estimate at the same parameters, to round-off. So with mf_until it trains as the
  // mean-field cell until then and the jointly Gaussian posterior starts from that cell's point.
  const Tiny d = tiny_data(20, 1, 3);
  const size_t M = 4;
  for (const size_t L : {size_t(1), size_t(2), size_t(3)}) {
    CAPTURE(L);
    CdgpConfig cm = small("dsvi", L, true), cj = small("jointly-gaussian", L, true);
    cm.jitter = cj.jitter = 1e-3;
    cj.analytic = true;
    dkp::random::Stream i1(5), i2(5);
    const CompositionalDgp mf(cm, i1), jg(cj, i2);
    ParamMap p = jiggle(mf.initial_parameters(), 13, 0.2);
    ParamMap q = with_shared(jg.initial_parameters(), p);
    arma::vec m(L * M);
    arma::mat S(L * M, L * M, arma::fill::zeros);
    for (size_t l = 1; l <= L; ++l) {
      const std::string k = "layer" + std::to_string(l) + ".";
      p[k + "S"] = arma::trimatl(p.at(k + "S")) + 0.3 * arma::eye(M, M);
      m.subvec((l - 1) * M, l * M - 1) = p.at(k + "m");
      S.submat((l - 1) * M, (l - 1) * M, l * M - 1, l * M - 1) = p.at(k + "S");
    }
    q["q.m"] = m;
    q["q.S"] = S;
    auto estimate = [&](const CompositionalDgp& model, const ParamMap& at) {
      dkp::autodiff::Tape tape;
      const auto v = dkp::autodiff::to_vars(tape, at, false);
      dkp::random::Stream r(77);
      const auto e = model.elbo(v, d.X, d.y, 20.0, 3, 1.0, r);
      return std::array<double, 3>{e.elbo.scalar(), e.expected_loglik, e.kl};
    };
    const auto a = estimate(mf, p), b = estimate(jg, q);
    for (int i = 0; i < 3; ++i) CHECK(b[i] == doctest::Approx(a[i]).epsilon(1e-10));
    // A cross block moves it (L > 1).
    q["q.S"](L * M - 1, 0) = 0.5;
    if (L > 1) CHECK(std::abs(estimate(jg, q)[1] - a[1]) > 1e-6);
  }
}
