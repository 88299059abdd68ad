// The inverse Wishart IW(Psi, nu) with real-valued degrees of freedom (deliverable 3): Bartlett
// sampler with gradients w.r.t. Psi and nu, log density, and the univariate train/test
// conditionals of the deep inverse Wishart process (DKP paper sec. 5.3 and appendix I).
//
// Convention: G ~ IW(Psi, nu) iff G^{-1} ~ W(Psi^{-1}, nu); E[G] = Psi / (nu - P - 1) for
// nu > P + 1; the density needs nu > P - 1.
#pragma once

#include "autodiff/tape.hpp"
#include "distributions/bartlett.hpp"
#include "distributions/wishart.hpp"
#include "random/stream.hpp"

namespace dkp::distributions {

/// G ~ IW(L L^T, nu) (nu a 1x1 Var > P - 1): with the Bartlett factor T of W(I, nu)
/// (c_j ~ Gamma((nu - j)/2, rate 1/2), T_ij ~ N(0, 1)), G = L (T T^T)^{-1} L^T = F F^T with
/// F = L T^{-T} (as bayesfunc's InverseWishart, notes section 2). Gradients reach L through F and
/// nu through the reparameterised Gamma draws. `parts` says what is formed beyond the Bartlett
/// factor (the rest are empty Vars): IwParts::Factor skips G = F F^T (2 P^3 flops), and
/// IwParts::Bartlett skips F too (P^3 flops): the DIWP's input layer, whose N0 x N0 G and F
/// would cost 58 and 29 GFlop for CIFAR-10's N0 = 3072, uses T alone (autodiff::times_iw_factor
/// forms its features X F without F). What is formed, and the stream use, are the same either
/// way.
enum class IwParts { Gram, Factor, Bartlett };
PsdSample inverse_wishart_sample(const Var& L, const Var& nu, random::Stream& s,
                                 GammaMethod method = GammaMethod::Rejection,
                                 IwParts parts = IwParts::Gram);

/// log IW(G; Psi = L L^T, nu) = -(nu + P + 1)/2 log|G| + nu/2 log|Psi| - tr(Psi G^{-1})/2
///   - nu P/2 log 2 - log Gamma_P(nu/2), for any SPD G (factorised with the checked Cholesky,
///   `where` names the caller in errors).
Var inverse_wishart_log_prob(const Var& G, const Var& L, const Var& nu,
                             const char* where = "distributions::inverse_wishart_log_prob G");

/// The same density at the sampler's own draw, from its parts (no factorisation of G):
/// log|G| = log|Psi| - sum_j log c_j and tr(Psi G^{-1}) = ||T||_F^2, so
///   log IW = -(P + 1)/2 log|Psi| + (nu + P + 1)/2 sum_j log c_j - ||T||_F^2/2 - nu P/2 log 2
///            - log Gamma_P(nu/2).
/// `sample` must come from inverse_wishart_sample with the same L (nu may be a detached copy).
Var inverse_wishart_log_prob_at_sample(const PsdSample& sample, const Var& L, const Var& nu);

/// Train/test points given the inducing block, one point at a time (DKP paper appendix I,
/// eqs. 105-107). With Psi = c K the joint IW scale (K_ii P_i x P_i with lower Cholesky factor
/// L_ii, K_it P_i x n, k_tt n x 1 the diagonal of K_tt; c = `scale`, 1 x 1, or 1 when not given)
/// and nu_joint the joint IW degrees of freedom, independently for each of the n columns t:
///   psi_tt.i = psi_tt - psi_it^T Psi_ii^{-1} psi_it,
///   g_tt.i   ~ InverseGamma(nu_joint / 2, psi_tt.i / 2)   (shape, scale),
///   G_ii^{-1} g_it ~ N(Psi_ii^{-1} psi_it, g_tt.i Psi_ii^{-1}),
///   g_it = G_ii (G_ii^{-1} g_it),  g_tt = g_tt.i + g_it^T G_ii^{-1} g_it.
/// This is the IW partition theorem (the Schur complement of an IW(Psi, nu) block is
/// IW(Psi_tt.i, nu), independent of G_ii ~ IW(Psi_ii, nu - P_t)); eq. 106 has
/// nu_joint = delta + P_i + P_t + 1 with P_t the number of train/test points in the minibatch, as
/// the reference code does (notes section 2). Passing the scale c separately (the DIWP's delta)
/// spares scaling the P_i x n block. Returns g_it (P_i x n) and g_tt (n x 1).
struct IWConditionalSample {
  Var g_it;          ///< P_i x n
  Var g_tt;          ///< n x 1
  Var g_tt_given_i;  ///< n x 1, the Schur complements g_tt.i
};
IWConditionalSample inverse_wishart_conditional_sample(const Var& G_ii, const Var& L_ii,
                                                       const Var& K_it, const Var& k_tt,
                                                       const Var& nu_joint, random::Stream& s,
                                                       GammaMethod method = GammaMethod::Rejection,
                                                       const Var& scale = Var());

}  // namespace dkp::distributions
