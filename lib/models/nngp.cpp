#include "models/nngp.hpp"

#include <fmt/format.h>

namespace dkp::models {

using autodiff::Var;

Nngp::Nngp(const GramModelConfig& cfg, const arma::mat& X_train, const arma::vec& y_train,
           random::Stream& init)
    : GramModel(cfg, X_train, y_train, init, "nngp") {}

std::string Nngp::describe() const {
  return fmt::format(
      "NNGP: {} {} kernel application{} (input Gram {}, deterministic hidden layers, "
      "global-inducing output), {} inducing points, {}",
      cfg_.depth - 1, cfg_.kernel, cfg_.depth > 2 ? "s" : "", input_words(), cfg_.inducing,
      likelihood_words());
}

GramModel::Hidden Nngp::hidden(const VarMap& p, const Var& X, const HiddenShared&,
                               random::Stream&) const {
  const auto [Fi, Ft] = input_features(p, X);
  Hidden h{kernels::features_to_gram(Fi, Ft, double(d0_)), X.tape().constant(0.0), {}};
  h.layers.push_back(h.G);
  // Infinite width: each hidden Gram matrix is its expectation K(G_{l-1}) (DKP paper eq. 53).
  for (size_t l = 2; l < cfg_.depth; ++l) h.layers.push_back(h.G = kernel(p, l, h.G));
  return h;
}

std::vector<RegistryEntry> nngp_entries() {
  RegistryEntry e = gram_model_entry(
      "", "neural network GP, the infinite-width limit on Gram kernels (DKP paper)");
  e.build = [](const ModelSpec& spec, const arma::mat& X_train, const arma::vec& y_train,
               random::Stream& init) -> std::unique_ptr<Model> {
    return std::make_unique<Nngp>(gram_model_config(spec), X_train, y_train, init);
  };
  return {e};
}

}  // namespace dkp::models
