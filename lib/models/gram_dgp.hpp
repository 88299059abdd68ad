// Global-inducing deep GP on Gram kernels: the "DGP" baseline of the DKP paper (sec. 7, Table 1),
// with the input layer, kernels (ReLU arc-cosine or SE on Gram matrices), output layer and layer
// numbering of models/gram_model.hpp, so that --depth means the same for the DGP, NNGP and DIWP.
//
// Prior, with the inducing rows first (layers 1..depth as in gram_model.hpp):
//   layer 1:               G_1 = X' X'^T / N0 (input layer: per-feature scale and bias);
//   layers l = 2..L:       F_l | G_{l-1} ~ GP(0, K(G_{l-1})) with nu columns,
//                          G_l = F_l F_l^T / nu;
//   output l = L + 1:      GIGP on K(G_L) (appendix G).
// depth 3 = one input Gram layer, one GP hidden layer of width nu, one GP output layer: "two
// hidden layers and one output layer, with three applications of the kernel" counts the input
// Gram as the first hidden layer exactly as the NNGP and DIWP do. As nu -> infinity,
// G_l -> K(G_{l-1}) and the model becomes the NNGP of the same depth.
//
// Approximate posterior of hidden layer l (Ober & Aitchison 2021; layers/gram_gp.hpp): the inducing
// features U_l (P x nu) from q(U_l | U_{l-1}) ∝ p(U_l | K_ii) N(V_l; U_l, Lambda_l^{-1}), the
// train/test features F_l,t from the conditional prior given U_l (per point and column), then
//   G_l = [U_l; F_l,t] Gram / nu:  ii = U U^T / nu, it = U F_t^T / nu, tt = rowsum(F_t^2) / nu.
// Each layer adds its log p(U_l) - log q(U_l) at the sample.
//
// Width nu = the number of input features by default (DKP paper sec. 7: "the width is fixed to
// be equal to the number of input features").
//
// Parameters (besides those of gram_model.hpp), l = 2..depth - 1, initialised as gi_dgp's hidden
// layers:
//   layer{l}.v P x nu ~ N(0, 1);  layer{l}.L_loc P x P  I;  layer{l}.L_scale 1x1 log_prec_init/2.
// (gram_model.hpp's layer{depth}.{v,L_loc,L_scale} belong to the output layer; l < depth here.)
#pragma once

#include "models/gram_model.hpp"

namespace dkp::models {

struct GramDgpConfig : GramModelConfig {
  size_t width = 0;  ///< hidden width nu; 0 means the number of input features
};

/// One hidden GP layer's sample: the Gram blocks of its features and log p(U) - log q(U).
class GramDgp final : public GramModel {
 public:
  GramDgp(const GramDgpConfig& cfg, const arma::mat& X_train, const arma::vec& y_train,
          random::Stream& init);
  std::string describe() const override;
  size_t width() const { return width_; }

 protected:
  Hidden hidden(const VarMap& p, const autodiff::Var& X, const HiddenShared& shared,
                random::Stream& rng) const override;
  HiddenShared hidden_shared(const VarMap& p, const autodiff::Var& X) const override;

 private:
  size_t width_ = 0;
};

/// The Gram DGP a spec describes (the dgp global-inducing entry with the relu kernel, gi_dgp.cpp).
std::unique_ptr<Model> build_gram_dgp(const ModelSpec& spec, const arma::mat& X_train,
                                      const arma::vec& y_train, random::Stream& init);

}  // namespace dkp::models
