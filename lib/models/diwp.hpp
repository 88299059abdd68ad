// Deep inverse Wishart process (DKP paper sec. 5, Alg. 1, appendices F, G, I;
// notes/reference-implementations.md sections 2, 4, 9), with the layer numbering, input layer,
// kernels and output layer of models/gram_model.hpp.
//
// Prior (eq. 18), with the inducing rows first:
//   layer 1 (appendix F):  Omega ~ IW(delta_1 I, delta_1 + N0 + 1) (N0 x N0, E Omega = I),
//                          G_1 = X' Omega X'^T / N0 (exact for every block, no conditional needed);
//   layers l = 2..L:       G_l | G_{l-1} ~ IW(delta_l K(G_{l-1}), delta_l + P + 1)  (E G_l = K);
//   output l = L + 1:      GIGP on K(G_L) (appendix G).
// Approximate posterior (eq. 21), on the inducing block only; train/test points from the
// conditional prior (eqs. 25-26):
//   Q(Omega)       = IW(delta_1 I + V_1 V_1^T / N0, delta_1 + gamma_1 + N0 + 1),
//   Q(G_ii^l | .)  = IW(delta_l K_ii + V_l V_l^T / P, delta_l + gamma_l + P + 1),
//   each train/test point t independently given G_ii^l (appendix I, eqs. 105-107):
//     g_tt.i ~ InvGamma(nu_t / 2, psi_tt.i / 2), G_ii^{-1} g_it ~ N(Psi_ii^{-1} psi_it,
//     g_tt.i Psi_ii^{-1}), Psi = delta_l K(G_{l-1}).
// ELBO per Alg. 1: E log p(y | f) + sum_l [log P(G_ii^l | .) - log Q(G_ii^l | .)] + GIGP log p/q,
// one sample of everything per Monte Carlo sample.
//
// Degrees of freedom of the train/test conditional. The Schur complement of a single point t
// given the P inducing points, from the (P + 1)-point marginal IW(Psi, delta + P + 2), has
// nu_t = delta + P + 2 (eq. 106 with P_t = 1, the single point of appendix I); this is what each
// point's marginal is under the joint of any batch, so predictions do not depend on the batch
// size. The reference code uses P_t = minibatch size (notes section 9, predictions then change
// with the evaluation batch size); `reference_batch_dof` reproduces that.
//
// Parameters (besides those of gram_model.hpp), l = 1..depth - 1, all init as bayesfunc's IWLayer /
// SingularIWLayer (notes section 2):
//   layer{l}.log_delta 1x1  log delta_init (4: models/diwp_defaults.hpp);  layer{l}.log_gamma 1x1 0
//   (gamma = 1); layer{l}.V  N0 x N0 (l = 1) or P x P  ~ N(0, 1); with learned_v_scale,
//   layer{l}.log_v_scale 1x1 0 (bayesfunc's log_diag).
// The V V^T / n scaling is bayesfunc's (s / P) V V^T with s fixed at 1 (s is redundant with V's
// scale); we use / N0 in layer 1 too (bayesfunc: (delta I + s V V^T) / N0 for Omega / N0, i.e.
// no 1 / N0 on V V^T relative to delta I), so that at initialisation E_Q = E_P in every layer
// ((delta + 1) / (delta + gamma) = 1) instead of (N0 + 1) / 2 times the prior mean in layer 1.
// Both are one family (V_1 / sqrt(N0) against V_1), so the choice changes the start and Adam's
// steps only; `omega_v_paper` (dkp run --diwp-omega-v paper) gives the paper's.
#pragma once

#include "distributions/gamma_op.hpp"
#include "layers/inverse_wishart.hpp"
#include "models/diwp_defaults.hpp"
#include "models/gram_model.hpp"

namespace dkp::models {

struct DiwpConfig : GramModelConfig {
  /// How Gamma variates are drawn (Inversion: smooth in the shape at a fixed seed, for tests).
  distributions::GammaMethod gamma_method = distributions::GammaMethod::Rejection;
  /// nu_t = delta + P + B + 1 with B the batch size (bayesfunc) instead of delta + P + 2.
  bool reference_batch_dof = false;
  double delta_init = kDiwpDeltaInit;  ///< initial delta of every IW layer
  /// Q(Omega) = IW(delta_1 I + V_1 V_1^T, ...) as the paper's eq. 96 and bayesfunc's
  /// SingularIWLayer, instead of V_1 V_1^T / N0 (the header comment says why / N0 is ours).
  bool omega_v_paper = false;
  /// Q's scale delta K + s V V^T / P with s = exp(layer{l}.log_v_scale) learned (init 1), as
  /// bayesfunc's IWLayer (its log_diag); false: s = 1, no parameter.
  bool learned_v_scale = false;
};

class Diwp final : public GramModel {
 public:
  Diwp(const DiwpConfig& cfg, const arma::mat& X_train, const arma::vec& y_train,
       random::Stream& init);
  std::string describe() const override;

 protected:
  Hidden hidden(const VarMap& p, const autodiff::Var& X, const HiddenShared& shared,
                random::Stream& rng) const override;
  HiddenShared hidden_shared(const VarMap& p, const autodiff::Var& X) const override;

 private:
  DiwpConfig dcfg_;
};

/// The registry's diwp entry (models/registry.hpp).
std::vector<RegistryEntry> diwp_entries();

}  // namespace dkp::models
