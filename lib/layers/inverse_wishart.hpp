// The deep inverse Wishart process's layers (DKP paper sec. 5, Alg. 1, appendices F and I; the
// model around them: models/diwp.hpp), over the inducing block with the train/test points from
// the conditional prior:
//   input layer (appendix F):  Omega ~ Q = IW(delta I + V V^T / N0, delta + gamma + N0 + 1)
//                              (or V V^T as eq. 96: models/diwp.hpp, omega_v_paper),
//                              prior IW(delta I, delta + N0 + 1);  G_1 = X' Omega X'^T / N0;
//   hidden layer:              G_ii ~ Q = IW(delta K_ii + V V^T / P, delta + gamma + P + 1),
//                              prior IW(delta K_ii, delta + P + 1); each train/test point t given
//                              G_ii (appendix I, eqs. 105-107): g_tt.i ~ InvGamma(nu_t / 2,
//                              psi_tt.i / 2), G_ii^{-1} g_it ~ N(Psi_ii^{-1} psi_it, g_tt.i
//                              Psi_ii^{-1}), Psi = delta K(G_{l-1}), nu_t = delta + P + 2 (or the
//                              reference code's delta + P + B + 1).
#pragma once

#include "autodiff/tape.hpp"
#include "distributions/gamma_op.hpp"
#include "kernels/gram.hpp"
#include "random/stream.hpp"

namespace dkp::layers {

/// One inverse-Wishart layer's sample over the inducing block (and, for hidden layers, the
/// conditional train/test blocks).
struct IwLayerSample {
  kernels::GramBlocks G;
  autodiff::Var log_p;  ///< log P of the inducing-block sample (Omega for layer 1)
  autodiff::Var log_q;  ///< log Q of the same sample
};

/// V V^T / n for an n x n V: the posterior's addition to the IW scale (the same for every sample,
/// so computed once per ELBO / prediction call and passed to the layers below). With
/// `divide_by_n` false, V V^T (the DKP paper's eq. 96 for the input layer).
autodiff::Var iw_v_term(const autodiff::Var& V, bool divide_by_n = true);

/// Layer 1: Omega ~ Q, G_1 = X' Omega X'^T / N0 for inducing (Fi) and train/test (Ft) features;
/// v_term = iw_v_term(V_1) (N0 x N0; iw_v_term(V_1, false) for the paper's scaling).
IwLayerSample iw_input_layer(const autodiff::Var& Fi, const autodiff::Var& Ft,
                             const autodiff::Var& log_delta, const autodiff::Var& log_gamma,
                             const autodiff::Var& v_term, random::Stream& rng,
                             distributions::GammaMethod method);

/// A hidden layer: G_ii ~ Q(. | K_ii), train/test blocks from the conditional prior given G_ii.
/// K carries the kernel blocks K(G_{l-1}) (jitter included); v_term = iw_v_term(V_l) (P x P).
IwLayerSample iw_hidden_layer(const kernels::GramBlocks& K, const autodiff::Var& log_delta,
                              const autodiff::Var& log_gamma, const autodiff::Var& v_term,
                              random::Stream& rng, distributions::GammaMethod method,
                              bool reference_batch_dof);

}  // namespace dkp::layers
