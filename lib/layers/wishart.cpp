#include "layers/wishart.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"
#include "autodiff/ops_shape.hpp"
#include "autodiff/ops_special.hpp"
#include "distributions/gw.hpp"
#include "distributions/wishart.hpp"
#include "layers/gigp.hpp"
#include "util/error.hpp"

namespace dkp::layers {

namespace ad = dkp::autodiff;
namespace dist = dkp::distributions;
using autodiff::get;
using autodiff::layer_key;
using autodiff::Var;

WishartPosterior parse_wishart_posterior(const std::string& name) {
  if (name.empty() || name == "gw") return WishartPosterior::Gw;
  if (name == "agw") return WishartPosterior::Agw;
  if (name == "abgw") return WishartPosterior::Abgw;
  throw ConfigError(fmt::format("dwp: unknown posterior '{}' (gw, agw, abgw)", name));
}

std::string to_string(WishartPosterior p) {
  switch (p) {
    case WishartPosterior::Gw:
      return "gw";
    case WishartPosterior::Agw:
      return "agw";
    case WishartPosterior::Abgw:
      return "abgw";
  }
  return "?";
}

WishartLayer::WishartLayer(size_t layer, size_t inducing, size_t nu, const WishartOptions& options)
    : l_(layer), P_(inducing), nu_(nu), m_(std::min(inducing, nu)), o_(options) {}

void WishartLayer::add_initial_parameters(autodiff::ParamMap& params, random::Stream& init) const {
  params[layer_key(l_, "logit_q")] = arma::mat(1, 1, arma::fill::value(o_.logit_q_init));
  params[layer_key(l_, "V")] = random::normal_matrix(init, P_, P_);
  params[layer_key(l_, "log_v_scale")] = arma::mat(1, 1, arma::fill::value(-std::log(double(P_))));
  arma::mat log_alpha(m_, 1);
  for (size_t j = 0; j < m_; ++j) log_alpha(j, 0) = std::log(0.5 * double(nu_ - j));
  params[layer_key(l_, "log_alpha")] = log_alpha;
  params[layer_key(l_, "log_beta")] = arma::mat(m_, 1, arma::fill::value(std::log(0.5)));
  // The same initial mu either way: N(0, mu_init_scale^2 / m) (bayesfunc: mu_raw ~ N(0, 1)).
  params[layer_key(l_, "mu")] =
      random::normal_matrix(init, P_, m_) *
      (o_.mu_raw ? o_.mu_init_scale : o_.mu_init_scale / std::sqrt(double(m_)));
  params[layer_key(l_, "log_sigma")] = arma::mat(P_, m_, arma::fill::value(o_.log_sigma_init));
  if (o_.posterior != WishartPosterior::Gw && !o_.freeze_a_prime) {
    params[layer_key(l_, "A_prime")] = arma::eye(P_, P_) / o_.a_prime_scale;
  }
  if (o_.posterior == WishartPosterior::Abgw) params[layer_key(l_, "B")] = arma::eye(m_, m_);
}

void WishartLayer::set_prior_posterior(autodiff::ParamMap& params) const {
  params[layer_key(l_, "logit_q")] = arma::mat(1, 1, arma::fill::value(-1000.0));  // q = 0
  arma::mat log_alpha(m_, 1);
  for (size_t j = 0; j < m_; ++j) log_alpha(j, 0) = std::log(0.5 * double(nu_ - j));
  params[layer_key(l_, "log_alpha")] = log_alpha;
  params[layer_key(l_, "log_beta")] = arma::mat(m_, 1, arma::fill::value(std::log(0.5)));
  params[layer_key(l_, "mu")] = arma::zeros(P_, m_);
  params[layer_key(l_, "log_sigma")] = arma::zeros(P_, m_);
  if (o_.posterior != WishartPosterior::Gw && !o_.freeze_a_prime) {
    params[layer_key(l_, "A_prime")] = arma::eye(P_, P_) / o_.a_prime_scale;
  }
  if (o_.posterior == WishartPosterior::Abgw) params[layer_key(l_, "B")] = arma::eye(m_, m_);
}

namespace {

Var constant_on(ad::Tape& tape, const Var& v) {
  return v.valid() ? tape.constant(v.val()) : Var();
}

}  // namespace

WishartLayer::Shared WishartLayer::Shared::on(ad::Tape& tape) const {
  return {constant_on(tape, kernel_weight),
          constant_on(tape, v_term),
          constant_on(tape, a_prime),
          constant_on(tape, logdet_a_prime),
          {}};
}

WishartLayer::Prep WishartLayer::Prep::on(ad::Tape& tape) const {
  return {constant_on(tape, Lk), constant_on(tape, Lp), constant_on(tape, Lq),
          constant_on(tape, Ak), constant_on(tape, sd)};
}

WishartLayer::Shared WishartLayer::share(const autodiff::VarMap& p) const {
  Shared sh;
  const Var logit_q = get(p, layer_key(l_, "logit_q"));
  const Var q = ad::sigmoid(logit_q);
  const Var one_minus_q = ad::sigmoid(ad::neg(logit_q));
  const Var V = get(p, layer_key(l_, "V"));
  const Var vscale = ad::mul(q, ad::exp(get(p, layer_key(l_, "log_v_scale"))));
  sh.kernel_weight = ad::scale(one_minus_q, 1.0 / double(nu_));
  sh.v_term = ad::mul(vscale, ad::matmul(V, V, false, true));
  if (o_.posterior != WishartPosterior::Gw) {
    Var A_prime =
        o_.freeze_a_prime ? V.tape().constant(arma::eye(P_, P_)) : get(p, layer_key(l_, "A_prime"));
    if (o_.a_prime_scale != 1.0 && !o_.freeze_a_prime) {
      A_prime = ad::scale(A_prime, o_.a_prime_scale);
    }
    if (o_.a_prime_unit_lower && !o_.freeze_a_prime) {
      A_prime = ad::tril(A_prime, -1) + V.tape().constant(arma::eye(P_, P_));
    }
    sh.a_prime = A_prime;
    sh.logdet_a_prime = dist::log_abs_det(A_prime);
    if (o_.stl_mixing && !arma::inv(sh.a_prime_inv, A_prime.val())) {
      throw Error(fmt::format("dwp: layer {} A' is singular", l_));
    }
  }
  return sh;
}

WishartLayer::Prep WishartLayer::prepare(const Var& Kii, const Var& Kit, const Var& tt,
                                         const Shared& shared, bool conditional) const {
  ad::Tape& tape = Kii.tape();
  const arma::uword P = Kii.n_rows();
  const double nu = double(nu_);
  Prep k;
  k.Lk = ad::cholesky(Kii, "dwp K_ii");
  k.Lp = ad::scale(k.Lk, 1.0 / std::sqrt(nu));  // chol(K_ii / nu), the prior's scale
  Var Psi = ad::mul(shared.kernel_weight, Kii) + shared.v_term;
  if (o_.q_jitter > 0.0) {
    Psi = Psi + tape.constant(o_.q_jitter * Psi.val().max() * arma::eye(P, P));
  }
  k.Lq = ad::cholesky(Psi, "dwp posterior scale Psi");
  // The train/test conditional (GW paper eqs. 40-44): mean k_ti K_ii^{-1} F_i = Ak^T L_K^{-1} F_i,
  // Sigma_tt.i = (k_tt - k_ti K_ii^{-1} k_it) / nu with k_tt = h (SE diagonal). When the kernel
  // blocks are shared by the samples, the solve Ak is kept for all of them; otherwise sample()
  // finishes it with the fused layers::conditional_moments once F_i is sampled.
  if (!conditional) return k;
  k.Ak = ad::solve_lower(k.Lk, Kit);  // P x B
  const Var schur = tt - ad::col_sumsq(k.Ak);
  k.sd = ad::sqrt(ad::scale(schur, 1.0 / nu));
  return k;
}

WishartLayer::Sample WishartLayer::sample(const autodiff::VarMap& p, const Shared& shared,
                                          const Prep& k, const Var& Kit, const Var& tt,
                                          random::Stream& rng, bool with_logpq) const {
  ad::Tape& tape = Kit.tape();
  const arma::uword P = P_, B = tt.n_rows();
  const double nu = double(nu_);
  const int nu_int = int(nu_);
  // ---- Q(G_ii^l | G_ii^{l-1}) and P(G_ii^l | G_ii^{l-1}) ----
  const dist::BartlettParams bp{
      ad::exp(get(p, layer_key(l_, "log_alpha"))), ad::exp(get(p, layer_key(l_, "log_beta"))),
      o_.mu_raw ? ad::scale(get(p, layer_key(l_, "mu")), 1.0 / std::sqrt(double(m_)))
                : get(p, layer_key(l_, "mu")),
      ad::exp(get(p, layer_key(l_, "log_sigma")))};
  // Sticking the landing: the Bartlett parameters enter log Q as constants.
  const dist::BartlettParams bq = o_.sticking_the_landing ? dist::detached(bp) : bp;
  dist::PsdSample s;
  Var logq;
  // A = L_Q A' (AGW paper eq. 16), never formed: see distributions::FactoredA.
  const dist::FactoredA A = o_.posterior == WishartPosterior::Gw
                                ? dist::FactoredA{}
                                : dist::FactoredA{k.Lq, shared.a_prime, shared.logdet_a_prime};
  // Sticking the landing on A' and B (stl_mixing): log Q(G; A'_0, B_0) at the sample, with T
  // recovered from G at the constant A'_0, B_0 (distributions::factor_at_fixed_mixing).
  const auto log_q = [&](const dist::PsdSample& smp, const Var* Bm) {
    if (!o_.stl_mixing) {
      return Bm ? dist::abgw_log_prob(smp, A, *Bm, nu_int, bq)
                : dist::agw_log_prob(smp, A, nu_int, bq);
    }
    const dist::PsdSample sq{
        smp.G, smp.F,
        dist::factor_at_fixed_mixing(smp.bartlett, A.A_prime, shared.a_prime_inv, Bm)};
    const dist::FactoredA A0{k.Lq, tape.constant(A.A_prime.val()),
                             tape.constant(A.log_abs_det_A_prime.val())};
    return Bm ? dist::abgw_log_prob(sq, A0, tape.constant(Bm->val()), nu_int, bq)
              : dist::agw_log_prob(sq, A0, nu_int, bq);
  };
  switch (o_.posterior) {
    case WishartPosterior::Gw:
      s = dist::gw_sample(k.Lq, nu_int, bp, rng, o_.gamma_method);
      if (with_logpq) logq = dist::gw_log_prob(s, k.Lq, nu_int, bq);
      break;
    case WishartPosterior::Agw:
      s = dist::agw_sample(A, nu_int, bp, rng, o_.gamma_method);
      if (with_logpq) logq = log_q(s, nullptr);
      break;
    case WishartPosterior::Abgw: {
      const Var Bm = get(p, layer_key(l_, "B"));
      s = dist::abgw_sample(A, Bm, nu_int, bp, rng, o_.gamma_method);
      if (with_logpq) logq = log_q(s, &Bm);
      break;
    }
  }
  Sample out;
  if (with_logpq) out.logpq = dist::wishart_log_prob_factor(s.F, k.Lp, nu) - logq;

  // ---- train/test features from the conditional prior (GW paper eqs. 40-44) ----
  out.Fi = nu_ > m_ ? ad::join_horiz(s.F, tape.constant(arma::zeros(P, nu_ - m_))) : s.F;
  const Var w = ad::solve_lower(k.Lk, out.Fi);  // L_K^{-1} F_i
  Var mean, sd;                                 // B x nu, B x 1
  if (k.Ak.valid()) {
    mean = ad::matmul(k.Ak, w, true, false);
    sd = k.sd;
  } else {
    const ConditionalMoments m = conditional_moments(k.Lk, Kit, tt, w);
    mean = m.f_mean;
    sd = ad::sqrt(ad::scale(m.f_var, 1.0 / nu));
  }
  out.Ft = ad::add_scaled_noise(mean, random::normal_matrix(rng, B, nu_), sd);
  return out;
}

}  // namespace dkp::layers
