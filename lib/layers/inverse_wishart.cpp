#include "layers/inverse_wishart.hpp"

#include <cmath>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"
#include "autodiff/ops_shape.hpp"
#include "autodiff/ops_special.hpp"
#include "distributions/inverse_wishart.hpp"
#include "util/error.hpp"

namespace dkp::layers {

namespace ad = dkp::autodiff;
namespace dist = dkp::distributions;
using autodiff::Var;

namespace {

constexpr double kLog2 = 0.69314718055994530942;

// log IW(G; Psi_p = L_p L_p^T, nu_p) at a sample G = L_q (T T^T)^{-1} L_q^T of Q = IW(L_q L_q^T,
// nu_q), from the sample's parts (no factorisation of G, which can be badly conditioned):
//   log|G| = log|Psi_q| - sum_j log c_j,
//   tr(Psi_p G^{-1}) = ||T^T L_q^{-1} L_p||_F^2        (G^{-1} = L_q^{-T} T T^T L_q^{-1}),
//   log IW = -(nu_p + P + 1)/2 log|G| + nu_p/2 log|Psi_p| - tr(Psi_p G^{-1})/2
//            - nu_p P/2 log 2 - log Gamma_P(nu_p / 2).
// The trace term is the caller's (trace_term = tr(Psi_p G^{-1})): the hidden layers' general L_p
// (hidden_layer_trace) and the input layer's sqrt(delta) I (delta ||T^T L_q^{-1}||_F^2).
Var iw_log_prob_of_q_sample(const dist::PsdSample& s, const Var& L_q, const Var& trace_term,
                            const Var& logdet_psi_p, const Var& nu_p) {
  const double P = double(L_q.n_rows());
  const Var logdet_g = ad::logdet_chol(L_q) - ad::sum(ad::log(s.bartlett.c));
  Var lp = ad::mul(ad::scale(ad::add_scalar(nu_p, P + 1.0), -0.5), logdet_g);
  lp = lp + ad::mul(ad::scale(nu_p, 0.5), logdet_psi_p) - ad::scale(trace_term, 0.5);
  lp = lp - ad::scale(nu_p, 0.5 * P * kLog2) - ad::mvlgamma(ad::scale(nu_p, 0.5), int(P));
  return lp;
}

// tr(Psi_p G^{-1}) = ||T^T L_q^{-1} L_p||_F^2 for a general lower-triangular L_p.
Var hidden_layer_trace(const dist::PsdSample& s, const Var& L_q, const Var& L_p) {
  const Var W = ad::matmul(s.bartlett.T, ad::solve_lower(L_q, L_p), true, false);
  return ad::sum(ad::square(W));
}

Var eye(ad::Tape& tape, arma::uword n) {
  return tape.constant(arma::eye(n, n));
}

}  // namespace

Var iw_v_term(const Var& V, bool divide_by_n) {
  if (V.n_rows() != V.n_cols()) {
    throw Error(fmt::format("diwp: V is {}x{}, not square", V.n_rows(), V.n_cols()));
  }
  // One triangle by dsyrk and a one-dgemm adjoint (ad::gram_scaled): half the flops of a general
  // product each way (N0 = 3072: 58 -> 29 GFlop forward, 116 -> 58 backward).
  return ad::gram_scaled(V, divide_by_n ? 1.0 / double(V.n_rows()) : 1.0);
}

IwLayerSample iw_input_layer(const Var& Fi, const Var& Ft, const Var& log_delta,
                             const Var& log_gamma, const Var& v_term, random::Stream& rng,
                             dist::GammaMethod method) {
  ad::Tape& tape = Fi.tape();
  const arma::uword N0 = Fi.n_cols();
  if (v_term.n_rows() != N0 || v_term.n_cols() != N0 || Ft.n_cols() != N0) {
    throw Error(fmt::format(
        "diwp input layer: features {}x{} and {}x{}, V V^T {}x{} (need {} x {})", Fi.n_rows(),
        Fi.n_cols(), Ft.n_rows(), Ft.n_cols(), v_term.n_rows(), v_term.n_cols(), N0, N0));
  }
  const double n0 = double(N0);
  const Var delta = ad::exp(log_delta), gamma = ad::exp(log_gamma);
  // Q(Omega) = IW(delta I + V V^T / N0, delta + gamma + N0 + 1)   (eq. 96)
  const Var psi_q = ad::mul(delta, eye(tape, N0)) + v_term;
  // The congruence adjoint: 4 n^3 / 3 flops against 3 n^3 (N0 = 3072: about 39 GFlop a step
  // against 87).
  const Var L_q = ad::cholesky(psi_q, "diwp input layer: delta I + V V^T / N0", {}, nullptr,
                               linalg::CholAdjoint::Congruence);
  const Var nu_q = ad::add_scalar(delta + gamma, n0 + 1.0);
  // Neither Omega = F F^T nor F = L_q T^{-T} is formed: G_1 needs only the features X' F,
  // which ad::times_iw_factor forms as (X' L_q) T^{-T} (below).
  const dist::PsdSample s =
      dist::inverse_wishart_sample(L_q, nu_q, rng, method, dist::IwParts::Bartlett);
  // P(Omega) = IW(delta I, delta + N0 + 1)   (eq. 95): L_p = sqrt(delta) I, so
  // tr(Psi_p G^{-1}) = delta ||T^T L_q^{-1}||_F^2 (ad::sq_norm_tri_t_inv: an explicit triangular
  // inverse and a triangle-times-triangle product, not a solve against a dense sqrt(delta) I).
  const Var nu_p = ad::add_scalar(delta, n0 + 1.0);
  const Var trace_term = ad::mul(delta, ad::sq_norm_tri_t_inv(s.bartlett.T, L_q));
  IwLayerSample out;
  out.log_q = dist::inverse_wishart_log_prob_at_sample(s, L_q, nu_q);
  out.log_p = iw_log_prob_of_q_sample(s, L_q, trace_term, ad::scale(log_delta, n0), nu_p);
  // G_1 = X' Omega X'^T / N0 with Omega = F F^T: the Gram of the features X' F, formed as
  // [Fi; Ft] L_q T^{-T} in one op (F's adjoint, of rank <= rows of [Fi; Ft], is never formed).
  const Var XF = ad::times_iw_factor(Fi, Ft, L_q, s.bartlett.T);
  const arma::uword mi = Fi.n_rows(), m = XF.n_rows();
  const auto part = [&](arma::uword r0, arma::uword r1) {
    return r1 > r0 ? ad::rows(XF, r0, r1 - 1) : tape.constant(arma::mat(0, N0));
  };
  out.G = kernels::features_to_gram(part(0, mi), part(mi, m), n0);
  return out;
}

IwLayerSample iw_hidden_layer(const kernels::GramBlocks& K, const Var& log_delta,
                              const Var& log_gamma, const Var& v_term, random::Stream& rng,
                              dist::GammaMethod method, bool reference_batch_dof) {
  const arma::uword P = K.ii.n_rows(), B = K.tt.n_rows();
  if (v_term.n_rows() != P || v_term.n_cols() != P) {
    throw Error(fmt::format("diwp hidden layer: V V^T is {}x{}, need {} x {}", v_term.n_rows(),
                            v_term.n_cols(), P, P));
  }
  const double p = double(P);
  const Var delta = ad::exp(log_delta), gamma = ad::exp(log_gamma);
  // Prior IW(Psi_p = delta K_ii, delta + P + 1) with Psi_p = L_p L_p^T, L_p = sqrt(delta)
  // chol(K_ii).
  const Var L_k = ad::cholesky(K.ii, "diwp hidden layer: K_ii");
  const Var L_p = ad::mul(ad::exp(ad::scale(log_delta, 0.5)), L_k);
  const Var logdet_psi_p = ad::scale(log_delta, p) + ad::logdet_chol(L_k);
  const Var nu_p = ad::add_scalar(delta, p + 1.0);
  // Q = IW(delta K_ii + V V^T / P, delta + gamma + P + 1)   (eq. 21)
  const Var psi_q = ad::mul(delta, K.ii) + v_term;
  const Var L_q = ad::cholesky(psi_q, "diwp hidden layer: delta K_ii + V V^T / P");
  const Var nu_q = ad::add_scalar(delta + gamma, p + 1.0);
  const dist::PsdSample s = dist::inverse_wishart_sample(L_q, nu_q, rng, method);
  IwLayerSample out;
  out.log_q = dist::inverse_wishart_log_prob_at_sample(s, L_q, nu_q);
  out.log_p = iw_log_prob_of_q_sample(s, L_q, hidden_layer_trace(s, L_q, L_p), logdet_psi_p, nu_p);
  // Train/test points one at a time given G_ii (appendix I); Psi = delta K(G_{l-1}).
  const double pt = reference_batch_dof ? double(B) : 1.0;
  const Var nu_t = ad::add_scalar(delta, p + pt + 1.0);
  const dist::IWConditionalSample c =
      dist::inverse_wishart_conditional_sample(s.G, L_k, K.it, K.tt, nu_t, rng, method, delta);
  out.G = {s.G, c.g_it, c.g_tt};
  return out;
}

}  // namespace dkp::layers
