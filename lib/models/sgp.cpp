#include "models/sgp.hpp"

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "models/kmeans.hpp"
#include "models/svgp_output.hpp"
#include "util/error.hpp"

namespace dkp::models {

namespace ad = dkp::autodiff;
using autodiff::Var;

layers::SvgpConfig sgp_layer_config(const SgpConfig& c) {
  layers::SvgpConfig l;
  l.num_outputs = SvgpOutput(c.num_classes).width();
  l.whiten = c.whiten;
  l.ard = c.ard;
  l.q_diag = c.q_diag;
  l.q_sqrt_scale = 1.0;
  l.lengthscale = c.lengthscale;
  l.variance = c.variance;
  l.white_variance = 0.0;  // the output layer has no White kernel (notes 5b)
  l.jitter = c.jitter;
  return l;
}

SgpModel::SgpModel(const SgpConfig& config, const arma::mat& X_train, random::Stream& init)
    : SgpModel(config, kmeans_inducing(X_train, config.num_inducing, init, config.kmeans_iterations,
                                       "SGP")) {}

SgpModel::SgpModel(const SgpConfig& config, const arma::mat& Z)
    : cfg_(config), layer_("layer0", Z, sgp_layer_config(config)) {
  if (cfg_.num_classes == 1) throw ConfigError("SGP: classification needs at least 2 classes");
  layer_.add_initial_parameters(initial_);
  SvgpOutput(cfg_.num_classes).add_parameters(initial_, cfg_.noise_variance);
}

std::string SgpModel::describe() const {
  return fmt::format("SGP: SVGP, M={} inducing, SE kernel ({}), {}, {}", layer_.num_inducing(),
                     cfg_.ard ? "ARD" : "one lengthscale",
                     cfg_.whiten ? "whitened" : "not whitened",
                     SvgpOutput(cfg_.num_classes).words());
}

ElboEstimate SgpModel::elbo(const VarMap& params, const arma::mat& X, const arma::vec& y,
                            double n_train, size_t /*samples*/, double kl_weight,
                            random::Stream& /*rng*/) const {
  if (X.n_rows != y.n_elem) {
    throw Error(fmt::format("SGP elbo: {} inputs and {} targets", X.n_rows, y.n_elem));
  }
  const layers::SvgpLayer::State s = layer_.prepare(params);
  ad::Tape& tape = s.Z.tape();
  const layers::Marginals f = layer_.marginals(s, tape.constant(X));
  const Var ell = SvgpOutput(cfg_.num_classes).expected_loglik(params, f.mean, f.var, y);
  const Var kl = ad::scale(layer_.kl(s), 1.0 / n_train);
  return elbo_estimate(ell, kl, kl_weight);
}

Predictive SgpModel::predict(const ParamMap& params, const arma::mat& X, size_t samples,
                             random::Stream& /*rng*/, bool keep_hidden) const {
  const size_t S = std::max<size_t>(samples, 1);
  const SvgpOutput output(cfg_.num_classes);
  const arma::uword outs = output.width();
  Predictive p;
  p.classes = output.classes();
  p.class_likelihood = output.kind();
  if (keep_hidden) p.hidden.assign(S, {});  // one layer: no hidden layers
  p.mean.set_size(X.n_rows, S * outs);
  p.var.set_size(X.n_rows, S * outs);
  const arma::uword chunk = std::max<size_t>(cfg_.predict_chunk, 1);
  for (arma::uword s0 = 0; s0 < X.n_rows; s0 += chunk) {
    const arma::uword s1 = std::min<arma::uword>(X.n_rows, s0 + chunk) - 1;
    ad::Tape tape;
    const VarMap vars = to_vars(tape, params, false);
    const double noise = output.predictive_noise(vars);
    const layers::SvgpLayer::State st = layer_.prepare(vars);
    const layers::Marginals f = layer_.marginals(st, tape.constant(X.rows(s0, s1)));
    // The same marginals for every sample (an SGP draws nothing).
    for (size_t s = 0; s < S; ++s) {
      p.mean.submat(s0, s * outs, s1, s * outs + outs - 1) = f.mean.val();
      p.var.submat(s0, s * outs, s1, s * outs + outs - 1) = f.var.val() + noise;
    }
    p.chol.merge(tape.chol_stats());
  }
  return p;
}

std::vector<RegistryEntry> sgp_entries() {
  RegistryEntry e = svgp_output_entry(
      "", "sparse variational GP, one layer (Hensman et al. 2015; the DSVI report's SGP)");
  e.min_depth = e.max_depth = 1;
  e.depth_note = "a single-layer GP; use dgp for more layers";
  e.options = {
      {opt::kInitLengthscale, {}, {}}, {opt::kInitVariance, {}, {}}, {opt::kStandardise, {}, {}}};
  e.build = [](const ModelSpec& spec, const arma::mat& X_train, const arma::vec&,
               random::Stream& init) -> std::unique_ptr<Model> {
    SgpConfig cfg;
    cfg.num_inducing = spec.inducing;
    cfg.num_classes = spec.classes;
    set_initial_kernel(spec, cfg.lengthscale, cfg.variance);
    return std::make_unique<SgpModel>(cfg, X_train, init);
  };
  return {e};
}

}  // namespace dkp::models
