#include "models/gram_dgp.hpp"

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "layers/gram_gp.hpp"
#include "util/error.hpp"

namespace dkp::models {

using autodiff::Var;

GramDgp::GramDgp(const GramDgpConfig& cfg, const arma::mat& X_train, const arma::vec& y_train,
                 random::Stream& init)
    : GramModel(cfg, X_train, y_train, init, "gram-dgp") {
  width_ = cfg.width > 0 ? cfg.width : d0_;
  const size_t P = cfg_.inducing;
  for (size_t l = 2; l < cfg_.depth; ++l) {
    init_[layer_key(l, "v")] = random::normal_matrix(init, P, width_);
    init_[layer_key(l, "L_loc")] = arma::eye(P, P);
    init_[layer_key(l, "L_scale")] = arma::mat(1, 1, arma::fill::value(0.5 * cfg_.log_prec_init));
  }
}

std::string GramDgp::describe() const {
  return fmt::format(
      "global-inducing DGP on Gram kernels: {} kernel applications (input Gram {}, {} GP hidden "
      "layer{} of width {}, global-inducing output), {} kernel, {} inducing points, {}",
      cfg_.depth - 1, input_words(), cfg_.depth - 2, cfg_.depth == 3 ? "" : "s", width_,
      cfg_.kernel, cfg_.inducing, likelihood_words());
}

GramModel::HiddenShared GramDgp::hidden_shared(const VarMap& p, const Var& X) const {
  if (cfg_.depth < 3) return {};  // no hidden GP layer
  const auto [Fi, Ft] = input_features(p, X);
  HiddenShared shared;
  shared.input_gram = kernels::features_to_gram(Fi, Ft, double(d0_));
  const kernels::GramBlocks K = kernel(p, 2, shared.input_gram);
  const layers::GigpParams gp =
      layers::gram_gp_params(get(p, layer_key(2, "v")), get(p, layer_key(2, "L_loc")),
                             get(p, layer_key(2, "L_scale")), K.ii.n_rows());
  shared.first = layers::gigp_prepare({K.ii, K.it, K.tt}, gp);
  layers::gigp_share(*shared.first);  // every sample finishes it
  return shared;
}

GramModel::Hidden GramDgp::hidden(const VarMap& p, const Var& X, const HiddenShared& shared,
                                  random::Stream& rng) const {
  Var logpq = X.tape().constant(0.0);
  // G_1 (the input Gram) is computed once in hidden_shared when a hidden GP layer exists.
  std::vector<kernels::GramBlocks> layers{shared.first ? shared.input_gram : kernels::GramBlocks{}};
  size_t l = 2;
  if (shared.first) {  // layer 2 on K(G_1), prepared once for all samples
    const layers::GramLayerSample s = layers::gram_gp_sample(*shared.first, rng);
    layers.push_back(s.G);
    logpq = logpq + s.logpq;
    l = 3;
  } else {
    const auto [Fi, Ft] = input_features(p, X);
    layers[0] = kernels::features_to_gram(Fi, Ft, double(d0_));
  }
  for (; l < cfg_.depth; ++l) {
    const layers::GramLayerSample s =
        layers::gram_gp_layer(kernel(p, l, layers.back()), get(p, layer_key(l, "v")),
                              get(p, layer_key(l, "L_loc")), get(p, layer_key(l, "L_scale")), rng);
    layers.push_back(s.G);
    logpq = logpq + s.logpq;
  }
  const kernels::GramBlocks G = layers.back();
  return {G, logpq, std::move(layers)};
}

std::unique_ptr<Model> build_gram_dgp(const ModelSpec& spec, const arma::mat& X_train,
                                      const arma::vec& y_train, random::Stream& init) {
  GramDgpConfig cfg;
  static_cast<GramModelConfig&>(cfg) = gram_model_config(spec);
  cfg.width = spec.width;
  return std::make_unique<GramDgp>(cfg, X_train, y_train, init);
}

}  // namespace dkp::models
