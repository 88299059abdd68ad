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

#include <vector>

#include "autodiff/tape.hpp"
#include "linalg/chol.hpp"
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
/// Equivalent to gigp_finish(gigp_prepare(k, p), eps1, eps2) with eps1 and eps2 (P x W each,
/// in that order) drawn from rng.
GigpOutput gigp_forward(const KernelBlocks& k, const GigpParams& p, random::Stream& rng);

/// The train/test points' conditional moments given the inducing outputs, with
/// A = L_K^{-1} K_it:  f_mean = A^T w (B x WS, w = L_K^{-1} u, P x WS) and
/// f_var = k_tt - colsumsq(A) (B x 1). One op with its own adjoint, evaluated panel by panel of
/// points (linalg::tri_solve_panels), the same numbers as the composition of a triangular solve,
/// a column sum of squares and a product. f_var is a second node that hands its adjoint to
/// f_mean's.
struct ConditionalMoments {
  Var f_mean, f_var;
};
ConditionalMoments conditional_moments(const Var& Lk, const Var& Kit, const Var& tt, const Var& w);

/// Draws f = f_mean + sqrt(f_var) ε, ε ~ N(0, I) (B x W).
Var sample_outputs(const GigpOutput& out, random::Stream& rng);

// ---- the same layer split into its noise-free part and its samples ---------------------------
// When several Monte Carlo samples share the kernel blocks (the first layer of a deep model: the
// inducing inputs and the data are the same for every sample), the noise-free part is computed
// once and the samples' noise is stacked as extra columns.

/// L = L_loc exp(L_scale) / mean(diag L_loc), shared by every sample of a layer.
Var gigp_precision_factor(const GigpParams& p);
/// The same in plain values.
arma::mat gigp_precision_factor_plain(const arma::mat& L_loc, double L_scale);

/// The part of a layer that does not depend on the noise.
struct GigpPrepared {
  Var Lk;     ///< chol(K_ii) = L_K
  Var L;      ///< precision factor (P x P)
  Var C;      ///< L_K^T L
  Var Lm;     ///< chol(L^T K_ii L + I) = chol(C^T C + I)
  Var a;      ///< L^T v (P x W)
  Var logpq;  ///< 1 x 1, the noise-free terms of one sample's log p(u) - log q(u)
  Var Kit;    ///< K_it (P x B)
  Var tt;     ///< diag K_tt (B x 1)
  /// Set by gigp_share for a layer that several gigp_finish calls reuse: A = L_K^{-1} K_it and
  /// f_var, computed once (gigp_finish then only forms f_mean = A^T w). Unset (the usual case,
  /// one gigp_finish per prepared layer), gigp_finish computes both in one fused op
  /// (conditional_moments).
  Var A;
  Var f_var;
};

/// Noise-free part of a layer; `L` is gigp_precision_factor(p) when not given (invalid Var),
/// `Lk` is chol(k.ii) when not given.
GigpPrepared gigp_prepare(const KernelBlocks& k, const GigpParams& p, const Var& L = Var(),
                          const Var& Lk = Var());

/// Computes A and f_var into g (see GigpPrepared) for a prepared layer that several samples reuse
/// through separate gigp_finish / gigp_sample calls.
void gigp_share(GigpPrepared& g);

/// S samples at once from stacked noise: eps1 and eps2 are P x (W S), sample s in columns
/// s W .. s W + W - 1. Returns u (P x W S), f_mean (B x W S), f_var (B x 1, shared) and logpq,
/// the sum over the S samples of log p(u) - log q(u).
GigpOutput gigp_finish(const GigpPrepared& g, const arma::mat& eps1, const arma::mat& eps2);

/// A layer whose output columns have a pseudo-likelihood precision each (Λ_c = L_c L_c^T, not
/// shared): q(u_c) ∝ N(u_c; 0, K_ii) N(v_c; u_c, Λ_c^{-1}). Column c of v (P x W) goes with
/// Ls[c]; the noise is stacked as in gigp_finish (P x W S, sample s in columns s W .. s W + W - 1).
/// With every L_c equal it is gigp_finish(gigp_prepare(k, {v, ., .}, L_c), eps1, eps2) up to
/// round-off. The Cholesky factor of K_ii and the train/test solve are shared by the columns.
GigpOutput gigp_forward_per_output(const KernelBlocks& k, const Var& v, const std::vector<Var>& Ls,
                                   const arma::mat& eps1, const arma::mat& eps2);

/// One sample of a prepared layer, eps1 and eps2 drawn from rng as gigp_forward draws them (so
/// gigp_sample(gigp_prepare(k, p), rng) is gigp_forward(k, p, rng)).
GigpOutput gigp_sample(const GigpPrepared& g, random::Stream& rng);

/// g's values as constants on `tape` (prediction evaluates each sample on a tape of its own).
GigpPrepared gigp_constants(autodiff::Tape& tape, const GigpPrepared& g);

/// f = f_mean + sqrt(f_var) eps for given noise eps (the shape of f_mean).
Var sample_outputs(const GigpOutput& out, arma::mat eps);

// ---- plain (no tape) evaluation for prediction ----------------------------------------------
// The same distribution computed with Armadillo/BLAS only, in a cheaper but algebraically equal
// form: with C = L_K^T L, M = C^T C + I and z = L_K^T r = C (a + ε2) + ε1,
//   u = L_K (z - C M^{-1} C^T z),   f_mean = A^T (z - C M^{-1} C^T z).

/// Noise-free part of a layer (plain values).
struct GigpPlain {
  arma::mat Lk, C, Lm, a, A;
  arma::vec f_var;
};

/// K_ii (P x P), K_it (P x B) and diag K_tt (B); L is the precision factor, v the
/// pseudo-targets (P x W). The factorisations are counted in `stats` (when not null).
GigpPlain gigp_prepare_plain(const arma::mat& Kii, const arma::mat& Kit, const arma::vec& ktt,
                             const arma::mat& L, const arma::mat& v,
                             linalg::CholStats* stats = nullptr);

/// Samples from stacked noise as gigp_finish (P x W S each); writes u when `u` is not null and
/// f_mean (B x W S).
void gigp_finish_plain(const GigpPlain& g, const arma::mat& eps1, const arma::mat& eps2,
                       arma::mat* u, arma::mat& f_mean);

/// gigp_forward_per_output in plain values: Ls[c] is column c's precision factor. Writes u when
/// `u` is not null and f_mean (B x W S); returns f_var. Factorisations counted as above.
arma::vec gigp_forward_per_output_plain(const arma::mat& Kii, const arma::mat& Kit,
                                        const arma::vec& ktt, const std::vector<arma::mat>& Ls,
                                        const arma::mat& v, const arma::mat& eps1,
                                        const arma::mat& eps2, arma::mat* u, arma::mat& f_mean,
                                        linalg::CholStats* stats = nullptr);

}  // namespace dkp::layers
