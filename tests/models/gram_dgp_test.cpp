// Global-inducing DGP on Gram kernels (models/gram_dgp.hpp): gradient checks of the ELBO estimate
// w.r.t. every parameter at a fixed noise draw, a hidden layer under its prior (Lambda = 0, so
// q(U) = p(U)) has log p - log q = 0 and E[G_l] = K(G_{l-1}) on every block (Monte Carlo),
// predictions and the factory.
#include <doctest/doctest.h>

#include <cmath>

#include "autodiff/gradcheck.hpp"
#include "autodiff/ops.hpp"
#include "layers/gram_gp.hpp"
#include "model_test_support.hpp"
#include "models/factory.hpp"
#include "models/gram_dgp.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace ad = dkp::autodiff;
namespace dm = dkp::models;

using dkp::test::Tiny;
using dkp::test::tiny_data;

namespace {

dm::GramDgpConfig tiny_config(size_t depth, const std::string& kernel, size_t inducing) {
  dm::GramDgpConfig cfg;
  cfg.depth = depth;
  cfg.kernel = kernel;
  cfg.inducing = inducing;
  return cfg;
}

// A factory spec of a relu Gram model ("dgp" means the global-inducing Gram DGP).
dm::ModelSpec relu_spec(const char* model, size_t depth, size_t inducing) {
  dm::ModelSpec spec;
  spec.model = model;
  spec.inference = "global-inducing";
  spec.kernel = "relu";
  spec.depth = depth;
  spec.inducing = inducing;
  return spec;
}

}  // namespace

TEST_CASE("Gram DGP ELBO gradients match finite differences for every parameter") {
  for (const std::string kernel : {"relu", "se"}) {
    for (size_t depth : {2, 3, 4}) {
      CAPTURE(kernel);
      CAPTURE(depth);
      const Tiny data = tiny_data(7, 2, dkp::test::seed() + depth);
      dm::GramDgpConfig cfg = tiny_config(depth, kernel, 4);
      cfg.log_prec_init = 0.0;        // a posterior that differs from the prior
      if (depth == 4) cfg.width = 3;  // width other than the number of input features
      dkp::random::Stream init(dkp::test::seed());
      const dm::GramDgp model(cfg, data.X, data.y, init);
      const size_t nu = depth == 4 ? 3 : 2;
      CHECK(model.width() == nu);
      for (size_t l = 2; l < depth; ++l) {
        const auto& ps = model.initial_parameters();
        REQUIRE(ps.count(dm::layer_key(l, "v")) == 1);
        CHECK(ps.at(dm::layer_key(l, "v")).n_rows == 4);
        CHECK(ps.at(dm::layer_key(l, "v")).n_cols == nu);
        CHECK(ps.count(dm::layer_key(l, "L_loc")) == 1);
        CHECK(ps.count(dm::layer_key(l, "L_scale")) == 1);
      }
      // The output layer keeps its single column.
      CHECK(model.initial_parameters().at(dm::layer_key(depth, "v")).n_cols == 1);
      CHECK(model.initial_parameters().count(dm::layer_key(1, "v")) == 0);

      dkp::test::expect_elbo_gradient(model, data, dkp::test::seed() + 97);
    }
  }
}

TEST_CASE(
    "Gram DGP hidden layer under the prior (Lambda = 0): log p - log q = 0 and E[G] = K(G_prev) "
    "on every block (Monte Carlo)") {
  const size_t P = 5, B = 3, nu = 2, n = 20000;
  dkp::random::Stream s(dkp::test::seed() + 17);
  arma::mat Z = dkp::random::normal_matrix(s, P + B, 2);
  Z.rows(P, P + B - 1) += 1.5;
  for (const std::string kernel : {"relu", "se"}) {
    CAPTURE(kernel);
    ad::Tape tape0;
    const auto G0 = dkp::kernels::features_to_gram(tape0.constant(Z.rows(0, P - 1)),
                                                   tape0.constant(Z.rows(P, P + B - 1)), 2.0);
    const auto K = kernel == "se"
                       ? dkp::kernels::se_gram(G0, tape0.constant(0.0), tape0.constant(0.0), 1e-4)
                       : dkp::kernels::relu_gram(G0, 1e-4);
    arma::mat ii(P * P, n), it(P * B, n), tt(B, n);
    dkp::random::Stream noise(5);
    dkp::random::Stream vs(6);
    const arma::mat v = dkp::random::normal_matrix(vs, P, nu);  // ignored when Lambda = 0
    double max_logpq = 0.0;
    for (size_t k = 0; k < n; ++k) {
      ad::Tape tape;
      const dkp::kernels::GramBlocks Kc{tape.constant(K.ii.val()), tape.constant(K.it.val()),
                                        tape.constant(K.tt.val())};
      const auto out =
          dkp::layers::gram_gp_layer(Kc, tape.constant(v), tape.constant(arma::eye(P, P)),
                                     tape.constant(-1000.0), noise);  // exp(-1000) = 0: L = 0
      ii.col(k) = arma::vectorise(out.G.ii.val());
      it.col(k) = arma::vectorise(out.G.it.val());
      tt.col(k) = out.G.tt.val();
      max_logpq = std::max(max_logpq, std::abs(out.logpq.scalar()));
    }
    CHECK(max_logpq < 1e-10);
    auto within = [&](const arma::mat& draws, const arma::mat& expect, double z) {
      const arma::vec m = arma::mean(draws, 1);
      const arma::vec se = arma::stddev(draws, 0, 1) / std::sqrt(double(n));
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
    CHECK(within(ii, K.ii.val(), 4.0));
    CHECK(within(it, K.it.val(), 4.0));
    CHECK(within(tt, K.tt.val(), 4.0));
    // Not vacuous: with Lambda > 0 and v = 3, q(U) is pulled towards v and E[G_ii] moves away.
    ad::Tape tape;
    dkp::random::Stream noise2(7);
    const dkp::kernels::GramBlocks Kc{tape.constant(K.ii.val()), tape.constant(K.it.val()),
                                      tape.constant(K.tt.val())};
    const auto out =
        dkp::layers::gram_gp_layer(Kc, tape.constant(arma::mat(P, nu, arma::fill::value(3.0))),
                                   tape.constant(arma::eye(P, P)), tape.constant(3.0), noise2);
    CHECK(std::abs(out.logpq.scalar()) > 1e-3);
    CHECK(arma::mean(arma::diagvec(out.G.ii.val())) > 2.0 * arma::mean(arma::diagvec(K.ii.val())));
  }
}

TEST_CASE("Gram DGP predictions: one column per sample, finite, positive variances, seeded") {
  const Tiny data = tiny_data(30, 3, 1);
  for (size_t depth : {2, 3}) {
    CAPTURE(depth);
    const dm::ModelSpec spec = relu_spec("dgp", depth, 10);
    dkp::random::Stream init(3);
    const auto model = dm::make_model(spec, data.X, data.y, init);
    CHECK(model->describe().find("Gram kernels") != std::string::npos);
    CHECK(model->describe().find("relu") != std::string::npos);
    // G_1 (the input Gram) .. G_depth: depth hidden Gram layers, rows [g_tt, g_it^T].
    const auto p1 =
        dkp::test::check_predictions(*model, data.X, dkp::models::HiddenKind::Gram, depth, 1 + 10);
    if (depth == 3) CHECK(arma::var(p1.mean.row(0)) > 0.0);  // the hidden layer is stochastic
    // The kept layers: G_1 = X X^T / N0 at the initial input layer (scale 1, bias 0) in every
    // sample; with depth 3, G_2 = F F^T / W of the hidden GP layer's sampled features varies.
    dkp::random::Stream r(4);
    const arma::mat X = data.X.rows(0, 4);
    const auto ph = model->predict(model->initial_parameters(), X, 6, r, true);
    const arma::mat& Z = model->initial_parameters().at("inducing_inputs");
    const arma::mat G1 = arma::join_horiz(arma::sum(arma::square(X), 1), X * Z.t()) / 3.0;
    for (const auto& sample : ph.hidden) {
      CHECK(arma::approx_equal(sample.at(0), G1, "absdiff", 1e-12));
    }
    if (depth == 3) CHECK(arma::abs(ph.hidden[1].at(1) - ph.hidden[0].at(1)).max() > 1e-6);
  }
}

TEST_CASE("factory: dgp global-inducing builds the Gram DGP for relu and GiDgp for se") {
  const Tiny data = tiny_data(12, 2, 2);
  dm::ModelSpec spec;
  spec.model = "dgp";
  spec.inference = "global-inducing";
  spec.depth = 3;
  spec.inducing = 5;
  dkp::random::Stream init(1);
  spec.kernel = "relu";
  const auto relu = dm::make_model(spec, data.X, data.y, init);
  CHECK(dynamic_cast<const dm::GramDgp*>(relu.get()) != nullptr);
  CHECK(relu->initial_parameters().count("input.log_scale") == 1);
  // --depth 3 = three kernel applications: hidden GP layers 2 and 3, output layer 4.
  CHECK(relu->initial_parameters().at("layer2.v").n_cols == 2);
  CHECK(relu->initial_parameters().at("layer3.v").n_cols == 2);
  CHECK(relu->initial_parameters().at("layer4.v").n_cols == 1);
  CHECK(relu->describe().find("3 kernel applications") != std::string::npos);
  spec.width = 4;
  const auto wide = dm::make_model(spec, data.X, data.y, init);
  CHECK(wide->initial_parameters().at("layer2.v").n_cols == 4);
  spec.kernel = "se";
  const auto se = dm::make_model(spec, data.X, data.y, init);
  CHECK(dynamic_cast<const dm::GramDgp*>(se.get()) == nullptr);
  spec.kernel = "periodic";
  CHECK_THROWS_AS(dm::make_model(spec, data.X, data.y, init), dkp::ConfigError);
  spec.kernel = "relu";
  spec.depth = 0;
  CHECK_THROWS_AS(dm::make_model(spec, data.X, data.y, init), dkp::ConfigError);
}

TEST_CASE(
    "Gram models: the ELBO with shared parts computed once equals S separate forward samples") {
  // elbo() prepares the sample-independent parts once (the NNGP's hidden and output layers, the
  // Gram DGP's first hidden layer); forward() computes everything for one sample. Same draws, so
  // the same ELBO and gradient.
  const Tiny data = tiny_data(25, 3, 4);
  for (const char* model : {"nngp", "dgp", "diwp"}) {
    for (size_t depth : {1, 2, 3}) {
      CAPTURE(model);
      CAPTURE(depth);
      const dm::ModelSpec spec = relu_spec(model, depth, 6);
      dkp::random::Stream init(5);
      const auto m = dm::make_model(spec, data.X, data.y, init);
      const auto* gm = dynamic_cast<const dm::GramModel*>(m.get());
      REQUIRE(gm != nullptr);
      const double klw = 0.7;

      ad::Tape t1;
      const dm::VarMap p1 = dm::to_vars(t1, m->initial_parameters(), true);
      dkp::random::Stream r1(77);
      const dm::ElboEstimate e = m->elbo(p1, data.X, data.y, 40.0, 3, klw, r1);
      t1.backward(e.elbo);

      ad::Tape t2;
      const dm::VarMap p2 = dm::to_vars(t2, m->initial_parameters(), true);
      dkp::random::Stream r2(77);
      const ad::Var X = t2.constant(data.X), y = t2.constant(data.y);
      const ad::Var log_s2 = dm::get(p2, "likelihood.log_noise_var");
      ad::Var ell = t2.constant(0.0), logpq = t2.constant(0.0);
      for (int s = 0; s < 3; ++s) {
        const auto o = gm->forward(p2, X, r2);
        ell = ell + dm::gaussian_ell_sum(y, o.f_mean, o.f_var, log_s2, ad::exp(ad::neg(log_s2)));
        logpq = logpq + o.logpq;
      }
      const dm::ElboEstimate ref =
          dm::assemble_elbo(ell, logpq, 3.0, double(data.X.n_rows), 40.0, klw);
      t2.backward(ref.elbo);
      CHECK(e.elbo.scalar() == doctest::Approx(ref.elbo.scalar()).epsilon(1e-12));
      for (const auto& [name, v] : p1)
        CHECK(arma::approx_equal(v.grad(), p2.at(name).grad(), "both", 1e-10, 1e-9));
    }
  }
}
