#include "models/gi_dgp.hpp"

#include <cmath>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/ops_shape.hpp"
#include "kernels/se.hpp"
#include "layers/gigp.hpp"
#include "models/gram_dgp.hpp"
#include "util/error.hpp"

namespace dkp::models {

namespace ad = dkp::autodiff;
using autodiff::Var;

GiDgp::GiDgp(const GiDgpConfig& cfg, const arma::mat& X_train, const arma::vec& y_train,
             random::Stream& init)
    : cfg_(cfg) {
  if (cfg.depth < 1) throw ConfigError("gi-dgp: depth must be at least 1");
  const arma::uvec pick =
      init_inducing_inputs("gi-dgp", X_train, y_train, cfg.inducing, init, init_);
  d0_ = X_train.n_cols;
  width_ = cfg.width > 0 ? cfg.width : d0_;
  cfg_.inducing = pick.n_elem;
  const size_t P = cfg_.inducing;
  for (size_t l = 1; l <= cfg.depth; ++l) {
    const size_t in_dim = l == 1 ? d0_ : width_;
    const size_t out_dim = l == cfg.depth ? 1 : width_;
    init_[layer_key(l, "log_lengthscale")] = arma::zeros(1, l == 1 || cfg.hidden_ard ? in_dim : 1);
    init_[layer_key(l, "log_variance")] = arma::zeros(1, 1);
    init_[layer_key(l, "v")] =
        l == cfg.depth ? arma::mat(y_train.elem(pick)) : random::normal_matrix(init, P, out_dim);
    const size_t factors = per_output(l) ? out_dim : 1;  // one precision factor per column
    init_[layer_key(l, "L_loc")] = arma::repmat(arma::eye(P, P), 1, factors);
    init_[layer_key(l, "L_scale")] =
        arma::mat(1, factors, arma::fill::value(0.5 * cfg.log_prec_init));
  }
  init_["likelihood.log_noise_var"] =
      arma::mat(1, 1, arma::fill::value(std::log(cfg.noise_var_init)));
}

std::string GiDgp::describe() const {
  return fmt::format(
      "global-inducing DGP: depth {}, width {}, {} inducing points, SE kernel (ARD in {}){}",
      cfg_.depth, width_, cfg_.inducing, cfg_.hidden_ard ? "every layer" : "layer 1",
      cfg_.per_output_precision ? ", a precision per output column" : "");
}

std::vector<std::vector<GiDgp::LayerNoise>> GiDgp::draw_noise(size_t S, arma::uword P,
                                                              arma::uword B,
                                                              random::Stream& rng) const {
  std::vector<std::vector<LayerNoise>> noise(S, std::vector<LayerNoise>(cfg_.depth));
  for (size_t s = 0; s < S; ++s) {
    for (size_t l = 1; l <= cfg_.depth; ++l) {
      LayerNoise& n = noise[s][l - 1];
      const arma::uword W = layer_width(l);
      n.eps1 = random::normal_matrix(rng, P, W);
      n.eps2 = random::normal_matrix(rng, P, W);
      if (l < cfg_.depth) n.out = random::normal_matrix(rng, B, W);
    }
  }
  return noise;
}

namespace {

// The layer-l noise of every sample side by side (sample s in columns s W .. s W + W - 1).
template <class Get>
arma::mat stack_columns(size_t S, Get get) {
  const arma::mat& first = get(0);
  arma::mat out(first.n_rows, first.n_cols * S);
  for (size_t s = 0; s < S; ++s) out.cols(s * first.n_cols, (s + 1) * first.n_cols - 1) = get(s);
  return out;
}

Var sample_cols(const Var& x, size_t s, arma::uword W, size_t S) {
  return S == 1 ? x : ad::cols(x, s * W, s * W + W - 1);
}

}  // namespace

GiDgp::ForwardOut GiDgp::forward(const VarMap& p, const arma::mat& X, size_t S,
                                 random::Stream& rng) const {
  const Var Fi0 = get(p, "inducing_inputs");
  ad::Tape& tape = Fi0.tape();
  const arma::uword P = Fi0.n_rows(), B = X.n_rows;
  const auto noise = draw_noise(S, P, B, rng);

  // Per-layer quantities shared by all samples.
  struct Layer {
    Var log_ell, h, tt, L;
    std::vector<Var> Ls;  // per-output precision: column c's factor
    layers::GigpParams gp;
  };
  std::vector<Layer> layer(cfg_.depth + 1);
  const Var onesB = tape.constant(arma::ones(B, 1));
  for (size_t l = 1; l <= cfg_.depth; ++l) {
    Layer& ly = layer[l];
    const double nu_in = double(l == 1 ? d0_ : width_);
    // SE on Gram distances with G = F F^T / nu_in: scale features by 1 / (sqrt(nu_in) l).
    ly.log_ell = ad::add_scalar(get(p, layer_key(l, "log_lengthscale")), 0.5 * std::log(nu_in));
    ly.h = ad::exp(get(p, layer_key(l, "log_variance")));
    ly.tt = ad::mul(ly.h, onesB);
    ly.gp = {get(p, layer_key(l, "v")), get(p, layer_key(l, "L_loc")),
             get(p, layer_key(l, "L_scale"))};
    if (per_output(l)) {
      for (arma::uword c = 0; c < layer_width(l); ++c) {
        ly.Ls.push_back(layers::gigp_precision_factor(
            {Var(), ad::cols(ly.gp.L_loc, c * P, c * P + P - 1), ad::cols(ly.gp.L_scale, c, c)}));
      }
    } else {
      ly.L = layers::gigp_precision_factor(ly.gp);
    }
  }
  auto blocks = [&](size_t l, const Var& Fi, const Var& Ft) {
    const Layer& ly = layer[l];
    const Var Fi_s = kernels::scale_columns(Fi, ly.log_ell);
    const Var Ft_s = kernels::scale_columns(Ft, ly.log_ell);
    layers::KernelBlocks k;
    k.ii = kernels::se_scaled_sym(ly.h, Fi_s, cfg_.jitter);
    k.it = kernels::se_scaled(ly.h, Fi_s, Ft_s);
    k.tt = ly.tt;
    return k;
  };
  auto layer_out = [&](size_t l, const layers::KernelBlocks& k, const arma::mat& eps1,
                       const arma::mat& eps2) {
    const Layer& ly = layer[l];
    if (per_output(l)) return layers::gigp_forward_per_output(k, ly.gp.v, ly.Ls, eps1, eps2);
    return layers::gigp_finish(layers::gigp_prepare(k, ly.gp, ly.L), eps1, eps2);
  };

  ForwardOut res;
  res.f_mean.resize(S);
  res.f_var.resize(S);
  // Layer 1: the same kernel blocks for every sample.
  const arma::uword W1 = layer_width(1);
  const layers::GigpOutput o1 =
      layer_out(1, blocks(1, Fi0, tape.constant(X)),
                stack_columns(S, [&](size_t s) -> const arma::mat& { return noise[s][0].eps1; }),
                stack_columns(S, [&](size_t s) -> const arma::mat& { return noise[s][0].eps2; }));
  Var logpq = o1.logpq;
  if (cfg_.depth == 1) {
    for (size_t s = 0; s < S; ++s) {
      res.f_mean[s] = sample_cols(o1.f_mean, s, W1, S);
      res.f_var[s] = o1.f_var;
    }
    res.logpq = logpq;
    return res;
  }
  const Var F1 = layers::sample_outputs(
      o1, stack_columns(S, [&](size_t s) -> const arma::mat& { return noise[s][0].out; }));
  for (size_t s = 0; s < S; ++s) {
    Var Fi = sample_cols(o1.u, s, W1, S);
    Var Ft = sample_cols(F1, s, W1, S);
    for (size_t l = 2; l <= cfg_.depth; ++l) {
      const LayerNoise& n = noise[s][l - 1];
      const layers::GigpOutput out = layer_out(l, blocks(l, Fi, Ft), n.eps1, n.eps2);
      logpq = logpq + out.logpq;
      if (l == cfg_.depth) {
        res.f_mean[s] = out.f_mean;
        res.f_var[s] = out.f_var;
      } else {
        Fi = out.u;
        Ft = layers::sample_outputs(out, n.out);
      }
    }
  }
  res.logpq = logpq;
  return res;
}

ElboEstimate GiDgp::elbo(const VarMap& p, const arma::mat& X, const arma::vec& y, double n_train,
                         size_t samples, double kl_weight, random::Stream& rng) const {
  ad::Tape& tape = get(p, "inducing_inputs").tape();
  const Var yv = tape.constant(y);
  const Var log_s2 = get(p, "likelihood.log_noise_var");
  const Var inv_s2 = ad::exp(ad::neg(log_s2));
  const double B = double(X.n_rows);
  Var ell_total = tape.constant(0.0), logpq_total = tape.constant(0.0);
  if (samples > 0) {
    const ForwardOut o = forward(p, X, samples, rng);
    for (size_t s = 0; s < samples; ++s) {
      ell_total = ell_total + gaussian_ell_sum(yv, o.f_mean[s], o.f_var[s], log_s2, inv_s2);
    }
    logpq_total = logpq_total + o.logpq;
  }
  return assemble_elbo(ell_total, logpq_total, double(samples), B, n_train, kl_weight);
}

// Prediction without a tape: the same model and the same random numbers as forward(), evaluated
// with plain Armadillo/BLAS (layers::gigp_*_plain), the first layer once for all samples.
Predictive GiDgp::predict(const ParamMap& params, const arma::mat& X, size_t samples,
                          random::Stream& rng, bool keep_hidden) const {
  const arma::mat& Fi0 = params.at("inducing_inputs");
  const arma::uword P = Fi0.n_rows, B = X.n_rows;
  const size_t S = samples;
  Predictive pred;
  pred.mean.set_size(B, S);
  pred.var.set_size(B, S);
  if (keep_hidden) {
    pred.hidden.assign(S, {});
    pred.hidden_kind = cfg_.depth > 1 ? HiddenKind::Features : HiddenKind::None;
  }
  const double noise_var = std::exp(params.at("likelihood.log_noise_var")(0, 0));
  const auto noise = draw_noise(S, P, B, rng);

  struct Layer {
    arma::rowvec inv_ell;
    double h = 1.0;
    std::vector<arma::mat> Ls;  // one precision factor, or one per output column
    const arma::mat* v = nullptr;
  };
  std::vector<Layer> layer(cfg_.depth + 1);
  for (size_t l = 1; l <= cfg_.depth; ++l) {
    Layer& ly = layer[l];
    const double nu_in = double(l == 1 ? d0_ : width_);
    ly.inv_ell =
        arma::exp(-(params.at(layer_key(l, "log_lengthscale")).row(0) + 0.5 * std::log(nu_in)));
    ly.h = std::exp(params.at(layer_key(l, "log_variance"))(0, 0));
    const arma::mat& Lloc = params.at(layer_key(l, "L_loc"));
    const arma::mat& Lscale = params.at(layer_key(l, "L_scale"));
    for (arma::uword c = 0; c < Lscale.n_cols; ++c) {
      ly.Ls.push_back(
          layers::gigp_precision_factor_plain(Lloc.cols(c * P, c * P + P - 1), Lscale(0, c)));
    }
    ly.v = &params.at(layer_key(l, "v"));
  }
  const arma::vec ktt_ones = arma::ones(B);
  auto prepare = [&](size_t l, const arma::mat& Fi, const arma::mat& Ft) {
    const Layer& ly = layer[l];
    const bool iso = ly.inv_ell.n_elem == 1;
    const arma::mat Fi_s =
        iso ? arma::mat(Fi * ly.inv_ell[0]) : arma::mat(Fi.each_row() % ly.inv_ell);
    const arma::mat Ft_s =
        iso ? arma::mat(Ft * ly.inv_ell[0]) : arma::mat(Ft.each_row() % ly.inv_ell);
    arma::mat Kii = kernels::se_unit_sym_value(Fi_s);
    Kii.diag() += cfg_.jitter;
    Kii *= ly.h;
    arma::mat Kit = kernels::se_unit_value(Fi_s, Ft_s);
    Kit *= ly.h;
    return std::pair{std::move(Kii), std::move(Kit)};
  };
  // One layer for the stacked noise; writes u (unless null) and f_mean, returns f_var.
  auto layer_out = [&](size_t l, const arma::mat& Fi, const arma::mat& Ft, const arma::mat& eps1,
                       const arma::mat& eps2, arma::mat* u, arma::mat& f_mean) {
    const Layer& ly = layer[l];
    const auto [Kii, Kit] = prepare(l, Fi, Ft);
    if (per_output(l)) {
      return layers::gigp_forward_per_output_plain(Kii, Kit, ly.h * ktt_ones, ly.Ls, *ly.v, eps1,
                                                   eps2, u, f_mean, &pred.chol);
    }
    const layers::GigpPlain g =
        layers::gigp_prepare_plain(Kii, Kit, ly.h * ktt_ones, ly.Ls[0], *ly.v, &pred.chol);
    layers::gigp_finish_plain(g, eps1, eps2, u, f_mean);
    return g.f_var;
  };
  auto stacked = [&](size_t l, arma::mat LayerNoise::*which) {
    return stack_columns(S, [&](size_t s) -> const arma::mat& { return noise[s][l - 1].*which; });
  };

  // Layer 1 for all samples at once.
  const arma::uword W1 = layer_width(1);
  arma::mat U1, Fm1;
  const arma::vec f_var1 =
      layer_out(1, Fi0, X, stacked(1, &LayerNoise::eps1), stacked(1, &LayerNoise::eps2),
                cfg_.depth > 1 ? &U1 : nullptr, Fm1);
  if (cfg_.depth == 1) {
    pred.mean = Fm1;
    pred.var = arma::repmat(f_var1 + noise_var, 1, S);
    return pred;
  }
  arma::mat F1 = stacked(1, &LayerNoise::out);
  F1.each_col() %= arma::sqrt(f_var1);
  F1 += Fm1;
  arma::mat U, Fm;
  for (size_t s = 0; s < S; ++s) {
    arma::mat Fi = U1.cols(s * W1, s * W1 + W1 - 1);
    arma::mat Ft = F1.cols(s * W1, s * W1 + W1 - 1);
    if (keep_hidden) pred.hidden[s].push_back(Ft);
    for (size_t l = 2; l <= cfg_.depth; ++l) {
      const LayerNoise& n = noise[s][l - 1];
      const bool last = l == cfg_.depth;
      const arma::vec f_var = layer_out(l, Fi, Ft, n.eps1, n.eps2, last ? nullptr : &U, Fm);
      if (last) {
        pred.mean.col(s) = Fm;
        pred.var.col(s) = f_var + noise_var;
      } else {
        Fi = std::move(U);
        Ft = n.out;
        Ft.each_col() %= arma::sqrt(f_var);
        Ft += Fm;
        if (keep_hidden) pred.hidden[s].push_back(Ft);
      }
    }
  }
  return pred;
}

std::vector<RegistryEntry> gi_dgp_entries() {
  RegistryEntry e = make_entry(
      "global-inducing",
      "deep GP, global inducing points (Ober & Aitchison 2021); relu: the DKP paper's Gram DGP");
  e.kernels = {"se", "relu"};
  e.classifies_with = {"relu"};
  e.classification_likelihood = "softmax";
  e.options = {{opt::kHiddenArd, {"se"}, {}},
               {opt::kGiPrecision, {"se"}, {}},
               {opt::kOutputScale, {"relu"}, {}}};
  e.build = [](const ModelSpec& spec, const arma::mat& X_train, const arma::vec& y_train,
               random::Stream& init) -> std::unique_ptr<Model> {
    // ReLU: the DKP paper's DGP baseline, GP layers on Gram kernels after the learned per-feature
    // scale and bias input layer (models/gram_dgp.hpp). SE stays with GiDgp: SE on
    // X diag(exp(s)) + b with a per-feature scale is the same model as ARD SE on X (the bias
    // cancels in a stationary kernel).
    if (spec.kernel == "relu") return build_gram_dgp(spec, X_train, y_train, init);
    GiDgpConfig cfg;
    cfg.depth = spec.depth;
    cfg.width = spec.width;
    cfg.inducing = spec.inducing;
    cfg.hidden_ard = spec.options.on(opt::kHiddenArd);
    cfg.per_output_precision = spec.options.choice(opt::kGiPrecision) == "per-output";
    return std::make_unique<GiDgp>(cfg, X_train, y_train, init);
  };
  return {e};
}

}  // namespace dkp::models
