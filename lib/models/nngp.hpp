// NNGP (the infinite-width limit; the delta -> infinity limit of the DIWP, DKP paper sec. 7):
//   G_1 = X' X'^T / N0,  G_l = K(G_{l-1}) (deterministic, l = 2..L),  F_{L+1} | G_L ~ GIGP(K(G_L))
// i.e. bayesfunc's FeaturesToKernel -> ReluKernelGram x L -> GIGP(1) (notes section 2).
//
// Input layer, kernels, output layer, layer numbering and parameters: models/gram_model.hpp.
#pragma once

#include <string>

#include "models/gram_model.hpp"

namespace dkp::models {

/// Neural network Gaussian process with a global-inducing output layer.
class Nngp final : public GramModel {
 public:
  Nngp(const GramModelConfig& cfg, const arma::mat& X_train, const arma::vec& y_train,
       random::Stream& init);
  std::string describe() const override;

 protected:
  Hidden hidden(const VarMap& p, const autodiff::Var& X, const HiddenShared& shared,
                random::Stream& rng) const override;
  bool deterministic_hidden() const override { return true; }
};

/// The registry's nngp entry (models/registry.hpp).
std::vector<RegistryEntry> nngp_entries();

}  // namespace dkp::models
