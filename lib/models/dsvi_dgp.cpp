#include "models/dsvi_dgp.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/ops_shape.hpp"
#include "models/kmeans.hpp"
#include "models/svgp_output.hpp"
#include "util/error.hpp"

namespace dkp::models {

namespace ad = dkp::autodiff;
using autodiff::Var;

std::vector<arma::uword> dsvi_widths(arma::uword input_dim, const DsviConfig& c) {
  if (c.depth == 0) throw ConfigError("DSVI DGP: depth must be at least 1");
  if (input_dim == 0) throw ConfigError("DSVI DGP: no input features");
  if (c.num_classes == 1) throw ConfigError("DSVI DGP: classification needs at least 2 classes");
  const arma::uword hidden =
      c.hidden_width > 0 ? arma::uword(c.hidden_width) : std::min<arma::uword>(30, input_dim);
  std::vector<arma::uword> w{input_dim};
  for (size_t l = 0; l + 1 < c.depth; ++l) w.push_back(hidden);
  w.push_back(SvgpOutput(c.num_classes).width());
  return w;
}

std::string widths_text(const std::vector<arma::uword>& widths) {
  std::string w;
  for (size_t i = 0; i < widths.size(); ++i) {
    if (i > 0) w += '-';
    w += fmt::format("{}", widths[i]);
  }
  return w;
}

arma::mat linear_mean_map(const arma::mat& X_running, arma::uword dout, const char* model,
                          size_t layer) {
  const arma::uword din = X_running.n_cols;
  if (din <= dout) return arma::eye(din, dout);  // identity, or [I, 0]
  // First D_out right-singular vectors of the uncentred running inputs.
  arma::mat U, V;
  arma::vec s;
  if (!arma::svd_econ(U, s, V, X_running, "right")) {
    throw Error(fmt::format("{}: SVD of the {}x{} running inputs failed (layer {})", model,
                            X_running.n_rows, X_running.n_cols, layer));
  }
  return V.cols(0, dout - 1);
}

DsviDgp::DsviDgp(const DsviConfig& config, const arma::mat& X_train, random::Stream& init)
    : DsviDgp(config, X_train,
              kmeans_inducing(X_train, config.num_inducing, init, config.kmeans_iterations,
                              "DSVI DGP")) {}

DsviDgp::DsviDgp(const DsviConfig& config, const arma::mat& X_train, const arma::mat& Z)
    : cfg_(config), widths_(dsvi_widths(X_train.n_cols, config)) {
  if (Z.n_cols != X_train.n_cols || Z.n_rows == 0) {
    throw ConfigError(fmt::format("DSVI DGP: inducing inputs {}x{} for {} input features", Z.n_rows,
                                  Z.n_cols, X_train.n_cols));
  }
  // report eq. 3.12; notes 5b (init_layers_linear).
  arma::mat X_running = X_train, Z_running = Z;
  const size_t L = cfg_.depth;
  for (size_t l = 0; l + 1 < L; ++l) {
    const arma::uword din = widths_[l], dout = widths_[l + 1];
    layers::SvgpConfig lc;
    lc.num_outputs = dout;
    lc.whiten = cfg_.whiten;
    lc.ard = cfg_.ard;
    lc.q_diag = cfg_.q_diag;
    lc.q_sqrt_scale = cfg_.inner_q_sqrt_scale;
    lc.lengthscale = cfg_.lengthscale;
    lc.variance = cfg_.variance;
    lc.white_variance = cfg_.white_variance;
    lc.learn_white = cfg_.learn_white;
    lc.jitter = cfg_.jitter;
    const std::string prefix = fmt::format("layer{}", l);
    if (din == dout) {
      layers_.emplace_back(prefix, Z_running, lc, layers::MeanFunction::kIdentity);
      continue;
    }
    const arma::mat W = linear_mean_map(X_running, dout, "DSVI DGP", l);
    layers_.emplace_back(prefix, Z_running, lc, layers::MeanFunction::kLinear, W);
    Z_running = Z_running * W;
    X_running = X_running * W;
  }
  layers::SvgpConfig out;
  out.num_outputs = widths_.back();
  out.whiten = cfg_.whiten;
  out.ard = cfg_.ard;
  out.q_diag = cfg_.q_diag;
  out.q_sqrt_scale = 1.0;
  out.lengthscale = cfg_.lengthscale;
  out.variance = cfg_.variance;
  out.white_variance = 0.0;  // White only on inner layers (notes 5b)
  out.jitter = cfg_.jitter;
  layers_.emplace_back(fmt::format("layer{}", L - 1), Z_running, out, layers::MeanFunction::kZero);

  for (const auto& layer : layers_) layer.add_initial_parameters(initial_);
  SvgpOutput(cfg_.num_classes).add_parameters(initial_, cfg_.noise_variance);
}

std::string DsviDgp::describe() const {
  const std::string w = widths_text(widths_);
  return fmt::format(
      "DSVI DGP: depth {}, widths {}, M={} inducing per layer, SE kernel ({}), {}, White {:g} on "
      "inner layers, {}",
      cfg_.depth, w, layers_.front().num_inducing(), cfg_.ard ? "ARD" : "one lengthscale",
      cfg_.whiten ? "whitened" : "not whitened", cfg_.depth > 1 ? cfg_.white_variance : 0.0,
      SvgpOutput(cfg_.num_classes).words());
}

layers::Marginals DsviDgp::propagate(const std::vector<layers::SvgpLayer::State>& states,
                                     const arma::mat& X, size_t s0, size_t S, random::Stream& rng,
                                     std::vector<arma::mat>* hidden) const {
  const arma::uword n = X.n_rows;
  const size_t L = layers_.size();
  // eps^l for every inner layer: S n x D_l, sample s's rows from its own child stream.
  std::vector<arma::mat> eps(L - 1);
  for (size_t l = 0; l + 1 < L; ++l) eps[l].set_size(S * n, layers_[l].output_dim());
  for (size_t s = 0; s < S; ++s) {
    random::Stream cs = rng.child("dsvi-sample", s0 + s);
    for (size_t l = 0; l + 1 < L; ++l) {
      eps[l].rows(s * n, s * n + n - 1) = random::normal_matrix(cs, n, layers_[l].output_dim());
    }
  }
  ad::Tape& tape = states.front().Z.tape();
  // Layer 0's input is X for every sample, so its marginals are computed once and tiled S times
  // (the same numbers as on S stacked copies of X, for 1/S of the work).
  Var F;
  for (size_t l = 0;; ++l) {
    layers::Marginals m;
    if (l == 0) {
      m = layers_[0].marginals(states[0], tape.constant(X));
      if (S > 1) m = {ad::repmat(m.mean, S, 1), ad::repmat(m.var, S, 1)};
    } else {
      m = layers_[l].marginals(states[l], F);
    }
    if (l + 1 == L) return m;
    // report eq. 3.10, with GPflow's sampling jitter
    F = ad::add(m.mean, ad::mul(ad::sqrt(ad::add_scalar(m.var, cfg_.jitter)),
                                tape.constant(std::move(eps[l]))));
    if (hidden) hidden->push_back(F.val());
  }
}

ElboEstimate DsviDgp::elbo(const VarMap& params, const arma::mat& X, const arma::vec& y,
                           double n_train, size_t samples, double kl_weight,
                           random::Stream& rng) const {
  if (X.n_rows != y.n_elem || X.n_rows == 0) {
    throw Error(fmt::format("DSVI elbo: {} inputs and {} targets", X.n_rows, y.n_elem));
  }
  const size_t S = std::max<size_t>(samples, 1);
  std::vector<layers::SvgpLayer::State> states;
  states.reserve(layers_.size());
  for (const auto& layer : layers_) states.push_back(layer.prepare(params));
  const layers::Marginals f = propagate(states, X, 0, S, rng);
  const arma::vec yS = arma::repmat(y, S, 1);
  const Var ell = SvgpOutput(cfg_.num_classes).expected_loglik(params, f.mean, f.var, yS);
  Var kl = layers_[0].kl(states[0]);
  for (size_t l = 1; l < layers_.size(); ++l) kl = ad::add(kl, layers_[l].kl(states[l]));
  kl = ad::scale(kl, 1.0 / n_train);
  return elbo_estimate(ell, kl, kl_weight);
}

Predictive DsviDgp::predict(const ParamMap& params, const arma::mat& X, size_t samples,
                            random::Stream& rng, bool keep_hidden) const {
  const size_t S = std::max<size_t>(samples, 1);
  const arma::uword n = X.n_rows, outs = widths_.back();
  Predictive p;
  p.classes = cfg_.num_classes;
  p.class_likelihood = SvgpOutput(cfg_.num_classes).kind();
  p.mean.set_size(n, S * outs);
  p.var.set_size(n, S * outs);
  if (keep_hidden) {
    p.hidden.assign(S, {});
    p.hidden_kind = layers_.size() > 1 ? HiddenKind::Features : HiddenKind::None;
  }
  if (n == 0) return p;
  const size_t block = std::max<size_t>(1, cfg_.predict_max_rows / n);
  for (size_t s0 = 0; s0 < S; s0 += block) {
    const size_t sb = std::min(block, S - s0);
    ad::Tape tape;
    const VarMap vars = to_vars(tape, params, false);
    std::vector<layers::SvgpLayer::State> states;
    for (const auto& layer : layers_) states.push_back(layer.prepare(vars));
    const double noise = SvgpOutput(cfg_.num_classes).predictive_noise(vars);
    std::vector<arma::mat> hidden;
    const layers::Marginals f = propagate(states, X, s0, sb, rng, keep_hidden ? &hidden : nullptr);
    for (const arma::mat& F : hidden) {  // S n x D_l, sample-major rows
      for (size_t s = 0; s < sb; ++s) p.hidden[s0 + s].push_back(F.rows(s * n, s * n + n - 1));
    }
    // f is (sb n) x outs with sample-major rows; sample s goes to columns s outs .. + outs - 1.
    for (size_t s = 0; s < sb; ++s) {
      const arma::uword c0 = (s0 + s) * outs;
      p.mean.cols(c0, c0 + outs - 1) = f.mean.val().rows(s * n, s * n + n - 1);
      p.var.cols(c0, c0 + outs - 1) = f.var.val().rows(s * n, s * n + n - 1) + noise;
    }
    p.chol.merge(tape.chol_stats());
  }
  return p;
}

std::vector<RegistryEntry> dsvi_dgp_entries() {
  RegistryEntry e = svgp_output_entry(
      "dsvi", "deep GP, doubly stochastic variational inference (Salimbeni & Deisenroth 2017)");
  e.options = {{opt::kInitLengthscale, {}, {}},
               {opt::kInitVariance, {}, {}},
               {opt::kWhiten, {}, {}},
               {opt::kQSqrtDiag, {}, {}},
               {opt::kStandardise, {}, {}}};
  e.build = [](const ModelSpec& spec, const arma::mat& X_train, const arma::vec&,
               random::Stream& init) -> std::unique_ptr<Model> {
    DsviConfig cfg;
    cfg.depth = spec.depth;
    cfg.num_inducing = spec.inducing;
    cfg.hidden_width = spec.width;
    cfg.num_classes = spec.classes;
    set_initial_kernel(spec, cfg.lengthscale, cfg.variance);
    cfg.whiten = spec.options.choice(opt::kWhiten) == "on";
    if (spec.options.choice(opt::kQSqrtDiag) == "unconstrained")
      cfg.q_diag = layers::DiagTransform::kIdentity;
    return std::make_unique<DsviDgp>(cfg, X_train, init);
  };
  return {e};
}

}  // namespace dkp::models
