// Global-inducing DGP: gradient check of the ELBO estimate w.r.t. every parameter at a fixed noise
// draw, the layer's KL identity, and prediction shapes.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ad_test_support.hpp"
#include "autodiff/gradcheck.hpp"
#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"
#include "autodiff/ops_shape.hpp"
#include "kernels/se.hpp"
#include "layers/gigp.hpp"
#include "model_test_support.hpp"
#include "models/gi_dgp.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace ad = dkp::autodiff;
using dkp::models::GiDgp;
using dkp::models::GiDgpConfig;

using dkp::test::Tiny;
using dkp::test::tiny_data;

namespace {

// exp(-|z_i - z_j|^2 / 2) for every pair of n points z drawn from s (n x 2 standard normals),
// plus 1e-6 on the diagonal.
arma::mat random_unit_se_gram(dkp::random::Stream& s, arma::uword n) {
  const arma::mat Z = dkp::random::normal_matrix(s, n, 2);
  arma::mat K(n, n);
  for (arma::uword i = 0; i < n; ++i)
    for (arma::uword j = 0; j < n; ++j)
      K(i, j) = std::exp(-0.5 * arma::accu(arma::square(Z.row(i) - Z.row(j))));
  K.diag() += 1e-6;
  return K;
}

// The blocks of K (P + B points, inducing points first) on `tape`, with k_tt = 1.
dkp::layers::KernelBlocks kernel_blocks(ad::Tape& tape, const arma::mat& K, size_t P, size_t B) {
  return {tape.constant(K.submat(0, 0, P - 1, P - 1)),
          tape.constant(K.submat(0, P, P - 1, P + B - 1)), tape.constant(arma::ones(B, 1))};
}

}  // namespace

TEST_CASE("global-inducing DGP ELBO gradients match finite differences for every parameter") {
  for (const bool options : {false, true}) {  // options: hidden ARD and per-output precision
    for (size_t depth : {1, 2, 3}) {
      CAPTURE(options);
      CAPTURE(depth);
      const Tiny data = tiny_data(7, 2, dkp::test::seed() + depth);
      GiDgpConfig cfg;
      cfg.depth = depth;
      cfg.inducing = 4;
      cfg.log_prec_init = 0.0;  // a posterior that differs from the prior
      cfg.hidden_ard = options;
      cfg.per_output_precision = options;
      dkp::random::Stream init(dkp::test::seed());
      const GiDgp model(cfg, data.X, data.y, init);
      if (options && depth > 1) {  // the parameters have the options' shapes
        CHECK(model.initial_parameters().at("layer2.log_lengthscale").n_cols == 2);
        CHECK(model.initial_parameters().at("layer1.L_loc").n_cols == 2 * 4);
        CHECK(model.initial_parameters().at("layer1.L_scale").n_cols == 2);
      }
      const auto c = dkp::test::check_elbo_gradient(model, data, dkp::test::seed() + 99);
      INFO(c.result.detail);
      CHECK(c.result.ok);
    }
  }
}

TEST_CASE("GIGP per-output precision: column c is a one-column layer with its own factor") {
  const size_t P = 6, W = 3, B = 5, S = 2;
  dkp::random::Stream s(dkp::test::seed() + 23);
  const arma::mat K = random_unit_se_gram(s, P + B);
  const arma::mat v = dkp::random::normal_matrix(s, P, W);
  const arma::mat e1 = dkp::random::normal_matrix(s, P, W * S);
  const arma::mat e2 = dkp::random::normal_matrix(s, P, W * S);
  std::vector<arma::mat> Lplain;
  for (size_t c = 0; c < W; ++c) {
    Lplain.push_back(arma::trimatl(arma::eye(P, P) + 0.4 * dkp::random::normal_matrix(s, P, P)) *
                     std::exp(0.3 * double(c)));
  }
  ad::Tape tape;
  const dkp::layers::KernelBlocks kb = kernel_blocks(tape, K, P, B);
  std::vector<ad::Var> Ls;
  for (const arma::mat& L : Lplain) Ls.push_back(tape.constant(L));
  const auto o = dkp::layers::gigp_forward_per_output(kb, tape.constant(v), Ls, e1, e2);
  REQUIRE(o.u.n_cols() == W * S);
  double logpq = 0.0;
  for (size_t c = 0; c < W; ++c) {
    CAPTURE(c);
    const arma::uvec idx = {c, W + c};  // column c of samples 0 and 1
    const auto g =
        dkp::layers::gigp_prepare(kb, {tape.constant(v.col(c)), ad::Var(), ad::Var()}, Ls[c]);
    const auto oc = dkp::layers::gigp_finish(g, e1.cols(idx), e2.cols(idx));
    CHECK(arma::approx_equal(arma::mat(o.u.val().cols(idx)), oc.u.val(), "absdiff", 1e-10));
    CHECK(
        arma::approx_equal(arma::mat(o.f_mean.val().cols(idx)), oc.f_mean.val(), "absdiff", 1e-10));
    CHECK(arma::approx_equal(o.f_var.val(), oc.f_var.val(), "absdiff", 1e-12));
    logpq += oc.logpq.scalar();
  }
  CHECK(o.logpq.scalar() == doctest::Approx(logpq).epsilon(1e-10));
  // The plain evaluation gives the same samples.
  arma::mat u_pl, m_pl;
  const arma::vec fv_pl = dkp::layers::gigp_forward_per_output_plain(
      K.submat(0, 0, P - 1, P - 1), K.submat(0, P, P - 1, P + B - 1), arma::ones(B), Lplain, v, e1,
      e2, &u_pl, m_pl);
  CHECK(arma::approx_equal(u_pl, o.u.val(), "absdiff", 1e-8));
  CHECK(arma::approx_equal(m_pl, o.f_mean.val(), "absdiff", 1e-8));
  CHECK(arma::approx_equal(arma::mat(fv_pl), o.f_var.val(), "absdiff", 1e-10));
  // Equal factors: the shared-precision layer.
  const std::vector<ad::Var> same(W, Ls[0]);
  const auto oe = dkp::layers::gigp_forward_per_output(kb, tape.constant(v), same, e1, e2);
  const auto g = dkp::layers::gigp_prepare(kb, {tape.constant(v), ad::Var(), ad::Var()}, Ls[0]);
  const auto os = dkp::layers::gigp_finish(g, e1, e2);
  CHECK(arma::approx_equal(oe.u.val(), os.u.val(), "absdiff", 1e-10));
  CHECK(arma::approx_equal(oe.f_mean.val(), os.f_mean.val(), "absdiff", 1e-10));
  CHECK(oe.logpq.scalar() == doctest::Approx(os.logpq.scalar()).epsilon(1e-10));
  CHECK_THROWS_AS(dkp::layers::gigp_forward_per_output(kb, tape.constant(v),
                                                       std::vector<ad::Var>(2, Ls[0]), e1, e2),
                  dkp::Error);
  std::vector<ad::Var> unset = Ls;
  unset[1] = ad::Var();  // a factor that was never set: an error, not a null dereference
  CHECK_THROWS_WITH_AS(dkp::layers::gigp_forward_per_output(kb, tape.constant(v), unset, e1, e2),
                       "gigp per-output precision: factor 1 is not set", dkp::Error);
}

TEST_CASE("GIGP layer: log p(u) - log q(u) equals the direct Gaussian densities") {
  const size_t P = 5, W = 3, B = 4;
  dkp::random::Stream s(dkp::test::seed());
  const arma::mat K = random_unit_se_gram(s, P + B);
  ad::Tape tape;
  dkp::layers::KernelBlocks kb = kernel_blocks(tape, K, P, B);
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

TEST_CASE("GIGP layer: stacked samples (gigp_finish) equal sample-by-sample gigp_forward") {
  const size_t P = 6, W = 2, B = 5, S = 3;
  dkp::random::Stream s(dkp::test::seed() + 11);
  const arma::mat K = random_unit_se_gram(s, P + B);
  const arma::mat v = dkp::random::normal_matrix(s, P, W);
  const arma::mat Lloc = arma::eye(P, P) + 0.3 * dkp::random::normal_matrix(s, P, P);
  ad::Tape tape;
  dkp::layers::KernelBlocks kb = kernel_blocks(tape, K, P, B);
  dkp::layers::GigpParams gp{tape.constant(v), tape.constant(Lloc), tape.constant(0.4)};
  dkp::random::Stream n1(21), n2(21);
  arma::mat u_ref, m_ref;
  double logpq_ref = 0.0;
  for (size_t k = 0; k < S; ++k) {
    const auto o = dkp::layers::gigp_forward(kb, gp, n1);
    u_ref = arma::join_rows(u_ref, o.u.val());
    m_ref = arma::join_rows(m_ref, o.f_mean.val());
    logpq_ref += o.logpq.scalar();
  }
  arma::mat e1(P, W * S), e2(P, W * S);
  for (size_t k = 0; k < S; ++k) {
    e1.cols(k * W, k * W + W - 1) = dkp::random::normal_matrix(n2, P, W);
    e2.cols(k * W, k * W + W - 1) = dkp::random::normal_matrix(n2, P, W);
  }
  const auto g = dkp::layers::gigp_prepare(kb, gp);
  const auto o = dkp::layers::gigp_finish(g, e1, e2);
  CHECK(arma::approx_equal(o.u.val(), u_ref, "absdiff", 1e-10));
  CHECK(arma::approx_equal(o.f_mean.val(), m_ref, "absdiff", 1e-10));
  CHECK(o.logpq.scalar() == doctest::Approx(logpq_ref).epsilon(1e-10));
  // The plain (no tape) evaluation gives the same samples.
  const arma::mat L = Lloc * std::exp(0.4) / arma::mean(Lloc.diag());
  dkp::linalg::CholStats stats;
  const auto gpl = dkp::layers::gigp_prepare_plain(
      K.submat(0, 0, P - 1, P - 1), K.submat(0, P, P - 1, P + B - 1), arma::ones(B), L, v, &stats);
  CHECK(stats.factorisations == 2);  // K_ii and M = C^T C + I
  CHECK(stats.jittered == 0);
  arma::mat u_pl, m_pl;
  dkp::layers::gigp_finish_plain(gpl, e1, e2, &u_pl, m_pl);
  CHECK(arma::approx_equal(u_pl, u_ref, "absdiff", 1e-8));
  CHECK(arma::approx_equal(m_pl, m_ref, "absdiff", 1e-8));
  CHECK(arma::approx_equal(arma::mat(gpl.f_var), o.f_var.val(), "absdiff", 1e-10));
}

TEST_CASE(
    "predict (and its hidden layers) equals a sample-by-sample evaluation with the tape ops and "
    "the same draws") {
  for (const bool options : {false, true})  // options: hidden ARD and per-output precision
    for (size_t depth : {1, 2, 3}) {
      CAPTURE(options);
      CAPTURE(depth);
      const Tiny data = tiny_data(25, 3, 2);
      GiDgpConfig cfg;
      cfg.depth = depth;
      cfg.inducing = 8;
      cfg.log_prec_init = 0.0;
      cfg.hidden_ard = options;
      cfg.per_output_precision = options;
      dkp::random::Stream init(3);
      const GiDgp model(cfg, data.X, data.y, init);
      dkp::autodiff::ParamMap params = model.initial_parameters();
      dkp::random::Stream jiggle(17);
      for (auto& [name, v] : params)
        v += 0.1 * dkp::random::normal_matrix(jiggle, v.n_rows, v.n_cols);
      const arma::mat Xt = data.X.rows(0, 6);
      const size_t S = 4, B = Xt.n_rows, d = data.X.n_cols;
      dkp::random::Stream r1(8), r2(8);
      const auto pred = model.predict(params, Xt, S, r1, true);  // with the hidden layers
      REQUIRE(pred.hidden.size() == S);
      CHECK((pred.hidden_kind == dkp::models::HiddenKind::Features) == (depth > 1));
      const double noise = std::exp(params.at("likelihood.log_noise_var")(0, 0));
      for (size_t s = 0; s < S; ++s) {
        REQUIRE(pred.hidden[s].size() == depth - 1);
        ad::Tape tape;
        const auto p = dkp::autodiff::to_vars(tape, params, false);
        auto key = [](size_t l, const char* w) { return "layer" + std::to_string(l) + "." + w; };
        ad::Var Fi = p.at("inducing_inputs"), Ft = tape.constant(Xt);
        for (size_t l = 1; l <= depth; ++l) {
          const ad::Var log_ell =
              ad::add_scalar(p.at(key(l, "log_lengthscale")), 0.5 * std::log(double(d)));
          const ad::Var h = ad::exp(p.at(key(l, "log_variance")));
          const ad::Var Fi_s = dkp::kernels::scale_columns(Fi, log_ell);
          const ad::Var Ft_s = dkp::kernels::scale_columns(Ft, log_ell);
          dkp::layers::KernelBlocks k;
          k.ii = ad::mul(h, dkp::kernels::se_unit_sym(Fi_s) +
                                tape.constant(cfg.jitter * arma::eye(cfg.inducing, cfg.inducing)));
          k.it = ad::mul(h, dkp::kernels::se_unit(Fi_s, Ft_s));
          k.tt = ad::mul(h, tape.constant(arma::ones(B, 1)));
          const dkp::layers::GigpParams gp{p.at(key(l, "v")), p.at(key(l, "L_loc")),
                                           p.at(key(l, "L_scale"))};
          const size_t W = l == depth ? 1 : d, P = cfg.inducing;
          dkp::layers::GigpOutput out;
          if (options && W > 1) {
            std::vector<ad::Var> Ls;
            for (size_t c = 0; c < W; ++c) {
              Ls.push_back(dkp::layers::gigp_precision_factor(
                  {ad::Var(), ad::cols(gp.L_loc, c * P, c * P + P - 1),
                   ad::cols(gp.L_scale, c, c)}));
            }
            const arma::mat e1 = dkp::random::normal_matrix(r2, P, W);
            const arma::mat e2 = dkp::random::normal_matrix(r2, P, W);
            out = dkp::layers::gigp_forward_per_output(k, gp.v, Ls, e1, e2);
          } else {
            out = dkp::layers::gigp_forward(k, gp, r2);
          }
          if (l == depth) {
            CHECK(
                arma::approx_equal(pred.mean.col(s), arma::vec(out.f_mean.val()), "absdiff", 1e-8));
            CHECK(arma::approx_equal(pred.var.col(s), arma::vec(out.f_var.val() + noise), "absdiff",
                                     1e-8));
          } else {
            Fi = out.u;
            Ft = dkp::layers::sample_outputs(out, r2);
            CHECK(arma::approx_equal(pred.hidden[s][l - 1], Ft.val(), "absdiff", 1e-8));
          }
        }
      }
      CHECK(r1 == r2);  // the same random numbers were consumed
    }
}

TEST_CASE("conditional_moments: the composition's values and gradients, over several panels") {
  // B = 600 points: three panels of the fused op (256 + 256 + 88), forward and backward.
  const size_t P = 12, B = 600, WS = 3;
  dkp::random::Stream s(dkp::test::seed() + 31);
  const arma::mat K = random_unit_se_gram(s, P + B);
  arma::mat Kii = K.submat(0, 0, P - 1, P - 1);
  Kii.diag() += 1e-3;
  const arma::mat Lk = arma::chol(Kii, "lower");
  const arma::mat Kit = K.submat(0, P, P - 1, P + B - 1);
  const arma::mat tt = 1.0 + 0.1 * arma::abs(dkp::random::normal_matrix(s, B, 1));
  const arma::mat w = dkp::random::normal_matrix(s, P, WS);
  // Both outputs contracted with their own random weights, so every element's adjoint counts.
  auto fused = [](ad::Tape&, const std::vector<ad::Var>& x) {
    const auto m = dkp::layers::conditional_moments(x[0], x[1], x[2], x[3]);
    return ad::random_contraction(m.f_mean, 5) + ad::random_contraction(m.f_var, 6);
  };
  auto composed = [](ad::Tape&, const std::vector<ad::Var>& x) {
    const ad::Var A = ad::solve_lower(x[0], x[1]);
    const ad::Var f_var = x[2] - ad::col_sumsq(A);
    return ad::random_contraction(ad::matmul(A, x[3], true, false), 5) +
           ad::random_contraction(f_var, 6);
  };
  const std::vector<arma::mat> in{Lk, Kit, tt, w};
  CHECK(ad::evaluate(fused, in) == doctest::Approx(ad::evaluate(composed, in)).epsilon(1e-12));
  const auto gf = ad::gradients(fused, in), gc = ad::gradients(composed, in);
  for (size_t i = 0; i < in.size(); ++i) {
    CAPTURE(i);
    CHECK(arma::approx_equal(gf[i], gc[i], "absdiff", 1e-9 * (1.0 + arma::abs(gc[i]).max())));
  }
  // Only f_var used (f_mean's backward must still run), and finite differences at a small size.
  auto var_only = [](ad::Tape&, const std::vector<ad::Var>& x) {
    return ad::random_contraction(dkp::layers::conditional_moments(x[0], x[1], x[2], x[3]).f_var,
                                  7);
  };
  auto var_only_composed = [](ad::Tape&, const std::vector<ad::Var>& x) {
    return ad::random_contraction(x[2] - ad::col_sumsq(ad::solve_lower(x[0], x[1])), 7);
  };
  const auto gv = ad::gradients(var_only, in), gvc = ad::gradients(var_only_composed, in);
  for (size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(arma::approx_equal(gv[i], gvc[i], "absdiff", 1e-9 * (1.0 + arma::abs(gvc[i]).max())));
  }
  const std::vector<arma::mat> small{Lk.submat(0, 0, 4, 4), Kit.submat(0, 0, 4, 9), tt.rows(0, 9),
                                     w.rows(0, 4)};
  const auto r = ad::check_gradient(fused, small, {}, {1, 2, 3});
  CHECK_MESSAGE(r.ok, r.detail);
}

TEST_CASE("sample_outputs: f_mean + sqrt(f_var) % noise, value and gradients of the fused op") {
  const size_t B = 7, W = 3;
  dkp::random::Stream s(dkp::test::seed() + 41);
  const arma::mat fm = dkp::random::normal_matrix(s, B, W);
  const arma::mat fv = 0.2 + arma::abs(dkp::random::normal_matrix(s, B, 1));
  const arma::mat eps = dkp::random::normal_matrix(s, B, W);
  auto fused = [&eps](ad::Tape&, const std::vector<ad::Var>& x) {
    return ad::random_contraction(dkp::layers::sample_outputs({{}, x[0], x[1], {}}, eps), 8);
  };
  auto composed = [&eps, W](ad::Tape& tape, const std::vector<ad::Var>& x) {
    const ad::Var sd = ad::matmul(ad::sqrt(x[1]), tape.constant(arma::ones(1, W)));
    return ad::random_contraction(x[0] + ad::mul(sd, tape.constant(eps)), 8);
  };
  const std::vector<arma::mat> in{fm, fv};
  dkp::test::expect_fused_matches(fused, composed, in, 1e-14, 1e-12);
  const auto r = ad::check_gradient(fused, in);
  CHECK_MESSAGE(r.ok, r.detail);
  ad::Tape tape;
  CHECK_THROWS_AS(dkp::layers::sample_outputs({{}, tape.constant(fm), tape.constant(fv), {}},
                                              arma::mat(B, W + 1, arma::fill::zeros)),
                  dkp::Error);
}

TEST_CASE("the plain (prediction) layers count their factorisations and jitter events") {
  // K_ii = B B^T - 1e-9 I (rank 3 minus a little): always needs jitter (see the autodiff tests).
  const size_t P = 6, Bn = 4, W = 2, S = 2;
  dkp::random::Stream s(dkp::test::seed() + 12);
  const arma::mat F = dkp::random::normal_matrix(s, P, 3);
  const arma::mat Kii = F * F.t() - 1e-9 * arma::eye(P, P);
  const arma::mat Kit = dkp::random::normal_matrix(s, P, Bn);
  const arma::mat v = dkp::random::normal_matrix(s, P, W);
  dkp::test::QuietLog quiet;
  dkp::linalg::CholStats one;
  dkp::layers::gigp_prepare_plain(Kii, Kit, arma::ones(Bn), arma::eye(P, P), v, &one);
  CHECK(one.factorisations == 2);
  CHECK(one.jittered == 1);
  CHECK(one.retries >= 1);
  CHECK(one.max_jitter_rel > 0.0);
  dkp::linalg::CholStats per;
  arma::mat f_mean;
  dkp::layers::gigp_forward_per_output_plain(
      Kii, Kit, arma::ones(Bn), {arma::eye(P, P), arma::eye(P, P)}, v,
      dkp::random::normal_matrix(s, P, W * S), dkp::random::normal_matrix(s, P, W * S), nullptr,
      f_mean, &per);
  CHECK(per.factorisations == 1 + W);  // K_ii once, M per column
  CHECK(per.jittered == 1);
}
