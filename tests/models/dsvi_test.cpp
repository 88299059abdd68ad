// DSVI deep GP: gradient checks of the ELBO w.r.t. every parameter at a fixed noise draw (identity,
// SVD-projection and zero-padding mean functions; whitened and not), the initialisation protocol
// (widths, mean functions, propagated Z, inner q_sqrt), depth 1 = SGP, seeded determinism of the
// ELBO and predictions, and a short training run.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "autodiff/gradcheck.hpp"
#include "autodiff/ops.hpp"
#include "layers/svgp.hpp"
#include "models/dsvi_dgp.hpp"
#include "models/factory.hpp"
#include "models/sgp.hpp"
#include "random/stream.hpp"
#include "test_support.hpp"
#include "training/trainer.hpp"
#include "util/error.hpp"

namespace ad = dkp::autodiff;
namespace layers = dkp::layers;
namespace models = dkp::models;
namespace rnd = dkp::random;
using ad::Tape;
using ad::Var;

namespace {

struct Data {
  arma::mat X;
  arma::vec y;
};

Data toy(arma::uword n, arma::uword d, uint64_t salt) {
  rnd::Stream s(dkp::test::seed() + salt);
  Data t;
  t.X = rnd::normal_matrix(s, n, d);
  t.y = arma::sin(2.0 * t.X.col(0)) + 0.1 * arma::vec(rnd::normal_matrix(s, n, 1));
  return t;
}

double elbo_value(const models::Model& m, const dkp::autodiff::ParamMap& p, const Data& d, size_t S,
                  uint64_t seed) {
  Tape tape;
  const auto vars = dkp::autodiff::to_vars(tape, p, false);
  rnd::Stream rng(seed);
  return m.elbo(vars, d.X, d.y, double(d.X.n_rows), S, 1.0, rng).elbo.scalar();
}

// A DSVI DGP of the given depth with 8 inducing points per layer.
models::DsviConfig config8(size_t depth) {
  models::DsviConfig cfg;
  cfg.depth = depth;
  cfg.num_inducing = 8;
  return cfg;
}

}  // namespace

TEST_CASE("DSVI widths: min(30, D) hidden, one output; depth counts the output layer") {
  models::DsviConfig c;
  c.depth = 3;
  CHECK(models::dsvi_widths(13, c) == std::vector<arma::uword>{13, 13, 13, 1});
  c.depth = 2;
  CHECK(models::dsvi_widths(90, c) == std::vector<arma::uword>{90, 30, 1});
  c.depth = 1;
  CHECK(models::dsvi_widths(8, c) == std::vector<arma::uword>{8, 1});
  c.depth = 2;
  c.hidden_width = 4;
  CHECK(models::dsvi_widths(8, c) == std::vector<arma::uword>{8, 4, 1});
  c.depth = 0;
  CHECK_THROWS_AS(models::dsvi_widths(8, c), dkp::ConfigError);
}

TEST_CASE("DSVI initialisation: mean functions (eq. 3.12), propagated Z, inner q_sqrt 1e-5") {
  const Data d = toy(40, 5, 1);
  rnd::Stream init(dkp::test::seed() + 2);
  SUBCASE("identity when D_in = D_out") {
    models::DsviConfig c;
    c.depth = 3;
    c.num_inducing = 6;
    const models::DsviDgp m(c, d.X, init);
    REQUIRE(m.layers().size() == 3);
    CHECK(m.layers()[0].mean_function() == layers::MeanFunction::kIdentity);
    CHECK(m.layers()[1].mean_function() == layers::MeanFunction::kIdentity);
    CHECK(m.layers()[2].mean_function() == layers::MeanFunction::kZero);
    const auto& p = m.initial_parameters();
    // The same k-means Z at every layer (identity maps).
    CHECK(arma::approx_equal(p.at("layer0.Z"), p.at("layer2.Z"), "absdiff", 0.0));
    // Inner q_sqrt = 1e-5 I, output layer I; White 1e-5 on inner layers only.
    Tape tape;
    const arma::mat L0 = layers::unpack_lower(tape.constant(p.at("layer0.q_sqrt")), 6,
                                              layers::DiagTransform::kSoftplus)
                             .val();
    CHECK(arma::approx_equal(L0, 1e-5 * arma::repmat(arma::eye(6, 6), 1, 5), "absdiff", 1e-15));
    const arma::mat L2 = layers::unpack_lower(tape.constant(p.at("layer2.q_sqrt")), 6,
                                              layers::DiagTransform::kSoftplus)
                             .val();
    CHECK(arma::approx_equal(L2, arma::eye(6, 6), "absdiff", 1e-12));
    CHECK(layers::positive(tape.constant(p.at("layer1.kern.white"))).scalar() ==
          doctest::Approx(1e-5).epsilon(1e-9));
    CHECK(p.count("layer2.kern.white") == 0);
    CHECK(p.at("layer1.q_mu").n_cols == 5);
    CHECK(p.at("layer2.q_mu").n_cols == 1);
    CHECK(m.describe().find("widths 5-5-5-1") != std::string::npos);
  }
  SUBCASE("SVD projection of the uncentred inputs when D_in > D_out") {
    models::DsviConfig c;
    c.depth = 3;
    c.num_inducing = 6;
    c.hidden_width = 3;
    const models::DsviDgp m(c, d.X, init);
    REQUIRE(m.layers()[0].mean_function() == layers::MeanFunction::kLinear);
    CHECK(m.layers()[1].mean_function() == layers::MeanFunction::kIdentity);
    const arma::mat& W = m.layers()[0].mean_weights();
    REQUIRE(W.n_rows == 5);
    REQUIRE(W.n_cols == 3);
    CHECK(arma::approx_equal(W.t() * W, arma::eye(3, 3), "absdiff", 1e-12));
    // W spans the top-3 right-singular subspace of X (no centring).
    arma::mat U, V;
    arma::vec s;
    REQUIRE(arma::svd(U, s, V, d.X));
    const arma::mat P = V.cols(0, 2) * V.cols(0, 2).t();
    CHECK(arma::approx_equal(W * W.t(), P, "absdiff", 1e-10));
    const auto& p = m.initial_parameters();
    CHECK(arma::approx_equal(p.at("layer1.Z"), p.at("layer0.Z") * W, "absdiff", 1e-14));
    CHECK(arma::approx_equal(p.at("layer2.Z"), p.at("layer1.Z"), "absdiff", 0.0));
  }
  SUBCASE("zero padding [I, 0] when D_in < D_out") {
    models::DsviConfig c;
    c.depth = 2;
    c.num_inducing = 6;
    c.hidden_width = 7;
    const models::DsviDgp m(c, d.X, init);
    REQUIRE(m.layers()[0].mean_function() == layers::MeanFunction::kLinear);
    CHECK(arma::approx_equal(m.layers()[0].mean_weights(), arma::eye(5, 7), "absdiff", 0.0));
    const auto& p = m.initial_parameters();
    CHECK(p.at("layer1.Z").n_cols == 7);
    CHECK(arma::approx_equal(p.at("layer1.Z").cols(0, 4), p.at("layer0.Z"), "absdiff", 0.0));
    CHECK(arma::accu(arma::abs(p.at("layer1.Z").cols(5, 6))) == 0.0);
  }
}

TEST_CASE("make_model: --init-lengthscale / --init-variance set every SE kernel's start") {
  const Data d = toy(40, 5, 1);
  for (const std::string model : {"sgp", "dgp"}) {
    CAPTURE(model);
    models::ModelSpec spec;
    spec.model = model;
    spec.inference = model == "dgp" ? "dsvi" : "";
    spec.depth = model == "dgp" ? 3 : 1;
    spec.inducing = 6;
    rnd::Stream init(dkp::test::seed() + 9);
    const auto plain = models::make_model(spec, d.X, d.y, init);
    spec.options.set_number("init_lengthscale", 2.5);
    spec.options.set_number("init_variance", 0.75);
    rnd::Stream init2(dkp::test::seed() + 9);
    const auto set = models::make_model(spec, d.X, d.y, init2);
    size_t kernels = 0;
    for (const auto& [name, value] : set->initial_parameters()) {
      const arma::mat& before = plain->initial_parameters().at(name);
      if (name.ends_with("kern.lengthscales") || name.ends_with("kern.variance")) {
        ++kernels;
        const double want = name.ends_with("lengthscales") ? 2.5 : 0.75;
        CHECK(arma::approx_equal(
            value, arma::mat(arma::size(value), arma::fill::value(layers::positive_inverse(want))),
            "absdiff", 1e-14));
        CHECK(arma::approx_equal(
            before, arma::mat(arma::size(before), arma::fill::value(layers::positive_inverse(1.0))),
            "absdiff", 1e-14));
      } else {
        CHECK(arma::approx_equal(value, before, "absdiff", 0.0));  // nothing else changes
      }
    }
    CHECK(kernels == 2 * spec.depth);
  }
  models::ModelSpec nngp;
  nngp.model = "nngp";
  nngp.options.set_number("init_variance", 2.0);
  CHECK_THROWS_WITH_AS(models::check_model_options(nngp),
                       doctest::Contains("sgp and dgp --inference dsvi"), dkp::ConfigError);
  models::ModelSpec bad;
  bad.model = "sgp";
  CHECK_THROWS_WITH_AS(bad.options.set_number("init_lengthscale", std::nan("")),
                       doctest::Contains("is not a number"), dkp::ConfigError);
  bad.options.set_number("init_lengthscale", -2.0);
  CHECK_THROWS_WITH_AS(models::check_model_options(bad), doctest::Contains("positive and finite"),
                       dkp::ConfigError);
}

TEST_CASE("DSVI ELBO gradient w.r.t. every parameter at a fixed noise draw") {
  struct Case {
    const char* what;
    size_t depth, width, D;
    bool whiten, ard, learn_white;
    layers::DiagTransform diag;
  };
  const Case cases[] = {
      {"identity, whitened, ARD", 2, 0, 3, true, true, true, layers::DiagTransform::kSoftplus},
      {"projection + identity, not whitened, one lengthscale", 3, 2, 3, false, false, true,
       layers::DiagTransform::kExp},
      {"padding, whitened, fixed White", 2, 3, 2, true, true, false,
       layers::DiagTransform::kSoftplus},
      {"identity, not whitened, unconstrained diagonal (some negative)", 3, 0, 2, false, true, true,
       layers::DiagTransform::kIdentity},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const Data d = toy(5, c.D, 10 + c.depth);
    models::DsviConfig cfg;
    cfg.depth = c.depth;
    cfg.hidden_width = c.width;
    cfg.whiten = c.whiten;
    cfg.ard = c.ard;
    cfg.learn_white = c.learn_white;
    cfg.q_diag = c.diag;
    cfg.num_inducing = 3;
    rnd::Stream init(dkp::test::seed() + 20);
    const models::DsviDgp model(cfg, d.X, init);
    std::vector<std::string> names;
    std::vector<arma::mat> values;
    rnd::Stream jiggle(dkp::test::seed() + 21);
    for (const auto& [name, v] : model.initial_parameters()) {
      names.push_back(name);
      values.push_back(v + 0.3 * rnd::normal_matrix(jiggle, v.n_rows, v.n_cols));
    }
    const ad::ScalarFunction f = [&](Tape&, const std::vector<Var>& v) {
      dkp::autodiff::VarMap vars;
      for (size_t i = 0; i < v.size(); ++i) vars.emplace(names[i], v[i]);
      rnd::Stream noise(777);  // the same noise draw at every evaluation
      return model.elbo(vars, d.X, d.y, 40.0, 2, 0.6, noise).elbo;
    };
    for (size_t i = 0; i < names.size(); ++i) {
      const auto r = ad::check_gradient(f, values, {}, {i});
      INFO("parameter " << names[i] << ": " << r.detail);
      CHECK(r.ok);
    }
  }
}

TEST_CASE("DSVI with depth 1 is the SGP") {
  const Data d = toy(20, 3, 30);
  rnd::Stream s(dkp::test::seed() + 31);
  const arma::mat Z = rnd::normal_matrix(s, 5, 3);
  for (bool whiten : {true, false}) {
    models::DsviConfig dc;
    dc.depth = 1;
    dc.whiten = whiten;
    models::SgpConfig sc;
    sc.whiten = whiten;
    const models::DsviDgp dgp(dc, d.X, Z);
    const models::SgpModel sgp(sc, Z);
    REQUIRE(dgp.initial_parameters().size() == sgp.initial_parameters().size());
    dkp::autodiff::ParamMap p = sgp.initial_parameters();
    for (auto& [name, v] : p) v += 0.2 * rnd::normal_matrix(s, v.n_rows, v.n_cols);
    CHECK(elbo_value(dgp, p, d, 3, 1) ==
          doctest::Approx(elbo_value(sgp, p, d, 3, 1)).epsilon(1e-13));
    rnd::Stream r1(2), r2(2);
    const auto a = dgp.predict(p, d.X, 2, r1), b = sgp.predict(p, d.X, 2, r2);
    CHECK(arma::approx_equal(a.mean, b.mean, "absdiff", 1e-12));
    CHECK(arma::approx_equal(a.var, b.var, "absdiff", 1e-12));
  }
}

TEST_CASE("DSVI ELBO and predictions are determined by the seed, not by the sample blocks") {
  const Data d = toy(30, 4, 40);
  const Data test = toy(11, 4, 41);
  const models::DsviConfig cfg = config8(3);
  rnd::Stream i1(5), i2(5);
  const models::DsviDgp m1(cfg, d.X, i1), m2(cfg, d.X, i2);
  REQUIRE(m1.initial_parameters().size() == m2.initial_parameters().size());
  for (const auto& [name, v] : m1.initial_parameters()) {
    CAPTURE(name);
    CHECK(arma::approx_equal(v, m2.initial_parameters().at(name), "absdiff", 0.0));
  }
  dkp::autodiff::ParamMap p = m1.initial_parameters();
  rnd::Stream s(dkp::test::seed() + 42);
  for (auto& [name, v] : p) v += 0.1 * rnd::normal_matrix(s, v.n_rows, v.n_cols);

  CHECK(elbo_value(m1, p, d, 4, 9) == elbo_value(m2, p, d, 4, 9));
  CHECK(elbo_value(m1, p, d, 4, 9) != elbo_value(m1, p, d, 4, 10));

  rnd::Stream a(3), b(3), c(4);
  const auto pa = m1.predict(p, test.X, 7, a), pb = m2.predict(p, test.X, 7, b),
             pc = m1.predict(p, test.X, 7, c);
  REQUIRE(pa.mean.n_rows == 11);
  REQUIRE(pa.mean.n_cols == 7);
  CHECK(arma::approx_equal(pa.mean, pb.mean, "absdiff", 0.0));
  CHECK(arma::approx_equal(pa.var, pb.var, "absdiff", 0.0));
  CHECK_FALSE(arma::approx_equal(pa.mean, pc.mean, "absdiff", 1e-12));
  // Columns are distinct samples; variances include the likelihood noise.
  CHECK(arma::norm(pa.mean.col(0) - pa.mean.col(1)) > 1e-8);
  Tape tape;
  const double noise = layers::positive(tape.constant(p.at("likelihood.variance"))).scalar();
  CHECK(pa.var.min() > noise);
  // Blocks of one sample (11 rows each) give the same numbers.
  models::DsviConfig small = cfg;
  small.predict_max_rows = 11;
  rnd::Stream i3(5), e(3);
  const models::DsviDgp m3(small, d.X, i3);
  const auto pe = m3.predict(p, test.X, 7, e, true);
  CHECK(arma::approx_equal(pa.mean, pe.mean, "absdiff", 1e-13));
  CHECK(arma::approx_equal(pa.var, pe.var, "absdiff", 1e-13));
  // So do the hidden layers (two, of width min(30, 4) = 4), kept from the same draws.
  rnd::Stream a2(3);
  const auto ph = m1.predict(p, test.X, 7, a2, true);
  CHECK(arma::approx_equal(pa.mean, ph.mean, "absdiff", 0.0));
  CHECK(ph.hidden_kind == models::HiddenKind::Features);
  REQUIRE(ph.hidden.size() == 7);
  REQUIRE(pe.hidden.size() == 7);
  for (size_t k = 0; k < 7; ++k) {
    REQUIRE(ph.hidden[k].size() == 2);
    REQUIRE(pe.hidden[k].size() == 2);
    for (size_t l = 0; l < 2; ++l) {
      CHECK(ph.hidden[k][l].n_rows == 11);
      CHECK(ph.hidden[k][l].n_cols == 4);
      CHECK(arma::approx_equal(ph.hidden[k][l], pe.hidden[k][l], "absdiff", 1e-13));
    }
  }
}

TEST_CASE("DSVI hidden samples: layer 1's follow its marginals N(mu, s + jitter) (eq. 3.10)") {
  const Data d = toy(30, 4, 40);
  const Data test = toy(6, 4, 41);
  const models::DsviConfig cfg = config8(2);
  rnd::Stream init(5);
  const models::DsviDgp m(cfg, d.X, init);
  dkp::autodiff::ParamMap p = m.initial_parameters();
  rnd::Stream jig(dkp::test::seed() + 43);
  for (auto& [name, v] : p) v += 0.3 * rnd::normal_matrix(jig, v.n_rows, v.n_cols);
  const size_t S = 4000;
  rnd::Stream r(dkp::test::seed() + 44);
  const auto pred = m.predict(p, test.X, S, r, true);
  Tape tape;
  const dkp::autodiff::VarMap vars = dkp::autodiff::to_vars(tape, p, false);
  const layers::Marginals f =
      m.layers()[0].marginals(m.layers()[0].prepare(vars), tape.constant(test.X));
  const arma::mat& mu = f.mean.val();
  const arma::mat var = f.var.val() + cfg.jitter;
  REQUIRE(mu.n_rows == 6);
  REQUIRE(mu.n_cols == 4);
  arma::mat sum(6, 4, arma::fill::zeros), sumsq(6, 4, arma::fill::zeros);
  for (size_t k = 0; k < S; ++k) {
    REQUIRE(pred.hidden[k].size() == 1);
    sum += pred.hidden[k][0];
    sumsq += arma::square(pred.hidden[k][0]);
  }
  const arma::mat mean = sum / double(S);
  const arma::mat svar = (sumsq - double(S) * arma::square(mean)) / double(S - 1);
  // Standard errors: sqrt(v / S) for the mean, v sqrt(2 / (S - 1)) for the variance (Gaussian).
  CHECK(arma::all(arma::vectorise(arma::abs(mean - mu) / arma::sqrt(var / double(S))) < 4.0));
  CHECK(arma::all(arma::vectorise(arma::abs(svar - var) / (var * std::sqrt(2.0 / (S - 1)))) < 4.0));
  CHECK(var.min() > 10.0 * cfg.jitter);  // not a degenerate check
}

TEST_CASE("DSVI trains: the ELBO improves on a toy problem") {
  const Data d = toy(60, 2, 50);
  models::DsviConfig cfg;
  cfg.depth = 2;
  cfg.num_inducing = 10;
  rnd::Stream init(dkp::test::seed() + 51);
  const models::DsviDgp model(cfg, d.X, init);
  dkp::training::TrainOptions opt;
  opt.steps = 300;
  opt.lr = dkp::training::LrSchedule::constant(1e-2);
  opt.kl = dkp::training::KlAnnealing{0};
  opt.samples = 3;
  opt.log_every = 0;
  opt.checkpoint_every = 0;
  const rnd::Stream run(dkp::test::seed() + 52);
  const auto report = dkp::training::train(model, d.X, d.y, opt, run);
  rnd::Stream r1(1), r2(1);
  const double before =
      dkp::training::estimate_elbo(model, model.initial_parameters(), d.X, d.y, 10, r1);
  const double after = dkp::training::estimate_elbo(model, report.params, d.X, d.y, 10, r2);
  CAPTURE(before);
  CAPTURE(after);
  CHECK(after > before + 0.3);
}

TEST_CASE("DSVI q_sqrt_diag unconstrained: a factor's column sign leaves the ELBO unchanged") {
  // S_d = L_d L_d^T is the same when a column of L_d changes sign, so the estimate (and log|S_d|
  // in the KL, from log|diag|) must be too; log(diag) of a negative entry would give NaN.
  const Data d = toy(6, 2, 41);
  models::DsviConfig cfg;
  cfg.depth = 2;
  cfg.num_inducing = 3;
  cfg.whiten = false;
  cfg.q_diag = layers::DiagTransform::kIdentity;
  rnd::Stream init(dkp::test::seed() + 42);
  const models::DsviDgp model(cfg, d.X, init);
  dkp::autodiff::ParamMap p = model.initial_parameters();
  rnd::Stream jiggle(dkp::test::seed() + 43);
  for (auto& [name, v] : p) v += 0.2 * rnd::normal_matrix(jiggle, v.n_rows, v.n_cols);
  const double e = elbo_value(model, p, d, 3, 5);
  REQUIRE(std::isfinite(e));
  // Packed storage, column-major lower triangle per output: column j of factor 0 holds rows j..M-1
  // from offset j M - j (j - 1) / 2. Flip column 1 of every layer's first factor.
  size_t flipped = 0;
  for (auto& [name, v] : p) {
    if (name.find("q_sqrt") == std::string::npos) continue;
    const arma::uword M = 3, j = 1, off = j * M - j * (j - 1) / 2;
    for (arma::uword i = 0; i < M - j; ++i) v(off + i, 0) = -v(off + i, 0);
    ++flipped;
  }
  REQUIRE(flipped == 2);
  CHECK(elbo_value(model, p, d, 3, 5) == doctest::Approx(e).epsilon(1e-12));
  // Control: flipping the diagonal entry alone changes S, and the estimate.
  for (auto& [name, v] : p)
    if (name.find("q_sqrt") != std::string::npos) v(3, 0) = -v(3, 0) + 0.5;
  CHECK(std::abs(elbo_value(model, p, d, 3, 5) - e) > 1e-8);
}
