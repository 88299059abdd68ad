#include "models/sgp.hpp"

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "models/kmeans.hpp"
#include "util/error.hpp"

namespace dkp::models {

namespace ad = dkp::autodiff;
using autodiff::Var;

layers::SvgpConfig sgp_layer_config(const SgpConfig& c) {
  layers::SvgpConfig l;
  l.num_outputs = c.num_classes > 0 ? c.num_classes : 1;
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
  if (cfg_.num_classes == 0) {
    initial_["likelihood.variance"] =
        arma::mat(1, 1, arma::fill::value(layers::positive_inverse(cfg_.noise_variance)));
  }
}

std::string SgpModel::describe() const {
  return fmt::format(
      "SGP: SVGP, M={} inducing, SE kernel ({}), {}, {}", layer_.num_inducing(),
      cfg_.ard ? "ARD" : "one lengthscale", cfg_.whiten ? "whitened" : "not whitened",
      cfg_.num_classes > 0 ? fmt::format("robust-max likelihood over {} classes", cfg_.num_classes)
                           : std::string("Gaussian likelihood"));
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
  const Var ell =
      cfg_.num_classes > 0
          ? ad::scale(robustmax_ell_sum(f.mean, f.var, y, cfg_.num_classes), 1.0 / double(y.n_elem))
          : layers::gaussian_expected_loglik(f.mean, f.var, y,
                                             layers::positive(get(params, "likelihood.variance")));
  const Var kl = ad::scale(layer_.kl(s), 1.0 / n_train);
  ElboEstimate e;
  e.elbo = ad::sub(ell, ad::scale(kl, kl_weight));
  e.expected_loglik = ell.scalar();
  e.kl = kl.scalar();
  return e;
}

Predictive SgpModel::predict(const ParamMap& params, const arma::mat& X, size_t samples,
                             random::Stream& /*rng*/, bool keep_hidden) const {
  const size_t S = std::max<size_t>(samples, 1);
  const arma::uword C = cfg_.num_classes, outs = C > 0 ? C : 1;
  Predictive p;
  p.classes = C;
  if (keep_hidden) p.hidden.assign(S, {});  // one layer: no hidden layers
  p.mean.set_size(X.n_rows, S * outs);
  p.var.set_size(X.n_rows, S * outs);
  const arma::uword chunk = std::max<size_t>(cfg_.predict_chunk, 1);
  for (arma::uword s0 = 0; s0 < X.n_rows; s0 += chunk) {
    const arma::uword s1 = std::min<arma::uword>(X.n_rows, s0 + chunk) - 1;
    ad::Tape tape;
    const VarMap vars = to_vars(tape, params, false);
    const double noise = C > 0 ? 0.0 : layers::positive(get(vars, "likelihood.variance")).scalar();
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

}  // namespace dkp::models
