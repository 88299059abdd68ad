#include "models/dwp.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"
#include "autodiff/ops_shape.hpp"
#include "autodiff/ops_special.hpp"
#include "distributions/gw.hpp"
#include "distributions/wishart.hpp"
#include "kernels/se.hpp"
#include "layers/gigp.hpp"
#include "util/error.hpp"

namespace dkp::models {

namespace ad = dkp::autodiff;
namespace dist = dkp::distributions;
using autodiff::Var;

DwpPosterior parse_dwp_posterior(const std::string& name) {
  if (name.empty() || name == "gw") return DwpPosterior::Gw;
  if (name == "agw") return DwpPosterior::Agw;
  if (name == "abgw") return DwpPosterior::Abgw;
  throw ConfigError(fmt::format("dwp: unknown posterior '{}' (gw, agw, abgw)", name));
}

std::string to_string(DwpPosterior p) {
  switch (p) {
    case DwpPosterior::Gw:
      return "gw";
    case DwpPosterior::Agw:
      return "agw";
    case DwpPosterior::Abgw:
      return "abgw";
  }
  return "?";
}

Dwp::Dwp(const DwpConfig& cfg, const arma::mat& X_train, const arma::vec& y_train,
         random::Stream& init)
    : cfg_(cfg) {
  if (cfg.depth < 1) throw ConfigError("dwp: depth must be at least 1");
  const arma::uvec pick = init_inducing_inputs("dwp", X_train, y_train, cfg.inducing, init, init_);
  d0_ = X_train.n_cols;
  width_ = cfg.width > 0 ? cfg.width : d0_;
  cfg_.inducing = pick.n_elem;
  const size_t P = cfg_.inducing;
  m_ = std::min(P, width_);
  for (size_t l = 1; l <= cfg.depth; ++l) {
    init_[layer_key(l, "log_lengthscale")] = arma::zeros(1, l == 1 ? d0_ : 1);
    init_[layer_key(l, "log_variance")] = arma::zeros(1, 1);
    if (l == cfg.depth) {
      // Output GIGP layer: as GiDgp's output layer.
      init_[layer_key(l, "v")] = arma::mat(y_train.elem(pick));
      init_[layer_key(l, "L_loc")] = arma::eye(P, P);
      init_[layer_key(l, "L_scale")] = arma::mat(1, 1, arma::fill::value(0.5 * cfg.log_prec_init));
      continue;
    }
    // Hidden Wishart layer: bayesfunc@dwp WishartLayer inits (notes section 3).
    init_[layer_key(l, "logit_q")] = arma::mat(1, 1, arma::fill::value(cfg.logit_q_init));
    init_[layer_key(l, "V")] = random::normal_matrix(init, P, P);
    init_[layer_key(l, "log_v_scale")] = arma::mat(1, 1, arma::fill::value(-std::log(double(P))));
    arma::mat log_alpha(m_, 1);
    for (size_t j = 0; j < m_; ++j) log_alpha(j, 0) = std::log(0.5 * double(width_ - j));
    init_[layer_key(l, "log_alpha")] = log_alpha;
    init_[layer_key(l, "log_beta")] = arma::mat(m_, 1, arma::fill::value(std::log(0.5)));
    // The same initial mu either way: N(0, mu_init_scale^2 / m) (bayesfunc: mu_raw ~ N(0, 1)).
    init_[layer_key(l, "mu")] =
        random::normal_matrix(init, P, m_) *
        (cfg.mu_raw ? cfg.mu_init_scale : cfg.mu_init_scale / std::sqrt(double(m_)));
    init_[layer_key(l, "log_sigma")] = arma::mat(P, m_, arma::fill::value(cfg.log_sigma_init));
    if (cfg.posterior != DwpPosterior::Gw) {
      init_[layer_key(l, "A_prime")] = arma::eye(P, P) / cfg.a_prime_scale;
    }
    if (cfg.posterior == DwpPosterior::Abgw) init_[layer_key(l, "B")] = arma::eye(m_, m_);
  }
  init_["likelihood.log_noise_var"] =
      arma::mat(1, 1, arma::fill::value(std::log(cfg.noise_var_init)));
}

std::string Dwp::describe() const {
  return fmt::format(
      "deep Wishart process ({} posterior): depth {}, width {}, {} inducing points, SE kernel "
      "(ARD in layer 1), global-inducing output layer",
      to_string(cfg_.posterior), cfg_.depth, width_, cfg_.inducing);
}

ParamMap Dwp::with_prior_posterior(const ParamMap& params) const {
  ParamMap out = params;
  const size_t P = cfg_.inducing;
  for (size_t l = 1; l < cfg_.depth; ++l) {
    out[layer_key(l, "logit_q")] = arma::mat(1, 1, arma::fill::value(-1000.0));  // q = 0 exactly
    arma::mat log_alpha(m_, 1);
    for (size_t j = 0; j < m_; ++j) log_alpha(j, 0) = std::log(0.5 * double(width_ - j));
    out[layer_key(l, "log_alpha")] = log_alpha;
    out[layer_key(l, "log_beta")] = arma::mat(m_, 1, arma::fill::value(std::log(0.5)));
    out[layer_key(l, "mu")] = arma::zeros(P, m_);
    out[layer_key(l, "log_sigma")] = arma::zeros(P, m_);
    if (cfg_.posterior != DwpPosterior::Gw) {
      out[layer_key(l, "A_prime")] = arma::eye(P, P) / cfg_.a_prime_scale;
    }
    if (cfg_.posterior == DwpPosterior::Abgw) out[layer_key(l, "B")] = arma::eye(m_, m_);
  }
  return out;
}

Dwp::Shared Dwp::prepare(const VarMap& p) const {
  Shared sh;
  const double nu = double(width_);
  for (size_t l = 1; l < cfg_.depth; ++l) {
    const Var logit_q = get(p, layer_key(l, "logit_q"));
    const Var q = ad::sigmoid(logit_q);
    const Var one_minus_q = ad::sigmoid(ad::neg(logit_q));
    const Var V = get(p, layer_key(l, "V"));
    const Var vscale = ad::mul(q, ad::exp(get(p, layer_key(l, "log_v_scale"))));
    sh.kernel_weight.push_back(ad::scale(one_minus_q, 1.0 / nu));
    sh.v_term.push_back(ad::mul(vscale, ad::matmul(V, V, false, true)));
    if (cfg_.posterior != DwpPosterior::Gw) {
      Var A_prime = get(p, layer_key(l, "A_prime"));
      if (cfg_.a_prime_scale != 1.0) A_prime = ad::scale(A_prime, cfg_.a_prime_scale);
      sh.a_prime.push_back(A_prime);
      sh.logdet_a_prime.push_back(dist::log_abs_det(A_prime));
      if (cfg_.stl_mixing) {
        arma::mat inv;
        if (!arma::inv(inv, A_prime.val())) {
          throw Error(fmt::format("dwp: layer {} A' is singular", l));
        }
        sh.a_prime_inv.push_back(std::move(inv));
      }
    }
  }
  return sh;
}

Dwp::LayerPrep Dwp::prepare_layer(const VarMap& p, const Shared& shared, size_t l, const Var& Fi,
                                  const Var& Ft) const {
  ad::Tape& tape = Fi.tape();
  const arma::uword P = Fi.n_rows(), B = Ft.n_rows();
  const double nu = double(width_);
  LayerPrep k;
  // SE kernel on Gram distances. Layer 1: G_0 = X X^T / nu_0, so the inputs are scaled by
  // 1 / (sqrt(nu_0) l_d); deeper layers: G = F F^T, so the features are scaled by 1 / l.
  Var log_ell = get(p, layer_key(l, "log_lengthscale"));
  if (l == 1) log_ell = ad::add_scalar(log_ell, 0.5 * std::log(double(d0_)));
  k.h = ad::exp(get(p, layer_key(l, "log_variance")));
  const Var Fi_s = kernels::scale_columns(Fi, log_ell);
  const Var Ft_s = kernels::scale_columns(Ft, log_ell);
  k.Kii = kernels::se_scaled_sym(k.h, Fi_s, cfg_.jitter);
  k.Kit = kernels::se_scaled(k.h, Fi_s, Ft_s);
  k.tt = ad::mul(k.h, tape.constant(arma::ones(B, 1)));
  if (l == cfg_.depth) return k;  // the output layer samples everything else

  k.Lk = ad::cholesky(k.Kii, "dwp K_ii");
  k.Lp = ad::scale(k.Lk, 1.0 / std::sqrt(nu));  // chol(K_ii / nu), the prior's scale
  Var Psi = ad::mul(shared.kernel_weight[l - 1], k.Kii) + shared.v_term[l - 1];
  if (cfg_.q_jitter > 0.0) {
    Psi = Psi + tape.constant(cfg_.q_jitter * Psi.val().max() * arma::eye(P, P));
  }
  k.Lq = ad::cholesky(Psi, "dwp posterior scale Psi");
  // The train/test conditional (GW paper eqs. 40-44): mean k_ti K_ii^{-1} F_i = Ak^T L_K^{-1} F_i,
  // Sigma_tt.i = (k_tt - k_ti K_ii^{-1} k_it) / nu with k_tt = h (SE diagonal). Layer 1's part is
  // shared by the samples, so its solve Ak is kept for all of them; a deeper layer's is finished by
  // forward() with the fused layers::conditional_moments once F_i is sampled.
  if (l != 1) return k;
  k.Ak = ad::solve_lower(k.Lk, k.Kit);  // P x B
  const Var schur = k.tt - ad::col_sumsq(k.Ak);
  k.sd = ad::sqrt(ad::scale(schur, 1.0 / nu));
  return k;
}

Dwp::SampleOut Dwp::forward(const VarMap& p, const Shared& shared, const LayerPrep& first,
                            const Var& X, random::Stream& rng, Trace* trace,
                            bool with_logpq) const {
  ad::Tape& tape = X.tape();
  Var Fi = get(p, "inducing_inputs");
  Var Ft = X;
  const arma::uword P = Fi.n_rows(), B = X.n_rows();
  const double nu = double(width_);
  const int nu_int = int(width_);
  Var logpq = tape.constant(0.0);
  for (size_t l = 1; l <= cfg_.depth; ++l) {
    const LayerPrep k = l == 1 ? first : prepare_layer(p, shared, l, Fi, Ft);
    if (l == cfg_.depth) {
      layers::KernelBlocks kb{k.Kii, k.Kit, k.tt};
      layers::GigpParams gp{get(p, layer_key(l, "v")), get(p, layer_key(l, "L_loc")),
                            get(p, layer_key(l, "L_scale"))};
      const layers::GigpOutput out = layers::gigp_forward(kb, gp, rng);
      if (trace) {
        trace->output_logpq = out.logpq.scalar();
        trace->f_mean = out.f_mean.val();
        trace->f_var = out.f_var.val();
      }
      return {out.f_mean, out.f_var, with_logpq ? logpq + out.logpq : Var()};
    }

    // ---- hidden Wishart layer l: Q(G_ii^l | G_ii^{l-1}) and P(G_ii^l | G_ii^{l-1}) ----
    const dist::BartlettParams bp{
        ad::exp(get(p, layer_key(l, "log_alpha"))), ad::exp(get(p, layer_key(l, "log_beta"))),
        cfg_.mu_raw ? ad::scale(get(p, layer_key(l, "mu")), 1.0 / std::sqrt(double(m_)))
                    : get(p, layer_key(l, "mu")),
        ad::exp(get(p, layer_key(l, "log_sigma")))};
    // Sticking the landing: the Bartlett parameters enter log Q as constants.
    const dist::BartlettParams bq = cfg_.sticking_the_landing ? dist::detached(bp) : bp;
    dist::PsdSample s;
    Var logq;
    // A = L_Q A' (AGW paper eq. 16), never formed: see distributions::FactoredA.
    const dist::FactoredA A =
        cfg_.posterior == DwpPosterior::Gw
            ? dist::FactoredA{}
            : dist::FactoredA{k.Lq, shared.a_prime[l - 1], shared.logdet_a_prime[l - 1]};
    // Sticking the landing on A' and B (stl_mixing): log Q(G; A'_0, B_0) at the sample, with T
    // recovered from G at the constant A'_0, B_0 (distributions::factor_at_fixed_mixing).
    const auto log_q = [&](const dist::PsdSample& smp, const Var* Bm) {
      if (!cfg_.stl_mixing) {
        return Bm ? dist::abgw_log_prob(smp, A, *Bm, nu_int, bq)
                  : dist::agw_log_prob(smp, A, nu_int, bq);
      }
      const dist::PsdSample sq{
          smp.G, smp.F,
          dist::factor_at_fixed_mixing(smp.bartlett, A.A_prime, shared.a_prime_inv[l - 1], Bm)};
      const dist::FactoredA A0{k.Lq, tape.constant(A.A_prime.val()),
                               tape.constant(A.log_abs_det_A_prime.val())};
      return Bm ? dist::abgw_log_prob(sq, A0, tape.constant(Bm->val()), nu_int, bq)
                : dist::agw_log_prob(sq, A0, nu_int, bq);
    };
    switch (cfg_.posterior) {
      case DwpPosterior::Gw:
        s = dist::gw_sample(k.Lq, nu_int, bp, rng, cfg_.gamma_method);
        if (with_logpq) logq = dist::gw_log_prob(s, k.Lq, nu_int, bq);
        break;
      case DwpPosterior::Agw:
        s = dist::agw_sample(A, nu_int, bp, rng, cfg_.gamma_method);
        if (with_logpq) logq = log_q(s, nullptr);
        break;
      case DwpPosterior::Abgw: {
        const Var Bm = get(p, layer_key(l, "B"));
        s = dist::abgw_sample(A, Bm, nu_int, bp, rng, cfg_.gamma_method);
        if (with_logpq) logq = log_q(s, &Bm);
        break;
      }
    }
    Var layer_logpq;
    if (with_logpq) {
      layer_logpq = dist::wishart_log_prob_factor(s.F, k.Lp, nu) - logq;
      logpq = logpq + layer_logpq;
    }

    // ---- train/test features from the conditional prior (GW paper eqs. 40-44) ----
    const Var Fi_new =
        width_ > m_ ? ad::join_horiz(s.F, tape.constant(arma::zeros(P, width_ - m_))) : s.F;
    const Var w = ad::solve_lower(k.Lk, Fi_new);  // L_K^{-1} F_i
    Var mean, sd;                                 // B x nu, B x 1
    if (k.Ak.valid()) {
      mean = ad::matmul(k.Ak, w, true, false);
      sd = k.sd;
    } else {
      const layers::ConditionalMoments m = layers::conditional_moments(k.Lk, k.Kit, k.tt, w);
      mean = m.f_mean;
      sd = ad::sqrt(ad::scale(m.f_var, 1.0 / nu));
    }
    const Var Ft_new = ad::add_scaled_noise(mean, random::normal_matrix(rng, B, width_), sd);
    Fi = Fi_new;
    Ft = Ft_new;
    if (trace) {
      trace->features.push_back(arma::join_vert(Fi.val(), Ft.val()));
      if (with_logpq) trace->layer_logpq.push_back(layer_logpq.scalar());
    }
  }
  throw Error("dwp: unreachable");
}

ElboEstimate Dwp::elbo(const VarMap& p, const arma::mat& X, const arma::vec& y, double n_train,
                       size_t samples, double kl_weight, random::Stream& rng) const {
  ad::Tape& tape = get(p, "inducing_inputs").tape();
  const Var Xv = tape.constant(X);
  const Var yv = tape.constant(y);
  const Var log_s2 = get(p, "likelihood.log_noise_var");
  const Var inv_s2 = ad::exp(ad::neg(log_s2));
  const double B = double(X.n_rows);
  const Shared shared = prepare(p);
  const LayerPrep first = prepare_layer(p, shared, 1, get(p, "inducing_inputs"), Xv);
  Var ell_total = tape.constant(0.0), logpq_total = tape.constant(0.0);
  for (size_t s = 0; s < samples; ++s) {
    const SampleOut o = forward(p, shared, first, Xv, rng, nullptr);
    ell_total = ell_total + gaussian_ell_sum(yv, o.f_mean, o.f_var, log_s2, inv_s2);
    logpq_total = logpq_total + o.logpq;
  }
  return assemble_elbo(ell_total, logpq_total, double(samples), B, n_train, kl_weight);
}

Predictive Dwp::predict(const ParamMap& params, const arma::mat& X, size_t samples,
                        random::Stream& rng, bool keep_hidden) const {
  Predictive pred;
  pred.mean.set_size(X.n_rows, samples);
  pred.var.set_size(X.n_rows, samples);
  if (keep_hidden) {
    pred.hidden.assign(samples, {});
    pred.hidden_kind = HiddenKind::Features;
  }
  const double noise = std::exp(params.at("likelihood.log_noise_var")(0, 0));
  ad::Tape shared_tape;  // constants only: no closures are recorded
  const VarMap shared_p = to_vars(shared_tape, params, false);
  const Shared shared = prepare(shared_p);
  const LayerPrep first =
      prepare_layer(shared_p, shared, 1, get(shared_p, "inducing_inputs"), shared_tape.constant(X));
  for (size_t s = 0; s < samples; ++s) {
    // The shared values as constants on this sample's tape (freed with it).
    ad::Tape tape;
    auto local = [&tape](const Var& v) { return v.valid() ? tape.constant(v.val()) : Var(); };
    const VarMap p = to_vars(tape, params, false);
    Shared sh;
    for (size_t l = 0; l < shared.v_term.size(); ++l) {
      sh.kernel_weight.push_back(local(shared.kernel_weight[l]));
      sh.v_term.push_back(local(shared.v_term[l]));
    }
    for (size_t l = 0; l < shared.a_prime.size(); ++l) {
      sh.a_prime.push_back(local(shared.a_prime[l]));
      sh.logdet_a_prime.push_back(local(shared.logdet_a_prime[l]));
    }
    const LayerPrep k{local(first.h),  local(first.Kii), local(first.Kit),
                      local(first.tt), local(first.Lk),  local(first.Lp),
                      local(first.Lq), local(first.Ak),  local(first.sd)};
    Trace t;
    const SampleOut o = forward(p, sh, k, tape.constant(X), rng, keep_hidden ? &t : nullptr, false);
    for (const arma::mat& F : t.features) {  // [F_i; F_t]: the points' rows
      pred.hidden[s].push_back(F.rows(F.n_rows - X.n_rows, F.n_rows - 1));
    }
    pred.mean.col(s) = o.f_mean.val();
    pred.var.col(s) = o.f_var.val() + noise;
    pred.chol.merge(tape.chol_stats());
  }
  pred.chol.merge(shared_tape.chol_stats());
  return pred;
}

Dwp::Trace Dwp::trace(const ParamMap& params, const arma::mat& X, random::Stream& rng) const {
  Trace t;
  ad::Tape tape;
  const VarMap p = to_vars(tape, params, false);
  const Shared shared = prepare(p);
  const Var Xv = tape.constant(X);
  forward(p, shared, prepare_layer(p, shared, 1, get(p, "inducing_inputs"), Xv), Xv, rng, &t);
  return t;
}

}  // namespace dkp::models
