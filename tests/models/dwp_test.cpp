// Deep Wishart process: ELBO gradients at a fixed noise draw for every parameter and posterior,
// sticking-the-landing, prior equivalence with the DGP prior, Q = P gives zero KL, predictions and
// the factory.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "autodiff/gradcheck.hpp"
#include "model_test_support.hpp"
#include "models/dwp.hpp"
#include "models/factory.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace ad = dkp::autodiff;
using dkp::autodiff::ParamMap;
using dkp::layers::WishartPosterior;
using dkp::models::Dwp;
using dkp::models::DwpConfig;

using dkp::test::elbo_function;
using dkp::test::jiggled;
using dkp::test::Tiny;
using dkp::test::tiny_data;

namespace {

const WishartPosterior kPosteriors[] = {WishartPosterior::Gw, WishartPosterior::Agw,
                                        WishartPosterior::Abgw};

// A parameter name is "layer<l>.<name>": whether it ends with `suffix`.
bool has_suffix(const std::string& name, const std::string& suffix) {
  return name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_bartlett_param(const std::string& name) {
  for (const char* s : {".log_alpha", ".log_beta", ".mu", ".log_sigma"})
    if (has_suffix(name, s)) return true;
  return false;
}

struct Shape {
  size_t depth, width;
};

// Depth 3, width 3 (nu < P), P = 4 inducing points, q = sigmoid(-1) so that V matters.
DwpConfig depth3_config(WishartPosterior post) {
  DwpConfig cfg;
  cfg.depth = 3;
  cfg.width = 3;
  cfg.inducing = 4;
  cfg.posterior = post;
  cfg.logit_q_init = -1.0;
  return cfg;
}

}  // namespace

TEST_CASE("DWP ELBO gradients match finite differences for every parameter (all posteriors)") {
  // P = 4 inducing points, 2 input features; widths below (nu < P), equal to and above P.
  const Shape shapes[] = {{1, 0}, {2, 2}, {2, 6}, {3, 3}, {3, 5}};
  for (WishartPosterior post : kPosteriors) {
    for (const Shape& sh : shapes) {
      CAPTURE(dkp::layers::to_string(post));
      CAPTURE(sh.depth);
      CAPTURE(sh.width);
      const Tiny data = tiny_data(7, 2, dkp::test::seed() + sh.depth);
      DwpConfig cfg;
      cfg.depth = sh.depth;
      cfg.width = sh.width;
      cfg.inducing = 4;
      cfg.posterior = post;
      cfg.log_prec_init = 0.0;
      cfg.logit_q_init = -1.0;           // V matters
      cfg.q_jitter = 0.0;                // its max(Psi) scale is not differentiated (by design)
      cfg.sticking_the_landing = false;  // the gradient of the estimate itself
      cfg.gamma_method = dkp::distributions::GammaMethod::Inversion;  // smooth in alpha, beta
      dkp::random::Stream init(dkp::test::seed());
      const Dwp model(cfg, data.X, data.y, init);
      const auto c = dkp::test::check_elbo_gradient(model, data, dkp::test::seed() + 99);
      INFO(c.result.detail);
      CHECK(c.result.ok);
    }
  }
}

namespace {

// A reparameterisation x = c Phi of the parameters named *`suffix` (every hidden layer's), Phi the
// stored parameter of the `scaled` model: it initialises Phi = x / c (the same draws), gives the
// same ELBO estimate at Phi = x / c, and Phi's gradient is c times x's; every other parameter's
// is unchanged.
void check_reparameterised(const DwpConfig& cfg, const DwpConfig& scaled, const std::string& suffix,
                           double c) {
  const Tiny data = tiny_data(7, 2, 11);
  dkp::random::Stream init1(4), init2(4);
  const Dwp plain(cfg, data.X, data.y, init1);
  const Dwp sc(scaled, data.X, data.y, init2);
  std::vector<std::string> names;
  std::vector<arma::mat> values;
  jiggled(plain.initial_parameters(), 23, names, values);
  const auto selected = [&suffix](const std::string& name) { return has_suffix(name, suffix); };
  std::vector<arma::mat> phi_values = values;
  size_t n_selected = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!selected(names[i])) continue;
    phi_values[i] = values[i] / c;
    CHECK(arma::approx_equal(sc.initial_parameters().at(names[i]),
                             plain.initial_parameters().at(names[i]) / c, "reldiff", 1e-14));
    ++n_selected;
  }
  CHECK(n_selected == cfg.depth - 1);  // one per hidden layer
  const double e1 = ad::evaluate(elbo_function(plain, data, names, 31), values);
  const double e2 = ad::evaluate(elbo_function(sc, data, names, 31), phi_values);
  CHECK(e2 == doctest::Approx(e1).epsilon(1e-12));
  const auto g1 = ad::gradients(elbo_function(plain, data, names, 31), values);
  const auto g2 = ad::gradients(elbo_function(sc, data, names, 31), phi_values);
  for (size_t i = 0; i < names.size(); ++i) {
    CAPTURE(names[i]);
    const double f = selected(names[i]) ? c : 1.0;
    CHECK(arma::abs(g2[i] - f * g1[i]).max() <= 1e-9 * (1.0 + arma::abs(g1[i]).max()));
  }
}

}  // namespace

TEST_CASE("DWP --a-prime-scale c: the same model at A' = c Phi, Phi's gradient c times A''s") {
  for (WishartPosterior post : {WishartPosterior::Agw, WishartPosterior::Abgw}) {
    CAPTURE(dkp::layers::to_string(post));
    const DwpConfig cfg = depth3_config(post);
    DwpConfig scaled = cfg;
    scaled.a_prime_scale = 0.1;
    check_reparameterised(cfg, scaled, ".A_prime", 0.1);
  }
}

TEST_CASE("DWP --mu-param bayesfunc: mu = mu_raw / sqrt(m), mu_raw's gradient mu's / sqrt(m)") {
  for (WishartPosterior post : kPosteriors) {
    CAPTURE(dkp::layers::to_string(post));
    const DwpConfig cfg = depth3_config(post);  // nu = 3 < P = 4: m = 3
    DwpConfig raw = cfg;
    raw.mu_raw = true;
    check_reparameterised(cfg, raw, ".mu", 1.0 / std::sqrt(3.0));
  }
}

namespace {

bool is_mixing_param(const std::string& name) {
  return has_suffix(name, ".A_prime") || has_suffix(name, ".B");
}

// Two estimators of the same ELBO that differ by dropping a score term of log Q: `reduced` must
// give the exact gradient of the estimate for every parameter `dropped` does not select, the
// same gradient as `full` for those at every draw, and for the selected ones a difference that
// is not zero at a draw and zero in expectation (4.5 standard errors over 400 draws).
template <class Selected>
void check_score_dropped(const DwpConfig& full_cfg, const DwpConfig& reduced_cfg,
                         Selected dropped) {
  const Tiny data = tiny_data(7, 2, 5);
  dkp::random::Stream init1(3), init2(3);
  const Dwp reduced(reduced_cfg, data.X, data.y, init1);
  const Dwp full(full_cfg, data.X, data.y, init2);
  std::vector<std::string> names;
  std::vector<arma::mat> values;
  jiggled(reduced.initial_parameters(), 17, names, values);

  std::vector<size_t> others;
  for (size_t i = 0; i < names.size(); ++i)
    if (!dropped(names[i])) others.push_back(i);
  ad::Tolerances tol;
  tol.rel = 1e-5;
  const auto r = ad::check_gradient(elbo_function(reduced, data, names, 777), values, tol, others);
  INFO(r.detail);
  CHECK(r.ok);

  const size_t n = 400;
  std::vector<arma::mat> sum, sumsq;
  for (size_t i = 0; i < names.size(); ++i) {
    sum.push_back(arma::zeros(values[i].n_rows, values[i].n_cols));
    sumsq.push_back(arma::zeros(values[i].n_rows, values[i].n_cols));
  }
  bool any_nonzero = false;
  for (size_t k = 0; k < n; ++k) {
    const auto gr = ad::gradients(elbo_function(reduced, data, names, 1000 + k), values);
    const auto gf = ad::gradients(elbo_function(full, data, names, 1000 + k), values);
    for (size_t i = 0; i < names.size(); ++i) {
      const arma::mat d = gf[i] - gr[i];
      if (!dropped(names[i])) {
        CHECK(arma::abs(d).max() <= 1e-9 * (1.0 + arma::abs(gf[i]).max()));
      } else if (arma::abs(d).max() > 1e-6) {
        any_nonzero = true;
      }
      sum[i] += d;
      sumsq[i] += arma::square(d);
    }
  }
  CHECK(any_nonzero);
  for (size_t i = 0; i < names.size(); ++i) {
    if (!dropped(names[i])) continue;
    const arma::mat mean = sum[i] / double(n);
    const arma::mat se = arma::sqrt((sumsq[i] / double(n) - arma::square(mean)) / double(n));
    for (arma::uword e = 0; e < mean.n_elem; ++e) {
      if (se[e] == 0.0) continue;  // entries Q does not read (upper triangles of mu, sigma, B)
      INFO(names[i] << "[" << e << "] mean " << mean[e] << " se " << se[e]);
      CHECK(std::abs(mean[e]) < 4.5 * se[e]);
    }
  }
}

}  // namespace

TEST_CASE(
    "DWP sticking the landing: only the Bartlett parameters' gradients change, by a "
    "zero-mean score term") {
  for (WishartPosterior post : kPosteriors) {
    CAPTURE(dkp::layers::to_string(post));
    DwpConfig cfg = depth3_config(post);
    cfg.q_jitter = 0.0;
    cfg.gamma_method = dkp::distributions::GammaMethod::Inversion;
    DwpConfig cfg_full = cfg;
    cfg.sticking_the_landing = true;
    cfg_full.sticking_the_landing = false;
    check_score_dropped(cfg_full, cfg, is_bartlett_param);
  }
}

TEST_CASE(
    "DWP sticking the landing on A' and B: only their gradients change, by a zero-mean score "
    "term") {
  for (WishartPosterior post : {WishartPosterior::Agw, WishartPosterior::Abgw}) {
    for (size_t width : {3, 5}) {  // nu < P (T is 4 x 3) and nu > P (4 x 4)
      CAPTURE(dkp::layers::to_string(post));
      CAPTURE(width);
      DwpConfig cfg = depth3_config(post);
      cfg.width = width;
      cfg.q_jitter = 0.0;
      cfg.gamma_method = dkp::distributions::GammaMethod::Inversion;
      cfg.sticking_the_landing = false;  // the Bartlett parameters' gradients exact too
      DwpConfig cfg_mixing = cfg;
      cfg_mixing.stl_mixing = true;
      check_score_dropped(cfg, cfg_mixing, is_mixing_param);
    }
  }
}

namespace {

// One draw of the DGP prior's hidden Gram matrices G_1, ..., G_{depth-1} at the points Xall
// (first P rows are the inducing points): the same SE kernels (ARD on the inputs in layer 1) and
// the same jitter on the inducing block as the DWP; features F_l ~ N(0, K_l) with nu columns,
// G_l = F_l F_l^T / nu.
std::vector<arma::mat> dgp_prior_grams(const arma::mat& Xall, size_t P, size_t depth, size_t nu,
                                       const ParamMap& p, double jitter, dkp::random::Stream& s) {
  std::vector<arma::mat> out;
  const size_t n = Xall.n_rows;
  arma::mat G = Xall * Xall.t() / double(Xall.n_cols);
  // For layer 1 use the ARD form on the inputs: R_ij = sum_d (x_id - x_jd)^2 / (nu0 l_d^2).
  for (size_t l = 1; l < depth; ++l) {
    const arma::mat log_ell = p.at(fmt::format("layer{}.log_lengthscale", l));
    const double h = std::exp(p.at(fmt::format("layer{}.log_variance", l))(0, 0));
    arma::mat K(n, n);
    if (l == 1) {
      arma::mat Xs = Xall;
      for (arma::uword d = 0; d < Xs.n_cols; ++d)
        Xs.col(d) /= std::exp(log_ell(0, d)) * std::sqrt(double(Xall.n_cols));
      for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j)
          K(i, j) = h * std::exp(-0.5 * arma::accu(arma::square(Xs.row(i) - Xs.row(j))));
    } else {
      const double ell2 = std::exp(2.0 * log_ell(0, 0));
      for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j)
          K(i, j) = h * std::exp(-0.5 * (G(i, i) + G(j, j) - 2.0 * G(i, j)) / ell2);
    }
    for (size_t i = 0; i < P; ++i) K(i, i) += jitter * h;
    const arma::mat L = arma::chol(K + 1e-12 * arma::eye(n, n), "lower");
    const arma::mat F = L * dkp::random::normal_matrix(s, n, nu);
    G = F * F.t() / double(nu);
    out.push_back(G);
  }
  return out;
}

}  // namespace

TEST_CASE("DWP prior: hidden Gram matrices agree in distribution with the DGP prior") {
  // P = 3 inducing points and one train point, depth 3 (two Wishart layers), nu < P and nu > P.
  const size_t P = 3, depth = 3, n_draws = 20000;
  for (size_t nu : {2, 5}) {
    CAPTURE(nu);
    const Tiny data = tiny_data(6, 2, 11);
    DwpConfig cfg;
    cfg.depth = depth;
    cfg.width = nu;
    cfg.inducing = P;
    dkp::random::Stream init(2);
    const Dwp model(cfg, data.X, data.y, init);
    ParamMap p = model.with_prior_posterior(model.initial_parameters());
    p["layer1.log_lengthscale"] = arma::mat{{0.2, -0.3}};
    p["layer1.log_variance"] = arma::mat(1, 1, arma::fill::value(0.3));
    p["layer2.log_lengthscale"] = arma::mat(1, 1, arma::fill::value(0.1));
    p["layer2.log_variance"] = arma::mat(1, 1, arma::fill::value(-0.2));
    const arma::mat Xt = data.X.rows(0, 0) + 0.4;  // one train point, not an inducing input
    const arma::mat Xall = arma::join_vert(p.at("inducing_inputs"), Xt);
    const size_t n = P + 1;

    // Moments of every entry of G_1 and G_2 (lower triangle incl. diagonal), both models.
    std::vector<arma::mat> s1(2, arma::zeros(n, n)), s2(2, arma::zeros(n, n)),
        s4(2, arma::zeros(n, n)), d1(2, arma::zeros(n, n)), d2(2, arma::zeros(n, n)),
        d4(2, arma::zeros(n, n));
    dkp::random::Stream rng_dwp(101), rng_dgp(202);
    for (size_t k = 0; k < n_draws; ++k) {
      const auto tr = model.trace(p, Xt, rng_dwp);
      REQUIRE(tr.features.size() == 2);
      const auto gd = dgp_prior_grams(Xall, P, depth, nu, p, cfg.jitter, rng_dgp);
      for (size_t l = 0; l < 2; ++l) {
        const arma::mat G = tr.features[l] * tr.features[l].t();
        s1[l] += G;
        s2[l] += arma::square(G);
        s4[l] += arma::square(arma::square(G));
        d1[l] += gd[l];
        d2[l] += arma::square(gd[l]);
        d4[l] += arma::square(arma::square(gd[l]));
      }
    }
    const double N = double(n_draws);
    for (size_t l = 0; l < 2; ++l) {
      for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j <= i; ++j) {
          CAPTURE(l + 1);
          CAPTURE(i);
          CAPTURE(j);
          const double ma = s1[l](i, j) / N, mb = d1[l](i, j) / N;
          const double va = s2[l](i, j) / N - ma * ma, vb = d2[l](i, j) / N - mb * mb;
          CHECK(std::abs(ma - mb) < 4.0 * std::sqrt((va + vb) / N));
          // Second moments: SE of a mean of G^2 from the fourth moment.
          const double qa = s2[l](i, j) / N, qb = d2[l](i, j) / N;
          const double wa = s4[l](i, j) / N - qa * qa, wb = d4[l](i, j) / N - qb * qb;
          CHECK(std::abs(qa - qb) < 4.0 * std::sqrt((wa + wb) / N));
        }
      }
    }
  }
}

TEST_CASE("DWP: posterior parameters equal to the prior's give log P - log Q = 0 at every sample") {
  const Tiny data = tiny_data(9, 2, 21);
  for (WishartPosterior post : kPosteriors) {
    for (size_t nu : {2, 3, 6}) {  // P = 4: nu < P and nu > P
      CAPTURE(dkp::layers::to_string(post));
      CAPTURE(nu);
      DwpConfig cfg;
      cfg.depth = 3;
      cfg.width = nu;
      cfg.inducing = 4;
      cfg.posterior = post;
      cfg.q_jitter = 0.0;
      dkp::random::Stream init(4);
      const Dwp model(cfg, data.X, data.y, init);
      const ParamMap prior = model.with_prior_posterior(model.initial_parameters());
      // A-GW / AB-GW: A' orthogonal (not triangular) and B = diag(+-1) leave Q = P, since
      // R T T^T R^T ~ W(I, nu) for orthogonal R; this exercises the |det A| and T-recovery terms.
      ParamMap rotated = prior;
      if (post != WishartPosterior::Gw) {
        dkp::random::Stream rs(8);
        for (size_t l = 1; l < cfg.depth; ++l) {
          arma::mat Qm, Rm;
          arma::qr(Qm, Rm, dkp::random::normal_matrix(rs, 4, 4));
          rotated[fmt::format("layer{}.A_prime", l)] = Qm;
          if (post == WishartPosterior::Abgw) {
            const size_t m = std::min<size_t>(4, nu);
            arma::mat Bm = arma::eye(m, m);
            Bm(0, 0) = -1.0;
            rotated[fmt::format("layer{}.B", l)] = Bm;
          }
        }
      }
      dkp::random::Stream rng(31);
      for (size_t k = 0; k < 20; ++k) {
        for (const ParamMap* pm : {&prior, static_cast<const ParamMap*>(&rotated)}) {
          const auto tr = model.trace(*pm, data.X, rng);
          REQUIRE(tr.layer_logpq.size() == 2);
          for (double lpq : tr.layer_logpq) CHECK(std::abs(lpq) < 1e-8);
        }
      }
      // Control: a posterior away from the prior gives a non-zero log P - log Q.
      ParamMap moved = prior;
      moved["layer1.logit_q"] = arma::zeros(1, 1);
      moved["layer2.log_sigma"] += 0.3;
      const auto tr = model.trace(moved, data.X, rng);
      CHECK(std::abs(tr.layer_logpq[0]) > 1e-3);
      CHECK(std::abs(tr.layer_logpq[1]) > 1e-3);
    }
  }
}

TEST_CASE("DWP predictions: one column per sample, finite, positive variances, seed-determined") {
  const Tiny data = tiny_data(30, 3, 1);
  for (WishartPosterior post : kPosteriors) {
    for (size_t width : {0, 12}) {  // nu = 3 < P = 10 and nu = 12 > P
      CAPTURE(dkp::layers::to_string(post));
      CAPTURE(width);
      DwpConfig cfg;
      cfg.depth = 3;
      cfg.width = width;
      cfg.inducing = 10;
      cfg.posterior = post;
      dkp::random::Stream init(3);
      const Dwp model(cfg, data.X, data.y, init);
      dkp::test::check_predictions(model, data.X, dkp::models::HiddenKind::Features, 2,
                                   width > 0 ? width : 3);
      // The ELBO estimate is finite too.
      ad::Tape tape;
      const auto vars = dkp::autodiff::to_vars(tape, model.initial_parameters(), true);
      dkp::random::Stream r3(5);
      const auto e = model.elbo(vars, data.X, data.y, 30.0, 3, 1.0, r3);
      CHECK(std::isfinite(e.elbo.scalar()));
      CHECK(std::isfinite(e.kl));
    }
  }
}

TEST_CASE(
    "DWP prediction skips log P - log Q but follows the ELBO's path: sample 0 (and its hidden "
    "features) = the trace") {
  // predict() runs forward() without the hidden layers' log densities; trace() runs it with them.
  // From the same stream, the first sample's draws and outputs must be the same, bit for bit.
  const Tiny data = tiny_data(30, 3, 1);
  for (WishartPosterior post : kPosteriors) {
    CAPTURE(dkp::layers::to_string(post));
    DwpConfig cfg;
    cfg.depth = 3;
    cfg.inducing = 10;
    cfg.posterior = post;
    dkp::random::Stream init(3);
    const Dwp model(cfg, data.X, data.y, init);
    const arma::mat X = data.X.rows(0, 6);
    dkp::random::Stream r1(11), r2(11);
    const auto pred = model.predict(model.initial_parameters(), X, 3, r1, true);
    const Dwp::Trace t = model.trace(model.initial_parameters(), X, r2);
    REQUIRE(t.f_mean.n_elem == X.n_rows);
    // The hidden layers' features at the points: the trace's rows after the P inducing rows.
    CHECK(pred.hidden_kind == dkp::models::HiddenKind::Features);
    REQUIRE(pred.hidden.size() == 3);
    REQUIRE(pred.hidden[0].size() == t.features.size());
    REQUIRE(t.features.size() == 2);
    for (size_t l = 0; l < t.features.size(); ++l) {
      CHECK(arma::approx_equal(pred.hidden[0][l], t.features[l].rows(cfg.inducing, 16), "absdiff",
                               0.0));
    }
    CHECK(arma::approx_equal(pred.mean.col(0), t.f_mean, "absdiff", 0.0));
    const double noise = std::exp(model.initial_parameters().at("likelihood.log_noise_var")(0, 0));
    CHECK(arma::approx_equal(pred.var.col(0), t.f_var + noise, "absdiff", 0.0));
    CHECK(std::isfinite(t.layer_logpq.at(0)));
    // The later samples are other draws.
    CHECK(arma::abs(pred.mean.col(1) - pred.mean.col(0)).max() > 0.0);
  }
}

TEST_CASE(
    "factory builds the DWP for gw, agw, abgw (empty: gw) and rejects other posteriors and STL on "
    "A' for the GW") {
  const Tiny data = tiny_data(20, 3, 2);
  dkp::models::ModelSpec spec;
  spec.model = "dwp";
  spec.depth = 2;
  spec.inducing = 5;
  for (const char* post : {"", "gw", "agw", "abgw"}) {
    CAPTURE(post);
    spec.posterior = post;
    dkp::random::Stream init(1);
    const auto m = dkp::models::make_model(spec, data.X, data.y, init);
    const std::string expected = std::string(*post ? post : "gw") + " posterior";
    CHECK(m->describe().find(expected) != std::string::npos);
    CHECK((m->initial_parameters().count("layer1.A_prime") == 1) ==
          (std::string(post) == "agw" || std::string(post) == "abgw"));
    CHECK((m->initial_parameters().count("layer1.B") == 1) == (std::string(post) == "abgw"));
  }
  spec.posterior = "iw";
  dkp::random::Stream init(1);
  CHECK_THROWS_AS(dkp::models::make_model(spec, data.X, data.y, init), dkp::ConfigError);
  spec.posterior = "gw";
  spec.kernel = "relu";
  CHECK_THROWS_AS(dkp::models::make_model(spec, data.X, data.y, init), dkp::ConfigError);
  spec.kernel = "se";
  spec.options.set("stl", "mixing");  // the GW has no A' or B
  CHECK_THROWS_WITH_AS(dkp::models::make_model(spec, data.X, data.y, init),
                       doctest::Contains("agw or abgw"), dkp::ConfigError);
  spec.posterior = "agw";
  CHECK_NOTHROW(dkp::models::make_model(spec, data.X, data.y, init));
  spec.options.reset("stl");
  spec.model = "dwpp";
  CHECK_THROWS_AS(dkp::models::make_model(spec, data.X, data.y, init), dkp::ConfigError);
}

TEST_CASE("DWP --freeze-a-prime: the A-GW and AB-GW with A' held at I are the GW") {
  // The same parameters (the GW's, as the frozen models have no A'; AB-GW's B at I) and the same
  // noise: the ELBO estimate and its gradients agree to round-off. A defect in the A-GW's
  // sampling or density that vanishes at A' = I would not show; one that does not, would.
  const Tiny data = tiny_data(7, 2, 13);
  DwpConfig gw_cfg = depth3_config(WishartPosterior::Gw);
  dkp::random::Stream init_gw(6);
  const Dwp gw(gw_cfg, data.X, data.y, init_gw);
  std::vector<std::string> names;
  std::vector<arma::mat> values;
  jiggled(gw.initial_parameters(), 29, names, values);
  const double e_gw = ad::evaluate(elbo_function(gw, data, names, 37), values);
  const auto g_gw = ad::gradients(elbo_function(gw, data, names, 37), values);
  for (WishartPosterior post : {WishartPosterior::Agw, WishartPosterior::Abgw}) {
    CAPTURE(dkp::layers::to_string(post));
    DwpConfig cfg = depth3_config(post);
    cfg.freeze_a_prime = true;
    dkp::random::Stream init(6);
    const Dwp frozen(cfg, data.X, data.y, init);
    for (const auto& [name, value] : frozen.initial_parameters()) {
      CAPTURE(name);
      CHECK(name.find("A_prime") == std::string::npos);
      if (has_suffix(name, ".B")) continue;  // AB-GW's B = I: the GW has none
      REQUIRE(gw.initial_parameters().count(name) == 1);
      CHECK(arma::approx_equal(value, gw.initial_parameters().at(name), "absdiff", 0.0));
    }
    // The frozen model's parameters: the GW's (jiggled), and B = I.
    std::vector<std::string> fnames = names;
    std::vector<arma::mat> fvalues = values;
    for (const auto& [name, value] : frozen.initial_parameters()) {
      if (has_suffix(name, ".B")) {
        fnames.push_back(name);
        fvalues.push_back(value);
      }
    }
    const double e = ad::evaluate(elbo_function(frozen, data, fnames, 37), fvalues);
    CHECK(e == doctest::Approx(e_gw).epsilon(1e-10));
    const auto g = ad::gradients(elbo_function(frozen, data, fnames, 37), fvalues);
    for (size_t i = 0; i < names.size(); ++i) {
      CAPTURE(names[i]);
      CHECK(arma::abs(g[i] - g_gw[i]).max() <= 1e-8 * (1.0 + arma::abs(g_gw[i]).max()));
    }
    // Learned A' (not frozen) at its start I gives the same estimate too, with A' as a parameter.
    DwpConfig learned = depth3_config(post);
    dkp::random::Stream init2(6);
    const Dwp agw(learned, data.X, data.y, init2);
    std::vector<std::string> lnames = fnames;
    std::vector<arma::mat> lvalues = fvalues;
    for (const auto& [name, value] : agw.initial_parameters()) {
      if (has_suffix(name, ".A_prime")) {
        lnames.push_back(name);
        lvalues.push_back(value);
      }
    }
    CHECK(ad::evaluate(elbo_function(agw, data, lnames, 37), lvalues) ==
          doctest::Approx(e_gw).epsilon(1e-10));
  }
}

TEST_CASE("DWP --gw-until K: the A-GW and AB-GW train as the GW for K steps, then learn A'") {
  // The same data, initial draws and noise: for K steps the A-GW (A' and B held at I) takes the
  // GW's steps to round-off (a held A' that leaked into Adam, or a different draw, would show at
  // once); after K its A' moves. The GW's parameters are the A-GW's without A' and B.
  const Tiny data = tiny_data(9, 2, 21);
  const size_t K = 4, steps = 7;
  auto train = [&](const DwpConfig& cfg, size_t n, std::vector<double>* elbos) {
    dkp::random::Stream init(5);
    const Dwp model(cfg, data.X, data.y, init);
    return dkp::test::short_train(model, data.X, data.y, n, 17, elbos);
  };
  std::vector<double> e_gw;
  train(depth3_config(WishartPosterior::Gw), steps, &e_gw);
  for (WishartPosterior post : {WishartPosterior::Agw, WishartPosterior::Abgw}) {
    CAPTURE(dkp::layers::to_string(post));
    DwpConfig cfg = depth3_config(post);
    cfg.gw_until = K;
    std::vector<double> e;
    const ParamMap at_k = train(cfg, K, nullptr);
    const ParamMap after = train(cfg, steps, &e);
    for (size_t l : {1, 2}) {
      const std::string a = dkp::autodiff::layer_key(l, "A_prime");
      CHECK(arma::approx_equal(at_k.at(a), arma::eye(4, 4), "absdiff", 0.0));
      CHECK(arma::abs(after.at(a) - arma::eye(4, 4)).max() > 1e-4);
    }
    REQUIRE(e.size() == steps);
    for (size_t t = 0; t < K; ++t) {
      CAPTURE(t);
      CHECK(e[t] == doctest::Approx(e_gw[t]).epsilon(1e-9));
    }
    // Control: learned from the start, the A-GW leaves the GW's path within K steps.
    DwpConfig free = depth3_config(post);
    std::vector<double> e_free;
    train(free, K, &e_free);
    CHECK(std::abs(e_free[K - 1] - e_gw[K - 1]) > 1e-6);
  }
}

TEST_CASE("DWP --a-prime-form unit-lower: A' = I + a strictly lower triangle, gradients checked") {
  const Tiny data = tiny_data(7, 2, 23);
  for (WishartPosterior post : {WishartPosterior::Agw, WishartPosterior::Abgw}) {
    CAPTURE(dkp::layers::to_string(post));
    DwpConfig cfg = depth3_config(post);
    cfg.a_prime_unit_lower = true;
    cfg.q_jitter = 0.0;
    cfg.sticking_the_landing = false;
    cfg.gamma_method = dkp::distributions::GammaMethod::Inversion;
    dkp::random::Stream init(dkp::test::seed());
    const Dwp model(cfg, data.X, data.y, init);
    // Gradients: only the strictly lower triangle of A''s parameter gets one.
    std::vector<std::string> names;
    std::vector<arma::mat> values;
    jiggled(model.initial_parameters(), 31, names, values);
    const auto g = ad::gradients(elbo_function(model, data, names, 41), values);
    for (size_t i = 0; i < names.size(); ++i) {
      if (!has_suffix(names[i], ".A_prime")) continue;
      CAPTURE(names[i]);
      CHECK(arma::abs(arma::trimatu(g[i])).max() == 0.0);
      CHECK(arma::abs(arma::trimatl(g[i], -1)).max() > 0.0);
    }
    const auto c = dkp::test::check_elbo_gradient(model, data, dkp::test::seed() + 7);
    INFO(c.result.detail);
    CHECK(c.result.ok);
    // At a parameter with a non-trivial diagonal, the unit-lower model's ELBO is the full
    // model's at I + the strictly lower part (the diagonal and upper triangle are ignored).
    DwpConfig full_cfg = cfg;
    full_cfg.a_prime_unit_lower = false;
    dkp::random::Stream init2(dkp::test::seed());
    const Dwp full(full_cfg, data.X, data.y, init2);
    std::vector<arma::mat> projected = values;
    for (size_t i = 0; i < names.size(); ++i)
      if (has_suffix(names[i], ".A_prime"))
        projected[i] = arma::eye(4, 4) + arma::trimatl(values[i], -1);
    CHECK(ad::evaluate(elbo_function(model, data, names, 41), values) ==
          doctest::Approx(ad::evaluate(elbo_function(full, data, names, 41), projected))
              .epsilon(1e-12));
  }
}
