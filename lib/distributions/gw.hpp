// The generalised singular Wishart GW(Sigma, nu, alpha, beta, mu, sigma) (GW paper sec. 3.2,
// eq. 27; deliverable 4) and its A- and AB-generalisations A-GW(A, nu, ...) and
// AB-GW(A, B, nu, ...) (AGW paper sec. 5.1, eqs. 13-14, appendix A; deliverable 5).
//
// All three sample the generalised Bartlett factor T (P x m, m = min(P, nu); bartlett.hpp) and
// return G = F F^T with the factor F, which the DWP conditional uses as F_i (GW paper eq. 43,
// AGW paper Algorithm 1):
//     GW:     F = L T,       Sigma = L L^T, L lower triangular (positive diagonal)
//     A-GW:   F = A T,       A any invertible P x P
//     AB-GW:  F = A T B,     B lower triangular m x m, invertible (only its lower triangle is read)
//
// Log densities, 0-based j (the papers are 1-based), with the same reference measure as the
// singular Wishart (wishart.hpp):
//   GW (eq. 27; notes section 3 gives this 0-based form):
//     log Q = sum_j log Gamma(c_j; alpha_j, beta_j) + sum_{i>j} log N(T_ij; mu_ij, sigma_ij^2)
//             - sum_{j<m} (P - j - 1)/2 log c_j - sum_{j<m} (P - j) log L_jj
//             - sum_{j<P} min(j + 1, nu) log L_jj.
//   AB-GW (eq. 14 / appendix eq. 50), A-GW is B = I (eq. 13 / eq. 49):
//     log Q = [same Gamma and Normal terms] - sum_{j<m} (P - j - 1)/2 log c_j
//             - sum_{j<m} 2 (P - j) log|B_jj| - nu log|det A|
//             + (nu - P - 1)/2 (log|G_{:m,:m}| - log|C_{:m,:m}|),
//     C = (T B)(T B)^T, so log|C_{:m,:m}| = sum_j log c_j + 2 sum_j log|B_jj| (T_{:m,:} and B are
//     lower triangular), and log|G_{:m,:m}| = 2 log|det (A T B)_{:m,:}|. For m = P the bracket is
//     exactly 2 log|det A| and the A terms collapse to -(P + 1) log|det A|, which is used then.
//
// The papers write |A| and B_jj; we use |det A| and |B_jj|, which is what the change of variables
// gives (and equals the papers' expressions for det A > 0, B_jj > 0).
#pragma once

#include <armadillo>

#include "autodiff/tape.hpp"
#include "distributions/bartlett.hpp"
#include "distributions/wishart.hpp"
#include "random/stream.hpp"

namespace dkp::distributions {

/// Plain-valued Bartlett parameters (for densities at arbitrary G, outside an autodiff graph).
struct BartlettParamValues {
  arma::mat alpha, beta, mu, sigma;
  /// The values as constants on `tape`.
  BartlettParams on(Tape& tape) const;
};

// ---- GW ----------------------------------------------------------------------------------------

/// G ~ GW(L L^T, nu, alpha, beta, mu, sigma): T from bartlett_sample, F = L T. alpha must have
/// m = min(P, nu) rows (integer nu >= 1).
PsdSample gw_sample(const Var& L, int nu, const BartlettParams& p, random::Stream& s,
                    GammaMethod method = GammaMethod::Rejection);

/// log Q(G) of eq. 27 at a sample from gw_sample with the same L (parts: c, T). Pass
/// detached(p) for the sticking-the-landing estimator.
Var gw_log_prob(const PsdSample& sample, const Var& L, int nu, const BartlettParams& p);

/// log Q(G) at an arbitrary PSD G of rank m (plain values): T = L^{-1} Lambda with Lambda the
/// lower-trapezoidal factor of G (trapezoidal_factor), then the formula above.
double gw_log_prob_at(const arma::mat& G, const arma::mat& L, int nu, const BartlettParamValues& p);

// ---- A-GW and AB-GW ----------------------------------------------------------------------------

/// G ~ A-GW(A, nu, alpha, beta, mu, sigma): F = A T.
PsdSample agw_sample(const Var& A, int nu, const BartlettParams& p, random::Stream& s,
                     GammaMethod method = GammaMethod::Rejection);

/// G ~ AB-GW(A, B, nu, alpha, beta, mu, sigma): F = A T tril(B), B m x m.
PsdSample abgw_sample(const Var& A, const Var& B, int nu, const BartlettParams& p,
                      random::Stream& s, GammaMethod method = GammaMethod::Rejection);

/// log Q(G) of eq. 13 at a sample from agw_sample with the same A.
Var agw_log_prob(const PsdSample& sample, const Var& A, int nu, const BartlettParams& p);

/// log Q(G) of eq. 14 at a sample from abgw_sample with the same A and B.
Var abgw_log_prob(const PsdSample& sample, const Var& A, const Var& B, int nu,
                  const BartlettParams& p);

/// A = L A' with L lower triangular (only its lower triangle is read) and A' any invertible
/// P x P: the form of the DWP's A-GW and AB-GW posteriors (AGW paper eq. 16, L the Cholesky
/// factor of the GW scale). The factored overloads below never form A: F = L (A' T) costs
/// O(P^2 m) instead of the O(P^3) product, and log|det A| = sum_j log|L_jj| + log|det A'|, whose
/// second term depends on A' alone and is computed once (factor_a) for every sample that
/// shares A'.
struct FactoredA {
  Var L, A_prime;
  Var log_abs_det_A_prime;  ///< 1 x 1
};

/// {L, A', log|det A'|}; A' must be square and L the same size.
FactoredA factor_a(const Var& L, const Var& A_prime);

/// The same as agw_sample / abgw_sample / agw_log_prob / abgw_log_prob with A = L A'.
PsdSample agw_sample(const FactoredA& A, int nu, const BartlettParams& p, random::Stream& s,
                     GammaMethod method = GammaMethod::Rejection);
PsdSample abgw_sample(const FactoredA& A, const Var& B, int nu, const BartlettParams& p,
                      random::Stream& s, GammaMethod method = GammaMethod::Rejection);
Var agw_log_prob(const PsdSample& sample, const FactoredA& A, int nu, const BartlettParams& p);
Var abgw_log_prob(const PsdSample& sample, const FactoredA& A, const Var& B, int nu,
                  const BartlettParams& p);

/// The Bartlett factor of an A-GW / AB-GW sample as log Q sees it with A' (and B) held constant,
/// for sticking the landing on them: T_q = W B_0^{-1} with W the lower-trapezoidal factor
/// (columns signed like diag(B_0)) of Y = A'_0^{-1} L^{-1} F = A'_0^{-1} A' T tril(B), where
/// A'_0^{-1} = `a_prime_inv` (a constant) and B_0 = B's value: T recovered from G at (A'_0, B_0),
/// as abgw_log_prob_at does. T_q = T in value; its gradient is T's plus the change of the factor
/// of the fixed G that a change of A' (B) makes, so log Q(G_sample; A'_0, B_0) built on it has
/// the path gradient only. `B` is null for the A-GW.
BartlettFactor factor_at_fixed_mixing(const BartlettFactor& f, const Var& A_prime,
                                      const arma::mat& a_prime_inv, const Var* B);

/// log Q(G) of eq. 14 at an arbitrary PSD G of rank m (plain values), recovering T as the AGW
/// paper describes after eq. 14: C = A^{-1} G A^{-T}, T B = the lower-trapezoidal factor of C
/// (columns signed like diag(B)), T = (T B) B^{-1}. Pass B = I (m x m) for the A-GW.
double abgw_log_prob_at(const arma::mat& G, const arma::mat& A, const arma::mat& B, int nu,
                        const BartlettParamValues& p);

}  // namespace dkp::distributions
