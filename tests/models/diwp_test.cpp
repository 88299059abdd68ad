// NNGP and deep inverse Wishart process (models/nngp.hpp, models/diwp.hpp): gradient checks of
// the ELBO estimate w.r.t. every parameter at a fixed noise draw, the Q = P identity (zero
// log P - log Q at every sample), the log P of a Q sample against the direct inverse-Wishart
// density, the DIWP -> NNGP limit as delta grows, predictions and the factory.
#include <doctest/doctest.h>

#include <cmath>

#include "autodiff/gradcheck.hpp"
#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"
#include "distributions/inverse_wishart.hpp"
#include "layers/inverse_wishart.hpp"
#include "model_test_support.hpp"
#include "models/diwp.hpp"
#include "models/factory.hpp"
#include "models/nngp.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace ad = dkp::autodiff;
namespace dm = dkp::models;

using dkp::test::Tiny;
using dkp::test::tiny_data;

namespace {

dm::DiwpConfig tiny_config(size_t depth, const std::string& kernel, size_t inducing) {
  dm::DiwpConfig cfg;
  cfg.depth = depth;
  cfg.kernel = kernel;
  cfg.inducing = inducing;
  return cfg;
}

}  // namespace

TEST_CASE("NNGP ELBO gradients match finite differences for every parameter") {
  for (const std::string kernel : {"relu", "se"}) {
    for (size_t depth : {2, 3, 4}) {
      CAPTURE(kernel);
      CAPTURE(depth);
      const Tiny data = tiny_data(7, 2, dkp::test::seed() + depth);
      dm::GramModelConfig cfg = tiny_config(depth, kernel, 4);
      cfg.log_prec_init = 0.0;  // a posterior that differs from the prior
      dkp::random::Stream init(dkp::test::seed());
      const dm::Nngp model(cfg, data.X, data.y, init);
      dkp::test::expect_elbo_gradient(model, data, dkp::test::seed() + 99);
    }
  }
}

TEST_CASE("DIWP ELBO gradients match finite differences for every parameter") {
  for (const std::string kernel : {"relu", "se"}) {
    for (size_t depth : {2, 3, 4}) {
      CAPTURE(kernel);
      CAPTURE(depth);
      const Tiny data = tiny_data(7, 2, dkp::test::seed() + depth);
      dm::DiwpConfig cfg = tiny_config(depth, kernel, 4);
      cfg.log_prec_init = 0.0;
      // Inversion draws make every Gamma variate a smooth function of its shape at a fixed seed.
      cfg.gamma_method = dkp::distributions::GammaMethod::Inversion;
      dkp::random::Stream init(dkp::test::seed());
      const dm::Diwp model(cfg, data.X, data.y, init);
      // Every parameter family is present.
      for (size_t l = 1; l < depth; ++l) {
        CHECK(model.initial_parameters().count(dm::layer_key(l, "log_delta")) == 1);
        CHECK(model.initial_parameters().count(dm::layer_key(l, "log_gamma")) == 1);
        CHECK(model.initial_parameters().count(dm::layer_key(l, "V")) == 1);
      }
      dkp::test::expect_elbo_gradient(model, data, dkp::test::seed() + 98);
    }
  }
}

TEST_CASE(
    "DIWP with Q = P (V = 0, gamma = 0, no pseudo-likelihood) has log P - log Q = 0 at "
    "every sample") {
  const Tiny data = tiny_data(20, 3, dkp::test::seed() + 7);
  for (const std::string kernel : {"relu", "se"}) {
    for (size_t depth : {2, 3, 4}) {
      CAPTURE(kernel);
      CAPTURE(depth);
      dkp::random::Stream init(dkp::test::seed());
      const dm::Diwp model(tiny_config(depth, kernel, 8), data.X, data.y, init);
      dm::ParamMap p = model.initial_parameters();
      dkp::random::Stream jiggle(dkp::test::seed() + 5);
      for (size_t l = 1; l < depth; ++l) {
        p[dm::layer_key(l, "V")].zeros();
        p[dm::layer_key(l, "log_gamma")].fill(-1000.0);  // gamma = exp(-1000) = 0 exactly
        p[dm::layer_key(l, "log_delta")].fill(std::log(0.5 + 3.0 * dkp::random::uniform(jiggle)));
      }
      // GIGP with L = 0: q(u) is the prior, so its log p(u) - log q(u) vanishes too.
      p[dm::layer_key(depth, "L_scale")].fill(-1000.0);
      for (uint64_t seed = 0; seed < 5; ++seed) {
        ad::Tape tape;
        const dm::VarMap v = dm::to_vars(tape, p, false);
        dkp::random::Stream noise(seed);
        const auto e = model.elbo(v, data.X, data.y, /*n_train=*/1.0, /*samples=*/1, 1.0, noise);
        CAPTURE(seed);
        CHECK(std::abs(e.kl) < 1e-8);
      }
      // Not vacuous: with the initial V and gamma, Q differs from P and the estimate is not 0.
      ad::Tape tape;
      dkp::random::Stream noise(1);
      for (size_t l = 1; l < depth; ++l) {
        p[dm::layer_key(l, "V")] = model.initial_parameters().at(dm::layer_key(l, "V"));
        p[dm::layer_key(l, "log_gamma")].zeros();
      }
      const auto e = model.elbo(dm::to_vars(tape, p, false), data.X, data.y, 1.0, 1, 1.0, noise);
      CHECK(std::abs(e.kl) > 1e-4);
    }
  }
}

TEST_CASE("DIWP layers: log P of the Q sample equals the inverse-Wishart density at G") {
  dkp::random::Stream s(dkp::test::seed() + 11);
  const size_t P = 6, B = 3;
  const double log_delta = 0.7, log_gamma = 0.2;
  SUBCASE("hidden layer") {
    const arma::mat Z = dkp::random::normal_matrix(s, P + B, 2);
    ad::Tape tape;
    const auto G0 = dkp::kernels::features_to_gram(tape.constant(Z.rows(0, P - 1)),
                                                   tape.constant(Z.rows(P, P + B - 1)), 2.0);
    const auto K = dkp::kernels::se_gram(G0, tape.constant(0.0), tape.constant(0.0), 1e-4);
    const arma::mat V = dkp::random::normal_matrix(s, P, P);
    dkp::random::Stream noise(3);
    const auto out =
        dkp::layers::iw_hidden_layer(K, tape.constant(log_delta), tape.constant(log_gamma),
                                     dkp::layers::iw_v_term(tape.constant(V)), noise,
                                     dkp::distributions::GammaMethod::Rejection, false);
    const double delta = std::exp(log_delta);
    const arma::mat L_p = std::sqrt(delta) * arma::chol(K.ii.val(), "lower");
    const double direct =
        dkp::distributions::inverse_wishart_log_prob(
            tape.constant(out.G.ii.val()), tape.constant(L_p), tape.constant(delta + P + 1.0))
            .scalar();
    CHECK(out.log_p.scalar() == doctest::Approx(direct).epsilon(1e-9));
    // And log Q against the density of Q at G.
    const arma::mat L_q = arma::chol(delta * K.ii.val() + V * V.t() / double(P), "lower");
    const double direct_q = dkp::distributions::inverse_wishart_log_prob(
                                tape.constant(out.G.ii.val()), tape.constant(L_q),
                                tape.constant(delta + std::exp(log_gamma) + P + 1.0))
                                .scalar();
    CHECK(out.log_q.scalar() == doctest::Approx(direct_q).epsilon(1e-9));
    CHECK(out.G.it.n_rows() == P);
    CHECK(out.G.it.n_cols() == B);
    CHECK(out.G.tt.n_rows() == B);
  }
  SUBCASE("input layer (Omega recovered from G_ii with identity inducing features)") {
    const size_t N0 = 4;
    ad::Tape tape;
    const arma::mat V = dkp::random::normal_matrix(s, N0, N0);
    const arma::mat Xt = dkp::random::normal_matrix(s, B, N0);
    dkp::random::Stream noise(4);
    const auto out = dkp::layers::iw_input_layer(
        tape.constant(arma::eye(N0, N0)), tape.constant(Xt), tape.constant(log_delta),
        tape.constant(log_gamma), dkp::layers::iw_v_term(tape.constant(V)), noise,
        dkp::distributions::GammaMethod::Rejection);
    const arma::mat Omega = double(N0) * out.G.ii.val();  // G_ii = I Omega I / N0
    const double delta = std::exp(log_delta);
    const double direct =
        dkp::distributions::inverse_wishart_log_prob(
            tape.constant(arma::symmatl(Omega)),
            tape.constant(std::sqrt(delta) * arma::eye(N0, N0)), tape.constant(delta + N0 + 1.0))
            .scalar();
    CHECK(out.log_p.scalar() == doctest::Approx(direct).epsilon(1e-9));
    // The train/test blocks are exact: G_it = Omega Xt^T / N0, g_tt = diag(Xt Omega Xt^T) / N0.
    CHECK(arma::approx_equal(out.G.it.val(), Omega * Xt.t() / double(N0), "absdiff", 1e-10));
    CHECK(arma::approx_equal(
        out.G.tt.val(), arma::mat(arma::sum((Xt * Omega) % Xt, 1) / double(N0)), "absdiff", 1e-10));
  }
}

TEST_CASE(
    "DIWP hidden layer under the prior (V = 0, gamma = 0): E[G] = K(G_prev) on every block "
    "(Monte Carlo), and the reference batch dof biases g_tt") {
  const size_t P = 5, B = 3, n = 20000;
  dkp::random::Stream s(dkp::test::seed() + 17);
  arma::mat Z = dkp::random::normal_matrix(s, P + B, 2);
  Z.rows(P, P + B - 1) += 1.5;  // train/test points away from the inducing points: k_tt.i ~ k_tt
  ad::Tape tape0;
  const auto G0 = dkp::kernels::features_to_gram(tape0.constant(Z.rows(0, P - 1)),
                                                 tape0.constant(Z.rows(P, P + B - 1)), 2.0);
  const auto K = dkp::kernels::se_gram(G0, tape0.constant(0.0), tape0.constant(0.0), 1e-4);
  const double log_delta = std::log(20.0);  // finite variances of every entry
  auto draw = [&](bool reference_dof, uint64_t seed, arma::mat& ii, arma::mat& it, arma::mat& tt) {
    ii.zeros(P * P, n);
    it.zeros(P * B, n);
    tt.zeros(B, n);
    dkp::random::Stream noise(seed);
    for (size_t k = 0; k < n; ++k) {
      ad::Tape tape;
      const dkp::kernels::GramBlocks Kc{tape.constant(K.ii.val()), tape.constant(K.it.val()),
                                        tape.constant(K.tt.val())};
      const auto out = dkp::layers::iw_hidden_layer(
          Kc, tape.constant(log_delta), tape.constant(-1000.0), tape.constant(arma::zeros(P, P)),
          noise, dkp::distributions::GammaMethod::Rejection, reference_dof);
      ii.col(k) = arma::vectorise(out.G.ii.val());
      it.col(k) = arma::vectorise(out.G.it.val());
      tt.col(k) = out.G.tt.val();
    }
  };
  auto within = [&](const arma::mat& draws, const arma::mat& expect, double z) {
    const arma::vec m = arma::mean(draws, 1), se = arma::stddev(draws, 0, 1) / std::sqrt(double(n));
    const arma::vec e = arma::vectorise(expect);
    bool ok = true;
    for (arma::uword j = 0; j < e.n_elem; ++j) {
      if (std::abs(m[j] - e[j]) > z * se[j]) {
        ok = false;
        MESSAGE("entry " << j << ": mean " << m[j] << " expected " << e[j] << " se " << se[j]);
      }
    }
    return ok;
  };
  arma::mat ii, it, tt;
  draw(false, 5, ii, it, tt);
  CHECK(within(ii, K.ii.val(), 5.0));
  CHECK(within(it, K.it.val(), 5.0));
  CHECK(within(tt, K.tt.val(), 5.0));
  // With nu_t = delta + P + B + 1 (reference code) the Schur complements shrink by
  // (delta + P) / (delta + P + B - 1) = 25 / 27 on average, so E[g_tt] < k_tt.
  draw(true, 6, ii, it, tt);
  const arma::vec m = arma::mean(tt, 1), se = arma::stddev(tt, 0, 1) / std::sqrt(double(n));
  CHECK(arma::any(m < K.tt.val().col(0) - 5.0 * se));
}

TEST_CASE(
    "DIWP -> NNGP: the gaps of the predictive mean and of the hidden Gram rows shrink "
    "monotonically as delta grows") {
  const Tiny data = tiny_data(40, 3, dkp::test::seed() + 13);
  const arma::mat Xtest = data.X.rows(0, 9) + 0.3;
  for (const std::string kernel : {"relu", "se"}) {
    for (size_t depth : {3, 4}) {
      CAPTURE(kernel);
      CAPTURE(depth);
      const dm::DiwpConfig cfg = tiny_config(depth, kernel, 10);
      dkp::random::Stream i1(dkp::test::seed()), i2(dkp::test::seed());
      const dm::Nngp nngp(cfg, data.X, data.y, i1);
      const dm::Diwp diwp(cfg, data.X, data.y, i2);
      // A tight pseudo-likelihood makes u nearly deterministic (u ~ v), so that the gap measures
      // the Gram matrices' randomness, not the output layer's.
      dm::ParamMap pn = nngp.initial_parameters();
      pn[dm::layer_key(depth, "L_scale")].fill(8.0);
      const size_t S = 20;
      dkp::random::Stream rn(21);
      const dm::Predictive pred_nngp = nngp.predict(pn, Xtest, S, rn, true);
      const arma::vec mean_nngp = arma::mean(pred_nngp.mean, 1);
      // The NNGP's hidden Gram rows: deterministic, and G_1 = X X^T / N0 at the initial input
      // layer (scale 1, bias 0), so its row is [|x|^2, x^T z_1, ..] / N0.
      REQUIRE(pred_nngp.hidden.size() == S);
      REQUIRE(pred_nngp.hidden[0].size() == depth - 1);
      const arma::mat& Z = pn.at("inducing_inputs");
      const arma::mat G1 = arma::join_horiz(arma::sum(arma::square(Xtest), 1), Xtest * Z.t()) / 3.0;
      CHECK(arma::approx_equal(pred_nngp.hidden[0][0], G1, "absdiff", 1e-12));
      for (size_t s = 1; s < S; ++s) {
        for (size_t l = 0; l + 1 < depth; ++l) {
          CHECK(arma::approx_equal(pred_nngp.hidden[s][l], pred_nngp.hidden[0][l], "absdiff", 0.0));
        }
      }
      std::vector<double> gaps, hidden_gaps;
      for (double delta : {1e1, 1e3, 1e5}) {
        dm::ParamMap pd = diwp.initial_parameters();
        for (const auto& [name, v] : pn) {
          REQUIRE(pd.count(name) == 1);  // shared parameters have the same names
          pd[name] = v;
        }
        for (size_t l = 1; l < depth; ++l) pd[dm::layer_key(l, "log_delta")].fill(std::log(delta));
        dkp::random::Stream rd(22);
        const auto pred = diwp.predict(pd, Xtest, S, rd, true);
        REQUIRE(pred.mean.is_finite());
        gaps.push_back(arma::abs(arma::mean(pred.mean, 1) - mean_nngp).max());
        // Every hidden Gram layer's rows (mean over the samples) approach the NNGP's.
        double hg = 0.0;
        for (size_t l = 0; l + 1 < depth; ++l) {
          arma::mat mean_rows(arma::size(pred_nngp.hidden[0][l]), arma::fill::zeros);
          for (size_t s = 0; s < S; ++s) mean_rows += pred.hidden.at(s).at(l) / double(S);
          hg = std::max(hg, arma::abs(mean_rows - pred_nngp.hidden[0][l]).max());
        }
        hidden_gaps.push_back(hg);
      }
      INFO("gaps at delta = 1e1, 1e3, 1e5: " << gaps[0] << " " << gaps[1] << " " << gaps[2]);
      INFO("hidden Gram gaps: " << hidden_gaps[0] << " " << hidden_gaps[1] << " "
                                << hidden_gaps[2]);
      CHECK(gaps[1] < gaps[0]);
      CHECK(gaps[2] < gaps[1]);
      CHECK(gaps[2] < 0.02);
      // The Gram samples' spread falls as 1 / sqrt(delta): 10x per step here.
      CHECK(hidden_gaps[1] < 0.3 * hidden_gaps[0]);
      CHECK(hidden_gaps[2] < 0.3 * hidden_gaps[1]);
      CHECK(hidden_gaps[2] < 0.02);
    }
  }
}

TEST_CASE("DIWP -> NNGP: with Q = P and a large delta the ELBO is the NNGP's") {
  // The NNGP is the delta -> infinity limit of the DIWP (DKP paper sec. 7), so the DIWP's best
  // ELBO is at least the NNGP's: at Q = P (V = 0, gamma -> 0) the KL term of the inverse Wishart
  // layers is zero and the Gram samples tend to K. The two models draw the output layer's noise
  // from different positions of the stream, so the ELBOs are compared as Monte Carlo means: 10000
  // one-sample estimates each, within 4 standard errors (about 0.02 nats).
  const Tiny data = tiny_data(40, 3, dkp::test::seed() + 17);
  const size_t depth = 3, R = 10000;
  const dm::DiwpConfig cfg = tiny_config(depth, "relu", 10);
  dkp::random::Stream i1(dkp::test::seed()), i2(dkp::test::seed());
  const dm::Nngp nngp(cfg, data.X, data.y, i1);
  const dm::Diwp diwp(cfg, data.X, data.y, i2);
  const dm::ParamMap pn = nngp.initial_parameters();
  auto draws = [&](const dm::Model& m, const dm::ParamMap& p) {
    arma::vec e(R);
    for (size_t r = 0; r < R; ++r) {
      ad::Tape tape;
      dkp::random::Stream s(1000 + r);
      e[r] = m.elbo(dm::to_vars(tape, p, false), data.X, data.y, 40.0, 1, 1.0, s).elbo.scalar();
    }
    return e;
  };
  const arma::vec en = draws(nngp, pn);
  dm::ParamMap pd = diwp.initial_parameters();
  for (const auto& [name, v] : pn) pd[name] = v;
  for (size_t l = 1; l < depth; ++l) {
    pd[dm::layer_key(l, "log_delta")].fill(std::log(1e6));
    pd[dm::layer_key(l, "log_gamma")].fill(-40.0);
    pd[dm::layer_key(l, "V")].zeros();
  }
  const arma::vec ed = draws(diwp, pd);
  const double se = std::sqrt(arma::var(en) / double(R) + arma::var(ed) / double(R));
  INFO("NNGP " << arma::mean(en) << ", DIWP " << arma::mean(ed) << ", se " << se);
  CHECK(se > 0.0);
  CHECK(std::abs(arma::mean(ed) - arma::mean(en)) < 4.0 * se);
}

TEST_CASE(
    "DIWP --diwp-omega-v paper: Q(Omega) = IW(delta I + V V^T), the model with V / sqrt(N0) "
    "by default's scaling") {
  // The two scalings are one family: V_1 V_1^T (paper) at V_1 equals V_1' V_1'^T / N0 (ours) at
  // V_1' = sqrt(N0) V_1. So the paper's model at V equals ours at sqrt(N0) V, sample by sample
  // (the same noise stream), and differs from ours at V (not vacuous).
  const Tiny data = tiny_data(15, 3, dkp::test::seed() + 23);
  for (const std::string kernel : {"relu", "se"}) {
    CAPTURE(kernel);
    dm::DiwpConfig cfg = tiny_config(3, kernel, 6);
    cfg.log_prec_init = 0.0;
    dkp::random::Stream i1(dkp::test::seed()), i2(dkp::test::seed());
    const dm::Diwp ours(cfg, data.X, data.y, i1);
    cfg.omega_v_paper = true;
    const dm::Diwp paper(cfg, data.X, data.y, i2);
    const dm::ParamMap p = paper.initial_parameters();
    CHECK(arma::approx_equal(p.at(dm::layer_key(1, "V")),
                             ours.initial_parameters().at(dm::layer_key(1, "V")), "absdiff", 0.0));
    dm::ParamMap scaled = p;
    const double n0 = double(data.X.n_cols);
    scaled[dm::layer_key(1, "V")] *= std::sqrt(n0);
    auto elbo = [&](const dm::Diwp& m, const dm::ParamMap& q, uint64_t seed) {
      ad::Tape tape;
      dkp::random::Stream noise(seed);
      return m.elbo(dm::to_vars(tape, q, false), data.X, data.y, 15.0, 2, 1.0, noise).elbo.scalar();
    };
    for (uint64_t seed = 0; seed < 3; ++seed) {
      CAPTURE(seed);
      const double e_paper = elbo(paper, p, seed);
      CHECK(std::isfinite(e_paper));
      CHECK(e_paper == doctest::Approx(elbo(ours, scaled, seed)).epsilon(1e-9));
      CHECK(std::abs(e_paper - elbo(ours, p, seed)) > 1e-3);
    }
  }
  // The option reaches the model through the factory: the same spec but for it gives another
  // ELBO at the same initial parameters and noise.
  auto factory_elbo = [&](bool omega_v_paper) {
    dm::ModelSpec spec;
    spec.model = "diwp";
    spec.kernel = "relu";
    spec.depth = 3;
    spec.inducing = 6;
    spec.options.set("diwp_omega_v", omega_v_paper ? "paper" : "n0");
    dkp::random::Stream init(dkp::test::seed());
    const auto m = dm::make_model(spec, data.X, data.y, init);
    ad::Tape tape;
    dkp::random::Stream noise(7);
    return m
        ->elbo(dm::to_vars(tape, m->initial_parameters(), false), data.X, data.y, 15.0, 1, 1.0,
               noise)
        .elbo.scalar();
  };
  CHECK(std::abs(factory_elbo(true) - factory_elbo(false)) > 1e-3);
}

TEST_CASE(
    "NNGP and DIWP predictions: one column per sample, finite, positive variances, "
    "seed-determined") {
  const Tiny data = tiny_data(30, 3, 1);
  for (const std::string model_name : {"nngp", "diwp"}) {
    for (const std::string kernel : {"relu", "se"}) {
      CAPTURE(model_name);
      CAPTURE(kernel);
      dm::ModelSpec spec;
      spec.model = model_name;
      spec.kernel = kernel;
      spec.depth = 3;
      spec.inducing = 10;
      dkp::random::Stream init(3);
      const auto model = dm::make_model(spec, data.X, data.y, init);
      CHECK(!model->describe().empty());
      // --depth 3: G_1 (input Gram) .. G_3, rows [g_tt, g_it^T] with P = 10.
      dkp::test::check_predictions(*model, data.X, dkp::models::HiddenKind::Gram, 3, 1 + 10);
    }
  }
}

TEST_CASE(
    "factory: nngp and diwp are built for relu and se; other kernels and depth 0 are "
    "errors; depth counts kernel applications") {
  const Tiny data = tiny_data(12, 2, 2);
  dm::ModelSpec spec;
  spec.kernel = "periodic";
  spec.depth = 3;
  spec.inducing = 5;
  dkp::random::Stream init(1);
  for (const char* name : {"nngp", "diwp"}) {
    spec.model = name;
    CHECK_THROWS_AS(dm::make_model(spec, data.X, data.y, init), dkp::ConfigError);
  }
  spec.kernel = "relu";
  spec.depth = 0;
  CHECK_THROWS_AS(dm::make_model(spec, data.X, data.y, init), dkp::ConfigError);
  // --depth counts kernel applications (factory.cpp): depth 1 is the input Gram and the output
  // layer; depth 3 has two hidden layers (the NNGP's kernels feed layers 2, 3 and the output 4).
  spec.depth = 1;
  CHECK(dm::make_model(spec, data.X, data.y, init) != nullptr);
  spec.model = "nngp";
  spec.kernel = "se";
  spec.depth = 3;
  const auto nngp = dm::make_model(spec, data.X, data.y, init);
  CHECK(nngp->initial_parameters().count("layer4.log_lengthscale") == 1);
  CHECK(nngp->initial_parameters().count("layer5.log_lengthscale") == 0);
  CHECK(nngp->describe().find("3 se kernel applications") != std::string::npos);
  // --delta-init sets every IW layer's delta; it must be positive.
  spec.model = "diwp";
  spec.kernel = "relu";
  spec.options.set_number("delta_init", 50.0);
  const auto diwp = dm::make_model(spec, data.X, data.y, init);
  for (const char* k : {"layer1.log_delta", "layer2.log_delta", "layer3.log_delta"}) {
    REQUIRE(diwp->initial_parameters().count(k) == 1);
    CHECK(diwp->initial_parameters().at(k)(0, 0) == doctest::Approx(std::log(50.0)));
  }
  spec.options.set_number("delta_init", 0.0);
  CHECK_THROWS_AS(dm::make_model(spec, data.X, data.y, init), dkp::ConfigError);
}

TEST_CASE("Gram models, output_scale learned: gradients, and at s = 0 the fixed model's ELBO") {
  for (const bool diwp : {false, true}) {
    CAPTURE(diwp);
    const Tiny data = tiny_data(7, 2, dkp::test::seed() + 5);
    dm::DiwpConfig cfg = tiny_config(3, "relu", 4);
    cfg.log_prec_init = 0.0;
    cfg.gamma_method = dkp::distributions::GammaMethod::Inversion;
    dm::DiwpConfig learned = cfg;
    learned.learned_output_scale = true;
    dkp::random::Stream i1(dkp::test::seed()), i2(dkp::test::seed());
    std::unique_ptr<dm::Model> fixed_model, learned_model;
    if (diwp) {
      fixed_model = std::make_unique<dm::Diwp>(cfg, data.X, data.y, i1);
      learned_model = std::make_unique<dm::Diwp>(learned, data.X, data.y, i2);
    } else {
      fixed_model = std::make_unique<dm::Nngp>(cfg, data.X, data.y, i1);
      learned_model = std::make_unique<dm::Nngp>(learned, data.X, data.y, i2);
    }
    const std::string key = dm::layer_key(3, "log_output_scale");
    REQUIRE(learned_model->initial_parameters().count(key) == 1);
    CHECK(fixed_model->initial_parameters().count(key) == 0);
    dkp::test::expect_elbo_gradient(*learned_model, data, dkp::test::seed() + 97);
    // At s = 0 (its start) the same estimate as the fixed model, from the same noise.
    std::vector<std::string> names;
    std::vector<arma::mat> values;
    dkp::test::jiggled(fixed_model->initial_parameters(), 41, names, values);
    const double e_fixed =
        ad::evaluate(dkp::test::elbo_function(*fixed_model, data, names, 43), values);
    names.push_back(key);
    values.push_back(arma::zeros(1, 1));
    const double e0 =
        ad::evaluate(dkp::test::elbo_function(*learned_model, data, names, 43), values);
    CHECK(e0 == doctest::Approx(e_fixed).epsilon(1e-12));
    values.back()(0, 0) = 0.7;  // another scale: another estimate
    CHECK(std::abs(ad::evaluate(dkp::test::elbo_function(*learned_model, data, names, 43), values) -
                   e_fixed) > 1e-6);
  }
}

TEST_CASE("DIWP diwp_v_scale learned: gradients; s V V^T is the fixed model's with V sqrt(s)") {
  // s = exp(t) multiplies every IW layer's V V^T term: at t the estimate is the fixed model's with
  // each V scaled by exp(t / 2), from the same noise (a scale applied to the wrong term, or in
  // only some layers, would not agree).
  const Tiny data = tiny_data(7, 2, dkp::test::seed() + 6);
  dm::DiwpConfig cfg = tiny_config(4, "relu", 4);
  cfg.log_prec_init = 0.0;
  cfg.gamma_method = dkp::distributions::GammaMethod::Inversion;
  dm::DiwpConfig learned = cfg;
  learned.learned_v_scale = true;
  dkp::random::Stream i1(dkp::test::seed()), i2(dkp::test::seed());
  const dm::Diwp fixed_model(cfg, data.X, data.y, i1);
  const dm::Diwp learned_model(learned, data.X, data.y, i2);
  for (size_t l = 1; l < 4; ++l) {
    REQUIRE(learned_model.initial_parameters().count(dm::layer_key(l, "log_v_scale")) == 1);
    CHECK(fixed_model.initial_parameters().count(dm::layer_key(l, "log_v_scale")) == 0);
  }
  dkp::test::expect_elbo_gradient(learned_model, data, dkp::test::seed() + 96);
  std::vector<std::string> names;
  std::vector<arma::mat> values;
  dkp::test::jiggled(fixed_model.initial_parameters(), 47, names, values);
  std::vector<std::string> lnames = names;
  std::vector<arma::mat> lvalues = values, scaled = values;
  const double t[] = {0.0, 0.8, -0.5, 1.3};  // t of layers 1..3
  for (size_t l = 1; l < 4; ++l) {
    lnames.push_back(dm::layer_key(l, "log_v_scale"));
    lvalues.push_back(arma::mat(1, 1, arma::fill::value(t[l])));
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == dm::layer_key(l, "V")) scaled[i] *= std::exp(0.5 * t[l]);
  }
  const double e_scaled =
      ad::evaluate(dkp::test::elbo_function(fixed_model, data, names, 53), scaled);
  const double e_learned =
      ad::evaluate(dkp::test::elbo_function(learned_model, data, lnames, 53), lvalues);
  CHECK(e_learned == doctest::Approx(e_scaled).epsilon(1e-10));
  CHECK(std::abs(e_learned - ad::evaluate(dkp::test::elbo_function(fixed_model, data, names, 53),
                                          values)) > 1e-6);
}
