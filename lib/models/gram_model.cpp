#include "models/gram_model.hpp"

#include <cmath>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/ops_shape.hpp"
#include "layers/gigp.hpp"
#include "likelihoods/robustmax.hpp"
#include "likelihoods/softmax.hpp"
#include "util/error.hpp"

namespace dkp::models {

namespace ad = dkp::autodiff;
using autodiff::Var;

GramModel::GramModel(const GramModelConfig& cfg, const arma::mat& X_train, const arma::vec& y_train,
                     random::Stream& init, const char* name)
    : cfg_(cfg) {
  if (cfg.depth < 2) {
    throw ConfigError(
        fmt::format("{}: depth must be at least 2 (input Gram layer and output "
                    "layer), got {}",
                    name, cfg.depth));
  }
  if (cfg.kernel != "relu" && cfg.kernel != "se") {
    throw ConfigError(fmt::format("{}: kernel '{}' is not available (relu, se)", name, cfg.kernel));
  }
  const arma::uvec pick = init_inducing_inputs(name, X_train, y_train, cfg.inducing, init, init_);
  d0_ = X_train.n_cols;
  cfg_.inducing = pick.n_elem;
  const size_t P = cfg_.inducing;
  if (cfg.classes == 1) throw ConfigError(fmt::format("{}: classification needs 2 classes", name));
  if (cfg.input_scale_bias) {
    init_["input.log_scale"] = arma::zeros(1, d0_);
    init_["input.bias"] = arma::zeros(1, d0_);
  }
  if (cfg.kernel == "se") {
    for (size_t l = 2; l <= cfg.depth; ++l) {
      init_[layer_key(l, "log_lengthscale")] = arma::zeros(1, 1);
      init_[layer_key(l, "log_variance")] = arma::zeros(1, 1);
    }
  }
  if (cfg.classes > 0) {  // the picked points' labels as one-hot rows
    const arma::uvec labels = likelihoods::class_labels(y_train.elem(pick), cfg.classes);
    arma::mat v(P, cfg.classes, arma::fill::zeros);
    for (arma::uword i = 0; i < P; ++i) v(i, labels[i]) = 1.0;
    init_[layer_key(cfg.depth, "v")] = v;
  } else {
    init_[layer_key(cfg.depth, "v")] = arma::mat(y_train.elem(pick));
  }
  init_[layer_key(cfg.depth, "L_loc")] = arma::eye(P, P);
  if (cfg.learned_output_scale) init_[layer_key(cfg.depth, "log_output_scale")] = arma::zeros(1, 1);
  init_[layer_key(cfg.depth, "L_scale")] =
      arma::mat(1, 1, arma::fill::value(0.5 * cfg.log_prec_init));
  if (cfg.classes == 0) {
    init_["likelihood.log_noise_var"] =
        arma::mat(1, 1, arma::fill::value(std::log(cfg.noise_var_init)));
  }
}

std::string GramModel::input_words() const {
  return cfg_.input_scale_bias ? "with per-feature scale and bias"
                               : "without learned scale and bias";
}

std::string GramModel::likelihood_words() const {
  return cfg_.classes > 0 ? fmt::format("softmax likelihood over {} classes", cfg_.classes)
                          : std::string("Gaussian likelihood");
}

std::pair<Var, Var> GramModel::input_features(const VarMap& p, const Var& X) const {
  if (!cfg_.input_scale_bias) return {get(p, "inducing_inputs"), X};
  const Var& s = get(p, "input.log_scale");
  const Var& b = get(p, "input.bias");
  return {kernels::scale_shift_features(get(p, "inducing_inputs"), s, b),
          kernels::scale_shift_features(X, s, b)};
}

kernels::GramBlocks GramModel::kernel(const VarMap& p, size_t l,
                                      const kernels::GramBlocks& G) const {
  if (cfg_.kernel == "se") {
    return kernels::se_gram(G, get(p, layer_key(l, "log_lengthscale")),
                            get(p, layer_key(l, "log_variance")), cfg_.jitter);
  }
  return kernels::relu_gram(G, cfg_.jitter);
}

layers::GigpPrepared GramModel::prepare_output(const VarMap& p,
                                               const kernels::GramBlocks& K) const {
  const size_t l = cfg_.depth;
  const layers::GigpParams gp{get(p, layer_key(l, "v")), get(p, layer_key(l, "L_loc")),
                              get(p, layer_key(l, "L_scale"))};
  if (cfg_.learned_output_scale) {
    const Var c = ad::exp(get(p, layer_key(l, "log_output_scale")));
    return layers::gigp_prepare({ad::mul(c, K.ii), ad::mul(c, K.it), ad::mul(c, K.tt)}, gp);
  }
  return layers::gigp_prepare({K.ii, K.it, K.tt}, gp);
}

namespace {
GramModel::SampleOut sample_out(const layers::GigpOutput& out) {
  return {out.f_mean, out.f_var, out.logpq};
}

// Each layer's Gram blocks as Predictive::hidden's B x (1 + P) rows [g_tt, g_it^T].
std::vector<arma::mat> gram_rows(const std::vector<kernels::GramBlocks>& layers) {
  std::vector<arma::mat> out;
  for (const kernels::GramBlocks& G : layers)
    out.push_back(arma::join_horiz(G.tt.val(), G.it.val().t()));
  return out;
}
}  // namespace

GramModel::SampleOut GramModel::output(const VarMap& p, const kernels::GramBlocks& K,
                                       random::Stream& rng) const {
  return sample_out(layers::gigp_sample(prepare_output(p, K), rng));
}

GramModel::SampleOut GramModel::forward(const VarMap& p, const Var& X, random::Stream& rng) const {
  return forward(p, X, hidden_shared(p, X), rng);
}

GramModel::SampleOut GramModel::forward(const VarMap& p, const Var& X, const HiddenShared& shared,
                                        random::Stream& rng,
                                        std::vector<kernels::GramBlocks>* layers) const {
  Hidden h = hidden(p, X, shared, rng);
  if (layers) *layers = std::move(h.layers);
  SampleOut o = output(p, kernel(p, cfg_.depth, h.G), rng);
  o.logpq = o.logpq + h.logpq;
  return o;
}

ElboEstimate GramModel::elbo(const VarMap& p, const arma::mat& X, const arma::vec& y,
                             double n_train, size_t samples, double kl_weight,
                             random::Stream& rng) const {
  ad::Tape& tape = get(p, "inducing_inputs").tape();
  const Var Xv = tape.constant(X);
  const bool classify = cfg_.classes > 0;
  const Var yv = tape.constant(y);
  const arma::uvec labels = classify ? likelihoods::class_labels(y, cfg_.classes) : arma::uvec();
  const Var log_s2 = classify ? Var() : get(p, "likelihood.log_noise_var");
  const Var inv_s2 = classify ? Var() : ad::exp(ad::neg(log_s2));
  const double B = double(X.n_rows);
  Var ell_total = tape.constant(0.0), logpq_total = tape.constant(0.0);
  // What every sample shares, computed once: with deterministic hidden layers, K(G_L) and the
  // output layer's noise-free part (each sample draws only the output layer's noise); otherwise
  // the hidden layers' sample-independent parts (hidden_shared).
  std::optional<Hidden> shared;
  std::optional<layers::GigpPrepared> out_shared;
  HiddenShared hs;
  if (deterministic_hidden()) {
    shared = hidden(p, Xv, hs, rng);
    out_shared = prepare_output(p, kernel(p, cfg_.depth, shared->G));
    layers::gigp_share(*out_shared);  // every sample finishes it
  } else {
    hs = hidden_shared(p, Xv);
  }
  for (size_t s = 0; s < samples; ++s) {
    SampleOut o;
    if (shared) {
      o = sample_out(layers::gigp_sample(*out_shared, rng));
      o.logpq = o.logpq + shared->logpq;
    } else {
      o = forward(p, Xv, hs, rng);
    }
    if (classify) {  // one draw of the logits per sample (the paper's Algorithm 1)
      const Var F = ad::add_scaled_noise(
          o.f_mean, random::normal_matrix(rng, o.f_mean.n_rows(), o.f_mean.n_cols()),
          ad::sqrt(o.f_var));
      ell_total = ell_total + likelihoods::log_softmax_pick_sum(F, labels);
    } else {
      ell_total = ell_total + gaussian_ell_sum(yv, o.f_mean, o.f_var, log_s2, inv_s2);
    }
    logpq_total = logpq_total + o.logpq;
  }
  return assemble_elbo(ell_total, logpq_total, double(samples), B, n_train, kl_weight);
}

Predictive GramModel::predict(const ParamMap& params, const arma::mat& X, size_t samples,
                              random::Stream& rng, bool keep_hidden) const {
  const arma::uword C = cfg_.classes, outs = C > 0 ? C : 1;
  Predictive pred;
  pred.classes = C;
  pred.class_likelihood = likelihoods::ClassLikelihood::Softmax;
  pred.mean.set_size(X.n_rows, samples * outs);
  pred.var.set_size(X.n_rows, samples * outs);
  if (keep_hidden) {
    pred.hidden.assign(samples, {});
    pred.hidden_kind = HiddenKind::Gram;
  }
  const double noise = C > 0 ? 0.0 : std::exp(params.at("likelihood.log_noise_var")(0, 0));
  // The shared parts (as in elbo) on a tape of their own; each sample copies their values onto
  // its tape, which is cleared after the sample (constants only: no closures are recorded).
  ad::Tape shared_tape;
  const VarMap sp = to_vars(shared_tape, params, false);
  const Var Xs = shared_tape.constant(X);
  std::optional<layers::GigpPrepared> out_shared;
  HiddenShared hs;
  std::vector<arma::mat> fixed_layers;  // deterministic hidden layers: the same for every sample
  if (deterministic_hidden()) {
    const Hidden h = hidden(sp, Xs, hs, rng);
    if (keep_hidden) fixed_layers = gram_rows(h.layers);
    out_shared = prepare_output(sp, kernel(sp, cfg_.depth, h.G));
    layers::gigp_share(*out_shared);  // every sample finishes it
  } else
    hs = hidden_shared(sp, Xs);
  ad::Tape tape;
  for (size_t s = 0; s < samples; ++s) {
    tape.clear();
    SampleOut o;
    if (out_shared) {
      o = sample_out(layers::gigp_sample(layers::gigp_constants(tape, *out_shared), rng));
      if (keep_hidden) pred.hidden[s] = fixed_layers;
    } else {
      const VarMap p = to_vars(tape, params, false);
      HiddenShared local;
      if (hs.first) local.first = layers::gigp_constants(tape, *hs.first);
      if (hs.first && keep_hidden) {
        const kernels::GramBlocks& G1 = hs.input_gram;
        local.input_gram = {tape.constant(G1.ii.val()), tape.constant(G1.it.val()),
                            tape.constant(G1.tt.val())};
      }
      for (const Var& v : hs.v_terms) local.v_terms.push_back(tape.constant(v.val()));
      std::vector<kernels::GramBlocks> layers;
      o = forward(p, tape.constant(X), local, rng, keep_hidden ? &layers : nullptr);
      if (keep_hidden) pred.hidden[s] = gram_rows(layers);
    }
    if (C > 0) {  // sampled logits, one draw per sample (as in elbo)
      arma::mat F = random::normal_matrix(rng, X.n_rows, C);
      F.each_col() %= arma::sqrt(o.f_var.val());
      pred.mean.cols(s * C, s * C + C - 1) = F + o.f_mean.val();
      pred.var.cols(s * C, s * C + C - 1).zeros();
    } else {
      pred.mean.col(s) = o.f_mean.val();
      pred.var.col(s) = o.f_var.val() + noise;
    }
  }
  pred.chol.merge(shared_tape.chol_stats());
  pred.chol.merge(tape.chol_stats());
  return pred;
}

GramModelConfig gram_model_config(const ModelSpec& spec) {
  GramModelConfig cfg;
  cfg.depth = spec.depth + 1;
  cfg.kernel = spec.kernel;
  cfg.inducing = spec.inducing;
  cfg.classes = spec.classes;
  cfg.input_scale_bias = spec.classes == 0;
  cfg.learned_output_scale = spec.options.choice(opt::kOutputScale) == "learned";
  return cfg;
}

RegistryEntry gram_model_entry(std::string posterior, std::string summary) {
  RegistryEntry e = make_entry(std::move(posterior), std::move(summary));
  e.kernels = {"relu", "se"};
  e.classifies_with = {"relu", "se"};
  e.classification_likelihood = "softmax";
  e.options = {{opt::kOutputScale, {"relu"}, {}}};
  return e;
}

}  // namespace dkp::models
