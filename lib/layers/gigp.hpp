// Global inducing-point GP layer (Ober & Aitchison 2021; notes/reference-implementations.md
// section 1). Used per layer by the global-inducing DGP and as the output layer of the NNGP, DIWP
// and DWP models.
//
// Given kernel blocks K_ii (P x P), K_it (P x B) and diag k_tt (B) of one Monte Carlo sample, the
// approximate posterior over the inducing outputs U (P x W, one column per output) is
//   q(u_w) ∝ N(u_w; 0, K_ii) N(v_w; u_w, Λ^{-1}),   Λ = L L^T   (shared by all columns),
// i.e. q(u_w) = N(Σ Λ v_w, Σ), Σ = (K^{-1} + Λ)^{-1} = K - K L M^{-1} L^T K, M = L^T K L + I.
// Sample: u = Σ (Λ v + L_K^{-T} ε1 + L ε2) with K = L_K L_K^T (the bracket has covariance Σ^{-1}).
// log p(u) - log q(u) (one sample) via pseudo-observations a = L^T v:
//   log N(a; 0, M) - log N(a; L^T u, I), summed over columns.
// Train/test points given u, independently per point and column:
//   f_t = K_ti K^{-1} u + sqrt(k_tt - diag(K_ti K^{-1} K_it)) ε.
#pragma once

#include "autodiff/tape.hpp"
#include "random/stream.hpp"

namespace dkp::layers {

using autodiff::Var;

/// Kernel blocks of one layer and one Monte Carlo sample.
struct KernelBlocks {
  Var ii;  ///< P x P (jitter included)
  Var it;  ///< P x B
  Var tt;  ///< B x 1, the diagonal of K_tt
};

/// Variational parameters of one layer: pseudo-targets v (P x W), L_loc (P x P, unconstrained),
/// L_scale (1 x 1): L = L_loc exp(L_scale) / mean(diag L_loc)   (reference parameterisation).
struct GigpParams {
  Var v;
  Var L_loc;
  Var L_scale;
};

struct GigpOutput {
  Var u;       ///< P x W sampled inducing outputs
  Var f_mean;  ///< B x W conditional mean of the train/test outputs
  Var f_var;   ///< B x 1 conditional variance (the same for every column)
  Var logpq;   ///< 1 x 1, log p(u) - log q(u) at the sample
};

/// Samples u from q and computes the conditional moments of the train/test outputs.
GigpOutput gigp_forward(const KernelBlocks& k, const GigpParams& p, random::Stream& rng);

/// Draws f = f_mean + sqrt(f_var) ε, ε ~ N(0, I) (B x W).
Var sample_outputs(const GigpOutput& out, random::Stream& rng);

}  // namespace dkp::layers
