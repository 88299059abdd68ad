#include "models/diwp.hpp"

#include <cmath>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"
#include "autodiff/ops_special.hpp"
#include "distributions/inverse_wishart.hpp"
#include "util/error.hpp"

namespace dkp::models {

namespace ad = dkp::autodiff;
namespace dist = dkp::distributions;
using autodiff::Var;

Diwp::Diwp(const DiwpConfig& cfg, const arma::mat& X_train, const arma::vec& y_train,
           random::Stream& init)
    : GramModel(cfg, X_train, y_train, init, "diwp"), dcfg_(cfg) {
  dcfg_.inducing = cfg_.inducing;
  for (size_t l = 1; l < cfg_.depth; ++l) {
    const size_t n = l == 1 ? d0_ : cfg_.inducing;
    init_[layer_key(l, "log_delta")] = arma::mat(1, 1, arma::fill::value(std::log(cfg.delta_init)));
    init_[layer_key(l, "log_gamma")] = arma::zeros(1, 1);
    init_[layer_key(l, "V")] = random::normal_matrix(init, n, n);
    if (cfg.learned_v_scale) init_[layer_key(l, "log_v_scale")] = arma::zeros(1, 1);
  }
}

std::string Diwp::describe() const {
  return fmt::format(
      "DIWP: {} kernel applications (N0 x N0 Omega input layer {}, {} inverse Wishart hidden "
      "layer{}, global-inducing output), {} kernel, {} inducing points, {}",
      cfg_.depth - 1, input_words(), cfg_.depth - 2, cfg_.depth == 3 ? "" : "s", cfg_.kernel,
      cfg_.inducing, likelihood_words());
}

GramModel::HiddenShared Diwp::hidden_shared(const VarMap& p, const Var&) const {
  HiddenShared shared;
  for (size_t l = 1; l < cfg_.depth; ++l) {
    const bool divide_by_n = l > 1 || !dcfg_.omega_v_paper;
    Var v_term = layers::iw_v_term(get(p, layer_key(l, "V")), divide_by_n);
    if (dcfg_.learned_v_scale)
      v_term = ad::mul(ad::exp(get(p, layer_key(l, "log_v_scale"))), v_term);
    shared.v_terms.push_back(v_term);
  }
  return shared;
}

GramModel::Hidden Diwp::hidden(const VarMap& p, const Var& X, const HiddenShared& shared,
                               random::Stream& rng) const {
  if (shared.v_terms.size() + 1 != cfg_.depth)
    throw Error("diwp: hidden() needs hidden_shared()'s V V^T terms");
  const auto [Fi, Ft] = input_features(p, X);
  layers::IwLayerSample layer = layers::iw_input_layer(Fi, Ft, get(p, layer_key(1, "log_delta")),
                                                       get(p, layer_key(1, "log_gamma")),
                                                       shared.v_terms[0], rng, dcfg_.gamma_method);
  Var logpq = layer.log_p - layer.log_q;
  std::vector<kernels::GramBlocks> layers{layer.G};
  for (size_t l = 2; l < cfg_.depth; ++l) {
    layer = layers::iw_hidden_layer(kernel(p, l, layer.G), get(p, layer_key(l, "log_delta")),
                                    get(p, layer_key(l, "log_gamma")), shared.v_terms[l - 1], rng,
                                    dcfg_.gamma_method, dcfg_.reference_batch_dof);
    logpq = logpq + layer.log_p - layer.log_q;
    layers.push_back(layer.G);
  }
  return {layer.G, logpq, std::move(layers)};
}

std::vector<RegistryEntry> diwp_entries() {
  RegistryEntry e = gram_model_entry("", "deep inverse Wishart process (DKP paper)");
  e.options.insert(e.options.end(), {{opt::kDeltaInit, {}, {}},
                                     {opt::kDiwpDof, {}, {}},
                                     {opt::kDiwpOmegaV, {}, {}},
                                     {opt::kDiwpVScale, {}, {}}});
  e.build = [](const ModelSpec& spec, const arma::mat& X_train, const arma::vec& y_train,
               random::Stream& init) -> std::unique_ptr<Model> {
    DiwpConfig cfg;
    static_cast<GramModelConfig&>(cfg) = gram_model_config(spec);
    cfg.delta_init = spec.options.number(opt::kDeltaInit);
    cfg.reference_batch_dof = spec.options.choice(opt::kDiwpDof) == "batch";
    cfg.omega_v_paper = spec.options.choice(opt::kDiwpOmegaV) == "paper";
    cfg.learned_v_scale = spec.options.choice(opt::kDiwpVScale) == "learned";
    return std::make_unique<Diwp>(cfg, X_train, y_train, init);
  };
  return {e};
}

}  // namespace dkp::models
