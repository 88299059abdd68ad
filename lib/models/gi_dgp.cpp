#include "models/gi_dgp.hpp"

#include <cmath>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "kernels/se.hpp"
#include "layers/gigp.hpp"
#include "util/error.hpp"

namespace dkp::models {

namespace ad = dkp::autodiff;
using autodiff::Var;

namespace {

std::string key(size_t layer, const char* what) {
  return fmt::format("layer{}.{}", layer, what);
}

}  // namespace

GiDgp::GiDgp(const GiDgpConfig& cfg, const arma::mat& X_train, const arma::vec& y_train,
             random::Stream& init)
    : cfg_(cfg) {
  if (cfg.depth < 1) throw ConfigError("gi-dgp: depth must be at least 1");
  if (X_train.n_rows != y_train.n_elem || X_train.n_rows < 2) {
    throw ConfigError(
        fmt::format("gi-dgp: {} training inputs and {} targets", X_train.n_rows, y_train.n_elem));
  }
  d0_ = X_train.n_cols;
  width_ = cfg.width > 0 ? cfg.width : d0_;
  cfg_.inducing = std::min<size_t>(cfg.inducing, X_train.n_rows);
  const size_t P = cfg_.inducing;
  const arma::uvec pick = random::permutation(init, X_train.n_rows).head(P);
  init_["inducing_inputs"] = X_train.rows(pick);
  for (size_t l = 1; l <= cfg.depth; ++l) {
    const size_t in_dim = l == 1 ? d0_ : width_;
    const size_t out_dim = l == cfg.depth ? 1 : width_;
    init_[key(l, "log_lengthscale")] = arma::zeros(1, l == 1 ? in_dim : 1);
    init_[key(l, "log_variance")] = arma::zeros(1, 1);
    init_[key(l, "v")] =
        l == cfg.depth ? arma::mat(y_train.elem(pick)) : random::normal_matrix(init, P, out_dim);
    init_[key(l, "L_loc")] = arma::eye(P, P);
    init_[key(l, "L_scale")] = arma::mat(1, 1, arma::fill::value(0.5 * cfg.log_prec_init));
  }
  init_["likelihood.log_noise_var"] =
      arma::mat(1, 1, arma::fill::value(std::log(cfg.noise_var_init)));
}

std::string GiDgp::describe() const {
  return fmt::format(
      "global-inducing DGP: depth {}, width {}, {} inducing points, SE kernel "
      "(ARD in layer 1)",
      cfg_.depth, width_, cfg_.inducing);
}

GiDgp::SampleOut GiDgp::forward(const VarMap& p, const Var& X, random::Stream& rng) const {
  ad::Tape& tape = X.tape();
  Var Fi = get(p, "inducing_inputs");
  Var Ft = X;
  const arma::uword P = Fi.n_rows(), B = X.n_rows();
  Var logpq = tape.constant(0.0);
  for (size_t l = 1; l <= cfg_.depth; ++l) {
    const double nu_in = double(l == 1 ? d0_ : width_);
    // SE on Gram distances with G = F F^T / nu_in: scale features by 1 / (sqrt(nu_in) l).
    const Var log_ell = ad::add_scalar(get(p, key(l, "log_lengthscale")), 0.5 * std::log(nu_in));
    const Var h = ad::exp(get(p, key(l, "log_variance")));
    const Var Fi_s = kernels::scale_columns(Fi, log_ell);
    const Var Ft_s = kernels::scale_columns(Ft, log_ell);
    layers::KernelBlocks k;
    k.ii = ad::mul(h, kernels::se_unit_sym(Fi_s) + tape.constant(cfg_.jitter * arma::eye(P, P)));
    k.it = ad::mul(h, kernels::se_unit(Fi_s, Ft_s));
    k.tt = ad::mul(h, tape.constant(arma::ones(B, 1)));
    layers::GigpParams gp{get(p, key(l, "v")), get(p, key(l, "L_loc")), get(p, key(l, "L_scale"))};
    const layers::GigpOutput out = layers::gigp_forward(k, gp, rng);
    logpq = logpq + out.logpq;
    if (l == cfg_.depth) return {out.f_mean, out.f_var, logpq};
    Fi = out.u;
    Ft = layers::sample_outputs(out, rng);
  }
  throw Error("gi-dgp: unreachable");
}

ElboEstimate GiDgp::elbo(const VarMap& p, const arma::mat& X, const arma::vec& y, double n_train,
                         size_t samples, double kl_weight, random::Stream& rng) const {
  ad::Tape& tape = get(p, "inducing_inputs").tape();
  const Var Xv = tape.constant(X);
  const Var yv = tape.constant(y);
  const Var log_s2 = get(p, "likelihood.log_noise_var");
  const Var inv_s2 = ad::exp(ad::neg(log_s2));
  const double B = double(X.n_rows);
  Var ell_total = tape.constant(0.0), logpq_total = tape.constant(0.0);
  for (size_t s = 0; s < samples; ++s) {
    const SampleOut o = forward(p, Xv, rng);
    // Analytic E_{f ~ N(m, v)} log N(y; f, s2) summed over the batch.
    const Var sq = ad::sum(ad::square(yv - o.f_mean) + o.f_var);
    const Var ell = ad::scale(log_s2, -0.5 * B) - ad::scale(ad::mul(inv_s2, sq), 0.5) -
                    tape.constant(0.5 * B * std::log(2.0 * M_PI));
    ell_total = ell_total + ell;
    logpq_total = logpq_total + o.logpq;
  }
  const double S = double(samples);
  const Var ell_mean = ad::scale(ell_total, 1.0 / (S * B));
  const Var kl = ad::scale(logpq_total, -1.0 / (S * n_train));  // (log q - log p) / N
  ElboEstimate e;
  e.elbo = ell_mean - ad::scale(kl, kl_weight);
  e.expected_loglik = ell_mean.scalar();
  e.kl = kl.scalar();
  return e;
}

Predictive GiDgp::predict(const ParamMap& params, const arma::mat& X, size_t samples,
                          random::Stream& rng) const {
  Predictive pred;
  pred.mean.set_size(X.n_rows, samples);
  pred.var.set_size(X.n_rows, samples);
  const double noise = std::exp(params.at("likelihood.log_noise_var")(0, 0));
  for (size_t s = 0; s < samples; ++s) {
    ad::Tape tape;  // constants only: no closures are recorded
    const VarMap p = to_vars(tape, params, false);
    const SampleOut o = forward(p, tape.constant(X), rng);
    pred.mean.col(s) = o.f_mean.val();
    pred.var.col(s) = o.f_var.val() + noise;
  }
  return pred;
}

}  // namespace dkp::models
