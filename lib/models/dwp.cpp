#include "models/dwp.hpp"

#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"
#include "kernels/se.hpp"
#include "layers/gigp.hpp"
#include "util/error.hpp"

namespace dkp::models {

namespace ad = dkp::autodiff;
namespace dist = dkp::distributions;
using autodiff::Var;

Dwp::Dwp(const DwpConfig& cfg, const arma::mat& X_train, const arma::vec& y_train,
         random::Stream& init)
    : cfg_(cfg) {
  if (cfg.depth < 1) throw ConfigError("dwp: depth must be at least 1");
  const arma::uvec pick = init_inducing_inputs("dwp", X_train, y_train, cfg.inducing, init, init_);
  d0_ = X_train.n_cols;
  width_ = cfg.width > 0 ? cfg.width : d0_;
  cfg_.inducing = pick.n_elem;
  const size_t P = cfg_.inducing;
  for (size_t l = 1; l < cfg.depth; ++l) hidden_.emplace_back(l, P, width_, cfg);
  for (size_t l = 1; l <= cfg.depth; ++l) {
    init_[layer_key(l, "log_lengthscale")] = arma::zeros(1, l == 1 ? d0_ : 1);
    init_[layer_key(l, "log_variance")] = arma::zeros(1, 1);
    if (l < cfg.depth) {
      hidden_[l - 1].add_initial_parameters(init_, init);
      continue;
    }
    // Output GIGP layer: as GiDgp's output layer.
    init_[layer_key(l, "v")] = arma::mat(y_train.elem(pick));
    init_[layer_key(l, "L_loc")] = arma::eye(P, P);
    init_[layer_key(l, "L_scale")] = arma::mat(1, 1, arma::fill::value(0.5 * cfg.log_prec_init));
  }
  init_["likelihood.log_noise_var"] =
      arma::mat(1, 1, arma::fill::value(std::log(cfg.noise_var_init)));
}

std::string Dwp::describe() const {
  return fmt::format(
      "deep Wishart process ({} posterior): depth {}, width {}, {} inducing points, SE kernel "
      "(ARD in layer 1), global-inducing output layer",
      layers::to_string(cfg_.posterior), cfg_.depth, width_, cfg_.inducing);
}

std::vector<std::pair<std::string, size_t>> Dwp::held_parameters() const {
  std::vector<std::pair<std::string, size_t>> held;
  if (cfg_.gw_until == 0) return held;
  for (const char* name : {"A_prime", "B"}) {
    for (size_t l = 1; l < cfg_.depth; ++l) {
      const std::string key = layer_key(l, name);
      if (init_.count(key)) held.emplace_back(key, cfg_.gw_until);
    }
  }
  return held;
}

ParamMap Dwp::with_prior_posterior(const ParamMap& params) const {
  ParamMap out = params;
  for (const layers::WishartLayer& w : hidden_) w.set_prior_posterior(out);
  return out;
}

Dwp::Shared Dwp::prepare(const VarMap& p) const {
  Shared sh;
  for (const layers::WishartLayer& w : hidden_) sh.push_back(w.share(p));
  return sh;
}

Dwp::LayerPrep Dwp::prepare_layer(const VarMap& p, const Shared& shared, size_t l, const Var& Fi,
                                  const Var& Ft) const {
  ad::Tape& tape = Fi.tape();
  const arma::uword B = Ft.n_rows();
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
  // Layer 1's inputs are the data: its conditional's solve is shared by the samples.
  k.wishart = hidden_[l - 1].prepare(k.Kii, k.Kit, k.tt, shared[l - 1], l == 1);
  return k;
}

Dwp::SampleOut Dwp::forward(const VarMap& p, const Shared& shared, const LayerPrep& first,
                            const Var& X, random::Stream& rng, Trace* trace,
                            bool with_logpq) const {
  ad::Tape& tape = X.tape();
  Var Fi = get(p, "inducing_inputs");
  Var Ft = X;
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

    // ---- hidden Wishart layer l (layers/wishart.hpp) ----
    const layers::WishartLayer::Sample w =
        hidden_[l - 1].sample(p, shared[l - 1], k.wishart, k.Kit, k.tt, rng, with_logpq);
    if (with_logpq) logpq = logpq + w.logpq;
    Fi = w.Fi;
    Ft = w.Ft;
    if (trace) {
      trace->features.push_back(arma::join_vert(Fi.val(), Ft.val()));
      if (with_logpq) trace->layer_logpq.push_back(w.logpq.scalar());
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
    for (const layers::WishartLayer::Shared& w : shared) sh.push_back(w.on(tape));
    const LayerPrep k{local(first.h), local(first.Kii), local(first.Kit), local(first.tt),
                      first.wishart.on(tape)};
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

std::vector<RegistryEntry> dwp_entries() {
  using layers::WishartPosterior;
  std::vector<RegistryEntry> entries;
  for (const auto& [post, summary] :
       {std::pair{WishartPosterior::Gw,
                  "deep Wishart process, generalised Wishart posterior (Ober & Aitchison 2021)"},
        std::pair{WishartPosterior::Agw, "deep Wishart process, A-GW posterior (Ober et al. 2023)"},
        std::pair{WishartPosterior::Abgw,
                  "deep Wishart process, AB-GW posterior (Ober et al. 2023)"}}) {
    RegistryEntry e = make_entry(layers::to_string(post), summary);
    e.default_posterior = post == WishartPosterior::Gw;
    e.kernels = {"se"};
    // stl mixing and A''s scale concern A' (and B): what the GW has not.
    const bool mixing = post != WishartPosterior::Gw;
    e.options = {{opt::kStl,
                  {},
                  mixing ? std::vector<std::string>{} : std::vector<std::string>{"on", "off"}},
                 {opt::kMuParam, {}, {}}};
    if (mixing) {
      e.options.push_back({opt::kAPrimeScale, {}, {}});
      e.options.push_back({opt::kFreezeAPrime, {}, {}});
      e.options.push_back({opt::kGwUntil, {}, {}});
      e.options.push_back({opt::kAPrimeForm, {}, {}});
    }
    e.build = [post = post](const ModelSpec& spec, const arma::mat& X_train,
                            const arma::vec& y_train,
                            random::Stream& init) -> std::unique_ptr<Model> {
      DwpConfig cfg;
      cfg.depth = spec.depth;
      cfg.width = spec.width;
      cfg.inducing = spec.inducing;
      cfg.posterior = post;
      const std::string stl = spec.options.choice(opt::kStl);
      cfg.sticking_the_landing = stl != "off";
      cfg.stl_mixing = stl == "mixing";
      cfg.mu_raw = spec.options.choice(opt::kMuParam) == "bayesfunc";
      cfg.a_prime_scale = spec.options.number(opt::kAPrimeScale);
      cfg.freeze_a_prime = spec.options.on(opt::kFreezeAPrime);
      cfg.a_prime_unit_lower = spec.options.choice(opt::kAPrimeForm) == "unit-lower";
      const size_t until = spec.options.steps(opt::kGwUntil);
      if (until > 0 && cfg.freeze_a_prime) {
        throw ConfigError(
            "--gw-until and --freeze-a-prime: A' is either held for some steps or "
            "never learned, not both");
      }
      cfg.gw_until = until;
      return std::make_unique<Dwp>(cfg, X_train, y_train, init);
    };
    entries.push_back(std::move(e));
  }
  return entries;
}

}  // namespace dkp::models
